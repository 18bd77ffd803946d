"""The risk that fits the mask: which measure a release is judged by, decided from its recipe.

An intruder matches what they know about a person (the true quasi-identifier values) with the
released records. How they can match depends on how each quasi-identifier was masked:

- **generalised** (rounding, truncation, interval grouping, top/bottom coding, merged levels,
  reduced dates) or unmasked: the released value is a deterministic coarsening of the true one,
  so the intruder coarsens their own copy the same way and matches *exactly*. Records sharing
  every released value form an equivalence class of size f and the intruder picks the right one
  with probability 1/f: the class-based measures of :mod:`deid_core.risk.classes`.
- **perturbed** (any step whose ``perturbative`` flag is set: noise, kernel smoothing, and the
  microaggregation and PRAM steps when they exist): the released value moved away from the true
  one, so an exact match says nothing (every noisy value is unique, yet nobody can match it).
  The intruder matches *within the perturbation's reach* instead.

Interval grouping that releases interval means is generalisation, not perturbation: every
record of an interval gets the same released value, distinct intervals get distinct values (a
mean lies inside its interval), so the released value is a one-to-one relabelling of the
interval. An intruder who knows a person's true value knows the interval and matches it
exactly; the equivalence classes are exactly those of the interval labels, and class sizes
describe the risk. (Microaggregation differs: its groups are formed from the data themselves,
so an intruder cannot tell from a true value alone which group it fell in.)

:func:`risk_basis` makes the decision from the recipe alone: the **class-based** measure when
every quasi-identifier is generalised or unmasked (the behaviour of the tool before this
module), otherwise the **record-linkage** measure of :func:`perturbed_risk`, built from three
matches of the released file against the intruder's source (the original data, or a source
database), in which generalised quasi-identifiers are matched exactly after the same coarsening
and perturbed ones as follows:

1. *within reach* (Cologne et al. 2012's tolerance rule): a released record matches every
   source record whose perturbed numeric values each lie within the column's reach of the
   released value (perturbed categorical values must be equal). The reach is
   :func:`deid_core.risk.linkage.masking_tolerance`'s (the half-width of uniform noise, 2 SD of
   Gaussian noise, plus half the base of absolute rounding); for a perturbed column without a
   stated reach (kernel smoothing, for instance) it is the 95th percentile of the absolute
   change the masking made, the coverage of Gaussian noise's 2 SD. With i matching records, the
   own one among them, the record's risk is 1/i (0 when its own record is out of reach): the
   probability the intruder picks the right person, as 1/f is for classes;
2. *nearest* (distance-based record linkage): each released record is linked to the source
   records nearest to it in standardized units (ties shared); the linkage rate is the share of
   records linked to their own record;
3. *interval disclosure* (sdcMicro's dRisk, :mod:`deid_core.risk.interval`, k = 0.05): the
   share of records whose original perturbed numeric values all lie within k x SD of the
   released ones.

How they combine: the per-record risk is the within-reach probability 1/i (only this match
gives each record a probability), so the **maximum risk** is its maximum (judged for public
releases, as 1/k is for classes). The **average risk** is the largest of the three shares: the
mean within-reach probability (Cologne's identifiability score under the tolerance rule), the
nearest-record linkage rate and dRisk, because the custodian cannot know which attack an
intruder uses and each estimates the share of records an intruder gets right or pins down. The
**strict average risk** is the average risk when the maximum risk is at most 1/3, otherwise the
maximum risk (as for classes; judged for non-public releases). The anonymity score is
1 - the average risk. Records whose own record is the only one within reach (risk 1) play the
part of uniques. Missing values in the quasi-identifiers are matched as a category of their own
(a missing value matches only a missing value), whatever the session's missing-value rule says
for the class-based figures.

The released file holds one draw of any random step (replicate 0); so do these figures.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from deid_core.errors import DataError
from deid_core.masking import DateShift
from deid_core.masking.dates import day_numbers, parse_dates
from deid_core.recipe import Recipe
from deid_core.risk.interval import DEFAULT_INTERVAL_K, IntervalDisclosure, interval_disclosure
from deid_core.risk.linkage import (
    LinkageResult,
    is_numeric_column,
    link_to_source,
    link_with_wildcards,
    mask_source_like,
    masking_tolerance,
    truth_positions,
)

#: The two bases a release can be judged on.
BASES = {
    "classes": "equivalence classes: the intruder matches the released values exactly",
    "record_linkage": "record linkage: the intruder matches perturbed values within their reach",
}

#: Quantile of the absolute change that serves as the reach of a perturbed column without a
#: stated one (the coverage of Gaussian noise's 2 SD).
EMPIRICAL_REACH_QUANTILE = 0.95

_STRICT_LIMIT = 1 / 3


@dataclass(frozen=True)
class RiskBasis:
    """Which measure a recipe's release is judged by (see :func:`risk_basis`)."""

    quasi_identifiers: tuple[str, ...]
    perturbed: tuple[str, ...]
    generalised: tuple[str, ...]
    matches: tuple[tuple[str, str], ...]

    @property
    def kind(self) -> str:
        """``"record_linkage"`` when any quasi-identifier is perturbed, else ``"classes"``."""
        return "record_linkage" if self.perturbed else "classes"

    @property
    def class_based(self) -> bool:
        return not self.perturbed

    @property
    def name(self) -> str:
        """The judged measure in plain words."""
        if self.class_based:
            return "equivalence classes (exact matching of the released values)"
        return (
            "record linkage within the perturbation's reach (with nearest-record linkage and "
            "interval disclosure)"
        )

    @property
    def reason(self) -> str:
        """Why this measure, in one sentence."""
        if self.class_based:
            return (
                "Every quasi-identifier is released as it is or generalised, so an intruder "
                "matches the released values exactly and the equivalence classes give the risk."
            )
        listed = ", ".join(self.perturbed)
        return (
            f"The values of {listed} are perturbed: nobody can match them exactly, so the "
            "equivalence classes (every perturbed value unique) do not describe the risk; an "
            "intruder matches them within the perturbation's reach instead."
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "basis": self.kind,
            "measure": self.name,
            "perturbed": list(self.perturbed),
            "generalised": list(self.generalised),
            "matches": dict(self.matches),
        }


