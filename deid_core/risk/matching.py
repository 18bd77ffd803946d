"""Expected share of correct matches (Zhou, Dominici & Louis 2010, section on identification
disclosure risk).

The intruder holds the TRUE values of some variables (e.g. the exposure, "the true regressors")
for every person in the release, and links each person j to the released record(s) with the
highest match score, a score that falls as the absolute difference grows. With n_j released
records sharing the best score and I_j = 1 if person j's own record is among them (0 otherwise),
the risk is the expected share of people matched to their own record, ties shared:

    risk = (1/n) sum_j I_j / n_j.

Our concrete choices (the seed's formulas are unreadable):

- score: minus the distance ``D_jk = sum_c |t_jc - r_kc| / SD(t_c)``, the sum over the known
  variables of the absolute differences, each divided by the sample SD of the TRUE variable (a
  constant variable by 1), so that variables in different units count alike;
- ties: record k ties for the best score of person j when ``D_jk <= D_j,min * (1 + 1e-12)``
  (relative tolerance ``rtol``), so that distances equal up to floating-point rounding tie;
  a distance of 0 ties only with 0;
- pairing: person j's own record is row j of the release: both tables must have the same rows
  in the same order (the same index);
- missing values: the true values must be complete (the intruder's file is assumed complete);
  a released record with a missing value in a known variable cannot be matched on it and is
  never a candidate (suppression protects it); a person whose own record is such a record has
  probability 0, and if no released record is complete every probability is 0.

Computation: a k-d tree with the L1 metric (``scipy.spatial.cKDTree``, p = 1) over the distinct
complete released records, so n = 100,000 takes about a second unless there are huge ties.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from deid_core.errors import DataError

# scipy is imported where it is used: the command line imports this module to refuse bad
# input and must not spend seconds loading scipy first (see deid_core._lazy).

#: Relative tolerance under which two match distances count as tied.
TIE_RTOL = 1e-12


@dataclass(frozen=True, eq=False)
class MatchShareResult:
    """The expected share of correct matches and its per-person parts.

    ``probabilities[j] = I_j / n_j`` (the chance that person j is linked to their own record),
    ``ties[j] = n_j`` (released records sharing person j's best score; 0 when no released
    record is complete), ``share`` their mean over the ``n`` people.
    """

    share: float
    n: int
    probabilities: np.ndarray
    ties: np.ndarray
    columns: tuple[str, ...]

    @property
    def expected_correct(self) -> float:
        """Expected number of people linked to their own record (``share * n``)."""
        return float(self.probabilities.sum())

    def __str__(self) -> str:
        tied = int((self.ties > 1).sum())
        return (
            f"Expected share of correct matches: {self.share:.4f} "
            f"({self.expected_correct:,.1f} of {self.n:,} people) for an intruder who knows "
            f"the true {', '.join(self.columns)}; {tied:,} "
            f"{'person ties' if tied == 1 else 'people tie'} between several released records."
        )


def _numeric(frame: pd.DataFrame, column: str, which: str) -> np.ndarray:
    series = frame[column]
    if pd.api.types.is_bool_dtype(series.dtype) or not pd.api.types.is_numeric_dtype(series.dtype):
        raise DataError(f"Match share: column '{column}' of the {which} data must be numeric.")
    values = series.to_numpy(dtype="float64", na_value=np.nan)
    if np.isinf(values).any():
        raise DataError(f"Match share: column '{column}' of the {which} data has infinite values.")
    return values


def expected_correct_match_share(
    true: pd.DataFrame,
    released: pd.DataFrame,
    columns: Sequence[str],
    *,
    rtol: float = TIE_RTOL,
) -> MatchShareResult:
    """Zhou's expected share of correct matches of ``released`` against the ``true`` values of
    ``columns`` (see the module notes for the score, ties and missing values). Row j of both
    tables is the same person."""
    columns = tuple(columns)
    if not columns:
        raise DataError("Match share: name at least one variable the intruder knows.")
    if len(set(columns)) != len(columns):
        raise DataError("Match share: a known variable is listed twice.")
    for which, frame in (("true", true), ("released", released)):
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            listed = ", ".join(f"'{c}'" for c in missing)
            raise DataError(f"Match share: the {which} data have no column(s) {listed}.")
    if len(true) != len(released):
        raise DataError(
            f"Match share: the true data have {len(true):,} rows and the released data "
            f"{len(released):,}; records are paired by position, so they must be the same rows."
        )
    if not true.index.equals(released.index):
        raise DataError(
            "Match share: records are paired by position, but the two tables have different "
            "row labels (index), so they may be in a different order. Put them in the same "
            "order, then reset both indexes."
        )
    n = len(true)
    if n == 0:
        raise DataError("Match share: the data have no rows.")
    if not (isinstance(rtol, float | int) and 0 <= rtol < 1):
        raise DataError("Match share: 'rtol' must be a number in [0, 1).")

    truth = np.column_stack([_numeric(true, c, "true") for c in columns])
    bad = np.isnan(truth).any(axis=0)
    if bad.any():
        listed = ", ".join(f"'{c}'" for c, b in zip(columns, bad, strict=True) if b)
        raise DataError(
            f"Match share: the true values of {listed} have missing entries; the intruder is "
            "assumed to know every person's values."
        )
    shown = np.column_stack([_numeric(released, c, "released") for c in columns])
    sd = truth.std(axis=0, ddof=1) if n > 1 else np.ones(len(columns))
    sd = np.where(sd > 0, sd, 1.0)
    truth = truth / sd
    shown = shown / sd

    complete = ~np.isnan(shown).any(axis=1)
    probabilities = np.zeros(n)
    ties = np.zeros(n, dtype=np.int64)
    if complete.any():
        from scipy.spatial import cKDTree

        distinct, counts = np.unique(shown[complete], axis=0, return_counts=True)
        tree = cKDTree(distinct)
        best, _ = tree.query(truth, k=1, p=1)
        radius = best * (1.0 + rtol)
        within = tree.query_ball_point(truth, r=radius, p=1)
        ties = np.fromiter((counts[idx].sum() for idx in within), dtype=np.int64, count=n)
        own = np.abs(truth - np.nan_to_num(shown, nan=np.inf)).sum(axis=1)
        correct = complete & (own <= radius)
        probabilities[correct] = 1.0 / ties[correct]
    return MatchShareResult(
        share=float(probabilities.mean()),
        n=n,
        probabilities=probabilities,
        ties=ties,
        columns=columns,
    )


__all__ = ["TIE_RTOL", "MatchShareResult", "expected_correct_match_share"]
