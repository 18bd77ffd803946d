"""Zhou's expected share of correct matches."""

import numpy as np
import pandas as pd
import pytest

from deid_core.errors import DataError
from deid_core.masking import KernelSmooth
from deid_core.recipe import Recipe, Roles
from deid_core.risk import MatchShareResult, expected_correct_match_share


def _brute_force(true, released, columns):
    truth = true[columns].to_numpy(float)
    shown = released[columns].to_numpy(float)
    sd = truth.std(axis=0, ddof=1)
    sd[sd == 0] = 1.0
    n = len(truth)
    probabilities = np.zeros(n)
    for j in range(n):
        distance = np.array(
            [np.abs((truth[j] - shown[k]) / sd).sum() for k in range(n)], dtype=float
        )
        distance[np.isnan(distance)] = np.inf
        best = distance.min()
        if not np.isfinite(best):
            continue
        tied = distance <= best * (1 + 1e-12)
        if tied[j]:
            probabilities[j] = 1 / tied.sum()
    return probabilities


def test_hand_computed_example_with_ties():
    true = pd.DataFrame({"dose": [1.0, 2.0, 3.0, 4.0, 6.0]})
    released = pd.DataFrame({"dose": [1.5, 1.5, 3.0, 5.0, 5.0]})
    result = expected_correct_match_share(true, released, ["dose"])
    # person 1: 1.5 (records 1, 2) tie -> 1/2; person 2 likewise 1/2; person 3: own 3.0 -> 1;
    # person 4: 3.0 and 5.0 are both 1 away -> records 3, 4, 5 tie, own among them -> 1/3;
    # person 5: 5.0 (records 4, 5) -> 1/2.
    np.testing.assert_allclose(result.probabilities, [1 / 2, 1 / 2, 1, 1 / 3, 1 / 2])
    np.testing.assert_array_equal(result.ties, [2, 2, 1, 3, 2])
    assert result.share == pytest.approx((1 / 2 + 1 / 2 + 1 + 1 / 3 + 1 / 2) / 5)
    assert result.n == 5
    assert isinstance(result, MatchShareResult)
    text = str(result)
    assert "0.5667" in text
    assert "of 5 people" in text
    assert "dose" in text


def test_ties_up_to_rounding_are_shared():
    # 0.1 + 0.2 and 0.3 differ in the last bit; 0.7 - 0.4 and 0.1 + 0.2 are both "0.3" away.
    true = pd.DataFrame({"a": [0.4, 10.0, 20.0]})
    released = pd.DataFrame({"a": [0.4 + (0.1 + 0.2), 0.4 - 0.3, 20.0]})
    result = expected_correct_match_share(true, released, ["a"])
    assert result.ties[0] == 2
    assert result.probabilities[0] == 0.5


def test_identity_release_gives_share_one():
    rng = np.random.default_rng(0)
    true = pd.DataFrame(rng.normal(size=(500, 2)), columns=["x", "y"])
    result = expected_correct_match_share(true, true.copy(), ["x", "y"])
    assert result.share == 1.0
    np.testing.assert_array_equal(result.ties, 1)


def test_a_constant_release_gives_one_over_n():
    true = pd.DataFrame({"x": np.arange(40.0)})
    released = pd.DataFrame({"x": np.full(40, 7.5)})
    result = expected_correct_match_share(true, released, ["x"])
    assert result.share == pytest.approx(1 / 40)
    np.testing.assert_array_equal(result.ties, 40)


@pytest.mark.parametrize("seed", range(5))
def test_agrees_with_brute_force_on_random_data(seed):
    rng = np.random.default_rng(seed)
    n = 150
    true = pd.DataFrame(
        {"x": rng.integers(0, 6, n).astype(float), "y": rng.normal(size=n).round(1)}
    )
    released = pd.DataFrame(
        {"x": (true["x"] + rng.integers(-1, 2, n)).astype(float), "y": true["y"].round(0)}
    )
    released.loc[rng.choice(n, 5, replace=False), "y"] = np.nan
    for columns in (["x"], ["y"], ["x", "y"]):
        result = expected_correct_match_share(true, released, columns)
        expected = _brute_force(true, released, columns)
        np.testing.assert_allclose(result.probabilities, expected, rtol=1e-12)
        assert result.share == pytest.approx(expected.mean())


def test_smoothing_lowers_the_share():
    rng = np.random.default_rng(4)
    n = 300
    df = pd.DataFrame(
        {"x": rng.uniform(size=n), "y": rng.uniform(size=n), "dose": rng.gamma(2.0, size=n)}
    )
    shares = []
    for bandwidth in (0.0, 0.05, 0.5):
        recipe = Recipe(
            Roles(exposure="dose"), (KernelSmooth("dose", ("x", "y"), "gaussian", bandwidth),)
        )
        shares.append(expected_correct_match_share(df, recipe.apply(df), ["dose"]).share)
    assert shares[0] == 1.0
    assert shares[0] > shares[1] > shares[2]


def test_missing_released_values_are_never_matched():
    true = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    released = pd.DataFrame({"a": [1.0, np.nan, 3.0]})
    result = expected_correct_match_share(true, released, ["a"])
    np.testing.assert_array_equal(result.probabilities, [1.0, 0.0, 1.0])
    nothing = pd.DataFrame({"a": [np.nan] * 3})
    result = expected_correct_match_share(true, nothing, ["a"])
    assert result.share == 0.0
    np.testing.assert_array_equal(result.ties, 0)


@pytest.mark.parametrize(
    ("true", "released", "columns", "message"),
    [
        (pd.DataFrame({"a": [1.0, 2.0]}), pd.DataFrame({"a": [1.0]}), ["a"], "same rows"),
        (
            pd.DataFrame({"a": [1.0, 2.0]}),
            pd.DataFrame({"a": [1.0, 2.0]}, index=[1, 0]),
            ["a"],
            "different row labels",
        ),
        (pd.DataFrame({"a": [1.0]}), pd.DataFrame({"a": [1.0]}), [], "at least one"),
        (pd.DataFrame({"a": [1.0]}), pd.DataFrame({"b": [1.0]}), ["a"], "released data have no"),
        (pd.DataFrame({"a": ["x"]}), pd.DataFrame({"a": [1.0]}), ["a"], "must be numeric"),
        (
            pd.DataFrame({"a": [1.0, np.nan]}),
            pd.DataFrame({"a": [1.0, 2.0]}),
            ["a"],
            "missing entries",
        ),
        (
            pd.DataFrame({"a": []}, dtype=float),
            pd.DataFrame({"a": []}, dtype=float),
            ["a"],
            "no rows",
        ),
    ],
)
def test_bad_inputs_are_refused(true, released, columns, message):
    with pytest.raises(DataError, match=message):
        expected_correct_match_share(true, released, columns)


def test_inputs_are_not_modified():
    true = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [3.0, 1.0, 2.0]})
    released = pd.DataFrame({"a": [1.1, np.nan, 3.0], "b": [3.0, 1.0, 2.5]})
    copies = true.copy(deep=True), released.copy(deep=True)
    expected_correct_match_share(true, released, ["a", "b"])
    pd.testing.assert_frame_equal(true, copies[0])
    pd.testing.assert_frame_equal(released, copies[1])
