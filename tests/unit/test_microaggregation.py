"""MDAV microaggregation: the same groups as an independent reference of the published
algorithm (Domingo-Ferrer & Torra 2005, Algorithm 1) on sdcMicro's CASCrefmicrodata and
Tarragona, and the properties every MDAV partition has: every group holds k..2k-1 records,
releasing group means keeps each column's mean, and a group's records share their values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sdcmicro_data import sdcmicro_data

from deid_core.errors import RecipeError
from deid_core.masking import Microaggregate, MultivariateMicroaggregate
from deid_core.masking.microaggregation import (
    blocked_mdav_groups,
    mdav_groups,
    principal_blocks,
    standardised,
)
from deid_core.recipe import Recipe, Roles
from deid_core.workspace import Workspace


def mdav_reference(points: np.ndarray, k: int) -> list[list[int]]:
    """MDAV as published, record by record: the groups as lists of row numbers, in the order
    they are formed (ties: the row first in the file)."""
    points = np.asarray(points, dtype=float).reshape(len(points), -1)
    left = list(range(len(points)))
    # One column: the same IEEE operations in Python floats (a difference, then its square),
    # without numpy's cost per call on one-element arrays.
    values = points[:, 0].tolist() if points.shape[1] == 1 else None

    def distance(i: int, centre: np.ndarray) -> float:
        if values is not None:
            difference = values[i] - float(centre[0])
            return difference * difference
        return float(np.sum((points[i] - centre) ** 2))

    def farthest(centre: np.ndarray) -> int:
        return max(left, key=lambda i: (distance(i, centre), -i))

    def group_around(i: int) -> list[int]:
        return sorted(left, key=lambda j: (distance(j, points[i]), j))[:k]

    groups: list[list[int]] = []

    def take(group: list[int]) -> None:
        groups.append(sorted(group))
        for j in group:
            left.remove(j)

    while len(left) >= 3 * k:
        r = farthest(points[left].mean(axis=0))
        s = farthest(points[r])
        r_point = points[r]
        take(group_around(r))
        if s not in left:
            s = farthest(r_point)
        take(group_around(s))
    if len(left) >= 2 * k:
        take(group_around(farthest(points[left].mean(axis=0))))
    if left:
        take(list(left))
    return groups


def as_groups(labels: np.ndarray) -> list[list[int]]:
    return [sorted(np.flatnonzero(labels == g).tolist()) for g in range(labels.max() + 1)]


@pytest.mark.parametrize("name", ["CASCrefmicrodata.csv", "Tarragona.csv"])
@pytest.mark.parametrize("k", [3, 5])
def test_multivariate_groups_match_the_reference(name, k):
    data = sdcmicro_data(name)
    points = standardised(data.to_numpy(dtype=float))
    assert as_groups(mdav_groups(points, k)) == mdav_reference(points, k)


@pytest.mark.parametrize("name", ["CASCrefmicrodata.csv", "Tarragona.csv"])
@pytest.mark.parametrize("k", [3, 10])
def test_univariate_groups_match_the_reference(name, k):
    data = sdcmicro_data(name)
    for column in data.columns[:4]:
        values = data[column].to_numpy(dtype=float)
        assert as_groups(mdav_groups(values, k)) == mdav_reference(values, k), column


@pytest.mark.parametrize("name", ["CASCrefmicrodata.csv", "Tarragona.csv"])
def test_released_file_has_the_mdav_properties(name):
    data = sdcmicro_data(name)
    k = 4
    step = MultivariateMicroaggregate(columns=tuple(data.columns), k=k)
    outcome = step.apply(data)
    released = pd.DataFrame(outcome.values)
    groups = released.groupby(list(data.columns)).size()
    assert groups.min() >= k and groups.max() <= 2 * k - 1
    assert np.allclose(released.mean(), data.mean(), rtol=1e-12)
    assert outcome.facts["groups"] == len(groups)
    univariate = Microaggregate(data.columns[0], k=k).apply(data[data.columns[0]])
    sizes = univariate.value_counts()
    assert sizes.min() >= k
    assert univariate.mean() == pytest.approx(data[data.columns[0]].mean(), rel=1e-12)


def test_worked_example_and_medians():
    values = pd.Series([1.0, 2.0, 3.0, 10.0, 11.0, 30.0, 31.0, 32.0, 100.0], name="x")
    # centroid 24.4: 100 is farthest, its group {100, 32, 31}; then 1 (farthest from 100) with
    # {1, 2, 3}; the last three form a group.
    means = Microaggregate("x", k=3).apply(values)
    assert means.tolist() == [2.0, 2.0, 2.0, 17.0, 17.0, 17.0] + [163 / 3] * 3
    medians = Microaggregate("x", k=3, aggregate="median").apply(values)
    assert medians.tolist() == [2.0] * 3 + [11.0] * 3 + [32.0] * 3
    assert values.tolist()[-1] == 100.0  # the input is not modified


def test_missing_values_stay_missing():
    values = pd.Series([1.0, np.nan, 2.0, 3.0, 50.0, 51.0, 52.0])
    out = Microaggregate("x", k=3).apply(values)
    assert np.isnan(out[1]) and out.notna().sum() == 6
    assert sorted(out.dropna().unique()) == [2.0, 51.0]


def test_strata_make_each_group_a_class_of_k():
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(
        {
            "race": rng.integers(1, 4, 120),
            "age": rng.integers(15, 45, 120),
            "lwt": rng.normal(130, 30, 120).round(),
        }
    )
    roles = Roles(quasi_identifiers=("age", "race", "lwt"))
    step = MultivariateMicroaggregate(columns=("age", "lwt"), k=5, strata=("race",))
    workspace = Workspace(frame)
    risk = workspace.risk(Recipe(roles, data_steps=(step,)))
    assert risk.k >= 5
    released = workspace.masked_frame(Recipe(roles, data_steps=(step,)))
    assert (released["race"] == frame["race"]).all()  # strata are not changed


def test_clear_messages():
    with pytest.raises(RecipeError, match="k = 5 is more than the 3 records"):
        Microaggregate("x", k=5).apply(pd.Series([1.0, 2.0, 3.0]))
    with pytest.raises(RecipeError, match="needs a numeric column"):
        Microaggregate("x").apply(pd.Series(["a", "b", "c"]))


def canonical(labels: np.ndarray, rows: np.ndarray) -> list[tuple[int, ...]]:
    return sorted(tuple(sorted(rows[labels == g].tolist())) for g in np.unique(labels))


@pytest.mark.parametrize("seed", range(6))
def test_blocked_mdav_is_exact_mdav_within_each_block(seed):
    rng = np.random.default_rng(seed)
    n, d, k = int(rng.integers(300, 2000)), int(rng.integers(1, 4)), int(rng.integers(2, 6))
    points = rng.normal(size=(n, d))
    if seed % 2:
        points = np.round(points)  # many ties: they go to the record first in file
    size = int(rng.integers(2 * k, 300))
    group = blocked_mdav_groups(points, k, size)
    blocks = principal_blocks(points, size)
    assert sorted(np.concatenate(blocks).tolist()) == list(range(n))  # a partition
    assert all(size // 2 <= block.size <= size for block in blocks)
    for block in blocks:
        assert canonical(group[block], block) == canonical(mdav_groups(points[block], k), block)
    sizes = np.bincount(group)
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1


def test_a_stratum_beyond_exact_mdav_is_grouped_in_blocks(monkeypatch):
    import deid_core.masking.microaggregation as microaggregation

    data = sdcmicro_data("CASCrefmicrodata.csv")
    exact = MultivariateMicroaggregate(columns=tuple(data.columns[:3]), k=3).apply(data)
    assert exact.facts["records_in_blocks"] == 0
    monkeypatch.setattr(microaggregation, "MAX_EXACT_RECORDS", 500)
    monkeypatch.setattr(microaggregation, "BLOCK_RECORDS", 200)
    step = MultivariateMicroaggregate(columns=tuple(data.columns[:3]), k=3)
    outcome = step.apply(data)
    assert outcome.facts["records_in_blocks"] == len(data)
    released = pd.DataFrame(outcome.values)
    sizes = released.groupby(list(released.columns)).size()
    assert sizes.min() >= 3 and sizes.max() <= 5
    assert np.allclose(released.mean(), data[released.columns].mean(), rtol=1e-12)
    assert outcome.facts["groups"] == len(sizes)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(-5, 5), min_size=1, max_size=60),
    st.integers(2, 6),
    st.integers(1, 3),
)
def test_property_groups_and_one_column_fast_path(values, k, columns):
    """Every group has k..2k-1 records (one group when fewer than 2k), and the one-column
    path forms the reference's groups, ties included."""
    x = np.array(values, dtype=float)
    labels = mdav_groups(x, k)
    sizes = np.bincount(labels)
    if len(x) < 2 * k:
        assert sizes.tolist() == [len(x)]
    else:
        assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    assert as_groups(labels) == mdav_reference(x, k)
    rng = np.random.default_rng(len(values))
    points = np.column_stack([x, rng.integers(0, 3, len(x))][:columns])
    labels = mdav_groups(points, k)
    assert as_groups(labels) == mdav_reference(points, k)


def test_the_points_passed_in_are_not_modified():
    points = np.asfortranarray(np.random.default_rng(5).normal(size=(40, 3)))
    before = points.copy()
    mdav_groups(points, 3)
    assert np.array_equal(points, before)
