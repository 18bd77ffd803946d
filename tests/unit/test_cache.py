"""The session's one cache (:mod:`deid_core.cache`): bounded by memory as well as by count and
per name, large entries dropped first, safe across threads, an entry made once."""

import threading
import time

import numpy as np
import pandas as pd
import pytest

from deid_core.cache import CacheNamespace, LRUCache, approximate_nbytes


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


def test_two_threads_asking_for_two_entries_in_opposite_orders_both_finish():
    """Thread A makes "a" and needs "b"; thread B makes "b" and needs "a". Each waiting for
    the other would never end: the second to ask makes the entry itself."""
    cache = LRUCache(max_bytes=10**6)
    both_making = threading.Barrier(2, timeout=5)
    calls = {"a": 0, "b": 0}

    def making(mine: str, theirs: str):
        def make():
            calls[mine] += 1
            both_making.wait()  # each thread now holds its own entry's marker
            return f"{mine}+" + cache.get_or_make(theirs, lambda: theirs)

        return make

    results = {}
    threads = [
        threading.Thread(
            target=lambda m=m, t=t: results.update({m: cache.get_or_make(m, making(m, t))}),
            daemon=True,  # without the fix they would wait forever
        )
        for m, t in (("a", "b"), ("b", "a"))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert not any(thread.is_alive() for thread in threads), "the two threads wait forever"
    # One thread made the other's entry itself (the plain value, not kept under the guard):
    # each result is its own entry followed by the other's.
    assert set(results) == {"a", "b"}
    assert results["a"].startswith("a+") and results["b"].startswith("b+")
    assert calls == {"a": 1, "b": 1}
    assert cache.peek("a") == results["a"] and cache.peek("b") == results["b"]


def test_a_thread_asked_for_an_entry_it_is_making_makes_it_again_without_waiting():
    cache = LRUCache(max_bytes=10**6)
    inner = []

    def outer():
        inner.append(cache.get_or_make("k", lambda: "inner"))
        return "outer"

    assert cache.get_or_make("k", outer) == "outer" and inner == ["inner"]


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
