"""Interval grouping (stratification) and top/bottom coding.

Grouping replaces a value by its interval: the label, the midpoint, or the mean of the values
that fall in the interval (Cologne et al. 2012 released the mean of the source values in each
dose group, Table 2 note b). It gives Berkson-type error.

Intervals of a fixed width are the cells of the decimal grid ``origin + n * width`` (see
:mod:`deid_core.masking.decimal_grid` for the rule): a value on a bound opens its interval,
the bounds and midpoints are exact, and every distinct interval has a distinct label whose
bounds are the shortest decimals that read back as the bounds' floats (``[1234561,
1234562)``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from deid_core.errors import RecipeError
from deid_core.masking.base import (
    NUMBERS,
    MaskingStep,
    number_text,
    numeric_values,
    require_finite,
    restore_integer_dtype,
)
from deid_core.masking.decimal_grid import Cells, DecimalGrid, nearest_float, written

RELEASE_FORMS = ("label", "midpoint", "mean")


def nice_widths(series: pd.Series) -> list[float]:
    """About eight 1-2-5 widths spanning 1/100 to 1/2 of the observed range."""
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    values = values[np.isfinite(values)]
    span = float(values.max() - values.min()) if values.size else 0.0
    if span <= 0:
        return [1.0]
    widths = []
    for exponent in range(math.floor(math.log10(span / 100)), math.ceil(math.log10(span)) + 1):
        for mantissa in (1, 2, 5):
            width = mantissa * 10.0**exponent
            if span / 100 <= width <= span / 2:
                widths.append(float(f"{width:.12g}"))
    return widths or [float(f"{span / 10:.2g}")]


@dataclass(frozen=True)
class IntervalGroup(MaskingStep):
    """Group values into intervals [lower, upper) of a fixed width from an origin, or between
    explicit break points, and release the interval's label, midpoint or mean."""

    width: float | None = None
    origin: float = 0.0
    breaks: tuple[float, ...] | None = None
    release: str = "midpoint"

    method: ClassVar[str] = "interval_group"
    takes: ClassVar[str] = NUMBERS
    label: ClassVar[str] = "Interval grouping"
    sweep_parameter: ClassVar[str | None] = "width"

    @property
    def elementwise(self) -> bool:
        return self.release == "label" or (self.release == "midpoint" and self.width is not None)

    def __post_init__(self) -> None:
        if self.breaks is not None and not isinstance(self.breaks, tuple):
            object.__setattr__(self, "breaks", tuple(self.breaks))
        super().__post_init__()

    def _validate(self) -> None:
        if (self.width is None) == (self.breaks is None):
            raise RecipeError(f"{self.label}: give either an interval width or break points.")
        if self.width is not None:
            require_finite(self.width, "width", self.label, positive=True)
        require_finite(self.origin, "origin", self.label)
        if self.breaks is not None:
            cuts = [require_finite(b, "break point", self.label) for b in self.breaks]
            if not cuts:
                raise RecipeError(f"{self.label}: give at least one break point.")
            if any(later <= earlier for earlier, later in itertools.pairwise(cuts)):
                raise RecipeError(f"{self.label}: break points must be strictly increasing.")
        if self.release not in RELEASE_FORMS:
            raise RecipeError(
                f"{self.label}: release must be one of {', '.join(RELEASE_FORMS)}, "
                f"not '{self.release}'."
            )

    def intervals(self, values: np.ndarray) -> Cells:
        """Per value: its interval ``[lower, upper)`` and the interval's midpoint ``middle``.

        A missing value has NaN bounds. Open-ended intervals of break-point grouping have an
        infinite bound and no midpoint (NaN).
        """
        values = np.asarray(values, dtype="float64")
        if self.width is not None:
            return DecimalGrid.of(self.width, self.origin).cells(values)
        finite = np.isfinite(values)
        cuts = np.asarray(self.breaks, dtype="float64") + 0.0
        index = np.searchsorted(cuts, values, side="right")
        edges = np.concatenate([[-np.inf], cuts, [np.inf]])
        middles = np.array([np.nan, *_exact_middles(self.breaks or ()), np.nan])
        return Cells(
            np.where(finite, edges[index], np.nan),
            np.where(finite, edges[index + 1], np.nan),
            np.where(finite, middles[index], np.nan),
        )

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        values = numeric_values(series, self.column, self.label)
        cells = self.intervals(values)
        finite = np.isfinite(values)
        if self.release == "label":
            labels = _labels(cells.lower, cells.upper)
            return pd.Series(labels, index=series.index, name=series.name, dtype="object")
        out = cells.middle if self.release == "midpoint" else np.full(values.shape, np.nan)
        # Open-ended intervals have no midpoint: release the mean of their values instead.
        needs_mean = finite & ~np.isfinite(out)
        if needs_mean.any():
            out[needs_mean] = _group_means(values[finite], cells.lower[finite])[needs_mean[finite]]
        return restore_integer_dtype(series, out)

    def describe(self) -> str:
        released = {"label": "interval labels", "midpoint": "midpoints", "mean": "interval means"}
        if self.width is not None:
            how = f"intervals of width {number_text(self.width)} from {number_text(self.origin)}"
        else:
            how = "intervals cut at " + ", ".join(number_text(b) for b in self.breaks or ())
        return f"{self.column}: grouped into {how}, released as {released[self.release]}"

    def sweep_values(self, series: pd.Series) -> list[Any]:
        return nice_widths(series) if self.width is not None else []


