"""The workspace's shortcuts and its one cache.

- Same-masking linkage against the original data is the average risk (Cologne's score with
  i = f): the workspace takes it from the class sizes instead of re-masking the source and
  matching; a property test checks it against the full matching on random data and recipes,
  and that the full matching is still used where the identity does not hold.
- The cache is bounded by memory as well as by count, per name, and safe across threads.
"""

import threading
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_core import workspace as workspace_module
from deid_core.masking import (
    AbsoluteRound,
    IntervalGroup,
    MergeLevels,
    RelativeRound,
    TopBottomCode,
    UniformNoise,
)
from deid_core.recipe import Recipe, Roles
from deid_core.risk import linkage_risk
from deid_core.workspace import (
    CacheNamespace,
    LRUCache,
    Workspace,
    approximate_nbytes,
    default_cache_bytes,
)

numbers = st.one_of(st.integers(0, 6).map(float), st.just(float("nan")))
words = st.sampled_from(["a", "b", "c", None])
mixed = st.sampled_from([1, 1.0, True, "1", 0, False, None, "x"])


@st.composite
def data_and_recipes(draw):
    """A small frame (numbers with missing values, text, and sometimes a text column that
    mixes 1, 1.0 and True) and a recipe of masking steps on it, random ones included."""
    n = draw(st.integers(1, 40))
    frame = pd.DataFrame(
        {
            "x": draw(st.lists(numbers, min_size=n, max_size=n)),
            "y": draw(st.lists(st.integers(0, 30), min_size=n, max_size=n)),
            "g": pd.Series(draw(st.lists(words, min_size=n, max_size=n)), dtype=object),
        }
    )
    qis = ["x", "y", "g"]
    if draw(st.booleans()):
        frame["m"] = pd.Series(draw(st.lists(mixed, min_size=n, max_size=n)), dtype=object)
        qis.append("m")
    record_id = None
    if draw(st.booleans()):
        frame["id"] = draw(st.permutations(range(n)))
        record_id = "id"
    x_step = draw(
        st.one_of(
            st.none(),
            st.builds(AbsoluteRound, column=st.just("x"), decimals=st.integers(-1, 1)),
            st.builds(
                IntervalGroup,
                column=st.just("x"),
                width=st.sampled_from([1.0, 2.0, 2.5]),
                release=st.sampled_from(["label", "midpoint", "mean"]),
            ),
            st.builds(TopBottomCode, column=st.just("x"), top=st.sampled_from([2.0, 4.0])),
            st.builds(
                UniformNoise, column=st.just("x"), half_width=st.just(0.5), seed=st.integers(0, 9)
            ),
        )
    )
    y_step = draw(
        st.one_of(
            st.none(),
            st.builds(RelativeRound, column=st.just("y"), digits=st.integers(1, 2)),
            st.builds(IntervalGroup, column=st.just("y"), width=st.sampled_from([5.0, 10.0])),
        )
    )
    g_step = draw(
        st.one_of(
            st.none(),
            st.just(MergeLevels("g", groups={"ab": ["a", "b"]})),
            st.just(MergeLevels("g", groups={"1": ["a"]})),
        )
    )
    steps = tuple(step for step in (x_step, y_step, g_step) if step is not None)
    roles = Roles(quasi_identifiers=tuple(qis), record_id=record_id)
    return frame, Recipe(roles, steps)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=data_and_recipes())
def test_same_masking_linkage_equals_the_full_matching(case):
    frame, recipe = case
    workspace = Workspace(frame)
    fast = workspace.linkage(recipe, "same_masking")
    full = linkage_risk(recipe, workspace.masked_frame(recipe), frame, "same_masking")
    assert fast.identifiability_score == pytest.approx(full.identifiability_score, rel=1e-12)
    assert fast.perceived_score == pytest.approx(full.perceived_score, rel=1e-12)
    np.testing.assert_array_equal(fast.match_count, full.match_count)
    np.testing.assert_array_equal(fast.correct, full.correct)
    if workspace._linkage_is_average_risk(recipe):
        risk = workspace.risk(recipe)
        assert fast.identifiability_score == risk.average_risk
        assert np.array_equal(fast.match_count, risk.class_size)


def _no_matching(*args, **kwargs):
    raise AssertionError("the full matching was run")


def test_the_shortcut_skips_the_matching_for_deterministic_masking(monkeypatch):
    frame = pd.DataFrame(
        {"age": [31, 32, 45, 47, 47, 60], "sex": ["F", "M", "F", "F", "F", "M"], "id": range(6)}
    )
    recipe = Recipe(
        Roles(quasi_identifiers=("age", "sex"), record_id="id"),
        (IntervalGroup("age", width=10.0),),
    )
    workspace = Workspace(frame)
    monkeypatch.setattr(workspace_module, "linkage_risk", _no_matching)
    result = workspace.linkage(recipe)
    # classes (30-39, F), (30-39, M), (40-49, F) x3, (60-69, M): 4 classes of 6 records
    assert result.identifiability_score == pytest.approx(4 / 6)
    assert result.anonymity_score == pytest.approx(2 / 6)
    assert result.match_count.tolist() == [1, 1, 3, 3, 3, 1]