def _match_text(recipe: Recipe, column: str) -> str:
    """How the intruder matches ``column``, from its steps alone."""
    steps = recipe.steps_for(column)
    if not recipe.perturbing_steps(column):
        if not steps and column not in recipe.data_columns:
            return "exact value (released as it is)"
        return "exact value (generalised: the intruder coarsens their own copy the same way)"
    return f"within the perturbation's reach ({_perturbations(recipe, column)}: never exact)"


def _perturbations(recipe: Recipe, column: str) -> str:
    labels = (step.label.lower() for step in recipe.perturbing_steps(column))
    return "perturbed by " + ", ".join(dict.fromkeys(labels))


def _measured_match_text(recipe: Recipe, column: str, numeric: bool, reach: float | None) -> str:
    """How the intruder matches a perturbed ``column``, with the reach found on the data."""
    how = _perturbations(recipe, column)
    if not numeric:
        return f"the released category, which may not be the true one ({how})"
    if reach is None:
        return f"exact value ({how}, but no value moved)"
    return f"within +/-{reach:.4g} of the released value, or the nearest released record ({how})"


def risk_basis(recipe: Recipe) -> RiskBasis:
    """The measure ``recipe``'s release is judged by: class-based when every quasi-identifier
    is unmasked or generalised, record linkage when any has a perturbative step, a column step
    or a whole-data step that writes it (multivariate microaggregation: its groups come from the
    data, so a true value does not say which group it fell in; see the module notes), with the
    intruder's match for each quasi-identifier."""
    qis = recipe.roles.quasi_identifiers
    perturbed = tuple(c for c in qis if recipe.perturbing_steps(c))
    generalised = tuple(c for c in qis if c not in perturbed)
    matches = tuple((c, _match_text(recipe, c)) for c in qis)
    return RiskBasis(qis, perturbed, generalised, matches)


def perturbation_reach(
    recipe: Recipe, original: pd.DataFrame, released: pd.DataFrame, columns: Sequence[str]
) -> dict[str, float]:
    """How far each perturbed numeric column's released values may be from the true ones:
    :func:`masking_tolerance`'s reach when the steps state one, else the 95th percentile of
    the absolute change (columns whose values did not move are left out: they are matched
    exactly)."""
    stated = masking_tolerance(recipe, original)
    reach: dict[str, float] = {}
    for column in columns:
        if column in stated:
            reach[column] = stated[column]
            continue
        true = pd.to_numeric(original[column], errors="coerce").to_numpy(float, na_value=np.nan)
        shown = pd.to_numeric(released[column], errors="coerce").to_numpy(float, na_value=np.nan)
        change = np.abs(shown - true)
        change = change[np.isfinite(change)]
        if change.size:
            value = float(np.quantile(change, EMPIRICAL_REACH_QUANTILE))
            if value > 0:
                reach[column] = value
    return reach


