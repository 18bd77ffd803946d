"""Attribute disclosure: what knowing someone's class reveals about a sensitive value.

Knowing a person's quasi-identifiers may reveal their diagnosis without re-identifying them:
if everyone in the person's class shares the outcome, the intruder learns it whichever record
is theirs. For a sensitive column s and the class C of each record (the records an intruder
cannot tell apart from it, see below), with p_v the share of C's records whose value of s is v:

- **distinct l-diversity** (Machanavajjhala et al. 2007): the number of distinct values of s in
  C; the release is distinct l-diverse for the smallest such number over classes. l = 1 means
  everyone in the class shares the value: those records are *flagged*.
- **entropy l-diversity**: exp(H(C)), H(C) = -sum_v p_v ln p_v, the largest l with
  H(C) >= ln l (the "effective number" of values; sdcMicro's ``Entropy_Ldiversity``). Equal
  to the distinct l when the values are evenly spread, smaller otherwise. Higher is safer.
- **t-closeness** (Li, Li & Venkatasubramanian 2007): the Earth Mover's Distance between the
  distribution of s in C and in the whole release; the release is t-close for the largest
  distance over classes. Lower is safer. The ground distance follows the column's type:

  * a categorical column (text, true/false, categories): the *equal distance* (any two values
    are 1 apart), for which EMD = 1/2 sum_v |p_v - q_v|, the total-variation distance;
  * a numeric column: the *ordered distance* over its m distinct values v_1 < ... < v_m
    (|i - j| / (m - 1) between v_i and v_j), for which
    EMD = 1/(m - 1) sum_{i=1}^{m} |sum_{j<=i} (p_j - q_j)|.

  A 0/1 outcome gets the same value either way (|p_1 - q_1|).

Missing values of s count as a value of their own for the l-diversities and the equal distance
(a class where every record misses s shares that), as sdcMicro counts them except that a class
where every value is missing has l = 1 here (sdcMicro reports 0). The ordered distance is over
the records with a value; a class without any has no distance (NaN, left out of t).

The class: the equivalence class under the session's missing-value rule when the release is
judged by its classes (with missing values as wildcards a record's class is every record
compatible with it, and the classes overlap); the records within the perturbation's reach of
the person's true values when a quasi-identifier is perturbed (:mod:`deid_core.risk.judged`).
Overlapping classes are counted one value of s at a time (:func:`attribute_disclosure_from_counts`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from deid_core.errors import DataError
from deid_core.risk.classes import (
    check_missing_mode,
    combine_codes,
    compatible_class_sizes_from_codes,
    encode_columns,
)
from deid_core.risk.linkage import is_numeric_column

#: The ground distance of t-closeness for each kind of column.
DISTANCES = {
    "equal": "equal distance (categories): half the sum of the absolute differences of the "
    "shares, the total-variation distance",
    "ordered": "ordered distance (numbers): the mean absolute difference of the cumulative "
    "shares over the column's distinct values, 1/(m-1) sum_i |sum_(j<=i) (p_j - q_j)|",
}

#: The classes over which the figures are computed.
CLASS_KINDS = {
    "classes": "equivalence classes (records sharing every released quasi-identifier value)",
    "wildcard": (
        "compatible records (a suppressed quasi-identifier value, and under the wildcard "
        "rule a missing one, matches any value)"
    ),
    "within_reach": "records within the perturbation's reach of the person's true values",
}

#: Overlapping classes are counted one value at a time: at most this many (records x values).
MAX_OVERLAP_WORK = 50_000_000

Counter = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class AttributeDisclosure:
    """Distinct and entropy l-diversity and t-closeness of one sensitive column, per record
    (the figures of its class) and for the release (see the module notes)."""

    column: str
    distance: str
    classes: str
    n_records: int
    distinct_l: np.ndarray = field(repr=False, compare=False)
    entropy_l: np.ndarray = field(repr=False, compare=False)
    emd: np.ndarray = field(repr=False, compare=False)

    @property
    def covered(self) -> np.ndarray:
        """Records whose class holds at least one record (always, except when a perturbed
        record's own record is out of reach and no other record is within reach)."""
        return self.distinct_l > 0

    @property
    def l_distinct(self) -> int:
        """The release's distinct l: the smallest number of distinct values in a class."""
        return int(self.distinct_l[self.covered].min()) if self.covered.any() else 0

    @property
    def l_entropy(self) -> float:
        """The release's entropy l: the smallest exp(entropy) of a class."""
        return float(self.entropy_l[self.covered].min()) if self.covered.any() else float("nan")

    @property
    def t(self) -> float:
        """The release's t: the largest distance of a class's distribution from the whole."""
        finite = self.emd[np.isfinite(self.emd)]
        return float(finite.max()) if finite.size else float("nan")

    @property
    def homogeneous(self) -> np.ndarray:
        """Records in classes where everyone shares the value (distinct l = 1): flagged."""
        return self.distinct_l == 1

    @property
    def n_homogeneous(self) -> int:
        return int(np.count_nonzero(self.homogeneous))

    @property
    def share_homogeneous(self) -> float:
        return self.n_homogeneous / self.n_records if self.n_records else 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "column": self.column,
            "distance": self.distance,
            "classes": self.classes,
            "distinct_l": self.l_distinct,
            "entropy_l": self.l_entropy,
            "t": self.t,
            "records_in_homogeneous_classes": self.n_homogeneous,
        }

    def __str__(self) -> str:
        return (
            f"Attribute disclosure of '{self.column}' ({CLASS_KINDS[self.classes]})\n"
            f"  distinct l-diversity          {self.l_distinct}\n"
            f"  entropy l-diversity           {self.l_entropy:.4f}\n"
            f"  t-closeness ({self.distance} distance) {self.t:.4f}\n"
            f"  records whose class shares it {self.n_homogeneous} of {self.n_records}"
        )


