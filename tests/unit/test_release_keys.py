"""Compatible people, class risk and source linkage against brute-force counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.masking.base import equal_key_pairs
from deid_core.risk.classes import risk_summary
from deid_core.risk.release import (
    ReleasedKeys,
    _compatible_by_patterns,
    class_risk,
    compatible_people_counts,
    people_in_classes,
    shared_codes,
    source_linkage,
)


def brute_compatible_people(tc, to, pc, po, people):
    out = []
    for i in range(tc.shape[0]):
        found = set()
        for j in range(pc.shape[0]):
            both = to[i] & po[j]
            if np.all(tc[i][both] == pc[j][both]):
                found.add(int(people[j]))
        out.append(len(found))
    return np.array(out, dtype=np.int64)


@st.composite
def keyed_rows(draw, max_rows=25):
    n = draw(st.integers(1, max_rows))
    m = draw(st.integers(1, 3))
    codes = np.array(
        draw(st.lists(st.lists(st.integers(0, 2), min_size=m, max_size=m), min_size=n, max_size=n)),
        dtype=np.int64,
    )
    observed = np.array(
        draw(st.lists(st.lists(st.booleans(), min_size=m, max_size=m), min_size=n, max_size=n)),
        dtype=bool,
    )
    people = np.array(draw(st.lists(st.integers(0, max(n // 2, 1)), min_size=n, max_size=n)))
    return codes, observed, pd.factorize(people)[0].astype(np.int64)


@settings(max_examples=150, deadline=None)
@given(keyed_rows(), keyed_rows())
def test_compatible_people_match_a_brute_force_count(target, pool):
    tc, to, _ = target
    pc, po, people = pool
    m = min(tc.shape[1], pc.shape[1])
    tc, to, pc, po = tc[:, :m], to[:, :m], pc[:, :m], po[:, :m]
    got = compatible_people_counts(tc, to, pc, po, people)
    assert np.array_equal(got, brute_compatible_people(tc, to, pc, po, people))


@settings(max_examples=100, deadline=None)
@given(keyed_rows())
def test_class_risk_is_the_per_person_minimum_of_compatible_people(rows):
    codes, observed, people = rows
    n, m = codes.shape
    frame = pd.DataFrame({f"q{j}": np.where(observed[:, j], codes[:, j], np.nan) for j in range(m)})
    frame["id"] = people
    keys = ReleasedKeys.from_frame(frame, [f"q{j}" for j in range(m)], "id", "wildcard")
    summary = class_risk(keys)
    per_row = brute_compatible_people(codes, observed, codes, observed, people)
    per_person = pd.Series(per_row).groupby(people).min()
    assert summary.k == per_person.min()
    assert summary.max_risk == 1 / per_person.min()
    assert np.isclose(summary.average_risk, (1 / per_person).mean())
    assert summary.uniques == int((per_person == 1).sum())
    assert summary.unit == ("people" if len(set(people)) < n else "records")


@settings(max_examples=60, deadline=None)
@given(keyed_rows())
def test_one_row_per_person_gives_the_record_figures(rows):
    codes, observed, _ = rows
    m = codes.shape[1]
    frame = pd.DataFrame({f"q{j}": np.where(observed[:, j], codes[:, j], np.nan) for j in range(m)})
    qis = [f"q{j}" for j in range(m)]
    for missing in ("category", "wildcard"):
        ours = class_risk(ReleasedKeys.from_frame(frame, qis, None, missing))
        theirs = risk_summary(frame, qis, missing=missing)
        assert (ours.k, ours.uniques, ours.n_classes) == (
            theirs.k,
            theirs.uniques,
            theirs.n_classes,
        )
        assert np.isclose(ours.average_risk, theirs.average_risk)


def test_an_unsuppressed_record_unique_in_the_source_is_linked_with_certainty():
    source = pd.DataFrame({"a": [1, 1, 2, 3], "b": [5, 6, 5, 5], "id": [1, 2, 3, 4]})
    released = source.copy()
    released.loc[[1], "b"] = np.nan  # row 1 suppressed: compatible with row 0 in the release
    (rc, ro), (sc, so) = shared_codes(released, source, ["a", "b"], "wildcard")
    keys = ReleasedKeys(("a", "b"), rc, ro, None, "wildcard")
    link = source_linkage(keys, sc, so, np.arange(4))
    assert class_risk(keys).uniques == 2  # rows 2 and 3
    assert list(link.candidates) == [1, 2, 1, 1]  # row 0 is unique in the source


@st.composite
def matchable_rows(draw, max_rows=25):
    """Codes of a target and a pool on the same columns, every value matchable."""
    m = draw(st.integers(1, 3))

    def rows() -> np.ndarray:
        n = draw(st.integers(1, max_rows))
        cells = st.lists(st.integers(0, 2), min_size=m, max_size=m)
        return np.array(draw(st.lists(cells, min_size=n, max_size=n)), dtype=np.int64)

    target, pool = rows(), rows()
    people = draw(
        st.lists(st.integers(0, max(len(pool) // 2, 1)), min_size=len(pool), max_size=len(pool))
    )
    return target, pool, pd.factorize(np.array(people))[0].astype(np.int64)


@settings(max_examples=150, deadline=None)
@given(matchable_rows())
def test_the_exact_match_path_counts_as_the_pattern_path_and_the_brute_force(rows):
    """Every value matchable: the class count (one key per row) equals the join by patterns
    and a pair-by-pair count, with several rows per person and target classes the pool lacks."""
    target, pool, people = rows
    seen_t, seen_p = np.ones(target.shape, dtype=bool), np.ones(pool.shape, dtype=bool)
    fast = compatible_people_counts(target, seen_t, pool, seen_p, people)
    general = _compatible_by_patterns(target, seen_t, pool, seen_p, people)
    assert np.array_equal(fast, general)
    assert np.array_equal(fast, brute_compatible_people(target, seen_t, pool, seen_p, people))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 5)), min_size=1, max_size=40))
def test_people_in_classes_counts_distinct_people(pairs):
    class_of = np.array([c for c, _ in pairs])
    people = np.array([p for _, p in pairs])
    expected = [len({p for c, p in pairs if c == k}) for k in range(6)]
    assert list(people_in_classes(class_of, people, 6)) == expected
    assert list(people_in_classes(class_of, None, 6)) == [
        sum(c == k for c, _ in pairs) for k in range(6)
    ]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=20), st.lists(st.integers(0, 5), max_size=20))
def test_equal_key_pairs_is_every_pair_of_equal_keys(left, right):
    """The join both compatible-people counts use: every (i, j) with equal keys, once each."""
    i, j = equal_key_pairs(np.array(left, dtype=np.int64), np.array(right, dtype=np.int64))
    assert sorted(zip(i.tolist(), j.tolist(), strict=True)) == [
        (a, b) for a, x in enumerate(left) for b, y in enumerate(right) if x == y
    ]
