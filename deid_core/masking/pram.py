"""PRAM, the post-randomisation method (Gouweleeuw, Kooiman, Willenborg & de Wolf 1998), for a
categorical column: each record's value is redrawn from a row of a transition matrix ``P``,
``P[i, j]`` being the probability that level ``i`` is released as level ``j``.

The matrix is set by one number, the retention probability ``p``:

* plain PRAM keeps a value with probability ``p`` and spreads the rest evenly over the other
  levels: ``P[i, i] = p``, ``P[i, j] = (1 - p) / (L - 1)`` for the ``L - 1`` other levels;
* invariant PRAM keeps a value with probability ``p`` and otherwise redraws it from the
  column's own distribution ``pi`` (the shares of the levels in the data):
  ``P = p I + (1 - p) 1 pi'``, so ``P[i, i] = p + (1 - p) pi_i`` and
  ``P[i, j] = (1 - p) pi_j``. Then ``t' P = t'`` for the level counts ``t``: the expected
  count of every level after PRAM is its count before (the defining property of invariant
  PRAM), whatever ``p``; each level is kept with probability at least ``p``.

Missing values stay missing and are not a level. Each replicate ``r`` of a seeded step draws
from ``numpy.random.default_rng([seed, r])``, like the noise steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from deid_core.cancellation import check_cancelled
from deid_core.errors import RecipeError
from deid_core.masking.base import MaskingStep, checked_seed, require_finite, rng_for

#: Most levels PRAM takes (its matrix has the square of them).
MAX_LEVELS = 1_000
#: The retention probabilities the risk-utility map tries.
RETENTION_SWEEP = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


def pram_matrix(counts: np.ndarray, retention: float, invariant: bool) -> np.ndarray:
    """The transition matrix of PRAM over levels with ``counts`` (see the module docstring):
    rows sum to 1; with ``invariant``, ``counts @ P == counts`` up to rounding."""
    counts = np.asarray(counts, dtype=float)
    levels = counts.size
    if levels == 1:
        return np.ones((1, 1))
    if invariant:
        shares = counts / counts.sum()
        return retention * np.eye(levels) + (1 - retention) * np.tile(shares, (levels, 1))
    spread = (1 - retention) / (levels - 1)
    return np.full((levels, levels), spread) + (retention - spread) * np.eye(levels)


def release_levels(codes: np.ndarray, matrix: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """The level each record is released as: record ``r`` of level ``i = codes[r]`` with the
    uniform draw ``u = draws[r]`` goes to the first level ``j`` whose cumulative probability
    ``C[i, j] = P[i, 0] + ... + P[i, j]`` exceeds ``u`` (inverse-CDF sampling from row ``i``
    of ``P``; ``C[i, L-1]`` is set to 1 against rounding), i.e. to the number of ``j`` with
    ``C[i, j] <= u``.

    The records are taken level by level (PRAM draws each record from its own level's row,
    independently): one sorted search of the level's draws in its row ``C[i]``, so memory is
    O(records + levels^2), never records x levels, and each record gets exactly the level the
    comparison of its draw with the whole row would give."""
    cumulative = np.cumsum(matrix, axis=1)
    cumulative[:, -1] = 1.0
    released = np.empty(codes.size, dtype=np.int64)
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(matrix.shape[0] + 1))
    for level in range(matrix.shape[0]):
        check_cancelled()
        members = order[starts[level] : starts[level + 1]]
        if members.size:
            released[members] = np.searchsorted(cumulative[level], draws[members], side="right")
    return released


@dataclass(frozen=True)
class Pram(MaskingStep):
    """PRAM of a categorical column: each value is kept with probability ``retention``,
    otherwise moved to another level, evenly over the other levels, or, with ``invariant``,
    redrawn from the column's own distribution so that the expected level counts do not
    change (see the module docstring)."""

    retention: float = 0.8
    invariant: bool = False
    seed: int | None = None

    method: ClassVar[str] = "pram"
    label: ClassVar[str] = "PRAM"
    random: ClassVar[bool] = True
    sweep_parameter: ClassVar[str | None] = "retention"
    _PERTURBATIVE: ClassVar[bool] = True

    def _validate(self) -> None:
        retention = require_finite(self.retention, "retention", self.label)
        if not 0 <= retention <= 1:
            raise RecipeError(f"{self.label}: 'retention' is a probability, from 0 to 1.")
        if not isinstance(self.invariant, bool):
            raise RecipeError(f"{self.label}: 'invariant' must be true or false.")
        object.__setattr__(self, "seed", checked_seed(self.seed, self.label))

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        present = series.notna().to_numpy()
        codes, levels = pd.factorize(series[present], sort=True)
        if len(levels) > MAX_LEVELS:
            raise RecipeError(
                f"{self.label} of '{self.column}': {len(levels):,} levels are more than "
                f"{MAX_LEVELS:,}; PRAM is for categorical columns (group the values first)."
            )
        if len(levels) == 0:
            return series
        counts = np.bincount(codes, minlength=len(levels))
        matrix = pram_matrix(counts, float(self.retention), self.invariant)
        draws = rng_for(self.seed, replicate).random(codes.size)
        released = release_levels(codes, matrix, draws)
        values = series.astype(object).to_numpy(copy=True)
        values[present] = np.asarray(levels, dtype=object)[released]
        # The released values are the column's own levels: its type can hold them.
        return pd.Series(values, index=series.index, name=series.name).astype(series.dtype)

    def describe(self) -> str:
        how = (
            "otherwise redrawn from the column's own distribution (invariant PRAM: expected "
            "counts unchanged)"
            if self.invariant
            else "otherwise moved to another level, evenly"
        )
        return f"{self.column}: PRAM, each value kept with probability {self.retention:g}, {how}"

    def sweep_values(self, series: pd.Series | None = None) -> list[Any]:
        return list(RETENTION_SWEEP)
