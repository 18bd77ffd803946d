"""Rounding and truncation of continuous values (Cologne et al. 2012, sections 2.2.2-2.2.3).

Grouping of this kind is deterministic and gives Berkson-type error; truncation is biased
toward zero.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from deid_core.errors import RecipeError
from deid_core.masking.base import (
    MaskingStep,
    decimals_of,
    numeric_values,
    require_finite,
    require_int,
    restore_integer_dtype,
    round_half_away_from_zero,
)

_MAX_DECIMALS = 12


def _base_from(base: float | None, decimals: int | None, method: str) -> tuple[float, int]:
    """Resolve exactly one of ``base`` / ``decimals`` into (base, decimals needed to write it)."""
    if (base is None) == (decimals is None):
        raise RecipeError(f"{method}: give either a base (e.g. 0.1, 5) or a number of decimals.")
    if decimals is not None:
        d = require_int(decimals, "decimals", method, -6, _MAX_DECIMALS)
        return 10.0**-d, max(d, 0)
    b = require_finite(base, "base", method, positive=True)
    return b, decimals_of(b)


def absolute_round(values: np.ndarray, base: float) -> np.ndarray:
    """Round to the nearest multiple of ``base``: ``x -> base * round(x / base)`` (halves away
    from zero). Loses more relative precision near zero than relative rounding."""
    return np.round(round_half_away_from_zero(values / base) * base, decimals_of(base))


#: Powers of ten 10^0 .. 10^300, looked up rather than computed value by value (pow is slow).
_POWERS_OF_TEN = 10.0 ** np.arange(0, 301)


def relative_round(values: np.ndarray, digits: int) -> np.ndarray:
    """Round to ``digits`` significant digits (Cologne et al. 2012, relative-precision rounding).

    ``x -> round(x / 10^e) * 10^e`` with ``e = floor(log10|x|) - digits + 1``; zero stays zero
    and missing values stay missing.
    """
    out = np.array(values, dtype="float64", copy=True)
    nonzero = np.isfinite(out) & (out != 0)
    x = out[nonzero]
    exponent = (np.floor(np.log10(np.abs(x))) - digits + 1).astype(np.int64)
    result = np.empty_like(x)
    ordinary = np.abs(exponent) <= 300
    e, xo = exponent[ordinary], x[ordinary]
    scale = _POWERS_OF_TEN[np.abs(e)]
    up = e >= 0
    # Dividing by a positive power of ten (rather than multiplying by a negative one) keeps
    # the result the closest double to the decimal, e.g. 0.31 and not 0.31000000000000005.
    rounded = round_half_away_from_zero(np.where(up, xo / scale, xo * scale))
    result[ordinary] = np.where(up, rounded * scale, rounded / scale)
    if not ordinary.all():
        # Subnormal inputs need more than 10^300: split the power in two so it cannot overflow.
        e, xe = -exponent[~ordinary].astype(float), x[~ordinary]
        first = np.clip(e, -300.0, 300.0)
        second = e - first
        mantissa = xe * 10.0**first * 10.0**second
        result[~ordinary] = round_half_away_from_zero(mantissa) / 10.0**first / 10.0**second
    out[nonzero] = result
    return out


def truncate(values: np.ndarray, base: float) -> np.ndarray:
    """Drop digits toward zero: ``x -> sign(x) * base * floor(|x| / base)``."""
    snapped = np.round(np.abs(values) / base, 9)
    return np.round(np.sign(values) * np.floor(snapped) * base, decimals_of(base))


@dataclass(frozen=True)
class _ToMultipleOfBase(MaskingStep):
    """What absolute rounding and truncation share: a base, or a number of decimals (base
    10^-decimals), and an elementwise operation on the values."""

    base: float | None = None
    decimals: int | None = None

    sweep_parameter: ClassVar[str | None] = "decimals"
    _ELEMENTWISE: ClassVar[bool] = True
    #: The elementwise operation, ``(values, base) -> masked values``, set by each subclass.
    _operation: ClassVar[Callable[[np.ndarray, float], np.ndarray]]

    def _validate(self) -> None:
        _base_from(self.base, self.decimals, self.label)

    @property
    def effective_base(self) -> float:
        return _base_from(self.base, self.decimals, self.label)[0]

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        values = numeric_values(series, self.column, self.label)
        return restore_integer_dtype(series, self._operation(values, self.effective_base))

    def sweep_values(self, series: pd.Series) -> list[Any]:
        return [4, 3, 2, 1, 0]


@dataclass(frozen=True)
class AbsoluteRound(_ToMultipleOfBase):
    """Round to a fixed base (0.001, 0.1, 5 ...) or a number of decimals."""

    method: ClassVar[str] = "absolute_round"
    label: ClassVar[str] = "Absolute rounding"
    _operation = staticmethod(absolute_round)

    def describe(self) -> str:
        if self.decimals is not None:
            return f"{self.column}: rounded to {self.decimals} decimal(s)"
        return f"{self.column}: rounded to the nearest {self.base:g}"


@dataclass(frozen=True)
class RelativeRound(MaskingStep):
    """Round to a number of significant digits (preferred for skewed exposures)."""

    digits: int = 2

    method: ClassVar[str] = "relative_round"
    label: ClassVar[str] = "Relative rounding"
    sweep_parameter: ClassVar[str | None] = "digits"
    _ELEMENTWISE: ClassVar[bool] = True

    def _validate(self) -> None:
        require_int(self.digits, "digits", self.label, 1, 15)

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        values = numeric_values(series, self.column, self.label)
        return restore_integer_dtype(series, relative_round(values, self.digits))

    def describe(self) -> str:
        return f"{self.column}: rounded to {self.digits} significant digit(s)"

    def sweep_values(self, series: pd.Series) -> list[Any]:
        return [5, 4, 3, 2, 1]


@dataclass(frozen=True)
class Truncate(_ToMultipleOfBase):
    """Drop digits toward zero (e.g. ages to whole years). Biased toward zero."""

    method: ClassVar[str] = "truncate"
    label: ClassVar[str] = "Truncation"
    _operation = staticmethod(truncate)

    def describe(self) -> str:
        if self.decimals is not None:
            return f"{self.column}: truncated to {self.decimals} decimal(s) (biased toward zero)"
        return f"{self.column}: truncated to a multiple of {self.base:g} (biased toward zero)"
