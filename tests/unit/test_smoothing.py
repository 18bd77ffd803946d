"""Kernel smoothing (Zhou, Dominici & Louis 2010): the weights, the step, the recipe protocol."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import sparse

from deid_core.errors import LimitError, RecipeError
from deid_core.masking import (
    STEP_TYPES,
    KernelSmooth,
    RelativeRound,
    smooth_values,
    smoothing,
    smoothing_weights,
    step_from_dict,
)
from deid_core.masking.smoothing import DENSE_LIMIT, _Weights
from deid_core.recipe import Recipe, Roles

KERNEL_ARGS = {
    "gaussian": {"kernel": "gaussian", "rho": 0.4},
    "exponential": {"kernel": "exponential"},
    "epanechnikov": {"kernel": "epanechnikov"},
    "prior": {"kernel": "prior", "spatial_weight": 0.5},
}


def _points(n=60, seed=3):
    rng = np.random.default_rng(seed)
    coords = rng.uniform(0, 10, size=(n, 2))
    pattern = np.hypot(coords[:, 0] - 5, coords[:, 1] - 5)
    values = rng.normal(size=(n, 3))
    return coords, pattern, values


def _args(kernel, pattern):
    args = dict(KERNEL_ARGS[kernel])
    if kernel == "prior":
        args["pattern"] = pattern
    return args


def _dense(weights):
    return weights.toarray() if sparse.issparse(weights) else np.asarray(weights)


def _frame(n=40, seed=5):
    coords, pattern, values = _points(n, seed)
    return pd.DataFrame(
        {
            "x": coords[:, 0],
            "y": coords[:, 1],
            "ring": pattern,
            "dose": values[:, 0],
            "outcome": values[:, 1],
            "age": np.arange(n) % 7 + 40,
        }
    )


# ---------------------------------------------------------------- weights and smooth_values
@pytest.mark.parametrize("kernel", list(KERNEL_ARGS))
def test_zero_bandwidth_returns_the_values_exactly(kernel):
    coords, pattern, values = _points()
    values[4, 1] = np.nan
    out = smooth_values(values, coords, bandwidth=0.0, **_args(kernel, pattern))
    np.testing.assert_array_equal(out, values)
    assert out is not values
    np.testing.assert_array_equal(
        _dense(smoothing_weights(coords, bandwidth=0.0, **_args(kernel, pattern))), np.eye(60)
    )


@pytest.mark.parametrize("kernel", ["gaussian", "exponential", "epanechnikov"])
def test_tiny_bandwidth_returns_the_data_at_distinct_locations(kernel):
    coords, pattern, values = _points()
    out = smooth_values(values, coords, bandwidth=1e-6, **_args(kernel, pattern))
    np.testing.assert_allclose(out, values, rtol=0, atol=1e-12)


def test_tiny_bandwidth_of_the_ring_kernel_returns_the_data_at_distinct_patterns():
    _coords, pattern, values = _points()
    out = smooth_values(values, None, kernel="prior", bandwidth=1e-9, pattern=pattern)
    np.testing.assert_allclose(out, values, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kernel", list(KERNEL_ARGS))
@pytest.mark.parametrize("bandwidth", [0.3, 2.0, 50.0])
def test_each_row_of_the_weights_sums_to_one(kernel, bandwidth):
    coords, pattern, _ = _points()
    weights = smoothing_weights(coords, bandwidth=bandwidth, **_args(kernel, pattern))
    assert sparse.issparse(weights) == (kernel == "epanechnikov")
    dense = _dense(weights)
    np.testing.assert_allclose(dense.sum(axis=1), 1.0, rtol=1e-12)
    assert (dense >= 0).all()


@pytest.mark.parametrize("kernel", list(KERNEL_ARGS))
def test_smoothing_equals_the_weights_times_the_values(kernel):
    coords, pattern, values = _points()
    weights = _dense(smoothing_weights(coords, bandwidth=1.5, **_args(kernel, pattern)))
    out = smooth_values(values, coords, bandwidth=1.5, **_args(kernel, pattern))
    np.testing.assert_allclose(out, weights @ values, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kernel", list(KERNEL_ARGS))
def test_a_constant_variable_stays_constant(kernel):
    coords, pattern, _ = _points()
    out = smooth_values(np.full(60, 3.7), coords, bandwidth=2.0, **_args(kernel, pattern))
    np.testing.assert_array_equal(out, 3.7)


@pytest.mark.parametrize("kernel", list(KERNEL_ARGS))
def test_a_straight_line_relation_is_preserved(kernel):
    # Zhou et al.: with the same weights for x and y, y = a + b x gives y* = a + b x*.
    coords, pattern, values = _points()
    x = values[:, 0]
    y = 2.5 - 1.75 * x
    out = smooth_values(np.column_stack([x, y]), coords, bandwidth=2.0, **_args(kernel, pattern))
    np.testing.assert_allclose(out[:, 1], 2.5 - 1.75 * out[:, 0], rtol=1e-12, atol=1e-12)
    assert not np.allclose(out[:, 0], x)


def _brute_force(coords, values, kernel, bandwidth, rho=0.0, pattern=None, spatial_weight=0.0):
    n = len(coords)
    weights = np.zeros((n, n))
    sd = coords.std(axis=0, ddof=1)
    for i in range(n):
        for k in range(n):
            diff = coords[i] - coords[k]
            d = float(np.sqrt(diff @ diff))
            if kernel == "gaussian":
                u, v = diff / sd
                q = (u * u - 2 * rho * u * v + v * v) / (1 - rho * rho)
                weights[i, k] = np.exp(-q / (2 * bandwidth**2))
            elif kernel == "exponential":
                weights[i, k] = np.exp(-d / bandwidth)
            elif kernel == "prior":
                gap = abs(pattern[i] - pattern[k]) + spatial_weight * d
                weights[i, k] = np.exp(-gap / bandwidth)
            else:
                weights[i, k] = max(0.0, 1 - (d / bandwidth) ** 2)
    return weights @ values / weights.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("kernel", list(KERNEL_ARGS))
def test_every_kernel_agrees_with_a_brute_force_loop(kernel):
    coords, pattern, values = _points(n=45, seed=11)
    args = _args(kernel, pattern)
    expected = _brute_force(coords, values, bandwidth=1.7, **args)
    out = smooth_values(values, coords, bandwidth=1.7, **args)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-12)


def test_the_compact_kernel_agrees_with_a_dense_computation_and_ignores_far_points():
    rng = np.random.default_rng(8)
    coords = rng.uniform(0, 20, size=(1500, 3))
    coords[10] = coords[11]  # two records at one location
    values = rng.normal(size=(1500, 2))
    diff = coords[:, None, :] - coords[None, :, :]
    d = np.sqrt((diff**2).sum(axis=2))
    dense = np.clip(1 - (d / 2.5) ** 2, 0, None)
    expected = dense @ values / dense.sum(axis=1, keepdims=True)
    out = smooth_values(values, coords, kernel="epanechnikov", bandwidth=2.5)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-12)
    weights = smoothing_weights(coords, kernel="epanechnikov", bandwidth=2.5)
    assert weights.nnz == int((dense > 0).sum())


def test_the_pure_ring_kernel_depends_only_on_the_pattern():
    coords, pattern, _values = _points()
    moved = np.random.default_rng(1).permutation(coords)  # other locations, same pattern
    first = smoothing_weights(coords, kernel="prior", bandwidth=0.8, pattern=pattern)
    second = smoothing_weights(moved, kernel="prior", bandwidth=0.8, pattern=pattern)
    third = smoothing_weights(None, kernel="prior", bandwidth=0.8, pattern=pattern)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first, third)
    gap = np.abs(pattern[:, None] - pattern[None, :])
    raw = np.exp(-gap / 0.8)
    np.testing.assert_allclose(first, raw / raw.sum(axis=1, keepdims=True), rtol=1e-12)
    tilted = smoothing_weights(
        coords, kernel="prior", bandwidth=0.8, pattern=pattern, spatial_weight=1.0
    )
    assert not np.allclose(first, tilted)


def test_rho_tilts_the_gaussian_kernel_along_the_diagonal():
    coords = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, -1.0], [5.0, 3.0], [-2.0, 4.0]])
    plus = smoothing_weights(coords, bandwidth=1.0, rho=0.8)
    minus = smoothing_weights(coords, bandwidth=1.0, rho=-0.8)
    # positive correlation favours the (1, 1) neighbour of the origin, negative the (1, -1) one
    assert plus[0, 1] > plus[0, 2]
    assert minus[0, 2] > minus[0, 1]


def test_missing_values_stay_missing_and_do_not_count_as_neighbours():
    coords, _pattern, values = _points()
    holes = values.copy()
    holes[[3, 17], 0] = np.nan
    out = smooth_values(holes, coords, bandwidth=3.0)
    assert np.isnan(out[[3, 17], 0]).all()
    assert not np.isnan(np.delete(out[:, 0], [3, 17])).any()
    alone = smooth_values(values[:, 1:], coords, bandwidth=3.0)
    np.testing.assert_allclose(out[:, 1:], alone, rtol=1e-12)
    weights = smoothing_weights(coords, bandwidth=3.0)
    raw = weights.copy()
    raw[:, [3, 17]] = 0
    expected = raw @ np.nan_to_num(holes[:, 0]) / raw.sum(axis=1)
    keep = np.ones(60, dtype=bool)
    keep[[3, 17]] = False
    np.testing.assert_allclose(out[keep, 0], expected[keep], rtol=1e-12)


@pytest.mark.parametrize("kernel", ["gaussian", "exponential", "prior"])
def test_row_blocks_agree_with_the_kept_matrix(kernel, monkeypatch):
    coords, pattern, values = _points(n=45, seed=4)
    args = (coords, kernel, 1.3, 0.0, pattern if kernel == "prior" else None, 0.0)
    kept = _Weights.build(*args, keep=True)
    assert isinstance(kept.matrix, np.ndarray)
    monkeypatch.setattr(smoothing, "_BLOCK_WEIGHTS", 100)  # blocks of 2 rows
    blocks = _Weights.build(*args, keep=False)
    assert blocks.matrix is None
    expected = _brute_force(coords, values, kernel, 1.3, pattern=pattern)
    np.testing.assert_allclose(kept.smooth(values), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(blocks.smooth(values), expected, rtol=1e-10, atol=1e-12)
    monkeypatch.setattr(smoothing, "KEEP_DENSE_LIMIT", 44)
    assert _Weights.build(*args, keep=True).matrix is None


def test_dense_kernels_refuse_too_many_points_and_point_to_the_compact_kernel():
    coords = np.zeros((DENSE_LIMIT + 1, 1))
    coords[:, 0] = np.arange(DENSE_LIMIT + 1)
    with pytest.raises(LimitError, match=r"bound 'smoothing_points'.*epanechnikov"):
        smooth_values(np.ones(DENSE_LIMIT + 1), coords, kernel="exponential", bandwidth=1.0)
    out = smooth_values(np.ones(DENSE_LIMIT + 1), coords, kernel="epanechnikov", bandwidth=3.0)
    np.testing.assert_array_equal(out, 1.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kernel": "box"}, "'kernel' must be one of"),
        ({"bandwidth": -1.0}, "must not be negative"),
        ({"bandwidth": float("nan")}, "finite"),
        ({"bandwidth": "1"}, "must be a number"),
        ({"rho": 1.0}, "strictly between -1 and 1"),
        ({"rho": 0.5, "kernel": "exponential"}, "exactly 2 coordinates"),
        ({"kernel": "prior"}, "needs a 'pattern'"),
        ({"pattern": "ring"}, "only by the prior-knowledge kernel"),
        ({"spatial_weight": 1.0}, "only by the prior-knowledge kernel"),
        ({"kernel": "prior", "pattern": "ring", "spatial_weight": -1.0}, "must not be negative"),
        ({"locations": ()}, "1 to 3 coordinate columns"),
        ({"locations": ("x", "y", "age", "dose")}, "1 to 3 coordinate columns"),
        ({"locations": ("x", "x")}, "twice"),
        ({"locations": "x"}, "list of column names"),
        ({"kernel": "prior", "pattern": "x"}, "cannot also be a location"),
        ({"rho": 0.5, "locations": ("x",)}, "exactly 2 coordinates"),
        ({"kernel": "prior", "pattern": "ring", "spatial_weight": 1.0, "locations": ()}, "1 to 3"),
    ],
)
def test_invalid_parameters_are_refused_up_front(kwargs, message):
    params = {"column": "dose", "locations": ("x", "y"), "kernel": "gaussian", "bandwidth": 1.0}
    params.update(kwargs)
    with pytest.raises(RecipeError, match=message):
        KernelSmooth(**params)


def test_smooth_values_validates_its_inputs():
    coords, _pattern, values = _points()
    with pytest.raises(RecipeError, match="one row per value"):
        smooth_values(values, coords[:10], bandwidth=1.0)
    bad = coords.copy()
    bad[0, 0] = np.nan
    with pytest.raises(RecipeError, match="complete and finite"):
        smooth_values(values, bad, bandwidth=1.0)
    with pytest.raises(RecipeError, match="infinite"):
        smooth_values(np.full(60, np.inf), coords, bandwidth=1.0)
    with pytest.raises(RecipeError, match="1 to 3"):
        smooth_values(values, np.zeros((60, 4)), bandwidth=1.0)


# ---------------------------------------------------------------- the step and the recipe
def test_the_step_serialises_and_comes_back_with_tuples():
    step = KernelSmooth("dose", locations=["x", "y"], kernel="gaussian", bandwidth=0.2, rho=-0.5)
    assert step.locations == ("x", "y")
    assert STEP_TYPES["kernel_smooth"] is KernelSmooth
    data = json.loads(json.dumps(step.to_dict()))
    back = step_from_dict(data)
    assert back == step
    assert isinstance(back.locations, tuple)
    ring = KernelSmooth("dose", kernel="prior", pattern="ring", bandwidth=0.5)
    assert step_from_dict(json.loads(json.dumps(ring.to_dict()))) == ring
    assert ring.context_columns == ("ring",)
    assert step.context_columns == ("x", "y")
    recipe = Recipe(Roles(exposure="dose"), (step,))
    assert Recipe.from_json(recipe.to_json()) == recipe


def test_the_step_describes_itself_and_offers_bandwidths():
    gauss = KernelSmooth("dose", ("x", "y"), "gaussian", 0.2, rho=0.3)
    assert gauss.describe() == (
        "dose: kernel smoothing (Gaussian kernel over x, y, bandwidth 0.2 SD, correlation 0.3)"
    )
    ring = KernelSmooth("dose", kernel="prior", pattern="ring", bandwidth=0.5)
    assert "ring kernel on the difference in 'ring'" in ring.describe()
    compact = KernelSmooth("dose", ("x",), "epanechnikov", 2.0)
    assert "neighbours closer than 2" in compact.describe()
    series = pd.Series([1.0, 2.0])
    assert gauss.sweep_values(series)[0] == 0.0
    assert compact.sweep_values(series) == [0.0, 0.2, 0.4, 1.0, 2.0, 4.0, 10.0]
    for value in compact.sweep_values(series):
        compact.with_params(bandwidth=value)
    assert not gauss.random
    assert not gauss.elementwise


@pytest.mark.parametrize("kernel", list(KERNEL_ARGS))
def test_the_step_matches_smooth_values_and_never_mutates_its_input(kernel):
    df = _frame()
    before = df.copy(deep=True)
    args = dict(KERNEL_ARGS[kernel])
    if kernel == "prior":
        args["pattern"] = "ring"
    step = KernelSmooth("dose", ("x", "y"), bandwidth=1.2, **args)
    out = step.apply(df["dose"], frame=df)
    pd.testing.assert_frame_equal(df, before)
    if kernel == "prior":
        args["pattern"] = df["ring"].to_numpy()
    expected = smooth_values(
        df["dose"].to_numpy(), df[["x", "y"]].to_numpy(), bandwidth=1.2, **args
    )
    np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-12)
    assert out.name == "dose"
    assert out.index.equals(df.index)


def test_zero_bandwidth_step_returns_the_column_unchanged_with_its_dtype():
    df = _frame()
    step = KernelSmooth("age", ("x", "y"), "exponential", 0.0)
    out = step.apply(df["age"], frame=df)
    pd.testing.assert_series_equal(out, df["age"])


def test_the_recipe_smooths_several_columns_with_one_weight_computation():
    df = _frame()
    step = KernelSmooth("dose", ("x", "y"), "gaussian", 0.5, rho=0.2)
    recipe = Recipe(
        Roles(exposure="dose", outcome="outcome", covariates=("age",)),
        (step, step.with_params(column="outcome"), step.with_params(column="age")),
    )
    masked = recipe.apply(df)
    expected = smooth_values(
        df[["dose", "outcome", "age"]].to_numpy(dtype=float),
        df[["x", "y"]].to_numpy(),
        bandwidth=0.5,
        rho=0.2,
    )
    np.testing.assert_allclose(masked[["dose", "outcome", "age"]], expected, rtol=1e-12)
    pd.testing.assert_frame_equal(masked[["x", "y", "ring"]], df[["x", "y", "ring"]])
    cache: dict = {}
    recipe.apply_to_column(df, "dose", cache=cache)
    (kept,) = cache.values()
    recipe.apply_to_column(df, "outcome", cache=cache)
    (again,) = cache.values()
    assert again is kept  # the second column reused the first column's weights
    shifted = df.assign(x=df["x"] + 1.0, y=df["y"] * 2)
    recipe.apply_to_column(shifted, "dose", cache=cache)
    (fresh,) = cache.values()
    assert fresh is not kept  # other coordinates: the stale weights are not reused


def test_weights_come_from_the_original_locations_even_if_they_are_masked():
    df = _frame()
    smooth = KernelSmooth("dose", ("x", "y"), "exponential", 1.0)
    recipe = Recipe(Roles(), (smooth, RelativeRound("x", digits=1)))
    masked = recipe.apply(df)
    alone = Recipe(Roles(), (smooth,)).apply(df)
    pd.testing.assert_series_equal(masked["dose"], alone["dose"])


def test_the_recipe_checks_the_context_columns():
    step = KernelSmooth("dose", ("x", "lat"), "gaussian", 0.5)
    recipe = Recipe(Roles(exposure="dose"), (step,))
    assert recipe.missing_columns(["dose", "x"]) == ["lat"]
    with pytest.raises(RecipeError, match="'lat'"):
        recipe.apply(pd.DataFrame({"dose": [1.0], "x": [0.0]}))


def test_a_step_that_needs_the_frame_says_so():
    df = _frame()
    step = KernelSmooth("dose", ("x", "y"), "gaussian", 0.5)
    with pytest.raises(RecipeError, match="also reads column"):
        step.apply(df["dose"])
    with pytest.raises(RecipeError, match="'y'"):
        step.apply(df["dose"], frame=df[["x", "dose"]])
    with pytest.raises(RecipeError, match="different rows"):
        step.apply(df["dose"], frame=df.iloc[::-1])


def test_missing_locations_are_refused_and_missing_values_stay_missing():
    df = _frame()
    step = KernelSmooth("dose", ("x", "y"), "gaussian", 0.5)
    holes = df.assign(y=df["y"].where(df.index != 3))
    with pytest.raises(RecipeError, match="'y' has 1 missing or infinite entry"):
        step.apply(holes["dose"], frame=holes)
    ring = KernelSmooth("dose", kernel="prior", pattern="ring", bandwidth=0.5)
    holes = df.assign(ring=df["ring"].where(df.index > 1))
    with pytest.raises(RecipeError, match="'ring' has 2 missing"):
        ring.apply(holes["dose"], frame=holes)
    gaps = df.assign(dose=df["dose"].where(df.index != 7))
    out = step.apply(gaps["dose"], frame=gaps)
    assert np.isnan(out[7])
    assert out.drop(7).notna().all()


def test_non_numeric_columns_are_refused_with_the_usual_message():
    df = _frame().assign(dose=["a"] * 40)
    step = KernelSmooth("dose", ("x", "y"), "gaussian", 0.5)
    with pytest.raises(RecipeError, match="needs a numeric column"):
        step.apply(df["dose"], frame=df)
    df = _frame().assign(x=["a"] * 40)
    with pytest.raises(RecipeError, match="needs a numeric column, but 'x'"):
        step.apply(df["dose"], frame=df)


# ---------------------------------------------------------------- properties
@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 40),
    kernel=st.sampled_from(list(KERNEL_ARGS)),
    bandwidth=st.one_of(st.just(0.0), st.floats(1e-3, 1e3)),
)
def test_smoothing_keeps_values_in_range_and_never_mutates(data, n, kernel, bandwidth):
    finite = st.floats(-1e6, 1e6, allow_nan=False)
    coords = data.draw(hnp.arrays(np.float64, (n, 2), elements=finite))
    values = data.draw(hnp.arrays(np.float64, (n, 2), elements=st.one_of(finite, st.just(np.nan))))
    pattern = data.draw(hnp.arrays(np.float64, n, elements=finite))
    copies = coords.copy(), values.copy(), pattern.copy()
    args = _args(kernel, pattern)
    out = smooth_values(values, coords, bandwidth=bandwidth, **args)
    np.testing.assert_array_equal(coords, copies[0])
    np.testing.assert_array_equal(values, copies[1])
    np.testing.assert_array_equal(pattern, copies[2])
    np.testing.assert_array_equal(np.isnan(out), np.isnan(values))
    for column in range(2):
        seen = values[~np.isnan(values[:, column]), column]
        got = out[~np.isnan(out[:, column]), column]
        if seen.size:
            assert (got >= seen.min()).all()
            assert (got <= seen.max()).all()


# ----------------------------------------------------------------------------- blocks (within)
@pytest.mark.parametrize("kernel", ["exponential", "epanechnikov", "gaussian"])
def test_within_groups_no_weight_crosses_a_group(kernel):
    rng = np.random.default_rng(12)
    coords = rng.uniform(0, 1, (60, 2))
    groups = rng.choice(["a", "b", "c"], 60)
    weights = smoothing_weights(coords, kernel=kernel, bandwidth=0.5, groups=groups)
    dense = weights.toarray() if hasattr(weights, "toarray") else weights
    across = groups[:, None] != groups[None, :]
    assert np.all(dense[across] == 0)
    np.testing.assert_allclose(dense.sum(axis=1), 1.0)


@pytest.mark.parametrize("kernel", ["exponential", "epanechnikov"])
def test_within_groups_equals_smoothing_each_group_alone(kernel):
    rng = np.random.default_rng(13)
    coords = rng.uniform(0, 1, (80, 2))
    groups = rng.integers(0, 2, 80)
    values = rng.normal(size=80)
    together = smooth_values(values, coords, kernel=kernel, bandwidth=0.3, groups=groups)
    for g in (0, 1):
        alone = smooth_values(values[groups == g], coords[groups == g], kernel=kernel,
                              bandwidth=0.3)  # fmt: skip
        np.testing.assert_allclose(together[groups == g], alone, rtol=1e-12)


def test_step_within_a_column_keeps_groups_apart_and_round_trips():
    frame = pd.DataFrame(
        {
            "x": [0.0, 0.0, 1.0, 1.0],
            "y": [0.0, 0.0, 0.0, 0.0],
            "group": [0, 1, 0, 1],
            "deaths": [1.0, 10.0, 3.0, 30.0],
        }
    )
    step = KernelSmooth("deaths", ("x", "y"), kernel="exponential", bandwidth=1.0, within="group")
    assert step.context_columns == ("x", "y", "group")
    smoothed = step.apply(frame["deaths"], frame=frame, cache={})
    w = np.exp(-1.0)  # the two areas are one unit apart
    expected = [(1 + 3 * w) / (1 + w), (10 + 30 * w) / (1 + w)]
    expected += [(3 + 1 * w) / (1 + w), (30 + 10 * w) / (1 + w)]
    np.testing.assert_allclose(smoothed, expected)
    assert "within groups of 'group'" in step.describe()
    assert step_from_dict(json.loads(json.dumps(step.to_dict()))) == step
    with pytest.raises(RecipeError, match="missing"):
        step.apply(frame["deaths"], frame=frame.assign(group=[0, None, 1, 1]), cache={})
    with pytest.raises(RecipeError, match="its own groups"):
        KernelSmooth("group", ("x", "y"), kernel="exponential", within="group")


@pytest.mark.parametrize("kernel", list(KERNEL_ARGS))
@pytest.mark.parametrize("bandwidth", [1e-300, 5e-324])
def test_a_vanishing_bandwidth_returns_the_data(kernel, bandwidth):
    """lambda -> 0 gives the original data (the module docstring), down to the smallest float:
    2 lambda^2 underflowing to 0 (the Gaussian at 1e-300) or 1 / lambda overflowing (5e-324)
    once made a ZeroDivisionError or NaN weights."""
    coords, pattern, values = _points()
    smoothed = smooth_values(values, coords, bandwidth=bandwidth, **_args(kernel, pattern))
    assert np.allclose(smoothed, values, rtol=0, atol=1e-12)