def _numeric_reach(
    recipe: Recipe, original: pd.DataFrame, released: pd.DataFrame, basis: RiskBasis
) -> tuple[list[str], dict[str, float]]:
    """The perturbed quasi-identifiers that are numeric (in both files) and their reach."""
    numeric = [
        c
        for c in basis.perturbed
        if is_numeric_column(released[c]) and is_numeric_column(original[c])
    ]
    return numeric, perturbation_reach(recipe, original, released, numeric)


def intruder_source(recipe: Recipe, source: pd.DataFrame, basis: RiskBasis) -> pd.DataFrame:
    """The source as the intruder compares it: generalised quasi-identifiers coarsened by the
    recipe's deterministic steps, perturbed ones as they truly are (plus the record id)."""
    columns = list(basis.generalised)
    frame = mask_source_like(recipe, source, columns)
    for column in basis.perturbed:
        frame[column] = source[column]
    record_id = recipe.roles.record_id
    if record_id is not None and record_id in source.columns:
        frame[record_id] = source[record_id]
    return frame[[*basis.quasi_identifiers, *([record_id] if record_id in frame else [])]]


@dataclass(frozen=True)
class PerturbedRisk:
    """The record-linkage risk of a release whose quasi-identifiers are partly perturbed (see
    the module notes for the matches and how they combine)."""

    basis: RiskBasis
    n_records: int
    reach: dict[str, float]
    matches: tuple[tuple[str, str], ...]
    within_reach: LinkageResult = field(repr=False, compare=False)
    nearest: LinkageResult = field(repr=False, compare=False)
    interval: IntervalDisclosure | None = field(repr=False, compare=False)

    #: How the verdict names the judged figures ("maximum record-linkage risk").
    risk_label: ClassVar[str] = "record-linkage risk"

    @property
    def quasi_identifiers(self) -> tuple[str, ...]:
        return self.basis.quasi_identifiers

    @property
    def record_risk(self) -> np.ndarray:
        """Per record, 1/i with i the source records within reach, its own among them (else 0)."""
        return self.within_reach.match_probability()

    @property
    def candidates(self) -> np.ndarray:
        """Per record, the number of source records within reach (its own or not)."""
        return self.within_reach.match_count

    @property
    def max_risk(self) -> float:
        return float(self.record_risk.max(initial=0.0))

    @property
    def within_reach_average(self) -> float:
        """Mean within-reach probability (Cologne's identifiability, tolerance rule)."""
        return self.within_reach.identifiability_score

    @property
    def linkage_rate(self) -> float:
        """Share of records whose nearest source record (standardized units, ties shared) is
        their own."""
        return self.nearest.identifiability_score

    @property
    def interval_share(self) -> float | None:
        return None if self.interval is None else self.interval.share

    @property
    def average_risk(self) -> float:
        """The largest of the within-reach average, the linkage rate and dRisk."""
        shares = [self.within_reach_average, self.linkage_rate]
        if self.interval is not None:
            shares.append(self.interval.share)
        return float(max(shares))

    @property
    def average_source(self) -> str:
        """Which of the three shares is the average risk."""
        options = [
            ("within reach", self.within_reach_average),
            ("nearest-record linkage", self.linkage_rate),
        ]
        if self.interval is not None:
            options.append(("interval disclosure", self.interval.share))
        return max(options, key=lambda item: item[1])[0]

    @property
    def strict_average_risk(self) -> float:
        return self.average_risk if self.max_risk <= _STRICT_LIMIT + 1e-12 else self.max_risk

    @property
    def anonymity_score(self) -> float:
        return 1.0 - self.average_risk

    @property
    def certain(self) -> int:
        """Records whose own record is the only source record within reach (risk 1)."""
        return int(np.count_nonzero(self.record_risk >= 1.0 - 1e-12))

    @property
    def fewest_candidates(self) -> int:
        """The fewest source records within reach of a record whose own record is among them
        (0 when no record's own record is within reach)."""
        hit = self.within_reach.correct & (self.candidates > 0)
        return int(self.candidates[hit].min()) if hit.any() else 0

    @property
    def out_of_reach(self) -> int:
        """Records whose own record is not within reach (the intruder cannot link them)."""
        return int(np.count_nonzero(~self.within_reach.correct))

    def to_dict(self) -> dict[str, object]:
        return {
            **self.basis.to_dict(),
            "matches": dict(self.matches),
            "reach": dict(self.reach),
            "max_risk": self.max_risk,
            "average_risk": self.average_risk,
            "strict_average_risk": self.strict_average_risk,
            "anonymity_score": self.anonymity_score,
            "within_reach_average": self.within_reach_average,
            "linkage_rate": self.linkage_rate,
            "interval_disclosure": None if self.interval is None else self.interval.to_dict(),
            "certain": self.certain,
            "fewest_candidates": self.fewest_candidates,
            "out_of_reach": self.out_of_reach,
        }

    def __str__(self) -> str:
        lines = [
            "Re-identification risk by record linkage (perturbed quasi-identifiers: "
            + ", ".join(self.basis.perturbed)
            + ")",
            f"  records                         {self.n_records}",
            f"  maximum risk (within reach)     {self.max_risk:.4f}",
            f"  average risk                    {self.average_risk:.4f} ({self.average_source})",
            f"  strict average risk             {self.strict_average_risk:.4f}",
            f"  within-reach average            {self.within_reach_average:.4f}",
            f"  nearest-record linkage rate     {self.linkage_rate:.4f}",
        ]
        if self.interval is not None:
            lines.append(
                f"  interval disclosure (dRisk)     {self.interval.share:.4f} "
                f"(k = {self.interval.k:g})"
            )
        lines.append(f"  records linked with certainty   {self.certain}")
        lines += [f"  {column}: {text}" for column, text in self.matches]
        return "\n".join(lines)


