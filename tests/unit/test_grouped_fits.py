"""Logistic fits on distinct (outcome, design row) patterns weighted by their counts give the
fits on the records themselves: coefficients, standard errors, AP, failures and separation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit

from deid_core.masking import IntervalGroup, Truncate
from deid_core.recipe import Recipe, Roles
from deid_core.risk.context import ReleaseContext
from deid_core.search import ColumnSettings, SearchSpace, search_space
from deid_core.search import search as search_module
from deid_core.utility import UtilityComparison, fit_logistic_replicates
from deid_core.utility import replicates as replicates_module
from deid_core.utility.glm import separating_columns
from deid_core.utility.replicates import GROUPING_SHARE, SharedDesignFitter, _patterns
from deid_core.workspace import Workspace

RTOL = 1e-8


def _data(n: int, seed: int, slope: float = 0.6) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Design (intercept, sex, two city dummies, age, dose), outcome, and the original fit."""
    rng = np.random.default_rng(seed)
    sex = rng.integers(0, 2, n)
    city = rng.integers(0, 3, n)
    age = rng.uniform(20, 80, n).round(1)
    dose = rng.gamma(0.8, 0.8, n).round(3)
    eta = -1.5 + 0.3 * sex + 0.2 * (city == 1) + 0.01 * (age - 50) + slope * dose
    y = (rng.random(n) < expit(eta)).astype(float)
    X = np.column_stack([np.ones(n), sex, city == 1, city == 2, age, dose]).astype(float)
    start = sm.Logit(y, X).fit(disp=0).params
    return X, y, start


def _masked(X: np.ndarray, age_width: float, dose_width: float) -> dict[int, np.ndarray]:
    """Age and dose replaced by their interval midpoints (ties: few distinct rows)."""
    age = (np.floor(X[:, 4] / age_width) + 0.5) * age_width
    dose = (np.floor(X[:, 5] / dose_width) + 0.5) * dose_width
    return {4: age, 5: dose}


def _coded(values: np.ndarray) -> tuple[np.ndarray, int]:
    codes, levels = pd.factorize(values)
    return codes, levels.size


def _ap(b: float, se: float, fits, r: int) -> float:
    return UtilityComparison(b, se, fits.params[r, 5], fits.bse[r, 5]).analysis_potential


def _assert_same(grouped, plain, b: float, se: float) -> None:
    """Same failures and separation; the same coefficients, SEs and AP to RTOL."""
    assert grouped.converged.tolist() == plain.converged.tolist()
    assert grouped.separated.tolist() == plain.separated.tolist()
    ok = plain.ok
    np.testing.assert_allclose(grouped.params[ok], plain.params[ok], rtol=RTOL, atol=0)
    np.testing.assert_allclose(grouped.bse[ok], plain.bse[ok], rtol=RTOL, atol=0)
    for r in np.flatnonzero(ok):
        assert _ap(b, se, grouped, r) == pytest.approx(_ap(b, se, plain, r), rel=RTOL)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(200, 600),
    widths=st.lists(
        st.tuples(st.sampled_from([10.0, 20.0, 30.0]), st.sampled_from([0.5, 1.0, 2.0])),
        min_size=1,
        max_size=4,
    ),
    exact=st.booleans(),
)
def test_grouped_fits_equal_the_record_fits(seed, n, widths, exact):
    """Replicates of a shared design masked by interval grouping (ties), with or without
    one left exact (continuous: fitted record by record), fitted with and without grouping."""
    X, y, start = _data(n, seed)
    masks = [_masked(X, a, d) for a, d in widths]
    if exact:
        masks.append({4: X[:, 4], 5: X[:, 5]})
    varying = {j: np.stack([m[j] for m in masks]) for j in (4, 5)}
    fitter = SharedDesignFitter(X, y, start, [4, 5])
    grouped = fitter.fit(varying)
    plain = fitter.fit(varying, group=False)
    se = float(sm.Logit(y, X).fit(disp=0).bse[5])
    _assert_same(grouped, plain, float(start[5]), se)
    # with the columns coded by the caller (the search's cache of codes per setting)
    coded = [[_coded(m[4]), _coded(m[5])] for m in masks]
    _assert_same(fitter.fit(varying, codes=coded), plain, float(start[5]), se)
    # the same through fit_logistic_replicates, shared and per-replicate (3-D) designs
    _assert_same(
        fit_logistic_replicates(X, y, start, varying=varying),
        plain,
        float(start[5]),
        se,
    )
    designs = np.repeat(X[None], len(masks), axis=0)
    for r, m in enumerate(masks):
        designs[r, :, 4], designs[r, :, 5] = m[4], m[5]
    _assert_same(
        fit_logistic_replicates(designs, y, start),
        fit_logistic_replicates(designs, y, start, group=False),
        float(start[5]),
        se,
    )


