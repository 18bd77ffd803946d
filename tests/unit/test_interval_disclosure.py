"""Interval disclosure (sdcMicro's dRisk): a worked example, the definition's edge cases, a
brute-force loop written from sdcMicro's published definition, and properties."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.errors import DataError
from deid_core.risk import DEFAULT_INTERVAL_K, interval_disclosure


def brute_force_drisk(original: pd.DataFrame, released: pd.DataFrame, k: float) -> float:
    """sdcMicro's dRiskWORK, record by record: sd of each released column (n - 1, missing
    values left out); a record is disclosed when no original value lies outside
    [released - k sd, released + k sd] (a comparison with a missing value is not outside)."""
    sds = {}
    for column in original.columns:
        values = [v for v in released[column] if not (v is None or math.isnan(v))]
        mean = sum(values) / len(values) if values else math.nan
        sds[column] = (
            math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
            if len(values) > 1
            else math.nan
        )
    disclosed = 0
    for i in range(len(original)):
        outside = 0
        for column in original.columns:
            x, m, sd = original[column].iloc[i], released[column].iloc[i], sds[column]
            if any(math.isnan(v) for v in (x, m, sd)):
                continue
            if x < m - k * sd or x > m + k * sd:
                outside += 1
        disclosed += outside == 0
    return disclosed / len(original)


def test_worked_example():
    # released sd of (10, 20, 30, 40) is 12.9099...; k = 0.1 gives a half-width of 1.29099
    original = pd.DataFrame({"x": [10.0, 21.0, 31.5, 40.0]})
    released = pd.DataFrame({"x": [10.0, 20.0, 30.0, 40.0]})
    result = interval_disclosure(original, released, ["x"], k=0.1)
    assert result.sd["x"] == pytest.approx(12.909944487358056)
    assert result.within.tolist() == [True, True, False, True]  # |1.0| in, |1.5| out
    assert result.share == 0.75
    assert result.disclosed == 3
    assert "dRisk" in str(result) and "0.7500" in str(result)


def test_every_column_must_lie_within_its_interval():
    original = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "b": [0.0, 10.0, 20.0, 35.0]})
    released = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "b": [0.0, 10.0, 20.0, 30.0]})
    result = interval_disclosure(original, released, ["a", "b"], k=0.05)
    # b's half-width is 0.05 x 12.9 = 0.65: the last record's b is 5 away
    assert result.within.tolist() == [True, True, True, False]


def test_boundary_is_inside_and_missing_values_do_not_count_as_outside():
    released = pd.DataFrame({"x": [0.0, 2.0, 4.0, np.nan]})
    sd = float(np.std([0.0, 2.0, 4.0], ddof=1))  # 2.0
    original = pd.DataFrame({"x": [0.0 + 0.5 * sd, np.nan, 4.0 + 0.6 * sd, 7.0]})
    result = interval_disclosure(original, released, ["x"], k=0.5)
    assert result.sd["x"] == pytest.approx(sd)
    assert result.within.tolist() == [True, True, False, True]


def test_default_k_is_sdcmicros():
    assert DEFAULT_INTERVAL_K == 0.05
    frame = pd.DataFrame({"x": np.arange(10.0)})
    assert interval_disclosure(frame, frame, ["x"]).k == 0.05


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda o, r: interval_disclosure(o, r, []), "at least one numeric column"),
        (lambda o, r: interval_disclosure(o, r, ["x"], k=0), "k must be a positive"),
        (lambda o, r: interval_disclosure(o, r, ["x"], k=float("nan")), "k must be a positive"),
        (lambda o, r: interval_disclosure(o, r, ["y"]), "no column(s) 'y'"),
        (lambda o, r: interval_disclosure(o, r.head(2), ["x"]), "same records"),
        (lambda o, r: interval_disclosure(o, r, ["s"]), "must be numeric"),
    ],
)
def test_bad_input_is_a_clear_message(call, message):
    original = pd.DataFrame({"x": [1.0, 2.0, 3.0], "s": ["a", "b", "c"]})
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(original, original.copy())


def test_agrees_with_the_brute_force_definition():
    rng = np.random.default_rng(20260415)
    for _ in range(20):
        n = int(rng.integers(3, 60))
        original = pd.DataFrame(rng.normal(0, 5, (n, 3)), columns=["a", "b", "c"])
        released = original + rng.normal(0, rng.uniform(0.01, 3), (n, 3))
        original = original.mask(rng.random((n, 3)) < 0.1)
        released = released.mask(rng.random((n, 3)) < 0.1)
        for k in (0.01, 0.05, 0.3):
            got = interval_disclosure(original, released, ["a", "b", "c"], k=k).share
            assert got == pytest.approx(brute_force_drisk(original, released, k), abs=1e-12)


finite = st.floats(-1e6, 1e6, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(finite, finite), min_size=2, max_size=30),
    st.floats(0.001, 2.0),
    st.randoms(use_true_random=False),
)
def test_bounds_row_order_and_monotone_in_k(pairs, k, random):
    original = pd.DataFrame({"x": [p[0] for p in pairs]})
    released = pd.DataFrame({"x": [p[1] for p in pairs]})
    share = interval_disclosure(original, released, ["x"], k=k).share
    assert 0.0 <= share <= 1.0
    order = list(range(len(pairs)))
    random.shuffle(order)
    shuffled = interval_disclosure(
        original.iloc[order].reset_index(drop=True),
        released.iloc[order].reset_index(drop=True),
        ["x"],
        k=k,
    ).share
    assert shuffled == pytest.approx(share)
    assert interval_disclosure(original, released, ["x"], k=2 * k).share >= share
