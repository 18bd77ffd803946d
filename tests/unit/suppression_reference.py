"""The quadratic searches of local suppression that the product used before its indexed ones
(git history of ``deid_core/masking/suppression.py``, up to commit a082fe8): each record at
risk compared with every distinct combination. A reference for tests only: the indexed search
must make exactly the same choices (same greedy order, gains, tie-breaks and giving back)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from deid_core.masking.suppression import DistinctKeys, Units, _choose


def differences(keys: DistinctKeys, row: int) -> np.ndarray:
    """(D x m) True where a combination and combination ``row`` both have a value and the
    values differ."""
    return (keys.codes != keys.codes[row]) & ~keys.wild & ~keys.wild[row]


def people_in(units: Units, rows: np.ndarray) -> int:
    """The number of distinct people with a record in the combinations flagged in ``rows``."""
    return int(np.unique(units.person[rows[units.row]]).size)


def reference_pattern(
    keys: DistinctKeys, k: int, order: Sequence[int], by_importance: bool = False
) -> np.ndarray:
    """The (D x m) suppression pattern, as ``suppression_pattern`` defines it."""
    wild = keys.wild.copy()
    codes, weight = keys.codes, keys.weight
    rank = np.empty(codes.shape[1], dtype=np.int64)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(len(order))
    state = DistinctKeys(codes, wild, weight, keys.inverse)
    f = state.compatible_counts()
    violators = np.flatnonzero(f < k)
    violators = violators[np.argsort(f[violators], kind="stable")]
    history: list[tuple[int, int]] = []
    for row in violators:
        while f[row] < k:
            differ = differences(state, row)
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


def _give_back(
    state: DistinctKeys, f: np.ndarray, k: int, cells: Iterable[tuple[int, int]]
) -> None:
    wild, weight = state.wild, state.weight
    for row, column in cells:
        wild[row, column] = False
        differ = differences(state, row)
        distance = differ.sum(axis=1)
        losers = (distance == 1) & differ[:, column]
        own = int(weight[distance == 0].sum())
        if own >= k and np.all(f[losers] - weight[row] >= k):
            f[row] = own
            f[losers] -= weight[row]
        else:
            wild[row, column] = True


def reference_cells(keys: DistinctKeys, pattern: np.ndarray, k: int) -> np.ndarray:
    """Per record (n x m), the cells after the second pruning pass, record by record."""
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


def reference_people_pattern(
    keys: DistinctKeys,
    k: int,
    order: Sequence[int],
    by_importance: bool,
    persons: np.ndarray,
) -> np.ndarray:
    """The (D x m) pattern counting distinct people (commit 5e03f21's search in people: each
    count a pass over every combination and record)."""
    wild = keys.wild.copy()
    codes, weight = keys.codes, keys.weight
    rank = np.empty(codes.shape[1], dtype=np.int64)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(len(order))
    state = DistinctKeys(codes, wild, weight, keys.inverse)
    units = Units.of(keys.inverse, persons)
    f = state.compatible_people(persons)
    violators = np.flatnonzero(f < k)
    violators = violators[np.argsort(f[violators], kind="stable")]
    history: list[tuple[int, int]] = []
    for row in violators:
        while True:
            differ = differences(state, row)
            distance = differ.sum(axis=1)
            near = distance == 0
            have = people_in(units, near)
            if have >= k:
                break
            one, two = distance == 1, distance == 2
            candidates = np.flatnonzero(~wild[row])
            gain = np.zeros(codes.shape[1], dtype=np.int64)
            for column in candidates:
                gain[column] = people_in(units, near | (one & differ[:, column])) - have
            ahead = weight[two] @ differ[two]
            column = _choose(candidates, gain, ahead, rank, by_importance)
            wild[row, column] = True
            history.append((int(row), int(column)))
    _give_back_people(state, units, k, reversed(history))
    return wild


def _give_back_people(
    state: DistinctKeys, units: Units, k: int, cells: Iterable[tuple[int, int]]
) -> None:
    wild = state.wild
    for row, column in cells:
        wild[row, column] = False
        differ = differences(state, row)
        distance = differ.sum(axis=1)
        keeps = people_in(units, distance == 0) >= k and all(
            people_in(units, ~differences(state, loser).any(axis=1)) >= k
            for loser in np.flatnonzero((distance == 1) & differ[:, column])
        )
        if not keeps:
            wild[row, column] = True


def reference_people_cells(
    keys: DistinctKeys, pattern: np.ndarray, k: int, persons: np.ndarray
) -> np.ndarray:
    """Per record (n x m), the cells after the second pruning pass, counting people."""
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
    position = np.full(len(keys.weight), -1, dtype=np.int64)
    position[kept] = np.arange(first)
    inverse = position[keys.inverse]
    inverse[records] = first + np.arange(len(records))
    _give_back_people(state, Units.of(inverse, persons), k, tried)
    cells[records] = state.wild[first:]
    return cells
