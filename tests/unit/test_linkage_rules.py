"""Linkage rules ``nearest`` and ``tolerance``: hand-computed cases, agreement with a brute-force
O(n*m) implementation, noise within the tolerance, and nearest against itself = average risk."""

import numpy as np
import pandas as pd
import pytest

from deid_core.errors import DataError
from deid_core.masking import UniformNoise
from deid_core.recipe import Recipe, Roles
from deid_core.risk import link_to_source, linkage_risk, risk_summary, truth_positions


def _link(released, source, qis, rule, tolerance=None):
    truth = truth_positions(released, source, "id")
    return link_to_source(released, source, qis, truth, rule, tolerance)


# --- nearest: by hand ----------------------------------------------------------------------


def test_nearest_by_hand_with_ties_and_categorical_strata():
    source = pd.DataFrame(
        {
            "id": [1, 2, 3, 4, 5, 6],
            "x": [0.0, 2.0, 4.0, 4.0, 10.0, 0.0],
            "g": ["A", "A", "A", "A", "A", "B"],
        }
    )
    released = pd.DataFrame(
        {
            "id": [1, 2, 3, 5, 6, 7],
            "x": [0.9, 1.0, 4.4, 6.9, 5.0, 0.0],
            "g": ["A", "A", "A", "A", "B", "C"],
        }
    )
    result = _link(released, source, ["x", "g"], "nearest")
    # 0.9 -> 0 only; 1.0 -> tie 0 and 2 (own: 2); 4.4 -> ids 3 and 4 at 4.0; 6.9 -> 4.0 (ids 3,
    # 4; distance 2.9 < 3.1 to its own 10); B: the only B record however far; C: no candidate.
    assert result.match_count.tolist() == [1, 2, 2, 2, 1, 0]
    assert result.correct.tolist() == [True, True, True, False, True, False]
    assert result.identifiability_score == pytest.approx((1 + 0.5 + 0.5 + 1) / 6)
    assert result.perceived_score == pytest.approx((1 + 0.5 + 0.5 + 0.5 + 1) / 6)
    assert result.match_probability().tolist() == pytest.approx([1, 0.5, 0.5, 0, 1, 0])
    assert result.match_probability().mean() == pytest.approx(result.identifiability_score)
    table = result.match_table()
    assert table["source matches"].tolist() == ["1", "2", "3", "4+", "0"]
    assert table["correct"].tolist() == [2, 2, 0, 0, 0]
    assert table["any"].tolist() == [2, 3, 0, 0, 1]


def test_nearest_ties_in_two_dimensions_and_standardization():
    # Source SDs: x 57.735..., y 0.57735...: one unit of y weighs as much as 100 units of x.
    source = pd.DataFrame(
        {"id": [1, 2, 3, 4], "x": [0.0, 100.0, 0.0, 100.0], "y": [0.0, 0.0, 1.0, 1.0]}
    )
    released = pd.DataFrame(
        {"id": [1, 3, 2, 4], "x": [20.0, 30.0, 60.0, 50.0], "y": [0.5, 0.1, 0.9, 0.5]}
    )
    result = _link(released, source, ["x", "y"], "nearest")
    # (20, .5): (0,0) and (0,1) tied.  (30, .1): (0,0) at .09+.01 in y-SD units.
    # (60, .9): (100,1) at .16+.01 beats (0,1) at .36+.01 and (100,0) at .16+.81.
    # (50, .5): all four tied at .25+.25.
    assert result.match_count.tolist() == [2, 1, 1, 4]
    assert result.correct.tolist() == [True, False, False, True]
    # Standardized distances do not depend on a column's units.
    scaled_source, scaled_released = source.copy(), released.copy()
    scaled_source["x"] *= 1e-3
    scaled_released["x"] *= 1e-3
    again = _link(scaled_released, scaled_source, ["x", "y"], "nearest")
    assert again.match_count.tolist() == result.match_count.tolist()
    assert again.correct.tolist() == result.correct.tolist()


def test_nearest_matches_missingness_exactly():
    nan = np.nan
    source = pd.DataFrame(
        {
            "id": [1, 2, 3, 4, 5],
            "x": [1.0, nan, 3.0, nan, nan],
            "y": [1.0, 5.0, 3.0, 7.0, nan],
        }
    )
    released = pd.DataFrame(
        {
            "id": [2, 1, 5, 3],
            "x": [nan, 1.2, nan, 2.0],
            "y": [6.0, nan, nan, 2.0],
        }
    )
    result = _link(released, source, ["x", "y"], "nearest")
    # (NaN, 6): only x-missing records 2 and 4, at y distance 1 each -> tie.
    # (1.2, NaN): no source record misses y alone -> no match.
    # (NaN, NaN): record 5 only.  (2, 2): records 1 and 3 tied.
    assert result.match_count.tolist() == [2, 0, 1, 2]
    assert result.correct.tolist() == [True, False, True, True]
    assert result.identifiability_score == pytest.approx((0.5 + 1 + 0.5) / 4)


