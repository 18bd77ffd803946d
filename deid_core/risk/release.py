"""The release as exported: its class risk counted in people, and the risk of linking it to the
source, from one value that describes the file exactly as it is written.

**The released file.** :class:`ReleasedKeys` holds, for each released row, the codes of its
masked quasi-identifier values, which of them an intruder can match on (``observed``: False for
a value suppressed by the release and, under the wildcard rule, for a value missing in the
original), and the person each row belongs to (the record id; one person per row without one).
It is built by :class:`deid_core.workspace.Workspace` from the recipe, or by
:meth:`ReleasedKeys.from_frame` from a file re-read from disk: both must give the same figures.

**Compatible people.** A released row ``r`` and a row ``s`` are *compatible* when they agree on
every quasi-identifier matchable in both (a suppressed or, under the wildcard rule, missing value
matches any value; sdcMicro's ``alpha = 1``). For each released row, ``f_r`` is the number of
distinct people with a compatible row (:func:`compatible_people_counts`): two visits of one
patient count once, and a suppressed row widens every class it is compatible with.

**Class risk in people** (:func:`class_risk`): a person is exposed by their riskiest row, so a
person's class size is the smallest ``f_r`` over their rows and their risk ``1 / min_r f_r``
(El Emam & Malin's per-record risk ``1/f``, with people in place of records); k, uniques,
maximum, average (over people) and strict-average risk are then taken over people
(:func:`deid_core.risk.classes.summarise_class_sizes`). With one row per person these are the
record figures of :mod:`deid_core.risk.classes` exactly.

**Linkage to the source** (:func:`source_linkage`): an intruder who holds the source (the
original file) and knows how it was masked coarsens it the same way and links each released row
to the source people compatible with it. After local suppression this is stricter than the
class risk: a row left unsuppressed whose values were unique in the source is compatible with
one source person (risk 1), even when suppressed rows of other people are compatible with it in
the release. A row's linkage risk is ``1 / (distinct source people compatible with it)`` (its own
person is always among them); a person's is the largest over their released rows; the average is
over the released people.

Cost: rows are grouped by their pattern of matchable columns (few in practice); for a target
pattern ``P`` and each shared set ``S = P & Q`` of the pool's patterns ``Q``, target classes and
pool people meet in one join on their values on ``S``
(:func:`deid_core.masking.base.equal_key_pairs`), so the work is the
number of (class, compatible person) pairs: the rows, plus, for rows with suppressed or missing
values, the classes they are compatible with. :data:`MAX_PAIRS` bounds that work.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from deid_core.errors import DataError
from deid_core.masking.base import equal_key_pairs
from deid_core.risk.classes import (
    SMALL_CLASS_SIZE,
    RiskSummary,
    check_missing_mode,
    summarise_class_sizes,
)
from deid_core.risk.judged import PerturbedRisk
from deid_core.risk.people import People, people_of
from deid_core.risk.population import SampleRisk

#: Most (class, compatible person) pairs a count of compatible people takes on (about 2 GB of
#: pairs in the worst case); beyond it, the figure is refused with a message.
MAX_PAIRS = 60_000_000
#: Target x pool rows up to which compatible people are counted pair by pair
#: (:func:`_compatible_directly`; at most MAX_PAIRS, so that path never needs the budget)...
DIRECT_PAIRS = 20_000_000
#: ...in blocks of about this many pairs (a bool each).
DIRECT_BLOCK = 2_000_000


# ---------------------------------------------------------------------------- the file
@dataclass(frozen=True)
class ReleasedKeys:
    """The released rows' quasi-identifier codes (``codes``: n x m non-negative integers, equal
    codes for equal values within a column), which values are matchable (``observed``), the
    person of each row (``people``; None: one person per row) and the missing-value rule the
    figures are read under."""

    quasi_identifiers: tuple[str, ...]
    codes: np.ndarray
    observed: np.ndarray
    people: People | None = None
    missing: str = "category"

    def __post_init__(self) -> None:
        check_missing_mode(self.missing)
        n, m = self.codes.shape
        if self.observed.shape != (n, m) or m != len(self.quasi_identifiers):
            raise DataError("Released keys: codes and observed must be rows x quasi-identifiers.")
        if self.people is not None and self.people.n_rows != n:
            raise DataError("Released keys: one person code per released row is needed.")

    @property
    def n_rows(self) -> int:
        return int(self.codes.shape[0])

    @property
    def person_codes(self) -> np.ndarray:
        """The person of each row, 0..n_people-1 (each row its own without a record id)."""
        return np.arange(self.n_rows) if self.people is None else self.people.codes

    @property
    def n_people(self) -> int:
        return self.n_rows if self.people is None else self.people.n_people

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        quasi_identifiers: Sequence[str],
        record_id: str | None = None,
        missing: str = "wildcard",
    ) -> ReleasedKeys:
        """The keys of a released file as read back (a blank cell: missing; under the
        ``"wildcard"`` rule it matches any value, which is how a file with suppressed cells is
        read, since they cannot be told from values missing before)."""
        missing = check_missing_mode(missing)
        qis = tuple(quasi_identifiers)
        absent = [c for c in qis if c not in frame.columns]
        if absent:
            raise DataError(f"The file lacks quasi-identifier column(s): {', '.join(absent)}.")
        codes, observed = frame_codes(frame, qis, missing)
        people = None
        if record_id is not None:
            if record_id not in frame.columns:
                raise DataError(f"The file has no record id column '{record_id}'.")
            found = people_of(frame[record_id])
            people = found if found.repeats else None
        return cls(qis, codes, observed, people, missing)


def frame_codes(
    frame: pd.DataFrame, qis: Sequence[str], missing: str
) -> tuple[np.ndarray, np.ndarray]:
    """Codes (0 for a missing value, 1.. for the values) and matchable flags of ``qis``: a
    missing value is unmatchable under the ``"wildcard"`` rule, a category under the other."""
    n = len(frame)
    codes = np.zeros((n, len(qis)), dtype=np.int64)
    observed = np.ones((n, len(qis)), dtype=bool)
    for j, column in enumerate(qis):
        values, _ = pd.factorize(frame[column], use_na_sentinel=True)
        absent = values < 0
        codes[:, j] = np.where(absent, 0, values + 1)  # a missing value: code 0 (a category)
        if missing == "wildcard":
            observed[:, j] = ~absent
    return codes, observed


def shared_codes(
    first: pd.DataFrame, second: pd.DataFrame, qis: Sequence[str], missing: str
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Codes and matchable flags of two files on the same quasi-identifiers, coded together so
    that equal values get equal codes in both (a released file and the intruder's source)."""
    both = pd.concat([first[list(qis)], second[list(qis)]], ignore_index=True)
    codes, observed = frame_codes(both, qis, missing)
    n = len(first)
    return (codes[:n], observed[:n]), (codes[n:], observed[n:])


