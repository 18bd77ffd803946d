"""The search of whole recipes: the brute-force optimum, pruning that loses nothing, the space."""

from __future__ import annotations

import json
from itertools import product

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.errors import RecipeError
from deid_core.masking import (
    IntervalGroup,
    MergeLevels,
    RecordSuppression,
    RelativeRound,
    TopBottomCode,
    Truncate,
    UniformNoise,
)
from deid_core.recipe import Recipe, Roles
from deid_core.risk.context import ReleaseContext
from deid_core.search import (
    ColumnSettings,
    SearchSpace,
    default_settings,
    default_space,
    evaluate_recipe,
    search_space,
)
from deid_core.search.search import coarsens
from deid_core.tradeoff.rumap import pareto_front
from deid_core.workspace import Workspace


def _cohort(n: int = 1500, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.uniform(0, 70, n).round(1)
    end = (age + rng.uniform(20, 50, n)).round(1)
    dose = rng.gamma(0.6, 0.6, n).round(3)
    sex = rng.choice(["F", "M"], n)
    p = 1 / (1 + np.exp(-(-2.5 + 0.6 * dose + 0.01 * age)))
    return pd.DataFrame(
        {"sex": sex, "age": age, "end": end, "dose": dose, "case": rng.binomial(1, p)}
    )


ROLES = Roles(
    quasi_identifiers=("sex", "age", "dose"),
    exposure="dose",
    outcome="case",
    covariates=("sex", "age"),
)


def _space(limit: float = 0.0) -> SearchSpace:
    return SearchSpace(
        (
            ColumnSettings(
                "age",
                ((), (IntervalGroup("age", width=5.0),), (IntervalGroup("age", width=20.0),)),
            ),
            ColumnSettings("sex", ((), (MergeLevels("sex", groups={"all": ["F", "M"]}),))),
            ColumnSettings(
                "dose",
                (
                    (),
                    (Truncate("dose", decimals=1),),
                    (RelativeRound("dose", digits=1),),
                    (IntervalGroup("dose", width=1.0),),
                    (TopBottomCode("dose", top=1.5), IntervalGroup("dose", width=1.0)),
                ),
            ),
        ),
        suppression_limit=limit,
    )


def _undominated(points):
    """The points no other point beats on both security and AP, by pairwise comparison."""
    return [
        p
        for p in points
        if not any(
            q.security >= p.security
            and q.analysis_potential >= p.analysis_potential
            and (q.security > p.security or q.analysis_potential > p.analysis_potential)
            for q in points
        )
    ]


def _brute_force(data, space, context):
    """Every recipe judged and fitted the long way: the workspace's judged risk, the verdict
    and the full model fit of :meth:`Workspace.utility` (no pruning, no shared design)."""
    workspace = Workspace(data)
    meeting = {}
    for choice in product(*(range(len(c.settings)) for c in space.columns)):
        recipe = space.recipe(Recipe(ROLES), choice)
        if not context.judge(workspace.judged_risk(recipe)).meets:
            continue
        utility = workspace.utility(recipe)
        meeting[choice] = utility.analysis_potential if utility.available else None
    return meeting


@pytest.mark.parametrize("context", [ReleaseContext(min_cell_size=3), ReleaseContext(public=False)])
def test_search_finds_the_brute_force_optimum_and_every_recipe_meeting_the_threshold(context):
    data = _cohort()
    space = _space()
    expected = _brute_force(data, space, context)
    assert expected, "the grid should hold recipes that meet the threshold"
    result = search_space(Workspace(data), Recipe(ROLES), space, context)
    found = {p.choice: p.analysis_potential for p in result.points}
    assert set(found) == set(expected)
    for choice, ap in expected.items():
        if ap is None:  # sex merged: a constant covariate, no fit either way
            assert found[choice] is None
        else:
            assert found[choice] == pytest.approx(ap, rel=1e-6)
    best = max(expected, key=lambda c: expected[c] if expected[c] is not None else -1)
    assert result.best.analysis_potential == pytest.approx(expected[best], rel=1e-6)
    assert result.n_pruned + result.n_evaluated == space.size


def test_pruning_drops_only_failing_recipes_and_keeps_the_frontier():
    data = _cohort()
    context = ReleaseContext(min_cell_size=3)
    pruned = search_space(Workspace(data), Recipe(ROLES), _space(), context)
    brute = search_space(Workspace(data), Recipe(ROLES), _space(), context, prune=False)
    assert pruned.n_pruned > 0 and brute.n_pruned == 0
    assert {p.choice for p in pruned.points} == {p.choice for p in brute.points}
    assert [p.choice for p in pruned.frontier] == [p.choice for p in brute.frontier]
    # the frontier is exactly the undominated recipes among those meeting the threshold
    points = [p for p in brute.points if p.analysis_potential is not None]
    assert {p.choice for p in pruned.frontier} == {p.choice for p in _undominated(points)}


def test_suppression_within_the_limit_meets_the_threshold():
    data = _cohort()
    context = ReleaseContext(min_cell_size=5)
    plain = search_space(Workspace(data), Recipe(ROLES), _space(), context)
    limited = search_space(Workspace(data), Recipe(ROLES), _space(0.05), context, prune=True)
    brute = search_space(Workspace(data), Recipe(ROLES), _space(0.05), context, prune=False)
    assert {p.choice for p in limited.points} == {p.choice for p in brute.points}
    assert len(limited.points) > len(plain.points)
    removed = [p for p in limited.points if p.records_removed]
    assert removed and all(p.records_removed <= 0.05 * len(data) for p in removed)
    assert all(p.max_risk <= 0.2 + 1e-12 for p in limited.points)


def test_relative_rounding_is_not_taken_for_a_coarsening():
    """Rounding 1.249 and 1.251 to 3 digits gives 1.25 for both, to 2 digits 1.2 and 1.3:
    fewer digits do not always coarsen, so the search checks on the data."""
    values = pd.Series([1.249, 1.251, 3.0])
    fine = pd.factorize(RelativeRound("x", digits=3).apply(values.rename("x")))[0]
    coarse = pd.factorize(RelativeRound("x", digits=2).apply(values.rename("x")))[0]
    assert not coarsens(fine, coarse)
    assert coarsens(np.array([0, 0, 1]), np.array([0, 0, 0]))


def test_random_settings_are_evaluated_with_replicates_and_never_pruned():
    data = _cohort(600)
    space = SearchSpace(
        (
            ColumnSettings("age", ((IntervalGroup("age", width=20.0),),)),
            ColumnSettings(
                "dose", ((IntervalGroup("dose", width=1.0),), (UniformNoise("dose", 0.1, seed=1),))
            ),
        )
    )
    context = ReleaseContext(public=False)
    result = search_space(Workspace(data), Recipe(ROLES), space, context, n_replicates=3)
    assert result.n_pruned == 0 and result.n_evaluated == 2
    noisy = [p for p in result.points if p.choice == (0, 1)]
    for point in noisy:
        assert point.judged_by == "record linkage"


def test_result_summary_dict_and_current_recipe():
    data = _cohort()
    context = ReleaseContext(min_cell_size=3)
    result = search_space(Workspace(data), Recipe(ROLES), _space(), context)
    text = result.summary()
    assert "recipes" in text and "Best:" in text
    out = json.loads(json.dumps(result.to_dict(top=3)))
    assert len(out["top"]) <= 3 and out["best"]["meets_threshold"]
    assert out["recipes"] == _space().size
    current = evaluate_recipe(Workspace(data), result.best.recipe, _space(), context)
    assert current.analysis_potential == pytest.approx(result.best.analysis_potential)
    assert current.settings == result.best.settings
    labels = [result.label(p) for p in result.frontier]
    assert len(set(labels)) == len(labels)


def test_default_settings_change_the_data_and_differ():
    whole = pd.Series(np.arange(0, 100), name="age")
    settings = default_settings(whole)
    assert settings[0] == () and 1 < len(settings) <= 6
    assert all(s for s in settings[1:])
    signatures = set()
    for setting in settings:
        masked = whole
        for step in setting:
            masked = step.apply(masked)
        signatures.add(tuple(pd.factorize(masked)[0]))
    assert len(signatures) == len(settings)  # no two settings group the data alike
    assert default_settings(pd.Series(["a"] * 5, name="c")) == [()]
    space = default_space(_cohort(), Recipe(ROLES))
    assert space.column_names == ("sex", "age", "dose")


def test_space_round_trips_and_validates():
    space = _space(0.02)
    again = SearchSpace.from_dict(json.loads(space.to_json()))
    assert again == space
    with pytest.raises(RecipeError, match="twice"):
        ColumnSettings("age", ((), ()))
    with pytest.raises(RecipeError, match="that column"):
        ColumnSettings("age", ((Truncate("dose", decimals=1),),))
    with pytest.raises(RecipeError, match="suppression limit"):
        SearchSpace(space.columns, 2.0)
    with pytest.raises(RecipeError, match="unknown"):
        SearchSpace.from_dict({"columns": {}, "other": 1})


class _Point:
    def __init__(self, security: float, ap: float) -> None:
        self.security, self.analysis_potential = security, ap


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=30))
def test_pareto_front_equals_pairwise_dominance(pairs):
    points = [_Point(s / 5, a / 5) for s, a in pairs]
    assert {id(p) for p in pareto_front(points)} == {id(p) for p in _undominated(points)}