def test_nearest_with_only_categorical_quasi_identifiers_is_exact_matching():
    source = pd.DataFrame({"id": [1, 2, 3, 4], "g": ["a", "a", "b", None]})
    released = pd.DataFrame({"id": [1, 3, 4, 2], "g": ["a", "b", None, "c"]})
    nearest = _link(released, source, ["g"], "nearest")
    exact = _link(released, source, ["g"], "exact")
    assert nearest.match_count.tolist() == exact.match_count.tolist() == [2, 1, 1, 0]
    assert nearest.correct.tolist() == exact.correct.tolist()


# --- tolerance: by hand --------------------------------------------------------------------


def test_tolerance_by_hand_boundary_included_and_strata():
    source = pd.DataFrame(
        {"id": [1, 2, 3, 4], "dose": [1.0, 1.05, 1.2, 2.0], "g": ["A", "A", "A", "B"]}
    )
    released = pd.DataFrame(
        {"id": [1, 2, 3, 4], "dose": [1.0, 1.1, 1.2, 2.05], "g": ["A", "A", "B", "B"]}
    )
    result = _link(released, source, ["dose", "g"], "tolerance", 0.1)
    # 1.0 -> 1.0, 1.05;  1.1 -> 1.0, 1.05, 1.2 (both boundaries included);
    # 1.2 in B -> nothing near;  2.05 in B -> 2.0.
    assert result.match_count.tolist() == [2, 3, 0, 1]
    assert result.correct.tolist() == [True, True, False, True]
    assert result.identifiability_score == pytest.approx((1 / 2 + 1 / 3 + 1) / 4)
    assert result.perceived_score == result.identifiability_score
    assert result.match_table()["any"].tolist() == [1, 1, 1, 0, 1]


def test_tolerance_per_column_and_numeric_columns_left_out_are_exact():
    source = pd.DataFrame(
        {"id": [1, 2, 3, 4], "dose": [1.0, 1.3, 1.0, 5.0], "age": [40, 42, 41, 40]}
    )
    released = pd.DataFrame({"id": [1, 2, 3], "dose": [1.1, 1.2, 1.0], "age": [40, 41, 41]})
    both = _link(released, source, ["dose", "age"], "tolerance", {"dose": 0.2, "age": 1})
    # (1.1, 40) -> 1 (1.0, 40), 3 (1.0, 41);  (1.2, 41) -> 1, 2, 3;  (1.0, 41) -> 1, 3.
    assert both.match_count.tolist() == [2, 3, 2]
    assert both.correct.tolist() == [True, True, True]
    dose_only = _link(released, source, ["dose", "age"], "tolerance", {"dose": 0.2})
    # age exact: (1.1, 40) -> 1;  (1.2, 41) -> 3 (not its own, age 42);  (1.0, 41) -> 3.
    assert dose_only.match_count.tolist() == [1, 1, 1]
    assert dose_only.correct.tolist() == [True, False, True]


def test_tolerance_matches_missingness_exactly():
    nan = np.nan
    source = pd.DataFrame({"id": [1, 2, 3], "x": [1.0, nan, nan], "y": [1.0, 1.0, nan]})
    released = pd.DataFrame({"id": [1, 2, 3], "x": [nan, nan, nan], "y": [1.0, 1.4, nan]})
    result = _link(released, source, ["x", "y"], "tolerance", 0.5)
    assert result.match_count.tolist() == [1, 1, 1]
    assert result.correct.tolist() == [False, True, True]


def test_tolerance_smaller_than_any_gap_is_exact_matching():
    rng = np.random.default_rng(5)
    source = pd.DataFrame(
        {"id": range(400), "a": rng.integers(0, 8, 400), "b": rng.integers(0, 5, 400)}
    )
    released = source.sample(frac=1, random_state=1)
    released.loc[released.index[:100], "a"] += 1
    tolerant = _link(released, source, ["a", "b"], "tolerance", 0.5)
    exact = _link(released, source, ["a", "b"], "exact")
    assert np.array_equal(tolerant.match_count, exact.match_count)
    assert np.array_equal(tolerant.correct, exact.correct)


# --- brute force ---------------------------------------------------------------------------


