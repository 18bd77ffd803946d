"""The ``uniqueness`` command: JSON and CSV output, the recipe's precision, one-line errors."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from deid_core.cli import main
from deid_core.datasets.cohort import synthetic_cohort
from deid_core.masking import RelativeRound, Truncate
from deid_core.recipe import Recipe, Roles
from deid_core.risk.uniqueness import record_uniqueness

KEYS = ["city", "sex", "age_at_exposure", "stomach_dose_gy"]


@pytest.fixture
def cohort_file(tmp_path: Path) -> Path:
    path = tmp_path / "cohort.csv"
    synthetic_cohort(n=3000).to_csv(path, index=False)
    return path


@pytest.fixture
def recipe(tmp_path: Path) -> tuple[Recipe, Path]:
    recipe = Recipe(
        Roles(quasi_identifiers=tuple(KEYS)),
        (RelativeRound("stomach_dose_gy", 1), Truncate("age_at_exposure", decimals=-1)),
    )
    path = tmp_path / "recipe.json"
    path.write_text(recipe.to_json())
    return recipe, path


def run(capsys, *args) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in args])
    except SystemExit as exit_:  # a flag refused by argparse (one line, exit 2)
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_has_the_documented_fields_and_matches_the_core(capsys, cohort_file):
    code, out, _ = run(capsys, "uniqueness", cohort_file, "--keys", "city,sex,age_at_exposure")
    assert code == 0
    result = json.loads(out)
    for name in ("combinations", "weights", "n_fit", "worst_variable", "verdict", "omit_one"):
        assert name in result
    assert len(result["combinations"]) == 7
    frame = pd.read_csv(cohort_file)
    expected = record_uniqueness(frame, ["city", "sex", "age_at_exposure"])
    assert [c["uniques"] for c in result["combinations"]] == [
        c.uniques for c in expected.combinations
    ]
    assert result["combinations"][0]["variables"] == ["city", "sex", "age_at_exposure"]
    assert [row["omitted"] for row in result["omit_one"]] == [
        "None",
        "city",
        "sex",
        "age_at_exposure",
    ]
    assert set(result["verdict"]) == {"research", "public"}


def test_recipe_precision_is_applied_first(capsys, cohort_file, recipe):
    recipe_obj, path = recipe
    code, out, _ = run(
        capsys, "uniqueness", cohort_file, "--keys", ",".join(KEYS), "--recipe", path
    )
    assert code == 0
    got = json.loads(out)
    frame = pd.read_csv(cohort_file)
    masked = recipe_obj.apply(frame)
    expected = record_uniqueness(masked, KEYS)
    assert got["combinations"][0]["uniques"] == expected.full.uniques
    assert got["combinations"][0]["small"] == expected.full.small
    raw = record_uniqueness(frame, KEYS)
    assert expected.full.uniques < raw.full.uniques  # coarser precision, fewer uniques


def test_small_class_flag(capsys, cohort_file):
    code, out, _ = run(
        capsys, "uniqueness", cohort_file, "--keys", "city,age_at_exposure", "--small-class", "2"
    )
    assert code == 0
    result = json.loads(out)
    assert result["small_class"] == 2
    frame = pd.read_csv(cohort_file)
    expected = record_uniqueness(frame, ["city", "age_at_exposure"], small_class=2)
    assert result["combinations"][0]["small"] == expected.full.small


def test_csv_prints_the_combinations_and_the_weights_on_stderr(capsys, cohort_file):
    code, out, err = run(
        capsys,
        "uniqueness",
        cohort_file,
        "--keys",
        "city,sex,age_at_exposure,stomach_dose_gy",
        "--format",
        "csv",
    )
    assert code == 0
    table = pd.read_csv(io.StringIO(out))
    assert list(table.columns) == [
        "variables",
        "n_variables",
        "records",
        "uniques",
        "uniques_pct",
        "small",
        "small_pct",
    ]
    assert len(table) == 15
    assert err.startswith("# weights: n_fit=")
    assert "variable,weight" in err


def test_demo_data(capsys):
    code, out, _ = run(capsys, "uniqueness", "demo:cohort", "--keys", "city,sex")
    assert code == 0
    assert json.loads(out)["n_records"] > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--keys", "city,nope"], "not in the data: nope"),
        (["--keys", ","], "at least one key"),
        (["--keys", "city", "--small-class", "0"], "at least 1"),
        (["--keys", ",".join(f"c{i}" for i in range(13))], "not in the data"),
    ],
)
def test_bad_input_is_one_line_with_exit_2(capsys, cohort_file, args, message):
    code, out, err = run(capsys, "uniqueness", cohort_file, *args)
    assert code == 2
    assert out == ""
    assert err.startswith("error: ") and message in err
    assert err.count("\n") == 1


def test_too_many_keys(capsys, tmp_path):
    path = tmp_path / "wide.csv"
    pd.DataFrame({f"c{i}": [1, 2] for i in range(13)}).to_csv(path, index=False)
    code, _, err = run(capsys, "uniqueness", path, "--keys", ",".join(f"c{i}" for i in range(13)))
    assert code == 2 and "13 key variables; at most 12" in err and "uniqueness_keys" in err


def test_missing_data_file(capsys, tmp_path):
    code, _, err = run(capsys, "uniqueness", tmp_path / "none.csv", "--keys", "a")
    assert code == 2 and "No such data file" in err


def test_runs_as_a_module(cohort_file):
    result = subprocess.run(
        [sys.executable, "-m", "deid_core", "uniqueness", str(cohort_file), "--keys", "city,sex"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["keys"] == ["city", "sex"]
