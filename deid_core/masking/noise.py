"""Additive random noise (Cologne et al. 2012, Table 2: uniform +/-0.001, 0.01, 0.1 Gy).

Noise is classical measurement error: it attenuates slopes on average, and a single draw can be
badly off, so utility is summarised over replicates. Each replicate ``r`` of a seeded step is
drawn from its own reproducible stream, ``numpy.random.default_rng([seed, r])``.

Noisy values carry every digit of the draw (a weight of 130 lb with noise of +/-5 becomes
127.3816...), digits that say nothing and show that noise was added. With
``round_to_noise_scale`` a step releases them rounded to :func:`noise_release_base` of its
reach (the half-width, or 2 SD): the power of ten at or below a fifth of the reach (+/-5 -> whole
numbers, +/-0.5 -> one decimal). Rounding after the noise is post-processing, so it never tells
an intruder more; it adds at most a tenth of the reach to a value's displacement and, for
uniform noise, at most 1% to the noise's variance (base^2/12 against a^2/3 with base <= a/5).
Values are rounded (halves away from zero, exactly on the decimals) before the floor is applied.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from deid_core.errors import RecipeError
from deid_core.masking.base import (
    NUMBERS,
    MaskingStep,
    checked_seed,
    number_text,
    numeric_values,
    require_finite,
    restore_integer_dtype,
    rng_for,
)
from deid_core.masking.rounding import absolute_round

#: The released precision is the power of ten at or below the reach divided by this.
NOISE_SCALE_DIVISOR = 5


def noise_release_base(reach: float) -> float | None:
    """The base noisy values are rounded to: ``10^floor(log10(reach / 5))`` (a reach of 5 ->
    1, of 0.5 -> 0.1, of 12 -> 1); None for a reach that is zero or not finite (nothing to
    round to)."""
    if not math.isfinite(reach) or reach / NOISE_SCALE_DIVISOR <= 0:
        return None
    exponent = math.floor(math.log10(reach / NOISE_SCALE_DIVISOR))
    base = float(f"1e{exponent}")
    if base * NOISE_SCALE_DIVISOR > reach:  # log10 rounded up across a power of ten
        base = float(f"1e{exponent - 1}")
    return base


def _released(values: np.ndarray, reach: float, round_to_scale: bool) -> np.ndarray:
    """``values`` rounded to :func:`noise_release_base` of ``reach`` when asked (missing values
    stay missing)."""
    base = noise_release_base(reach) if round_to_scale else None
    if base is None:
        return values
    finite = np.isfinite(values)
    out = values.copy()
    out[finite] = absolute_round(values[finite], base)
    return out


def _precision_text(reach: float, round_to_scale: bool) -> str:
    base = noise_release_base(reach) if round_to_scale else None
    if base is None:
        return ""
    if base < 1:
        return f", released to {-math.floor(math.log10(base) + 0.5)} decimal(s)"
    return f", released to the nearest {number_text(base)}"


def _apply_floor(values: np.ndarray, floor: float | None) -> np.ndarray:
    if floor is not None:
        values = np.where(values < floor, floor, values)
    return values


@dataclass(frozen=True)
class UniformNoise(MaskingStep):
    """Add a uniform deviate on [-half_width, +half_width]; values below ``floor`` (if given)
    are set to it (Cologne set negative doses to 0). With ``round_to_noise_scale`` the values
    are released rounded to :func:`noise_release_base` of the half-width."""

    half_width: float = 0.1
    floor: float | None = None
    seed: int | None = None
    round_to_noise_scale: bool = False

    method: ClassVar[str] = "uniform_noise"
    takes: ClassVar[str] = NUMBERS
    label: ClassVar[str] = "Uniform noise"
    random: ClassVar[bool] = True
    _PERTURBATIVE: ClassVar[bool] = True
    sweep_parameter: ClassVar[str | None] = "half_width"

    def _validate(self) -> None:
        require_finite(self.half_width, "half_width", self.label, positive=True)
        if self.floor is not None:
            require_finite(self.floor, "floor", self.label)
        object.__setattr__(self, "seed", checked_seed(self.seed, self.label))
        _require_flag(self.round_to_noise_scale, self.label)

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        values = numeric_values(series, self.column, self.label)
        noise = rng_for(self.seed, replicate).uniform(
            -self.half_width, self.half_width, len(values)
        )
        noisy = _released(values + noise, self.half_width, self.round_to_noise_scale)
        out = _apply_floor(noisy, self.floor)
        if self.round_to_noise_scale:  # whole numbers released as whole numbers
            return restore_integer_dtype(series, out)
        return pd.Series(out, index=series.index, name=series.name)

    def reach(self, series: pd.Series | None = None) -> float:
        """How far the noise can move a value: the half-width."""
        return self.half_width

    @property
    def release_base(self) -> float | None:
        """The base the released values are rounded to (None: full precision)."""
        return noise_release_base(self.half_width) if self.round_to_noise_scale else None

    def describe(self) -> str:
        floor = f", floored at {self.floor:g}" if self.floor is not None else ""
        precision = _precision_text(self.half_width, self.round_to_noise_scale)
        return f"{self.column}: uniform noise of +/-{self.half_width:g} added{precision}{floor}"

    def sweep_values(self, series: pd.Series) -> list[Any]:
        values = pd.to_numeric(series, errors="coerce").dropna()
        sd = float(values.std()) if len(values) > 1 else 1.0
        return [float(f"{sd * f:.2g}") for f in (0.001, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0)]


@dataclass(frozen=True)
class GaussianNoise(MaskingStep):
    """Add a normal deviate with standard deviation ``sd_fraction`` x SD(column); values below
    ``floor`` (if given) are set to it. With ``round_to_noise_scale`` the values are released
    rounded to :func:`noise_release_base` of 2 x the noise's SD."""

    sd_fraction: float = 0.1
    floor: float | None = None
    seed: int | None = None
    round_to_noise_scale: bool = False

    method: ClassVar[str] = "gaussian_noise"
    takes: ClassVar[str] = NUMBERS
    label: ClassVar[str] = "Gaussian noise"
    random: ClassVar[bool] = True
    _PERTURBATIVE: ClassVar[bool] = True
    sweep_parameter: ClassVar[str | None] = "sd_fraction"

    def _validate(self) -> None:
        require_finite(self.sd_fraction, "sd_fraction", self.label, positive=True)
        if self.floor is not None:
            require_finite(self.floor, "floor", self.label)
        object.__setattr__(self, "seed", checked_seed(self.seed, self.label))
        _require_flag(self.round_to_noise_scale, self.label)

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        values = numeric_values(series, self.column, self.label)
        finite = values[np.isfinite(values)]
        sd = _standard_deviation(finite)
        noise = rng_for(self.seed, replicate).normal(0.0, 1.0, len(values)) * self.sd_fraction * sd
        noisy = _released(values + noise, 2 * self.sd_fraction * sd, self.round_to_noise_scale)
        out = _apply_floor(noisy, self.floor)
        if self.round_to_noise_scale:  # whole numbers released as whole numbers
            return restore_integer_dtype(series, out)
        return pd.Series(out, index=series.index, name=series.name)

    def reach(self, series: pd.Series) -> float:
        """How far the noise moves about 95% of values: 2 x its SD (``sd_fraction`` x the SD of
        ``series``, the original column)."""
        values = pd.to_numeric(series, errors="coerce").to_numpy(dtype="float64")
        return 2 * self.sd_fraction * _standard_deviation(values[np.isfinite(values)])

    def describe(self) -> str:
        floor = f", floored at {self.floor:g}" if self.floor is not None else ""
        precision = (
            ", released rounded to the noise's scale (a power of ten at or below 2 SD / 5)"
            if self.round_to_noise_scale
            else ""
        )
        return (
            f"{self.column}: Gaussian noise with SD {self.sd_fraction:g} x SD added"
            f"{precision}{floor}"
        )

    def sweep_values(self, series: pd.Series) -> list[Any]:
        return [0.001, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0]


def _standard_deviation(values: np.ndarray) -> float:
    """Sample SD, computed on values scaled by their largest magnitude so that squaring
    values near 1e300 cannot overflow (0 for fewer than two values or a constant column)."""
    if values.size < 2:
        return 0.0
    scale = float(np.max(np.abs(values)))
    if scale == 0.0:
        return 0.0
    return scale * float(np.std(values / scale, ddof=1))


def _require_flag(value: Any, method: str) -> None:
    if not isinstance(value, bool):
        raise RecipeError(f"{method}: round_to_noise_scale must be true or false.")
