"""The search on a clinical file: dates, ZIP codes and diagnosis codes get settings along their
own hierarchies, and a search from a recipe with whole-data steps keeps them."""

from __future__ import annotations

import json
from itertools import product

import pandas as pd
import pytest

from deid_core.datasets.visits import visits_data
from deid_core.masking import (
    AgeAt,
    CodePrefix,
    DateReduce,
    Icd10Chapter,
    LocalSuppression,
    RelativeDates,
    ZipToThreeDigits,
)
from deid_core.recipe import Recipe, Roles
from deid_core.risk.context import ReleaseContext
from deid_core.search import SearchSpace, default_space, search_space
from deid_core.search.search import explain_no_pass
from deid_core.search.space import default_settings
from deid_core.workspace import Workspace

QIS = ("birth_date", "admission_date", "discharge_date", "zip", "sex", "icd10")


@pytest.fixture(scope="module")
def visits() -> pd.DataFrame:
    return visits_data(n_patients=120, seed=3)


def _steps(settings) -> set:
    return {step for setting in settings for step in setting}


def test_dates_zip_codes_and_icd10_codes_get_their_hierarchies(visits):
    dates = _steps(default_settings(visits["admission_date"], count=10))
    assert DateReduce("admission_date", to="year") in dates
    assert DateReduce("admission_date", to="year-month") in dates
    zips = _steps(default_settings(visits["zip"], count=10))
    assert ZipToThreeDigits("zip") in zips  # Safe Harbor's 3 digits before the plain prefix
    assert CodePrefix("zip", length=4) in zips
    codes = _steps(default_settings(visits["icd10"], count=10))
    assert CodePrefix("icd10", length=3) in codes and Icd10Chapter("icd10") in codes


def test_a_space_that_keeps_data_steps_round_trips_and_keeps_them(visits):
    base = Recipe(
        Roles(quasi_identifiers=QIS, record_id="mrn", direct_identifiers=("name",)),
        data_steps=(
            AgeAt(column="birth_date", reference="admission_date", first=True, width=10),
            RelativeDates(columns=("admission_date", "discharge_date")),
            LocalSuppression(k=3),
        ),
    )
    space = default_space(visits, base, count=3, keep_data_steps=True)
    # the columns the date steps write are shaped by them: not searched
    assert space.column_names == ("zip", "sex", "icd10")
    again = SearchSpace.from_dict(json.loads(space.to_json()))
    assert again == space and again.keep_data_steps
    recipe = space.recipe(base, [len(c.settings) - 1 for c in space.columns])
    assert recipe.data_steps == base.data_steps
    assert not space.keeping_data_steps(False).recipe(base, [0, 0, 0]).data_steps


def test_the_search_from_a_recipe_with_local_suppression_keeps_it(visits):
    roles = Roles(quasi_identifiers=QIS, record_id="mrn", direct_identifiers=("name",))
    base = Recipe(
        roles,
        data_steps=(
            AgeAt(column="birth_date", reference="admission_date", first=True, width=10),
            RelativeDates(columns=("admission_date", "discharge_date")),
            LocalSuppression(k=3),
        ),
    )
    workspace = Workspace(visits)
    # No intruder holds the source here: with one, local suppression is judged by the
    # stricter linkage to the source (tests/unit/test_release_truth.py).
    context = ReleaseContext(min_cell_size=3, intruder_holds_source=False)
    space = default_space(visits, base, columns=("zip", "icd10"), count=3, keep_data_steps=True)
    result = search_space(workspace, base, space, context)
    assert result.points, "local suppression to k = 3 meets a threshold of 3"
    for point in result.points:
        assert point.recipe.data_steps[:3] == base.data_steps
        # brute force: the recipe as released, judged on its own
        judged = workspace.judged_risk(point.recipe, holds_source=False)
        assert context.judge(judged).meets and judged.max_risk == pytest.approx(point.max_risk)
    dropped = search_space(workspace, base, space.keeping_data_steps(False), context)
    assert all(not p.recipe.data_steps for p in dropped.points)


