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

from dataclasses import dataclass, field, replace
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


#: The release contexts a user chooses from, in words.
CONTEXT_TEXT = {
    "public": "public release",
    "non_public": "release shared under a data-use agreement",
    "internal": "internal release (within the custodian's organisation)",
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


#: How a verdict names what its figure counts.
UNIT_TEXT = {"people": "per person", "records": "per record"}
#: How a verdict names the missing-value rule its figure is read under.
MISSING_TEXT = {
    "wildcard": "a missing or suppressed value matches any value",
    "category": "a missing value is a category of its own",
}


#: Why a release with no quasi-identifier is not judged.
NO_QUASI_IDENTIFIER = (
    "no quasi-identifier is marked, so every record falls in one class and the risk figure "
    "says nothing about re-identification; mark the columns an intruder could know (age, sex, "
    "dates, area, codes...)"
)


@dataclass(frozen=True)
class Verdict:
    """How the judged risk compares with the threshold: the measure, what it counts
    (``unit``), the missing-value rule it is read under, the release context, and (when the
    user asked for HIPAA Safe Harbor) the Safe Harbor items the release does not meet, each of
    which fails the verdict whatever the risk."""

    measure: str
    value: float
    threshold: float
    scenarios: dict[str, float] = field(default_factory=dict)
    unit: str | None = None
    missing: str | None = None
    context: str = "public"
    safe_harbor_unmet: tuple[str, ...] = ()
    not_judged: str = ""
    """Why the figure cannot be judged (e.g. no quasi-identifier is marked): then the verdict
    is neither "Meets" nor "Above" but says this, and the release does not meet the
    threshold."""

    @property
    def risk_meets(self) -> bool:
        """Whether the risk alone is within the threshold (never when it is not judged)."""
        return not self.not_judged and self.value <= self.threshold + 1e-12

    @property
    def meets(self) -> bool:
        return self.risk_meets and not self.safe_harbor_unmet

    @property
    def excess(self) -> float:
        """How far above the threshold (0 when it is met or not judged)."""
        return 0.0 if self.not_judged else max(0.0, self.value - self.threshold)

    @property
    def judged_on(self) -> str:
        """What the figure counts and how it is read, in words."""
        parts = [UNIT_TEXT.get(self.unit or "", "")] if self.unit else []
        if self.missing:
            parts.append(MISSING_TEXT.get(self.missing, self.missing))
        parts.append(CONTEXT_TEXT.get(self.context, self.context))
        return "; ".join(p for p in parts if p)

    def with_safe_harbor(self, unmet: tuple[str, ...]) -> Verdict:
        """This verdict with the Safe Harbor items the release does not meet."""
        return replace(self, safe_harbor_unmet=tuple(unmet))

    @property
    def text(self) -> str:
        return str(self)

    def __str__(self) -> str:
        if self.not_judged:
            text = f"Not judged: {self.not_judged}"
        elif self.risk_meets:
            head = f"{self.measure} {self.value:.3f} <= {self.threshold:.3g}"
            text = f"Meets the threshold: {head}" if self.meets else f"Risk within: {head}"
        else:
            text = (
                f"Above the threshold by {self.excess:.3f}: {self.measure} {self.value:.3f} > "
                f"{self.threshold:.3g}"
            )
        text += f" ({self.judged_on})." if self.judged_on else "."
        if self.safe_harbor_unmet:
            text += " Safe Harbor not met: " + "; ".join(self.safe_harbor_unmet) + "."
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "meets": self.meets,
            "risk_meets": self.risk_meets,
            "measure": self.measure,
            "value": self.value,
            "threshold": self.threshold,
            "unit": self.unit,
            "missing": self.missing,
            "context": self.context,
            "scenarios": dict(self.scenarios),
            "safe_harbor_unmet": list(self.safe_harbor_unmet),
            "judged": not self.not_judged,
            "not_judged": self.not_judged or None,
            "text": self.text,
        }


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
    kind: str | None = None
    """"public", "non_public" (shared under a data-use agreement) or "internal"; None: from
    ``public``. Non-public and internal releases are both judged by the attack scenarios."""
    intruder_holds_source: bool = True
    """Whether an intruder may hold the source file (the custodian's own data, a registry it
    came from): then a release is also judged by exact linkage to the source
    (:func:`deid_core.risk.release.source_linkage`), the stricter figure after local
    suppression or subsampling."""

    def __post_init__(self) -> None:
        kind = self.kind if self.kind is not None else ("public" if self.public else "non_public")
        if kind not in CONTEXT_TEXT:
            raise DataError(
                "Release context: the kind must be one of " + ", ".join(CONTEXT_TEXT) + "."
            )
        if (kind == "public") != bool(self.public):
            raise DataError("Release context: a public release has kind 'public'.")
        object.__setattr__(self, "kind", kind)
        if not isinstance(self.intruder_holds_source, bool):
            raise DataError("Release context: 'intruder_holds_source' must be true or false.")
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
        read = {
            "unit": getattr(summary, "unit", None),
            "missing": getattr(summary, "missing", None),
            "context": self.kind or "public",
        }
        marked = getattr(summary, "quasi_identifiers", None)
        if marked is not None and len(marked) == 0:
            read["not_judged"] = NO_QUASI_IDENTIFIER
        if self.public:
            return Verdict(f"maximum {label}", summary.max_risk, self.threshold, **read)
        strict = summary.strict_average_risk
        breach_risk = summary.max_risk if self.breach_uses_maximum else strict
        scenarios = {
            "deliberate": self.pr_attempt * strict,
            "acquaintance": self.pr_acquaintance * strict,
            "breach": self.pr_breach * breach_risk,
        }
        worst = max(scenarios, key=scenarios.__getitem__)
        return Verdict(
            f"overall {label} ({worst} scenario)",
            scenarios[worst],
            self.threshold,
            scenarios,
            **read,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "public": self.public,
            "min_cell_size": self.min_cell_size,
            "pr_attempt": self.pr_attempt,
            "pr_acquaintance": self.pr_acquaintance,
            "pr_breach": self.pr_breach,
            "breach_uses_maximum": self.breach_uses_maximum,
            "kind": self.kind,
            "intruder_holds_source": self.intruder_holds_source,
        }