def test_cli_search_prints_the_frontier_and_writes_the_best_recipe(tmp_path, capsys):
    from deid_core.cli.main import main

    data = tmp_path / "cohort.csv"
    _cohort().to_csv(data, index=False)
    best = tmp_path / "best.json"
    space = tmp_path / "space.json"
    space.write_text(_space().to_json())
    code = main(
        [
            "search",
            str(data),
            "--qi",
            "sex",
            "age",
            "dose",
            "--exposure",
            "dose",
            "--outcome",
            "case",
            "--covariate",
            "sex",
            "age",
            "--threshold",
            "0.3333333333",
            "--space",
            str(space),
            "--best-recipe",
            str(best),
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["threshold"] == pytest.approx(1 / 3)
    assert out["frontier"] and out["recipes"] == _space().size
    written = Recipe.from_json(best.read_text())
    assert written.to_dict() == Recipe.from_dict(out["best"]["recipe"]).to_dict()
    assert main(["search", str(data), "--qi", "age", "--threshold", "0.3"]) == 2
    assert "1/c" in capsys.readouterr().err


def test_suppressed_recipes_are_fitted_on_the_released_records_as_the_workspace_fits_them():
    data = _cohort()
    context = ReleaseContext(min_cell_size=5)
    result = search_space(Workspace(data), Recipe(ROLES), _space(0.05), context)
    removed = [p for p in result.points if p.records_removed and p.analysis_potential]
    assert removed
    workspace = Workspace(data)
    for point in removed:
        utility = workspace.utility(point.recipe)
        assert point.analysis_potential == pytest.approx(utility.analysis_potential, rel=1e-6)
        assert point.estimate == pytest.approx(utility.masked_effect().value, rel=1e-6)


def test_the_current_recipe_is_scored_as_it_is_without_added_suppression():
    data = _cohort()
    context = ReleaseContext(min_cell_size=5)
    current = evaluate_recipe(Workspace(data), Recipe(ROLES), _space(0.05), context)
    assert not current.meets and current.records_removed == 0
    assert current.settings == ("as is", "as is", "as is")
    assert not current.recipe.data_steps


def test_partial_results_come_in_as_recipes_meet_the_threshold_and_end_as_the_full_search(
    monkeypatch,
):
    """With a partial callback, the recipes met so far are fitted and passed on (at least every
    PARTIAL_SECONDS; here at every settled recipe): each partial result is a growing subset of
    the final one, with the same analysis potentials."""
    from deid_core.search import search as search_module

    monkeypatch.setattr(search_module, "PARTIAL_SECONDS", 0.0)
    data = _cohort()
    context = ReleaseContext(min_cell_size=3)
    partials = []
    result = search_space(
        Workspace(data), Recipe(ROLES), _space(), context, partial=partials.append
    )
    plain = search_space(Workspace(data), Recipe(ROLES), _space(), context)
    assert len(partials) >= 2
    assert all(not p.complete for p in partials) and result.complete
    final = {p.choice: p.analysis_potential for p in result.points}
    assert final == pytest.approx({p.choice: p.analysis_potential for p in plain.points})
    sizes = [len(p.points) for p in partials]
    assert sizes == sorted(sizes) and 0 < sizes[0] < len(final)
    for p in partials:
        for point in p.points:
            if point.analysis_potential is None:
                assert final[point.choice] is None
            else:
                assert point.analysis_potential == pytest.approx(final[point.choice], rel=1e-6)


@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(300, 800),
    cell=st.integers(2, 6),
    limit=st.sampled_from([0.0, 0.03, 0.1]),
    public=st.booleans(),
)
def test_every_figure_of_the_search_is_the_workspaces_own_for_that_recipe(
    seed, n, cell, limit, public
):
    """Whatever the search reuses between recipes (codes, the prepared fitter, pruning), each
    point it reports carries the figures a fresh workspace computes for its recipe alone: the
    judged risk, maximum and average risk, k, the records removed, the verdict and the
    analysis potential; and the recipes that meet the threshold are exactly those that do
    when judged one by one (with the suppression the space allows)."""
    data = _cohort(n, seed)
    context = ReleaseContext(min_cell_size=cell, public=public)
    space = _space(limit)
    result = search_space(Workspace(data), Recipe(ROLES), space, context)
    fresh = Workspace(data)
    holds = context.intruder_holds_source
    for point in result.points:
        judged = fresh.judged_risk(point.recipe, public=public, holds_source=holds)
        risk = judged.max_risk if public else judged.strict_average_risk
        assert context.judge(judged).meets and point.meets
        assert point.risk == risk and point.max_risk == judged.max_risk
        assert point.average_risk == judged.average_risk and point.k == judged.classes.k
        rows = fresh.released_rows(point.recipe)
        assert point.records_removed == (0 if rows is None else n - rows.size)
        utility = fresh.utility(point.recipe)
        if utility.available and point.analysis_potential is not None:
            # the workspace's own fit converges to its tolerance by another route
            assert point.analysis_potential == pytest.approx(utility.analysis_potential, rel=1e-5)
        else:  # a constant covariate or a fit that fails: unavailable either way
            assert point.analysis_potential is None and not utility.available
    meeting = set()
    for choice in product(*(range(len(c.settings)) for c in space.columns)):
        recipe = space.recipe(Recipe(ROLES), choice)
        if context.judge(fresh.judged_risk(recipe, public=public, holds_source=holds)).meets:
            meeting.add(choice)
        elif limit > 0:
            k = max(2, int(np.ceil(1 / context.conditional_limit - 1e-9)))
            suppressed = recipe.with_data_steps((RecordSuppression(k=k, limit=limit),))
            try:
                judged = fresh.judged_risk(suppressed, public=public, holds_source=holds)
            except RecipeError:
                continue
            if context.judge(judged).meets:
                meeting.add(choice)
    assert {p.choice for p in result.points} == meeting
    assert result.n_pruned + result.n_evaluated == space.size
