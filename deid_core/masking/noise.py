"""Additive random noise (Cologne et al. 2012, Table 2: uniform +/-0.001, 0.01, 0.1 Gy).

Noise is classical measurement error: it attenuates slopes on average, and a single draw can be
badly off, so utility is summarised over replicates. Each replicate ``r`` of a seeded step is
drawn from its own reproducible stream, ``numpy.random.default_rng([seed, r])``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from deid_core.masking.base import (
    MaskingStep,
    numeric_values,
    require_finite,
    rng_for,
    validate_seed,
)


def _apply_floor(values: np.ndarray, floor: float | None) -> np.ndarray:
    if floor is not None:
        values = np.where(values < floor, floor, values)
    return values


@dataclass(frozen=True)
class UniformNoise(MaskingStep):
    """Add a uniform deviate on [-half_width, +half_width]; values below ``floor`` (if given)
    are set to it (Cologne set negative doses to 0)."""

    half_width: float = 0.1
    floor: float | None = None
    seed: int | None = None

    method: ClassVar[str] = "uniform_noise"
    label: ClassVar[str] = "Uniform noise"
    random: ClassVar[bool] = True
    _PERTURBATIVE: ClassVar[bool] = True
    sweep_parameter: ClassVar[str | None] = "half_width"

    def _validate(self) -> None:
        require_finite(self.half_width, "half_width", self.label, positive=True)
        if self.floor is not None:
            require_finite(self.floor, "floor", self.label)
        validate_seed(self.seed, self.label)

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        values = numeric_values(series, self.column, self.label)
        noise = rng_for(self.seed, replicate).uniform(
            -self.half_width, self.half_width, len(values)
        )
        out = _apply_floor(values + noise, self.floor)
        return pd.Series(out, index=series.index, name=series.name)

    def describe(self) -> str:
        floor = f", floored at {self.floor:g}" if self.floor is not None else ""
        return f"{self.column}: uniform noise of +/-{self.half_width:g} added{floor}"

    def sweep_values(self, series: pd.Series) -> list[Any]:
        values = pd.to_numeric(series, errors="coerce").dropna()
        sd = float(values.std()) if len(values) > 1 else 1.0
        return [float(f"{sd * f:.2g}") for f in (0.001, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0)]


@dataclass(frozen=True)
class GaussianNoise(MaskingStep):
    """Add a normal deviate with standard deviation ``sd_fraction`` x SD(column); values below
    ``floor`` (if given) are set to it."""

    sd_fraction: float = 0.1
    floor: float | None = None
    seed: int | None = None

    method: ClassVar[str] = "gaussian_noise"
    label: ClassVar[str] = "Gaussian noise"
    random: ClassVar[bool] = True
    _PERTURBATIVE: ClassVar[bool] = True
    sweep_parameter: ClassVar[str | None] = "sd_fraction"

    def _validate(self) -> None:
        require_finite(self.sd_fraction, "sd_fraction", self.label, positive=True)
        if self.floor is not None:
            require_finite(self.floor, "floor", self.label)
        validate_seed(self.seed, self.label)

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        values = numeric_values(series, self.column, self.label)
        finite = values[np.isfinite(values)]
        sd = _standard_deviation(finite)
        noise = rng_for(self.seed, replicate).normal(0.0, 1.0, len(values)) * self.sd_fraction * sd
        out = _apply_floor(values + noise, self.floor)
        return pd.Series(out, index=series.index, name=series.name)

    def describe(self) -> str:
        floor = f", floored at {self.floor:g}" if self.floor is not None else ""
        return f"{self.column}: Gaussian noise with SD {self.sd_fraction:g} x SD added{floor}"

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
