"""Several rows per person: class sizes count distinct people, each person at risk by their
riskiest row, in the risk summary, the verdict, the R-U map and the riskiest records."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.masking import IntervalGroup
from deid_core.recipe import Recipe, Roles
from deid_core.risk import people_class_sizes, people_of
from deid_core.risk.context import ReleaseContext
from deid_core.risk.records_at_risk import records_at_risk
from deid_core.tradeoff.rumap import security_of
from deid_core.workspace import Workspace

# Six people, nine rows. p1 has two identical visits; p2's visits differ; p3 has two
# identical visits alone in their class; p6 has one visit in a crowded class and one alone.
HAND_MADE = pd.DataFrame(
    {
        "pid": ["p1", "p1", "p2", "p2", "p3", "p3", "p4", "p5", "p6", "p6"],
        "sex": ["F", "F", "F", "F", "M", "M", "M", "F", "F", "M"],
        "age": [40, 40, 40, 50, 40, 40, 50, 50, 40, 60],
    }
)
ROLES = Roles(quasi_identifiers=("sex", "age"), record_id="pid")


def test_hand_made_example_counts_people_once():
    # Classes in people: (F,40) {p1,p2,p6} = 3; (F,50) {p2,p5} = 2; (M,40) {p3} = 1;
    # (M,50) {p4} = 1; (M,60) {p6} = 1. A person's size is the smallest over their rows:
    # p1 3, p2 min(3,2) = 2, p3 1, p4 1, p5 2, p6 min(3,1) = 1.
    summary = Workspace(HAND_MADE).risk(Recipe(ROLES))
    assert summary.unit == "people" and summary.n_records == 6 and summary.n_rows == 10
    assert sorted(summary.class_size.tolist()) == [1, 1, 1, 2, 2, 3]
    assert summary.k == 1 and summary.uniques == 3 and summary.n_classes == 5
    assert summary.average_risk == pytest.approx((1 / 3 + 1 / 2 + 1 + 1 + 1 / 2 + 1) / 6)
    assert summary.max_risk == 1.0 and summary.strict_average_risk == 1.0
    assert summary.k_violations == {2: 3, 3: 5, 5: 6}
    assert summary.records_in_small_classes == 6
    # Per row: the number of people in the row's class.
    assert summary.sizes_by_row.tolist() == [3, 3, 3, 2, 1, 1, 1, 2, 3, 1]


def test_counting_rows_would_hide_a_unique_person():
    # p3's two identical visits make a class of two rows but of one person.
    rows = Workspace(HAND_MADE).risk(Recipe(ROLES), people=False)
    assert rows.unit == "records" and rows.n_records == 10
    p3 = HAND_MADE.index[HAND_MADE["pid"] == "p3"]
    assert (rows.class_size[p3] == 2).all()
    assert rows.uniques == 2  # p4 and p6's second visit; p3 is missed
    assert Workspace(HAND_MADE).risk(Recipe(ROLES)).uniques == 3


def test_coarsening_merges_people_not_rows():
    recipe = Recipe(ROLES, (IntervalGroup("age", width=30.0, origin=30.0, release="label"),))
    # Age bands 30-60 and 60-90: (F,30-60) {p1,p2,p5,p6} = 4, (M,30-60) {p3,p4} = 2,
    # (M,60-90) {p6} = 1: p6 stays at risk by their riskiest row.
    summary = Workspace(HAND_MADE).risk(recipe)
    sizes = dict(zip(["p1", "p2", "p3", "p4", "p5", "p6"], summary.class_size, strict=True))
    assert sizes == {"p1": 4, "p2": 4, "p3": 2, "p4": 2, "p5": 4, "p6": 1}


def test_the_verdict_and_the_rumap_use_people():
    workspace = Workspace(HAND_MADE.drop(index=[9]))  # p6 keeps one row: (F,40)
    summary = workspace.risk(Recipe(ROLES))
    verdict = ReleaseContext(public=True, min_cell_size=3).judge(summary)
    assert verdict.value == pytest.approx(1.0)  # p3 and p4 are unique people
    assessment = workspace.assess(Recipe(ROLES))
    assert security_of(assessment, "max_risk") == pytest.approx(0.0)
    assert security_of(assessment, "average_risk") == pytest.approx(1 - summary.average_risk)
    assert assessment.risk.unit == "people"


def test_one_row_per_person_is_unchanged_and_wildcards_count_people_too():
    once = HAND_MADE.drop_duplicates("pid")
    summary = Workspace(once).risk(Recipe(ROLES))
    assert summary.unit == "records" and summary.n_records == 6
    assert Workspace(once).people(Recipe(ROLES)) is None
    # p2's age missing on one visit: under the wildcard rule it matches (F, 40) and (F, 50).
    gaps = HAND_MADE.assign(age=HAND_MADE["age"].astype(float))
    gaps.loc[3, "age"] = np.nan
    wildcard = Workspace(gaps).risk(Recipe(ROLES), missing="wildcard")
    assert wildcard.unit == "people" and wildcard.n_records == 6 and wildcard.n_rows == 10
    # Rows: (F,40) {p1,p2,p6} 3; (F,NA) {p1,p2,p5,p6} 4; (F,50) {p2,p5} 2; M rows 1.
    # People: p1 3, p2 min(3, 4) = 3, p3 1, p4 1, p5 2, p6 min(3, 1) = 1.
    assert sorted(wildcard.class_size.tolist()) == [1, 1, 1, 2, 3, 3]
    assert wildcard.missing == "wildcard"


def test_linkage_and_riskiest_records_work_with_repeated_ids():
    workspace = Workspace(HAND_MADE)
    link = workspace.linkage(Recipe(ROLES), "exact")
    assert link.n_released == 10  # rows; each row's own row is the truth
    table = records_at_risk(workspace, Recipe(ROLES), top=4, min_class_size=2)
    assert table["class size"].tolist() == [1, 1, 1, 1]
    assert set(table["record"]) == {"p3", "p4", "p6"}


def test_a_missing_record_id_is_a_person_of_its_own():
    people = people_of(pd.Series(["a", None, "a", None]))
    assert people.n_people == 3 and people.codes.tolist() == [0, 1, 0, 2]


def _brute_force(key: list[int], person: list[int]) -> tuple[list[int], list[int]]:
    """Per person and per row, the number of distinct people in the classes, by sets."""
    people_in = {k: {p for kk, p in zip(key, person, strict=True) if kk == k} for k in key}
    per_row = [len(people_in[k]) for k in key]
    per_person = {}
    for size, p in zip(per_row, person, strict=True):
        per_person[p] = min(per_person.get(p, size), size)
    return [per_person[p] for p in sorted(per_person)], per_row


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 4)), min_size=1, max_size=40))
def test_people_class_sizes_match_a_brute_force_count(rows):
    person = [p for p, _ in rows]
    key = [k for _, k in rows]
    people = people_of(pd.Series(person))
    sizes = people_class_sizes(np.asarray(key, dtype=np.int64), people)
    # people_of numbers people by first appearance; map back to the person labels.
    order = pd.factorize(pd.Series(person))[1].tolist()
    expected_person, expected_row = _brute_force(key, person)
    by_label = dict(zip(sorted(set(person)), expected_person, strict=True))
    assert sizes.per_person.tolist() == [by_label[p] for p in order]
    assert sizes.per_row.tolist() == expected_row
    assert sizes.n_classes == len(set(key))
