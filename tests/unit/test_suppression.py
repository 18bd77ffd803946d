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

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sdcmicro_data import sdcmicro_data
from sdcmicro_kanon import kanon_suppressions

from deid_core.errors import RecipeError
from deid_core.masking import LocalSuppression, RecordSuppression, Subsample
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


def test_original_missing_values_are_a_category_so_either_rule_reaches_k():
    frame = pd.DataFrame({"p": ["a", None, None, "a", "b", "b"], "q": [1, 1, 1, 1, 2, 2]})
    out = released(frame, ["p", "q"], LocalSuppression(k=2))
    # the missing values count as a value of their own: (None, 1) is already a class of 2
    assert out["p"].isna().sum() == 2
    recipe = Recipe(Roles(quasi_identifiers=("p", "q")), data_steps=(LocalSuppression(k=3),))
    workspace = Workspace(frame)
    for rule in ("category", "wildcard"):
        assert workspace.risk(recipe, rule).k >= 3


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


def test_a_search_too_large_asks_to_generalise_first(monkeypatch):
    from dataclasses import replace

    from deid_core import bounds
    from deid_core.errors import LimitError

    monkeypatch.setattr(bounds, "SUPPRESSION_WORK", replace(bounds.SUPPRESSION_WORK, limit=10))
    frame = pd.DataFrame({"p": list("abcdef"), "q": [1, 2, 3, 4, 5, 6]})
    # 6 combinations of one record, all below k: 2^2 x 6 x 6 = 144 steps, no record to split.
    with pytest.raises(
        LimitError,
        match=r"k = 2 of 6 records in classes smaller than k, among 6 distinct combinations of 2 "
        r"quasi-identifiers, needs 144 search steps; at most 10 .*bound 'suppression_work'.*"
        r"Generalise",
    ):
        LocalSuppression(k=2).apply(frame, ["p", "q"])


def test_the_search_work_counts_both_passes():
    from deid_core.masking.suppression import search_work

    weight = np.array([1, 3, 2, 10])
    # violating combinations 0, 1, 2 (D = 4, m = 3); 5 records in the shared ones (3 + 2)
    assert search_work(weight, np.array([0, 1, 2]), 3) == 9 * (3 * 4 + 5 * (4 + 5))
    assert search_work(weight, np.array([], dtype=int), 3) == 0


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
    assert search_work(keys.weight, violators, 2) < bounds.SUPPRESSION_WORK.limit
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