# ---------------------------------------------------------------------------- counting
def _row_keys(codes: np.ndarray) -> np.ndarray:
    """One integer per row, equal exactly for equal rows of ``codes`` (n x s)."""
    n = codes.shape[0]
    if codes.shape[1] == 0:
        return np.zeros(n, dtype=np.int64)
    key = np.zeros(n, dtype=np.int64)
    span = 1
    for j in range(codes.shape[1]):
        column = codes[:, j]
        levels = int(column.max()) + 1 if n else 1
        if span * levels >= 2**62:  # re-code the key so far densely before it overflows
            key = pd.factorize(key)[0].astype(np.int64)
            span = int(key.max()) + 1 if n else 1
        key = key * levels + column
        span *= levels
    return key


def _patterns(observed: np.ndarray) -> np.ndarray:
    bits = np.zeros(observed.shape[0], dtype=np.int64)
    for j in range(observed.shape[1]):
        bits |= observed[:, j].astype(np.int64) << j
    return bits


def compatible_people_counts(
    target_codes: np.ndarray,
    target_observed: np.ndarray,
    pool_codes: np.ndarray,
    pool_observed: np.ndarray,
    pool_people: np.ndarray,
) -> np.ndarray:
    """For each target row, the number of distinct people (``pool_people``, one code per pool
    row) with a pool row compatible with it: agreeing on every column matchable in both (see the
    module docstring). Codes must be shared by the two (equal values, equal codes).

    When every value of both is matchable, compatible means equal on every column, so a target
    row's count is the number of distinct people in its class of the pool
    (:func:`people_in_classes`), one pass over int64 keys; otherwise, on small inputs
    (target x pool rows at most :data:`DIRECT_PAIRS`), every pair is compared
    (:func:`_compatible_directly`), and on larger ones rows are grouped by their patterns of
    matchable columns (:func:`_compatible_by_patterns`)."""
    n_target, m = target_codes.shape
    if pool_codes.shape[1] != m:
        raise DataError("The released rows and the source have different quasi-identifiers.")
    if n_target == 0 or pool_codes.shape[0] == 0:
        return np.zeros(n_target, dtype=np.int64)
    if bool(np.all(target_observed)) and bool(np.all(pool_observed)):
        keys = _row_keys(np.vstack([pool_codes, target_codes]))
        classes, uniques = pd.factorize(keys)
        classes = classes.astype(np.int64)
        n_pool = pool_codes.shape[0]
        # A target class no pool row has gets a class of its own, with no people in it.
        per_class = people_in_classes(classes[:n_pool], pool_people, len(uniques))
        return per_class[classes[n_pool:]]
    if n_target * pool_codes.shape[0] <= DIRECT_PAIRS:
        return _compatible_directly(
            target_codes, target_observed, pool_codes, pool_observed, pool_people
        )
    return _compatible_by_patterns(
        target_codes, target_observed, pool_codes, pool_observed, pool_people
    )


