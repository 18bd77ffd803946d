"""Suppression: single quasi-identifier values (local suppression) or whole records, until
every record's equivalence class holds at least k records.

**Local suppression** (sdcMicro's ``localSuppression`` / ``kAnon``; Templ, Kowarik & Meindl
2015, section 5.3) releases some quasi-identifier values as missing. A suppressed value matches
any value of its column, as in sdcMicro (``alpha = 1``): a record's class size ``f`` is the
number of records *compatible* with it, i.e. agreeing with it on every quasi-identifier that
both have (see :mod:`deid_core.risk.classes`). Suppressing a value of record ``d`` in column
``c`` makes ``d`` compatible with every record that differed from it in ``c`` alone, and each of
them gains ``d`` in turn, so ``f`` never falls.

The search (:func:`suppression_pattern`) works on the distinct value combinations with their
counts and is greedy, then prunes:

1. the records with ``f < k``, smallest ``f`` first, are taken in turn; while a record's ``f``
   is below k, one of its values is suppressed: the one that makes it compatible with the most
   records (ties: the one that brings the most records to within one differing value, then the
   column with the most distinct values, as sdcMicro's default importance). With an importance
   order, the least important column that helps at all is suppressed instead;
2. each suppression is then undone, last first, whenever every record keeps ``f >= k`` without
   it, first for whole combinations, then record by record (identical records were suppressed
   alike; one of them may keep a value the others give up): no suppressed value can be given
   back alone.

**Speed.** Nothing compares a record at risk with every combination: the counts the search
reads come from group counts (:class:`GroupIndex`). The records that differ from ``d`` in
column ``c`` alone are the records of ``d``'s group in the projection of the keys without
``c``, less ``d``'s own class; those at two differing values come from the projections without
two keys, needed only to break ties. A wildcard is handled by grouping the combinations by the
set of columns where they have a value. Each projection's counts are built once (linear in
the combinations) and updated in constant time when a value is suppressed or given back, so
the search grows with the file (its distinct combinations) and the number of suppressions, not
with records at risk x combinations: a million records x 8 keys take seconds (see
``bench/bench_local_suppression.py``). Its choices are exactly those of the comparison with
every combination it replaces (tested against it).

Values missing in the original data are wildcards too: they match any value of their column,
like suppressed ones, and are never chosen or counted as suppressions (the step's count is the
cells it blanked that held a value). The k reached holds under the wildcard rule, which is how
the released file must be read: there a suppressed cell and a missing one are both blank.

**People.** With ``persons`` (the person of each record, when a person has several records),
a record's class size ``f`` is the number of *distinct people* among the records compatible
with it, and the search reaches ``f >= k`` in people. ``f`` is then no longer a sum of counts
of combinations, so each candidate is counted afresh: the index lists the compatible
combinations (per pattern, a slice of its members sorted by key) and their distinct people
are counted; ties are still broken by records. The search and the giving back are otherwise
the same, and cost about the size of the compatible sets instead of a pass over the file.

**Columns never suppressed.** With ``keep`` (the columns to release whole, e.g. the dates
of a clinical file whose intervals must stay exact), the search only blanks the other
quasi-identifiers. A record's class can then grow at most to the records that agree with it
on the kept columns (a value missing in the original matching any): that bound, ``A_T(d)`` with
``T`` every column that may be blanked, is known before the search, since no kept value ever
changes. A record whose bound is below k *cannot be fixed*: the search leaves it as it is
(blanking its other values would lose information without reaching k), the step counts those
records (``records_below_k``) and the risk of the release, computed from the released file,
shows them above ``1/k``; no verdict reads k from the step. The giving back never lowers the
class of such a record either (a value is given back only when every record that loses it
keeps ``f >= k``).

**Record suppression** (ARX's suppression limit): the records in classes smaller than k
(counted in distinct people with ``persons``) are removed from the release if they are at most
``limit`` of the records, else the step says it cannot reach k within the limit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from deid_core import bounds
from deid_core.cancellation import check_cancelled
from deid_core.errors import RecipeError
from deid_core.masking.base import (
    DataOutcome,
    DataStep,
    column_names,
    equal_key_pairs,
    person_codes,
    require_finite,
    require_int,
    unique_rows,
)

#: Largest k the suppression steps accept.
MAX_K = 10_000
#: The values of k the risk-utility map tries.
K_SWEEP = (2, 3, 5, 10, 20)
#: Distinct combinations up to which :class:`GroupIndex` answers its queries directly. Measured
#: (CPU of the step): the direct pass wins on the 249-row visits file (its search 9.2 -> 2.7 s
#: of test time) but loses on free1's 3,213 combinations (k = 5: 0.5 s with the tables, 3.8 s
#: direct), where a query's pass over every combination costs more than a look-up per pattern.
DIRECT_COMBINATIONS = 256


# ---------------------------------------------------------------------------- counting
@dataclass
class DistinctKeys:
    """The distinct combinations of quasi-identifier codes with their counts.

    ``codes`` (D x m) are the codes of each combination (a code is meaningless where
    ``wild`` is True: the value matches any value), ``weight`` (D) how many records have it,
    ``inverse`` (n) the combination of each record."""

    codes: np.ndarray
    wild: np.ndarray
    weight: np.ndarray
    inverse: np.ndarray

    @classmethod
    def of(
        cls,
        frame: pd.DataFrame,
        columns: Sequence[str],
        wildcards: Mapping[str, np.ndarray],
    ) -> DistinctKeys:
        """The combinations of ``columns`` in ``frame``; a missing value, and a cell flagged in
        ``wildcards``, matches any value."""
        n, m = len(frame), len(columns)  # at least one column
        codes = np.empty((n, m), dtype=np.int64)
        wild = np.zeros((n, m), dtype=bool)
        for j, column in enumerate(columns):
            codes[:, j] = pd.factorize(frame[column], use_na_sentinel=False)[0]
            wild[:, j] = frame[column].isna().to_numpy()
            if column in wildcards:
                wild[:, j] |= np.asarray(wildcards[column], dtype=bool)
        distinct, inverse, weight = unique_rows(np.where(wild, -1, codes))
        return cls(
            codes=distinct.copy(),
            wild=distinct < 0,
            weight=weight.astype(np.int64),
            inverse=inverse.reshape(-1),
        )

    def compatible_counts(self) -> np.ndarray:
        """For each combination, the number of records compatible with it (agreeing on every
        column where both are not wildcards)."""
        if not self.wild.any():
            return self.weight.copy()  # distinct combinations are the classes
        counts = np.zeros(len(self.weight), dtype=np.int64)
        for rows, group, key in self._pattern_pairs():
            tally = np.bincount(key[group], weights=self.weight[group], minlength=key.max() + 1)
            counts[rows] += tally[key[rows]].astype(np.int64)
        return counts

    def compatible_people(self, persons: np.ndarray) -> np.ndarray:
        """For each combination, the number of distinct people (``persons``: one code >= 0 per
        record) among the records compatible with it: each (combination, person) pair is
        kept once, joined to the combinations it is compatible with, and the distinct
        (combination, person) pairs reached are counted."""
        units = Units.of(self.inverse, persons)
        if not self.wild.any():
            return np.bincount(units.row, minlength=len(self.weight)).astype(np.int64)
        reached = []
        for rows, group, key in self._pattern_pairs():
            sources = np.flatnonzero(group[units.row])
            target, source = equal_key_pairs(key[rows], key[units.row[sources]])
            reached.append(rows[target] * units.n_people + units.person[sources[source]])
        pairs = pd.unique(np.concatenate(reached))
        return np.bincount(pairs // units.n_people, minlength=len(self.weight)).astype(np.int64)

    def _pattern_pairs(self) -> Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Combinations grouped by their set ``P`` of non-wildcard columns: for each pair of
        sets ``(P, Q)``, the combinations with set ``P`` (``rows``), those with set ``Q``
        (``group``, a mask) and one integer ``key`` per combination coding its values on
        ``P & Q``: a combination of ``group`` is compatible with one of ``rows`` exactly when
        their keys are equal."""
        m = self.codes.shape[1]
        bits = (~self.wild).astype(np.int64) @ (1 << np.arange(m, dtype=np.int64))
        patterns, pattern_of = np.unique(bits, return_inverse=True)
        pattern_of = pattern_of.reshape(-1)
        keys: dict[int, np.ndarray] = {}
        for p, pattern in enumerate(patterns):
            rows = np.flatnonzero(pattern_of == p)
            for shared in np.unique(patterns & pattern):
                shared = int(shared)
                if shared not in keys:
                    used = [j for j in range(m) if shared >> j & 1]
                    keys[shared] = (
                        unique_rows(self.codes[:, used])[1]
                        if used
                        else np.zeros(len(self.weight), dtype=np.int64)
                    )
                group = ((patterns & pattern) == shared)[pattern_of]
                yield rows, group, keys[shared]


