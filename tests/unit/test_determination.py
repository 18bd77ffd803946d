"""Whether an unmasked column gives away another (deid_core.risk.determination), against
independent computations: lambda from a pandas cross-tabulation, eta^2 from a linear fit on
group indicators (numpy least squares)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.errors import DataError
from deid_core.risk.determination import (
    MIN_GROUP,
    column_exposure,
    determination,
)


def lambda_by_crosstab(x: pd.Series, y: pd.Series) -> float:
    table = pd.crosstab(x, y)
    n = table.to_numpy().sum()
    accuracy = table.max(axis=1).sum() / n
    baseline = table.sum(axis=0).max() / n
    return (accuracy - baseline) / (1 - baseline)


def eta_squared_by_least_squares(groups: np.ndarray, y: np.ndarray) -> float:
    design = (groups[:, None] == np.unique(groups)[None, :]).astype(float)
    fitted = design @ np.linalg.lstsq(design, y, rcond=None)[0]
    return 1 - ((y - fitted) ** 2).sum() / ((y - y.mean()) ** 2).sum()


def test_a_threshold_column_determines_its_binary_outcome():
    rng = np.random.default_rng(1)
    bwt = rng.normal(3000, 700, 400).round()
    frame = pd.DataFrame({"bwt": bwt, "low": (bwt < 2500).astype(int)})
    result = determination(frame, "bwt", "low")
    assert result.level == "determines"
    assert result.grouping == "intervals"
    assert result.accuracy == 1.0 and result.strength == pytest.approx(1.0)
    assert result.baseline == pytest.approx(max(frame["low"].mean(), 1 - frame["low"].mean()))


def test_lambda_of_a_categorical_column_equals_the_crosstab():
    rng = np.random.default_rng(2)
    region = rng.choice(list("ABCDE"), 3000)
    # Mostly determined by region, with some noise.
    disease = np.where(np.isin(region, ["A", "B"]), "yes", "no")
    flip = rng.random(3000) < 0.02
    disease = np.where(flip, np.where(disease == "yes", "no", "yes"), disease)
    frame = pd.DataFrame({"region": region, "disease": disease})
    result = determination(frame, "region", "disease")
    assert result.grouping == "values" and result.groups == 5
    assert result.strength == pytest.approx(lambda_by_crosstab(frame["region"], frame["disease"]))
    assert result.level == "nearly determines"


def test_eta_squared_equals_a_least_squares_fit_on_the_groups():
    rng = np.random.default_rng(3)
    stage = rng.integers(1, 5, 800)
    cost = 1000 * stage + rng.normal(0, 300, 800)
    frame = pd.DataFrame({"stage": stage, "cost": cost})
    result = determination(frame, "stage", "cost")
    assert result.target_kind == "numeric"
    expected = eta_squared_by_least_squares(stage, cost)
    assert result.strength == pytest.approx(expected, rel=1e-9)
    assert result.level == "nearly determines"
    assert "explains" in str(result)


def test_a_near_unique_column_does_not_predict_by_naming_each_record():
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        {"code": [f"c{i}" for i in range(500)], "outcome": rng.integers(0, 2, 500)}
    )
    result = determination(frame, "code", "outcome")
    assert result.groups == 1  # every value is rarer than MIN_GROUP: one pooled group
    assert result.strength == 0.0 and result.level is None


def test_an_unrelated_column_gives_nothing_away():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"weight": rng.normal(70, 10, 2000), "low": rng.integers(0, 2, 2000)})
    result = determination(frame, "weight", "low")
    assert result.level is None and result.strength < 0.2


def test_missing_values_form_a_group_of_their_own():
    x = pd.Series([np.nan] * 50 + list(range(100)), dtype=float)
    y = pd.Series([1] * 50 + [0] * 100)
    result = determination(pd.DataFrame({"x": x, "y": y}), "x", "y")
    assert result.level == "determines"


def test_a_target_with_one_value_has_nothing_to_reveal():
    frame = pd.DataFrame({"x": range(50), "y": 1})
    assert determination(frame, "x", "y") is None


def test_bad_input_is_a_clear_message():
    frame = pd.DataFrame({"x": [1, 2], "y": [0, 1]})
    with pytest.raises(DataError, match="'z' is not in the data"):
        determination(frame, "x", "z")
    with pytest.raises(DataError, match="not with itself"):
        determination(frame, "x", "x")


def test_column_exposure_counts_values_no_other_record_holds():
    frame = pd.DataFrame({"x": [1, 1, 2, 3, np.nan, np.nan, 4]})
    exposure = column_exposure(frame, "x")
    assert (exposure.distinct, exposure.unique_records) == (5, 3)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(0, 3), min_size=2 * MIN_GROUP, max_size=80),
    st.lists(st.integers(0, 2), min_size=2 * MIN_GROUP, max_size=80),
    st.randoms(use_true_random=False),
)
def test_strength_is_in_0_1_and_does_not_depend_on_row_order(xs, ys, rnd):
    n = min(len(xs), len(ys))
    frame = pd.DataFrame({"x": xs[:n], "y": ys[:n]})
    result = determination(frame, "x", "y")
    if result is None:
        assert frame["y"].nunique() == 1
        return
    assert -1e-12 <= result.strength <= 1 + 1e-12
    order = list(range(n))
    rnd.shuffle(order)
    shuffled = determination(frame.iloc[order].reset_index(drop=True), "x", "y")
    assert shuffled.strength == pytest.approx(result.strength)


def test_a_rescaled_copy_determines_its_target_through_a_monotone_rule():
    rng = np.random.default_rng(6)
    grams = rng.normal(3000, 600, 300).round()
    frame = pd.DataFrame({"grams": grams, "kg": grams / 1000, "neg": -grams})
    for target in ("kg", "neg"):
        result = determination(frame, "grams", target)
        assert result.grouping == "monotone" and result.level == "determines"
        assert result.strength == pytest.approx(1.0)
    assert str(determination(frame, "grams", "kg")).startswith("a monotone function of 'grams'")