def _exact_middles(breaks: tuple[float, ...]) -> list[float]:
    """The midpoints of the closed intervals between break points, from their decimals."""
    return [
        nearest_float((written(low) + written(high)) / 2) + 0.0
        for low, high in itertools.pairwise(breaks)
    ]


def _labels(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """``[lower, upper)``, ``<upper`` or ``>=lower`` per value (None where missing), made once
    per distinct interval."""
    labels = np.full(lower.shape, None, dtype=object)
    present = ~np.isnan(lower)
    bounds, first, codes = np.unique(lower[present], return_index=True, return_inverse=True)
    uppers = upper[present][first]
    texts = [
        _interval_label(lo, hi) for lo, hi in zip(bounds.tolist(), uppers.tolist(), strict=True)
    ]
    labels[present] = np.array(texts, dtype=object)[codes]
    return labels


def _interval_label(lower: float, upper: float) -> str:
    if lower == -math.inf:
        return f"<{number_text(upper)}"
    if upper == math.inf:
        return f">={number_text(lower)}"
    return f"[{number_text(lower)}, {number_text(upper)})"


def _group_means(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Per value, the mean of the values of its group (pandas' compensated sum), kept within
    the group's smallest and largest value (so that equal values give back exactly that
    value)."""
    codes, _ = pd.factorize(groups)
    grouped = pd.Series(values).groupby(codes)
    means = np.clip(grouped.mean().to_numpy(), grouped.min().to_numpy(), grouped.max().to_numpy())
    return means[codes]


@dataclass(frozen=True)
class TopBottomCode(MaskingStep):
    """Replace values above ``top`` by ``top`` and below ``bottom`` by ``bottom``
    (e.g. every age over 90 released as 90)."""

    top: float | None = None
    bottom: float | None = None

    method: ClassVar[str] = "top_bottom_code"
    takes: ClassVar[str] = NUMBERS
    label: ClassVar[str] = "Top/bottom coding"
    sweep_parameter: ClassVar[str | None] = "top"
    _ELEMENTWISE: ClassVar[bool] = True

    def _validate(self) -> None:
        if self.top is None and self.bottom is None:
            raise RecipeError(f"{self.label}: give a top cut, a bottom cut, or both.")
        if self.top is not None:
            require_finite(self.top, "top", self.label)
        if self.bottom is not None:
            require_finite(self.bottom, "bottom", self.label)
        if self.top is not None and self.bottom is not None and self.bottom >= self.top:
            raise RecipeError(f"{self.label}: the bottom cut must be below the top cut.")

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        values = numeric_values(series, self.column, self.label)
        out = values.copy()
        if self.top is not None:
            out[values > self.top] = self.top
        if self.bottom is not None:
            out[values < self.bottom] = self.bottom
        return restore_integer_dtype(series, out)

    def describe(self) -> str:
        parts = []
        if self.top is not None:
            parts.append(f"values above {number_text(self.top)} set to {number_text(self.top)}")
        if self.bottom is not None:
            parts.append(
                f"values below {number_text(self.bottom)} set to {number_text(self.bottom)}"
            )
        return f"{self.column}: " + "; ".join(parts)

    def sweep_values(self, series: pd.Series) -> list[Any]:
        if self.top is None:
            return []
        values = pd.to_numeric(series, errors="coerce").dropna()
        quantiles = values.quantile([0.999, 0.99, 0.975, 0.95, 0.9, 0.75]).to_numpy()
        return sorted({float(f"{q:.3g}") for q in quantiles}, reverse=True)
