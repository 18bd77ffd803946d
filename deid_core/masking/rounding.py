"""Rounding and truncation of continuous values (Cologne et al. 2012, sections 2.2.2-2.2.3).

Grouping of this kind is deterministic and gives Berkson-type error; truncation is biased
toward zero. All three are exact on decimal grids (see :mod:`deid_core.masking.decimal_grid` for the
rule): a value already on the grid stays as it is, truncation never moves a value away from
zero, halves round away from zero, and no result is -0.0.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Callable
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
    require_int,
    restore_integer_dtype,
)
from deid_core.masking.decimal_grid import Cells, DecimalGrid, decades, power_of_ten_cells

_MAX_DECIMALS = 12
#: A rounding sweep tries at most this many numbers of decimals, none below the minimum.
_MAX_SWEEP = 7
_MIN_SWEEP_DECIMALS = -6
#: How many values the sweep reads to find the decimals the data carry.
_DECIMALS_SAMPLE = 10_000


def _base_from(base: float | None, decimals: int | None, method: str) -> float:
    """Resolve exactly one of ``base`` / ``decimals`` into the base (decimals d: 10^-d)."""
    if (base is None) == (decimals is None):
        raise RecipeError(f"{method}: give either a base (e.g. 0.1, 5) or a number of decimals.")
    if decimals is not None:
        return float(f"1e{-require_int(decimals, 'decimals', method, -6, _MAX_DECIMALS)}")
    return require_finite(base, "base", method, positive=True)


def _with_signs(magnitudes: np.ndarray, values: np.ndarray, what: str) -> np.ndarray:
    """``magnitudes`` (modified in place) with the signs of ``values``, never -0.0; a
    RecipeError if a finite value was sent beyond the largest float."""
    negative = values < 0
    if negative.any():
        np.negative(magnitudes, out=magnitudes, where=negative)
        magnitudes += 0.0  # a negative value truncated or rounded to 0
    if np.isinf(magnitudes).any() and np.isinf(magnitudes[np.isfinite(values)]).any():
        raise RecipeError(
            f"{what} would give a number beyond the largest a float holds (about 1.8e308); "
            "choose a smaller base."
        )
    return magnitudes


def _nearest_point(magnitudes: np.ndarray, cells: Cells) -> np.ndarray:
    """The nearest grid point to each magnitude: itself when on the grid, else the upper
    point from the half-way point on (halves away from zero), else the lower (``cells.lower``,
    modified in place)."""
    up = magnitudes >= cells.middle
    up &= cells.lower != magnitudes
    np.copyto(cells.lower, cells.upper, where=up)
    return cells.lower


def absolute_round(values: np.ndarray, base: float) -> np.ndarray:
    """Round to the nearest multiple of ``base``: ``x -> base * round(x / base)``, halves away
    from zero, exactly on the decimals (0.35 -> 0.4 with base 0.1). Loses more relative
    precision near zero than relative rounding."""
    values = np.asarray(values, dtype="float64")
    magnitudes = np.abs(values)
    nearest = _nearest_point(magnitudes, DecimalGrid.of(base).cells(magnitudes))
    return _with_signs(nearest, values, f"Rounding to a multiple of {number_text(base)}")


def truncate(values: np.ndarray, base: float) -> np.ndarray:
    """Drop digits toward zero: ``x -> sign(x) * base * floor(|x| / base)``, exactly on the
    decimals (71638.54 stays 71638.54 with base 0.01; 0.99999999999 -> 0 with base 1)."""
    values = np.asarray(values, dtype="float64")
    magnitudes = np.abs(values)
    lower = DecimalGrid.of(base).cells(magnitudes, middle=False).lower
    return _with_signs(lower, values, f"Truncation to a multiple of {number_text(base)}")


def relative_round(values: np.ndarray, digits: int) -> np.ndarray:
    """Round to ``digits`` significant digits (Cologne et al. 2012, relative-precision rounding).

    ``x -> round(x / 10^e) * 10^e`` with ``e = k - digits + 1``, ``k`` the exponent of the
    first significant digit of x's decimal (``fl(10^k) <= |x| < fl(10^(k+1))``), halves away
    from zero, exactly; zero stays zero and missing values stay missing.
    """
    values = np.asarray(values, dtype="float64")
    rounded = np.isfinite(values) & (values != 0)
    every = bool(rounded.all())
    some = values if every else values[rounded]
    magnitudes = np.abs(some)
    cells = power_of_ten_cells(magnitudes, decades(magnitudes) - digits + 1)
    result = _with_signs(_nearest_point(magnitudes, cells), some, "Relative rounding")
    if every:
        return result
    out = values + 0.0
    out[rounded] = result
    return out


@dataclass(frozen=True)
class _Rounding(MaskingStep):
    """What the rounding steps share: an elementwise operation on the numbers of a column,
    ``(values, parameter) -> masked values``, after which whole numbers stay whole numbers."""

    _ELEMENTWISE: ClassVar[bool] = True
    takes: ClassVar[str] = NUMBERS
    #: The operation, set by each step.
    _operation: ClassVar[Callable[[np.ndarray, Any], np.ndarray]]
    #: The values of the swept parameter that the risk-utility map tries, coarsest last.
    _SWEEP: ClassVar[tuple[int, ...]]

    @property
    @abstractmethod
    def _parameter(self) -> Any:
        """The operation's second argument."""

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        values = numeric_values(series, self.column, self.label)
        return restore_integer_dtype(series, self._operation(values, self._parameter))

    def sweep_values(self, series: pd.Series) -> list[Any]:
        return list(self._SWEEP)


