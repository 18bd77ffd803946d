"""Linkage of released records to a source database (Cologne et al. 2012, section 2.1.2).

An intruder holds the source records and matches each released record to them on the
quasi-identifiers. If ``i`` source records match a released record, the intruder picks the
right one with probability ``1/i``. With ``n_i`` the number of released records that have
``i`` matches *including their own true source record*,

    identifiability risk score = sum_i n_i / i / N,    anonymity score = 1 - risk score

(Cologne eq. 1-2; N = number of released records). The *perceived* score counts any match,
right or wrong (Cologne Table 1b: rounded doses matched other people's doses).

Matching rules:

- ``exact``: released values are compared as they are with the source values;
- ``same_masking``: the intruder masks the source with the recipe's deterministic steps
  (random draws cannot be reproduced, so random steps are not applied to the source), then
  matches. Against the original data this equals the closed-data average risk.
- ``nearest``: distance-based record linkage. Numeric quasi-identifiers are compared in
  standardized units (divided by their SD on the source, ddof=1; a column whose source SD is
  zero or undefined keeps its own units); categorical ones must be equal, so only source
  records of the same categorical stratum are candidates. The matches of a released record
  are the source records at the minimum Euclidean distance, ties shared (``i`` records tied:
  each is picked with probability ``1/i``). Two distances count as tied when they agree to a
  relative 1e-12 (plus an absolute allowance for floating-point rounding of the coordinates).
  Against the unmasked data itself, every record is at distance 0 from its own record and
  from its exact duplicates only, so the score equals the closed-data average risk.
- ``tolerance``: a released record matches every source record whose numeric
  quasi-identifiers each lie within ``tolerance`` of the released value (absolute, in the
  column's units, boundary included, with a relative allowance of 1e-9 for floating-point
  rounding) and whose categorical quasi-identifiers are equal; scored as for ``exact``. With
  uniform noise of half-width ``a`` and ``tolerance = a`` the true record is always matched.
  ``tolerance`` is one number for every numeric quasi-identifier or a mapping column ->
  tolerance; numeric quasi-identifiers left out of the mapping are matched exactly.

A quasi-identifier is numeric when it has a numeric (non-boolean) dtype in both the released
and the source data; otherwise it is compared as a category. Missing values (NaN, None and
infinities in a numeric column): a record with a missing numeric quasi-identifier is a
candidate only for records missing exactly the same numeric quasi-identifiers (the pattern of
missingness is matched exactly, like a category), and the distance is computed on the
quasi-identifiers both records have. A missing categorical value is a category of its own.

Speed: ``nearest`` and ``tolerance`` use one ``scipy.spatial.cKDTree`` over the source. The
categorical stratum is an extra coordinate, spaced further apart than any two records of one
stratum can be, so records of different strata are never matched (and a released record
whose stratum has no source record gets no match). ``nearest`` queries the nearest distance
(k=1) and then counts the source records within it; ``tolerance`` counts the records within
a Chebyshev radius of 1 on coordinates divided by the tolerance. Counting with the tree costs
time in proportion to the number of matches, so with two or more numeric quasi-identifiers a
tolerance that makes most records match each other is slow on very large files. With one
numeric quasi-identifier the source is sorted within strata instead and each released record
costs a few binary searches, however many records it matches.

The truth (which source row is each released record's own) comes from the record-id column,
or, without one, from row order (released row r is source row r). When the record id repeats
(several rows per person) and the released file is the masked source itself, row order gives
the truth too: the scores then count rows, and a match to another row of the same person
counts as wrong.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from deid_core.errors import DataError
from deid_core.masking import AbsoluteRound, DateShift, GaussianNoise, UniformNoise
from deid_core.masking.noise import noise_release_base
from deid_core.recipe import Recipe
from deid_core.risk.classes import EncodedColumn, combine_codes

# scipy is imported where it is used: the command line imports this module to refuse bad
# input and must not spend seconds loading scipy first (see deid_core._lazy).

MATCH_RULES = {
    "exact": "Exact: released values compared as they are with the source values",
    "same_masking": "Same masking: the intruder applies the recipe's deterministic steps to the "
    "source first",
    "nearest": "Nearest: the source records closest to the released record in standardized "
    "units (categories equal), ties shared",
    "tolerance": "Within tolerance: source records whose numeric values are each within the "
    "tolerance of the released values (categories equal)",
}

_TIE_RELATIVE = 1e-12  # nearest: distances within this relative amount are tied
_TIE_ROUNDING = 1e-12  # nearest: absolute allowance per unit of coordinate magnitude
_TOLERANCE_SLACK = 1e-9  # tolerance: relative allowance at the boundary
_ROUNDING = 1e-14  # tolerance: absolute allowance per unit of coordinate magnitude

Tolerance = float | Mapping[str, float]


@dataclass(frozen=True)
class LinkageResult:
    """Cologne's identifiability and anonymity scores for one matching rule."""

    rule: str
    n_released: int
    n_source: int
    identifiability_score: float
    perceived_score: float
    match_count: np.ndarray = field(repr=False, compare=False)
    correct: np.ndarray = field(repr=False, compare=False)

    @property
    def anonymity_score(self) -> float:
        return 1.0 - self.identifiability_score

    def match_probability(self) -> np.ndarray:
        """Per released record, the probability that the intruder picks its true source record:
        ``1/i`` when the true record is among the ``i`` matches, otherwise 0 (Cologne Figure 2
        histograms this). Its mean is the identifiability risk score."""
        probability = np.zeros(self.n_released)
        hit = self.correct & (self.match_count > 0)
        probability[hit] = 1.0 / self.match_count[hit]
        return probability

    def match_table(self, max_matches: int = 3) -> pd.DataFrame:
        """Cologne Table 1 layout: released records with 1, 2, ... source matches.

        Columns ``correct`` (the true source record is among the matches) and ``any`` (at
        least one match, right or wrong), one row per number of matches up to
        ``max_matches``, then a row for more ("4+"), and one for none.
        """
        rows = []
        for i in range(1, max_matches + 1):
            at_i = self.match_count == i
            rows.append((str(i), 1.0 / i, int((at_i & self.correct).sum()), int(at_i.sum())))
        more = self.match_count > max_matches
        label = f"{max_matches + 1}+"
        rows.append((label, np.nan, int((more & self.correct).sum()), int(more.sum())))
        rows.append(("0", 0.0, 0, int((self.match_count == 0).sum())))
        return pd.DataFrame(rows, columns=["source matches", "risk 1/i", "correct", "any"])

    def __str__(self) -> str:
        return (
            f"Linkage to the source ({self.rule}; {self.n_released} released, "
            f"{self.n_source} source records)\n"
            f"  identifiability risk score {self.identifiability_score:.4f}\n"
            f"  anonymity score            {self.anonymity_score:.4f}\n"
            f"  perceived risk (any match) {self.perceived_score:.4f}"
        )


