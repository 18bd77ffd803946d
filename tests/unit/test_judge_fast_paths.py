"""The fast paths of judging a record-suppressing recipe (issue 30: the search at a million
records) give exactly the figures of the general paths and of brute-force counts.

- :meth:`RecordSuppression.apply` stops after one pass when no value matches any value; it
  must remove exactly the records that removing small classes until none is left removes.
- The workspace decides record suppression alone from its cached classes
  (:meth:`RecordSuppression.outcome_of_classes`) when the keys have no missing value: the same
  records and facts as the step on the masked frame (the command line's path).
- The workspace links the release to the source by counting the people of each released row's
  source class when every value is matchable: the same figures as the general join on a source
  given explicitly, and as a pair-by-pair count on the exported file.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from brute_force_counts import compatible
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from deid_core.errors import DataError, RecipeError
from deid_core.masking import IntervalGroup, RecordSuppression, Subsample
from deid_core.recipe import Recipe, Roles
from deid_core.risk.classes import class_ids_from_key
from deid_core.risk.linkage import mask_source_like
from deid_core.workspace import Workspace

QIS = ("sex", "region", "age")


@st.composite
def files(draw, missing: bool = False) -> pd.DataFrame:
    """Small files with repeated people; missing values in the keys only if ``missing``."""
    n = draw(st.integers(6, 30))
    n_people = draw(st.integers(max(2, n // 3), n))
    people = draw(st.lists(st.integers(0, n_people - 1), min_size=n, max_size=n))
    extra = [None] if missing else []
    sex = draw(st.lists(st.sampled_from(["F", "M", *extra]), min_size=n, max_size=n))
    region = draw(st.lists(st.sampled_from(["north", "south", *extra]), min_size=n, max_size=n))
    ages = st.integers(20, 45) if not missing else st.one_of(st.integers(20, 45), st.none())
    age = draw(st.lists(ages, min_size=n, max_size=n))
    return pd.DataFrame(
        {
            "pid": [f"p{p}" for p in people],
            "sex": sex,
            "region": region,
            "age": pd.array(age, dtype="Float64").astype(float),
        }
    )


def brute_force(released: pd.DataFrame, source: pd.DataFrame, wildcard: bool, people: str):
    """Per released row: distinct people (column ``people``) among the compatible released
    rows, and among the compatible source rows."""
    rows = released[list(QIS)].values.tolist()
    pool = source[list(QIS)].values.tolist()
    within = [
        len({p for p, o in zip(released[people], rows, strict=True) if compatible(r, o, wildcard)})
        for r in rows
    ]
    linked = [
        len({p for p, o in zip(source[people], pool, strict=True) if compatible(r, o, wildcard)})
        for r in rows
    ]
    return np.array(within), np.array(linked)


def iterated_removal(frame: pd.DataFrame, wild: np.ndarray, persons: np.ndarray, k: int):
    """Records kept by removing, pass after pass, every record compatible with fewer than k
    people among the records still kept (a missing or wild cell matches any value)."""
    values = frame[list(QIS)].values.tolist()
    keep = np.ones(len(frame), dtype=bool)
    while True:
        rows = np.flatnonzero(keep)
        small = []
        for i in rows:
            people = set()
            for j in rows:
                if all(
                    wild[i, c]
                    or wild[j, c]
                    or pd.isna(values[i][c])
                    or pd.isna(values[j][c])
                    or values[i][c] == values[j][c]
                    for c in range(len(QIS))
                ):
                    people.add(int(persons[j]))
            if len(people) < k:
                small.append(i)
        if not small:
            return keep
        keep[small] = False


@settings(max_examples=60, deadline=None)
@given(
    frame=files(missing=True),
    k=st.integers(2, 3),
    wild_cells=st.lists(st.tuples(st.integers(0, 29), st.integers(0, 2)), max_size=6),
    by_person=st.booleans(),
)
def test_record_suppression_removes_what_iterated_removal_removes(
    frame: pd.DataFrame, k: int, wild_cells: list, by_person: bool
) -> None:
    """One pass without wildcards, passes until none is left with them: the same records as
    removing small classes until none is left, with and without missing values."""
    n = len(frame)
    wild = np.zeros((n, len(QIS)), dtype=bool)
    for i, c in wild_cells:
        wild[i % n, c] = True
    wildcards = {q: wild[:, c] for c, q in enumerate(QIS) if wild[:, c].any()}
    persons = pd.factorize(frame["pid"])[0] if by_person else np.arange(n)
    assume(k <= len(set(persons.tolist())))
    expected = iterated_removal(frame, wild, persons, k)
    step = RecordSuppression(k=k, limit=1.0)
    try:
        outcome = step.apply(frame, QIS, wildcards=wildcards, persons=persons)
    except RecipeError as error:
        assert "every record is in a class smaller" in str(error)
        assert not expected.any()
        return
    keep = np.ones(n, dtype=bool) if outcome.keep is None else outcome.keep
    assert np.array_equal(keep, expected)
    assert outcome.facts["records_removed"] == int((~expected).sum())


def test_a_removal_that_shrinks_a_wildcard_class_takes_another_pass() -> None:
    """k = 3: (a, x) and (b, x) each meet only the suppressed row (their own and it: 2 rows),
    so they go; the suppressed row, compatible with both (3 rows), stays until the next pass
    finds it alone. One pass would release it as a class of 1."""
    frame = pd.DataFrame({"sex": ["a", "a", "b"], "region": ["x", "x", "x"], "age": [1.0] * 3})
    wildcards = {"sex": np.array([False, True, False])}
    expected = iterated_removal(
        frame, np.column_stack([wildcards["sex"], *[[False] * 3] * 2]), np.arange(3), 3
    )
    assert not expected.any()
    with pytest.raises(RecipeError, match="every record is in a class smaller"):
        RecordSuppression(k=3, limit=1.0).apply(frame, QIS, wildcards=wildcards)
    frame = pd.concat([frame, frame.iloc[[0, 0]]], ignore_index=True)  # (a, x) now 3 rows
    wildcards = {"sex": np.array([False, True, False, False, False])}
    keep = RecordSuppression(k=3, limit=1.0).apply(frame, QIS, wildcards=wildcards).keep
    assert list(keep) == [True, True, False, True, True]


RECIPES = {
    "record_suppression": ((), (RecordSuppression(k=2, limit=1.0),)),
    "bands_then_record_suppression": (
        (IntervalGroup("age", width=10),),
        (RecordSuppression(k=3, limit=1.0),),
    ),
    "subsample": ((), (Subsample(fraction=0.6, seed=5),)),
}


def _cached_kinds(workspace: Workspace) -> set:
    return {key[0] for key, _ in workspace.cache.items() if isinstance(key, tuple)}


@settings(max_examples=60, deadline=None)
@given(
    frame=files(),
    name=st.sampled_from(sorted(RECIPES)),
    missing=st.sampled_from(["category", "wildcard"]),
    record_id=st.booleans(),
)
def test_judging_from_the_source_classes_equals_the_general_paths_and_brute_force(
    frame: pd.DataFrame, name: str, missing: str, record_id: bool
) -> None:
    steps, data_steps = RECIPES[name]
    roles = Roles(quasi_identifiers=QIS, record_id="pid" if record_id else None)
    recipe = Recipe(roles, steps, data_steps=data_steps)
    workspace = Workspace(frame)
    try:
        judged = workspace.judged_risk(recipe, missing)
    except RecipeError:  # k cannot be reached on so small a file
        with pytest.raises(RecipeError):
            recipe.apply(frame)
        assume(False)
    except DataError:  # no record left
        assume(False)
    assert "source_classes" in _cached_kinds(workspace)  # the fast paths were taken

    # The step on the masked frame (the command line's path) removes the same records.
    stage = workspace.release_stage(recipe)
    masked = frame.copy()
    for step in steps:
        masked[step.column] = step.apply(masked[step.column])
    persons = pd.factorize(frame["pid"])[0] if record_id else None
    general = recipe.release_stage(masked, persons=persons, source=frame)
    assert (stage.kept is None) == (general.kept is None)
    if stage.kept is not None:
        assert np.array_equal(stage.kept, general.kept)
    assert [dict(f) for _, f in stage.outcomes] == [dict(f) for _, f in general.outcomes]

    # The general linkage (the source given explicitly, joined by patterns) counts alike.
    link = judged.source
    assert link is not None
    other = workspace.source_linkage(recipe, missing, source=frame)
    assert np.array_equal(link.candidates, other.candidates)
    assert np.array_equal(link.person_risk, other.person_risk)
    assert (link.unit, link.missing, link.n_source_people) == (
        other.unit,
        other.missing,
        other.n_source_people,
    )

    # And a pair-by-pair count on the released file and the coarsened source.
    released = workspace.release(recipe, keep_record_id=True).frame
    source = mask_source_like(recipe, frame, list(QIS))
    who = "pid"
    if not record_id:
        released = released.assign(row=np.arange(len(released)))
        source = source.assign(row=np.arange(len(source)))
        who = "row"
    else:
        source = source.assign(pid=frame["pid"])
    within, linked = brute_force(released, source, False, who)
    assert np.array_equal(link.candidates, linked)
    classes = judged.classes
    unit_of = released[who].to_numpy()
    per_person = pd.Series(within).groupby(unit_of).min()
    assert classes.k == per_person.min()
    assert classes.max_risk == pytest.approx(1 / per_person.min())
    assert classes.average_risk == pytest.approx((1 / per_person).mean())
    assert link.max_risk == pytest.approx(pd.Series(1 / linked).groupby(unit_of).max().max())
    assert link.average_risk == pytest.approx(pd.Series(1 / linked).groupby(unit_of).max().mean())


@settings(max_examples=100, deadline=None)
@given(
    keys=st.lists(st.integers(0, 50), min_size=1, max_size=40),
    scale=st.sampled_from([1, 10**6, 2**52]),
)
def test_class_ids_number_equal_keys_alike_on_each_path(keys: list, scale: int) -> None:
    """The bincount (small range), sort (large range) and hash (range too large to shift)
    paths all number the distinct keys 0..C-1 in key order."""
    key = np.array(keys, dtype=np.int64) * scale
    class_of, n_classes = class_ids_from_key(key, int(key.max()) + 1)
    expected, uniques = pd.factorize(key, sort=True)
    assert np.array_equal(class_of, expected)
    assert n_classes == len(uniques)
