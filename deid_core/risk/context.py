"""The release context: which risk metric and threshold a release is judged by.

El Emam & Malin ("Concepts and methods for de-identifying clinical trial data"):

- a threshold comes from a minimum cell size c: the largest acceptable probability of
  re-identification is 1/c (3 -> 0.33, 5 -> 0.2, 11 -> 0.09, 20 -> 0.05; the seed's figure
  prints 0.02 for 20, a typo);
- a **public** release is judged by the **maximum risk** (an intruder will attack the most
  exposed record, and no contract constrains anyone);
- a **non-public** release is judged by the largest of three attack scenarios (their Table 6),
  each the probability of the attack times the conditional risk, measured by the strict average
  risk: deliberate ``Pr(attempt) x risk``, acquaintance (inadvertent) ``Pr(acquaintance) x
  risk`` and breach ``Pr(breach) x risk`` (27% of health care organisations reported a breach in
  2012). The breach scenario may use the maximum risk instead, "depending on the assumptions".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from deid_core.errors import DataError

#: The precedents of the seed's Figure 4: minimum cell size -> risk threshold.
CELL_SIZE_PRECEDENTS = {3: 1 / 3, 5: 0.2, 11: 1 / 11, 20: 0.05}

#: Default scenario probabilities, with the plain-language reason for each.
DEFAULT_PR_ATTEMPT = 0.3
DEFAULT_PR_ACQUAINTANCE = 0.1
DEFAULT_PR_BREACH = 0.27

SCENARIO_HELP = {
    "attempt": (
        "Probability that the recipient deliberately tries to re-identify someone; lower with "
        "strong security, privacy and contractual controls (0.3 is a middling judgement)."
    ),
    "acquaintance": (
        "Probability that an analyst knows someone in the data (and so may recognise them by "
        "accident); about 1 - (1 - prevalence)^150 for a condition of a given prevalence and "
        "about 150 acquaintances."
    ),
    "breach": (
        "Probability that the recipient suffers a data breach: 0.27 is the share of health care "
        "organisations that reported one in 2012 (HIMSS Analytics, cited by El Emam & Malin)."
    ),
}


class JudgedRisk(Protocol):
    """What a verdict reads: the class-based :class:`~deid_core.risk.classes.RiskSummary` or
    the record-linkage :class:`~deid_core.risk.judged.PerturbedRisk`, whichever the recipe
    calls for (:func:`deid_core.risk.judged.risk_basis`); ``risk_label`` names the figures."""

    risk_label: str

    @property
    def max_risk(self) -> float: ...

    @property
    def strict_average_risk(self) -> float: ...


def _probability(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise DataError(f"Release context: '{name}' must be a probability between 0 and 1.")
    return float(value)


@dataclass(frozen=True)
class Verdict:
    """How the judged risk compares with the threshold."""

    measure: str
    value: float
    threshold: float
    scenarios: dict[str, float] = field(default_factory=dict)

    @property
    def meets(self) -> bool:
        return self.value <= self.threshold + 1e-12

    @property
    def excess(self) -> float:
        """How far above the threshold (0 when it is met)."""
        return max(0.0, self.value - self.threshold)

    @property
    def text(self) -> str:
        return str(self)

    def __str__(self) -> str:
        if self.meets:
            return f"Meets the threshold: {self.measure} {self.value:.3f} <= {self.threshold:.3g}."
        return (
            f"Above the threshold by {self.excess:.3f}: {self.measure} {self.value:.3f} > "
            f"{self.threshold:.3g}."
        )


@dataclass(frozen=True)
class ReleaseContext:
    """Public or non-public release, the minimum cell size, and (non-public) the scenario
    probabilities. Parameters are validated when the context is built."""

    public: bool = True
    min_cell_size: int = 5
    pr_attempt: float = DEFAULT_PR_ATTEMPT
    pr_acquaintance: float = DEFAULT_PR_ACQUAINTANCE
    pr_breach: float = DEFAULT_PR_BREACH
    breach_uses_maximum: bool = False

    def __post_init__(self) -> None:
        size = self.min_cell_size
        if isinstance(size, bool) or not isinstance(size, int) or not 2 <= size <= 1000:
            raise DataError("Release context: the minimum cell size must be a whole number >= 2.")
        for name in ("pr_attempt", "pr_acquaintance", "pr_breach"):
            _probability(getattr(self, name), name)

    @property
    def threshold(self) -> float:
        """The largest acceptable probability of re-identification, 1 / minimum cell size."""
        return 1.0 / self.min_cell_size

    @property
    def conditional_limit(self) -> float:
        """The largest acceptable conditional risk (what the masked data themselves may carry):
        the threshold for a public release; threshold / largest scenario probability otherwise
        (capped at 1)."""
        if self.public:
            return self.threshold
        largest = max(self.pr_attempt, self.pr_acquaintance, self.pr_breach)
        return 1.0 if largest == 0 else min(1.0, self.threshold / largest)

    def judge(self, summary: JudgedRisk) -> Verdict:
        """The verdict for the judged risk in this context (the measure is named after the
        summary's ``risk_label``: "maximum risk" for classes, "maximum record-linkage risk"
        when quasi-identifiers are perturbed)."""
        label = summary.risk_label
        if self.public:
            return Verdict(f"maximum {label}", summary.max_risk, self.threshold)
        strict = summary.strict_average_risk
        breach_risk = summary.max_risk if self.breach_uses_maximum else strict
        scenarios = {
            "deliberate": self.pr_attempt * strict,
            "acquaintance": self.pr_acquaintance * strict,
            "breach": self.pr_breach * breach_risk,
        }
        worst = max(scenarios, key=scenarios.__getitem__)
        return Verdict(
            f"overall {label} ({worst} scenario)", scenarios[worst], self.threshold, scenarios
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "public": self.public,
            "min_cell_size": self.min_cell_size,
            "pr_attempt": self.pr_attempt,
            "pr_acquaintance": self.pr_acquaintance,
            "pr_breach": self.pr_breach,
            "breach_uses_maximum": self.breach_uses_maximum,
        }