def _shifted_dates_as_days(recipe: Recipe, *frames: pd.DataFrame) -> tuple[pd.DataFrame, ...]:
    """``frames`` with each quasi-identifier that a date shift perturbs as whole days since
    1970-01-01, so that it is matched like a number within the shift's reach (dates are not
    numbers to the linkage); other columns as they are, the frames themselves unchanged."""
    qis = recipe.roles.quasi_identifiers
    shifted = [
        c for c in qis if any(isinstance(step, DateShift) for step in recipe.perturbing_steps(c))
    ]
    if not shifted:
        return frames
    out = []
    for frame in frames:
        days = {
            c: day_numbers(parse_dates(frame[c], c, "Date shifting per person"))
            for c in shifted
            if c in frame.columns
        }
        out.append(frame.assign(**days))
    return tuple(out)


def perturbed_risk(
    recipe: Recipe,
    original: pd.DataFrame,
    released: pd.DataFrame,
    source: pd.DataFrame | None = None,
    k: float = DEFAULT_INTERVAL_K,
    *,
    blanks_match_any: bool = False,
    truth: np.ndarray | None = None,
) -> PerturbedRisk:
    """The record-linkage risk of ``released`` (the masked ``original``) against ``source``
    (default: ``original``); dRisk with interval half-width ``k`` x SD compares ``original``
    and ``released`` row by row. ``blanks_match_any``: a missing released quasi-identifier
    matches any source value (:func:`deid_core.risk.linkage.link_with_wildcards`), as it does
    when the release has suppressed cells (the file shows them blank, like values missing
    before); otherwise a missing value matches a missing one only. ``truth``: the position in
    ``source`` of each released record (default :func:`truth_positions`; give it when the
    release leaves records out, e.g. a subsample of the source, ``original`` then holding the
    released records' true values). A DataError when no quasi-identifier is perturbed (the
    class-based measure applies)."""
    basis = risk_basis(recipe)
    if basis.class_based:
        raise DataError(
            "No quasi-identifier is perturbed: the release is judged by its equivalence classes."
        )
    if len(released) != len(original):
        raise DataError("The released data must have one row per original record.")
    source = original if source is None else source
    absent = [c for c in basis.quasi_identifiers if c not in source.columns]
    if absent:
        raise DataError(f"The source lacks quasi-identifier column(s): {', '.join(absent)}.")
    compared = intruder_source(recipe, source, basis)  # from the dates as they are
    original, released, source, compared = _shifted_dates_as_days(
        recipe, original, released, source, compared
    )
    qis = list(basis.quasi_identifiers)
    numeric, reach = _numeric_reach(recipe, original, released, basis)
    if truth is None:
        truth = truth_positions(released, source, recipe.roles.record_id)
    blanks = released[qis].isna().to_numpy() if blanks_match_any else None
    if reach:
        within = link_with_wildcards(released, compared, qis, truth, blanks, "tolerance", reach)
    else:  # nothing moved measurably: within reach means equal
        within = link_with_wildcards(released, compared, qis, truth, blanks, "exact")
    nearest = link_with_wildcards(
        released, compared, qis, truth, blanks, "nearest", exact=list(basis.generalised)
    )
    interval = interval_disclosure(original, released, numeric, k) if numeric else None
    matches = tuple(
        (
            column,
            _measured_match_text(recipe, column, column in numeric, reach.get(column))
            if column in basis.perturbed
            else text,
        )
        for column, text in basis.matches
    )
    return PerturbedRisk(
        basis=basis,
        n_records=len(released),
        reach=reach,
        matches=matches,
        within_reach=within,
        nearest=nearest,
        interval=interval,
    )


