"""ROC-curve disclosure (Matthews & Harel): the seed's example, ties, brute force, mitigations."""

from itertools import combinations_with_replacement

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_core.datasets.roc_example import diagnostic_test_data, matthews_harel_table
from deid_core.errors import DataError, RecipeError
from deid_core.risk.roc import (
    audit_sample,
    empirical_roc,
    known_records,
    mitigation_sweep,
    publish_roc,
    reconstruct,
    roc_attack,
)

TABLE_2 = [
    (0, 0), (0, 0.2), (0, 0.4), (0, 0.6), (0.2, 0.6), (0.4, 0.6),
    (0.4, 0.8), (0.6, 0.8), (0.6, 1), (0.8, 1), (1, 1),
]  # fmt: skip


@pytest.fixture
def seed_table() -> pd.DataFrame:
    return matthews_harel_table()


def test_empirical_curve_is_the_papers_table_2(seed_table):
    curve = empirical_roc(seed_table["score"], seed_table["status"])
    assert np.allclose(curve.points, TABLE_2)
    assert (curve.n_positive, curve.n_negative) == (5, 5)
    assert curve.auc == pytest.approx(0.8)


def test_seed_example_recovers_status_1_and_brackets_the_score(seed_table):
    before = seed_table.copy()
    result = roc_attack(seed_table, "score", "status", seed_table["known"].to_numpy())
    pd.testing.assert_frame_equal(seed_table, before)
    row = result.to_frame().iloc[0]
    assert result.m == 1
    assert row["recovered_status"] == 1 and row["true_status"] == 1
    assert (row["interval_low"], row["interval_high"]) == (0.53, 1.05)
    assert row["pinned"] and not row["tied_with_known"] and row["score_in_interval"]
    assert result.share_status_recovered == 1 and result.share_pinned == 1
    assert "100%" in str(result)
    assert result.to_dict()["records"][0]["interval_low"] == 0.53


def test_ties_are_diagonal_steps_and_a_tied_unknown_is_pinned_to_the_score():
    scores = [3.0, 2.0, 2.0, 2.0, 1.0, 0.0]
    status = [1, 1, 0, 0, 1, 0]
    curve = empirical_roc(scores, status)
    assert list(curve.up) == [1, 1, 1, 0] and list(curve.right) == [0, 2, 0, 1]
    assert np.allclose(curve.points[2], (2 / 3, 2 / 3))  # one diagonal step
    known = np.array([True, True, False, True, True, True])
    rebuilt = reconstruct(publish_roc(curve), np.array(scores)[known], np.array(status)[known])
    assert rebuilt.status.tolist() == [0]
    assert (rebuilt.low[0], rebuilt.high[0]) == (2.0, 2.0)
    assert rebuilt.pinned[0] and rebuilt.tied[0]


def test_three_missing_in_thirty_records():
    rng = np.random.default_rng(3)
    status = np.r_[np.ones(12, int), np.zeros(18, int)]
    frame = pd.DataFrame({"score": np.round(rng.normal(status, 1.0), 2), "status": status})
    known = known_records(30, missing=3, seed=5)
    result = roc_attack(frame, "score", "status", known)
    table = result.to_frame()
    assert len(table) == 3
    assert table["score_in_interval"].all()
    recovered = table["recovered_status"].dropna()
    assert (recovered == table.loc[recovered.index, "true_status"]).all()
    assert result.share_status_recovered == 1.0


# ------------------------------------------------------------------ brute force (n <= 8)


def brute_force(scores, status, known, published):
    """Every placement of the unknown records (ties with known scores, or fresh scores in the
    gaps, any order) with every status, kept when it reproduces ``published``; returns per
    rank slot the set of statuses and of location codes."""
    ks, kd = scores[known], status[known]
    values = np.unique(ks)[::-1]
    m = int((~known).sum())
    bounds = np.concatenate([[values[0] + 1], values, [values[-1] - 1]])
    spots = [(v, 2 * j + 1) for j, v in enumerate(values)]
    for g in range(len(values) + 1):
        hi, lo = bounds[g], bounds[g + 1]
        spots += [(hi + (lo - hi) * (i + 1) / (m + 1), 2 * g) for i in range(m)]
    target = np.column_stack([published.fpr, published.tpr])
    slots = [(set(), set()) for _ in range(m)]
    for combo in combinations_with_replacement([(s, c, d) for s, c in spots for d in (0, 1)], m):
        all_scores = np.r_[ks, [x[0] for x in combo]]
        all_status = np.r_[kd, [x[2] for x in combo]]
        if all_status.sum() != published.n_positive or all_status.sum() == len(all_status):
            continue
        candidate = publish_roc(empirical_roc(all_scores, all_status), decimals=published.decimals)
        points = np.column_stack([candidate.fpr, candidate.tpr])
        if published.all_thresholds:
            ok = points.shape == target.shape and np.allclose(points, target)
        else:  # the published points are some of the candidate's points
            ok = all(np.isclose(points, p).all(axis=1).any() for p in target)
        if not ok:
            continue
        for i, (_, c, d) in enumerate(sorted(combo, key=lambda x: (-x[0], -x[2]))):
            slots[i][0].add(d)
            slots[i][1].add(c)
    return slots