def test_grouping_is_used_and_matches_statsmodels_on_the_records(monkeypatch):
    """The coarse replicates go through the pattern fit (the exact one does not) and their
    estimates and SEs are statsmodels' on the records themselves."""
    X, y, start = _data(2000, 5)
    masks = [_masked(X, 20.0, 1.0), _masked(X, 10.0, 0.5), {4: X[:, 4], 5: X[:, 5]}]
    calls = []
    real = replicates_module._fit_patterns
    monkeypatch.setattr(
        replicates_module,
        "_fit_patterns",
        lambda X, *rest: calls.append(X.shape[0]) or real(X, *rest),
    )
    varying = {j: np.stack([m[j] for m in masks]) for j in (4, 5)}
    fits = SharedDesignFitter(X, y, start, [4, 5]).fit(varying)
    assert len(calls) == 2 and max(calls) <= 2000 * replicates_module.GROUPING_SHARE
    for r, m in enumerate(masks):
        Xr = X.copy()
        Xr[:, 4], Xr[:, 5] = m[4], m[5]
        reference = sm.Logit(y, Xr).fit(disp=0, tol=1e-12, maxiter=100)
        np.testing.assert_allclose(fits.params[r], reference.params, rtol=1e-6)
        np.testing.assert_allclose(fits.bse[r], reference.bse, rtol=1e-6)


def test_patterns_are_the_distinct_rows_with_their_counts():
    rng = np.random.default_rng(2)
    columns = [rng.integers(0, 3, 500).astype(float), rng.choice([0.5, -1.0, 2.0], 500)]
    rows, counts = _patterns(columns, 500)
    table = np.column_stack(columns)
    distinct, expected = np.unique(table, axis=0, return_counts=True)
    found = table[rows]
    order = np.lexsort(found.T[::-1])
    np.testing.assert_array_equal(found[order], distinct)
    np.testing.assert_array_equal(counts[order], expected)
    assert _patterns(columns, distinct.shape[0] - 1) is None


def test_separation_is_found_the_same_way_grouped_or_not():
    """An outcome separated by the grouped dose (every record in the top interval a case):
    the same failure and separation flags, and the weighted separation programme names the
    columns the records' own does."""
    X, _, _ = _data(800, 11)
    top = X[:, 5] >= 2.0
    rng = np.random.default_rng(4)
    y = np.where(top, 1.0, (rng.random(800) < 0.3).astype(float))
    start = np.zeros(X.shape[1])
    masks = [_masked(X, 20.0, 2.0), _masked(X, 30.0, 2.0)]
    varying = {j: np.stack([m[j] for m in masks]) for j in (4, 5)}
    fitter = SharedDesignFitter(X, y, start, [4, 5])
    grouped, plain = fitter.fit(varying), fitter.fit(varying, group=False)
    assert not plain.ok.any()
    assert grouped.converged.tolist() == plain.converged.tolist()
    assert grouped.separated.tolist() == plain.separated.tolist()
    Xr = X.copy()
    Xr[:, 4], Xr[:, 5] = masks[0][4], masks[0][5]
    patterns = _patterns([y, *Xr.T], 800)
    assert patterns is not None
    rows, counts = patterns
    assert separating_columns(Xr[rows], y[rows], weights=counts) == separating_columns(Xr, y)
    assert separating_columns(Xr, y)


def _cohort(n: int, seed: int, separated: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.uniform(0, 70, n).round(1)
    dose = rng.gamma(0.6, 0.6, n).round(3)
    p = expit(-2.0 + 0.6 * dose + 0.01 * age)
    case = rng.binomial(1, p)
    if separated:
        case = np.where(dose >= 2.0, 1, case)
    return pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "age": age,
            "end": (age + rng.uniform(20, 50, n)).round(1),
            "dose": dose,
            "case": case,
        }
    )


