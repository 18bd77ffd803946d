"""Bootstrap intervals of the masked estimate (deid_core.utility.bootstrap)."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from deid_core.errors import ModelFitError
from deid_core.masking import IntervalGroup
from deid_core.recipe import Recipe, Roles
from deid_core.utility.bootstrap import bootstrap_interval
from deid_core.utility.models import fit_model
from deid_core.utility.spec import SUPPORTED_FAMILIES, ModelSpec
from deid_core.workspace import Workspace


def linear_frame(n: int = 400, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.gamma(2.0, 1.0, n)
    return pd.DataFrame({"x": x, "y": 1.0 + 0.5 * x + rng.normal(0, 1, n)})


def interval_means(frame: pd.DataFrame, replicate: int) -> pd.DataFrame:
    out = frame.copy()
    out["x"] = IntervalGroup("x", 1.0, release="mean").apply(frame["x"])
    return out


SPEC = ModelSpec("y", "x", family="linear")


def test_matches_an_independent_loop_of_statsmodels_fits():
    df = linear_frame()
    masked_fit = fit_model(interval_means(df, 0), SPEC)
    result = bootstrap_interval(df, interval_means, SPEC, masked_fit, n_resamples=60, seed=9)
    # The same resamples, masked and fitted by hand.
    rng = np.random.default_rng(9)
    slopes = []
    for _ in range(60):
        resample = df.iloc[rng.integers(0, len(df), len(df))].reset_index(drop=True)
        masked = interval_means(resample, 0)
        slopes.append(sm.OLS(masked["y"], sm.add_constant(masked["x"])).fit().params["x"])
    np.testing.assert_allclose(result.estimates, slopes, rtol=1e-9)
    low, high = np.quantile(slopes, [0.025, 0.975])
    assert result.bootstrap_low == pytest.approx(low) and result.bootstrap_high == pytest.approx(
        high
    )
    assert result.bootstrap_se == pytest.approx(np.std(slopes, ddof=1))
    assert result.naive_low == pytest.approx(masked_fit.estimate - 1.959964 * masked_fit.se)
    assert result.n_failed == 0 and result.n_resamples == 60


def test_unmasked_bootstrap_se_is_close_to_the_model_se():
    df = linear_frame(n=2000, seed=5)
    fit = fit_model(df, SPEC)
    result = bootstrap_interval(df, lambda f, r: f, SPEC, fit, n_resamples=400, seed=1)
    assert result.bootstrap_se == pytest.approx(fit.se, rel=0.2)
    assert 0.8 < result.width_ratio < 1.25
    assert result.bootstrap_low < fit.estimate < result.bootstrap_high


def test_input_unchanged_and_reproducible():
    df = linear_frame()
    before = df.copy()
    fit = fit_model(interval_means(df, 0), SPEC)
    a = bootstrap_interval(df, interval_means, SPEC, fit, n_resamples=30, seed=4)
    b = bootstrap_interval(df, interval_means, SPEC, fit, n_resamples=30, seed=4)
    pd.testing.assert_frame_equal(df, before)
    assert a == b
    assert "bootstrap 95% CI" in str(a)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_resamples": 5}, "between"),
        ({"n_resamples": 10_000}, "between"),
        ({"n_resamples": 50.0}, "whole number"),
        ({"level": 1.0}, "confidence level"),
    ],
)
def test_parameters_are_validated(kwargs, message):
    df = linear_frame()
    fit = fit_model(df, SPEC)
    with pytest.raises(ModelFitError, match=message):
        bootstrap_interval(df, lambda f, r: f, SPEC, fit, **kwargs)


def test_too_few_fittable_resamples_is_an_error_not_a_number():
    rng = np.random.default_rng(2)
    n = 300
    df = pd.DataFrame({"x": rng.normal(size=n), "y": np.zeros(n, dtype=int)})
    df.loc[:1, "y"] = 1  # two events: many resamples draw none
    spec = ModelSpec("y", "x")
    fit = fit_model(df, spec)
    with pytest.raises(ModelFitError, match="bootstrap resamples"):
        bootstrap_interval(df, lambda f, r: f, spec, fit, n_resamples=40, seed=1)


def test_workspace_bootstrap_masks_each_resample_with_the_recipe():
    df = linear_frame()
    recipe = Recipe(Roles(exposure="x", outcome="y"), (IntervalGroup("x", 1.0, release="mean"),))
    ws = Workspace(df)
    ws.set_model("linear")
    result = ws.bootstrap(recipe, n_resamples=30, seed=7)
    direct = bootstrap_interval(
        df, interval_means, SPEC, fit_model(interval_means(df, 0), SPEC), n_resamples=30, seed=7
    )
    np.testing.assert_allclose(result.estimates, direct.estimates)
    assert ws.bootstrap(Recipe(Roles(quasi_identifiers=("x",)))) is None  # no model


def family_frame(n: int = 400, seed: int = 11) -> pd.DataFrame:
    """One data set every model family can be fitted to: a 0/1 outcome, a count with its
    person-time, events out of trials, a numeric outcome, and a follow-up time with events."""
    rng = np.random.default_rng(seed)
    x = rng.gamma(2.0, 1.0, n)
    z = rng.integers(0, 2, n)
    pyr = rng.uniform(1, 5, n)
    trials = rng.integers(20, 60, n)
    hazard = 0.1 * np.exp(0.3 * x + 0.2 * z)
    event_time = rng.exponential(1 / hazard)
    censor = rng.uniform(0, 15, n)
    return pd.DataFrame(
        {
            "x": x,
            "z": z,
            "case": rng.binomial(1, 1 / (1 + np.exp(2 - 0.4 * x - 0.3 * z))),
            "count": rng.poisson(pyr * np.exp(-1 + 0.2 * x)),
            "pyr": pyr,
            "deaths": rng.binomial(trials, 1 / (1 + np.exp(2 - 0.2 * x))),
            "population": trials,
            "bp": 1.0 + 0.5 * x + rng.normal(0, 1, n),
            "time": np.minimum(event_time, censor),
            "died": (event_time <= censor).astype(int),
        }
    )


FAMILY_SETTINGS = {
    "logistic": ("case", {}),
    "err": ("case", {}),
    "poisson": ("count", {"offset": "pyr"}),
    "binomial": ("deaths", {"trials": "population"}),
    "linear": ("bp", {}),
    "cox": ("died", {"time": "time", "ties": "efron"}),
}


@pytest.mark.parametrize("family", sorted(FAMILY_SETTINGS))
def test_bootstrap_runs_for_every_model_family(family):
    """Every resample is refitted with everything the model needs (offset, trials, follow-up
    time): none fails, and the first resample's estimate is the one fit_model gives on the
    same resample masked by hand."""
    assert set(FAMILY_SETTINGS) == set(SUPPORTED_FAMILIES)
    outcome, settings = FAMILY_SETTINGS[family]
    df = family_frame()
    step = IntervalGroup("x", 0.5, release="mean")
    recipe = Recipe(Roles(exposure="x", outcome=outcome, covariates=("z",)), (step,))
    ws = Workspace(df)
    ws.set_model(
        family,
        settings.get("offset"),
        settings.get("trials"),
        time=settings.get("time"),
        ties=settings.get("ties", "breslow"),
    )
    result = ws.bootstrap(recipe, n_resamples=20, seed=5)
    assert result.n_failed == 0 and len(result.estimates) == 20
    spec = ws.model_spec(recipe)
    rows = np.random.default_rng(5).integers(0, len(df), len(df))
    resample = df.iloc[rows].reset_index(drop=True)
    masked = resample.assign(x=step.apply(resample["x"]))
    assert result.estimates[0] == pytest.approx(fit_model(masked, spec).estimate, rel=1e-6)
    assert result.bootstrap_low < result.estimate < result.bootstrap_high
