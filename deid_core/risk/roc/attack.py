"""The ROC release audit: publish a curve (optionally mitigated), let the intruder reconstruct
the records it does not know, compare with the truth, and weigh what the mitigation costs.

Which records the intruder knows: :func:`known_records`. The attack: :func:`roc_attack`, whose
:class:`RocAttackResult` pairs the reconstruction with the truth. Mitigations side by side:
:func:`mitigation_sweep`.

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

from deid_core.errors import DataError
from deid_core.risk.roc.curve import (
    PublishedRoc,
    RocCurve,
    checked_scores,
    checked_status,
    empirical_roc,
    publish_roc,
    trapezoid_area,
)
from deid_core.risk.roc.reconstruction import Reconstruction, reconstruct

_SHAPE_GRID = 2001


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


def audit_sample(status: Any, size: int, seed: int | None = None) -> np.ndarray:
    """The positions (in file order) of ``size`` records drawn for the audit of a large file,
    stratified by ``status``: each status gets its share of the sample, ``size x count / n``
    rounded by the largest remainder, and at least one record when the file has it. A simple
    random sample can miss the cases altogether, and then there is no curve to audit: 500
    records of the 16,000-person demo (85 cases) hold none in about 7% of draws. A ``size`` of
    at least the number of records gives them all; ``seed`` fixes the draw."""
    values = np.asarray(status, dtype=object)
    n = len(values)
    if not (isinstance(size, int | np.integer) and size >= 1):
        raise DataError("Audit sample: the number of records must be a whole number >= 1.")
    if size >= n:
        return np.arange(n)
    codes, _ = pd.factorize(values, use_na_sentinel=False)
    counts = np.bincount(codes)
    quota = counts * size / n
    take = np.floor(quota).astype(np.int64)
    if size >= len(counts):
        take = np.maximum(take, 1)  # every status present, when the sample is large enough
    remainder = quota - take
    while take.sum() < size:  # the largest remainders get one more each (take < count)
        room = np.flatnonzero(take < counts)
        code = room[np.argmax(remainder[room])]
        take[code] += 1
        remainder[code] = -np.inf
    while take.sum() > size:  # a status raised to one: the most over its share gives one back
        over = np.where(take > 1, take - quota, -np.inf)
        take[np.argmax(over)] -= 1
    rng = np.random.default_rng(seed)
    chosen = [
        rng.choice(np.flatnonzero(codes == code), size=int(k), replace=False)
        for code, k in enumerate(take)
        if k > 0
    ]
    return np.sort(np.concatenate(chosen))


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
        mean_abs_difference=trapezoid_area(at, gap),
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
    scores = checked_scores(frame[score].to_numpy(copy=True))
    labels = checked_status(frame[status].to_numpy(copy=True))
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
