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

Values missing in the original data are treated as a category of their own here, whatever the
session's missing-value rule: the class sizes reached are then at least k under either rule
(a missing value treated as matching any value can only add compatible records). Suppressed
values always match any value: the risk measures count compatible records for them.

**Record suppression** (ARX's suppression limit): the records in classes smaller than k are
removed from the release if they are at most ``limit`` of the records, else the step says it
cannot reach k within the limit.
"""

from __future__ import annotations

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
    require_finite,
    require_int,
    unique_rows,
)

#: Largest k the suppression steps accept.
MAX_K = 10_000
#: The values of k the risk-utility map tries.
K_SWEEP = (2, 3, 5, 10, 20)


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
        """The combinations of ``columns`` in ``frame``; a missing value is a code of its own,
        a cell flagged in ``wildcards`` matches any value."""
        n, m = len(frame), len(columns)  # at least one column
        codes = np.empty((n, m), dtype=np.int64)
        wild = np.zeros((n, m), dtype=bool)
        for j, column in enumerate(columns):
            codes[:, j] = pd.factorize(frame[column], use_na_sentinel=False)[0]
            if column in wildcards:
                wild[:, j] = np.asarray(wildcards[column], dtype=bool)
        distinct, inverse, weight = unique_rows(np.where(wild, -1, codes))
        return cls(
            codes=distinct.copy(),
            wild=distinct < 0,
            weight=weight.astype(np.int64),
            inverse=inverse.reshape(-1),
        )

    def compatible_counts(self) -> np.ndarray:
        """For each combination, the number of records compatible with it (agreeing on every
        column where both are not wildcards).

        Combinations are grouped by their set ``P`` of non-wildcard columns; for each pair of
        sets ``(P, Q)`` the records with set ``Q`` that share the values on ``P & Q`` are
        counted through one integer key."""
        if not self.wild.any():
            return self.weight.copy()  # distinct combinations are the classes
        m = self.codes.shape[1]
        bits = (~self.wild).astype(np.int64) @ (1 << np.arange(m, dtype=np.int64))
        patterns, pattern_of = np.unique(bits, return_inverse=True)
        pattern_of = pattern_of.reshape(-1)
        counts = np.zeros(len(self.weight), dtype=np.int64)
        keys: dict[int, np.ndarray] = {}
        for p, pattern in enumerate(patterns):
            rows = pattern_of == p
            for shared in np.unique(patterns & pattern):
                shared = int(shared)
                if shared not in keys:
                    used = [j for j in range(m) if shared >> j & 1]
                    keys[shared] = (
                        unique_rows(self.codes[:, used])[1]
                        if used
                        else np.zeros(len(self.weight), dtype=np.int64)
                    )
                key = keys[shared]
                group = ((patterns & pattern) == shared)[pattern_of]
                tally = np.bincount(key[group], weights=self.weight[group], minlength=key.max() + 1)
                counts[rows] += tally[key[rows]].astype(np.int64)
        return counts

    def differences(self, row: int) -> np.ndarray:
        """(D x m) True where a combination and combination ``row`` both have a value and the
        values differ."""
        return (self.codes != self.codes[row]) & ~self.wild & ~self.wild[row]


def suppression_order(frame: pd.DataFrame, columns: Sequence[str]) -> list[int]:
    """sdcMicro's default order of suppression: the column with the most distinct values
    first (ties: the later column first)."""
    levels = [frame[c].nunique(dropna=True) for c in columns]
    ascending = sorted(range(len(columns)), key=lambda j: levels[j])  # stable
    return ascending[::-1]


def suppression_pattern(
    keys: DistinctKeys, k: int, order: Sequence[int], by_importance: bool = False
) -> np.ndarray:
    """Which values of each combination to suppress so that every record is compatible with at
    least ``k`` records (see the module docstring): a (D x m) array, True where a value is
    suppressed or was already a wildcard. ``order`` lists the columns from the first to
    suppress to the last; with ``by_importance`` it decides which column is suppressed
    (the first that helps), otherwise it only breaks ties."""
    wild = keys.wild.copy()
    codes, weight = keys.codes, keys.weight
    rank = np.empty(codes.shape[1], dtype=np.int64)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(len(order))
    state = DistinctKeys(codes, wild, weight, keys.inverse)
    f = state.compatible_counts()
    violators = np.flatnonzero(f < k)
    check_search_work(weight, violators, codes.shape[1], k)
    violators = violators[np.argsort(f[violators], kind="stable")]
    history: list[tuple[int, int]] = []
    for row in violators:
        check_cancelled()
        while f[row] < k:
            differ = state.differences(row)
            distance = differ.sum(axis=1)
            one, two = distance == 1, distance == 2
            gain = weight[one] @ differ[one]
            ahead = weight[two] @ differ[two]
            candidates = np.flatnonzero(~wild[row])
            column = _choose(candidates, gain, ahead, rank, by_importance)
            wild[row, column] = True
            movers = one & differ[:, column]
            f[movers] += weight[row]
            f[row] += gain[column]
            history.append((int(row), int(column)))
    _give_back(state, f, k, reversed(history))
    return wild


def search_work(weight: np.ndarray, violators: np.ndarray, m: int) -> int:
    """An upper bound on the element operations of the search, known before it starts.

    With ``D`` distinct combinations of ``m`` quasi-identifiers, ``V`` of them below k:
    each violating combination takes at most ``m`` suppressions, each comparing it with every
    combination (``D x m``): ``V D m^2``. The second pruning pass (:func:`suppressed_cells`)
    splits the records of violating combinations held by more than one record (``R`` of
    them) and tries each of their at most ``m`` suppressed values against ``D + R`` rows:
    ``R (D + R) m^2``. Measured on two cores: about 10-20 ns per operation.
    """
    d = len(weight)
    shared = weight[violators]
    split = int(shared[shared > 1].sum())
    return m * m * (len(violators) * d + split * (d + split))


def check_search_work(weight: np.ndarray, violators: np.ndarray, m: int, k: int) -> None:
    """Refuse a search whose :func:`search_work` passes the bound ``suppression_work``."""
    bounds.SUPPRESSION_WORK.check(
        search_work(weight, violators, m),
        f"Local suppression at k = {k} of {int(weight[violators].sum()):,} records in classes "
        f"smaller than k, among {len(weight):,} distinct combinations of {m} quasi-identifiers, "
        "needs",
    )


def _give_back(
    state: DistinctKeys, f: np.ndarray, k: int, cells: Iterable[tuple[int, int]]
) -> None:
    """Undo each suppression of ``cells`` (row, column) in turn, in place in ``state.wild``
    and ``f``, whenever every record keeps ``f >= k`` without it. Restoring a value only
    shrinks classes, so a value that was needed stays needed after later restorations."""
    wild, weight = state.wild, state.weight
    for row, column in cells:
        check_cancelled()
        wild[row, column] = False
        differ = state.differences(row)
        distance = differ.sum(axis=1)
        losers = (distance == 1) & differ[:, column]
        own = int(weight[distance == 0].sum())
        if own >= k and np.all(f[losers] - weight[row] >= k):
            f[row] = own
            f[losers] -= weight[row]
        else:
            wild[row, column] = True


def suppressed_cells(keys: DistinctKeys, pattern: np.ndarray, k: int) -> np.ndarray:
    """Per record (n x m), the cells of :func:`suppression_pattern` after a second pruning
    pass one record at a time: the search suppresses identical records alike, and one of
    them may get a value back while the others keep theirs suppressed (records (a, y, 3) x 2,
    (b, x, 3) x 2, (b, y, 1) x 2 at k = 3: one of the first two keeps its 3). Afterwards no
    single suppressed value can be restored without a record falling below k."""
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
    f = state.compatible_counts()
    first = len(kept)
    tried = [
        (first + i, int(j))
        for i in range(len(records) - 1, -1, -1)
        for j in np.flatnonzero(added[combination[i]])[::-1]
    ]
    _give_back(state, f, k, tried)
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


def _check_k(k: int, n: int, label: str) -> None:
    if k > n:
        raise RecipeError(
            f"{label}: k = {k} is more than the {n:,} records to release, so no class can reach "
            "it; choose a smaller k."
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
    """

    k: int = 5
    importance: tuple[str, ...] = ()

    method: ClassVar[str] = "local_suppression"
    label: ClassVar[str] = "Local suppression"
    sweep_parameter: ClassVar[str | None] = "k"

    def __post_init__(self) -> None:
        if isinstance(self.importance, list):
            object.__setattr__(self, "importance", tuple(self.importance))
        super().__post_init__()

    def _validate(self) -> None:
        require_int(self.k, "k", self.label, 2, MAX_K)
        column_names(self.importance, "importance", self.label)

    def reads(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return tuple(quasi_identifiers)

    def writes(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return tuple(quasi_identifiers)

    def _apply(
        self,
        frame: pd.DataFrame,
        quasi_identifiers: tuple[str, ...],
        replicate: int,
        wildcards: Mapping[str, np.ndarray],
    ) -> DataOutcome:
        qis = quasi_identifiers
        _need_quasi_identifiers(qis, self.label)
        unknown = [c for c in self.importance if c not in qis]
        if unknown:
            listed = ", ".join(f"'{c}'" for c in unknown)
            raise RecipeError(
                f"{self.label}: the importance order names {listed}, which is not a "
                "quasi-identifier."
            )
        _check_k(self.k, len(frame), self.label)
        keys = DistinctKeys.of(frame, qis, wildcards)
        default = suppression_order(frame, qis)
        listed = [qis.index(c) for c in self.importance]
        order = [j for j in default if j not in listed] + listed[::-1]
        pattern = suppression_pattern(keys, self.k, order, by_importance=bool(listed))
        cells = suppressed_cells(keys, pattern, self.k)
        values: dict[str, pd.Series] = {}
        suppressed: dict[str, np.ndarray] = {}
        counts: dict[str, int] = {}
        for j, column in enumerate(qis):
            before = np.asarray(wildcards.get(column, np.zeros(len(frame), bool)), dtype=bool)
            new = cells[:, j] & ~before
            counts[column] = int(new.sum())
            if new.any():
                values[column] = _released_as_missing(frame[column], new)
                suppressed[column] = new
        touched = int(np.any(cells & ~keys.wild[keys.inverse], axis=1).sum())
        facts = {
            "k": self.k,
            "suppressed_values": counts,
            "total_suppressed": int(sum(counts.values())),
            "records_with_suppression": touched,
            "records": len(frame),
        }
        return DataOutcome(values=values, wildcards=suppressed, facts=facts)

    def describe(self) -> str:
        order = (
            f", keeping {', '.join(self.importance)} if possible (most important first)"
            if self.importance
            else ""
        )
        return (
            f"local suppression: single quasi-identifier values released as missing until "
            f"every record matches at least {self.k} records{order}"
        )

    def summary(self, facts: Mapping[str, Any]) -> str:
        per_column = facts.get("suppressed_values", {})
        listed = ", ".join(f"{c} {n:,}" for c, n in per_column.items()) or "none"
        return (
            f"Local suppression (k = {facts.get('k', self.k)}): "
            f"{facts.get('total_suppressed', 0):,} values suppressed ({listed})"
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
    ) -> DataOutcome:
        _need_quasi_identifiers(quasi_identifiers, self.label)
        n = len(frame)
        _check_k(self.k, n, self.label)
        keep = np.ones(n, dtype=bool)
        while True:
            rows = np.flatnonzero(keep)
            subset = {c: np.asarray(w, dtype=bool)[rows] for c, w in wildcards.items()}
            keys = DistinctKeys.of(frame.iloc[rows], quasi_identifiers, subset)
            small = keys.compatible_counts()[keys.inverse] < self.k
            if not small.any():
                break
            keep[rows[small]] = False
            removed = int(n - keep.sum())
            if removed > self.limit * n:
                raise RecipeError(
                    f"{self.label} cannot reach k = {self.k} within the limit: {removed:,} "
                    f"records ({removed / n:.1%}) are in classes smaller than {self.k}, more "
                    f"than the limit of {self.limit:.1%}. Coarsen the quasi-identifiers first, "
                    "or raise the limit."
                )
        removed = int(n - keep.sum())
        facts = {
            "k": self.k,
            "limit": self.limit,
            "records_removed": removed,
            "share_removed": removed / n,
            "records": n,
        }
        return DataOutcome(keep=keep, facts=facts)

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