def truth_positions(
    released: pd.DataFrame, source: pd.DataFrame, record_id: str | None
) -> np.ndarray:
    """For each released record, the position of its own record in ``source`` (-1: absent)."""
    if record_id is None:
        if len(released) != len(source):
            raise DataError(
                "Without a record-id column the released and source records are matched by row "
                "order, so they must have the same number of rows."
            )
        return np.arange(len(released))
    for frame, what in ((released, "released"), (source, "source")):
        if record_id not in frame.columns:
            raise DataError(f"The record-id column '{record_id}' is not in the {what} data.")
    if source[record_id].duplicated().any():
        # Several rows per person: released row r is source row r when both files list the
        # same ids in the same order (the released file is the masked source).
        same_rows = len(released) == len(source) and np.array_equal(
            released[record_id].to_numpy(), source[record_id].to_numpy()
        )
        if same_rows:
            return np.arange(len(released))
        raise DataError(
            f"The record-id column '{record_id}' has repeated values in the source (several "
            "rows per person): linkage to another source needs one row per person."
        )
    position = pd.Series(np.arange(len(source)), index=source[record_id].to_numpy())
    return position.reindex(released[record_id].to_numpy()).fillna(-1).to_numpy(dtype=np.int64)


def _encode_pair(released: pd.Series, source: pd.Series) -> tuple[EncodedColumn, EncodedColumn]:
    """Joint integer codes of one column in the released and source data (exact equality;
    a missing value is a code of its own)."""
    n_released = len(released)
    both = pd.concat([released, source], ignore_index=True)
    if both.dtype == object:
        # Numbers and numeric text are different values to an exact match; keep them apart.
        both = both.map(lambda v: (type(v).__name__, v) if pd.notna(v) else v)
    codes, uniques = pd.factorize(both, use_na_sentinel=False)
    n_levels = max(len(uniques), 1)
    return (
        EncodedColumn(codes[:n_released].astype(np.int64), n_levels),
        EncodedColumn(codes[n_released:].astype(np.int64), n_levels),
    )