def _brute_force(released, source, numeric, categorical, truth, rule, tolerance=None):
    """O(n*m) reference: candidates share categories and missingness; then distances."""
    rx = released[numeric].to_numpy(dtype=float)
    sx = source[numeric].to_numpy(dtype=float)
    same = np.ones((len(released), len(source)), dtype=bool)
    for column in categorical:
        r = released[column].fillna("<NA>").to_numpy()
        s = source[column].fillna("<NA>").to_numpy()
        same &= r[:, None] == s[None, :]
    same &= (np.isnan(rx)[:, None, :] == np.isnan(sx)[None, :, :]).all(axis=2)
    difference = np.nan_to_num(rx[:, None, :] - sx[None, :, :], nan=0.0)
    if rule == "nearest":
        sd = np.nanstd(sx, axis=0, ddof=1)
        d2 = ((difference / sd) ** 2).sum(axis=2)
        d2 = np.where(same, d2, np.inf)
        best = d2.min(axis=1, keepdims=True)
        matches = same & (d2 <= best * (1 + 1e-9) + 1e-12)
    else:
        matches = same & (np.abs(difference) <= tolerance).all(axis=2)
    count = matches.sum(axis=1)
    correct = np.array([t >= 0 and matches[k, t] for k, t in enumerate(truth)])
    return count, correct


def _random_pair(seed, n=300, m=320, missing=0.05):
    rng = np.random.default_rng(seed)
    source = pd.DataFrame(
        {
            "a": rng.integers(0, 7, m).astype(float),
            "b": rng.integers(0, 5, m).astype(float),
            "c": rng.integers(0, 12, m).astype(float),
            "g": rng.choice(["p", "q", "r"], m),
        }
    )
    released = source.iloc[:n].copy().reset_index(drop=True)
    released[["a", "b", "c"]] += rng.integers(-2, 3, (n, 3))
    released.loc[rng.random(n) < 0.05, "g"] = "s"  # a stratum absent from the source
    for frame in (source, released):
        for column in ("a", "b", "c"):
            frame.loc[rng.random(len(frame)) < missing, column] = np.nan
    truth = np.arange(n)
    truth[rng.random(n) < 0.1] = -1  # released records whose own record is not in the source
    return released, source, truth


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    ("numeric", "categorical"),
    [(["a"], []), (["a"], ["g"]), (["a", "b"], ["g"]), (["a", "b", "c"], ["g"])],
)
def test_nearest_agrees_with_brute_force(seed, numeric, categorical):
    released, source, truth = _random_pair(seed)
    result = link_to_source(released, source, numeric + categorical, truth, "nearest")
    count, correct = _brute_force(released, source, numeric, categorical, truth, "nearest")
    assert (count > 1).any()  # ties do occur
    assert np.array_equal(result.match_count, count)
    assert np.array_equal(result.correct, correct)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("tolerance", [1.0, 2.0])
@pytest.mark.parametrize(
    ("numeric", "categorical"),
    [(["a"], []), (["a"], ["g"]), (["a", "b"], ["g"]), (["a", "b", "c"], ["g"])],
)
def test_tolerance_agrees_with_brute_force(seed, tolerance, numeric, categorical):
    released, source, truth = _random_pair(seed)
    result = link_to_source(released, source, numeric + categorical, truth, "tolerance", tolerance)
    count, correct = _brute_force(
        released, source, numeric, categorical, truth, "tolerance", tolerance
    )
    assert np.array_equal(result.match_count, count)
    assert np.array_equal(result.correct, correct)


def test_tolerance_per_column_agrees_with_brute_force():
    released, source, truth = _random_pair(7)
    tolerance = {"a": 1.0, "b": 2.0, "c": 0.5}
    result = link_to_source(released, source, ["a", "b", "c"], truth, "tolerance", tolerance)
    count, correct = _brute_force(
        released, source, ["a", "b", "c"], [], truth, "tolerance", np.array([1.0, 2.0, 0.5])
    )
    assert np.array_equal(result.match_count, count)
    assert np.array_equal(result.correct, correct)


# --- noise, closed data --------------------------------------------------------------------


@pytest.mark.parametrize("floor", [None, 0.0])
def test_uniform_noise_within_the_tolerance_always_keeps_the_true_record(floor):
    rng = np.random.default_rng(3)
    n = 2000
    source = pd.DataFrame(
        {
            "id": range(n),
            "dose": np.round(rng.exponential(0.6, n), 3),
            "age": rng.integers(20, 80, n).astype(float),
            "sex": rng.choice(["F", "M"], n),
        }
    )
    recipe = Recipe(
        Roles(quasi_identifiers=("dose", "age", "sex"), record_id="id"),
        (
            UniformNoise("dose", half_width=0.05, floor=floor, seed=1),
            UniformNoise("age", half_width=2.0, seed=2),
        ),
    )
    released = recipe.apply(source)
    result = linkage_risk(recipe, released, source, "tolerance", {"dose": 0.05, "age": 2.0})
    assert result.correct.all()
    assert (result.match_count >= 1).all()
    assert result.identifiability_score == pytest.approx(np.mean(1.0 / result.match_count))
    assert result.identifiability_score == pytest.approx(result.perceived_score)
    # Noise hides records: exact matching finds none; nearest finds some, not all.
    assert linkage_risk(recipe, released, source, "exact").identifiability_score == 0.0
    nearest = linkage_risk(recipe, released, source, "nearest")
    assert 0.0 < nearest.identifiability_score < 1.0