def check_against_brute_force(scores, status, known, **options):
    published = publish_roc(empirical_roc(scores, status), **options)
    rebuilt = reconstruct(published, scores[known], status[known])
    slots = brute_force(scores, status, known, published)
    for i, (statuses, codes) in enumerate(slots):
        expected = statuses.pop() if len(statuses) == 1 else -1
        assert rebuilt.status[i] == expected
        assert rebuilt.pinned[i] == (len(codes) == 1)
        values = rebuilt.known_scores
        top, bottom = min(codes), max(codes)
        high = values[(top - 1) // 2] if top % 2 else (np.inf if top == 0 else values[top // 2 - 1])
        low = (
            values[(bottom - 1) // 2]
            if bottom % 2
            else (-np.inf if bottom // 2 == len(values) else values[bottom // 2])
        )
        assert (rebuilt.low[i], rebuilt.high[i]) == (low, high)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 1)), min_size=4, max_size=8).filter(
        lambda rows: 0 < sum(d for _, d in rows) < len(rows)
    ),
    missing=st.integers(1, 2),
    pick=st.integers(0, 10_000),
    thin=st.sampled_from([{}, {"every": 2}, {"decimals": 1}]),
)
def test_reconstruction_matches_brute_force(data, missing, pick, thin):
    scores = np.array([float(s) for s, _ in data])
    status = np.array([d for _, d in data])
    known = known_records(len(data), missing=missing, seed=pick)
    check_against_brute_force(scores, status, known, **thin)


def test_brute_force_on_the_seed_example_with_three_missing(seed_table):
    known = seed_table["known"].to_numpy().copy()
    known[[1, 8]] = False
    scores, status = seed_table["score"].to_numpy(), seed_table["status"].to_numpy()
    check_against_brute_force(scores[2:], status[2:], known[2:])


# ------------------------------------------------------------------ mitigations


@pytest.mark.parametrize("seed", [1, 2])
def test_mitigations_never_raise_the_recovered_share(seed):
    frame = diagnostic_test_data(n=120, seed=seed)
    known = known_records(len(frame), missing=6, seed=seed)
    sweep = mitigation_sweep(
        frame,
        "score",
        "status",
        known,
        [
            {},
            {"every": 2},
            {"every": 4},
            {"decimals": 2},
            {"decimals": 1},
            {"quantiles": 5},
            {"binormal": True},
        ],
    )
    full = sweep.iloc[0]
    assert full["auc_change"] == 0 and full["max_vertical_distance"] == 0
    assert (sweep["share_status_recovered"] <= full["share_status_recovered"]).all()
    assert (sweep["share_pinned"] <= full["share_pinned"]).all()
    binormal = sweep.iloc[-1]
    assert binormal["share_pinned"] == 0
    assert binormal["mean_abs_difference"] > 0 and binormal["utility"] < 1


def test_binormal_gives_no_exact_recovery_when_the_missing_records_are_mixed():
    frame = diagnostic_test_data(n=60, seed=4)
    known = np.ones(60, dtype=bool)
    known[[frame["status"].idxmax(), frame["status"].idxmin()]] = False
    result = roc_attack(frame, "score", "status", known, binormal=True)
    assert result.share_status_recovered == 0 and result.share_pinned == 0
    assert np.isinf(result.reconstruction.low).all() and np.isinf(result.reconstruction.high).all()