def _joint_keys(
    encoded_released: list[EncodedColumn],
    encoded_source: list[EncodedColumn],
    n_released: int,
    n_source: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Stratum codes (0..S-1, shared by both files) from per-column codes."""
    released_key, _ = combine_codes(encoded_released, n_released)
    source_key, _ = combine_codes(encoded_source, n_source)
    codes, _ = pd.factorize(np.concatenate([released_key, source_key]))
    codes = codes.astype(np.int64)
    return codes[:n_released], codes[n_released:]


def is_numeric_column(series: pd.Series) -> bool:
    """Whether a column's values are compared as numbers (numeric, not true/false, not
    categorical), rather than as categories."""
    dtype = series.dtype
    return (
        pd.api.types.is_numeric_dtype(dtype)
        and not pd.api.types.is_bool_dtype(dtype)
        and not isinstance(dtype, pd.CategoricalDtype)
    )


def _float_values(series: pd.Series) -> np.ndarray:
    """Float values of a numeric column with NaN for missing and non-finite values."""
    values = pd.to_numeric(series).to_numpy(dtype=float, na_value=np.nan)
    values = values.copy()
    values[~np.isfinite(values)] = np.nan
    return values


def _scores(
    rule: str, n_source: int, match_count: np.ndarray, correct: np.ndarray
) -> LinkageResult:
    n_released = len(match_count)
    inverse = np.divide(1.0, match_count, out=np.zeros(n_released), where=match_count > 0)
    return LinkageResult(
        rule=rule,
        n_released=n_released,
        n_source=n_source,
        identifiability_score=float(inverse[correct].sum() / n_released),
        perceived_score=float(inverse.sum() / n_released),
        match_count=match_count,
        correct=correct,
    )


def _check_tolerance(
    rule: str, tolerance: Tolerance | None, numeric: list[str], quasi_identifiers: Sequence[str]
) -> dict[str, float]:
    """Validated per-column tolerances (numeric quasi-identifiers only)."""
    if rule != "tolerance":
        if tolerance is not None:
            raise DataError(
                f"A tolerance applies only to the 'tolerance' matching rule, not to '{rule}'."
            )
        return {}
    if tolerance is None:
        raise DataError(
            "The 'tolerance' matching rule needs a tolerance: one positive number for every "
            "numeric quasi-identifier, or a mapping column -> positive number."
        )

    def positive(value: object, what: str) -> float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise DataError(f"The tolerance {what} must be a number, not {value!r}.")
        if not math.isfinite(float(value)) or float(value) <= 0:
            raise DataError(f"The tolerance {what} must be positive and finite, not {value!r}.")
        return float(value)

    if isinstance(tolerance, Mapping):
        unknown = [c for c in tolerance if c not in quasi_identifiers]
        if unknown:
            raise DataError(
                f"Tolerance given for column(s) that are not quasi-identifiers: "
                f"{', '.join(map(str, unknown))}."
            )
        not_numeric = [c for c in tolerance if c not in numeric]
        if not_numeric:
            raise DataError(
                f"Tolerance given for non-numeric quasi-identifier(s) (compared as categories): "
                f"{', '.join(map(str, not_numeric))}."
            )
        if not tolerance:
            raise DataError("The tolerance mapping names no column.")
        return {c: positive(v, f"for '{c}'") for c, v in tolerance.items()}
    value = positive(tolerance, "")
    if not numeric:
        raise DataError(
            "The 'tolerance' matching rule needs at least one numeric quasi-identifier; "
            "all the quasi-identifiers are compared as categories."
        )
    return dict.fromkeys(numeric, value)


def _count_in_strata(
    released_stratum: np.ndarray,
    source_stratum: np.ndarray,
    truth: np.ndarray,
    rows: np.ndarray,
    match_count: np.ndarray,
    correct: np.ndarray,
) -> None:
    """Released records ``rows`` match every source record of their stratum."""
    n_strata = int(max(released_stratum.max(initial=-1), source_stratum.max(initial=-1))) + 1
    source_count = np.bincount(source_stratum, minlength=n_strata)
    match_count[rows] = source_count[released_stratum[rows]]
    t = truth[rows]
    has = t >= 0
    correct[rows[has]] = source_stratum[t[has]] == released_stratum[rows[has]]


def _link_by_distance(
    released: pd.DataFrame,
    source: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    truth: np.ndarray,
    rule: str,
    tolerance: Tolerance | None,
    exact: Sequence[str] = (),
) -> LinkageResult:
    n_released, n_source = len(released), len(source)
    numeric = [
        c
        for c in quasi_identifiers
        if c not in exact and is_numeric_column(released[c]) and is_numeric_column(source[c])
    ]
    tolerances = _check_tolerance(rule, tolerance, numeric, quasi_identifiers)
    measured = list(tolerances) if rule == "tolerance" else numeric
    equal = [c for c in quasi_identifiers if c not in measured]

    encoded_released, encoded_source = [], []
    for column in equal:
        r, s = _encode_pair(released[column], source[column])
        encoded_released.append(r)
        encoded_source.append(s)
    released_coords = np.zeros((n_released, len(measured)))
    source_coords = np.zeros((n_source, len(measured)))
    for j, column in enumerate(measured):
        r_values, s_values = _float_values(released[column]), _float_values(source[column])
        observed = s_values[~np.isnan(s_values)]
        centre = float(observed.mean()) if observed.size else 0.0
        if rule == "tolerance":
            scale = tolerances[column]
        else:
            scale = float(observed.std(ddof=1)) if observed.size > 1 else 0.0
            if not (math.isfinite(scale) and scale > 0):
                scale = 1.0
        r_missing, s_missing = np.isnan(r_values), np.isnan(s_values)
        released_coords[:, j] = np.where(r_missing, 0.0, (r_values - centre) / scale)
        source_coords[:, j] = np.where(s_missing, 0.0, (s_values - centre) / scale)
        # The pattern of missingness is matched exactly, like a category.
        encoded_released.append(EncodedColumn(r_missing.astype(np.int64), 2))
        encoded_source.append(EncodedColumn(s_missing.astype(np.int64), 2))
    released_stratum, source_stratum = _joint_keys(
        encoded_released, encoded_source, n_released, n_source
    )

    match_count = np.zeros(n_released, dtype=np.int64)
    correct = np.zeros(n_released, dtype=bool)
    if n_source == 0:
        return _scores(rule, n_source, match_count, correct)
    # Records with no measured value are at distance 0 from every record of their stratum.
    measured_any = np.zeros(n_released, dtype=bool)
    for column in measured:
        measured_any |= ~np.isnan(_float_values(released[column]))
    flat = np.flatnonzero(~measured_any)
    if flat.size:
        _count_in_strata(released_stratum, source_stratum, truth, flat, match_count, correct)
    n_strata = int(max(released_stratum.max(initial=-1), source_stratum.max(initial=-1))) + 1
    populated = np.bincount(source_stratum, minlength=n_strata)[released_stratum] > 0
    rows = np.flatnonzero(measured_any & populated)
    if rows.size == 0:
        return _scores(rule, n_source, match_count, correct)

    magnitude = float(
        max(np.abs(released_coords).max(initial=0.0), np.abs(source_coords).max(initial=0.0))
    )
    if len(measured) == 1:
        match_count[rows], radius = _count_sorted(
            released_coords[rows, 0],
            released_stratum[rows],
            source_coords[:, 0],
            source_stratum,
            rule,
            magnitude,
        )
    else:
        match_count[rows], radius = _count_with_tree(
            released_coords[rows],
            released_stratum[rows],
            source_coords,
            source_stratum,
            rule,
            magnitude,
        )
    t = truth[rows]
    has = t >= 0
    difference = np.abs(released_coords[rows[has]] - source_coords[t[has]])
    if rule == "tolerance":
        distance = difference.max(axis=1)
    else:
        distance = np.sqrt((difference**2).sum(axis=1))
    same_stratum = source_stratum[t[has]] == released_stratum[rows[has]]
    correct[rows[has]] = same_stratum & (distance <= radius[has])
    return _scores(rule, n_source, match_count, correct)


def _count_with_tree(
    query_coords: np.ndarray,
    query_stratum: np.ndarray,
    source_coords: np.ndarray,
    source_stratum: np.ndarray,
    rule: str,
    magnitude: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(number of matches, matching radius) per query record, with one k-d tree whose extra
    coordinate keeps the strata apart. Every query's stratum has source records."""
    from scipy.spatial import cKDTree

    if rule == "tolerance":
        p = np.inf
        spacing = 3.0  # > the radius: records of different strata are never within it
    else:
        p = 2.0
        spread = np.concatenate([query_coords, source_coords])
        diameter = float(np.sqrt(((spread.max(axis=0) - spread.min(axis=0)) ** 2).sum()))
        spacing = 2.0 * diameter + 1.0  # > any distance within one stratum
    tree = cKDTree(np.column_stack([source_coords, source_stratum * spacing]))
    query = np.column_stack([query_coords, query_stratum * spacing])
    if rule == "tolerance":
        radius = np.full(len(query), 1.0 + _TOLERANCE_SLACK + _ROUNDING * magnitude)
    else:
        nearest, _ = tree.query(query, k=1, workers=-1)
        radius = nearest * (1.0 + _TIE_RELATIVE) + _TIE_ROUNDING * (1.0 + magnitude)
    count = tree.query_ball_point(query, radius, p=p, return_length=True, workers=-1)
    return np.asarray(count, dtype=np.int64), radius


