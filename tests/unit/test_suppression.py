"""Local and record suppression: every record reaches k (counted independently, by brute force,
with suppressed values matching any value), with no more suppressed values than sdcMicro's
kAnon heuristic on sdcMicro's own reference data (``tests/unit/sdcmicro_kanon.py``, a reference
of the published algorithm that reproduces sdcMicro's own test figure), worked examples, the
importance order, and the workspace's risk after suppression.

sdcMicro's figures, from the reference (keys as listed, k, alpha = 1, default importance):

=========  ====================================================  ===  ========  =======
data       keys                                                    k  sdcMicro  product
=========  ====================================================  ===  ========  =======
testdata2  urbrur roof walls water electcon relat sex               2        97       61
free1      REGION SEX AGE                                          3     3,452      321
free1      REGION SEX AGE                                          5     3,886      665
testdata   urbrur roof walls water electcon relat sex              3       293      203
testdata   urbrur roof walls water electcon relat sex              5       500      339
=========  ====================================================  ===  ========  =======

(97 is the figure sdcMicro's own test ``test_localSuppression.R`` expects for testdata2.)
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sdcmicro_data import sdcmicro_data
from sdcmicro_kanon import kanon_suppressions
from suppression_reference import (
    reference_cells,
    reference_pattern,
    reference_people_cells,
    reference_people_pattern,
)

from deid_core.errors import RecipeError
from deid_core.masking import LocalSuppression, RecordSuppression, Subsample
from deid_core.masking.suppression import (
    DistinctKeys,
    suppressed_cells,
    suppression_order,
    suppression_pattern,
)
from deid_core.recipe import Recipe, Roles
from deid_core.workspace import Workspace

TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


def brute_force_sizes(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """For each record, the records agreeing with it wherever both have a value."""
    values = frame[keys].astype(object).to_numpy()
    present = ~pd.isna(frame[keys]).to_numpy()
    sizes = np.empty(len(frame), dtype=int)
    for i in range(len(frame)):
        both = present & present[i]
        differ = both & (values != values[i])
        sizes[i] = int((~differ.any(axis=1)).sum())
    return sizes


def released(frame: pd.DataFrame, keys: list[str], step) -> pd.DataFrame:
    outcome = step.apply(frame, keys)
    out = frame[keys].copy()
    for column, values in outcome.values.items():
        out[column] = values
    return out


@pytest.mark.parametrize(
    ("name", "keys", "k", "sdcmicro"),
    [
        ("testdata2.csv", TESTDATA_KEYS, 2, 97),
        ("free1.csv", ["REGION", "SEX", "AGE"], 3, 3452),
        ("free1.csv", ["REGION", "SEX", "AGE"], 5, 3886),
        ("testdata.csv", TESTDATA_KEYS, 3, 293),
        ("testdata.csv", TESTDATA_KEYS, 5, 500),
    ],
)
def test_reaches_k_with_no_more_suppressions_than_sdcmicro(name, keys, k, sdcmicro):
    data = sdcmicro_data(name)
    theirs = kanon_suppressions(data, keys, k)
    assert int(theirs.isna().sum().sum()) == sdcmicro  # the reference, pinned
    assert brute_force_sizes(theirs, keys).min() >= k  # sdcMicro's result is k-anonymous too
    step = LocalSuppression(k=k)
    outcome = step.apply(data, keys)
    ours = released(data, keys, step)
    assert brute_force_sizes(ours, keys).min() >= k
    total = int(ours.isna().sum().sum())
    assert total == outcome.facts["total_suppressed"] <= sdcmicro
    assert outcome.facts["suppressed_values"] == {c: int(ours[c].isna().sum()) for c in keys}


def test_the_reference_reproduces_sdcmicros_own_test_figure():
    """sdcMicro's test_localSuppression.R: kAnon on testdata2's seven keys (k = 2) makes 97
    suppressions."""
    data = sdcmicro_data("testdata2.csv")
    assert int(kanon_suppressions(data, TESTDATA_KEYS, 2).isna().sum().sum()) == 97


def test_worked_example_one_suppression_joins_a_class():
    # (a, x) is unique; suppressing its second value makes it match the two (a, y) records,
    # and they match it: every record then matches at least 3.
    frame = pd.DataFrame({"p": ["a", "a", "a", "b", "b", "b"], "q": ["x", "y", "y", "z", "z", "z"]})
    outcome = LocalSuppression(k=3).apply(frame, ["p", "q"])
    assert outcome.facts["suppressed_values"] == {"p": 0, "q": 1}
    assert outcome.values["q"].isna().tolist() == [True, False, False, False, False, False]
    assert outcome.wildcards["q"].tolist() == [True, False, False, False, False, False]


def test_importance_protects_the_listed_column():
    frame = pd.DataFrame({"p": ["a", "a", "a", "b"], "q": ["x", "x", "x", "x"]})
    # (b, x) can reach 4 by suppressing p (matches everyone); q alone would not help.
    default = LocalSuppression(k=4).apply(frame, ["p", "q"])
    assert default.facts["suppressed_values"] == {"p": 1, "q": 0}
    frame = pd.DataFrame({"p": ["a", "b", "a", "b"], "q": ["x", "x", "y", "y"]})
    # every record is unique; either column could be suppressed: importance decides which
    keep_p = LocalSuppression(k=2, importance=("p",)).apply(frame, ["p", "q"])
    assert keep_p.facts["suppressed_values"]["p"] == 0
    keep_q = LocalSuppression(k=2, importance=("q",)).apply(frame, ["p", "q"])
    assert keep_q.facts["suppressed_values"]["q"] == 0


def test_clear_messages():
    frame = pd.DataFrame({"p": ["a", "b"], "q": [1, 2]})
    with pytest.raises(RecipeError, match="k = 5 is more than the 2 records"):
        LocalSuppression(k=5).apply(frame, ["p", "q"])
    with pytest.raises(RecipeError, match="names 'z', which is not a quasi-identifier"):
        LocalSuppression(k=2, importance=("z",)).apply(frame, ["p", "q"])
    with pytest.raises(RecipeError, match="none is chosen"):
        LocalSuppression(k=2).apply(frame, [])


def test_original_missing_values_match_anything_and_are_never_counted():
    # (None, 1) matches (a, 1) and (a, 1) matches it: 3 records each at k = 3, nothing to do
    # (with missing as a category of its own, (None, 1) would be unique)
    frame = pd.DataFrame({"p": [None, "a", "a", "b", "b", "b"], "q": [1, 1, 1, 2, 2, 2]})
    outcome = LocalSuppression(k=3).apply(frame, ["p", "q"])
    assert outcome.facts["total_suppressed"] == 0 and not outcome.values
    # the two (b, 2) give up q: (b, NA) then matches the (NA, 1) records too, 4 in all; the
    # missing values are neither chosen nor counted
    frame = pd.DataFrame({"p": ["a", None, None, "a", "b", "b"], "q": [1, 1, 1, 1, 2, 2]})
    outcome = LocalSuppression(k=3).apply(frame, ["p", "q"])
    out = released(frame, ["p", "q"], LocalSuppression(k=3))
    assert out["p"].isna().tolist() == [False, True, True, False, False, False]
    assert out["q"].isna().tolist() == [False] * 4 + [True] * 2
    assert outcome.facts["suppressed_values"] == {"p": 0, "q": 2}
    assert outcome.facts["records_with_suppression"] == 2
    assert list(outcome.wildcards) == ["q"]
    assert brute_force_sizes(out, ["p", "q"]).tolist() == [4, 6, 6, 4, 4, 4]


def brute_force_people(frame: pd.DataFrame, keys: list[str], persons: np.ndarray) -> np.ndarray:
    """For each record, the distinct people among the records agreeing with it wherever both
    have a value."""
    values = frame[keys].astype(object).to_numpy()
    present = ~pd.isna(frame[keys]).to_numpy()
    sizes = np.empty(len(frame), dtype=int)
    for i in range(len(frame)):
        differ = present & present[i] & (values != values[i])
        sizes[i] = len(set(persons[~differ.any(axis=1)].tolist()))
    return sizes


def test_people_are_counted_once_however_many_records_they_have():
    # three records of person 0 and one each of people 1 and 2: (a, x) holds 3 records of 2
    # people, so at k = 3 it needs the (a, y) record of person 2 to join it
    frame = pd.DataFrame({"p": ["a", "a", "a", "a", "a"], "q": ["x", "x", "x", "x", "y"]})
    persons = np.array([0, 0, 0, 1, 2])
    by_records = LocalSuppression(k=3).apply(frame, ["p", "q"])
    assert by_records.facts["total_suppressed"] == 1  # (a, y) alone is below 3 records
    outcome = LocalSuppression(k=3).apply(frame, ["p", "q"], persons=persons)
    out = released(frame, ["p", "q"], LocalSuppression(k=3))
    assert outcome.facts["suppressed_values"] == {"p": 0, "q": 1}
    assert brute_force_people(out, ["p", "q"], persons).min() >= 3
    with pytest.raises(RecipeError, match="k = 4 is more than the 3 people"):
        LocalSuppression(k=4).apply(frame, ["p", "q"], persons=persons)
    with pytest.raises(RecipeError, match="one whole number per record"):
        LocalSuppression(k=2).apply(frame, ["p", "q"], persons=np.zeros(3, dtype=int))
    # a negative code (a missing id, as pd.factorize gives it) is a person of its own
    alone = RecordSuppression(k=2, limit=1.0).apply(
        frame[["p"]], ["p"], persons=np.array([0, 0, -1, -1, 0])
    )
    assert alone.keep is None or alone.keep.all()


_VALUE = st.one_of(st.none(), st.sampled_from("abc"))
_ROWS = st.lists(
    st.tuples(_VALUE, st.sampled_from(["x", "y", None]), st.integers(0, 2), st.integers(0, 5)),
    min_size=6,
    max_size=30,
)


@settings(max_examples=40, deadline=None)
@given(_ROWS, st.integers(2, 4))
def test_property_people_and_missing_values_reach_k_without_waste(rows, k):
    frame = pd.DataFrame(rows, columns=["p", "q", "r", "person"])
    keys = ["p", "q", "r"]
    persons = frame["person"].to_numpy()
    if k > len(set(persons.tolist())):
        return
    step = LocalSuppression(k=k)
    outcome = step.apply(frame, keys, persons=persons)
    out = frame[keys].copy()
    for column, values in outcome.values.items():
        out[column] = values
    assert brute_force_people(out, keys, persons).min() >= k
    was = frame[keys].isna().to_numpy()
    now = out.isna().to_numpy()
    assert (now | ~was).all()  # a missing value stays missing
    assert outcome.facts["total_suppressed"] == int((now & ~was).sum())
    for i, j in zip(*np.nonzero(now & ~was), strict=True):
        restored = out.copy()
        restored.iloc[i, j] = frame[keys].iloc[i, j]
        assert brute_force_people(restored, keys, persons).min() < k


@settings(max_examples=40, deadline=None)
@given(_ROWS, st.integers(2, 4))
def test_property_record_suppression_counts_people(rows, k):
    frame = pd.DataFrame(rows, columns=["p", "q", "r", "person"])
    keys = ["p", "q", "r"]
    persons = frame["person"].to_numpy()
    if k > len(set(persons.tolist())):
        return
    step = RecordSuppression(k=k, limit=1.0)
    try:
        keep = step.apply(frame, keys, persons=persons).keep
    except RecipeError as error:
        assert "every record is in a class smaller" in str(error)
        keep = np.zeros(len(frame), bool)
    keep = np.ones(len(frame), bool) if keep is None else keep
    kept = frame[keep].reset_index(drop=True)
    if len(kept):
        assert brute_force_people(kept, keys, kept["person"].to_numpy()).min() >= k
    # what it removes: the records below k in people, again until none is (brute force)
    expected = np.ones(len(frame), bool)
    while True:
        rows_left = np.flatnonzero(expected)
        if not len(rows_left):
            break
        sizes = brute_force_people(frame.iloc[rows_left], keys, persons[rows_left])
        if (sizes >= k).all():
            break
        expected[rows_left[sizes < k]] = False
    assert keep.tolist() == expected.tolist()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("abc"), st.sampled_from("xyz"), st.integers(0, 3)),
        min_size=6,
        max_size=40,
    ),
    st.integers(2, 5),
)
# identical records once suppressed alike although one of them could keep its value
@example(rows=[("a", "y", 3)] * 2 + [("b", "x", 3)] * 2 + [("b", "y", 1)] * 2, k=3)
def test_property_every_record_reaches_k_and_no_suppression_is_wasted(rows, k):
    frame = pd.DataFrame(rows, columns=["p", "q", "r"])
    keys = ["p", "q", "r"]
    if k > len(frame):
        return
    out = released(frame, keys, LocalSuppression(k=k))
    sizes = brute_force_sizes(out, keys)
    assert sizes.min() >= k
    assert out.notna().to_numpy()[frame[keys].notna().to_numpy()].sum() >= 0
    # no single suppressed value can be given back without breaking k
    for i, j in zip(*np.nonzero(out.isna().to_numpy()), strict=True):
        restored = out.copy()
        restored.iloc[i, j] = frame[keys].iloc[i, j]
        assert brute_force_sizes(restored, keys).min() < k


def test_workspace_counts_suppressed_values_as_matching_any_value():
    frame = pd.DataFrame(
        {"p": ["a", "a", "a", "b", "b", "b", "c"], "q": ["x", "y", "y", "z", "z", "z", "z"]}
    )
    roles = Roles(quasi_identifiers=("p", "q"))
    recipe = Recipe(roles, data_steps=(LocalSuppression(k=3),))
    workspace = Workspace(frame)
    risk = workspace.risk(recipe)
    masked = workspace.masked_frame(recipe)
    assert risk.k >= 3
    assert list(risk.class_size) == list(brute_force_sizes(masked, ["p", "q"]))
    # not a partition: the average is the mean of 1/f over records
    assert risk.average_risk == pytest.approx(np.mean(1 / risk.class_size))
    assert workspace.release_stage(recipe).wildcards  # the suppressed cells are known


def test_record_suppression_removes_small_classes_within_the_limit():
    frame = pd.DataFrame({"p": ["a"] * 6 + ["b"] * 3 + ["c"], "v": range(10)})
    roles = Roles(quasi_identifiers=("p",))
    recipe = Recipe(roles, data_steps=(RecordSuppression(k=3, limit=0.1),))
    workspace = Workspace(frame)
    assert workspace.risk(recipe).k == 3
    assert workspace.masked_frame(recipe)["v"].tolist() == list(range(9))
    stage = workspace.release_stage(recipe)
    assert stage.outcomes[0][1]["records_removed"] == 1
    with pytest.raises(RecipeError, match=r"cannot reach k = 4 within the limit: 4 records \(40"):
        workspace.risk(recipe.with_data_steps([RecordSuppression(k=4, limit=0.1)]))


def test_record_suppression_after_local_suppression_repeats_until_k():
    # (b, NA) matches (b, y) and (b, z); removing (c, z) changes nothing else
    frame = pd.DataFrame({"p": ["a"] * 3 + ["b", "b", "c"], "q": ["x"] * 3 + ["y", "z", "z"]})
    roles = Roles(quasi_identifiers=("p", "q"))
    recipe = Recipe(roles, data_steps=(LocalSuppression(k=2), RecordSuppression(k=3, limit=0.5)))
    workspace = Workspace(frame)
    risk = workspace.risk(recipe)
    assert risk.k >= 3
    released_frame = workspace.masked_frame(recipe)
    assert brute_force_sizes(released_frame, ["p", "q"]).min() >= 3


def test_subsample_risk_is_the_open_data_risk_at_its_fraction():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"p": rng.choice(list("abcdefgh"), 400), "q": rng.integers(0, 4, 400)})
    roles = Roles(quasi_identifiers=("p", "q"))
    recipe = Recipe(roles, data_steps=(Subsample(fraction=0.25, seed=4),))
    workspace = Workspace(frame)
    release = workspace.release_risk(recipe)
    assert release.sampling_fraction == pytest.approx(0.25)
    assert release.n_records == 100 == workspace.risk(recipe).n_records
    direct = workspace.sample_risk(recipe, 0.25)
    assert release.bf_max == direct.bf_max and release.bf_mean == direct.bf_mean
    assert workspace.release_risk(Recipe(roles)) is None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(_VALUE, st.sampled_from(["x", "y", "z", None]), st.integers(0, 3), _VALUE),
        min_size=6,
        max_size=60,
    ),
    st.integers(2, 5),
    st.booleans(),
)
@example(
    rows=[("a", "y", 3, "a")] * 2 + [("b", "x", 3, "a")] * 2 + [("b", "y", 1, "a")] * 2,
    k=3,
    by_importance=False,
)
def test_property_the_indexed_search_makes_the_quadratic_searchs_choices(rows, k, by_importance):
    """The group-count index gives exactly the suppressions of the search that compared each
    record at risk with every combination (``suppression_reference``)."""
    frame = pd.DataFrame(rows, columns=["p", "q", "r", "s"])
    columns = ["p", "q", "r", "s"]
    if k > len(frame):
        return
    keys = DistinctKeys.of(frame, columns, {})
    order = suppression_order(frame, columns)
    ours = suppression_pattern(keys, k, order, by_importance)
    theirs = reference_pattern(keys, k, order, by_importance)
    assert (ours == theirs).all()
    assert (suppressed_cells(keys, ours, k) == reference_cells(keys, theirs, k)).all()


@settings(max_examples=60, deadline=None)
@given(_ROWS, st.integers(2, 4), st.booleans())
def test_property_the_indexed_search_in_people_makes_the_quadratic_searchs_choices(
    rows, k, by_importance
):
    frame = pd.DataFrame(rows, columns=["p", "q", "r", "person"])
    columns = ["p", "q", "r"]
    persons = frame["person"].to_numpy()
    if k > len(set(persons.tolist())):
        return
    keys = DistinctKeys.of(frame, columns, {})
    order = suppression_order(frame, columns)
    ours = suppression_pattern(keys, k, order, by_importance, persons=persons)
    theirs = reference_people_pattern(keys, k, order, by_importance, persons)
    assert (ours == theirs).all()
    mine = suppressed_cells(keys, ours, k, persons)
    assert (mine == reference_people_cells(keys, theirs, k, persons)).all()


def test_a_search_too_large_asks_to_generalise_first(monkeypatch):
    from dataclasses import replace

    from deid_core import bounds
    from deid_core.errors import LimitError

    monkeypatch.setattr(bounds, "SUPPRESSION_WORK", replace(bounds.SUPPRESSION_WORK, limit=10))
    frame = pd.DataFrame({"p": list("abcdef"), "q": [1, 2, 3, 4, 5, 6]})
    # 6 records, all below k = 2: 6 x 2 = 12 units of work.
    with pytest.raises(
        LimitError,
        match=r"k = 2 of 6 records in classes smaller than k, among 6 distinct combinations of 2 "
        r"quasi-identifiers, needs \(records below k times k\) 12 search units; at most 10 "
        r".*bound 'suppression_work'.*Generalise",
    ):
        LocalSuppression(k=2).apply(frame, ["p", "q"])


def test_the_search_work_is_the_records_below_k_times_k():
    from deid_core.masking.suppression import search_work

    weight = np.array([1, 3, 2, 10])
    # violating combinations 0, 1, 2 hold 1 + 3 + 2 records; k = 5
    assert search_work(weight, np.array([0, 1, 2]), 5) == 6 * 5
    assert search_work(weight, np.array([], dtype=int), 5) == 0


def test_the_demo_with_every_quasi_identifier_at_a_huge_k_is_refused_before_the_search():
    """The issue's link: local suppression of the cohort's five quasi-identifiers at k = 10,000
    took 232 s of a core (102 s on the command line); refused now before any search."""
    from deid_core.datasets import DEMO_DATASETS, load_demo
    from deid_core.errors import LimitError

    frame = load_demo("cohort")
    qis = list(DEMO_DATASETS["cohort"].quasi_identifiers)
    with pytest.raises(LimitError, match=r"bound 'suppression_work'"):
        LocalSuppression(k=10_000).apply(frame, qis)


def _stopping_after(calls: int):
    """A cancellation check that lets ``calls`` checks pass, then raises Cancelled."""
    from deid_core.errors import Cancelled

    seen = []

    def check() -> None:
        seen.append(1)
        if len(seen) > calls:
            raise Cancelled("no longer wanted")

    return check, seen


def test_local_suppression_stops_from_inside_its_search_when_cancelled():
    """Within the bounds (so that no bound stands in for the cancellation), the search checks
    between the records it works on and stops at the first check that says so."""
    from deid_core import bounds
    from deid_core.cancellation import cancellable
    from deid_core.errors import Cancelled
    from deid_core.masking.suppression import DistinctKeys, search_work

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"p": rng.integers(0, 40, 400), "q": rng.integers(0, 30, 400)})
    keys = DistinctKeys.of(frame, ["p", "q"], {})
    violators = np.flatnonzero(keys.compatible_counts() < 5)
    assert len(violators) > 50
    assert search_work(keys.weight, violators, 5) < bounds.SUPPRESSION_WORK.limit
    check, seen = _stopping_after(10)
    with cancellable(check), pytest.raises(Cancelled):
        LocalSuppression(k=5).apply(frame, ["p", "q"])
    assert len(seen) == 11  # stopped at the eleventh check, inside the search
    result = LocalSuppression(k=5).apply(frame, ["p", "q"])  # outside the block: no check
    assert result is not None


def test_the_check_is_set_per_block_and_restored_after_it():
    from deid_core.cancellation import cancellable, check_cancelled
    from deid_core.errors import Cancelled

    check_cancelled()  # no block: nothing happens
    outer, seen_outer = _stopping_after(1)
    with cancellable(outer):
        check_cancelled()
        inner, seen_inner = _stopping_after(0)
        with cancellable(inner), pytest.raises(Cancelled):
            check_cancelled()
        with pytest.raises(Cancelled):
            check_cancelled()  # the outer check again: its second call stops
    check_cancelled()
    assert (len(seen_outer), len(seen_inner)) == (2, 1)


# ---------------------------------------------------------------------------- columns kept
def test_kept_columns_worked_example_and_messages():
    # (a, 1) x 3, (a, 2), (b, 2) x 2 at k = 3 keeping q: (a, 2) joins (b, 2) by giving up p
    # (3 records); with p kept instead, (a, 2) joins the (a, 1) records by giving up q
    frame = pd.DataFrame({"p": ["a"] * 4 + ["b"] * 2, "q": [1, 1, 1, 2, 2, 2]})
    out = released(frame, ["p", "q"], LocalSuppression(k=3, keep=("q",)))
    assert out["p"].isna().tolist() == [False, False, False, True, False, False]
    assert out["q"].notna().all()
    out = released(frame, ["p", "q"], LocalSuppression(k=3, keep=("p",)))
    assert out["q"].isna().tolist() == [False, False, False, True, False, False]
    # keeping p, the (b, 2) pair cannot reach 3 records by giving up q (only 2 records have
    # b), so it is left as it is, and counted
    outcome = LocalSuppression(k=3, keep=("p",)).apply(frame, ["p", "q"])
    assert outcome.facts["records_below_k"] == 2 and outcome.facts["kept"] == ["p"]
    assert "2 records cannot reach k = 3" in LocalSuppression(k=3, keep=("p",)).summary(
        outcome.facts
    )
    with pytest.raises(RecipeError, match="'keep' names 'z', which is not a quasi-identifier"):
        LocalSuppression(k=2, keep=("z",)).apply(frame, ["p", "q"])
    with pytest.raises(RecipeError, match="every quasi-identifier is kept"):
        LocalSuppression(k=2, keep=("p", "q")).apply(frame, ["p", "q"])
    with pytest.raises(RecipeError, match="both never suppressed"):
        LocalSuppression(k=2, keep=("p",), importance=("p",))
    with pytest.raises(RecipeError, match="keep"):
        LocalSuppression(k=2, keep=("",))
    assert LocalSuppression(k=2, keep=("p",)).writes(("p", "q")) == ("q",)


def _kept_bound(frame: pd.DataFrame, kept: list[str], persons: np.ndarray) -> np.ndarray:
    """Brute force: for each record, the distinct people agreeing with it on the kept columns
    (wherever both have a value): the most its class can reach when only the others are
    blanked."""
    return brute_force_people(frame, kept, persons)


@settings(max_examples=60, deadline=None)
@given(_ROWS, st.integers(2, 4), st.sampled_from([("p",), ("q",), ("r",), ("p", "r")]))
@example(rows=[("a", "x", 0, 0)] * 3 + [("b", "x", 1, 1), ("b", "y", 2, 2)] * 2, k=3, kept=("p",))
# Found by this property: person 2's second row got its r back only if the record (y, 0),
# which cannot reach k, kept as many people; it does, through person 2's first row.
@example(
    rows=[
        *((None, "x", 0, 0), (None, "x", 0, 3), (None, "x", 1, 0), (None, "x", 1, 1)),
        *((None, "y", 0, 0), (None, None, 0, 2), (None, None, 1, 2)),
    ],
    k=4,
    kept=("q",),
)
def test_property_kept_columns_are_never_blanked_and_the_rest_reach_k(rows, k, kept):
    frame = pd.DataFrame(rows, columns=["p", "q", "r", "person"])
    keys = ["p", "q", "r"]
    persons = frame["person"].to_numpy()
    if k > len(set(persons.tolist())):
        return
    step = LocalSuppression(k=k, keep=kept)
    outcome = step.apply(frame, keys, persons=persons)
    out = frame[keys].copy()
    for column, values in outcome.values.items():
        out[column] = values
    kept = list(kept)
    pd.testing.assert_frame_equal(out[kept], frame[kept])  # never blanked
    sizes = brute_force_people(out, keys, persons)  # independent count on the output
    bound = _kept_bound(frame, kept, persons)
    fixable = bound >= k
    assert (sizes[fixable] >= k).all()  # every record that can reach k does
    assert (sizes[~fixable] < k).all()  # the others stay below, and are counted
    assert outcome.facts["records_below_k"] == int((sizes < k).sum())
    unchanged = out[~fixable].isna().to_numpy() == frame[keys][~fixable].isna().to_numpy()
    assert unchanged.all()  # a record that cannot be fixed loses nothing
    # no suppressed value can be given back without lowering some record's class below k
    was = frame[keys].isna().to_numpy()
    for i, j in zip(*np.nonzero(out.isna().to_numpy() & ~was), strict=True):
        restored = out.copy()
        restored.iloc[i, j] = frame[keys].iloc[i, j]
        after = brute_force_people(restored, keys, persons)
        assert ((after < k) & (after < sizes)).any()


def test_kept_columns_round_trip_through_json_and_the_workspace_counts_the_rest():
    from deid_core.masking import data_step_from_dict

    step = LocalSuppression(k=3, keep=("q",))
    assert step.to_dict()["keep"] == ["q"]
    assert data_step_from_dict(json.loads(json.dumps(step.to_dict()))) == step
    recipe = Recipe(
        Roles(quasi_identifiers=("p", "q")), data_steps=(LocalSuppression(3, keep=("p",)),)
    )
    assert Recipe.from_json(recipe.to_json()) == recipe
    frame = pd.DataFrame({"p": ["a"] * 4 + ["b"] * 2, "q": [1, 1, 1, 2, 2, 2]})
    # keeping p: the (b, 2) pair stays below k = 3, and the risk says so (1/2, not 1/3)
    risk = Workspace(frame).risk(recipe)
    assert risk.max_risk == pytest.approx(1 / 2) and risk.k == 2
