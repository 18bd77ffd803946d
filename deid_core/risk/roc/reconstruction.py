"""Disclosure from a released ROC curve, and what thinning, rounding or smoothing it costs.

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

**The intruder's reconstruction.** The known records, grouped by distinct score
``v_1 > ... > v_L`` with ``a_j`` diseased and ``b_j`` healthy, are laid on the published path.
A published segment ``s`` (between consecutive points) holds a contiguous block of known groups
plus unknown records; with the full curve (one point per distinct score) a segment is a single
score, so it holds at most one known group and its other records are unknown records tied with
it, while a segment holding no known group is a new score strictly between two known ones. With
rounded points the cumulative counts ``TP_s`` and ``FP_s`` are only known to lie in the integer
intervals ``P (TPR_s -/+ 0.5 10^-d)`` (resp. ``N``). A *feasible configuration* is any
assignment of counts, known groups and unknown records to the segments that reproduces the
published curve; the true data are one of them. A forward-backward dynamic programme over the
states (point ``s``, known groups placed ``j``, ``TP_s``, ``FP_s``) finds every transition used
by some feasible configuration without enumerating them.

The ``m`` unknown records are reported in rank order (slot 1 = highest score; records with the
same score: diseased first), which is how the data owner pairs the reconstruction with the truth.
For slot ``i``:

- **status recovered**: the slot has the same status in every feasible configuration (then it
  is necessarily the true one);
- **location**: in a configuration the record is either tied with known score ``v_j`` or lies in
  the gap ``(v_{g+1}, v_g)`` between two consecutive known scores (``v_0 = +inf``,
  ``v_{L+1} = -inf``);
- **pinned to a single rank**: the location is the same in every feasible configuration, so its
  position among all ``n`` records is known (up to exact ties);
- **score interval**: the hull of its possible locations, ``(low, high)``: the open interval
  between the nearest known scores above and below, the degenerate ``[v, v]`` when the record is
  tied with a known score in every configuration (``tied``), with ``-inf``/``inf`` for an
  unbounded end (no known score below/above); an end coming from a tie is included.

Utility of the published curve: its AUC against the empirical AUC, and its shape against the
full empirical curve, both read as piecewise-linear paths: the maximum vertical distance
(vertical segments count at both ends) and the mean absolute vertical difference over FPR in
[0, 1], computed on a grid of 2,001 FPR values plus every vertex.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from deid_core.errors import DataError, RecipeError

#: Largest number of dynamic-programme cells the reconstruction will allocate.
MAX_STATES = 50_000_000
_SHAPE_GRID = 2001


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
        return _trapezoid(self.fpr, self.tpr)


def _trapezoid(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2.0))


def _as_scores(scores: Any, what: str = "score") -> np.ndarray:
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


def _as_status(status: Any) -> np.ndarray:
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
    values = _as_scores(scores)
    labels = _as_status(status)
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
        return _trapezoid(self.fpr, self.tpr)

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
        keep = np.union1d(np.arange(0, last + 1, every), [last])
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
    if decimals is not None and not (whole(decimals) and 0 <= decimals <= 12):
        raise RecipeError("ROC publication: 'decimals' must be a whole number from 0 to 12.")
    if not isinstance(binormal, bool | np.bool_):
        raise RecipeError("ROC publication: 'binormal' must be true or false.")
    if not (whole(grid) and grid >= 2):
        raise RecipeError("ROC publication: 'grid' must be a whole number, at least 2.")
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


# --------------------------------------------------------------------------- known records


def known_records(
    n: int,
    *,
    fraction: float | None = None,
    missing: int | None = None,
    flag: Any = None,
    seed: int | None = None,
) -> np.ndarray:
    """Which of ``n`` records the intruder knows (a boolean array): a random ``fraction`` of
    them (``round(fraction n)`` records), all but ``missing`` random ones, or the given boolean
    ``flag``. Exactly one of the three; ``seed`` fixes the random draw."""
    if sum(x is not None for x in (fraction, missing, flag)) != 1:
        raise DataError("Known records: give exactly one of fraction, missing or flag.")
    if not (isinstance(n, int | np.integer) and n >= 1):
        raise DataError("Known records: the number of records must be a whole number >= 1.")
    rng = np.random.default_rng(seed)
    if flag is not None:
        series = pd.Series(np.asarray(flag, dtype=object))
        if np.ndim(flag) != 1 or len(series) != n:
            raise DataError("Known records: the flag must have one entry per record.")
        if series.isna().any() or not series.isin([True, False]).all():
            raise DataError("Known records: the flag must be true/false (or 1/0) with no gaps.")
        return series.astype(bool).to_numpy()
    if fraction is not None:
        if not (isinstance(fraction, float | int | np.floating) and 0 <= fraction <= 1):
            raise DataError("Known records: the fraction must be a number from 0 to 1.")
        count = round(fraction * n)
    else:
        if not (isinstance(missing, int | np.integer) and 0 <= missing <= n):
            raise DataError("Known records: 'missing' must be a whole number from 0 to n.")
        count = n - int(missing)
    known = np.zeros(n, dtype=bool)
    known[rng.choice(n, size=count, replace=False)] = True
    return known


# --------------------------------------------------------------------------- reconstruction


@dataclass(frozen=True, eq=False)
class Reconstruction:
    """What the intruder learns about the ``m`` unknown records, in rank order (slot 0 = the
    highest score; equal scores: diseased first). See the module notes for the definitions.

    ``status[i]``: 1, 0, or -1 when not recovered; ``can_be_diseased``/``can_be_healthy``: the
    statuses slot i has in some feasible configuration; ``low``/``high``: its score interval
    (``-inf``/``inf`` = unbounded); ``pinned``: a single location in every configuration;
    ``tied``: tied with the known score ``low == high`` in every configuration.
    ``known_scores``: the distinct known scores ``v_1 > ... > v_L``.
    """

    status: np.ndarray
    can_be_diseased: np.ndarray
    can_be_healthy: np.ndarray
    low: np.ndarray
    high: np.ndarray
    pinned: np.ndarray
    tied: np.ndarray
    known_scores: np.ndarray

    @property
    def m(self) -> int:
        """Number of unknown records."""
        return len(self.status)

    @property
    def share_status_determined(self) -> float:
        return float(np.mean(self.status >= 0))

    @property
    def share_pinned(self) -> float:
        return float(np.mean(self.pinned))

    def to_frame(self) -> pd.DataFrame:
        """One row per unknown record (rank 1 = highest score)."""
        return pd.DataFrame(
            {
                "rank": np.arange(1, self.m + 1),
                "recovered_status": pd.array(
                    [None if s < 0 else int(s) for s in self.status], dtype="Int64"
                ),
                "interval_low": self.low,
                "interval_high": self.high,
                "width": self.high - self.low,
                "pinned": self.pinned,
                "tied_with_known": self.tied,
            }
        )


def reconstruct(published: PublishedRoc, known_scores: Any, known_status: Any) -> Reconstruction:
    """Reconstruct the records missing from ``known_scores``/``known_status`` using the
    ``published`` curve and its class sizes (see the module notes)."""
    scores = _as_scores(known_scores)
    labels = _as_status(known_status)
    if len(scores) != len(labels):
        raise DataError("ROC reconstruction: known scores and statuses differ in length.")
    if len(scores) == 0:
        raise DataError("ROC reconstruction: the intruder knows no records; nothing to align.")
    p, n = published.n_positive, published.n_negative
    missing_pos, missing_neg = p - int(labels.sum()), n - int(len(labels) - labels.sum())
    if missing_pos < 0 or missing_neg < 0:
        raise DataError(
            "ROC reconstruction: the known records hold more records of one class than the "
            "published curve."
        )
    if missing_pos + missing_neg == 0:
        raise DataError("ROC reconstruction: every record is known; nothing is missing.")
    distinct, inverse = np.unique(scores, return_inverse=True)
    a = np.bincount(inverse, weights=labels, minlength=len(distinct)).astype(np.int64)[::-1]
    b = np.bincount(inverse, minlength=len(distinct)).astype(np.int64)[::-1] - a
    single = published.all_thresholds
    can_d, can_h, code_min, code_max = _feasible_slots(
        published.count_bounds(), a, b, missing_pos, missing_neg, single
    )
    values = distinct[::-1].copy()
    above = np.concatenate([[np.inf], values])  # gap g lies below v_g (v_0 = +inf)
    below = np.concatenate([values, [-np.inf]])  # and above v_{g+1} (v_{L+1} = -inf)
    tied_value = np.concatenate([[np.nan], values])
    high = np.where(code_min % 2 == 1, tied_value[(code_min + 1) // 2], above[code_min // 2])
    low = np.where(code_max % 2 == 1, tied_value[(code_max + 1) // 2], below[code_max // 2])
    status = np.where(can_d & ~can_h, 1, np.where(can_h & ~can_d, 0, -1))
    pinned = code_min == code_max
    return Reconstruction(
        status=status,
        can_be_diseased=can_d,
        can_be_healthy=can_h,
        low=low,
        high=high,
        pinned=pinned,
        tied=pinned & (code_min % 2 == 1),
        known_scores=values,
    )


def _cum_or(x: np.ndarray) -> np.ndarray:
    """``out[j, T, F] = any(x[j, :T+1, :F+1])``."""
    return np.logical_or.accumulate(np.logical_or.accumulate(x, axis=1), axis=2)


def _reach(
    source: np.ndarray,
    origin: tuple[int, int],
    target: tuple[int, int, int, int],
    rows: np.ndarray,
    shift_a: np.ndarray,
    shift_b: np.ndarray,
    strict: bool,
) -> np.ndarray:
    """For each row r: ``out[r, T, F]`` = some ``(T', F') <= (T - shift_a[r], F - shift_b[r])``
    is set in ``source[rows[r]]`` (and, when ``strict``, ``(T', F') != (T, F)``); ``origin`` is
    the source window's lowest (T, F), ``target`` the target window as (T lo, F lo, width T,
    width F)."""
    cum = _cum_or(source)
    t = target[0] + np.arange(target[2])
    f = target[1] + np.arange(target[3])
    high_t, high_f = source.shape[1] - 1, source.shape[2] - 1

    def pick(dt: np.ndarray, df: np.ndarray) -> np.ndarray:
        it = t[None, :] - dt[:, None] - origin[0]
        jf = f[None, :] - df[:, None] - origin[1]
        value = cum[
            rows[:, None, None],
            np.clip(it, 0, high_t)[:, :, None],
            np.clip(jf, 0, high_f)[:, None, :],
        ]
        return value & (it >= 0)[:, :, None] & (jf >= 0)[:, None, :]

    if strict:
        return pick(shift_a + 1, shift_b) | pick(shift_a, shift_b + 1)
    return pick(shift_a, shift_b)


def _feasible_slots(
    bounds: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    a: np.ndarray,
    b: np.ndarray,
    missing_pos: int,
    missing_neg: int,
    single: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Forward-backward dynamic programme over states (point s, groups placed j, TP, FP).

    Returns, per unknown slot: can be diseased, can be healthy, smallest and largest location
    code (``2g`` = gap g below v_g, ``2j - 1`` = tied with v_j) over all feasible
    configurations."""
    tp_lo, tp_hi, fp_lo, fp_hi = bounds
    segments = len(tp_lo) - 1
    groups = len(a)
    cum_a = np.concatenate([[0], np.cumsum(a)])
    cum_b = np.concatenate([[0], np.cumsum(b)])
    width_t, width_f = tp_hi - tp_lo + 1, fp_hi - fp_lo + 1
    cells = int(np.sum(width_t * width_f)) * (groups + 1)
    if cells > MAX_STATES:
        raise DataError(
            "ROC reconstruction: too many possibilities to compute exactly for this curve and "
            f"data size ({cells:,} states, limit {MAX_STATES:,}; with every threshold the "
            "states grow as the square of the number of records, so about 7,000 records is the "
            "most); audit a random subsample of the records, or a coarser curve."
        )
    j_all = np.arange(groups + 1)

    def valid(s: int) -> np.ndarray:
        """States allowed by the class sizes: unknown counts so far within [0, missing]."""
        t = tp_lo[s] + np.arange(width_t[s])
        f = fp_lo[s] + np.arange(width_f[s])
        ut = t[None, :] - cum_a[:, None]
        uf = f[None, :] - cum_b[:, None]
        ok_t = (ut >= 0) & (ut <= missing_pos)
        ok_f = (uf >= 0) & (uf <= missing_neg)
        return ok_t[:, :, None] & ok_f[:, None, :]

    def blocks(s: int) -> range:
        """Numbers of known groups a segment ending at point s may hold (0, 1, ...)."""
        if single:
            return range(2)
        reach_t = np.searchsorted(cum_a, cum_a + (tp_hi[s] - tp_lo[s - 1]), side="right")
        reach_f = np.searchsorted(cum_b, cum_b + (fp_hi[s] - fp_lo[s - 1]), side="right")
        return range(int(np.max(np.minimum(reach_t, reach_f) - j_all)))

    forward = [np.zeros((groups + 1, 1, 1), dtype=bool)]
    forward[0][0, 0, 0] = True
    for s in range(1, segments + 1):
        out = np.zeros((groups + 1, width_t[s], width_f[s]), dtype=bool)
        target = (tp_lo[s], fp_lo[s], width_t[s], width_f[s])
        for delta in blocks(s):
            rows = j_all[: groups + 1 - delta]
            shift_a, shift_b = cum_a[rows + delta] - cum_a[rows], cum_b[rows + delta] - cum_b[rows]
            origin = (tp_lo[s - 1], fp_lo[s - 1])
            out[delta:] |= _reach(
                forward[s - 1], origin, target, rows, shift_a, shift_b, delta == 0
            )
        forward.append(out & valid(s))
    if not forward[segments][groups, 0, 0]:
        raise DataError(
            "ROC reconstruction: the known records cannot be laid on the published curve; "
            "they do not come from the data behind it."
        )

    m = missing_pos + missing_neg
    diseased = np.zeros(m + 1, dtype=np.int64)
    healthy = np.zeros(m + 1, dtype=np.int64)
    code_min = np.full(m, 2 * groups + 2, dtype=np.int64)
    code_max = np.full(m, -1, dtype=np.int64)
    backward = forward[segments] & False
    backward[groups, 0, 0] = True
    for s in range(segments, 0, -1):
        # Backward reach in flipped coordinates: (T, F) -> (-T, -F) turns ">=" into "<=".
        flipped = backward[:, ::-1, ::-1]
        prev = forward[s - 1]
        reach = np.zeros_like(prev)
        for delta in blocks(s):
            rows = j_all[delta:]
            shift_a, shift_b = cum_a[rows] - cum_a[rows - delta], cum_b[rows] - cum_b[rows - delta]
            target = (-tp_hi[s - 1], -fp_hi[s - 1], prev.shape[1], prev.shape[2])
            origin = (-tp_hi[s], -fp_hi[s])
            got = _reach(flipped, origin, target, rows, shift_a, shift_b, delta == 0)
            reach[: groups + 1 - delta] |= got[:, ::-1, ::-1]
        prev_ok = prev & reach
        _emit(
            prev_ok,
            backward,
            s,
            bounds,
            cum_a,
            cum_b,
            single,
            blocks(s),
            (diseased, healthy, code_min, code_max),
        )
        backward = prev_ok
    return (
        np.cumsum(diseased)[:m] > 0,
        np.cumsum(healthy)[:m] > 0,
        code_min,
        code_max,
    )


