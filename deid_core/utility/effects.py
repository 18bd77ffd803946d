"""Effect measures with confidence intervals: what an epidemiologist reads off the exposure
coefficient ``b`` (standard error ``se``) of each model family.

With ``z`` the standard normal ``(1 + level) / 2`` quantile (1.96 for 95%), the Wald interval
of ``b`` is ``b -/+ z * se``. For the log-linear families the measure is ``exp(b)`` with the
interval ``(exp(b - z se), exp(b + z se))``:

* logistic and binomial: the **odds ratio** per unit of exposure;
* poisson: the **rate ratio** (the ratio of expected counts without a person-time offset);
* cox: the **hazard ratio**.

For linear regression the measure is ``b`` itself, the **difference in the mean outcome** per
unit of exposure, and for the linear ERR odds model ``b`` is the **excess relative risk** per
unit dose; both with the Wald interval of ``b`` (radiation epidemiologists often prefer a
profile-likelihood interval for the ERR, which is asymmetric; the Wald interval is given here
for comparing the original and the masked fit on one footing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

#: The effect measure of each family: its name and whether it is ``exp(b)``.
EFFECT_NAMES = {
    "logistic": "Odds ratio",
    "binomial": "Odds ratio",
    "poisson": "Rate ratio",
    "cox": "Hazard ratio",
    "linear": "Difference in mean",
    "err": "Excess relative risk",
}
RATIO_FAMILIES = frozenset({"logistic", "binomial", "poisson", "cox"})


@dataclass(frozen=True)
class EffectMeasure:
    """An effect measure per unit of exposure with its Wald confidence interval.

    ``value``, ``low`` and ``high`` are on the measure's own scale (``exp(b)`` for a ratio).
    """

    name: str
    exposure: str
    value: float
    low: float
    high: float
    level: float = 0.95
    ratio: bool = True

    @property
    def label(self) -> str:
        """E.g. "Odds ratio per unit of dose (95% CI)"."""
        return f"{self.name} per unit of {self.exposure} ({100 * self.level:g}% CI)"

    def text(self, digits: int = 4) -> str:
        """E.g. "2.870 (1.363 to 6.045)", ``digits`` significant digits, trailing zeros kept
        so that every figure shows its precision ("1.10", not "1.1")."""
        return f"{self.value:#.{digits}g} ({self.low:#.{digits}g} to {self.high:#.{digits}g})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "measure": self.name,
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "level": self.level,
        }


def effect_measure(
    family: str, exposure: str, b: float, se: float, level: float = 0.95
) -> EffectMeasure:
    """The family's effect measure for ``b`` and ``se`` with its Wald interval (module
    docstring)."""
    if family not in EFFECT_NAMES:
        raise ValueError(f"no effect measure for the family {family!r}")
    if not 0 < level < 1:
        raise ValueError("the confidence level must lie strictly between 0 and 1")
    z = float(stats.norm.ppf((1 + level) / 2))
    low, high = b - z * se, b + z * se
    ratio = family in RATIO_FAMILIES
    if ratio:
        with np.errstate(over="ignore"):
            b, low, high = (float(np.exp(v)) for v in (b, low, high))
    return EffectMeasure(EFFECT_NAMES[family], exposure, b, low, high, level, ratio)
