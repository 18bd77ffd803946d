"""PRAM: the transition matrix as the module states it, invariance of the expected level counts
(exact for the matrix, and checked over many random draws), seeding like the noise steps."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from deid_core.masking import Pram
from deid_core.masking.pram import pram_matrix, release_levels

COUNTS = np.array([90, 8, 2])


def test_plain_matrix_keeps_p_and_spreads_the_rest_evenly():
    matrix = pram_matrix(COUNTS, 0.8, invariant=False)
    assert np.allclose(np.diag(matrix), 0.8)
    assert np.allclose(matrix[~np.eye(3, dtype=bool)], 0.1)
    assert np.allclose(matrix.sum(axis=1), 1)
    # not invariant: the rare level is expected to grow
    assert (COUNTS @ matrix)[2] > COUNTS[2]


def test_invariant_matrix_keeps_the_expected_counts_exactly():
    for retention in (0.0, 0.3, 0.8, 1.0):
        matrix = pram_matrix(COUNTS, retention, invariant=True)
        assert np.allclose(matrix.sum(axis=1), 1)
        assert np.allclose(COUNTS @ matrix, COUNTS, rtol=0, atol=1e-9)
        shares = COUNTS / COUNTS.sum()
        assert np.allclose(np.diag(matrix), retention + (1 - retention) * shares)
        assert np.all(np.diag(matrix) >= retention - 1e-12)


def test_invariant_pram_keeps_the_level_counts_on_average_over_draws():
    series = pd.Series(np.repeat(["a", "b", "c"], COUNTS), name="x")
    step = Pram("x", retention=0.6, invariant=True, seed=11)
    draws = np.array(
        [
            step.apply(series, replicate=r).value_counts().reindex(list("abc"), fill_value=0)
            for r in range(2000)
        ]
    )
    mean, se = draws.mean(axis=0), draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    assert np.all(np.abs(mean - COUNTS) < 4 * se + 1e-9)
    plain = Pram("x", retention=0.6, invariant=False, seed=11)
    counts = np.array(
        [
            plain.apply(series, replicate=r).value_counts().reindex(list("abc"), fill_value=0)
            for r in range(400)
        ]
    ).mean(axis=0)
    assert counts[2] > COUNTS[2] + 10  # the plain matrix moves records to rare levels


def test_share_kept_is_the_retention_and_draws_are_seeded():
    series = pd.Series(np.tile([1, 2, 3, 4], 2500), name="x")
    out = Pram("x", retention=0.7, seed=3).apply(series)
    assert (out == series).mean() == pytest.approx(0.7, abs=0.02)
    assert out.dtype == series.dtype
    assert Pram("x", retention=0.7, seed=3).apply(series).equals(out)
    assert not Pram("x", retention=0.7, seed=3).apply(series, replicate=1).equals(out)
    assert Pram("x", retention=1.0, seed=3).apply(series).equals(series)


def test_missing_values_stay_missing_and_are_not_a_level():
    series = pd.Series(["a", None, "b", "a", None], name="x")
    out = Pram("x", retention=0.0, invariant=False, seed=1).apply(series)
    assert out.isna().tolist() == [False, True, False, False, True]
    assert out.dropna().tolist() == ["b", "a", "b"]  # two levels, retention 0: always moved


def _released_by_the_whole_matrix(codes, matrix, draws):
    """The former draw, kept as the reference: each record's draw compared with its level's
    whole row of cumulative probabilities (a records x levels array)."""
    cumulative = np.cumsum(matrix, axis=1)
    cumulative[:, -1] = 1.0
    return (draws[:, None] >= cumulative[codes]).sum(axis=1)


@pytest.mark.parametrize("invariant", [False, True])
@pytest.mark.parametrize("levels", [1, 2, 7, 300])
def test_drawing_level_by_level_releases_what_the_whole_matrix_did(levels, invariant):
    rng = np.random.default_rng(levels)
    codes = rng.integers(0, levels, size=5000)
    codes[: min(levels, 5000)] = np.arange(min(levels, 5000))  # every level present
    counts = np.bincount(codes, minlength=levels)
    for retention in (0.0, 0.35, 0.8, 1.0):
        matrix = pram_matrix(counts, retention, invariant)
        draws = rng.random(codes.size)
        draws[:3] = [0.0, np.nextafter(1.0, 0.0), 0.5]  # the ends of [0, 1)
        released = release_levels(codes, matrix, draws)
        expected = _released_by_the_whole_matrix(codes, matrix, draws)
        assert np.array_equal(released, expected)


def test_a_seeded_step_gives_the_same_values_as_the_whole_matrix_draw():
    series = pd.Series(np.random.default_rng(5).choice(list("abcdefgh"), size=3000), name="x")
    series[::17] = None
    step = Pram("x", retention=0.6, invariant=True, seed=42)
    out = step.apply(series, replicate=2)
    present = series.notna().to_numpy()
    codes, levels = pd.factorize(series[present], sort=True)
    matrix = pram_matrix(np.bincount(codes), 0.6, True)
    draws = np.random.default_rng([42, 2]).random(codes.size)
    expected = np.asarray(levels, dtype=object)[_released_by_the_whole_matrix(codes, matrix, draws)]
    assert out[present].tolist() == expected.tolist()
    assert out[~present].isna().all()


def test_pram_of_1000_levels_takes_memory_for_the_records_not_records_by_levels():
    """At the level bound the draw holds arrays of the records and the matrix, never their
    product (the former draw built 500,000 x 1,000 floats, 4 GB; here 200,000 x 1,000 would
    be 1.6 GB). numpy reports its allocations to tracemalloc."""
    import tracemalloc

    rows, levels = 200_000, 1_000
    series = pd.Series(np.arange(rows) % levels, name="x")
    tracemalloc.start()
    try:
        out = Pram("x", retention=0.5, invariant=True, seed=1).apply(series)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.isin(range(levels)).all()
    assert peak < 150 * 1024 * 1024, peak  # a few arrays of the records, the 8 MB matrix