def within_reach_counter(
    recipe: Recipe,
    original: pd.DataFrame,
    released: pd.DataFrame,
    *,
    blanks_match_any: bool = False,
) -> Callable[[np.ndarray], np.ndarray]:
    """A function ``count(selected)`` giving, for every person (a record of ``original`` with
    its true values), how many of the ``selected`` released records lie within the
    perturbation's reach of them (equal on the generalised quasi-identifiers after the same
    coarsening): each person's class for attribute disclosure when a quasi-identifier is
    perturbed (:mod:`deid_core.risk.attribute`). The reach is :func:`perturbation_reach`'s;
    dates a date shift perturbs are compared as whole days, as :func:`perturbed_risk` does.
    ``blanks_match_any``: a blank released quasi-identifier (a suppressed cell) matches any
    true value, so a released record is within reach of a person when the values it shows are
    (:func:`deid_core.risk.linkage.link_with_wildcards`'s rule, seen from the person)."""
    basis = risk_basis(recipe)
    if basis.class_based:
        raise DataError("No quasi-identifier is perturbed: the classes are equivalence classes.")
    qis = list(basis.quasi_identifiers)
    people = intruder_source(recipe, original, basis)
    original, released, people = _shifted_dates_as_days(recipe, original, released, people)
    _, reach = _numeric_reach(recipe, original, released, basis)
    nobody = np.full(len(people), -1, dtype=np.int64)
    shown = released[qis]
    hidden = shown.isna().to_numpy() if blanks_match_any else np.zeros(shown.shape, dtype=bool)

    def matches(targets: pd.DataFrame, columns: list[str]) -> np.ndarray:
        """For each person, the number of ``targets`` within reach on ``columns``."""
        if not columns:
            return np.full(len(people), len(targets), dtype=np.int64)
        part = {c: r for c, r in reach.items() if c in columns}
        if part:
            result = link_to_source(people, targets, columns, nobody, "tolerance", tolerance=part)
        else:
            result = link_to_source(people, targets, columns, nobody, "exact")
        return result.match_count

    def count(selected: np.ndarray) -> np.ndarray:
        chosen = np.asarray(selected, dtype=bool)
        if not chosen.any():
            return np.zeros(len(people), dtype=np.int64)
        targets, flags = shown[chosen], hidden[chosen]
        patterns, group = np.unique(flags, axis=0, return_inverse=True)
        total = np.zeros(len(people), dtype=np.int64)
        for index, pattern in enumerate(patterns):
            rows = np.flatnonzero(group.reshape(-1) == index)
            columns = [c for c, blank in zip(qis, pattern, strict=True) if not blank]
            total += matches(targets.iloc[rows], columns)
        return total

    return count


__all__ = [
    "BASES",
    "EMPIRICAL_REACH_QUANTILE",
    "PerturbedRisk",
    "RiskBasis",
    "intruder_source",
    "perturbation_reach",
    "perturbed_risk",
    "risk_basis",
    "within_reach_counter",
]
