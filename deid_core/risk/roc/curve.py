"""The empirical ROC curve, and the curve as it is published (Matthews & Harel 2013).

Source: G. J. Matthews and O. Harel, "An examination of data confidentiality and disclosure
issues related to publication of empirical ROC curves", Academic Radiology (2013), Tables 1-2:
with the points of an empirical ROC curve and all but ``m`` of the records behind it, an intruder
recovers the missing records' disease status exactly and their test scores up to rank.

**The empirical curve.** Sort the ``n = P + N`` records (``P`` diseased, ``N`` healthy) by score;
for each distinct score ``u_1 > ... > u_K`` (the thresholds: a record is "positive" when its score
is ``>= u_k``) step ``k`` holds ``up_k`` diseased and ``right_k`` healthy records, and the curve is
the path of points ``(FPR_k, TPR_k) = (sum_{t<=k} right_t / N, sum_{t<=k} up_t / P)`` from (0, 0)
to (1, 1): a vertical step for a diseased record, a horizontal one for a healthy one, a diagonal
one for tied records of both classes. Its AUC (trapezoids) is the Mann-Whitney statistic with
ties counted 1/2.

**What is published.** The curve's points and the class sizes ``P`` and ``N`` (a published ROC
curve comes with its numbers of cases and controls). Thresholds are not published. A mitigated
curve is released at fewer points (``every`` k-th point, or at ``quantiles`` cut-offs), with
rounded coordinates (``decimals``), or as a smoothed binormal fit; the intruder is told which of
these was done but not which thresholds were kept.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from deid_core import bounds
from deid_core.errors import DataError, RecipeError

# scipy is imported where it is used: the command line imports this module to refuse bad
# input and must not spend seconds loading scipy first (see deid_core._lazy).

# --------------------------------------------------------------------------- the curve


@dataclass(frozen=True, eq=False)
class RocCurve:
    """The empirical ROC curve: one step per distinct score, in descending score order.

    ``thresholds[k]`` is the k-th distinct score (descending), ``up[k]``/``right[k]`` the
    diseased/healthy records with that score. :attr:`fpr` and :attr:`tpr` have ``K + 1``
    entries, from (0, 0) to (1, 1).
    """

    thresholds: np.ndarray
    up: np.ndarray
    right: np.ndarray
    n_positive: int
    n_negative: int

    def __post_init__(self) -> None:
        k = len(self.thresholds)
        if k == 0 or len(self.up) != k or len(self.right) != k:
            raise DataError("ROC curve: thresholds, up and right counts must have one entry each.")
        if np.any(np.diff(self.thresholds) >= 0):
            raise DataError("ROC curve: thresholds must be strictly decreasing.")
        if np.any(self.up < 0) or np.any(self.right < 0) or np.any(self.up + self.right < 1):
            raise DataError("ROC curve: every step must hold at least one record.")
        if self.up.sum() != self.n_positive or self.right.sum() != self.n_negative:
            raise DataError("ROC curve: the step counts do not add up to the class sizes.")
        if self.n_positive < 1 or self.n_negative < 1:
            raise DataError("ROC curve: both classes need at least one record.")

    @property
    def fpr(self) -> np.ndarray:
        return np.concatenate([[0.0], np.cumsum(self.right) / self.n_negative])

    @property
    def tpr(self) -> np.ndarray:
        return np.concatenate([[0.0], np.cumsum(self.up) / self.n_positive])

    @property
    def points(self) -> np.ndarray:
        """The ``K + 1`` points (FPR, TPR) as a ``(K + 1, 2)`` array."""
        return np.column_stack([self.fpr, self.tpr])

    @property
    def auc(self) -> float:
        """Area under the curve (trapezoids; ties count 1/2)."""
        return trapezoid_area(self.fpr, self.tpr)


def trapezoid_area(x: np.ndarray, y: np.ndarray) -> float:
    """Area under the piecewise-linear path through (x, y) (trapezoids)."""
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2.0))


def checked_scores(scores: Any, what: str = "score") -> np.ndarray:
    """One column of finite numbers as float64, or a DataError naming what is wrong."""
    values = np.asarray(scores)
    if values.ndim != 1:
        raise DataError(f"ROC: the {what}s must be one column of numbers.")
    if values.dtype == bool or not np.issubdtype(values.dtype, np.number):
        raise DataError(f"ROC: the {what} column must hold numbers; it holds text or flags.")
    values = values.astype("float64")
    if np.isnan(values).any():
        raise DataError(f"ROC: the {what} column has missing values; drop those records first.")
    if np.isinf(values).any():
        raise DataError(f"ROC: the {what} column has infinite values.")
    return values


def checked_status(status: Any) -> np.ndarray:
    """One complete 0/1 column (1 = diseased) as int64, or a DataError."""
    if np.ndim(status) != 1:
        raise DataError("ROC: the status must be one column of 0/1 values.")
    series = pd.Series(np.asarray(status, dtype=object))
    if series.isna().any():
        raise DataError("ROC: the status column has missing values; drop those records first.")
    numbers = (bool, np.bool_, int, np.integer, float, np.floating)
    if not series.map(lambda v: isinstance(v, numbers) and v in (0, 1)).all():
        raise DataError("ROC: the status column must be binary (0 = healthy, 1 = diseased).")
    return series.astype(np.int64).to_numpy()


def empirical_roc(scores: Sequence[float] | np.ndarray, status: Any) -> RocCurve:
    """The empirical ROC curve of ``scores`` against a 0/1 ``status`` (1 = diseased)."""
    values = checked_scores(scores)
    labels = checked_status(status)
    if len(values) != len(labels):
        raise DataError("ROC: the score and status columns must have the same length.")
    if labels.sum() == 0 or labels.sum() == len(labels):
        raise DataError("ROC: the status column has only one class; it needs both 0 and 1.")
    distinct, inverse = np.unique(values, return_inverse=True)
    up = np.bincount(inverse, weights=labels, minlength=len(distinct)).astype(np.int64)
    total = np.bincount(inverse, minlength=len(distinct)).astype(np.int64)
    return RocCurve(
        thresholds=distinct[::-1].copy(),
        up=up[::-1].copy(),
        right=(total - up)[::-1].copy(),
        n_positive=int(labels.sum()),
        n_negative=int(len(labels) - labels.sum()),
    )


# --------------------------------------------------------------------------- publication


@dataclass(frozen=True, eq=False)
class PublishedRoc:
    """An ROC curve as released: its points, the class sizes, and how it was made.

    ``all_thresholds``: one point per distinct score (the full empirical curve, possibly
    rounded). ``decimals``: the coordinates were rounded to that many decimals. ``binormal``:
    ``(a, b)`` when the curve is the smoothed fit ``TPR = Phi(a + b Phi^-1(FPR))`` (its points
    carry no counts). ``description`` says in words what was done.
    """

    fpr: np.ndarray
    tpr: np.ndarray
    n_positive: int
    n_negative: int
    all_thresholds: bool
    description: str
    decimals: int | None = None
    binormal: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if len(self.fpr) != len(self.tpr) or len(self.fpr) < 2:
            raise DataError("Published ROC: give at least two points, as FPR and TPR pairs.")
        ends = (self.fpr[0], self.tpr[0], self.fpr[-1], self.tpr[-1])
        if not np.allclose(ends, (0.0, 0.0, 1.0, 1.0)):
            raise DataError("Published ROC: the curve must run from (0, 0) to (1, 1).")
        if np.any(np.diff(self.fpr) < 0) or np.any(np.diff(self.tpr) < 0):
            raise DataError("Published ROC: FPR and TPR must never decrease along the curve.")
        if self.n_positive < 1 or self.n_negative < 1:
            raise DataError("Published ROC: both class sizes must be at least 1.")
        if self.binormal is not None and self.all_thresholds:
            raise DataError("Published ROC: a binormal fit has no point per threshold.")

    @property
    def auc(self) -> float:
        """Area under the published points (trapezoids)."""
        return trapezoid_area(self.fpr, self.tpr)

    def count_bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """What the points say about the cumulative counts: integer bounds
        ``(tp_low, tp_high, fp_low, fp_high)`` at each count-bearing point (a binormal fit
        bears none but its ends). Rounded to ``d`` decimals, ``TP`` lies in
        ``[ceil(P (TPR - h)), floor(P (TPR + h))]`` with ``h = 0.5 10^-d``, clipped to ``[0, P]``
        and made monotone along the curve."""
        p, n = self.n_positive, self.n_negative
        if self.binormal is not None:
            ends = np.array([0, 1])
            return ends * p, ends * p, ends * n, ends * n
        half = 0.0 if self.decimals is None else 0.5 * 10.0 ** (-self.decimals)
        bounds = []
        for rate, total in ((self.tpr, p), (self.fpr, n)):
            low = np.clip(np.ceil(total * (rate - half) - 1e-9), 0, total).astype(np.int64)
            high = np.clip(np.floor(total * (rate + half) + 1e-9), 0, total).astype(np.int64)
            low[0], high[0], low[-1], high[-1] = 0, 0, total, total
            low = np.maximum.accumulate(low)
            high = np.minimum.accumulate(high[::-1])[::-1]
            bounds += [low, high]
        if any(np.any(lo > hi) for lo, hi in (bounds[:2], bounds[2:])):
            raise DataError("Published ROC: the points are not consistent with the class sizes.")
        return bounds[0], bounds[1], bounds[2], bounds[3]


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def publish_roc(
    curve: RocCurve,
    *,
    every: int | None = None,
    quantiles: int | None = None,
    decimals: int | None = None,
    binormal: bool = False,
    grid: int = 101,
) -> PublishedRoc:
    """The curve as it would be released, optionally mitigated.

    - ``every=k``: keep every k-th point (points 0, k, 2k, ... and the last);
    - ``quantiles=q``: keep the points at the ``q - 1`` cut-offs splitting the records into ``q``
      groups of about equal size (the first point reaching ``i n / q`` records), plus the ends;
    - ``decimals=d``: round FPR and TPR to ``d`` decimals (after any thinning);
    - ``binormal=True``: release the binormal fit ``TPR = Phi(a + b Phi^-1(FPR))`` on ``grid``
      equally spaced FPR values, with ``a = (mu1 - mu0) / sd1`` and ``b = sd0 / sd1`` from the
      class means and standard deviations (``ddof=1``) of the scores (1 = diseased).
    """
    _check_options(every, quantiles, decimals, binormal, grid)
    p, n = curve.n_positive, curve.n_negative
    if binormal:
        from scipy.stats import norm

        a, b = _binormal_fit(curve)
        fpr = np.linspace(0.0, 1.0, grid)
        tpr = norm.cdf(a + b * norm.ppf(fpr))
        tpr[0], tpr[-1] = 0.0, 1.0
        text = f"binormal fit (a = {a:.3f}, b = {b:.3f}) on {grid} points"
        return PublishedRoc(fpr, tpr, p, n, False, text, binormal=(a, b))
    last = len(curve.thresholds)
    keep = np.arange(last + 1)
    text = f"all {last} thresholds"
    if every is not None and every > 1:
        # A step beyond the last point keeps the two ends (and stays a small integer).
        keep = np.union1d(np.arange(0, last + 1, max(1, min(every, last))), [last])
        text = f"every {_ordinal(every)} threshold ({len(keep)} points)"
    elif quantiles is not None:
        records = np.concatenate([[0], np.cumsum(curve.up + curve.right)])
        targets = np.arange(1, quantiles) * (p + n) / quantiles
        cuts = np.searchsorted(records, targets - 1e-9)
        keep = np.union1d(np.union1d(cuts, [0]), [last])
        text = f"{quantiles} quantile groups ({len(keep)} points)"
    fpr, tpr = curve.fpr[keep], curve.tpr[keep]
    if decimals is not None:
        fpr, tpr = np.round(fpr, decimals), np.round(tpr, decimals)
        text += f", rounded to {decimals} decimal{'s' if decimals != 1 else ''}"
    all_thresholds = (every is None or every == 1) and quantiles is None
    return PublishedRoc(fpr, tpr, p, n, all_thresholds, text, decimals=decimals)


def _check_options(
    every: int | None, quantiles: int | None, decimals: int | None, binormal: bool, grid: int
) -> None:
    def whole(value: Any) -> bool:
        return isinstance(value, int | np.integer) and not isinstance(value, bool)

    if every is not None and not (whole(every) and every >= 1):
        raise RecipeError("ROC publication: 'every' must be a whole number, at least 1.")
    if quantiles is not None and not (whole(quantiles) and quantiles >= 2):
        raise RecipeError("ROC publication: 'quantiles' must be a whole number, at least 2.")
    if quantiles is not None:
        bounds.ROC_QUANTILES.check(quantiles, "The ROC publication asks for")
    if decimals is not None and not (whole(decimals) and 0 <= decimals <= 12):
        raise RecipeError("ROC publication: 'decimals' must be a whole number from 0 to 12.")
    if not isinstance(binormal, bool | np.bool_):
        raise RecipeError("ROC publication: 'binormal' must be true or false.")
    if not (whole(grid) and grid >= 2):
        raise RecipeError("ROC publication: 'grid' must be a whole number, at least 2.")
    bounds.ROC_GRID.check(grid, "The ROC publication asks for")
    if every is not None and quantiles is not None:
        raise RecipeError("ROC publication: thin the curve by 'every' or by 'quantiles', not both.")
    if binormal and (every is not None or quantiles is not None or decimals is not None):
        raise RecipeError(
            "ROC publication: a binormal fit replaces the points; do not combine it with "
            "'every', 'quantiles' or 'decimals'."
        )


def _binormal_fit(curve: RocCurve) -> tuple[float, float]:
    stats = []
    for weights in (curve.up, curve.right):
        count = weights.sum()
        if count < 2:
            raise RecipeError("Binormal fit: each class needs at least two records.")
        mean = float(np.sum(weights * curve.thresholds) / count)
        var = float(np.sum(weights * (curve.thresholds - mean) ** 2) / (count - 1))
        if var <= 0:
            raise RecipeError("Binormal fit: the scores vary in neither or one class only.")
        stats.append((mean, math.sqrt(var)))
    (mu1, sd1), (mu0, sd0) = stats
    return (mu1 - mu0) / sd1, sd0 / sd1


# --------------------------------------------------------------------------- drawing


def path_segments(scores: Any, status: Any, known: Any) -> pd.DataFrame:
    """The empirical ROC path cut into one unit step per record, for drawing which steps the
    intruder knows. Records are taken in rank order (score descending, diseased first among
    equal scores, as the unknown records of :class:`RocAttackResult`); a diseased record steps
    up by 1/P, a healthy one right by 1/N. Columns: ``fpr0, tpr0, fpr1, tpr1, known, status``
    and ``unknown_rank`` (0, 1, ... in rank order among the unknown records; -1 if known)."""
    values = checked_scores(np.asarray(scores), "score")
    labels = checked_status(status)
    flags = np.asarray(known, dtype=bool)
    order = np.lexsort((-labels, -values))
    labels, flags = labels[order], flags[order]
    positive, negative = int(labels.sum()), int(len(labels) - labels.sum())
    tp = np.concatenate([[0], np.cumsum(labels)]) / positive
    fp = np.concatenate([[0], np.cumsum(1 - labels)]) / negative
    unknown_rank = np.where(flags, -1, np.cumsum(~flags) - 1)
    return pd.DataFrame(
        {
            "fpr0": fp[:-1],
            "tpr0": tp[:-1],
            "fpr1": fp[1:],
            "tpr1": tp[1:],
            "known": flags,
            "status": labels,
            "unknown_rank": unknown_rank,
        }
    )
