"""The collaborator's model on the original and the masked data: one object for the pages, the
command line and the report (Cologne et al. 2012, Table 2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deid_core.utility.compare import compare_fits
from deid_core.utility.effects import EffectMeasure, effect_measure
from deid_core.utility.models import FitResult
from deid_core.utility.replicates import ReplicateSummary
from deid_core.utility.spec import ModelSpec

#: What an analysis potential above 1 means, wherever one is shown.
#: How far above 1 an analysis potential may come out by floating-point rounding alone.
AP_ROUNDING = 1e-9

AP_ABOVE_ONE_NOTE = (
    "An analysis potential above 1 is not a gain: MSE(masked) = SE_m^2 + (b_m - b)^2 came "
    "out below MSE(original) = SE^2 because the masked estimate landed close to the original "
    "and its standard error happened to come out smaller, by chance. Masking adds no "
    "information about the exposure effect; read it as no loss."
)


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

    def effect(self, level: float = 0.95) -> EffectMeasure | None:
        """The original fit's effect measure (odds, rate or hazard ratio, ...) with its CI."""
        return self.original.effect(level) if self.original else None

    def masked_effect(self, level: float = 0.95) -> EffectMeasure | None:
        """The masked fit's effect measure with its CI; for a random mask, from the mean
        estimate and the mean standard error over the replicates."""
        b, se = self.masked_estimate, self.masked_se
        if self.spec is None or b is None or se is None:
            return None
        return effect_measure(self.spec.family, self.spec.exposure, b, se, level)

    @property
    def ap_note(self) -> str | None:
        """:data:`AP_ABOVE_ONE_NOTE` when the analysis potential exceeds 1 by more than
        rounding (:data:`AP_ROUNDING`), else None."""
        ap = self.analysis_potential
        return AP_ABOVE_ONE_NOTE if ap is not None and ap > 1 + AP_ROUNDING else None

    @property
    def records_note(self) -> str | None:
        """Why the original and masked fits' deviance and likelihood-ratio statistic cannot be
        compared, when they used different records (suppressed or removed values leave
        records out of the masked fit); None when they used the same number."""
        if self.original is None or self.masked is None:
            return None
        before, after = self.original, self.masked
        if (before.n, before.n_events) == (after.n, after.n_events):
            return None
        events = self.spec is not None and self.spec.family != "linear"

        def counted(fit: FitResult) -> str:
            return f"{fit.n:,} records" + (f" ({fit.n_events:,} events)" if events else "")

        return (
            f"The original fit used {counted(before)}, the masked fit {counted(after)} (records "
            "with a suppressed, missing or removed model value are left out): the deviance "
            "and the likelihood-ratio statistic depend on the number of records and are not "
            "comparable between the two; the estimate, its standard error and the analysis "
            "potential are."
        )

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
        for name, fit in (("original", self.original), ("masked", self.masked)):
            if fit is not None:
                out[f"{name}_records"] = fit.n
                out[f"{name}_events"] = fit.n_events
        if self.records_note:
            out["records_note"] = self.records_note
        if self.spec is not None:
            out["model"] = self.spec.family
            out["formula"] = self.spec.formula()
        if self.error:
            out["error"] = self.error
        effect, masked_effect = self.effect(), self.masked_effect()
        if effect is not None:
            out["effect"] = {
                "measure": effect.name,
                "per_unit_of": effect.exposure,
                "level": effect.level,
                "original": {"value": effect.value, "low": effect.low, "high": effect.high},
                "masked": None
                if masked_effect is None
                else {
                    "value": masked_effect.value,
                    "low": masked_effect.low,
                    "high": masked_effect.high,
                },
            }
        if self.ap_note:
            out["analysis_potential_note"] = self.ap_note
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
