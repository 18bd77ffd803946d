"""Record uniqueness over every combination of key variables (the NAACCR RU program).

Source: Howe, Lake, Shen, "Method for assessing and managing the risk of confidentiality breach
in health microdata" (the Record Uniqueness (RU) program, NAACCR CINA Deluxe file, 4.67 million
cases; Tables 2 and 3).

For K key variables (each already at the precision the release will use) and every one of the
``2**K - 1`` non-empty combinations S of them, records that share all values of S form a class
of size f (a missing value is a category of its own). For each S:

- uniques: records with f = 1 (n, and % of all records);
- small: records with f <= T, T = 5 by default ("unique record sets"; n and %).

Each variable's weight (its contribution to uniqueness) is the OLS coefficient beta_i of

    ln(% unique in S) = alpha + sum_i beta_i * [variable i in S]

fitted over the combinations with at least one unique record (``n_fit`` of them; the log of 0
is undefined). The variable with the largest weight is the one to collapse first. Release
thresholds on the full variable set: records in small sets at most 20% (research file) and
under 5% (public file).

Worked example of the paper: 205 records coded 150 / 50 / 4 / 1 give 1 unique (0.49%) and
5 records in sets of size <= 5 (2.4%).
"""

from __future__ import annotations

import itertools
import math
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from deid_core.errors import DataError
from deid_core.risk.classes import (
    EncodedColumn,
    combine_codes,
    densify,
    encode_columns,
)

MAX_KEYS = 12
DEFAULT_SMALL_CLASS = 5
RESEARCH_THRESHOLD = 20.0  # % of records in small sets, research file (at most)
PUBLIC_THRESHOLD = 5.0  # public file (under)

Progress = Callable[[int, int], None]
_BINCOUNT_SLACK = 65_536  # bincount while the key space is at most m + this
_WORKERS = 2  # worker threads at most (the machine's CPUs if fewer)
_PROGRESS_INTERVAL = 0.1  # seconds between progress reports, at most