def test_when_nothing_passes_the_search_says_why_and_what_would(visits):
    roles = Roles(quasi_identifiers=("admission_date", "zip", "sex", "icd10"), record_id="mrn")
    base = Recipe(roles)
    workspace = Workspace(visits)
    context = ReleaseContext(min_cell_size=5)
    space = default_space(visits, base, columns=("zip", "sex", "icd10"), count=3)
    result = search_space(workspace, base, space, context, prune=False)
    assert result.best is None
    why = explain_no_pass(workspace, base, space, context)
    coarsest = space.recipe(base, [len(c.settings) - 1 for c in space.columns])
    judged = workspace.judged_risk(coarsest)
    assert why["risk"] == judged.max_risk > 0.2
    assert why["above_threshold"] == int((1 / judged.classes.class_size > 0.2).sum())
    assert why["unsearched_quasi_identifiers"] == ["admission_date"]
    # brute force: every recipe of the space is at least as risky as the coarsest one
    for choice in product(*(range(len(c.settings)) for c in space.columns)):
        assert workspace.judged_risk(space.recipe(base, choice)).max_risk >= why["risk"]
    left_out = Roles(quasi_identifiers=("zip", "sex", "icd10"), record_id="mrn")
    expected = workspace.judged_risk(coarsest.with_roles(left_out)).max_risk
    assert why["risk_without_column"]["admission_date"] == pytest.approx(expected)
    assert "No recipe meets the threshold" in why["message"]
    assert any("admission_date" in text for text in why["would_help"])


def test_dates_never_suppressed_keep_every_length_of_stay_and_the_verdict_stays_honest(
    visits, tmp_path, capsys
):
    """Relative dates with local suppression that never blanks them: every length of stay is
    exact in the file as written and read back, and the records whose dates alone leave them
    below k stay below it: the verdict fails, with the figures an independent count gives."""
    from deid_core.cli import main

    dates = ("admission_date", "discharge_date")
    roles = Roles(quasi_identifiers=QIS, record_id="mrn", direct_identifiers=("name",))
    recipe = Recipe(
        roles,
        steps=(CodePrefix("icd10", length=3), ZipToThreeDigits("zip")),
        data_steps=(
            AgeAt(column="birth_date", reference="admission_date", first=True, width=10),
            RelativeDates(columns=dates),
            LocalSuppression(k=5, keep=dates),
        ),
    )
    data, recipe_file, out = tmp_path / "v.csv", tmp_path / "r.json", tmp_path / "out.csv"
    visits.to_csv(data, index=False)
    recipe_file.write_text(recipe.to_json())
    args = ["apply", str(data), "--recipe", str(recipe_file), "-o", str(out)]
    assert main([*args, "--keep-order", "--keep-record-id"]) == 0
    capsys.readouterr()
    released = pd.read_csv(out, dtype={"zip": str})
    assert released[list(dates)].notna().all().all()
    stay = released["discharge_date"] - released["admission_date"]
    assert (stay == visits["length_of_stay"]).all()
    # independent count on the file: distinct people among the compatible rows (a blank
    # value matches any), a person at risk by their riskiest row
    values = released[list(QIS)].astype(object).to_numpy()
    present = released[list(QIS)].notna().to_numpy()
    persons = released["mrn"].to_numpy()
    sizes = []
    for i in range(len(released)):
        differ = present & present[i] & (values != values[i])
        sizes.append(len(set(persons[~differ.any(axis=1)])))
    per_person = pd.Series(sizes).groupby(persons).min()
    workspace = Workspace(visits)
    judged = workspace.judged_risk(recipe, holds_source=False)
    assert judged.max_risk == pytest.approx(1 / per_person.min())
    assert judged.classes.k_violations[5] == int((per_person < 5).sum()) > 0
    verdict = ReleaseContext(min_cell_size=5, intruder_holds_source=False).judge(judged)
    assert not verdict.meets
    # the step says how many rows it could not bring to k: those of the count
    stage = workspace.release_stage(recipe)
    facts = next(f for step, f in stage.outcomes if step.method == "local_suppression")
    assert facts["records_below_k"] == sum(s < 5 for s in sizes)
    # the search from this recipe keeps the step, so nothing it tries passes, and it says so
    context = ReleaseContext(min_cell_size=5, intruder_holds_source=False)
    space = default_space(visits, recipe, columns=("zip", "icd10"), count=2, keep_data_steps=True)
    result = search_space(workspace, recipe, space, context)
    assert result.best is None and result.complete
    why = explain_no_pass(workspace, recipe, space, context)
    assert why["risk"] == pytest.approx(judged.max_risk)
    assert set(dates) <= set(why["unsearched_quasi_identifiers"])
    # the recipe already suppresses single values: the remedy named is to let it blank dates
    assert not any("local suppression of single values" in text for text in why["would_help"])
    assert any("never suppresses: admission_date, discharge_date" in t for t in why["would_help"])
