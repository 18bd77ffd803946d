"""A release with no quasi-identifier marked is never judged "Meets the threshold".

With no quasi-identifier every record falls in one class, so the maximum risk is 1 / n and
looks safe whatever the file holds. Before this guard, ``assess demo:visits`` (no recipe, no
``--qi``) printed "Meets the threshold: maximum risk 0.000 <= 0.2" while the dashboard, on the
demo's own quasi-identifiers, showed maximum risk 1.000 and "Above the threshold".
"""

import json
from pathlib import Path

import pandas as pd
import pytest

from deid_core.cli import main
from deid_core.datasets import DEMO_DATASETS, load_demo
from deid_core.recipe import Recipe, Roles
from deid_core.release_summary import VerdictSummary
from deid_core.risk.classes import risk_summary
from deid_core.risk.context import NO_QUASI_IDENTIFIER, ReleaseContext
from deid_core.share import ShareError


def run(capsys, *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def visits_file(tmp_path: Path) -> Path:
    path = tmp_path / "visits.csv"
    load_demo("visits").to_csv(path, index=False)
    return path


def test_a_demo_without_a_recipe_is_judged_on_the_demo_s_own_roles(capsys, tmp_path):
    code, out, _ = run(capsys, "assess", "demo:visits")
    assert code == 0
    plain = json.loads(out)
    recipe = tmp_path / "demo_roles.json"
    recipe.write_text(Recipe(DEMO_DATASETS["visits"].roles).to_json())
    code, out, _ = run(capsys, "assess", "demo:visits", "--recipe", recipe)
    assert code == 0
    with_roles = json.loads(out)
    assert plain["risk"] == with_roles["risk"]
    assert plain["verdict"] == with_roles["verdict"]
    # What the dashboard shows on this demo: 2,000 people, one unique at least, Above.
    assert plain["verdict"]["unit"] == "people" and plain["verdict"]["value"] == 1.0
    assert plain["verdict"]["text"].startswith("Above the threshold")
    assert not plain["warnings"]


@pytest.mark.parametrize("context", ["public", "non_public"])
def test_no_quasi_identifier_gives_not_judged_never_meets(capsys, tmp_path, visits_file, context):
    recipe = tmp_path / "no_qi.json"
    roles = Roles(record_id="mrn", exposure="length_of_stay", outcome="readmitted")
    recipe.write_text(Recipe(roles).to_json())
    args = ("assess", visits_file, "--recipe", recipe, "--context", context)
    code, out, err = run(capsys, *args, "--replicates", "5")
    assert code == 0
    result = json.loads(out)
    verdict = result["verdict"]
    assert verdict["meets"] is False and verdict["risk_meets"] is False
    assert verdict["judged"] is False and verdict["not_judged"] == NO_QUASI_IDENTIFIER
    assert verdict["text"].startswith("Not judged: no quasi-identifier is marked")
    assert "Meets" not in verdict["text"]
    assert any("no quasi-identifier is marked" in w for w in result["warnings"])
    assert err.count("warning:") == len(result["warnings"])


def test_a_file_with_no_roles_at_all_is_not_judged(capsys, visits_file):
    code, out, err = run(capsys, "assess", visits_file)
    assert code == 0
    assert json.loads(out)["verdict"]["text"].startswith("Not judged")
    assert "no quasi-identifier is marked" in err


def test_the_sql_engine_refuses_to_count_with_no_quasi_identifier(capsys, visits_file):
    code, out, err = run(capsys, "assess", visits_file, "--engine", "duckdb")
    assert code != 0 and out == ""
    assert "no quasi-identifier is marked" in err and "unexpected" not in err


@pytest.mark.parametrize("public", [True, False])
def test_the_context_never_judges_an_empty_set_of_quasi_identifiers(public):
    frame = pd.DataFrame({"age": [30, 31, 32, 33, 34, 35]})
    summary = risk_summary(frame, [])
    assert summary.max_risk == pytest.approx(1 / 6)  # within 0.2: would read "Meets"
    verdict = ReleaseContext(public=public).judge(summary)
    assert not verdict.meets and not verdict.risk_meets and verdict.excess == 0
    assert str(verdict).startswith("Not judged: ")
    judged = ReleaseContext(public=public).judge(risk_summary(frame, ["age"]))
    assert judged.not_judged == "" and str(judged).startswith("Above the threshold")


def test_the_release_summary_carries_not_judged_and_refuses_it_with_meets():
    fields = {
        "measure": "maximum risk",
        "value": 0.0005,
        "threshold": 0.2,
        "unit": "people",
        "missing": "category",
        "context": "public",
        "basis": "classes",
    }
    summary = VerdictSummary(meets=False, not_judged=NO_QUASI_IDENTIFIER, **fields)
    assert summary.text().startswith("Not judged: no quasi-identifier")
    assert VerdictSummary.from_dict(summary.to_dict()) == summary
    with pytest.raises(ShareError):
        VerdictSummary(meets=True, not_judged=NO_QUASI_IDENTIFIER, **fields)
    older = {k: v for k, v in summary.to_dict().items() if k != "not_judged"}
    assert VerdictSummary.from_dict({**older, "meets": True}).text().startswith("Meets")


def test_a_role_flag_on_a_demo_overrides_that_role_and_keeps_the_others(capsys):
    """``--exposure x`` on the areas demo (whose covariates are x and y): x becomes the
    exposure and leaves the covariates; the demo's quasi-identifiers stay, so the release is
    still judged."""
    args = ("assess", "demo:areas", "--exposure", "x", "--outcome", "deaths", "--replicates", "5")
    code, out, err = run(capsys, *args)
    assert code == 0, err
    result = json.loads(out)
    formula = result["utility"]["formula"]
    assert "x" in formula and "y" in formula and formula.count("x") == 1
    assert result["verdict"]["judged"] is True
    # --qi replaces the demo's quasi-identifiers; the record id named by a flag leaves them.
    code, out, err = run(capsys, "assess", "demo:visits", "--qi", "sex", "--replicates", "5")
    assert code == 0, err
    result = json.loads(out)
    sizes = [row["class_size"] for row in result["class_size_distribution"]]
    people = load_demo("visits").groupby("sex")["mrn"].nunique()
    assert sorted(sizes) == sorted(people) and result["risk"]["n_people"] == people.sum()