@pytest.mark.parametrize(
    "case",
    ["random step on a quasi-identifier", "repeated record ids", "1 and True in one column"],
)
def test_the_full_matching_runs_where_the_identity_does_not_hold(case, monkeypatch):
    frame = pd.DataFrame({"x": [1.0, 2.0, 2.0, 3.0], "id": [1, 2, 3, 4]})
    steps: tuple = ()
    record_id = None
    if case == "random step on a quasi-identifier":
        steps = (UniformNoise("x", half_width=0.5, seed=1),)
    elif case == "repeated record ids":
        frame["id"] = [1, 1, 2, 3]
        record_id = "id"
    else:
        frame["x"] = pd.Series([1, True, 1.0, "1"], dtype=object)
    recipe = Recipe(Roles(quasi_identifiers=("x",), record_id=record_id), steps)
    workspace = Workspace(frame)
    assert not workspace._linkage_is_average_risk(recipe)
    monkeypatch.setattr(workspace_module, "linkage_risk", _no_matching)
    with pytest.raises(AssertionError, match="full matching"):
        workspace.linkage(recipe)


def test_repeated_record_ids_link_row_by_row_through_the_full_matching():
    """Several rows per person: the released file is the masked source, so row r links to
    row r (the shortcut from the average risk is not taken, the matching gives the score)."""
    frame = pd.DataFrame({"x": [1.0, 1.0, 3.0], "id": [1, 1, 2]})
    recipe = Recipe(Roles(quasi_identifiers=("x",), record_id="id"))
    workspace = Workspace(frame)
    assert not workspace._linkage_is_average_risk(recipe)
    result = workspace.linkage(recipe)
    assert result.n_released == 3
    assert result.identifiability_score == pytest.approx((0.5 + 0.5 + 1.0) / 3)


# ---------------------------------------------------------------------------- the cache
def test_the_cache_drops_the_least_recently_used_entries_beyond_its_memory():
    cache = LRUCache(max_bytes=3 * 8_000 + 500)
    for name in "abc":
        cache.put(name, np.zeros(1_000))  # 8,000 bytes each
    assert cache.peek("a") is not None  # now the most recently used
    cache.put("d", np.zeros(1_000))
    assert "b" not in cache and {"a", "c", "d"} <= {k for k, _ in cache.items()}
    assert cache.nbytes <= cache.max_bytes
    cache.put("huge", np.zeros(10_000))  # larger than the whole budget: not kept
    assert "huge" not in cache


def test_the_cache_bounds_the_number_of_entries_and_of_one_name():
    cache = LRUCache(max_bytes=10**9, max_entries=5)
    for i in range(8):
        cache.put(("x", i), i)
    assert len(cache) == 5
    names = CacheNamespace(cache, "page.report", limit=2)
    for i in range(4):
        names[i] = str(i)
    assert names.values() == ["2", "3"]
    assert names.get(0) is None and names[3] == "3"
    with pytest.raises(KeyError):
        names[0]


def test_the_cache_makes_a_missing_entry_once_and_keeps_none():
    cache = LRUCache(max_bytes=10**6)
    calls = []
    for _ in range(3):
        assert cache.get_or_make("k", lambda: calls.append(1)) is None
    assert calls == [1]


def test_the_cache_is_safe_across_threads():
    cache = LRUCache(max_bytes=20 * 800, max_entries=50)
    errors = []

    def hammer(offset: int) -> None:
        try:
            for i in range(2_000):
                key = ("k", (i * 7 + offset) % 40)
                value = cache.get_or_make(key, lambda: np.zeros(100))
                assert value.shape == (100,)
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=hammer, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert cache.nbytes <= cache.max_bytes
    assert cache.nbytes == sum(approximate_nbytes(v) for _, v in cache.items())


def test_approximate_nbytes_counts_buffers_once():
    array = np.zeros(1_000)
    assert approximate_nbytes(array) == 8_000
    shared = approximate_nbytes((array, array, {"a": array}))
    assert 8_000 <= shared < 9_000
    frame = pd.DataFrame({"a": np.zeros(1_000), "b": np.ones(1_000, dtype=np.int32)})
    assert approximate_nbytes(frame) >= 12_000


def test_a_workspace_caches_within_its_budget_and_starts_empty():
    frame = pd.DataFrame({"x": np.arange(10_000) % 97, "y": np.arange(10_000) % 13})
    workspace = Workspace(frame, cache_bytes=1_000_000)
    for width in range(1, 40):
        recipe = Recipe(Roles(quasi_identifiers=("x", "y")), (IntervalGroup("x", width=width),))
        workspace.risk(recipe)
        assert workspace.cache.nbytes <= 1_000_000
    assert len(Workspace(frame).cache) == 0
    assert default_cache_bytes(frame) == workspace_module.MIN_CACHE_BYTES


def test_a_thread_waits_for_an_entry_another_is_making_rather_than_making_it_twice():
    cache = LRUCache(max_bytes=10**6)
    calls = []
    release = threading.Event()

    def slow():
        calls.append(threading.get_ident())
        release.wait(5)
        return "fit"

    results = []
    threads = [
        threading.Thread(target=lambda: results.append(cache.get_or_make("fit", slow)))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    time.sleep(0.2)
    release.set()
    for thread in threads:
        thread.join(5)
    assert results == ["fit"] * 3 and len(calls) == 1


def test_an_entry_whose_making_failed_is_made_again_by_the_next_caller():
    cache = LRUCache(max_bytes=10**6)

    def failing():
        raise ValueError("no")

    with pytest.raises(ValueError):
        cache.get_or_make("k", failing)
    assert cache.get_or_make("k", lambda: 1) == 1


def test_memory_pressure_drops_large_entries_before_small_costly_ones():
    cache = LRUCache(max_bytes=3 * 8_000_000)
    cache.put(("fit", "model"), {"estimate": 0.3})  # kilobytes, seconds to redo
    for i in range(6):
        cache.put(("column", i), np.zeros(1_000_000))  # 8 MB each
    assert ("fit", "model") in cache
    assert cache.nbytes <= cache.max_bytes
    assert [key for key, _ in cache.items()][-1] == ("column", 5)