@dataclass(frozen=True)
class _Levels:
    """The sensitive column as codes: observed values 0..m-1 (sorted when numeric), missing
    values m (when there are any)."""

    codes: np.ndarray
    n_observed: int
    has_missing: bool
    distance: str

    @property
    def n_levels(self) -> int:
        return self.n_observed + int(self.has_missing)


def _levels(values: pd.Series, column: str) -> _Levels:
    if len(values) == 0:
        raise DataError("Attribute disclosure: there are no records.")
    missing = values.isna().to_numpy()
    if is_numeric_column(values):
        floats = values.to_numpy(dtype="float64", na_value=np.nan)
        missing = missing | ~np.isfinite(floats)
        distinct, inverse = np.unique(floats[~missing], return_inverse=True)
        codes = np.full(len(values), len(distinct), dtype=np.int64)
        codes[~missing] = inverse
        return _Levels(codes, len(distinct), bool(missing.any()), "ordered")
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    codes = codes.astype(np.int64)
    codes[codes < 0] = len(uniques)
    return _Levels(codes, len(uniques), bool(missing.any()), "equal")


def _overall_shares(levels: _Levels) -> tuple[np.ndarray, np.ndarray]:
    """(share of every level among all records, cumulative share of the observed levels among
    the records with a value)."""
    counts = np.bincount(levels.codes, minlength=levels.n_levels).astype(float)
    share = counts / counts.sum()
    observed = counts[: levels.n_observed]
    cumulative = np.cumsum(observed) / observed.sum() if observed.sum() else observed
    return share, cumulative