def _emit(
    prev_ok: np.ndarray,
    next_ok: np.ndarray,
    s: int,
    bounds: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    cum_a: np.ndarray,
    cum_b: np.ndarray,
    single: bool,
    blocks: range,
    into: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> None:
    """Record the unknown slots filled by every feasible transition from point s - 1 to s."""
    diseased, healthy, code_min, code_max = into
    tp_lo, _, fp_lo, _ = bounds
    tp = tp_lo[s - 1] + np.arange(prev_ok.shape[1])
    fp = fp_lo[s - 1] + np.arange(prev_ok.shape[2])
    t_next = tp_lo[s] + np.arange(next_ok.shape[1])
    f_next = fp_lo[s] + np.arange(next_ok.shape[2])
    gain_t = t_next[None, None, :, None] - tp[:, None, None, None]
    gain_f = f_next[None, None, None, :] - fp[None, :, None, None]
    live_prev = np.flatnonzero(prev_ok.any(axis=(1, 2)))
    live_next = set(np.flatnonzero(next_ok.any(axis=(1, 2))).tolist())
    for j in live_prev.tolist():
        for delta in blocks:
            if j + delta not in live_next:
                continue
            da, db = cum_a[j + delta] - cum_a[j], cum_b[j + delta] - cum_b[j]
            ok = prev_ok[j][:, :, None, None] & next_ok[j + delta][None, None, :, :]
            ok &= (gain_t >= da) & (gain_f >= db) & (gain_t + gain_f >= 1)
            if not ok.any():
                continue
            i_t, i_f, n_t, n_f = np.nonzero(ok)
            start = tp[i_t] + fp[i_f] - cum_a[j] - cum_b[j]
            x = t_next[n_t] - tp[i_t] - da
            y = f_next[n_f] - fp[i_f] - db
            end = start + x + y
            if single:
                np.add.at(diseased, start, 1)
                np.add.at(diseased, start + x, -1)
                np.add.at(healthy, start + x, 1)
                np.add.at(healthy, end, -1)
                low_code = high_code = 2 * j + delta
            else:
                np.add.at(diseased, start[x > 0], 1)
                np.add.at(diseased, end[x > 0], -1)
                np.add.at(healthy, start[y > 0], 1)
                np.add.at(healthy, end[y > 0], -1)
                low_code, high_code = 2 * j, 2 * (j + delta)
            used = end > start
            if not used.any():
                continue
            first, last = int(start[used].min()), int(end[used].max())
            cover = np.zeros(last - first + 1, dtype=np.int64)
            np.add.at(cover, start[used] - first, 1)
            np.add.at(cover, end[used] - first, -1)
            hit = np.flatnonzero(np.cumsum(cover)[:-1] > 0) + first
            code_min[hit] = np.minimum(code_min[hit], low_code)
            code_max[hit] = np.maximum(code_max[hit], high_code)


# --------------------------------------------------------------------------- attack and cost


def _envelopes(fpr: np.ndarray, tpr: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, ...]:
    """The path's TPR at each FPR in ``at``: top and bottom of any vertical segment there."""
    top = np.interp(at, fpr, tpr)  # np.interp takes the last of repeated x: the top
    bottom = -np.interp(-at, -fpr[::-1], -tpr[::-1])
    return top, bottom


@dataclass(frozen=True)
class RocUtility:
    """How the published curve differs from the full empirical one (see the module notes)."""

    auc_empirical: float
    auc_published: float
    max_vertical_distance: float
    mean_abs_difference: float

    @property
    def auc_change(self) -> float:
        """Published minus empirical AUC."""
        return self.auc_published - self.auc_empirical

    @property
    def utility(self) -> float:
        """``1 - |AUC change|`` (1 = the AUC is unchanged)."""
        return 1.0 - abs(self.auc_change)

    def to_dict(self) -> dict[str, float]:
        return {
            "auc_empirical": self.auc_empirical,
            "auc_published": self.auc_published,
            "auc_change": self.auc_change,
            "utility": self.utility,
            "max_vertical_distance": self.max_vertical_distance,
            "mean_abs_difference": self.mean_abs_difference,
        }


def roc_utility(curve: RocCurve, published: PublishedRoc) -> RocUtility:
    """AUC change and shape distances of ``published`` against the empirical ``curve``."""
    at = np.unique(np.concatenate([np.linspace(0, 1, _SHAPE_GRID), curve.fpr, published.fpr]))
    emp_top, emp_bottom = _envelopes(curve.fpr, curve.tpr, at)
    pub_top, pub_bottom = _envelopes(published.fpr, published.tpr, at)
    gap = np.abs(pub_top - emp_top)
    return RocUtility(
        auc_empirical=curve.auc,
        auc_published=published.auc,
        max_vertical_distance=float(max(gap.max(), np.abs(pub_bottom - emp_bottom).max())),
        mean_abs_difference=_trapezoid(at, gap),
    )


@dataclass(frozen=True, eq=False)
class RocAttackResult:
    """The reconstruction of the unknown records from a published curve, beside the truth.

    The unknown records are paired with the reconstruction in rank order (score descending,
    diseased first among equal scores). ``share_status_recovered``: share of unknown records
    whose status is recovered (always the true one); ``share_pinned``: share pinned to a single
    rank. Risk for an R-U view: either share; utility: :attr:`RocUtility.utility` or a shape
    distance.
    """

    published: PublishedRoc
    reconstruction: Reconstruction
    true_score: np.ndarray
    true_status: np.ndarray
    utility: RocUtility
    n: int

    @property
    def m(self) -> int:
        return self.reconstruction.m

    @property
    def share_status_recovered(self) -> float:
        return float(np.mean(self.reconstruction.status == self.true_status))

    @property
    def share_pinned(self) -> float:
        return self.reconstruction.share_pinned

    @property
    def mean_finite_width(self) -> float | None:
        """Mean width of the bounded score intervals (None if none is bounded)."""
        width = self.reconstruction.high - self.reconstruction.low
        finite = width[np.isfinite(width)]
        return float(finite.mean()) if len(finite) else None

    def to_frame(self) -> pd.DataFrame:
        """One row per unknown record: the truth, then the reconstruction."""
        frame = self.reconstruction.to_frame()
        frame.insert(1, "true_score", self.true_score)
        frame.insert(2, "true_status", self.true_status)
        frame["score_in_interval"] = (self.true_score >= frame["interval_low"]) & (
            self.true_score <= frame["interval_high"]
        )
        return frame

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: unbounded interval ends and unrecovered statuses are ``None``."""

        def end(value: float) -> float | None:
            return float(value) if math.isfinite(value) else None

        records = [
            {
                "rank": int(row["rank"]),
                "true_score": float(row["true_score"]),
                "true_status": int(row["true_status"]),
                "recovered_status": None
                if pd.isna(row["recovered_status"])
                else int(row["recovered_status"]),
                "interval_low": end(row["interval_low"]),
                "interval_high": end(row["interval_high"]),
                "width": end(row["width"]),
                "pinned": bool(row["pinned"]),
                "tied_with_known": bool(row["tied_with_known"]),
            }
            for row in self.to_frame().to_dict("records")
        ]
        return {
            "published": self.published.description,
            "n_records": self.n,
            "n_unknown": self.m,
            "n_positive": self.published.n_positive,
            "n_negative": self.published.n_negative,
            "share_status_recovered": self.share_status_recovered,
            "share_pinned": self.share_pinned,
            "mean_finite_width": self.mean_finite_width,
            "utility": self.utility.to_dict(),
            "records": records,
        }

    def __str__(self) -> str:
        return (
            f"ROC curve published as {self.published.description}: of {self.m:,} unknown "
            f"records, {self.share_status_recovered:.0%} have their status recovered and "
            f"{self.share_pinned:.0%} are pinned to a single rank; AUC "
            f"{self.utility.auc_published:.4f} (empirical {self.utility.auc_empirical:.4f})."
        )


def _columns(frame: pd.DataFrame, score: str, status: str, known: Any) -> tuple[np.ndarray, ...]:
    for column in (score, status):
        if column not in frame.columns:
            raise DataError(f"ROC attack: the data have no column '{column}'.")
    if score == status:
        raise DataError("ROC attack: the score and the status must be different columns.")
    scores = _as_scores(frame[score].to_numpy(copy=True))
    labels = _as_status(frame[status].to_numpy(copy=True))
    flags = np.asarray(known)
    if flags.shape != (len(frame),) or flags.dtype != bool:
        raise DataError("ROC attack: 'known' must be a true/false array with one entry per record.")
    if not flags.any():
        raise DataError("ROC attack: the intruder knows no records; mark some as known.")
    if flags.all():
        raise DataError("ROC attack: every record is known; leave at least one unknown.")
    return scores, labels, flags


def roc_attack(
    frame: pd.DataFrame,
    score: str,
    status: str,
    known: np.ndarray,
    *,
    every: int | None = None,
    quantiles: int | None = None,
    decimals: int | None = None,
    binormal: bool = False,
    grid: int = 101,
) -> RocAttackResult:
    """Publish the ROC curve of ``score`` against ``status`` (with the given mitigation, see
    :func:`publish_roc`), let an intruder who knows the records flagged in ``known`` reconstruct
    the others, and compare with the truth. ``frame`` is not modified."""
    scores, labels, flags = _columns(frame, score, status, known)
    curve = empirical_roc(scores, labels)
    published = publish_roc(
        curve, every=every, quantiles=quantiles, decimals=decimals, binormal=binormal, grid=grid
    )
    rebuilt = reconstruct(published, scores[flags], labels[flags])
    order = np.lexsort((-labels[~flags], -scores[~flags]))
    return RocAttackResult(
        published=published,
        reconstruction=rebuilt,
        true_score=scores[~flags][order],
        true_status=labels[~flags][order],
        utility=roc_utility(curve, published),
        n=len(frame),
    )


def mitigation_sweep(
    frame: pd.DataFrame,
    score: str,
    status: str,
    known: np.ndarray,
    options: Sequence[dict[str, Any]],
) -> pd.DataFrame:
    """One row per publication option (keyword arguments of :func:`publish_roc`, ``{}`` = the
    full curve) with its risk (shares recovered and pinned) and utility figures, for an R-U
    view of this summary."""
    rows = []
    for option in options:
        result = roc_attack(frame, score, status, known, **option)
        rows.append(
            {
                "published": result.published.description,
                **{key: option.get(key) for key in ("every", "quantiles", "decimals")},
                "binormal": bool(option.get("binormal", False)),
                "share_status_recovered": result.share_status_recovered,
                "share_pinned": result.share_pinned,
                "mean_finite_width": result.mean_finite_width,
                **result.utility.to_dict(),
            }
        )
    return pd.DataFrame(rows)


def path_segments(scores: Any, status: Any, known: Any) -> pd.DataFrame:
    """The empirical ROC path cut into one unit step per record, for drawing which steps the
    intruder knows. Records are taken in rank order (score descending, diseased first among
    equal scores, as the unknown records of :class:`RocAttackResult`); a diseased record steps
    up by 1/P, a healthy one right by 1/N. Columns: ``fpr0, tpr0, fpr1, tpr1, known, status``
    and ``unknown_rank`` (0, 1, ... in rank order among the unknown records; -1 if known)."""
    values = _as_scores(np.asarray(scores), "score")
    labels = _as_status(status)
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