def _segment_search(
    values: np.ndarray, low: np.ndarray, high: np.ndarray, target: np.ndarray, right: bool
) -> np.ndarray:
    """Vectorized binary search of ``target`` in the sorted segments ``values[low:high]``:
    the first position whose value is >= target (> target if ``right``)."""
    low, high = low.copy(), high.copy()
    while True:
        active = low < high
        if not active.any():
            return low
        middle = (low + high) // 2
        value = values[np.minimum(middle, len(values) - 1)]
        go_right = active & ((value <= target) if right else (value < target))
        low = np.where(go_right, middle + 1, low)
        high = np.where(active & ~go_right, middle, high)


def _count_sorted(
    query_values: np.ndarray,
    query_stratum: np.ndarray,
    source_values: np.ndarray,
    source_stratum: np.ndarray,
    rule: str,
    magnitude: float,
) -> tuple[np.ndarray, np.ndarray]:
    """As ``_count_with_tree`` for one measured coordinate, by sorting the source within
    strata: O(log m) per query however many records match."""
    order = np.lexsort((source_values, source_stratum))
    values, strata = source_values[order], source_stratum[order]
    first = np.searchsorted(strata, query_stratum, side="left")
    last = np.searchsorted(strata, query_stratum, side="right")
    if rule == "tolerance":
        radius = np.full(len(query_values), 1.0 + _TOLERANCE_SLACK + _ROUNDING * magnitude)
    else:
        at = _segment_search(values, first, last, query_values, right=False)
        above = np.where(at < last, values[np.minimum(at, len(values) - 1)] - query_values, np.inf)
        below = np.where(at > first, query_values - values[np.maximum(at - 1, 0)], np.inf)
        nearest = np.minimum(above, below)
        radius = nearest * (1.0 + _TIE_RELATIVE) + _TIE_ROUNDING * (1.0 + magnitude)
    upper = _segment_search(values, first, last, query_values + radius, right=True)
    lower = _segment_search(values, first, last, query_values - radius, right=False)
    return (upper - lower).astype(np.int64), radius