def test_nearest_against_itself_is_the_closed_data_average_risk():
    # Each record is at distance 0 from itself and from its exact duplicates only, so i is its
    # equivalence-class size f and the score is mean 1/f: exactly the average risk, for any data
    # (duplicates, categories and missing values included).
    rng = np.random.default_rng(11)
    n = 1500
    df = pd.DataFrame(
        {
            "id": range(n),
            "a": rng.integers(0, 6, n).astype(float),
            "b": np.round(rng.normal(0, 1, n), 1),
            "g": rng.choice(["x", "y", None], n),
        }
    )
    df.loc[rng.random(n) < 0.05, "a"] = np.nan
    qis = ["a", "b", "g"]
    result = linkage_risk(
        Recipe(Roles(quasi_identifiers=tuple(qis), record_id="id")), df, df, "nearest"
    )
    summary = risk_summary(df, qis)
    assert result.correct.all()
    assert np.array_equal(result.match_count, summary.class_size)
    assert result.identifiability_score == pytest.approx(summary.average_risk)
    assert np.allclose(result.match_probability(), 1.0 / summary.class_size)
    # Distinct records (all QIs numeric, continuous): every record is its own unique match.
    distinct = pd.DataFrame({"id": range(n), "u": rng.random(n), "v": rng.random(n)})
    recipe = Recipe(Roles(quasi_identifiers=("u", "v"), record_id="id"))
    assert linkage_risk(recipe, distinct, distinct, "nearest").identifiability_score == 1.0


def test_sources_larger_than_the_release_and_records_absent_from_the_source():
    rng = np.random.default_rng(8)
    source = pd.DataFrame({"id": range(5000), "x": rng.random(5000), "y": rng.random(5000)})
    released = source.sample(300, random_state=2)
    released = pd.concat([released, pd.DataFrame({"id": [-1], "x": [0.5], "y": [0.5]})])
    result = _link(released, source, ["x", "y"], "nearest")
    assert result.correct[:-1].all() and not result.correct[-1]
    assert result.match_count[-1] == 1  # matched, but to someone else
    assert result.identifiability_score == pytest.approx(300 / 301)


# --- validation ----------------------------------------------------------------------------


@pytest.fixture
def pair():
    source = pd.DataFrame({"id": [1, 2], "x": [1.0, 2.0], "g": ["a", "b"]})
    return source.copy(), source, np.array([0, 1])


@pytest.mark.parametrize(
    ("tolerance", "message"),
    [
        (None, "needs a tolerance"),
        (0, "positive"),
        (-1.0, "positive"),
        (np.nan, "positive"),
        (np.inf, "positive"),
        (True, "must be a number"),
        ("0.1", "must be a number"),
        ({"x": 0}, "positive"),
        ({"y": 0.1}, "not quasi-identifiers"),
        ({"g": 0.1}, "non-numeric"),
        ({}, "names no column"),
    ],
)
def test_tolerance_is_validated(pair, tolerance, message):
    released, source, truth = pair
    with pytest.raises(DataError, match=message):
        link_to_source(released, source, ["x", "g"], truth, "tolerance", tolerance)


def test_other_argument_errors(pair):
    released, source, truth = pair
    with pytest.raises(DataError, match="Unknown matching rule"):
        link_to_source(released, source, ["x"], truth, "fuzzy")
    with pytest.raises(DataError, match="only to the 'tolerance'"):
        link_to_source(released, source, ["x"], truth, "nearest", tolerance=0.1)
    with pytest.raises(DataError, match="at least one quasi-identifier"):
        link_to_source(released, source, [], truth, "nearest")
    with pytest.raises(DataError, match="at least one numeric"):
        link_to_source(released, source, ["g"], truth, "tolerance", 0.1)
    with pytest.raises(DataError, match="lacks quasi-identifier"):
        link_to_source(released, source, ["z"], truth, "nearest")
    recipe = Recipe(Roles(quasi_identifiers=("x",), record_id="id"))
    with pytest.raises(DataError, match="Unknown matching rule"):
        linkage_risk(recipe, released, source, "fuzzy")
    with pytest.raises(DataError, match="needs a tolerance"):
        linkage_risk(recipe, released, source, "tolerance")


def test_match_probability_for_exact_matching():
    source = pd.DataFrame({"id": [1, 2, 3, 4], "dose": [1.5, 2.0, 2.0, 3.0]})
    released = pd.DataFrame({"id": [1, 2, 4], "dose": [1.5, 2.0, 9.0]})
    result = _link(released, source, ["dose"], "exact")
    assert result.match_probability().tolist() == [1.0, 0.5, 0.0]