def attribute_disclosure_from_classes(
    class_key: np.ndarray, values: pd.Series, column: str, classes: str = "classes"
) -> AttributeDisclosure:
    """The figures when the classes partition the records (``class_key``: equal for records
    of one class), class by class: O(n log n) whatever the number of values."""
    levels = _levels(values, column)
    n = len(values)
    key = np.asarray(class_key)
    if key.shape != (n,):
        raise DataError("Attribute disclosure: one class key per record is needed.")
    cls = pd.factorize(key)[0].astype(np.int64)
    n_classes = int(cls.max()) + 1
    size = np.bincount(cls, minlength=n_classes).astype(float)
    pair_codes, pairs = pd.factorize(cls * levels.n_levels + levels.codes)
    pair_count = np.bincount(pair_codes).astype(float)
    pair_class = pairs // levels.n_levels
    pair_level = pairs % levels.n_levels
    share, cumulative = _overall_shares(levels)

    distinct = np.bincount(pair_class, minlength=n_classes)
    p = pair_count / size[pair_class]
    entropy = -np.bincount(pair_class, weights=p * np.log(p), minlength=n_classes)
    if levels.distance == "equal":
        # 1/2 sum_v |p_v - q_v| = 1/2 (sum over present v of (|p_v - q_v| - q_v) + 1)
        term = np.abs(p - share[pair_level]) - share[pair_level]
        emd = 0.5 * (np.bincount(pair_class, weights=term, minlength=n_classes) + 1.0)
    else:
        emd = _ordered_emd_by_class(
            pair_class, pair_level, pair_count, levels.n_observed, cumulative, n_classes
        )
    return AttributeDisclosure(
        column=column,
        distance=levels.distance,
        classes=classes,
        n_records=n,
        distinct_l=distinct[cls],
        entropy_l=np.exp(entropy)[cls],
        emd=emd[cls],
    )