def _pct(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else 0.0


@dataclass(frozen=True)
class CombinationCounts:
    """Counts of one combination of key variables."""

    variables: tuple[str, ...]
    records: int
    uniques: int
    small: int  # records in classes of size <= small_class

    def __post_init__(self) -> None:
        if not self.variables:
            raise DataError("A combination needs at least one variable.")
        if not 0 <= self.uniques <= self.small <= self.records:
            raise DataError("Counts must satisfy 0 <= uniques <= small <= records.")

    @property
    def uniques_pct(self) -> float:
        """Unique records, % of all records (0..100)."""
        return _pct(self.uniques, self.records)

    @property
    def small_pct(self) -> float:
        """Records in classes of size <= T, % of all records (0..100)."""
        return _pct(self.small, self.records)

    @property
    def n_variables(self) -> int:
        return len(self.variables)

    def to_dict(self) -> dict[str, Any]:
        return {
            "variables": list(self.variables),
            "n_variables": self.n_variables,
            "records": self.records,
            "uniques": self.uniques,
            "uniques_pct": self.uniques_pct,
            "small": self.small,
            "small_pct": self.small_pct,
        }


@dataclass(frozen=True)
class UniquenessResult:
    """RU output: counts of every combination, the variables' weights and the guidance."""

    keys: tuple[str, ...]
    n_records: int
    small_class: int
    combinations: tuple[CombinationCounts, ...]  # full set first, then by size descending
    weights: dict[str, float] | None  # OLS coefficient per variable, None if not estimable
    intercept: float | None
    n_fit: int  # combinations that entered the regression
    weights_note: str | None  # why weights are None, or a caveat

    def __post_init__(self) -> None:
        _check_keys(self.keys)
        if len(self.combinations) != 2 ** len(self.keys) - 1:
            raise DataError("There must be one set of counts per combination of the keys.")
        if self.combinations[0].variables != self.keys:
            raise DataError("The first combination must be the full set of keys.")
        if (self.weights is None) != (self.intercept is None):
            raise DataError("Give both the weights and the intercept, or neither.")

    @property
    def full(self) -> CombinationCounts:
        """The combination of all keys."""
        return self.combinations[0]

    @property
    def worst_variable(self) -> str | None:
        """The variable with the largest weight: collapse it first (None without weights)."""
        if not self.weights:
            return None
        return max(self.keys, key=lambda k: self.weights[k])  # type: ignore[index]

    def verdict(self) -> dict[str, bool]:
        """Does the full set meet the RU thresholds of records in small sets?

        research: small % <= 20; public: small % < 5.
        """
        small = self.full.small_pct
        return {"research": small <= RESEARCH_THRESHOLD, "public": small < PUBLIC_THRESHOLD}

    def combination(self, variables: Sequence[str]) -> CombinationCounts:
        """The counts of one combination (variables in any order)."""
        wanted = set(variables)
        for counts in self.combinations:
            if set(counts.variables) == wanted and len(counts.variables) == len(wanted):
                return counts
        raise DataError("That combination is not among the key variables.")

    def to_frame(self) -> pd.DataFrame:
        """One row per combination, in the order of ``combinations``."""
        return pd.DataFrame(
            {
                "variables": [", ".join(c.variables) for c in self.combinations],
                "n_variables": [c.n_variables for c in self.combinations],
                "records": [c.records for c in self.combinations],
                "uniques": [c.uniques for c in self.combinations],
                "uniques_pct": [c.uniques_pct for c in self.combinations],
                "small": [c.small for c in self.combinations],
                "small_pct": [c.small_pct for c in self.combinations],
            }
        )

    def omit_one(self) -> pd.DataFrame:
        """The paper's Table 3: the full set ("None" omitted), then each variable omitted in
        turn (the K-1 combinations; none when K = 1)."""
        rows = [("None", self.full)]
        if len(self.keys) > 1:
            for key in self.keys:
                rows.append((key, self.combination([k for k in self.keys if k != key])))
        return pd.DataFrame(
            {
                "omitted": [name for name, _ in rows],
                "uniques": [c.uniques for _, c in rows],
                "uniques_pct": [c.uniques_pct for _, c in rows],
                "small": [c.small for _, c in rows],
                "small_pct": [c.small_pct for _, c in rows],
                "variables": [", ".join(c.variables) for _, c in rows],
            }
        )

    def weights_frame(self) -> pd.DataFrame:
        """Variable and weight, largest weight first (empty without weights)."""
        if self.weights is None:
            return pd.DataFrame(
                {"variable": pd.Series(dtype=str), "weight": pd.Series(dtype=float)}
            )
        ordered = sorted(self.weights.items(), key=lambda item: -item[1])
        return pd.DataFrame(
            {"variable": [k for k, _ in ordered], "weight": [w for _, w in ordered]}
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "keys": list(self.keys),
            "n_records": self.n_records,
            "small_class": self.small_class,
            "combinations": [c.to_dict() for c in self.combinations],
            "weights": self.weights,
            "intercept": self.intercept,
            "n_fit": self.n_fit,
            "weights_note": self.weights_note,
            "worst_variable": self.worst_variable,
            "verdict": self.verdict(),
            "omit_one": self.omit_one().to_dict(orient="records"),
        }

    def __str__(self) -> str:
        full = self.full
        verdict = self.verdict()
        lines = [
            "Record uniqueness over all combinations (NAACCR RU)",
            f"  key variables               {', '.join(self.keys)}",
            f"  records / combinations      {self.n_records} / {len(self.combinations)}",
            f"  full set: uniques           {full.uniques} ({full.uniques_pct:.2f}%)",
            f"  full set: records in <= {self.small_class:<3d} {full.small} "
            f"({full.small_pct:.2f}%)",
            f"  research file (<= {RESEARCH_THRESHOLD:g}%)     "
            f"{'meets' if verdict['research'] else 'fails'}",
            f"  public file (< {PUBLIC_THRESHOLD:g}%)          "
            f"{'meets' if verdict['public'] else 'fails'}",
        ]
        if self.weights is None:
            lines.append(f"  weights                     none: {self.weights_note}")
        else:
            lines.append(f"  weights ({self.n_fit} combinations in the fit)")
            for name, weight in sorted(self.weights.items(), key=lambda item: -item[1]):
                lines.append(f"    {name:<25s} {weight:.4f}")
            lines.append(f"  collapse first              {self.worst_variable}")
            if self.weights_note:
                lines.append(f"  note: {self.weights_note}")
        return "\n".join(lines)


def _check_keys(keys: Sequence[str]) -> None:
    if len(keys) == 0:
        raise DataError("Give at least one key variable.")
    if len(keys) > MAX_KEYS:
        raise DataError(
            f"At most {MAX_KEYS} key variables ({2**MAX_KEYS - 1} combinations); "
            f"{len(keys)} were given."
        )
    if len(set(keys)) != len(keys):
        raise DataError("Each key variable may be given only once.")


def _check_input(frame: pd.DataFrame, keys: Sequence[str], small_class: int) -> tuple[str, ...]:
    keys = tuple(keys)
    _check_keys(keys)
    absent = [k for k in keys if k not in frame.columns]
    if absent:
        raise DataError(f"Key column(s) not in the data: {', '.join(map(str, absent))}.")
    _check_small_class(small_class)
    if len(frame) == 0:
        raise DataError("There are no records to assess.")
    return keys


def _check_small_class(small_class: int) -> int:
    if isinstance(small_class, bool) or not isinstance(small_class, (int, np.integer)):
        raise DataError("The small-class size T must be a whole number.")
    if small_class < 1:
        raise DataError(f"The small-class size T must be at least 1, not {small_class}.")
    return int(small_class)


def combination_masks(k: int) -> list[int]:
    """Bit masks of the 2**k - 1 combinations in result order: the full set first, then by
    size descending, ties in key order (lexicographic on the key positions)."""
    masks = []
    for size in range(k, 0, -1):
        for combo in itertools.combinations(range(k), size):
            masks.append(sum(1 << i for i in combo))
    return masks


def fit_weights(
    keys: Sequence[str], combinations: Sequence[CombinationCounts]
) -> tuple[dict[str, float] | None, float | None, int, str | None]:
    """OLS of ln(% unique) on the 0/1 indicators of the variables present, over the
    combinations with at least one unique record: (weights, intercept, n_fit, note)."""
    used = [c for c in combinations if c.uniques > 0]
    n_fit, n_coef = len(used), len(keys) + 1
    left_out = len(combinations) - n_fit
    if n_fit < n_coef:
        return (
            None,
            None,
            n_fit,
            (
                f"Only {n_fit} combination(s) have a unique record; {n_coef} are needed to fit "
                f"the intercept and {len(keys)} weight(s)."
            ),
        )
    position = {k: i for i, k in enumerate(keys)}
    design = np.zeros((n_fit, n_coef))
    design[:, 0] = 1.0
    for row, counts in enumerate(used):
        for name in counts.variables:
            design[row, 1 + position[name]] = 1.0
    if np.linalg.matrix_rank(design) < n_coef:
        absent = [k for k in keys if not design[:, 1 + position[k]].any()]
        always = [k for k in keys if design[:, 1 + position[k]].all()]
        if absent:
            reason = f"no combination with a unique record contains {', '.join(absent)}"
        elif always:
            reason = (
                f"every combination with a unique record contains {', '.join(always)}, so "
                "its weight cannot be told apart from the intercept"
            )
        else:
            reason = "the combinations with a unique record do not separate the variables"
        return None, None, n_fit, f"The weights cannot be estimated: {reason}."
    response = np.log([c.uniques_pct for c in used])
    coef, *_ = np.linalg.lstsq(design, response, rcond=None)
    note = (
        f"{left_out} of {len(combinations)} combination(s) have no unique record and were left "
        "out of the fit."
        if left_out
        else None
    )
    return dict(zip(keys, map(float, coef[1:]), strict=True)), float(coef[0]), n_fit, note


def _simple_counts(
    encoded: Sequence[EncodedColumn],
    counts: np.ndarray | None,
    small_class: int,
    tick: Callable[[int], None],
) -> dict[int, tuple[int, int]]:
    """(uniques, small) per combination bit mask, one combination at a time (each key built
    from scratch, factorized when it would overflow): the path for key spaces beyond an int64.
    ``counts``: records per row of the codes (a cross-tabulation), None for one per row."""
    m = encoded[0].codes.size
    out: dict[int, tuple[int, int]] = {}
    for mask in combination_masks(len(encoded)):
        columns = [e for i, e in enumerate(encoded) if mask >> i & 1]
        key, cardinality = combine_codes(columns, m)
        if cardinality > m + _BINCOUNT_SLACK:
            key = pd.factorize(key)[0]
        sizes = np.bincount(key, weights=counts).astype(np.int64)
        out[mask] = _tally(sizes[sizes > 0], small_class)
        tick(1)
    return out


def _tally(counts: np.ndarray, small_class: int) -> tuple[int, int]:
    """(classes of size 1, records in classes of size <= T) from the class sizes."""
    return (
        int(np.count_nonzero(counts == 1)),
        int(np.sum(counts, where=counts <= small_class)),
    )


class _Cube:
    """All combinations' class sizes by roll-up of sorted class tables (a top-down data cube).

    Variables are ordered by cardinality, ascending (``order``); a combination's key is the
    mixed-radix number of its codes with ``order[0]`` least significant, so dropping a
    variable ``v`` from a key ``x`` gives ``(x // (s_v c_v)) * s_v + x % s_v`` (``s_v`` the
    product of the cardinalities of the less significant variables present, ``c_v`` that of
    ``v``). A table holds a combination's distinct keys, sorted, and the class size of each.

    The full set's table comes from the rows of the codes (one sort): records, or the cells of a
    cross-tabulation with their record counts (an engine's aggregates). Every other combination
    ``S`` is
    rolled up from one parent ``S + {u}``, ``u`` the first variable in ``order`` missing from
    ``S`` (so the parent adds the variable of fewest levels possible and has few more classes
    than ``S``): the classes of ``S`` are unions of the parent's classes, with summed sizes.
    These parents form a tree rooted at the full set; it is walked depth first by worker
    threads (see :class:`_Walk`), so few tables are alive at once. A child's table is
    built by one ``bincount`` when its key space is at most about the parent's number of
    classes, by a run-length pass when ``v = order[0]`` (the child keys are then already
    sorted), else by one sort of ``key << b | size`` (``b`` bits hold any size up to n), or,
    when the key space is too wide for that packing, by an argsort. A combination none of
    whose subsets is rolled up from it needs only its class sizes. The codes must be dense
    (:func:`densify`): gaps would widen the key space for nothing.
    """

    def __init__(
        self,
        encoded: Sequence[EncodedColumn],
        n: int,
        small_class: int,
        counts: np.ndarray | None = None,
    ) -> None:
        self.cards = [e.n_levels for e in encoded]
        self.k = len(encoded)
        self.order = sorted(range(self.k), key=lambda i: self.cards[i])
        self.small_class = small_class
        self.size_bits = max(n.bit_length(), 1)
        self.size_mask = (1 << self.size_bits) - 1
        self.packable = 2 ** (62 - self.size_bits)  # key spaces below this pack with a size
        self.results: dict[int, tuple[int, int]] = {}
        self._encoded = encoded
        self._counts = counts

    @staticmethod
    def fits(encoded: Sequence[EncodedColumn]) -> bool:
        """Does the full set's key fit in an int64?"""
        return math.prod(e.n_levels for e in encoded) < 2**62

    def space(self, mask: int) -> int:
        """Number of possible keys of a combination."""
        return math.prod(c for i, c in enumerate(self.cards) if mask >> i & 1)

    def stride(self, mask: int, v: int) -> int:
        """s_v: product of the cardinalities of the variables of ``mask`` below ``v``."""
        out = 1
        for i in self.order:
            if i == v:
                return out
            if mask >> i & 1:
                out *= self.cards[i]
        raise AssertionError("v is not a variable")

    def children(self, mask: int) -> list[int]:
        """Variables ``v`` such that ``mask - {v}`` is rolled up from ``mask``: those before
        the first variable (in ``order``) missing from ``mask``."""
        if mask & (mask - 1) == 0:  # one variable: no non-empty subset
            return []
        out = []
        for v in self.order:
            if not mask >> v & 1:
                break
            out.append(v)
        return out

    def has_children(self, mask: int) -> bool:
        return bool(mask & (mask - 1)) and bool(mask >> self.order[0] & 1)

    def root(self) -> tuple[np.ndarray, np.ndarray]:
        """The full set's table from the rows of the codes; records its counts."""
        key = np.zeros(self._encoded[0].codes.size, dtype=np.int64)
        for i in reversed(self.order):
            key *= self.cards[i]
            key += self._encoded[i].codes
        full = (1 << self.k) - 1
        keys, sizes = self._group(key, self._counts, self.space(full), need_keys=True)
        self.results[full] = _tally(sizes, self.small_class)
        return keys, sizes  # type: ignore[return-value]

    def _group(
        self, key: np.ndarray, sizes: np.ndarray | None, space: int, need_keys: bool
    ) -> tuple[np.ndarray | None, np.ndarray]:
        """Distinct keys (sorted; None unless ``need_keys``) and summed sizes (1 per key when
        ``sizes`` is None). ``key`` may be overwritten."""
        m = key.size
        if space <= m + _BINCOUNT_SLACK:
            sums = np.bincount(key, weights=sizes, minlength=space)
            if need_keys:
                keys = np.flatnonzero(sums)
                return keys, sums[keys].astype(np.int64)
            return None, sums[sums > 0].astype(np.int64)
        if space < self.packable:
            key <<= self.size_bits
            key |= 1 if sizes is None else sizes
            key.sort()
            summed = key & self.size_mask
            key >>= self.size_bits
            return self._runs(key, summed, need_keys)
        if sizes is None:  # one record per key: sort the keys, count the runs
            key.sort()
            return self._runs(key, np.ones(m, dtype=np.int64), need_keys)
        order = np.argsort(key)
        return self._runs(key[order], sizes[order], need_keys)

    @staticmethod
    def _runs(
        key: np.ndarray, sizes: np.ndarray, need_keys: bool
    ) -> tuple[np.ndarray | None, np.ndarray]:
        """Sum ``sizes`` over runs of equal values of the sorted ``key``."""
        starts = np.empty(key.size, dtype=bool)
        starts[0] = True
        np.not_equal(key[1:], key[:-1], out=starts[1:])
        first = np.flatnonzero(starts)
        return (key[first] if need_keys else None), np.add.reduceat(sizes, first)

    def roll_up(
        self, mask: int, keys: np.ndarray, sizes: np.ndarray, v: int
    ) -> tuple[int, np.ndarray | None, np.ndarray]:
        """The table of ``mask - {v}`` from that of ``mask``; records its counts."""
        child = mask & ~(1 << v)
        need_keys = self.has_children(child)
        stride = self.stride(mask, v)
        upper = keys // (stride * self.cards[v])
        if stride == 1:  # v least significant: upper is the sorted child key
            child_keys, child_sizes = self._runs(upper, sizes, need_keys)
        else:
            upper *= stride
            upper += keys % stride
            child_keys, child_sizes = self._group(upper, sizes, self.space(child), need_keys)
        self.results[child] = _tally(child_sizes, self.small_class)
        return child, child_keys, child_sizes


class _Walk:
    """Roll-ups of the parent tree shared by worker threads (numpy's sorts and element-wise
    operations release the GIL, so two threads use two cores for much of the work).

    A stack holds tables whose subsets are still to be rolled up, with the variables left to
    drop; a worker pops the top one, takes one variable, puts the rest back (another worker
    may take it), rolls up that child and pushes the child's table if it has subsets of its
    own. The stack is last in, first out, so the walk stays depth first and few tables are
    alive at once. Progress is reported from the calling thread.
    """

    def __init__(self, cube: _Cube, total: int) -> None:
        self.cube = cube
        self.total = total
        self.done = 1  # the full set
        self.stop = False
        self.error: BaseException | None = None
        self.stack: list[tuple[int, np.ndarray, np.ndarray, list[int]]] = []
        self.lock = threading.Condition()

    def push(self, mask: int, keys: np.ndarray, sizes: np.ndarray) -> None:
        """Queue a table's subsets (caller holds the lock)."""
        self.stack.append((mask, keys, sizes, self.cube.children(mask)))
        self.lock.notify_all()

    def _finished(self) -> bool:
        return self.done >= self.total or self.stop or self.error is not None

    def worker(self) -> None:
        while True:
            with self.lock:
                while not self.stack and not self._finished():
                    self.lock.wait()
                if self._finished():
                    return
                mask, keys, sizes, todo = self.stack.pop()
                v = todo.pop()
                if todo:
                    self.stack.append((mask, keys, sizes, todo))
                    self.lock.notify_all()
            try:
                child, child_keys, child_sizes = self.cube.roll_up(mask, keys, sizes, v)
            except BaseException as error:  # re-raised in the calling thread
                with self.lock:
                    self.error = error
                    self.lock.notify_all()
                return
            with self.lock:
                self.done += 1
                if child_keys is not None:
                    self.push(child, child_keys, child_sizes)
                self.lock.notify_all()

    def run(self, workers: int, progress: Progress | None) -> None:
        threads = [threading.Thread(target=self.worker, daemon=True) for _ in range(workers)]
        for thread in threads:
            thread.start()
        try:
            reported = 0
            while True:
                with self.lock:
                    if not self._finished():
                        self.lock.wait(_PROGRESS_INTERVAL)
                    done, finished = self.done, self._finished()
                if progress is not None and done != reported:
                    progress(done, self.total)
                    reported = done
                if finished:
                    break
        finally:
            with self.lock:
                self.stop = True
                self.lock.notify_all()
            for thread in threads:
                thread.join()
        if self.error is not None:
            raise self.error


def _count_combinations(
    encoded: Sequence[EncodedColumn],
    n: int,
    small_class: int,
    progress: Progress | None,
    counts: np.ndarray | None = None,
) -> dict[int, tuple[int, int]]:
    """(uniques, small) per combination bit mask (bit i: the i-th column) of ``n`` records
    whose codes are ``encoded``: one row per record, or with ``counts`` one row per cell of a
    cross-tabulation holding that many records. Codes are densified first, so that any coding
    of the same data (ages stored as 0, 5, ..., 85, sparse county codes) takes the same path."""
    encoded = [densify(e) for e in encoded]
    total = 2 ** len(encoded) - 1
    if not _Cube.fits(encoded):
        done = 0

        def tick(count: int) -> None:
            nonlocal done
            done += count
            if progress is not None:
                progress(done, total)

        return _simple_counts(encoded, counts, small_class, tick)
    cube = _Cube(encoded, n, small_class, counts)
    root_keys, root_sizes = cube.root()
    walk = _Walk(cube, total)
    if total > 1:
        with walk.lock:
            walk.push((1 << len(encoded)) - 1, root_keys, root_sizes)
    walk.run(min(_WORKERS, os.cpu_count() or 1), progress)
    return cube.results


def _result(
    keys: tuple[str, ...], n: int, small_class: int, counted: dict[int, tuple[int, int]]
) -> UniquenessResult:
    """The result from the counts of every combination, with the weights fitted."""
    combinations = tuple(
        CombinationCounts(
            variables=tuple(k for i, k in enumerate(keys) if mask >> i & 1),
            records=n,
            uniques=counted[mask][0],
            small=counted[mask][1],
        )
        for mask in combination_masks(len(keys))
    )
    weights, intercept, n_fit, note = fit_weights(keys, combinations)
    return UniquenessResult(
        keys=keys,
        n_records=n,
        small_class=small_class,
        combinations=combinations,
        weights=weights,
        intercept=intercept,
        n_fit=n_fit,
        weights_note=note,
    )


def record_uniqueness(
    frame: pd.DataFrame,
    keys: Sequence[str],
    small_class: int = DEFAULT_SMALL_CLASS,
    progress: Progress | None = None,
) -> UniquenessResult:
    """RU counts of every combination of ``keys`` in ``frame`` (not modified) and the weights.

    ``progress(done, total)`` is called as combinations are counted (total = 2**K - 1).
    """
    keys = _check_input(frame, keys, small_class)
    small_class = int(small_class)
    n = len(frame)
    counted = _count_combinations(encode_columns(frame, keys), n, small_class, progress)
    return _result(keys, n, small_class, counted)


def uniqueness_from_cells(
    encoded: Sequence[EncodedColumn],
    counts: np.ndarray,
    keys: Sequence[str],
    small_class: int = DEFAULT_SMALL_CLASS,
    progress: Progress | None = None,
) -> UniquenessResult:
    """:func:`record_uniqueness` from the finest cross-tabulation of the keys: ``encoded`` holds
    one code per cell and key (a missing value a code of its own) and ``counts`` the records in
    each cell. Every combination is rolled up from the cells; no record is needed."""
    keys = tuple(keys)
    _check_keys(keys)
    if len(encoded) != len(keys):
        raise DataError("Give one column of cell codes per key.")
    counts = np.asarray(counts, dtype=np.int64)
    if any(e.codes.shape != counts.shape for e in encoded):
        raise DataError("Give one code per cell in every column, and one count per cell.")
    small_class = _check_small_class(small_class)
    n = int(counts.sum())
    if n == 0:
        raise DataError("There are no records to assess.")
    counted = _count_combinations(encoded, n, small_class, progress, counts)
    return _result(keys, n, small_class, counted)


def iteration_table(runs: Sequence[tuple[str, UniquenessResult]]) -> pd.DataFrame:
    """The paper's Table 2: for each run a header row (``row`` = "variables"; ``run`` the
    label, or the variable list when the label is empty; the full set's uniques and small-set
    records; ``variables`` the list), then one row per variable with its weight, largest first
    (weights NaN, in key order, when they could not be estimated)."""
    rows: list[dict[str, Any]] = []
    for label, result in runs:
        listed = ", ".join(result.keys)
        run = label or listed
        full = result.full
        rows.append(
            {
                "run": run,
                "row": "variables",
                "weight": math.nan,
                "uniques": full.uniques,
                "uniques_pct": full.uniques_pct,
                "small": full.small,
                "small_pct": full.small_pct,
                "variables": listed,
            }
        )
        if result.weights is None:
            ordered = [(k, math.nan) for k in result.keys]
        else:
            ordered = sorted(result.weights.items(), key=lambda item: -item[1])
        for name, weight in ordered:
            rows.append(
                {
                    "run": run,
                    "row": name,
                    "weight": weight,
                    "uniques": pd.NA,
                    "uniques_pct": math.nan,
                    "small": pd.NA,
                    "small_pct": math.nan,
                    "variables": "",
                }
            )
    columns = ["run", "row", "weight", "uniques", "uniques_pct", "small", "small_pct", "variables"]
    table = pd.DataFrame(rows, columns=columns)
    return table.astype({"uniques": "Int64", "small": "Int64"})
