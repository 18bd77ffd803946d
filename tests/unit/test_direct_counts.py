"""The direct answers on small files (compatible people pair by pair; the local-suppression
index's queries from the codes) equal the indexed ones they stand in for, and a brute force."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from deid_core.masking import suppression as suppression_module
from deid_core.masking.suppression import DistinctKeys, GroupIndex, suppression_pattern
from deid_core.risk import release as release_module
from deid_core.risk.release import (
    _compatible_by_patterns,
    _compatible_directly,
    compatible_people_counts,
)


def brute_people(tc, to, pc, po, people) -> np.ndarray:
    """Per target row, the distinct people of the pool rows agreeing with it on every column
    observed in both."""
    out = []
    for i in range(tc.shape[0]):
        both = to[i] & po
        agree = ~both | (pc == tc[i])
        out.append(len(set(people[agree.all(axis=1)].tolist())))
    return np.array(out, dtype=np.int64)


@st.composite
def rows(draw, m: int, max_rows: int = 40):
    n = draw(st.integers(1, max_rows))
    codes = np.array(draw(st.lists(st.lists(st.integers(0, 3), min_size=m, max_size=m),
                                   min_size=n, max_size=n)), dtype=np.int64)  # fmt: skip
    observed = np.array(draw(st.lists(st.lists(st.booleans(), min_size=m, max_size=m),
                                      min_size=n, max_size=n)), dtype=bool)  # fmt: skip
    people = draw(st.lists(st.integers(0, max(n // 2, 1)), min_size=n, max_size=n))
    return codes, observed, pd.factorize(np.array(people))[0].astype(np.int64)


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 4).flatmap(lambda m: st.tuples(rows(m), rows(m), st.integers(1, 7))))
def test_compatible_people_pair_by_pair_equal_the_join_by_patterns(drawn):
    (tc, to, _), (pc, po, people), block = drawn
    expected = brute_people(tc, to, pc, po, people)
    assert np.array_equal(_compatible_by_patterns(tc, to, pc, po, people), expected)
    real = release_module.DIRECT_BLOCK
    try:  # blocks of a few target rows: the blocks' seams
        release_module.DIRECT_BLOCK = block * pc.shape[0]
        assert np.array_equal(_compatible_directly(tc, to, pc, po, people), expected)
    finally:
        release_module.DIRECT_BLOCK = real
    assert np.array_equal(compatible_people_counts(tc, to, pc, po, people), expected)


def test_large_files_still_join_by_patterns(monkeypatch):
    calls: list[int] = []
    real = release_module._compatible_by_patterns
    monkeypatch.setattr(
        release_module, "_compatible_by_patterns", lambda *a: calls.append(1) or real(*a)
    )
    rng = np.random.default_rng(1)
    codes, observed = rng.integers(0, 3, (50, 2)), rng.random((50, 2)) < 0.8
    people = np.arange(50)
    compatible_people_counts(codes, observed, codes, observed, people)
    assert not calls
    monkeypatch.setattr(release_module, "DIRECT_PAIRS", 50 * 50 - 1)
    got = compatible_people_counts(codes, observed, codes, observed, people)
    assert calls and np.array_equal(got, brute_people(codes, observed, codes, observed, people))


def _keys(codes: np.ndarray, observed: np.ndarray) -> DistinctKeys:
    frame = pd.DataFrame(np.where(observed, codes, np.nan), columns=list("abcd"[: codes.shape[1]]))
    return DistinctKeys.of(frame, list(frame.columns), {})


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 4).flatmap(lambda m: rows(m, max_rows=60)),
    st.integers(2, 4),
    st.booleans(),
    st.booleans(),
)
def test_local_suppression_is_the_same_with_the_direct_index(drawn, k, by_people, importance):
    """The whole greedy search and its give-back, counted in records or in people, chooses
    the same cells whether the index answers directly or from its group tables."""
    codes, observed, people = drawn
    assume(codes.shape[0] >= k)  # the step refuses k above the records (_check_k)
    keys = _keys(codes, observed)
    m = codes.shape[1]
    order = list(range(m))[::-1]
    persons = people if by_people and people.max() + 1 >= k else None
    real = suppression_module.DIRECT_COMBINATIONS
    found = []
    for limit in (real, 0):
        suppression_module.DIRECT_COMBINATIONS = limit
        try:
            found.append(suppression_pattern(keys, k, order, importance, persons))
        finally:
            suppression_module.DIRECT_COMBINATIONS = real
    assert np.array_equal(found[0], found[1])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4).flatmap(lambda m: rows(m, max_rows=30)), st.integers(0, 15))
def test_the_index_queries_agree(drawn, outside):
    codes, observed, _ = drawn
    keys = _keys(codes, observed)
    outside &= (1 << codes.shape[1]) - 1
    direct = GroupIndex(keys.codes, keys.wild.copy(), keys.weight)
    real = suppression_module.DIRECT_COMBINATIONS
    suppression_module.DIRECT_COMBINATIONS = 0
    try:
        tables = GroupIndex(keys.codes, keys.wild.copy(), keys.weight)
    finally:
        suppression_module.DIRECT_COMBINATIONS = real
    assert direct.direct and not tables.direct
    for row in range(len(keys.weight)):
        assert direct.compatible(row, outside) == tables.compatible(row, outside)
        assert sorted(direct.compatible_rows(row, outside)) == sorted(
            tables.compatible_rows(row, outside)
        )
        # a brute force: records agreeing on every column both have, outside ``outside``
        own = ~keys.wild[row] & ~np.array([outside >> j & 1 for j in range(codes.shape[1])], bool)
        agree = (keys.wild | (keys.codes == keys.codes[row]))[:, own].all(axis=1)
        assert direct.compatible(row, outside) == int(keys.weight[agree].sum())