def test_thinning_the_seed_curve_loses_the_pin(seed_table):
    known = seed_table["known"].to_numpy()
    result = roc_attack(seed_table, "score", "status", known, every=2)
    assert result.share_pinned == 0
    assert len(result.published.fpr) == 6


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("column", "values", "message"),
    [
        ("status", [2, 1, 0, 0, 1, 0], "binary"),
        ("status", [1] * 6, "one class"),
        ("status", [1, None, 0, 0, 1, 0], "missing"),
        ("score", [1.0, np.nan, 0.0, 2.0, 3.0, 4.0], "missing"),
        ("score", ["secret", "b", "c", "d", "e", "f"], "numbers"),
    ],
)
def test_bad_columns_raise_data_errors_without_values(column, values, message):
    frame = pd.DataFrame({"score": [5.0, 4.0, 3.0, 2.0, 1.0, 0.0], "status": [1, 1, 0, 1, 0, 0]})
    frame[column] = values
    known = np.array([True] * 5 + [False])
    with pytest.raises(DataError, match=message) as error:
        roc_attack(frame, "score", "status", known)
    assert "secret" not in str(error.value)


def test_no_known_or_no_unknown_records(seed_table):
    for known, message in ((np.zeros(10, bool), "knows no records"), (np.ones(10, bool), "every")):
        with pytest.raises(DataError, match=message):
            roc_attack(seed_table, "score", "status", known)
    with pytest.raises(DataError, match="no column"):
        roc_attack(seed_table, "nope", "status", seed_table["known"].to_numpy())


def test_bad_publication_options(seed_table):
    curve = empirical_roc(seed_table["score"], seed_table["status"])
    for options in (
        {"every": 0},
        {"decimals": -1},
        {"every": 2, "quantiles": 3},
        {"binormal": True, "decimals": 2},
    ):
        with pytest.raises(RecipeError):
            publish_roc(curve, **options)


def test_known_records_choices():
    assert known_records(10, fraction=0.3, seed=1).sum() == 3
    assert (~known_records(10, missing=2, seed=1)).sum() == 2
    assert known_records(3, flag=[1, 0, 1]).tolist() == [True, False, True]
    assert (
        known_records(10, missing=2, seed=7).tolist()
        == known_records(10, missing=2, seed=7).tolist()
    )
    with pytest.raises(DataError, match="exactly one"):
        known_records(10, fraction=0.5, missing=1)
    with pytest.raises(DataError, match="true/false"):
        known_records(3, flag=[1, None, 0])


# --------------------------------------------------------------------------- audit sample


def test_the_audit_sample_keeps_every_status_of_a_rare_outcome():
    """85 cases in 16,000 (the demo's share): a simple random sample of 500 holds no case in
    about 7% of draws (e^-2.66); the stratified sample holds round(500 x 85 / 16,000) = 3 in
    every draw, and the rest are controls."""
    status = np.zeros(16_000, dtype=int)
    status[np.random.default_rng(1).choice(16_000, size=85, replace=False)] = 1
    simple_without_case = sum(
        status[np.random.default_rng(seed).choice(16_000, 500, replace=False)].sum() == 0
        for seed in range(300)
    )
    assert simple_without_case > 0  # the failure the stratified draw avoids
    for seed in range(300):
        chosen = audit_sample(status, 500, seed=seed)
        assert len(chosen) == 500 and len(set(chosen)) == 500
        assert np.all(np.diff(chosen) > 0)  # file order
        assert status[chosen].sum() == 3


@given(
    counts=st.lists(st.integers(1, 400), min_size=1, max_size=4),
    size=st.integers(1, 1_600),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_audit_sample_gives_each_status_its_share(counts, size, seed):
    status = np.repeat(np.arange(len(counts)), counts)
    np.random.default_rng(0).shuffle(status)
    n = len(status)
    chosen = audit_sample(status, size, seed=seed)
    assert len(chosen) == min(size, n) and len(np.unique(chosen)) == len(chosen)
    taken = np.bincount(status[chosen], minlength=len(counts))
    assert np.all(taken <= counts)
    if size >= n:
        assert np.array_equal(chosen, np.arange(n))
        return
    share = np.array(counts) * size / n
    if np.all(share >= 1):  # no status raised to its one record: each within one of its share
        assert np.all(np.abs(taken - share) < 1)
    # raising a status to one record takes at most one from each of the others
    raised = int(np.sum((share < 1) & (taken == 1)))
    assert np.all(np.abs(taken - share) < 1 + raised)
    if size >= len(counts):
        assert np.all(taken >= 1)
    assert np.array_equal(audit_sample(status, size, seed=seed), chosen)  # the seed fixes it


def test_the_audit_sample_keeps_a_missing_status_as_a_status_and_checks_its_size():
    status = np.array([0, 1, None, 0, 1, None, 0, 0], dtype=object)
    chosen = audit_sample(status, 3, seed=0)
    assert sorted(status[chosen], key=str) == sorted([0, 1, None], key=str)
    with pytest.raises(DataError, match="whole number"):
        audit_sample(status, 0)