ROLES = Roles(
    quasi_identifiers=("sex", "age", "dose", "end"),
    exposure="dose",
    outcome="case",
    covariates=("sex", "age"),
)
SPACE = SearchSpace(
    (
        ColumnSettings("age", ((), (IntervalGroup("age", width=20.0),))),
        ColumnSettings(
            "dose",
            ((Truncate("dose", decimals=1),), (IntervalGroup("dose", width=2.0),)),
        ),
        ColumnSettings(
            "end",  # a quasi-identifier outside the model: recipes differing here share a fit
            ((), (IntervalGroup("end", width=10.0),), (IntervalGroup("end", width=30.0),)),
        ),
    )
)


@pytest.mark.parametrize("separated", [False, True])
def test_search_figures_and_messages_do_not_depend_on_grouping_or_shared_fits(
    monkeypatch, separated
):
    """The search's AP and notes equal those with grouping switched off, and the workspace's
    own; recipes that differ only in a column outside the model are fitted once."""
    data = _cohort(1200, 8, separated)
    context = ReleaseContext(min_cell_size=2, public=False)
    grouped = search_space(Workspace(data), Recipe(ROLES), SPACE, context, prune=False)
    monkeypatch.setattr(replicates_module, "GROUPING_SHARE", 0.0)
    plain = search_space(Workspace(data), Recipe(ROLES), SPACE, context, prune=False)
    assert {p.choice for p in grouped.points} == {p.choice for p in plain.points}
    assert len(grouped.points) >= 6
    by_choice = {p.choice: p for p in plain.points}
    fresh = Workspace(data)
    for point in grouped.points:
        other = by_choice[point.choice]
        assert point.note == other.note
        if other.analysis_potential is None:
            assert point.analysis_potential is None
            assert not fresh.utility(point.recipe).available
        else:
            assert point.analysis_potential == pytest.approx(other.analysis_potential, rel=RTOL)
            utility = fresh.utility(point.recipe)
            assert point.analysis_potential == pytest.approx(utility.analysis_potential, rel=1e-5)
    # one fit per setting of the model columns (age, dose), and one refit per failure
    failed = sum(p.analysis_potential is None for p in plain.points)
    model_settings = len({p.choice[:2] for p in plain.points})
    assert grouped.n_fits == plain.n_fits == model_settings + failed < len(plain.points)
    if separated:
        notes = {p.note for p in grouped.points if p.analysis_potential is None}
        assert notes and all(note and "separat" in note for note in notes)


def test_suppressing_recipes_fitted_on_their_patterns_give_the_record_fits(monkeypatch):
    """A recipe that removes records (record suppression) is fitted on the distinct patterns
    of the records it keeps, weighted by their counts: the same estimates and SEs to the last
    bit as the per-recipe grouping of its kept records' design (the path before), and, to
    rounding, as the fit record by record (grouping switched off everywhere)."""
    data = _cohort(3000, 3)
    space = SPACE.with_suppression_limit(0.3)
    context = ReleaseContext(min_cell_size=5)
    grouped_calls: list[int] = []
    real = search_module._Search._subset_patterns

    def spy(self, *args):
        found = real(self, *args)
        grouped_calls.append(0 if found is None else found[0].shape[0])
        return found

    monkeypatch.setattr(search_module._Search, "_subset_patterns", spy)
    grouped = search_space(Workspace(data), Recipe(ROLES), space, context, prune=False)
    suppressing = [p for p in grouped.points if p.records_removed > 0]
    assert sum(p.analysis_potential is not None for p in suppressing) >= 3
    assert len(grouped_calls) >= 3 and all(0 < g <= 3000 * GROUPING_SHARE for g in grouped_calls)
    monkeypatch.setattr(search_module, "GROUPING_SHARE", 0.0)  # the kept records' own design
    before = search_space(Workspace(data), Recipe(ROLES), space, context, prune=False)
    monkeypatch.setattr(replicates_module, "GROUPING_SHARE", 0.0)  # ...fitted record by record
    plain = search_space(Workspace(data), Recipe(ROLES), space, context, prune=False)
    for other in (before, plain):
        assert [p.choice for p in other.points] == [p.choice for p in grouped.points]
    for p, b, q in zip(grouped.points, before.points, plain.points, strict=True):
        assert p.note == b.note == q.note
        if p.analysis_potential is None:
            continue
        assert (p.analysis_potential, p.estimate, p.ci_low, p.ci_high) == (
            b.analysis_potential,
            b.estimate,
            b.ci_low,
            b.ci_high,
        )
        assert p.estimate == pytest.approx(q.estimate, rel=RTOL)
        assert p.ci_high == pytest.approx(q.ci_high, rel=RTOL)
        assert p.analysis_potential == pytest.approx(q.analysis_potential, rel=RTOL)
