"""Analysis potential of one masked data set: the exposure coefficient before and after.

Cologne et al. (2012, section 2.4 and Table 2) judge utility by the mean squared error of
the masked-data estimate ``b_m`` around the original-data estimate ``b``::

    MSE(b)   = se^2
    MSE(b_m) = se_m^2 + (b_m - b)^2
    relative bias = (b_m - b) / b
    analysis potential AP = MSE(b) / MSE(b_m)        (Cologne et al. 2012, eq. 3)

``AP = 1`` means no loss; it can exceed 1 when masking happens to shrink the standard
error more than it biases the estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from deid_core.utility.models import FitResult


@dataclass(frozen=True)
class UtilityComparison:
    """Exposure coefficient on original and masked data, with bias, MSE and AP.

    The derived quantities are properties, so the arithmetic can be checked from four
    numbers (e.g. Cologne et al. 2012, Table 2: ``b = 0.5235, se = 0.1548`` gives
    ``MSE = 0.0240``).
    """

    estimate: float
    se: float
    masked_estimate: float
    masked_se: float

    def __post_init__(self) -> None:
        values = (self.estimate, self.se, self.masked_estimate, self.masked_se)
        if not all(math.isfinite(v) for v in values):
            raise ValueError("estimates and standard errors must be finite")
        if self.se <= 0 or self.masked_se <= 0:
            raise ValueError("standard errors must be positive")

    @property
    def relative_bias(self) -> float | None:
        """``(b_m - b) / b``; ``None`` when the original estimate is exactly 0."""
        if self.estimate == 0:
            return None
        return (self.masked_estimate - self.estimate) / self.estimate

    @property
    def mse(self) -> float:
        """``MSE(b) = se^2``: the original estimate is unbiased for itself."""
        return self.se**2

    @property
    def masked_mse(self) -> float:
        """``MSE(b_m) = se_m^2 + (b_m - b)^2``."""
        return self.masked_se**2 + (self.masked_estimate - self.estimate) ** 2

    @property
    def analysis_potential(self) -> float:
        """``AP = MSE(b) / MSE(b_m)`` (Cologne et al. 2012, eq. 3); 1 means no loss."""
        return self.mse / self.masked_mse

    def __str__(self) -> str:
        bias = self.relative_bias
        bias_text = "undefined (original estimate is 0)" if bias is None else f"{100 * bias:.3f} %"
        return "\n".join(
            [
                "Analysis potential (Cologne et al. 2012)",
                "=" * 52,
                f"{'':22s}{'original':>14s}{'masked':>14s}",
                f"{'Estimate (b)':22s}{self.estimate:14.4f}{self.masked_estimate:14.4f}",
                f"{'Std. error':22s}{self.se:14.4f}{self.masked_se:14.4f}",
                f"{'MSE':22s}{self.mse:14.5f}{self.masked_mse:14.5f}",
                "-" * 52,
                f"Relative bias (b_m - b) / b: {bias_text}",
                f"Analysis potential MSE(b) / MSE(b_m): {self.analysis_potential:.4f}",
                "=" * 52,
            ]
        )


def compare_fits(original: FitResult, masked: FitResult) -> UtilityComparison:
    """Compare the exposure coefficient of a fit to masked data with the original fit.

    Both fits must be of the same model family; the column names may differ (e.g. a
    masked exposure released under a new name).
    """
    if original.spec.family != masked.spec.family:
        raise ValueError("the original and masked fits are of different model families")
    return UtilityComparison(
        estimate=original.estimate,
        se=original.se,
        masked_estimate=masked.estimate,
        masked_se=masked.se,
    )
