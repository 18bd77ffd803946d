"""Risk-utility profiles over a masking parameter (deid_core.tradeoff.profile)."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from deid_core.datasets import load_demo
from deid_core.errors import DeidError, LimitError, RecipeError
from deid_core.masking import KernelSmooth, RelativeRound
from deid_core.recipe import Recipe, Roles
from deid_core.tradeoff.profile import (
    SweepSpec,
    risk_utility_profile,
    smoothed_columns,
    smoothing_recipe,
    sweep_recipes,
)
from deid_core.workspace import Workspace

ROLES = Roles(exposure="exposure", outcome="cases")


def small_frame(n: int = 120, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    exposure = np.exp(-np.hypot(x, y) / 0.5)
    return pd.DataFrame(
        {"x": x, "y": y, "exposure": exposure, "cases": rng.poisson(np.exp(1 + exposure))}
    )


def smoothed(bandwidth: float, kernel: str = "exponential") -> Recipe:
    return smoothing_recipe(
        Recipe(ROLES),
        ["exposure", "cases"],
        locations=("x", "y"),
        kernel=kernel,
        bandwidth=bandwidth,
    )


@pytest.mark.parametrize(
    ("text", "selector", "parameter", "values"),
    [
        ("kernel_smooth.bandwidth=0:0.2:3", "kernel_smooth", "bandwidth", (0.0, 0.1, 0.2)),
        ("0.digits=1,2,3", 0, "digits", (1.0, 2.0, 3.0)),
        ("relative_round.digits=4", "relative_round", "digits", (4.0,)),
    ],
)
def test_sweep_parsing(text, selector, parameter, values):
    sweep = SweepSpec.parse(text)
    assert (sweep.selector, sweep.parameter) == (selector, parameter)
    np.testing.assert_allclose(sweep.values, values)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bandwidth=0:1:3", "STEP.PARAM"),
        ("kernel_smooth.bandwidth=a:b:3", "must be numbers"),
        ("kernel_smooth.bandwidth=0:1:0", "1 to 200"),
        ("kernel_smooth.bandwidth=0:1:1000", "bound 'sweep_points'"),
        ("kernel_smooth.bandwidth=0,nan", "finite"),
    ],
)
def test_bad_sweeps_are_recipe_errors(text, message):
    with pytest.raises((RecipeError, LimitError), match=message):
        SweepSpec.parse(text)


def test_sweep_targets_must_exist():
    recipe = smoothed(0.1)
    with pytest.raises(RecipeError, match="no 'relative_round' step"):
        SweepSpec.parse("relative_round.digits=1,2").indices(recipe)
    with pytest.raises(RecipeError, match="no step 7"):
        SweepSpec.parse("7.digits=1,2").indices(recipe)
    with pytest.raises(RecipeError, match="no parameter 'digits'"):
        SweepSpec.parse("kernel_smooth.digits=1,2").indices(recipe)


def test_sweep_sets_the_parameter_on_every_smoothing_step_for_every_form():
    recipe = smoothed(0.1)
    sweep = SweepSpec.parse("kernel_smooth.bandwidth=0:0.2:3")
    forms = [("exponential", {"kernel": "exponential"}), ("gaussian", {"kernel": "gaussian"})]
    recipes = sweep_recipes(recipe, sweep, forms)
    assert [(f, v) for f, v, _ in recipes] == [
        ("exponential", 0.0), ("exponential", 0.1), ("exponential", 0.2),
        ("gaussian", 0.0), ("gaussian", 0.1), ("gaussian", 0.2),
    ]  # fmt: skip
    for form, value, r in recipes:
        steps = [s for s in r.steps if isinstance(s, KernelSmooth)]
        assert len(steps) == 2
        assert {(s.kernel, s.bandwidth) for s in steps} == {(form, value)}
    assert recipe.steps[0].bandwidth == 0.1  # the input recipe is unchanged


def test_smoothing_recipe_replaces_and_removes_steps():
    base = Recipe(ROLES, (RelativeRound("exposure", 2), RelativeRound("x", 1)))
    recipe = smoothing_recipe(base, ["exposure", "cases"], locations=("x", "y"), bandwidth=0.1)
    assert smoothed_columns(recipe) == ["exposure", "cases"]
    assert [s.method for s in recipe.steps_for("exposure")] == ["kernel_smooth"]
    assert recipe.steps_for("x") == (RelativeRound("x", 1),)
    assert smoothed_columns(smoothing_recipe(recipe, [])) == []


def test_profile_points_against_an_independent_computation():
    df = small_frame()
    ws = Workspace(df)
    ws.set_model("poisson")
    lam = 0.3
    profile = risk_utility_profile(
        ws,
        [("exponential", 0.0, smoothed(0.0)), ("exponential", lam, smoothed(lam))],
        "bandwidth",
        ["exposure"],
    )
    first, second = profile.points
    # lambda = 0: the original data, so the original fit and (distinct values) full risk.
    assert first.estimate == pytest.approx(profile.original_estimate)
    assert first.mse == pytest.approx(profile.original_se**2)
    assert first.match_share == 1.0
    # lambda > 0: smooth by hand, fit with statsmodels, match by brute force.
    s = df[["x", "y"]].to_numpy()
    w = np.exp(-np.linalg.norm(s[:, None, :] - s[None, :, :], axis=2) / lam)
    w /= w.sum(axis=1, keepdims=True)
    xs, ys = w @ df["exposure"].to_numpy(), w @ df["cases"].to_numpy()
    fit = sm.GLM(ys, sm.add_constant(xs), family=sm.families.Poisson()).fit()
    assert second.estimate == pytest.approx(fit.params[1], rel=1e-6)
    assert second.se == pytest.approx(fit.bse[1], rel=1e-5)
    b = profile.original_estimate
    assert second.mse == pytest.approx(fit.bse[1] ** 2 + (fit.params[1] - b) ** 2, rel=1e-5)
    assert second.naive_low == pytest.approx(fit.params[1] - 1.959964 * fit.bse[1], rel=1e-5)
    sd = df["exposure"].std(ddof=1)
    gaps = np.abs(df["exposure"].to_numpy()[:, None] - xs[None, :]) / sd
    best = gaps.min(axis=1, keepdims=True)
    tied = np.isclose(gaps, best, rtol=1e-12, atol=0)
    share = np.mean([tied[j, j] / tied[j].sum() for j in range(len(df))])
    assert second.match_share == pytest.approx(share)
    assert "exponential" in str(profile) and profile.to_frame().shape[0] == 2


def test_a_point_whose_model_fails_keeps_its_risk_and_says_why():
    df = small_frame()
    df["cases"] = 0  # no events: the Poisson model cannot be fitted
    ws = Workspace(df)
    ws.set_model("poisson")
    (point,) = risk_utility_profile(ws, [("exponential", 0.2, smoothed(0.2))], "bandwidth",
                                    ["exposure"]).points  # fmt: skip
    assert point.estimate is None and point.mse is None
    assert point.match_share is not None
    assert "no events" in point.error
    with pytest.raises(DeidError, match="at least one variable"):
        risk_utility_profile(ws, [], "bandwidth", [])


def test_point_source_demo_prior_kernel_beats_euclidean_on_mse_at_a_higher_risk():
    """Zhou et al. (2010), example I: at equal bandwidth the kernel that knows the exposure
    pattern gives a smaller MSE than the Euclidean kernel, and a higher risk."""
    df = load_demo("point_source")
    ws = Workspace(df)
    ws.set_model("poisson")
    sweep = SweepSpec.parse("kernel_smooth.bandwidth=0.04,0.08,0.12")
    forms = [
        ("exponential", {"kernel": "exponential"}),
        ("prior", {"kernel": "prior", "pattern": "dist_to_source", "spatial_weight": 1.0}),
    ]
    table = risk_utility_profile(
        ws, sweep_recipes(smoothed(0.05), sweep, forms), "bandwidth", ["exposure"]
    ).to_frame()
    euclid = table[table["form"] == "exponential"].set_index("value")
    prior = table[table["form"] == "prior"].set_index("value")
    assert (prior["mse"] < euclid["mse"]).all()
    assert (prior["relative_bias"].abs() < euclid["relative_bias"].abs()).all()
    assert (prior["match_share"] > euclid["match_share"]).all()


def test_profile_bootstrap_intervals_bracket_each_masked_estimate():
    df = small_frame(n=200, seed=9)
    ws = Workspace(df)
    ws.set_model("poisson")
    profile = risk_utility_profile(
        ws,
        [("exponential", lam, smoothed(lam)) for lam in (0.1, 0.3)],
        "bandwidth",
        ["exposure"],
        n_bootstrap=30,
        seed=4,
    )
    for point in profile.points:
        assert point.bootstrap_low < point.estimate < point.bootstrap_high
        direct = ws.bootstrap(smoothed(point.value), 30, seed=4)
        assert (point.bootstrap_low, point.bootstrap_high) == (
            direct.bootstrap_low,
            direct.bootstrap_high,
        )


def test_sweeping_one_smoothing_step_moves_every_smoothing_step():
    """The smoothed variables share one set of weights, so the R-U map's sweep of one
    smoothing step's bandwidth sets it on all of them."""
    from deid_core.tradeoff.rumap import sweep

    recipe = Recipe(ROLES, (RelativeRound("x", 1), *smoothed(0.1).steps))
    assert recipe.linked_steps(0) == [0]
    assert recipe.linked_steps(1) == recipe.linked_steps(2) == [1, 2]
    ws = Workspace(small_frame())
    ws.set_model("poisson")
    points = sweep(ws, recipe, 1, [0.0, 0.3], measure="average_risk")
    assert [p.value for p in points] == [0.0, 0.3]
    # Both smoothed columns at bandwidth 0: the original data, so no loss at all (with the
    # outcome still smoothed at 0.1 the estimate would move).
    assert points[0].analysis_potential == pytest.approx(1.0)
    assert points[1].analysis_potential < 1.0
    with pytest.raises(RecipeError, match="not in the recipe"):
        recipe.linked_steps(5)
