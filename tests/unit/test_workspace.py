"""The workspace's shortcuts and its cache budget.

- Same-masking linkage against the original data is the average risk (Cologne's score with
  i = f): the workspace takes it from the class sizes instead of re-masking the source and
  matching; a property test checks it against the full matching on random data and recipes,
  and that the full matching is still used where the identity does not hold.
- The workspace's cache stays within its budget (the cache itself: ``test_cache.py``).
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_core import workspace as workspace_module
from deid_core.cache import MIN_CACHE_BYTES, default_cache_bytes
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
from deid_core.workspace import Workspace

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


# ---------------------------------------------------------------------------- its cache
def test_a_workspace_caches_within_its_budget_and_starts_empty():
    frame = pd.DataFrame({"x": np.arange(10_000) % 97, "y": np.arange(10_000) % 13})
    workspace = Workspace(frame, cache_bytes=1_000_000)
    for width in range(1, 40):
        recipe = Recipe(Roles(quasi_identifiers=("x", "y")), (IntervalGroup("x", width=width),))
        workspace.risk(recipe)
        assert workspace.cache.nbytes <= 1_000_000
    assert len(Workspace(frame).cache) == 0
    assert default_cache_bytes(frame) == MIN_CACHE_BYTES