def link_to_source(
    released: pd.DataFrame,
    source: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    truth: np.ndarray,
    rule: str = "exact",
    tolerance: Tolerance | None = None,
    *,
    exact: Sequence[str] = (),
) -> LinkageResult:
    """Match ``released`` to ``source`` on ``quasi_identifiers`` (both already in the form the
    rule compares: pass the masked source for ``same_masking``) and score the matches.

    ``tolerance`` (rule ``tolerance`` only): one positive number applied to every numeric
    quasi-identifier, or a mapping column -> positive number (absolute, in the column's units).
    ``exact`` (rules ``nearest`` and ``tolerance``): quasi-identifiers compared for equality,
    like categories, whatever their type (e.g. generalised numeric columns, which the intruder
    coarsens the same way and then matches exactly).
    """
    if rule not in MATCH_RULES:
        raise DataError(f"Unknown matching rule '{rule}'; use one of {', '.join(MATCH_RULES)}.")
    n_released, n_source = len(released), len(source)
    if n_released == 0:
        raise DataError("There are no released records to assess.")
    for frame, what in ((released, "released"), (source, "source")):
        absent = [c for c in quasi_identifiers if c not in frame.columns]
        if absent:
            raise DataError(
                f"The {what} data lacks quasi-identifier column(s): {', '.join(absent)}."
            )
    truth = np.asarray(truth, dtype=np.int64)
    if truth.shape != (n_released,):
        raise DataError("There must be one truth position per released record.")
    if rule in ("nearest", "tolerance"):
        if not quasi_identifiers:
            raise DataError(f"The '{rule}' matching rule needs at least one quasi-identifier.")
        return _link_by_distance(released, source, quasi_identifiers, truth, rule, tolerance, exact)
    _check_tolerance(rule, tolerance, [], quasi_identifiers)
    encoded_released, encoded_source = [], []
    for column in quasi_identifiers:
        r, s = _encode_pair(released[column], source[column])
        encoded_released.append(r)
        encoded_source.append(s)
    released_key, source_key = _joint_keys(encoded_released, encoded_source, n_released, n_source)
    counts = np.bincount(source_key, minlength=int(released_key.max()) + 1)
    match_count = counts[released_key]
    has_truth = truth >= 0
    correct = np.zeros(n_released, dtype=bool)
    correct[has_truth] = source_key[truth[has_truth]] == released_key[has_truth]
    return _scores(rule, n_source, match_count, correct)


