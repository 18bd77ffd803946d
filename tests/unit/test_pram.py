"""PRAM: the transition matrix as the module states it, invariance of the expected level counts
(exact for the matrix, and checked over many random draws), seeding like the noise steps."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from deid_core.masking import Pram
from deid_core.masking.pram import pram_matrix

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