@dataclass(frozen=True)
class Units:
    """The distinct (combination, person) pairs of the records: ``row`` the combination and
    ``person`` the person of each pair, ``n_people`` one more than the largest person code."""

    row: np.ndarray
    person: np.ndarray
    n_people: int

    @classmethod
    def of(cls, inverse: np.ndarray, persons: np.ndarray) -> Units:
        """The pairs of records whose combinations are ``inverse`` and people ``persons``."""
        n_people = int(persons.max()) + 1
        pairs = pd.unique(inverse.astype(np.int64) * n_people + persons)
        return cls(pairs // n_people, pairs % n_people, n_people)


class GroupIndex:
    """Group counts of the distinct combinations, kept up to date as values are suppressed or
    given back: the index behind the search (see the module docstring).

    Combinations are grouped by their *pattern* ``Q`` (the set of columns where they have a
    value, as bits). For a combination ``d`` with pattern ``P`` and a set ``T`` of columns,
    ``A_T(d)``, the records compatible with ``d`` on every column outside ``T``, is
    ``sum over patterns Q of N[Q, (P & Q) - T][key of d on (P & Q) - T]``, where
    ``N[Q, S]`` counts the records of pattern ``Q`` by their values on the columns ``S``
    (one integer key: the codes read as a mixed-radix number). Then ``f(d) = A_{}(d)``; the
    records at one differing value, in column ``c``, are ``A_{c} - A_{}``; those at two, in
    ``c`` and ``j``, are ``A_{c,j} - A_{c} - A_{j} + A_{}`` (inclusion-exclusion). Each count
    table is built once, when first needed (O(records of Q)), and updated in O(1) per table
    when a combination changes pattern; a query costs one dictionary look-up per pattern.
    So the search costs about (combinations + suppressions x patterns x tables) instead of
    records at risk x combinations.

    With at most :data:`DIRECT_COMBINATIONS` combinations the queries are answered directly
    instead, from the combinations' codes and wildcards (a vectorised pass over every
    combination, O(combinations x columns) per query): on a small file that costs less than a
    dictionary look-up per pattern in Python, and the tables are never built. Both give the
    same counts and the same combinations."""

    def __init__(self, codes: np.ndarray, wild: np.ndarray, weight: np.ndarray) -> None:
        m = codes.shape[1]
        self.codes = np.asarray(codes)
        self.direct = codes.shape[0] <= DIRECT_COMBINATIONS
        spans = [int(codes[:, j].max(initial=0)) + 1 for j in range(m)]
        radix = [math.prod(spans[:j]) for j in range(m)]
        wide = math.prod(spans) >= 2**62  # keys as Python integers then
        self.keyed = np.asarray(codes, dtype=object if wide else np.int64) * np.asarray(
            radix, dtype=object if wide else np.int64
        )
        self.rows = self.keyed.tolist()
        self.m = m
        self.wild = wild
        self.weight = weight
        self.bits = ((~wild).astype(np.int64) @ (1 << np.arange(m, dtype=np.int64))).tolist()
        self.members: dict[int, set[int]] = {}
        for row, pattern in enumerate(self.bits):
            self.members.setdefault(pattern, set()).add(row)
        self.counts: dict[tuple[int, int], dict[Any, int]] = {}
        self.tables_of: dict[int, list[int]] = {}
        self.sorted: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self.joined: dict[tuple[int, int], dict[Any, list[int]]] = {}
        self.lists_of: dict[int, list[int]] = {}

    def _key(self, row: int, columns: int) -> Any:
        keyed = self.rows[row]
        return sum(keyed[j] for j in range(self.m) if columns >> j & 1)

    def _keys_of(self, rows: np.ndarray, columns: int) -> np.ndarray:
        used = [j for j in range(self.m) if columns >> j & 1]
        if not used:
            return np.zeros(len(rows), dtype=self.keyed.dtype)
        return self.keyed[np.ix_(rows, used)].sum(axis=1)

    def _table(self, pattern: int, columns: int) -> dict[Any, int]:
        table = self.counts.get((pattern, columns))
        if table is None:
            rows = np.fromiter(self.members.get(pattern, ()), dtype=np.int64)
            keys, inverse = np.unique(self._keys_of(rows, columns), return_inverse=True)
            sums = np.bincount(inverse.reshape(-1), weights=self.weight[rows], minlength=len(keys))
            table = dict(zip(keys.tolist(), sums.astype(np.int64).tolist(), strict=True))
            self.counts[(pattern, columns)] = table
            self.tables_of.setdefault(pattern, []).append(columns)
        return table

    def _compatible_mask(self, row: int, outside: int) -> np.ndarray:
        """Per combination, whether it is compatible with combination ``row`` on every column
        not in ``outside`` (bits): on each column where ``row`` has a value, a wildcard or the
        same code (the direct answer, see the class notes)."""
        mine = self.bits[row] & ~outside
        found = np.ones(self.codes.shape[0], dtype=bool)
        for j in range(self.m):
            if mine >> j & 1:
                found &= self.wild[:, j] | (self.codes[:, j] == self.codes[row, j])
        return found

    def compatible(self, row: int, outside: int = 0) -> int:
        """``A_T(row)`` for the columns ``outside`` (bits): the records compatible with
        combination ``row`` on every column not in ``outside``."""
        if self.direct:
            return int(self.weight[self._compatible_mask(row, outside)].sum())
        mine = self.bits[row] & ~outside
        total = 0
        for pattern, rows in self.members.items():
            if rows:
                columns = mine & pattern
                total += self._table(pattern, columns).get(self._key(row, columns), 0)
        return total

    def set_wild(self, row: int, column: int, wild: bool) -> None:
        """Suppress (``wild``) or give back the value of combination ``row`` in ``column``."""
        old = self.bits[row]
        new = old & ~(1 << column) if wild else old | (1 << column)
        weight = int(self.weight[row])
        for columns in self.tables_of.get(old, ()):
            self.counts[(old, columns)][self._key(row, columns)] -= weight
        for columns in self.tables_of.get(new, ()):
            table = self.counts[(new, columns)]
            key = self._key(row, columns)
            table[key] = table.get(key, 0) + weight
        for columns in self.lists_of.get(new, ()):
            self.joined[(new, columns)].setdefault(self._key(row, columns), []).append(row)
        self.members[old].discard(row)
        self.members.setdefault(new, set()).add(row)
        self.bits[row] = new
        self.wild[row, column] = wild

    def neighbours(self, row: int, column: int) -> list[int]:
        """The combinations with a value in ``column`` different from combination ``row``'s
        and compatible with it on every other column (one differing value)."""
        own = self.rows[row][column]
        return [
            other
            for other in self.compatible_rows(row, 1 << column)
            if self.bits[other] >> column & 1 and self.rows[other][column] != own
        ]

    def compatible_rows(self, row: int, outside: int = 0) -> list[int]:
        """The combinations counted in ``A_T(row)`` (:meth:`compatible`), listed: per pattern,
        those whose key on the shared columns is ``row``'s, found in the pattern's members
        sorted by that key."""
        if self.direct:
            return np.flatnonzero(self._compatible_mask(row, outside)).tolist()
        mine = self.bits[row] & ~outside
        found: list[int] = []
        for pattern, rows in self.members.items():
            if not rows:
                continue
            columns = mine & pattern
            keys, order = self._sorted(pattern, columns)
            key = self._key(row, columns)
            lo = int(np.searchsorted(keys, key, side="left"))
            hi = int(np.searchsorted(keys, key, side="right"))
            candidates = set(order[lo:hi].tolist())
            candidates.update(self.joined[(pattern, columns)].get(key, ()))
            found += [other for other in candidates if self.bits[other] == pattern]
        return found

    def _sorted(self, pattern: int, columns: int) -> tuple[np.ndarray, np.ndarray]:
        """The members of ``pattern`` sorted by their key on ``columns`` (when first asked;
        combinations that join the pattern later are listed in ``joined``, those that left
        are filtered out by the caller)."""
        found = self.sorted.get((pattern, columns))
        if found is None:
            rows = np.fromiter(self.members[pattern], dtype=np.int64)
            keys = self._keys_of(rows, columns)
            order = np.argsort(keys, kind="stable")
            found = (keys[order], rows[order])
            self.sorted[(pattern, columns)] = found
            self.joined[(pattern, columns)] = {}
            self.lists_of.setdefault(pattern, []).append(columns)
        return found


class PeopleOf:
    """The people of each combination's records (from :class:`Units`), to count the distinct
    people of a set of combinations."""

    def __init__(self, units: Units, combinations: int) -> None:
        order = np.argsort(units.row, kind="stable")
        self.person = units.person[order]
        self.start = np.searchsorted(units.row[order], np.arange(combinations + 1))

    def among(self, rows: Sequence[int]) -> int:
        """The number of distinct people with a record in the combinations ``rows``."""
        if not rows:
            return 0
        chosen = np.asarray(rows, dtype=np.int64)
        starts, lengths = self.start[chosen], self.start[chosen + 1] - self.start[chosen]
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
        return int(np.unique(self.person[offsets + np.arange(int(lengths.sum()))]).size)


def suppression_order(frame: pd.DataFrame, columns: Sequence[str]) -> list[int]:
    """sdcMicro's default order of suppression: the column with the most distinct values
    first (ties: the later column first)."""
    levels = [frame[c].nunique(dropna=True) for c in columns]
    ascending = sorted(range(len(columns)), key=lambda j: levels[j])  # stable
    return ascending[::-1]


def suppression_pattern(
    keys: DistinctKeys,
    k: int,
    order: Sequence[int],
    by_importance: bool = False,
    persons: np.ndarray | None = None,
    kept: Sequence[int] = (),
) -> np.ndarray:
    """Which values of each combination to suppress so that every record is compatible with at
    least ``k`` records (see the module docstring): a (D x m) array, True where a value is
    suppressed or was already a wildcard. ``order`` lists the columns from the first to
    suppress to the last; with ``by_importance`` it decides which column is suppressed
    (the first that helps), otherwise it only breaks ties. With ``persons`` (one code >= 0
    per record) the records compatible with each record hold at least ``k`` distinct
    people. The columns ``kept`` (indices) are never suppressed; a record that cannot reach
    ``k`` without them is left as it is (see the module docstring)."""
    if persons is not None:
        return _people_pattern(keys, k, order, by_importance, persons, kept)
    wild = keys.wild.copy()
    m = keys.codes.shape[1]
    rank = np.empty(m, dtype=np.int64)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(len(order))
    f = keys.compatible_counts()
    violators = np.flatnonzero(f < k)
    check_search_work(keys.weight, violators, m, k)
    violators = violators[np.argsort(f[violators], kind="stable")]
    index = GroupIndex(keys.codes, wild, keys.weight)
    allowed, may = _allowed(m, kept)
    history: list[tuple[int, int]] = []
    for row in violators.tolist():
        check_cancelled()  # a stale job stops here (deid_core.cancellation)
        if kept and index.compatible(row, allowed) < k:
            continue  # cannot be fixed without a kept column: left as it is
        while (have := index.compatible(row)) < k:
            candidates = np.flatnonzero(~wild[row] & may)
            gain = np.zeros(m, dtype=np.int64)
            for column in candidates.tolist():
                gain[column] = index.compatible(row, 1 << column) - have
            needed = _needs_ahead(candidates, gain, by_importance)
            ahead = _ahead(index, row, candidates, needed, gain + have, have)
            column = _choose(candidates, gain, ahead, rank, by_importance)
            index.set_wild(row, column, True)
            history.append((row, column))
    _give_back(index, k, reversed(history))
    return wild


def search_work(weight: np.ndarray, violators: np.ndarray, k: int) -> int:
    """The work of the search, known before it starts: the records in classes smaller than k
    times k (see :data:`deid_core.bounds.SUPPRESSION_WORK` for the timings behind it)."""
    return int(weight[violators].sum()) * int(k)


def check_search_work(weight: np.ndarray, violators: np.ndarray, m: int, k: int) -> None:
    """Refuse a search whose :func:`search_work` passes the bound ``suppression_work``."""
    bounds.SUPPRESSION_WORK.check(
        search_work(weight, violators, k),
        f"Local suppression at k = {k} of {int(weight[violators].sum()):,} records in classes "
        f"smaller than k, among {len(weight):,} distinct combinations of {m} quasi-identifiers, "
        "needs (records below k times k)",
    )


def _needs_ahead(candidates: np.ndarray, gain: np.ndarray, by_importance: bool) -> np.ndarray:
    """The candidates whose ``ahead`` :func:`_choose` reads: those tied on the largest
    ``gain`` (when several are), or, with an importance order, all when none gains."""
    if by_importance:
        return candidates if not (gain[candidates] > 0).any() else candidates[:0]
    best = gain[candidates] == gain[candidates].max()
    return candidates[best] if best.sum() > 1 else candidates[:0]


def _ahead(
    index: GroupIndex,
    row: int,
    candidates: np.ndarray,
    needed: np.ndarray,
    single: np.ndarray,
    have: int,
) -> np.ndarray:
    """Per column ``c`` of ``needed``, the records two differing values away from combination
    ``row``, one of them in ``c``: ``sum over candidates j of A_{c,j} - A_{c} - A_{j} +
    A_{}`` (``single[j]`` is ``A_{j}``, ``have`` is ``A_{}``); zero elsewhere."""
    ahead = np.zeros(len(single), dtype=np.int64)
    for column in needed.tolist():
        ahead[column] = sum(
            index.compatible(row, 1 << column | 1 << other) - single[column] - single[other] + have
            for other in candidates.tolist()
            if other != column
        )
    return ahead


def _allowed(m: int, kept: Sequence[int]) -> tuple[int, np.ndarray]:
    """The columns that may be suppressed, all ``m`` but the ``kept`` ones: as bits and as a
    mask."""
    may = np.ones(m, dtype=bool)
    may[list(kept)] = False
    return sum(1 << j for j in range(m) if may[j]), may


def _people_pattern(
    keys: DistinctKeys,
    k: int,
    order: Sequence[int],
    by_importance: bool,
    persons: np.ndarray,
    kept: Sequence[int] = (),
) -> np.ndarray:
    """:func:`suppression_pattern` counting distinct people: the same greedy choice, each
    candidate's gain the people it adds to the record's compatible records (counted afresh
    over the compatible combinations the index lists, people not being additive over
    combinations); ties by records as there."""
    wild = keys.wild.copy()
    m = keys.codes.shape[1]
    rank = np.empty(m, dtype=np.int64)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(len(order))
    f = keys.compatible_people(persons)
    violators = np.flatnonzero(f < k)
    check_search_work(keys.weight, violators, m, k)
    violators = violators[np.argsort(f[violators], kind="stable")]
    index = GroupIndex(keys.codes, wild, keys.weight)
    people = PeopleOf(Units.of(keys.inverse, persons), len(keys.weight))
    allowed, may = _allowed(m, kept)
    history: list[tuple[int, int]] = []
    for row in violators.tolist():
        check_cancelled()  # a stale job stops here (deid_core.cancellation)
        if kept and people.among(index.compatible_rows(row, allowed)) < k:
            continue  # cannot be fixed without a kept column: left as it is
        while (have := people.among(index.compatible_rows(row))) < k:
            candidates = np.flatnonzero(~wild[row] & may)
            gain = np.zeros(m, dtype=np.int64)
            for column in candidates.tolist():
                gain[column] = people.among(index.compatible_rows(row, 1 << column)) - have
            needed = _needs_ahead(candidates, gain, by_importance)
            ahead = np.zeros(m, dtype=np.int64)
            if needed.size:  # ties are broken by records, as in the search in records
                single = np.zeros(m, dtype=np.int64)
                for column in candidates.tolist():
                    single[column] = index.compatible(row, 1 << column)
                ahead = _ahead(index, row, candidates, needed, single, index.compatible(row))
            column = _choose(candidates, gain, ahead, rank, by_importance)
            index.set_wild(row, column, True)
            history.append((row, column))
    _give_back_people(index, people, k, reversed(history))
    return wild


def _give_back_people(
    index: GroupIndex, people: PeopleOf, k: int, cells: Iterable[tuple[int, int]]
) -> None:
    """:func:`_give_back` counting distinct people: a suppression is undone when the
    combination keeps at least ``k`` people, and every combination that loses it from its
    compatible records keeps at least ``k`` people or as many as it had. (Counted in people,
    a combination that loses a record may keep its person through another of their records:
    its class does not shrink, so the value is not needed for it, even when that combination
    cannot reach k at all.)"""
    for row, column in cells:
        check_cancelled()
        index.set_wild(row, column, False)
        keeps = people.among(index.compatible_rows(row)) >= k
        if keeps:
            short = {}
            for other in index.neighbours(row, column):
                after = people.among(index.compatible_rows(other))
                if after < k:
                    short[other] = after
            if short:
                index.set_wild(row, column, True)
                keeps = all(
                    after >= people.among(index.compatible_rows(other))
                    for other, after in short.items()
                )
                index.set_wild(row, column, False)
        if not keeps:
            index.set_wild(row, column, True)


def _give_back(index: GroupIndex, k: int, cells: Iterable[tuple[int, int]]) -> None:
    """Undo each suppression of ``cells`` (row, column) in turn, in place in the index,
    whenever the combination and every combination that loses it from its compatible records
    (those one differing value away, in that column) keep ``f >= k`` without it. Restoring a
    value only shrinks classes, so a value that was needed stays needed after later
    restorations."""
    for row, column in cells:
        check_cancelled()
        index.set_wild(row, column, False)
        keeps = index.compatible(row) >= k and all(
            index.compatible(other) >= k for other in index.neighbours(row, column)
        )
        if not keeps:
            index.set_wild(row, column, True)


def suppressed_cells(
    keys: DistinctKeys, pattern: np.ndarray, k: int, persons: np.ndarray | None = None
) -> np.ndarray:
    """Per record (n x m), the cells of :func:`suppression_pattern` after a second pruning
    pass one record at a time: the search suppresses identical records alike, and one of
    them may get a value back while the others keep theirs suppressed (records (a, y, 3) x 2,
    (b, x, 3) x 2, (b, y, 1) x 2 at k = 3: one of the first two keeps its 3). Afterwards no
    single suppressed value can be restored without a record falling below k (in distinct
    people with ``persons``)."""
    cells = pattern[keys.inverse]
    added = pattern & ~keys.wild
    split = (added.any(axis=1)) & (keys.weight > 1)
    if not split.any():
        return cells
    kept = np.flatnonzero(~split)
    records = np.flatnonzero(split[keys.inverse])
    combination = keys.inverse[records]
    state = DistinctKeys(
        codes=np.vstack([keys.codes[kept], keys.codes[combination]]),
        wild=np.vstack([pattern[kept], pattern[combination]]),
        weight=np.concatenate([keys.weight[kept], np.ones(len(records), dtype=np.int64)]),
        inverse=np.empty(0, dtype=np.int64),
    )
    first = len(kept)
    tried = [
        (first + i, int(j))
        for i in range(len(records) - 1, -1, -1)
        for j in np.flatnonzero(added[combination[i]])[::-1]
    ]
    if persons is None:
        _give_back(GroupIndex(state.codes, state.wild, state.weight), k, tried)
    else:
        position = np.full(len(keys.weight), -1, dtype=np.int64)
        position[kept] = np.arange(first)
        inverse = position[keys.inverse]
        inverse[records] = first + np.arange(len(records))
        people = PeopleOf(Units.of(inverse, persons), len(state.weight))
        _give_back_people(GroupIndex(state.codes, state.wild, state.weight), people, k, tried)
    cells[records] = state.wild[first:]
    return cells


def _choose(
    candidates: np.ndarray,
    gain: np.ndarray,
    ahead: np.ndarray,
    rank: np.ndarray,
    by_importance: bool,
) -> int:
    """The column to suppress among ``candidates`` (see :func:`suppression_pattern`)."""
    if by_importance:
        for useful in (gain[candidates] > 0, ahead[candidates] > 0):
            if useful.any():
                chosen = candidates[useful]
                return int(chosen[np.argmin(rank[chosen])])
        return int(candidates[np.argmin(rank[candidates])])
    best = np.lexsort((rank[candidates], -ahead[candidates], -gain[candidates]))[0]
    return int(candidates[best])


def _records_below_k(
    keys: DistinctKeys, cells: np.ndarray, k: int, persons: np.ndarray | None
) -> int:
    """How many records are compatible with fewer than ``k`` records (distinct people with
    ``persons``) once the ``cells`` (n x m, True: suppressed or missing) match any value."""
    codes = keys.codes[keys.inverse]
    distinct, inverse, weight = unique_rows(np.where(cells, -1, codes))
    state = DistinctKeys(
        distinct.copy(), distinct < 0, weight.astype(np.int64), inverse.reshape(-1)
    )
    sizes = state.compatible_counts() if persons is None else state.compatible_people(persons)
    return int((sizes[state.inverse] < k).sum())


def _released_as_missing(series: pd.Series, mask: np.ndarray) -> pd.Series:
    """``series`` with the flagged values missing (whole numbers become floats, true/false
    values objects, so that they can hold a missing value)."""
    if not mask.any():
        return series
    if pd.api.types.is_bool_dtype(series.dtype) and not isinstance(
        series.dtype, pd.api.extensions.ExtensionDtype
    ):
        series = series.astype(object)
    elif pd.api.types.is_integer_dtype(series.dtype) and not isinstance(
        series.dtype, pd.api.extensions.ExtensionDtype
    ):
        series = series.astype("float64")
    return series.where(~mask)


def _check_k(k: int, n: int, label: str, persons: np.ndarray | None) -> None:
    if k > n:
        raise RecipeError(
            f"{label}: k = {k} is more than the {n:,} records to release, so no class can reach "
            "it; choose a smaller k."
        )
    people = 0 if persons is None else int(np.unique(persons).size)
    if persons is not None and k > people:
        raise RecipeError(
            f"{label}: k = {k} is more than the {people:,} people whose records are to be "
            "released, so no class can reach it; choose a smaller k."
        )


def _need_quasi_identifiers(quasi_identifiers: Sequence[str], label: str) -> None:
    if not quasi_identifiers:
        raise RecipeError(
            f"{label} works on the quasi-identifiers, and none is chosen: choose them on the "
            "Data page (or in the recipe's roles)."
        )


# ---------------------------------------------------------------------------- steps
@dataclass(frozen=True)
class LocalSuppression(DataStep):
    """Suppress single quasi-identifier values (released as missing) until every record is
    compatible with at least ``k`` records, a suppressed value matching any value (see the
    module docstring for the search).

    ``importance`` optionally lists quasi-identifiers from the most important (suppressed last,
    if at all possible) down; unlisted ones are suppressed before listed ones. Without it the
    number of suppressed values is kept small, ties going to the column with the most distinct
    values, as sdcMicro's default importance does.

    ``keep`` lists quasi-identifiers that are never suppressed (dates whose intervals must stay
    exact, say). A record that cannot reach ``k`` by suppressing only the other
    quasi-identifiers is left as it is and counted (``records_below_k``): the release's risk,
    computed from the released file, then stays above ``1/k``.
    """

    k: int = 5
    importance: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()

    method: ClassVar[str] = "local_suppression"
    label: ClassVar[str] = "Local suppression"
    sweep_parameter: ClassVar[str | None] = "k"

    def __post_init__(self) -> None:
        for name in ("importance", "keep"):
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))
        super().__post_init__()

    def _validate(self) -> None:
        require_int(self.k, "k", self.label, 2, MAX_K)
        column_names(self.importance, "importance", self.label)
        column_names(self.keep, "keep", self.label)
        both = [c for c in self.importance if c in self.keep]
        if both:
            raise RecipeError(
                f"{self.label}: {', '.join(repr(c) for c in both)} is both never suppressed "
                "('keep') and in the importance order; list it in one of them."
            )

    def reads(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return tuple(quasi_identifiers)

    def writes(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return tuple(c for c in quasi_identifiers if c not in self.keep)

    def _apply(
        self,
        frame: pd.DataFrame,
        quasi_identifiers: tuple[str, ...],
        replicate: int,
        wildcards: Mapping[str, np.ndarray],
        *,
        persons: np.ndarray | None = None,
    ) -> DataOutcome:
        qis = quasi_identifiers
        _need_quasi_identifiers(qis, self.label)
        for name, named in (("the importance order", self.importance), ("'keep'", self.keep)):
            unknown = [c for c in named if c not in qis]
            if unknown:
                listed = ", ".join(f"'{c}'" for c in unknown)
                raise RecipeError(
                    f"{self.label}: {name} names {listed}, which is not a quasi-identifier."
                )
        if len(set(self.keep)) == len(qis):
            raise RecipeError(
                f"{self.label}: every quasi-identifier is kept ('keep'), so no value can be "
                "suppressed; keep fewer columns or use record suppression."
            )
        _check_k(self.k, len(frame), self.label, persons)
        keys = DistinctKeys.of(frame, qis, wildcards)
        default = suppression_order(frame, qis)
        listed = [qis.index(c) for c in self.importance]
        order = [j for j in default if j not in listed] + listed[::-1]
        kept = sorted({qis.index(c) for c in self.keep})
        pattern = suppression_pattern(
            keys, self.k, order, by_importance=bool(listed), persons=persons, kept=kept
        )
        cells = suppressed_cells(keys, pattern, self.k, persons)
        new_cells = cells & ~keys.wild[keys.inverse]
        values: dict[str, pd.Series] = {}
        suppressed: dict[str, np.ndarray] = {}
        counts: dict[str, int] = {}
        for j, column in enumerate(qis):
            new = new_cells[:, j]
            counts[column] = int(new.sum())
            if new.any():
                values[column] = _released_as_missing(frame[column], new)
                suppressed[column] = new
        touched = int(np.any(new_cells, axis=1).sum())
        facts = {
            "k": self.k,
            "suppressed_values": counts,
            "total_suppressed": int(sum(counts.values())),
            "records_with_suppression": touched,
            "records": len(frame),
        }
        if kept:
            facts["kept"] = list(self.keep)
            facts["records_below_k"] = _records_below_k(keys, cells, self.k, persons)
        return DataOutcome(values=values, wildcards=suppressed, facts=facts)

    def describe(self) -> str:
        order = (
            f", keeping {', '.join(self.importance)} if possible (most important first)"
            if self.importance
            else ""
        )
        never = f"; {', '.join(self.keep)} never suppressed" if self.keep else ""
        return (
            f"local suppression: single quasi-identifier values released as missing until "
            f"every record matches at least {self.k} records{order}{never}"
        )

    def summary(self, facts: Mapping[str, Any]) -> str:
        per_column = facts.get("suppressed_values", {})
        listed = ", ".join(f"{c} {n:,}" for c, n in per_column.items()) or "none"
        below = int(facts.get("records_below_k", 0))
        left = (
            f"; {below:,} records cannot reach k = {facts.get('k', self.k)} without suppressing "
            f"{', '.join(self.keep)} (never suppressed) and stay below it"
            if below
            else ""
        )
        return (
            f"Local suppression (k = {facts.get('k', self.k)}): "
            f"{facts.get('total_suppressed', 0):,} values suppressed ({listed}){left}"
        )

    def sweep_values(self, series: pd.Series | None = None) -> list[Any]:
        return list(K_SWEEP)


@dataclass(frozen=True)
class RecordSuppression(DataStep):
    """Remove the records whose class is smaller than ``k`` from the release, if they are at
    most ``limit`` (a share, 0..1) of the records (ARX's suppression limit); otherwise the step
    cannot reach k and says so. Cells suppressed by an earlier local suppression match any
    value, so removing records can shrink other classes: removal repeats until every
    remaining record's class reaches k, within the same limit."""

    k: int = 5
    limit: float = 0.05

    method: ClassVar[str] = "record_suppression"
    label: ClassVar[str] = "Record suppression"
    sweep_parameter: ClassVar[str | None] = "k"
    removes_records: ClassVar[bool] = True

    def _validate(self) -> None:
        require_int(self.k, "k", self.label, 2, MAX_K)
        limit = require_finite(self.limit, "limit", self.label)
        if not 0 <= limit <= 1:
            raise RecipeError(f"{self.label}: 'limit' is a share of the records, from 0 to 1.")

    def reads(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return tuple(quasi_identifiers)

    def _apply(
        self,
        frame: pd.DataFrame,
        quasi_identifiers: tuple[str, ...],
        replicate: int,
        wildcards: Mapping[str, np.ndarray],
        *,
        persons: np.ndarray | None = None,
    ) -> DataOutcome:
        _need_quasi_identifiers(quasi_identifiers, self.label)
        n = len(frame)
        _check_k(self.k, n, self.label, persons)
        keep = np.ones(n, dtype=bool)
        while True:
            rows = np.flatnonzero(keep)
            subset = {c: np.asarray(w, dtype=bool)[rows] for c, w in wildcards.items()}
            keys = DistinctKeys.of(frame.iloc[rows], quasi_identifiers, subset)
            sizes = (
                keys.compatible_counts()
                if persons is None
                else keys.compatible_people(persons[rows])
            )
            small = sizes[keys.inverse] < self.k
            if not small.any():
                break
            keep[rows[small]] = False
            self._check_removed(int(n - keep.sum()), n)
            if not keys.wild.any():
                # Without a value that matches any value the classes are a partition: removing
                # whole classes leaves the others as they were, so none is now below k.
                break
        return DataOutcome(keep=keep, facts=self._facts(keep))

    def outcome_of_classes(
        self,
        class_of: np.ndarray,
        class_people: np.ndarray,
        quasi_identifiers: Sequence[str],
        persons: np.ndarray | None = None,
    ) -> DataOutcome:
        """The step's outcome on records whose quasi-identifiers hold no missing and no
        suppressed value, given their classes (``class_of``: the class of each record, equal
        values on every quasi-identifier; ``class_people``: per class, the distinct people in
        it, or its records with one person per record) and ``persons`` (as :meth:`apply` takes
        them, for the check of k): the same outcome as :meth:`apply` on those records. The
        classes are then a partition and a record's class size is its class's count, so one
        pass removes the records of classes below k and leaves every other class whole."""
        _need_quasi_identifiers(tuple(quasi_identifiers), self.label)
        n = int(np.asarray(class_of).size)
        if n == 0:
            raise RecipeError(f"{self.label}: no records are left to work on.")
        _check_k(self.k, n, self.label, person_codes(persons, n, self.label))
        keep = np.asarray(class_people)[class_of] >= self.k
        self._check_removed(int(n - keep.sum()), n)
        return DataOutcome(keep=keep, facts=self._facts(keep))

    def _check_removed(self, removed: int, n: int) -> None:
        """Refuse when ``removed`` of the ``n`` records is all of them or over the limit."""
        if removed == n:
            raise RecipeError(
                f"{self.label} cannot reach k = {self.k}: every record is in a class "
                f"smaller than {self.k}. Coarsen the quasi-identifiers first."
            )
        if removed > self.limit * n:
            raise RecipeError(
                f"{self.label} cannot reach k = {self.k} within the limit: {removed:,} "
                f"records ({removed / n:.1%}) are in classes smaller than {self.k}, more "
                f"than the limit of {self.limit:.1%}. Coarsen the quasi-identifiers first, "
                "or raise the limit."
            )

    def _facts(self, keep: np.ndarray) -> dict[str, Any]:
        n = int(keep.size)
        removed = int(n - keep.sum())
        return {
            "k": self.k,
            "limit": self.limit,
            "records_removed": removed,
            "share_removed": removed / n,
            "records": n,
        }

    def describe(self) -> str:
        return (
            f"record suppression: records in classes smaller than {self.k} removed, at most "
            f"{self.limit:.1%} of the records"
        )

    def summary(self, facts: Mapping[str, Any]) -> str:
        return (
            f"Record suppression (k = {facts.get('k', self.k)}): "
            f"{facts.get('records_removed', 0):,} of {facts.get('records', 0):,} records removed "
            f"({facts.get('share_removed', 0.0):.1%}; limit {self.limit:.1%})"
        )

    def sweep_values(self, series: pd.Series | None = None) -> list[Any]:
        return list(K_SWEEP)