def link_with_wildcards(
    released: pd.DataFrame,
    source: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    truth: np.ndarray,
    wildcards: np.ndarray | None,
    rule: str = "exact",
    tolerance: Mapping[str, float] | None = None,
    *,
    exact: Sequence[str] = (),
) -> LinkageResult:
    """:func:`link_to_source` where the released cells flagged in ``wildcards`` (one row per
    released record, one column per quasi-identifier; None: none) match any source value: a
    suppressed cell, which the exported file shows blank, says nothing of the true value. Each
    released record is matched on the quasi-identifiers it shows, so records are linked in
    groups of one pattern of wildcards (few: suppression blanks few cells); a record that
    shows none matches every source record. ``tolerance`` maps columns to their reach (rule
    ``tolerance``); a group that shows no column with a reach is matched exactly."""
    qis = list(quasi_identifiers)
    truth = np.asarray(truth, dtype=np.int64)
    if wildcards is None or not np.any(wildcards):
        return link_to_source(released, source, qis, truth, rule, tolerance, exact=exact)
    wildcards = np.asarray(wildcards, dtype=bool)
    if wildcards.shape != (len(released), len(qis)):
        raise DataError("There must be one wildcard flag per released cell.")
    n_released, n_source = len(released), len(source)
    match_count = np.zeros(n_released, dtype=np.int64)
    correct = np.zeros(n_released, dtype=bool)
    patterns, group = np.unique(wildcards, axis=0, return_inverse=True)
    for index, pattern in enumerate(patterns):
        rows = np.flatnonzero(group.reshape(-1) == index)
        shown = [c for c, hidden in zip(qis, pattern, strict=True) if not hidden]
        if not shown:
            match_count[rows] = n_source
            correct[rows] = truth[rows] >= 0
            continue
        reach = {c: r for c, r in (tolerance or {}).items() if c in shown}
        part_rule = "exact" if rule == "tolerance" and not reach else rule
        part = link_to_source(
            released.iloc[rows],
            source,
            shown,
            truth[rows],
            part_rule,
            reach if part_rule == "tolerance" else None,
            exact=[c for c in exact if c in shown] if part_rule != "exact" else (),
        )
        match_count[rows] = part.match_count
        correct[rows] = part.correct
    return _scores(rule, n_source, match_count, correct)