def people_in_classes(
    class_of: np.ndarray, people: np.ndarray | None, n_classes: int
) -> np.ndarray:
    """Per class ``0..n_classes-1``, the number of distinct people among its rows
    (``class_of``: the class of each row; ``people``: the person of each row, codes >= 0, or
    None: one person per row, then the class sizes): the distinct (class, person) pairs,
    counted by class."""
    class_of = np.asarray(class_of, dtype=np.int64)
    if people is None:
        return np.bincount(class_of, minlength=n_classes).astype(np.int64)
    people = np.asarray(people, dtype=np.int64)
    radix = int(people.max()) + 1 if people.size else 1
    pairs = pd.unique(class_of * radix + people)
    return np.bincount(pairs // radix, minlength=n_classes).astype(np.int64)


def _compatible_directly(
    target_codes: np.ndarray,
    target_observed: np.ndarray,
    pool_codes: np.ndarray,
    pool_observed: np.ndarray,
    pool_people: np.ndarray,
) -> np.ndarray:
    """:func:`compatible_people_counts` pair by pair, vectorised: for a block of target rows,
    the (rows x pool) matrix ``compatible = AND over columns of (not observed in the target
    row, or not observed in the pool row, or equal codes)``; its columns grouped by person
    (pool rows sorted by person, OR-reduced per person) and the people with a compatible row
    counted. Work and memory in target x pool rows (at most :data:`DIRECT_PAIRS`), without
    the per-pattern joins that cost more on small files."""
    n_target, m = target_codes.shape
    target_observed = np.asarray(target_observed, dtype=bool)
    people = np.asarray(pool_people, dtype=np.int64)
    order = np.argsort(people, kind="stable")
    codes, observed = pool_codes[order], np.asarray(pool_observed, dtype=bool)[order]
    starts = np.flatnonzero(np.r_[True, people[order][1:] != people[order][:-1]])
    counts = np.zeros(n_target, dtype=np.int64)
    block = max(1, DIRECT_BLOCK // max(1, order.size))
    for first in range(0, n_target, block):
        rows = slice(first, first + block)
        compatible = np.ones((min(block, n_target - first), order.size), dtype=bool)
        for j in range(m):
            compatible &= (
                ~target_observed[rows, j, None]
                | ~observed[None, :, j]
                | (target_codes[rows, j, None] == codes[None, :, j])
            )
        counts[rows] = np.logical_or.reduceat(compatible, starts, axis=1).sum(axis=1)
    return counts


def _compatible_by_patterns(
    target_codes: np.ndarray,
    target_observed: np.ndarray,
    pool_codes: np.ndarray,
    pool_observed: np.ndarray,
    pool_people: np.ndarray,
) -> np.ndarray:
    """:func:`compatible_people_counts` for any matchable values: target rows grouped by their
    pattern of matchable columns, each pattern's classes joined to the pool's people on the
    columns matchable in both (see the module docstring)."""
    n_target, m = target_codes.shape
    counts = np.zeros(n_target, dtype=np.int64)
    target_bits = _patterns(target_observed)
    pool_bits = _patterns(pool_observed)
    pool_people = np.asarray(pool_people, dtype=np.int64)
    pool_patterns = np.unique(pool_bits)
    radix = int(pool_people.max()) + 1
    budget = MAX_PAIRS
    for pattern in np.unique(target_bits):
        pattern = int(pattern)
        rows = np.flatnonzero(target_bits == pattern)
        own = [j for j in range(m) if pattern >> j & 1]
        # The target rows of this pattern form classes of equal values on its columns.
        class_of, distinct = pd.factorize(_row_keys(target_codes[np.ix_(rows, own)]))
        class_of = class_of.astype(np.int64)
        first = np.empty(len(distinct), dtype=np.int64)
        first[class_of[::-1]] = np.arange(rows.size - 1, -1, -1)
        representatives = rows[first]
        n_classes = representatives.size
        shared_of = pool_patterns & pattern
        everywhere = np.zeros(0, dtype=np.int64)  # people compatible with every class
        if np.any(shared_of == 0):
            loose = np.isin(pool_bits, pool_patterns[shared_of == 0])
            everywhere = np.unique(pool_people[loose])
        pairs = []
        for shared in np.unique(shared_of[shared_of != 0]):
            shared = int(shared)
            cols = [j for j in range(m) if shared >> j & 1]
            in_group = np.isin(pool_bits, pool_patterns[shared_of == shared])
            keys = _row_keys(
                np.vstack(
                    [target_codes[np.ix_(representatives, cols)], pool_codes[in_group][:, cols]]
                )
            )
            keys = pd.factorize(keys)[0].astype(np.int64)  # dense: below the rows' number
            n_keys = int(keys.max()) + 1
            left = keys[:n_classes]
            right = pd.unique(keys[n_classes:] * radix + pool_people[in_group])  # (key, person)
            if everywhere.size:
                right = right[~np.isin(right % radix, everywhere)]
            right_key = right // radix
            # The pairs the join makes: per key, its classes times its people.
            budget -= int(
                np.bincount(left, minlength=n_keys) @ np.bincount(right_key, minlength=n_keys)
            )
            if budget < 0:
                raise DataError(
                    "Counting the people compatible with each released row would take too much "
                    f"memory here (over {MAX_PAIRS:,} pairs of a class and a compatible person): "
                    "too many suppressed or missing quasi-identifier values. Generalise first, "
                    "or count under the category rule for missing values."
                )
            cls, at = equal_key_pairs(left, right_key)
            pairs.append(cls * radix + right[at] % radix)
        per_class = np.zeros(n_classes, dtype=np.int64)
        if pairs:
            distinct = pd.unique(np.concatenate(pairs))
            per_class = np.bincount(distinct // radix, minlength=n_classes)
        per_class = per_class + everywhere.size
        counts[rows] = per_class[class_of]
    return counts


def distinct_patterns(keys: ReleasedKeys) -> int:
    """The number of distinct released value patterns (an unmatchable value counted as a value
    of its own): the classes reported beside compatible-class sizes."""
    shown = np.where(keys.observed, keys.codes + 1, 0)
    return int(pd.unique(_row_keys(shown)).size) if keys.n_rows else 0


# ---------------------------------------------------------------------------- class risk
def class_risk(keys: ReleasedKeys, small_class_size: int = SMALL_CLASS_SIZE) -> RiskSummary:
    """The release's class risk (see the module docstring): per person when a person has
    several rows, per record otherwise."""
    person = keys.person_codes
    per_row = compatible_people_counts(keys.codes, keys.observed, keys.codes, keys.observed, person)
    n_classes = distinct_patterns(keys)
    qis = keys.quasi_identifiers
    if keys.people is None:
        partition = bool(keys.observed.all())
        return summarise_class_sizes(
            per_row, n_classes, qis, small_class_size, missing=keys.missing, partition=partition
        )
    per_person = np.full(keys.n_people, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(per_person, person, per_row)
    return summarise_class_sizes(
        per_person,
        n_classes,
        qis,
        small_class_size,
        missing=keys.missing,
        unit="people",
        n_rows=keys.n_rows,
        row_class_size=per_row,
    )


# ---------------------------------------------------------------------------- the source
@dataclass(frozen=True)
class SourceLinkage:
    """The risk of linking the release to the source by exact matching of the masked values
    (see the module docstring): per released row ``1 / candidates``, per person the largest."""

    quasi_identifiers: tuple[str, ...]
    candidates: np.ndarray = field(repr=False, compare=False)
    """Per released row, the distinct source people compatible with it."""
    person_risk: np.ndarray = field(repr=False, compare=False)
    """Per released person, their largest row risk."""
    unit: str = "records"
    missing: str = "category"
    n_source_people: int = 0

    risk_label: ClassVar[str] = "risk of exact linkage to the source"

    @property
    def n_people(self) -> int:
        return int(self.person_risk.size)

    @property
    def max_risk(self) -> float:
        return float(self.person_risk.max()) if self.person_risk.size else 0.0

    @property
    def average_risk(self) -> float:
        """Mean over released people of their linkage risk."""
        return float(self.person_risk.mean()) if self.person_risk.size else 0.0

    @property
    def strict_average_risk(self) -> float:
        """The average risk when the maximum is at most 1/3, else the maximum (as for classes)."""
        return self.average_risk if self.max_risk <= 1 / 3 + 1e-12 else self.max_risk

    @property
    def certain(self) -> int:
        """Released people linked with certainty (one compatible source person)."""
        return int(np.count_nonzero(self.person_risk >= 1.0))

    def to_dict(self) -> dict[str, object]:
        return {
            "measure": self.risk_label,
            "unit": self.unit,
            "missing": self.missing,
            "n_people": self.n_people,
            "n_source_people": self.n_source_people,
            "max_risk": self.max_risk,
            "average_risk": self.average_risk,
            "strict_average_risk": self.strict_average_risk,
            "certain": self.certain,
        }

    def __str__(self) -> str:
        return "\n".join(
            [
                "Linkage to the source (an intruder who holds the original file)",
                f"  released {self.unit:<20}{self.n_people}",
                f"  maximum risk                {self.max_risk:.4f}",
                f"  average risk (over {self.unit}) {self.average_risk:.4f}",
                f"  linked with certainty       {self.certain}",
            ]
        )


def source_linkage(
    released: ReleasedKeys,
    source_codes: np.ndarray,
    source_observed: np.ndarray,
    source_people: np.ndarray,
) -> SourceLinkage:
    """Linkage of ``released`` to a source coded alike (:func:`shared_codes`; the source's
    values coarsened as the release's, its missing values unmatchable under the wildcard rule),
    ``source_people`` the person of each source row."""
    candidates = compatible_people_counts(
        released.codes, released.observed, source_codes, source_observed, source_people
    )
    n_source = int(pd.unique(np.asarray(source_people)).size)
    return linkage_of_candidates(
        released.quasi_identifiers, candidates, released.people, released.missing, n_source
    )


def linkage_of_candidates(
    quasi_identifiers: Sequence[str],
    candidates: np.ndarray,
    people: People | None,
    missing: str,
    n_source_people: int,
) -> SourceLinkage:
    """The linkage figures from ``candidates`` (per released row, the distinct source people
    compatible with it): a row's risk ``1 / candidates``, a person's (``people``: the person
    of each released row; None: one per row) the largest over their rows."""
    risk = 1.0 / np.maximum(candidates, 1)
    if people is None:
        person_risk = risk
    else:
        person_risk = np.zeros(people.n_people, dtype=float)
        np.maximum.at(person_risk, people.codes, risk)
    return SourceLinkage(
        tuple(quasi_identifiers),
        candidates,
        person_risk,
        "people" if people is not None else "records",
        missing,
        n_source_people,
    )


# ---------------------------------------------------------------------------- the judged risk
@dataclass(frozen=True)
class OpenDataJudged:
    """A subsample's open-data risk at the sampling fraction it achieved (the intruder cannot
    know who is in the release): the Benedetti-Franconi individual risk, maximum and mean,
    counted in ``unit``."""

    sample: SampleRisk
    unit: str = "records"

    risk_label: ClassVar[str] = "open-data (Benedetti-Franconi) risk at the fraction released"

    @property
    def max_risk(self) -> float:
        return float(self.sample.bf_max)

    @property
    def average_risk(self) -> float:
        return float(self.sample.bf_mean)

    @property
    def strict_average_risk(self) -> float:
        return self.average_risk if self.max_risk <= 1 / 3 + 1e-12 else self.max_risk

    @property
    def missing(self) -> str:
        return self.sample.missing

    def to_dict(self) -> dict[str, object]:
        return {
            "measure": self.risk_label,
            "unit": self.unit,
            "sampling_fraction": self.sample.sampling_fraction,
            "max_risk": self.max_risk,
            "average_risk": self.average_risk,
            "strict_average_risk": self.strict_average_risk,
        }


#: The bases a release can be judged on, in words.
JUDGED_BASES = {
    "classes": "compatible classes of the released values",
    "source_linkage": "exact linkage to the source by an intruder who holds it",
    "record_linkage": "record linkage within the perturbation's reach",
    "open_data": "open-data risk of a sample at the fraction released",
}


@dataclass(frozen=True)
class JudgedRelease:
    """Every risk figure of one release and the one it is judged by (``basis``, a key of
    :data:`JUDGED_BASES`, with ``reason`` in plain words): its compatible classes (always),
    and where they apply the record-linkage risk of perturbed values, the linkage to the
    source and the open-data risk of a subsample. ``max_risk``, ``strict_average_risk`` and
    ``risk_label`` are the judged measure's, so a release context judges it directly."""

    classes: RiskSummary
    basis: str
    reason: str
    perturbed: PerturbedRisk | None = None
    source: SourceLinkage | None = None
    open_data: OpenDataJudged | None = None

    def __post_init__(self) -> None:
        if self.basis not in JUDGED_BASES:
            raise DataError(f"Unknown basis of judgement '{self.basis}'.")
        if self.judged is None:
            raise DataError(f"The release has no {JUDGED_BASES[self.basis]} figure to judge.")

    @property
    def judged(self) -> RiskSummary | PerturbedRisk | SourceLinkage | OpenDataJudged:
        return {
            "classes": self.classes,
            "source_linkage": self.source,
            "record_linkage": self.perturbed,
            "open_data": self.open_data,
        }[self.basis]

    @property
    def risk_label(self) -> str:
        return self.judged.risk_label

    @property
    def quasi_identifiers(self) -> tuple[str, ...]:
        """The quasi-identifiers the release is judged on (none: it cannot be judged)."""
        return tuple(self.classes.quasi_identifiers)

    @property
    def max_risk(self) -> float:
        return float(self.judged.max_risk)

    @property
    def average_risk(self) -> float:
        return float(self.judged.average_risk)

    @property
    def strict_average_risk(self) -> float:
        return float(self.judged.strict_average_risk)

    @property
    def record_risk(self) -> np.ndarray:
        """The judged measure's risk of each person (or record, in :attr:`unit`)."""
        if self.basis == "source_linkage" and self.source is not None:
            return self.source.person_risk
        if self.basis == "open_data" and self.open_data is not None:
            return np.asarray(self.open_data.sample.individual_risk, dtype=float)
        if self.basis == "record_linkage" and self.perturbed is not None:
            return self.perturbed.record_risk
        return self.classes.record_risk

    @property
    def unit(self) -> str:
        """What the judged figure counts: "people" or "records"."""
        if self.basis == "record_linkage":
            return "records"
        return getattr(self.judged, "unit", self.classes.unit)

    @property
    def missing(self) -> str:
        """The missing-value rule the judged figure is read under."""
        return self.classes.missing

    def to_dict(self) -> dict[str, object]:
        """The judged measure's own figures (as each measure gives them) with the basis, the
        measure's name, the reason, unit and rule, and every other measure under its key."""
        out: dict[str, object] = dict(self.judged.to_dict())
        out |= {
            "basis": self.basis,
            "measure": self.risk_label,
            "reason": self.reason,
            "unit": self.unit,
            "missing": self.missing,
            "max_risk": self.max_risk,
            "average_risk": self.average_risk,
            "strict_average_risk": self.strict_average_risk,
            "classes": self.classes.to_dict(),
        }
        if self.perturbed is not None:
            out["record_linkage"] = self.perturbed.to_dict()
        if self.source is not None:
            out["source_linkage"] = self.source.to_dict()
        if self.open_data is not None:
            out["open_data"] = self.open_data.to_dict()
        return out

    def __str__(self) -> str:
        lines = [
            f"Judged by: {JUDGED_BASES[self.basis]} ({self.unit})",
            f"  {self.reason}",
            f"  maximum {self.risk_label:<40}{self.max_risk:.4f}",
            f"  average (over {self.unit})  {self.average_risk:.4f}",
        ]
        return "\n".join(lines)


def choose_judged(candidates: Sequence[tuple[str, object]], public: bool) -> str:
    """The basis among ``candidates`` ((basis, figures) pairs, figures with ``max_risk`` and
    ``strict_average_risk``) that gives the highest risk in the context: the maximum risk for
    a public release, the strict average risk otherwise (the first on a tie)."""

    def measure(item: tuple[str, object]) -> float:
        figures = item[1]
        return float(figures.max_risk if public else figures.strict_average_risk)  # type: ignore[attr-defined]

    best = candidates[0]
    for item in candidates[1:]:
        if measure(item) > measure(best) + 1e-12:
            best = item
    return best[0]
