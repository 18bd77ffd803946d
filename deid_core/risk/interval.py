"""Interval disclosure of perturbed numeric values: sdcMicro's ``dRisk``.

An intruder who sees a perturbed (noisy, smoothed, microaggregated) value learns that the true
value lies near it. sdcMicro's ``dRisk`` (Templ; the SDID method of Mateo-Sanz, Sebe and
Domingo-Ferrer 2004, "Outlier protection in continuous microdata masking") builds an interval
around each released value and counts the records whose original values fall inside:

    sd_j      = standard deviation of the released (masked) column j (n - 1 denominator,
                missing values left out);
    record i is disclosed when, for every column j, x_ij lies in [m_ij - k sd_j, m_ij + k sd_j]
                (bounds included);
    dRisk     = (disclosed records) / n,

with ``k = 0.05`` by default (sdcMicro's ``dRiskWORK``; the documentation calls k "percentage
of the standard deviation"). A comparison involving a missing value (original or released) does
not count as outside the interval, as sdcMicro's ``rowSums(..., na.rm = TRUE)`` does.

Older sdcMicro releases (before the 5.x series) counted a record as disclosed when at most one
of its values fell outside its interval; the current definition, implemented here, needs all of
them inside. dRisk is a share of records whose values are pinned down, not a probability of
re-identification; :mod:`deid_core.risk.judged` says how it enters the judged risk.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from deid_core.errors import DataError

#: sdcMicro's default interval half-width, as a multiple of the released column's SD.
DEFAULT_INTERVAL_K = 0.05


@dataclass(frozen=True)
class IntervalDisclosure:
    """sdcMicro's dRisk: the share of records whose original values all lie within
    ``k`` x SD of their released values (see the module notes)."""

    columns: tuple[str, ...]
    k: float
    n_records: int
    share: float
    sd: dict[str, float]
    within: np.ndarray = field(repr=False, compare=False)

    @property
    def disclosed(self) -> int:
        """Number of records whose original values all lie in their intervals."""
        return int(self.within.sum())

    def to_dict(self) -> dict[str, object]:
        return {
            "columns": list(self.columns),
            "k": self.k,
            "share": self.share,
            "disclosed": self.disclosed,
            "sd": dict(self.sd),
        }

    def __str__(self) -> str:
        return (
            f"Interval disclosure (sdcMicro dRisk, k = {self.k:g}) on "
            f"{', '.join(self.columns)}: {self.share:.4f} ({self.disclosed:,} of "
            f"{self.n_records:,} records have every original value within k x SD of the "
            "released one)"
        )


def _numeric(frame: pd.DataFrame, column: str, which: str) -> np.ndarray:
    series = frame[column]
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
        raise DataError(f"Interval disclosure: the {which} column '{column}' must be numeric.")
    values = series.to_numpy(dtype="float64", na_value=np.nan).copy()
    values[~np.isfinite(values)] = np.nan
    return values


def interval_disclosure(
    original: pd.DataFrame,
    released: pd.DataFrame,
    columns: Sequence[str],
    k: float = DEFAULT_INTERVAL_K,
) -> IntervalDisclosure:
    """sdcMicro's ``dRisk(original, xm = released, k)`` on ``columns`` (row i of both tables is
    the same record). Infinite values count as missing."""
    columns = tuple(columns)
    if not columns:
        raise DataError("Interval disclosure needs at least one numeric column.")
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not math.isfinite(k) or k <= 0:
        raise DataError("Interval disclosure: k must be a positive number.")
    for which, frame in (("original", original), ("released", released)):
        absent = [c for c in columns if c not in frame.columns]
        if absent:
            listed = ", ".join(f"'{c}'" for c in absent)
            raise DataError(f"Interval disclosure: the {which} data have no column(s) {listed}.")
    if len(original) != len(released):
        raise DataError(
            "Interval disclosure: the original and released data must have the same records "
            "(one released row per original row)."
        )
    n = len(original)
    if n == 0:
        raise DataError("Interval disclosure: there are no records.")
    outside = np.zeros(n, dtype=bool)
    sds: dict[str, float] = {}
    for column in columns:
        x = _numeric(original, column, "original")
        m = _numeric(released, column, "released")
        observed = m[~np.isnan(m)]
        sd = float(np.std(observed, ddof=1)) if observed.size > 1 else float("nan")
        sds[column] = sd
        if not math.isfinite(sd):
            continue  # no interval can be built: sdcMicro's comparisons are NA, never outside
        with np.errstate(invalid="ignore"):
            outside |= (x < m - k * sd) | (x > m + k * sd)  # NaN compares False: not outside
    within = ~outside
    return IntervalDisclosure(
        columns=columns,
        k=float(k),
        n_records=n,
        share=float(within.mean()),
        sd=sds,
        within=within,
    )


__all__ = ["DEFAULT_INTERVAL_K", "IntervalDisclosure", "interval_disclosure"]
