"""Interval grouping (stratification) and top/bottom coding.

Grouping replaces a value by its interval: the label, the midpoint, or the mean of the values
that fall in the interval (Cologne et al. 2012 released the mean of the source values in each
dose group, Table 2 note b). It gives Berkson-type error.
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
    MaskingStep,
    numeric_values,
    require_finite,
    restore_integer_dtype,
)

RELEASE_FORMS = ("label", "midpoint", "mean")


def _fmt(value: float) -> str:
    return f"{value:g}"


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

    def intervals(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per value: (interval index, lower bound, upper bound); a missing value gets index -1
        (meaningless: test for missing values, not for the index) and NaN bounds.

        Open-ended intervals of break-point grouping have an infinite bound.
        """
        finite = np.isfinite(values)
        if self.width is not None:
            width = float(self.width)
            # Float interval numbers: exact up to 2**53 and never overflowing (an int64 cast
            # wrapped values beyond 2**63 widths from the origin to a wrong sign).
            index = np.full(values.shape, -1.0)
            position = np.round((values[finite] - self.origin) / width, 9)
            index[finite] = np.floor(position)
            lower = np.where(finite, self.origin + index * width, np.nan)
            upper = lower + width
            return index, np.round(lower, 12), np.round(upper, 12)
        cuts = np.asarray(self.breaks, dtype="float64")
        index = np.full(values.shape, -1, dtype="int64")
        index[finite] = np.searchsorted(cuts, values[finite], side="right")
        edges = np.concatenate([[-np.inf], cuts, [np.inf]])
        safe = np.clip(index, 0, len(cuts))
        lower = np.where(finite, edges[safe], np.nan)
        upper = np.where(finite, edges[safe + 1], np.nan)
        return index, lower, upper

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        values = numeric_values(series, self.column, self.label)
        index, lower, upper = self.intervals(values)
        finite = np.isfinite(values)
        if self.release == "label":
            labels = np.full(values.shape, None, dtype=object)
            labels[finite] = [
                _interval_label(lo, hi) for lo, hi in zip(lower[finite], upper[finite], strict=True)
            ]
            return pd.Series(labels, index=series.index, name=series.name, dtype="object")
        out = np.full(values.shape, np.nan)
        if self.release == "midpoint":
            out[finite] = np.round((lower[finite] + upper[finite]) / 2, 12)
        # Open-ended intervals have no midpoint: release the mean of their values instead.
        needs_mean = finite & ~np.isfinite(out)
        if needs_mean.any():
            group_mean = pd.Series(values[finite]).groupby(index[finite]).transform("mean")
            out[needs_mean] = group_mean.to_numpy()[needs_mean[finite]]
        return restore_integer_dtype(series, out)

    def describe(self) -> str:
        released = {"label": "interval labels", "midpoint": "midpoints", "mean": "interval means"}
        if self.width is not None:
            how = f"intervals of width {self.width:g} from {self.origin:g}"
        else:
            how = "intervals cut at " + ", ".join(_fmt(b) for b in self.breaks or ())
        return f"{self.column}: grouped into {how}, released as {released[self.release]}"

    def sweep_values(self, series: pd.Series) -> list[Any]:
        return nice_widths(series) if self.width is not None else []


def _interval_label(lower: float, upper: float) -> str:
    if np.isinf(lower):
        return f"<{_fmt(upper)}"
    if np.isinf(upper):
        return f">={_fmt(lower)}"
    return f"[{_fmt(lower)}, {_fmt(upper)})"


@dataclass(frozen=True)
class TopBottomCode(MaskingStep):
    """Replace values above ``top`` by ``top`` and below ``bottom`` by ``bottom``
    (e.g. every age over 90 released as 90)."""

    top: float | None = None
    bottom: float | None = None

    method: ClassVar[str] = "top_bottom_code"
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
            parts.append(f"values above {self.top:g} set to {self.top:g}")
        if self.bottom is not None:
            parts.append(f"values below {self.bottom:g} set to {self.bottom:g}")
        return f"{self.column}: " + "; ".join(parts)

    def sweep_values(self, series: pd.Series) -> list[Any]:
        if self.top is None:
            return []
        values = pd.to_numeric(series, errors="coerce").dropna()
        quantiles = values.quantile([0.999, 0.99, 0.975, 0.95, 0.9, 0.75]).to_numpy()
        return sorted({float(f"{q:.3g}") for q in quantiles}, reverse=True)
