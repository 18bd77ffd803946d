"""The collaborator's model on the original and the masked data: one object for the pages, the
command line and the report (Cologne et al. 2012, Table 2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deid_core.utility.compare import compare_fits
from deid_core.utility.models import FitResult
from deid_core.utility.replicates import ReplicateSummary
from deid_core.utility.spec import ModelSpec


@dataclass(frozen=True)
class UtilityResult:
    """The collaborator's model on the original and the masked data (Cologne et al. 2012).

    ``MSE(b) = se^2``; ``MSE(b_m) = se_m^2 + (b_m - b)^2``; analysis potential
    ``AP = MSE(b) / MSE(b_m)`` (1 = no loss). For random masking the masked figures are means
    over replicates and AP uses the mean MSE (Cologne Table 2); ``replicates`` has the ranges.
    When a model cannot be fitted, ``error`` says why and every figure is None (never 0).
    """

    spec: ModelSpec | None
    original: FitResult | None = None
    masked: FitResult | None = None
    replicates: ReplicateSummary | None = None
    error: str | None = None

    @property
    def available(self) -> bool:
        return self.error is None and self.original is not None

    @property
    def estimate(self) -> float | None:
        return self.original.estimate if self.original else None

    @property
    def se(self) -> float | None:
        return self.original.se if self.original else None

    @property
    def mse(self) -> float | None:
        return self.original.se**2 if self.original else None

    @property
    def masked_estimate(self) -> float | None:
        if self.replicates is not None:
            return self.replicates.estimate_mean
        return self.masked.estimate if self.masked else None

    @property
    def masked_se(self) -> float | None:
        if self.replicates is not None:
            return self.replicates.se_mean
        return self.masked.se if self.masked else None

    @property
    def masked_mse(self) -> float | None:
        if self.replicates is not None:
            return self.replicates.mse_mean
        if self.original and self.masked:
            return compare_fits(self.original, self.masked).masked_mse
        return None

    @property
    def relative_bias(self) -> float | None:
        if self.replicates is not None:
            return self.replicates.relative_bias_mean
        if self.original and self.masked:
            return compare_fits(self.original, self.masked).relative_bias
        return None

    @property
    def analysis_potential(self) -> float | None:
        if self.replicates is not None:
            return self.replicates.analysis_potential
        if self.original and self.masked:
            return compare_fits(self.original, self.masked).analysis_potential
        return None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "estimate": self.estimate,
            "se": self.se,
            "masked_estimate": self.masked_estimate,
            "masked_se": self.masked_se,
            "relative_bias": self.relative_bias,
            "mse": self.mse,
            "masked_mse": self.masked_mse,
            "analysis_potential": self.analysis_potential,
        }
        if self.spec is not None:
            out["model"] = self.spec.family
            out["formula"] = self.spec.formula()
        if self.error:
            out["error"] = self.error
        if self.replicates is not None:
            r = self.replicates
            out["replicates"] = {
                "n": r.n_replicates,
                "estimate_mean": r.estimate_mean,
                "estimate_min": r.estimate_min,
                "estimate_max": r.estimate_max,
                "mse_mean": r.mse_mean,
                "mse_min": r.mse_min,
                "mse_max": r.mse_max,
            }
        return out