def recompute_like_release(
    recipe: Recipe, stepped: pd.DataFrame, source: pd.DataFrame
) -> pd.DataFrame:
    """``stepped`` (source columns after the recipe's deterministic column steps) with the
    recipe's recomputable whole-data steps applied in order (a date of birth to an age, dates
    to days since the person's first; :attr:`DataStep.recomputable`), as an intruder who
    holds ``source`` computes them: person by person from the source's record id when it has
    one. The columns they read that ``stepped`` lacks come from ``source``; the columns they
    write replace those of ``stepped`` (a new frame; neither input is modified)."""
    steps = [step for step in recipe.data_steps if step.recomputable]
    if not steps:
        return stepped
    qis = recipe.roles.quasi_identifiers
    record_id = recipe.roles.record_id
    persons = None
    if record_id is not None and record_id in source.columns:
        persons = pd.factorize(source[record_id], use_na_sentinel=True)[0]
    out = stepped.copy()
    for step in steps:
        reads = step.reads(qis)
        frame = pd.DataFrame(
            {c: source[c] if step.reads_source or c not in out.columns else out[c] for c in reads},
            index=source.index,
        )
        outcome = step.apply(frame, qis, persons=persons)
        for column, values in outcome.values.items():
            if column in out.columns:
                out[column] = values.array  # row by row: the source's index may repeat
    return out


def mask_source_like(recipe: Recipe, source: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """The source as an intruder who knows the deterministic masking would see it: the
    recipe's deterministic column steps, then its recomputable whole-data steps
    (:func:`recompute_like_release`). Steps that read other columns (smoothing reads the
    locations) read them from the source."""
    out = source[list(columns)].copy()
    cache: dict = {}
    for column in columns:
        series = source[column]
        for step in recipe.steps_for(column):
            if not step.random:
                series = step.apply(series, frame=source, cache=cache)
        out[column] = series
    return recompute_like_release(recipe, out, source)


def linkage_risk(
    recipe: Recipe,
    released: pd.DataFrame,
    source: pd.DataFrame,
    rule: str = "exact",
    tolerance: Tolerance | None = None,
    truth: np.ndarray | None = None,
) -> LinkageResult:
    """Cologne's scores for a released (masked) file against ``source`` under ``rule``.

    ``nearest`` and ``tolerance`` compare the released values with the unmasked source;
    ``tolerance`` needs ``tolerance`` (see :func:`link_to_source`). ``truth``, the position in
    ``source`` of each released record, defaults to :func:`truth_positions` (by record id, or
    row by row); give it when the release leaves records out and has no record id."""
    if rule not in MATCH_RULES:
        raise DataError(f"Unknown matching rule '{rule}'; use one of {', '.join(MATCH_RULES)}.")
    qis = list(recipe.roles.quasi_identifiers)
    missing = [c for c in qis if c not in source.columns]
    if missing:
        raise DataError(f"The source lacks quasi-identifier column(s): {', '.join(missing)}.")
    if truth is None:
        truth = truth_positions(released, source, recipe.roles.record_id)
    compared = mask_source_like(recipe, source, qis) if rule == "same_masking" else source
    return link_to_source(released, compared, qis, truth, rule, tolerance)


__all__ = [
    "MATCH_RULES",
    "LinkageResult",
    "Tolerance",
    "is_numeric_column",
    "link_to_source",
    "link_with_wildcards",
    "linkage_risk",
    "mask_source_like",
    "recompute_like_release",
    "truth_positions",
]


def masking_tolerance(recipe: Recipe, original: pd.DataFrame) -> dict[str, float]:
    """How far a masked quasi-identifier can be from its true value, per column: the half-width
    of uniform noise, 2 x the SD of Gaussian noise (about 95% of draws), each plus half the base
    its values are released rounded to (``round_to_noise_scale``), half the base of
    absolute rounding, and a date shift's largest shift (in days). Columns without such a
    step are matched exactly by the tolerance rule."""
    tolerance: dict[str, float] = {}
    for column in recipe.roles.quasi_identifiers:
        reach = 0.0
        for step in recipe.steps_for(column):
            if isinstance(step, UniformNoise | GaussianNoise):
                noise = step.reach(original[column])
                base = noise_release_base(noise) if step.round_to_noise_scale else None
                reach += noise + (base / 2 if base is not None else 0.0)
            elif isinstance(step, AbsoluteRound):
                reach += step.effective_base / 2
        for data_step in recipe.perturbing_steps(column):
            if isinstance(data_step, DateShift):  # in days: see judged.perturbed_risk
                reach += data_step.max_days
        if reach > 0:
            tolerance[column] = reach
    return tolerance
