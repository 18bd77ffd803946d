"""Microaggregation by MDAV (maximum distance to average vector): records are put in groups of
k (the last group k..2k-1) of records close to each other, and each value is released as its
group's mean (or median).

MDAV (Domingo-Ferrer & Mateo-Sanz 2002; Domingo-Ferrer & Torra 2005, "Ordinal, continuous and
heterogeneous k-anonymity through microaggregation", Algorithm 1), on the columns standardised
to mean 0 and SD 1 (sample SD, as R's ``scale``), with Euclidean distances:

1. while at least 3k records are left: ``r`` is the record farthest from the centroid of the
   records left, ``s`` the record farthest from ``r``; ``r`` and its k-1 nearest records form a
   group, then ``s`` and its k-1 nearest records among those left;
2. if 2k..3k-1 records are left: ``r`` (farthest from their centroid) and its k-1 nearest
   records form a group, the rest another; fewer than 2k left form one group.

Ties (equal distances) go to the record that comes first in the file. Every group has k..2k-1
records, and releasing group means keeps each column's mean exactly. Univariate
microaggregation is MDAV on one column (:class:`Microaggregate`, a step of that column);
multivariate microaggregation groups records on several columns together
(:class:`MultivariateMicroaggregate`, a whole-data step). sdcMicro's ``microaggregation(...,
method = "mdav")`` is this algorithm; its own tests run it on ``CASCrefmicrodata`` and
``Tarragona``.

**Beyond exact MDAV.** Exact MDAV costs about n^2 / (2k) distance computations in a stratum
(a minute at 50,000 records); a stratum of more than :data:`MAX_EXACT_RECORDS` records is
grouped by *blocked MDAV*: it is cut in two at the median of its projection on its principal
axis (the first eigenvector of its covariance), and each half in turn, until every block holds
at most :data:`BLOCK_RECORDS` records (and at least half as many); then exact MDAV runs in
each block, all blocks in step (:func:`blocked_mdav_groups`). Groups never straddle two
blocks, so every group still holds k..2k-1 records and the column means are kept exactly; the
price is some information loss where a group would have crossed a cut (a fixed-size
partitioning heuristic in the spirit of Solanas, Martinez-Balleste & Domingo-Ferrer 2006,
"V-MDAV", and of the principal-direction partitions of Domingo-Ferrer & Mateo-Sanz 2002).
On sdcMicro's reference data the loss is stated in the notes of issue 30 (IL1s and eigen,
exact against blocked with small blocks).

A missing value stays missing; for the distances it counts as the column's mean (0 after
standardising), and a group's mean or median is taken over the values it has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from deid_core.errors import RecipeError
from deid_core.masking.base import (
    NUMBERS,
    DataOutcome,
    DataStep,
    MaskingStep,
    column_names,
    combination_codes,
    numeric_values,
    require_int,
)

AGGREGATES = ("mean", "median")
#: Largest group size the steps accept.
MAX_GROUP_SIZE = 1_000
#: Most records of a stratum that multivariate MDAV groups exactly (its work grows with the
#: square of the records); a larger stratum is grouped by MDAV within blocks.
MAX_EXACT_RECORDS = 50_000
#: Most records of a block of the blocked MDAV (at least 2k).
BLOCK_RECORDS = 1_000
#: The group sizes the risk-utility map tries.
K_SWEEP = (2, 3, 4, 5, 7, 10, 20)


def standardised(values: np.ndarray) -> np.ndarray:
    """Columns scaled to mean 0 and sample SD 1 (a constant column is 0); a missing value is
    0, the column's mean."""
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[:, None]
    mean = np.nanmean(values, axis=0)
    observed = np.isfinite(values).sum(axis=0)
    sd = np.where(observed > 1, np.nanstd(values, axis=0, ddof=1), 0.0)
    scaled = np.where(sd > 0, (values - mean) / np.where(sd > 0, sd, 1.0), 0.0)
    return np.where(np.isfinite(scaled), scaled, 0.0)


