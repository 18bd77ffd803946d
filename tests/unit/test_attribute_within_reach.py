"""Attribute disclosure when a quasi-identifier is perturbed: each person's class is the
released records within the perturbation's reach of their true values. Checked against a
brute-force count over every (person, released record) pair, for a date shift (dates compared
as days, as the linkage risk compares them) and for suppressed cells read as wildcards."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.masking import DateShift, UniformNoise
from deid_core.recipe import Recipe, Roles
from deid_core.risk.judged import within_reach_counter
from deid_core.workspace import Workspace


def _visits(seed: int, n_people: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_people):
        start = dt.date(2018, 1, 1) + dt.timedelta(days=int(rng.integers(0, 200)))
        for _ in range(int(rng.integers(1, 4))):
            start += dt.timedelta(days=int(rng.integers(0, 60)))
            rows.append(
                {
                    "pid": f"P{p}",
                    "admit": start.isoformat(),
                    "sex": "F" if rng.random() < 0.5 else "M",
                    "outcome": int(rng.random() < 0.3),
                }
            )
    return pd.DataFrame(rows)


def _days(values: pd.Series) -> np.ndarray:
    return np.array([pd.Timestamp(v).date().toordinal() for v in values])


@settings(max_examples=15)
@given(seed=st.integers(0, 10_000), max_days=st.integers(1, 40))
def test_a_date_shift_counts_the_records_within_its_reach_in_days(seed, max_days):
    frame = _visits(seed)
    before = frame.copy()
    roles = Roles(quasi_identifiers=("admit", "sex"), record_id="pid")
    recipe = Recipe(roles, data_steps=(DateShift(columns=("admit",), max_days=max_days, seed=3),))
    released = recipe.apply(frame)
    count = within_reach_counter(recipe, frame, released)(np.ones(len(frame), dtype=bool))
    true_days, shown_days = _days(frame["admit"]), _days(released["admit"])
    for i in range(len(frame)):
        near = (np.abs(shown_days - true_days[i]) <= max_days) & (
            released["sex"].to_numpy() == frame["sex"].iloc[i]
        )
        assert count[i] == near.sum()
    assert (count >= 1).all()  # a person's own record is always within the shift's reach
    pd.testing.assert_frame_equal(frame, before)


def test_the_workspace_attribute_disclosure_under_a_date_shift_sees_each_persons_records():
    """Before the dates were compared as days, no record was within reach of anyone: every
    class was empty and the l-diversity read 0."""
    frame = _visits(5, n_people=80)
    roles = Roles(quasi_identifiers=("admit", "sex"), record_id="pid")
    recipe = Recipe(roles, data_steps=(DateShift(columns=("admit",), max_days=10, seed=1),))
    result = Workspace(frame).attribute_disclosure(recipe, "outcome")
    assert result.covered.all() and result.l_distinct >= 1


@settings(max_examples=20)
@given(seed=st.integers(0, 10_000), half_width=st.floats(0.5, 5.0))
def test_suppressed_cells_match_any_value_from_the_persons_side(seed, half_width):
    rng = np.random.default_rng(seed)
    n = 40
    frame = pd.DataFrame(
        {
            "x": rng.integers(0, 30, n).astype(float),
            "g": rng.choice(["a", "b", "c"], n),
            "y": rng.integers(0, 2, n),
        }
    )
    roles = Roles(quasi_identifiers=("x", "g"))
    recipe = Recipe(roles, steps=(UniformNoise("x", half_width=half_width, seed=2),))
    released = recipe.apply(frame)
    blank = rng.random(n) < 0.3
    released.loc[blank, "g"] = np.nan  # as local suppression leaves them in the file
    selected = rng.random(n) < 0.7
    count = within_reach_counter(recipe, frame, released, blanks_match_any=True)(selected)
    shown_x, shown_g = released["x"].to_numpy(), released["g"].to_numpy()
    for i in range(n):
        near = (
            selected
            & (np.abs(shown_x - frame["x"].iloc[i]) <= half_width)
            & (blank | (shown_g == frame["g"].iloc[i]))
        )
        assert count[i] == near.sum()
    strict = within_reach_counter(recipe, frame, released)(selected)
    assert (strict <= count).all()  # without the rule a blank matches no true value