@dataclass(frozen=True)
class _ToMultipleOfBase(_Rounding):
    """What absolute rounding and truncation share: a base, or a number of decimals (base
    10^-decimals), and a description of the form ``<verb> to <n> decimal(s)<note>`` or
    ``<verb> to <the base phrase> <base><note>``."""

    base: float | None = None
    decimals: int | None = None

    sweep_parameter: ClassVar[str | None] = "decimals"
    _SWEEP: ClassVar[tuple[int, ...]] = (4, 3, 2, 1, 0)
    _VERB: ClassVar[str]
    _BASE_PHRASE: ClassVar[str]
    _NOTE: ClassVar[str] = ""

    def _validate(self) -> None:
        _base_from(self.base, self.decimals, self.label)

    @property
    def effective_base(self) -> float:
        return _base_from(self.base, self.decimals, self.label)

    @property
    def _parameter(self) -> float:
        return self.effective_base

    def describe(self) -> str:
        if self.decimals is not None and self.decimals >= 0:
            to = f"{self.decimals} decimal(s)"
        else:  # a base, or negative decimals: "to the nearest 10", not "to -1 decimal(s)"
            to = f"{self._BASE_PHRASE} {number_text(self.effective_base)}"
        return f"{self.column}: {self._VERB} to {to}{self._NOTE}"

    def sweep_values(self, series: pd.Series) -> list[Any]:
        """Numbers of decimals from the finest the data carry (at most 4; 0 for whole numbers)
        to the coarsest that leaves a digit of the largest magnitude M, ``-floor(log10 M)``
        (birth weights up to 4,990 g: 0, -1, -2, -3, the nearest 1, 10, 100 and 1,000), at
        most ``_MAX_SWEEP`` of them and at least two. Without a positive finite value, the
        fixed decimals 4 to 0."""
        values = numeric_values(series, self.column, self.label)
        magnitudes = np.abs(values[np.isfinite(values)])
        largest = float(magnitudes.max()) if magnitudes.size else 0.0
        if largest <= 0:
            return list(self._SWEEP)
        coarsest = max(-math.floor(math.log10(largest)), _MIN_SWEEP_DECIMALS)
        if pd.api.types.is_integer_dtype(series.dtype):
            finest = 0
        else:  # the decimals the first values carry (a scan of them all would not be live)
            sample = magnitudes[:_DECIMALS_SAMPLE]
            finest = next(
                (d for d in range(5) if np.array_equal(absolute_round(sample, 10.0**-d), sample)),
                4,
            )
        finest = min(max(finest, coarsest + 1), coarsest + _MAX_SWEEP - 1)
        return list(range(finest, coarsest - 1, -1))


@dataclass(frozen=True)
class AbsoluteRound(_ToMultipleOfBase):
    """Round to a fixed base (0.001, 0.1, 5 ...) or a number of decimals."""

    method: ClassVar[str] = "absolute_round"
    label: ClassVar[str] = "Absolute rounding"
    _operation = staticmethod(absolute_round)
    _VERB: ClassVar[str] = "rounded"
    _BASE_PHRASE: ClassVar[str] = "the nearest"


@dataclass(frozen=True)
class RelativeRound(_Rounding):
    """Round to a number of significant digits (preferred for skewed exposures)."""

    digits: int = 2

    method: ClassVar[str] = "relative_round"
    label: ClassVar[str] = "Relative rounding"
    sweep_parameter: ClassVar[str | None] = "digits"
    _SWEEP: ClassVar[tuple[int, ...]] = (5, 4, 3, 2, 1)
    _operation = staticmethod(relative_round)

    def _validate(self) -> None:
        require_int(self.digits, "digits", self.label, 1, 15)

    @property
    def _parameter(self) -> int:
        return self.digits

    def describe(self) -> str:
        return f"{self.column}: rounded to {self.digits} significant digit(s)"


@dataclass(frozen=True)
class Truncate(_ToMultipleOfBase):
    """Drop digits toward zero (e.g. ages to whole years). Biased toward zero."""

    method: ClassVar[str] = "truncate"
    label: ClassVar[str] = "Truncation"
    _operation = staticmethod(truncate)
    _VERB: ClassVar[str] = "truncated"
    _BASE_PHRASE: ClassVar[str] = "a multiple of"
    _NOTE: ClassVar[str] = " (biased toward zero)"