def _squared_distances(columns: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Squared Euclidean distance of each point (``columns``: one row per variable) from
    ``centre``."""
    total = np.square(columns[0] - centre[0])
    for values, middle in zip(columns[1:], centre[1:], strict=True):
        total += np.square(values - middle)
    return total


def _first_farthest(distance: np.ndarray, ids: np.ndarray) -> int:
    """Position of the largest ``distance`` (ties: the record first in file)."""
    ties = np.flatnonzero(distance == distance.max())
    return int(ties[np.argmin(ids[ties])]) if ties.size > 1 else int(ties[0])


def _nearest(distance: np.ndarray, ids: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` smallest ``distance`` (ties: the records first in file)."""
    if k >= distance.size:
        return np.arange(distance.size)
    cut = np.partition(distance, k - 1)[k - 1]
    inside = np.flatnonzero(distance < cut)
    on_edge = np.flatnonzero(distance == cut)
    on_edge = on_edge[np.argsort(ids[on_edge], kind="stable")][: k - inside.size]
    return np.concatenate([inside, on_edge])


def mdav_groups(points: np.ndarray, k: int) -> np.ndarray:
    """MDAV groups of the rows of ``points`` (already standardised; see the module docstring):
    a group number per row, numbered in the order the groups are formed. Fewer than ``k``
    rows form one group.

    The records left occupy the first ``m`` slots of one array per variable; a group taken
    out is filled from the end, so each step costs a few passes over the records left."""
    points = np.asarray(points, dtype=float)
    if points.ndim == 1:
        points = points[:, None]
    n = points.shape[0]
    if points.shape[1] == 1:
        return _mdav_one_column(points[:, 0], k)
    group = np.full(n, -1, dtype=np.int64)
    columns = np.array(points.T, order="C")  # a copy, one row per variable
    ids = np.arange(n)
    m, number = n, 0

    def take(positions: np.ndarray) -> None:
        nonlocal m, number
        group[ids[positions]] = number
        number += 1
        size = positions.size
        holes = np.sort(positions[positions < m - size])
        movers = np.setdiff1d(np.arange(m - size, m), positions, assume_unique=True)
        columns[:, holes] = columns[:, movers]
        ids[holes] = ids[movers]
        m -= size

    def centroid() -> np.ndarray:
        return columns[:, :m].mean(axis=1)

    while m >= 3 * k:
        left, left_ids = columns[:, :m], ids[:m]
        r = _first_farthest(_squared_distances(left, centroid()), left_ids)
        r_point = left[:, r].copy()
        from_r = _squared_distances(left, r_point)
        s_id = left_ids[_first_farthest(from_r, left_ids)]
        take(_nearest(from_r, left_ids, k))
        left, left_ids = columns[:, :m], ids[:m]
        if group[s_id] >= 0:  # only when many records coincide: s fell in r's group
            s_id = left_ids[_first_farthest(_squared_distances(left, r_point), left_ids)]
        s = int(np.flatnonzero(left_ids == s_id)[0])
        take(_nearest(_squared_distances(left, left[:, s].copy()), left_ids, k))
    if m >= 2 * k:
        left, left_ids = columns[:, :m], ids[:m]
        r = _first_farthest(_squared_distances(left, centroid()), left_ids)
        take(_nearest(_squared_distances(left, left[:, r].copy()), left_ids, k))
    if m:
        take(np.arange(m))
    return group


def principal_blocks(points: np.ndarray, size: int) -> list[np.ndarray]:
    """The rows of ``points`` split into blocks of at most ``size`` rows (and at least half
    that): a block too large is cut at the median of its projection on its principal axis
    (the first eigenvector of its covariance; ties in file order), and each half in turn.
    Each block lists its rows in file order."""
    blocks: list[np.ndarray] = []
    stack = [np.arange(points.shape[0])]
    while stack:
        rows = stack.pop()
        if rows.size <= size:
            blocks.append(rows)
            continue
        centred = points[rows] - points[rows].mean(axis=0)
        axis = np.linalg.eigh(centred.T @ centred)[1][:, -1]
        order = np.argsort(centred @ axis, kind="stable")
        half = rows.size // 2
        stack += [np.sort(rows[order[half:]]), np.sort(rows[order[:half]])]
    return blocks


def blocked_mdav_groups(points: np.ndarray, k: int, size: int) -> np.ndarray:
    """MDAV within the blocks of :func:`principal_blocks` (exact MDAV in each, every block run
    in step with the others as arrays of blocks x records): a group number per row. Every
    group has k..2k-1 records when every block has at least k (``size >= 2k``)."""
    points = np.asarray(points, dtype=float)
    if points.ndim == 1:
        points = points[:, None]
    blocks = principal_blocks(points, size)
    width = max(block.size for block in blocks)
    rows = np.full((len(blocks), width), -1, dtype=np.int64)
    for b, block in enumerate(blocks):
        rows[b, : block.size] = block
    labels = _mdav_in_step(points, rows, k)
    group = np.empty(points.shape[0], dtype=np.int64)
    offset = np.concatenate([[0], np.cumsum(labels.max(axis=1) + 1)[:-1]])
    real = rows >= 0
    group[rows[real]] = (labels + offset[:, None])[real]
    return group


def _mdav_in_step(points: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """MDAV run at once in every block: ``rows`` (blocks x width) lists each block's rows in
    file order, -1 for padding; returns each slot's group number within its block. Records
    taken out are masked, not moved, and the arrays are compacted when the records left fit
    in half the width."""
    n_blocks = rows.shape[0]
    labels = np.full(rows.shape, -1, dtype=np.int64)
    slot = np.broadcast_to(np.arange(rows.shape[1]), rows.shape).copy()  # into labels
    alive = rows >= 0
    coords = [np.where(alive, points[np.maximum(rows, 0), j], 0.0) for j in range(points.shape[1])]
    count = alive.sum(axis=1)
    number = np.zeros(n_blocks, dtype=np.int64)
    every = np.arange(n_blocks)

    def distances(centre: list[np.ndarray], far: bool) -> np.ndarray:
        total = np.square(coords[0] - centre[0][:, None])
        for values, middle in zip(coords[1:], centre[1:], strict=True):
            total += np.square(values - middle[:, None])
        return np.where(alive, total, -np.inf if far else np.inf)

    def point(at: np.ndarray) -> list[np.ndarray]:
        return [values[every, at] for values in coords]

    def centroid() -> list[np.ndarray]:
        return [
            np.where(alive, values, 0.0).sum(axis=1) / np.maximum(count, 1) for values in coords
        ]

    def take(distance: np.ndarray, active: np.ndarray) -> None:
        nonlocal alive
        cut = np.partition(distance, k - 1, axis=1)[:, k - 1]
        inside = distance < cut[:, None]
        edge = distance == cut[:, None]
        edge &= np.cumsum(edge, axis=1) <= (k - inside.sum(axis=1))[:, None]
        chosen = (inside | edge) & active[:, None]
        where = np.nonzero(chosen)
        labels[where[0], slot[where]] = number[where[0]]
        alive = alive & ~chosen
        number[active] += 1
        count[active] -= k

    def compact() -> None:
        nonlocal alive, slot, coords
        width = int(count.max())
        order = np.argsort(~alive, axis=1, kind="stable")[:, :width]
        alive = np.take_along_axis(alive, order, axis=1)
        slot = np.take_along_axis(slot, order, axis=1)
        coords = [np.take_along_axis(values, order, axis=1) for values in coords]

    while (active := count >= 3 * k).any():
        if 2 * count.max() <= alive.shape[1]:
            compact()
        r = distances(centroid(), far=True).argmax(axis=1)
        r_point = point(r)
        from_r = distances(r_point, far=True)
        s = from_r.argmax(axis=1)
        take(np.where(np.isfinite(from_r), from_r, np.inf), active)
        lost = active & ~alive[every, s]  # only when many records coincide
        if lost.any():
            s = np.where(lost, distances(r_point, far=True).argmax(axis=1), s)
        take(distances(point(s), far=False), active)
    active = count >= 2 * k
    if active.any():
        r = distances(centroid(), far=True).argmax(axis=1)
        take(distances(point(r), far=False), active)
    where = np.nonzero(alive)
    labels[where[0], slot[where]] = number[where[0]]
    return labels


def _mdav_one_column(values: np.ndarray, k: int) -> np.ndarray:
    """MDAV on one column, in O(n log n): the record farthest from the centroid is always at
    one end of the values left, its k-1 nearest are the next ones at that end, and the record
    farthest from it is at the other end. The same groups as the general algorithm, ties
    included (first in file): two orders of the records, by (value, position) upwards and by
    (value downwards, position), are consumed from their fronts."""
    n = values.size
    positions = np.arange(n)
    upward = np.lexsort((positions, values))
    downward = np.lexsort((positions, -values))
    group = np.full(n, -1, dtype=np.int64)
    fronts = {"low": 0, "high": 0}
    orders = {"low": upward, "high": downward}
    left, total, number = n, float(values.sum()), 0

    def first(end: str) -> int:
        order = orders[end]
        while group[order[fronts[end]]] >= 0:
            fronts[end] += 1
        return int(order[fronts[end]])

    def take(end: str, size: int) -> None:
        nonlocal left, total, number
        for _ in range(size):
            record = first(end)
            group[record] = number
            total -= values[record]
        left -= size
        number += 1

    def far_end() -> str:
        low, high = first("low"), first("high")
        centre = total / left
        above, below = abs(values[high] - centre), abs(values[low] - centre)
        if above != below:
            return "high" if above > below else "low"
        return "high" if high < low else "low"

    def other(end: str) -> str:
        return "low" if end == "high" else "high"

    while left >= 3 * k:
        end = far_end()
        low, high = first("low"), first("high")
        # s, the farthest from r, is at the other end unless every value left is the same
        s_end = other(end) if values[low] != values[high] else "low"
        take(end, k)
        take(s_end, k)
    if left >= 2 * k:
        take(far_end(), k)
    if left:
        take("low", left)
    return group


def aggregate_by_group(values: np.ndarray, group: np.ndarray, how: str) -> np.ndarray:
    """Each value replaced by its group's mean or median (over the group's values that are not
    missing); a missing value stays missing."""
    frame = pd.DataFrame({"value": values, "group": group})
    summary = frame.groupby("group")["value"].transform(how).to_numpy(dtype=float)
    return np.where(np.isnan(values), np.nan, summary)


def _check_parameters(k: Any, aggregate: Any, label: str) -> None:
    require_int(k, "k", label, 2, MAX_GROUP_SIZE)
    if aggregate not in AGGREGATES:
        raise RecipeError(f"{label}: 'aggregate' must be 'mean' or 'median'.")


def _check_enough(n: int, k: int, label: str) -> None:
    if n < k:
        raise RecipeError(
            f"{label}: k = {k} is more than the {n:,} records with a value, so no group of k "
            "can be formed; choose a smaller k."
        )


@dataclass(frozen=True)
class Microaggregate(MaskingStep):
    """Univariate microaggregation: MDAV groups of ``k`` records with similar values of the
    column (the last group k..2k-1), each value released as its group's ``aggregate`` (mean or
    median); see the module docstring."""

    k: int = 3
    aggregate: str = "mean"

    method: ClassVar[str] = "microaggregate"
    takes: ClassVar[str] = NUMBERS
    label: ClassVar[str] = "Microaggregation (MDAV)"
    sweep_parameter: ClassVar[str | None] = "k"
    _PERTURBATIVE: ClassVar[bool] = True

    def _validate(self) -> None:
        _check_parameters(self.k, self.aggregate, self.label)

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        values = numeric_values(series, self.column, self.label)
        present = ~np.isnan(values)
        _check_enough(int(present.sum()), self.k, self.label)
        out = values.copy()
        group = mdav_groups(values[present], self.k)
        out[present] = aggregate_by_group(values[present], group, self.aggregate)
        return pd.Series(out, index=series.index, name=series.name)

    def describe(self) -> str:
        return (
            f"{self.column}: microaggregated (MDAV, groups of {self.k}, released as the group "
            f"{self.aggregate})"
        )

    def sweep_values(self, series: pd.Series | None = None) -> list[Any]:
        return list(K_SWEEP)


@dataclass(frozen=True)
class MultivariateMicroaggregate(DataStep):
    """Multivariate microaggregation: MDAV groups of ``k`` records close on all ``columns``
    together (standardised), each value of those columns released as its group's
    ``aggregate`` (mean or median); see the module docstring.

    With ``strata`` (categorical columns, such as categorical quasi-identifiers), groups are
    formed within each combination of their values, as sdcMicro's ``strata_variables`` do: a
    group then shares its strata values too, so its records form an equivalence class of at
    least k on the strata and the microaggregated columns (unless two groups happen to get
    the same means). A stratum of fewer than k records is one group, smaller than k. One
    column is enough when strata are given. Groups are of records whatever ``persons`` says:
    the values are perturbed, not matched."""

    columns: tuple[str, ...] = ()
    k: int = 3
    aggregate: str = "mean"
    strata: tuple[str, ...] = ()

    method: ClassVar[str] = "multivariate_microaggregate"
    takes: ClassVar[str] = NUMBERS
    label: ClassVar[str] = "Multivariate microaggregation (MDAV)"
    sweep_parameter: ClassVar[str | None] = "k"
    _PERTURBATIVE: ClassVar[bool] = True

    def __post_init__(self) -> None:
        for name in ("columns", "strata"):
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))
        super().__post_init__()

    def _validate(self) -> None:
        strata = column_names(self.strata, "strata", self.label)
        columns = column_names(self.columns, "columns", self.label, minimum=1 if strata else 2)
        if set(columns) & set(strata):
            raise RecipeError(f"{self.label}: a column cannot be both aggregated and a stratum.")
        _check_parameters(self.k, self.aggregate, self.label)

    def reads(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return (*self.columns, *self.strata)

    def writes(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return self.columns

    def kind_columns(self, quasi_identifiers: Sequence[str] = ()) -> tuple[str, ...]:
        """The aggregated columns (the strata may hold any values)."""
        return self.columns

    def _apply(
        self,
        frame: pd.DataFrame,
        quasi_identifiers: tuple[str, ...],
        replicate: int,
        wildcards: Mapping[str, np.ndarray],
        *,
        persons: np.ndarray | None = None,
    ) -> DataOutcome:
        n = len(frame)
        _check_enough(n, self.k, self.label)
        matrix = np.column_stack([numeric_values(frame[c], c, self.label) for c in self.columns])
        points = standardised(matrix)
        stratum = combination_codes(frame, self.strata)
        group = np.empty(n, dtype=np.int64)
        offset, blocked = 0, 0
        order = np.argsort(stratum, kind="stable")
        for members in np.split(order, np.cumsum(np.bincount(stratum))[:-1]):
            if members.size > MAX_EXACT_RECORDS:
                size = max(BLOCK_RECORDS, 2 * self.k)
                labels = blocked_mdav_groups(points[members], self.k, size)
                blocked += members.size
            else:
                labels = mdav_groups(points[members], self.k)
            group[members] = labels + offset
            offset = int(group[members].max()) + 1
        sizes = np.bincount(group)
        values = {
            c: pd.Series(
                aggregate_by_group(matrix[:, j], group, self.aggregate),
                index=frame.index,
                name=c,
            )
            for j, c in enumerate(self.columns)
        }
        facts = {
            "k": self.k,
            "groups": int(sizes.size),
            "groups_smaller_than_k": int((sizes < self.k).sum()),
            "records": n,
            "records_in_blocks": blocked,
        }
        return DataOutcome(values=values, facts=facts)

    def describe(self) -> str:
        within = f", within strata of {', '.join(self.strata)}" if self.strata else ""
        return (
            f"{', '.join(self.columns)}: microaggregated together (MDAV on standardised "
            f"values, groups of {self.k}{within}, released as the group {self.aggregate})"
        )

    def summary(self, facts: Mapping[str, Any]) -> str:
        small = facts.get("groups_smaller_than_k", 0)
        note = f"; {small:,} smaller (strata of fewer than {self.k} records)" if small else ""
        blocked = facts.get("records_in_blocks", 0)
        if blocked:
            note += (
                f"; {blocked:,} records of strata beyond {MAX_EXACT_RECORDS:,} grouped within "
                f"blocks of at most {max(BLOCK_RECORDS, 2 * self.k):,}"
            )
        return (
            f"Multivariate microaggregation of {', '.join(self.columns)}: "
            f"{facts.get('groups', 0):,} groups of at least {facts.get('k', self.k)} "
            f"records{note}"
        )

    def sweep_values(self, series: pd.Series | None = None) -> list[Any]:
        return list(K_SWEEP)