def _ordered_emd_by_class(
    pair_class: np.ndarray,
    pair_level: np.ndarray,
    pair_count: np.ndarray,
    m: int,
    cumulative: np.ndarray,
    n_classes: int,
) -> np.ndarray:
    """1/(m-1) sum_{j=0}^{m-2} |F_c(j) - Q_j| per class, F_c the class's cumulative share of
    the observed values and Q the whole release's: F_c is constant between the levels the class
    holds, and Q increases, so each constant stretch is summed in closed form from prefix sums
    of Q (split where Q passes F_c)."""
    emd = np.full(n_classes, np.nan)
    observed = pair_level < m
    if m <= 1:
        has = np.bincount(pair_class[observed], minlength=n_classes) > 0
        emd[has] = 0.0
        return emd
    cls, lvl, cnt = pair_class[observed], pair_level[observed], pair_count[observed]
    order = np.lexsort((lvl, cls))
    cls, lvl, cnt = cls[order], lvl[order], cnt[order]
    total = np.bincount(cls, weights=cnt, minlength=n_classes)
    q = cumulative[: m - 1]  # Q_0 .. Q_{m-2}
    prefix = np.concatenate([[0.0], np.cumsum(q)])

    def stretch(value: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """sum_{j=lo}^{hi-1} |value - Q_j| (hi exclusive, at most m-1)."""
        split = np.clip(np.searchsorted(q, value, side="right"), lo, hi)
        below = value * (split - lo) - (prefix[split] - prefix[lo])
        above = (prefix[hi] - prefix[split]) - value * (hi - split)
        return below + above

    starts = np.ones(cls.size, dtype=bool)
    starts[1:] = cls[1:] != cls[:-1]
    ends = np.ones(cls.size, dtype=bool)
    ends[:-1] = cls[1:] != cls[:-1]
    # the class's running count (cumulative within the class), as a share of its records
    running = np.cumsum(cnt)
    start_at = np.flatnonzero(starts)
    before_class = np.repeat(running[starts] - cnt[starts], np.diff(np.append(start_at, cls.size)))
    share_up_to = (running - before_class) / total[cls]
    next_level = np.where(ends, m - 1, np.roll(lvl, -1))
    lo = np.minimum(lvl, m - 1)
    hi = np.maximum(next_level, lo)
    sums = stretch(share_up_to, lo, hi)
    # before the class's first level its cumulative share is 0: sum of Q_j for j < first level
    first = np.minimum(lvl[starts], m - 1)
    lead = prefix[first]
    result = np.bincount(cls, weights=sums, minlength=n_classes)
    result[cls[starts]] += lead
    has = total > 0
    emd[has] = result[has] / (m - 1)
    return emd


def attribute_disclosure_from_counts(
    count: Counter, values: pd.Series, column: str, classes: str
) -> AttributeDisclosure:
    """The figures when classes overlap: ``count(selected)`` gives, for every record, how
    many records of its class are among ``selected`` (a boolean array over the records); the
    class of each record is read one value of the sensitive column at a time."""
    levels = _levels(values, column)
    n = len(values)
    if n * (levels.n_levels + 1) > MAX_OVERLAP_WORK:
        raise DataError(
            f"Attribute disclosure of '{column}': its {levels.n_levels:,} distinct values over "
            f"{n:,} overlapping classes are too many to count (at most "
            f"{MAX_OVERLAP_WORK:,} records x values). Treat missing quasi-identifier values "
            "as a category, or coarsen the column."
        )
    share, cumulative = _overall_shares(levels)
    size = count(np.ones(n, dtype=bool)).astype(float)
    has = size > 0
    safe = np.where(has, size, 1.0)
    distinct = np.zeros(n, dtype=np.int64)
    plogp = np.zeros(n)
    emd = np.zeros(n)
    running = np.zeros(n)
    observed_size = size.copy()
    if levels.has_missing:
        observed_size -= count(levels.codes == levels.n_observed)
    for level in range(levels.n_levels):
        c = count(levels.codes == level).astype(float)
        present = c > 0
        distinct += present
        p = c / safe
        plogp[present] += p[present] * np.log(p[present])
        if levels.distance == "equal":
            emd += np.abs(p - share[level])
        elif level < levels.n_observed - 1:
            running += c
            with np.errstate(invalid="ignore", divide="ignore"):
                emd += np.abs(running / observed_size - cumulative[level])
    if levels.distance == "equal":
        emd = 0.5 * emd
    else:
        emd = emd / (levels.n_observed - 1) if levels.n_observed > 1 else np.zeros(n)
        emd[observed_size <= 0] = np.nan
    entropy_l = np.where(has, np.exp(-plogp), np.nan)
    emd[~has] = np.nan
    return AttributeDisclosure(
        column=column,
        distance=levels.distance,
        classes=classes,
        n_records=n,
        distinct_l=distinct,
        entropy_l=entropy_l,
        emd=emd,
    )


def attribute_disclosure(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    column: str,
    missing: str = "category",
) -> AttributeDisclosure:
    """Attribute disclosure of ``column`` within the equivalence classes of ``frame`` on
    ``quasi_identifiers`` (a released file as it is), with missing quasi-identifier values a
    ``"category"`` of their own or a ``"wildcard"`` that matches any value."""
    missing = check_missing_mode(missing)
    quasi_identifiers = list(quasi_identifiers)
    absent = [c for c in (*quasi_identifiers, column) if c not in frame.columns]
    if absent:
        raise DataError(f"Attribute disclosure: the data have no column(s) {', '.join(absent)}.")
    if column in quasi_identifiers:
        raise DataError(
            f"Attribute disclosure: '{column}' is a quasi-identifier, so its value defines the "
            "class."
        )
    encoded = encode_columns(frame, quasi_identifiers)
    observed = np.column_stack(
        [frame[c].notna().to_numpy() for c in quasi_identifiers]
        or [np.ones(len(frame), dtype=bool)]
    )
    if missing == "wildcard" and not observed.all():

        def count(selected: np.ndarray) -> np.ndarray:
            return compatible_class_sizes_from_codes(encoded, observed, selected.astype(float))

        return attribute_disclosure_from_counts(count, frame[column], column, "wildcard")
    key, _ = combine_codes(encoded, len(frame))
    return attribute_disclosure_from_classes(key, frame[column], column)


__all__ = [
    "CLASS_KINDS",
    "DISTANCES",
    "MAX_OVERLAP_WORK",
    "AttributeDisclosure",
    "attribute_disclosure",
    "attribute_disclosure_from_classes",
    "attribute_disclosure_from_counts",
]
