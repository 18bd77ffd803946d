"""Whole-data steps in a recipe: JSON (schema version 3, written only when used; versions 1
and 2 still read), applying, seeds, and the command line and report that carry them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from deid_core.cli import main
from deid_core.errors import RecipeError
from deid_core.masking import (
    LocalSuppression,
    MultivariateMicroaggregate,
    Pram,
    RecordSuppression,
    RelativeRound,
    Subsample,
)
from deid_core.recipe import Recipe, Roles
from deid_core.report import build_report
from deid_core.risk.context import ReleaseContext
from deid_core.workspace import Workspace

ROLES = Roles(
    quasi_identifiers=("age", "race", "lwt"),
    exposure="smoke",
    outcome="low",
    covariates=("age", "lwt", "race"),
)


@pytest.fixture
def data() -> pd.DataFrame:
    rng = np.random.default_rng(8)
    n = 300
    smoke = rng.integers(0, 2, n)
    lwt = rng.normal(130, 30, n).round()
    low = (rng.random(n) < 0.2 + 0.2 * smoke).astype(int)
    return pd.DataFrame(
        {
            "age": rng.integers(15, 45, n),
            "race": rng.integers(1, 4, n),
            "lwt": lwt,
            "smoke": smoke,
            "low": low,
        }
    )


def recipe_with_everything() -> Recipe:
    return Recipe(
        ROLES,
        steps=(Pram("race", retention=0.9, seed=1), RelativeRound("lwt", digits=2)),
        data_steps=(
            MultivariateMicroaggregate(columns=("age", "lwt"), k=3, strata=("race",)),
            LocalSuppression(k=3, importance=("race",)),
            RecordSuppression(k=3, limit=0.2),
            Subsample(fraction=0.8, strata=("low",), seed=2),
        ),
    )


def test_json_round_trip_and_versions():
    recipe = recipe_with_everything()
    data = json.loads(recipe.to_json())
    assert data["schema_version"] == 3
    assert [s["method"] for s in data["data_steps"]][:2] == [
        "multivariate_microaggregate",
        "local_suppression",
    ]
    assert Recipe.from_json(recipe.to_json()) == recipe
    plain = Recipe(ROLES, (RelativeRound("lwt", digits=2),))
    assert json.loads(plain.to_json())["schema_version"] == 2
    assert "data_steps" not in json.loads(plain.to_json())
    version_two = {"schema_version": 2, "roles": {}, "steps": [], "data_steps": []}
    with pytest.raises(RecipeError, match="unknown field"):
        Recipe.from_dict(version_two)
    with pytest.raises(RecipeError, match="'data_steps' must be a list"):
        Recipe.from_dict({"schema_version": 3, "data_steps": {}})


def test_seeds_are_set_and_removed_for_whole_data_steps_too():
    recipe = recipe_with_everything()
    assert recipe.without_seeds().data_steps[-1].seed is None
    assert json.loads(recipe.to_json(include_seeds=False))["data_steps"][-1] == {
        "method": "subsample",
        "fraction": 0.8,
        "strata": ["low"],
    }
    seeded = recipe.with_seed(100)
    assert seeded.steps[0].seed == 100 and seeded.data_steps[-1].seed == 100 + 5


def test_a_withheld_column_cannot_be_microaggregated():
    roles = Roles(quasi_identifiers=("age",), direct_identifiers=("name",))
    with pytest.raises(RecipeError, match="'name' is a direct identifier"):
        Recipe(roles, data_steps=(MultivariateMicroaggregate(("name", "age"), 3),))


def test_apply_equals_the_workspace_release(data):
    recipe = recipe_with_everything()
    workspace = Workspace(data)
    released = workspace.masked_frame(recipe)
    applied = recipe.apply(data)
    pd.testing.assert_frame_equal(released, applied)
    assert len(released) < len(data)
    assert data.equals(workspace.original)  # nothing modified
    stage = workspace.release_stage(recipe)
    assert [s.method for s, _ in stage.outcomes] == [s.method for s in recipe.data_steps]
    assert workspace.risk(recipe).n_records == len(released)
    assert workspace.risk(recipe).k >= 1


def test_sweeping_a_whole_data_parameter(data):
    from deid_core.tradeoff.rumap import sweep

    recipe = Recipe(ROLES, data_steps=(LocalSuppression(k=2),))
    apart = ReleaseContext(intruder_holds_source=False)
    points = sweep(Workspace(data), recipe, 0, [2, 5], measure="max_risk", context=apart)
    assert [p.assessment.risk.k >= v for p, v in zip(points, [2, 5], strict=True)] == [True] * 2
    assert points[1].security >= 0.8
    # An intruder who may hold the source: each point is judged by the stricter linkage.
    strict = sweep(Workspace(data), recipe, 0, [2, 5], measure="max_risk")
    for point in strict:
        judged = point.assessment.judged
        assert judged.source is not None
        assert judged.max_risk == max(judged.classes.max_risk, judged.source.max_risk)
        assert point.security == pytest.approx(1 - judged.max_risk)


@pytest.fixture
def files(tmp_path: Path, data: pd.DataFrame) -> tuple[Path, Path]:
    data_path, recipe_path = tmp_path / "data.csv", tmp_path / "recipe.json"
    data.to_csv(data_path, index=False)
    recipe = Recipe(ROLES, data_steps=(LocalSuppression(k=3), Subsample(0.5, seed=3)))
    recipe_path.write_text(recipe.to_json())
    return data_path, recipe_path


def test_assess_reports_what_each_whole_data_step_did(capsys, files):
    data_path, recipe_path = files
    assert main(["assess", str(data_path), "--recipe", str(recipe_path)]) == 0
    result = json.loads(capsys.readouterr().out)
    release = result["release"]
    assert release["n_released"] == 150 and result["n_records"] == 300
    suppression, subsample = release["data_steps"]
    assert suppression["method"] == "local_suppression"
    assert set(suppression["suppressed_values"]) == {"age", "race", "lwt"}
    assert subsample["records_released"] == 150
    assert release["subsample_open_data"]["sampling_fraction"] == pytest.approx(0.5)
    loss = result["information_loss"]
    assert loss["columns"] == ["age", "race", "lwt", "smoke", "low"]
    assert (
        main(["assess", str(data_path), "--recipe", str(recipe_path), "--il-columns", "age", "lwt"])
        == 0
    )
    assert json.loads(capsys.readouterr().out)["information_loss"]["columns"] == ["age", "lwt"]


def test_apply_writes_the_released_records_and_says_what_was_done(capsys, files, tmp_path):
    data_path, recipe_path = files
    out = tmp_path / "released.csv"
    assert main(["apply", str(data_path), "--recipe", str(recipe_path), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "Local suppression (k = 3):" in err and "Subsampling: 150 of 300" in err
    assert len(pd.read_csv(out)) == 150


def test_report_lists_whole_data_steps_and_information_loss(data):
    recipe = Recipe(ROLES, data_steps=(LocalSuppression(k=3), Subsample(0.5, seed=3)))
    report = build_report(
        Workspace(data), recipe, dataset_name="t", synthetic=True, context=ReleaseContext()
    )
    masking = report.section("masking").text()
    assert "local suppression: single quasi-identifier values released as missing" in masking
    assert "values suppressed (age" in masking
    assert "Subsampling: 150 of 300 records released" in masking
    assert "open-data risk at that fraction" in masking
    assert "(seed" not in masking
    loss = report.section("information_loss").text()
    assert "IL1s" in loss and "a sum, not a mean" in loss and "Eigenvalue loss" in loss
