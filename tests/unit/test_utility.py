"""Utility: the collaborator's logistic model, Cologne's MSE and analysis potential, replicates."""

import contextlib

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.special import expit

from deid_core.errors import LimitError, ModelFitError
from deid_core.utility import (
    MAX_REPLICATES,
    ModelSpec,
    ReplicateSummary,
    UtilityComparison,
    compare_fits,
    fit_logistic_replicates,
    fit_model,
    replicate_utility,
)
from deid_core.utility.spec import build_design

SPEC = ModelSpec("cancer", "dose", ("age", "sex"))


def simulate(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Cohort-like data: skewed dose (Gy), age, sex, city, and a binary outcome."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "dose": rng.gamma(0.6, 0.8, n),
            "age": rng.normal(50, 10, n),
            "sex": rng.integers(0, 2, n),
            "city": rng.choice(["Hiroshima", "Nagasaki"], n),
        }
    )
    eta = -2.5 + 0.5 * df["dose"] + 0.03 * (df["age"] - 50) + 0.3 * df["sex"]
    df["cancer"] = (rng.random(n) < expit(eta)).astype(int)
    return df


def uniform_noise(df: pd.DataFrame, half_width: float, seed: int = 0):
    """Replicate r of Cologne's randomisation: dose + U(-a, a), negatives set to 0."""

    def make(r: int) -> pd.Series:
        rng = np.random.default_rng(seed + r)
        return (df["dose"] + rng.uniform(-half_width, half_width, len(df))).clip(lower=0)

    return make


# --- ModelSpec ------------------------------------------------------------------------


def test_formula_is_readable():
    spec = ModelSpec("stomach_cancer", "stomach_dose_gy", ("age", "sex"))
    assert spec.formula() == (
        "logit P(stomach_cancer = 1) = a + b * stomach_dose_gy + g1 * age + g2 * sex"
    )
    assert ModelSpec("y", "x").formula() == "logit P(y = 1) = a + b * x"


def test_spec_validates_up_front():
    with pytest.raises(ModelFitError, match="unsupported model family 'probit'"):
        ModelSpec("y", "x", family="probit")
    with pytest.raises(ModelFitError, match="distinct"):
        ModelSpec("y", "x", ("x",))
    with pytest.raises(ModelFitError, match="exposure must be a non-empty"):
        ModelSpec("y", "")
    assert ModelSpec("y", "x", ["a", "b"]).covariates == ("a", "b")


# --- fit_model ------------------------------------------------------------------------


def test_fit_model_agrees_with_statsmodels_logit_and_direct_likelihood():
    df = simulate()
    fit = fit_model(df, SPEC)
    X = sm.add_constant(df[["dose", "age", "sex"]].to_numpy(dtype=float))
    y = df["cancer"].to_numpy(dtype=float)
    logit = sm.Logit(y, X).fit(disp=0, tol=1e-12, maxiter=100)
    assert fit.estimate == pytest.approx(logit.params[1], rel=1e-6)
    assert fit.se == pytest.approx(logit.bse[1], rel=1e-6)
    assert fit.deviance == pytest.approx(-2 * logit.llf, rel=1e-9)

    def nll(beta):
        eta = X @ beta
        return np.sum(np.logaddexp(0, eta) - y * eta)

    def grad(beta):
        return X.T @ (expit(X @ beta) - y)

    def hess(beta):
        mu = expit(X @ beta)
        return X.T @ (X * (mu * (1 - mu))[:, None])

    direct = minimize(nll, np.zeros(4), jac=grad, hess=hess, method="trust-exact", tol=1e-12)
    assert np.allclose(fit.params, direct.x, rtol=1e-6, atol=1e-9)
    assert fit.se == pytest.approx(np.sqrt(np.linalg.inv(hess(direct.x))[1, 1]), rel=1e-6)

    reduced = sm.Logit(y, np.delete(X, 1, axis=1)).fit(disp=0, tol=1e-12)
    assert fit.lr_statistic == pytest.approx(2 * (logit.llf - reduced.llf), rel=1e-6)
    assert 0 < fit.lr_pvalue < 1
    assert (fit.n, fit.n_events, fit.n_dropped) == (2000, int(y.sum()), 0)
    assert fit.param_names == ("Intercept", "dose", "age", "sex")


def test_text_covariate_is_dummy_coded_like_a_formula():
    df = simulate()
    fit = fit_model(df, ModelSpec("cancer", "dose", ("age", "city")))
    ref = smf.glm("cancer ~ dose + age + C(city)", df, family=sm.families.Binomial()).fit()
    assert fit.param_names == ("Intercept", "dose", "age", "city[Nagasaki]")
    order = ["Intercept", "dose", "age", "C(city)[T.Nagasaki]"]
    np.testing.assert_allclose(fit.params, ref.params[order].to_numpy(), rtol=1e-6)
    np.testing.assert_allclose(fit.bse, ref.bse[order].to_numpy(), rtol=1e-6)


def test_complete_cases_are_used_and_counted():
    df = simulate()
    df.loc[[1, 5, 9], "age"] = np.nan
    df.loc[[5, 11], "dose"] = np.nan
    fit = fit_model(df, SPEC)
    assert (fit.n, fit.n_dropped) == (1996, 4)
    assert fit.estimate == pytest.approx(fit_model(df.dropna(), SPEC).estimate, rel=1e-12)


def test_boolean_outcome_and_float_01_outcome_are_accepted():
    df = simulate()
    reference = fit_model(df, SPEC).estimate
    as_bool = df.assign(cancer=df["cancer"].astype(bool))
    as_float = df.assign(cancer=df["cancer"].astype(float))
    assert fit_model(as_bool, SPEC).estimate == pytest.approx(reference, rel=1e-12)
    assert fit_model(as_float, SPEC).estimate == pytest.approx(reference, rel=1e-12)


def test_fit_result_prints_a_summary():
    text = str(fit_model(simulate(), SPEC))
    assert "logit P(cancer = 1) = a + b * dose + g1 * age + g2 * sex" in text
    assert "Records used: 2000" in text
    assert "LR test of dose" in text
    assert "Intercept" in text and "std err" in text


FAILURES = {
    "no events": (lambda d: d.__setitem__("cancer", 0), SPEC, "has no events"),
    "all events": (lambda d: d.__setitem__("cancer", 1), SPEC, "has no non-events"),
    "not binary": (lambda d: d.__setitem__("cancer", d["cancer"] + 1), SPEC, "coded 0/1"),
    "missing column": (lambda d: d.pop("age"), SPEC, "not found.*'age'"),
    "constant exposure": (lambda d: d.__setitem__("dose", 0.25), SPEC, "'dose' does not vary"),
    "collinear covariate": (
        lambda d: d.__setitem__("age2", 2 * d["age"] + 1),
        ModelSpec("cancer", "dose", ("age", "sex", "age2")),
        "'age2' is constant or collinear",
    ),
    "constant covariate": (
        lambda d: d.__setitem__("sex", 1),
        SPEC,
        "'sex' is constant or collinear",
    ),
    "single category": (
        lambda d: d.__setitem__("city", "Hiroshima"),
        ModelSpec("cancer", "dose", ("city",)),
        "'city' has a single category",
    ),
    "text exposure": (
        lambda d: d.__setitem__("dose", pd.cut(d["dose"], [0, 0.5, 1, 100]).astype(str)),
        SPEC,
        "'dose' is not numeric.*release midpoints or means instead",
    ),
    "interval exposure": (
        lambda d: d.__setitem__("dose", pd.cut(d["dose"], [0, 0.5, 1, 100])),
        SPEC,
        "'dose' is not numeric",
    ),
    "infinite exposure": (
        lambda d: d.loc.__setitem__((3, "dose"), np.inf),
        SPEC,
        "'dose' contains infinite values",
    ),
    "too many text levels": (
        lambda d: d.__setitem__("age", d["age"].round(1).astype(str)),
        SPEC,
        "'age' is text with more than 50 categories",
    ),
    "complete separation": (
        lambda d: d.__setitem__("cancer", (d["dose"] > 0.4).astype(int)),
        SPEC,
        r"perfectly predicted for some records by 'dose' \(separation\)",
    ),
    "quasi-complete separation": (
        lambda d: d.__setitem__("cancer", np.where(d["city"] == "Nagasaki", 0, d["cancer"])),
        ModelSpec("cancer", "dose", ("age", "city")),
        r"perfectly predicted for some records by 'city' \(separation\)",
    ),
}


@pytest.mark.parametrize("case", FAILURES, ids=list(FAILURES))
def test_each_failure_raises_a_clear_model_fit_error(case):
    mutate, spec, message = FAILURES[case]
    df = simulate()
    mutate(df)
    with pytest.raises(ModelFitError, match=message) as info:
        fit_model(df, spec)
    text = str(info.value)
    assert "\n" not in text
    assert "(0.5, 1.0]" not in text  # never quotes a data value


def test_too_few_complete_rows():
    df = simulate(50)
    df.loc[df.index[5:], "age"] = np.nan
    with pytest.raises(ModelFitError, match="only 5 records are complete"):
        fit_model(df, SPEC)


def test_separation_by_a_covariate_is_named():
    """statsmodels reports this fit as converged (with huge standard errors): not a number."""
    df = simulate(200)
    df["cancer"] = (df["age"] > 50).astype(int)
    with pytest.raises(ModelFitError, match=r"by 'age' \(separation\)"):
        fit_model(df, ModelSpec("cancer", "dose", ("age",)))


def test_non_convergence_raises(monkeypatch):
    monkeypatch.setattr("deid_core.utility.glm.MAX_ITERATIONS", 1)
    with pytest.raises(ModelFitError, match="did not converge in 1 iterations"):
        fit_model(simulate(), SPEC)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(5, 120),
    missing=st.floats(0, 0.3),
    categorical=st.booleans(),
)
def test_fit_does_not_mutate_its_inputs(seed, n, missing, categorical):
    df = simulate(n, seed)
    rng = np.random.default_rng(seed)
    df.loc[rng.random(n) < missing, "age"] = np.nan
    if categorical:
        df["city"] = df["city"].astype("category")
    spec = ModelSpec("cancer", "dose", ("age", "city"))
    before = df.copy(deep=True)
    with contextlib.suppress(ModelFitError):
        fit_model(df, spec)
    pd.testing.assert_frame_equal(df, before)
    assert spec == ModelSpec("cancer", "dose", ("age", "city"))


# --- compare_fits and Cologne Table 2 -----------------------------------------------


def test_cologne_table_2_mse_arithmetic():
    unmasked = UtilityComparison(0.5235, 0.1548, 0.5235, 0.1548)
    assert round(unmasked.mse, 4) == 0.0240
    assert unmasked.analysis_potential == 1.0
    stratified = UtilityComparison(0.5235, 0.1548, 0.5320, 0.1553)
    assert round(stratified.masked_mse, 4) == 0.0242
    assert round(100 * stratified.relative_bias, 1) == 1.6
    assert stratified.analysis_potential == pytest.approx(0.1548**2 / (0.1553**2 + 0.0085**2))
    rounded_3 = UtilityComparison(0.5235, 0.1548, 0.5237, 0.1548)
    assert round(100 * rounded_3.relative_bias, 3) == 0.038


def test_analysis_potential_is_1_when_masked_equals_original():
    fit = fit_model(simulate(), SPEC)
    comparison = compare_fits(fit, fit)
    assert comparison.analysis_potential == 1.0
    assert comparison.relative_bias == 0.0
    assert comparison.masked_mse == comparison.mse == fit.se**2


def test_analysis_potential_can_exceed_1():
    assert UtilityComparison(0.5, 0.2, 0.5, 0.1).analysis_potential == pytest.approx(4.0)


def test_relative_bias_is_none_when_original_estimate_is_0():
    comparison = UtilityComparison(0.0, 0.1, 0.05, 0.1)
    assert comparison.relative_bias is None
    assert "undefined (original estimate is 0)" in str(comparison)
    assert comparison.masked_mse == pytest.approx(0.0125)


def test_comparison_validates_its_inputs():
    with pytest.raises(ValueError, match="positive"):
        UtilityComparison(0.5, 0.0, 0.5, 0.1)
    with pytest.raises(ValueError, match="finite"):
        UtilityComparison(0.5, 0.1, float("nan"), 0.1)


def test_compare_fits_of_masked_data():
    df = simulate()
    original = fit_model(df, SPEC)
    masked = fit_model(df.assign(dose=df["dose"].round(1)), SPEC)
    comparison = compare_fits(original, masked)
    assert comparison.masked_estimate == masked.estimate
    assert comparison.masked_mse == pytest.approx(
        masked.se**2 + (masked.estimate - original.estimate) ** 2
    )
    assert "Analysis potential" in str(comparison)


# --- vectorised replicate fitter ------------------------------------------------------


def _replicate_designs(df, n_rep=4, half_width=0.3):
    design = build_design(df, SPEC)
    make = uniform_noise(df, half_width)
    doses = np.stack([make(r).to_numpy() for r in range(n_rep)])
    return design, doses


def _statsmodels_fit(X, y):
    return sm.GLM(y, X, family=sm.families.Binomial()).fit(tol=1e-12)


def test_replicate_fitter_agrees_with_statsmodels_on_each_replicate():
    df = simulate()
    design, doses = _replicate_designs(df)
    start = np.asarray(fit_model(df, SPEC).params)
    fits = fit_logistic_replicates(design.X, design.y, start, varying={1: doses}, chunk_size=3)
    assert fits.ok.all()
    for r, dose in enumerate(doses):
        X = design.X.copy()
        X[:, 1] = dose
        ref = _statsmodels_fit(X, design.y)
        np.testing.assert_allclose(fits.params[r], ref.params, rtol=1e-6)
        np.testing.assert_allclose(fits.bse[r], ref.bse, rtol=1e-6)
        assert fits.deviance[r] == pytest.approx(ref.deviance, rel=1e-9)


def test_full_3d_design_gives_the_same_fits_as_the_shared_design():
    df = simulate()
    design, doses = _replicate_designs(df)
    start = np.asarray(fit_model(df, SPEC).params)
    full = np.repeat(design.X[None], len(doses), axis=0)
    full[:, :, 1] = doses
    shared = fit_logistic_replicates(design.X, design.y, start, varying={1: doses})
    fits = fit_logistic_replicates(full, design.y, start, chunk_size=2)
    np.testing.assert_allclose(fits.params, shared.params, rtol=1e-9)
    np.testing.assert_allclose(fits.bse, shared.bse, rtol=1e-9)
    assert "4 usable" in str(fits)


def test_replicate_fitter_flags_separated_and_singular_replicates():
    rng = np.random.default_rng(3)
    n = 500
    x = rng.normal(size=n)
    y = (rng.random(n) < 0.3).astype(float)
    X = np.column_stack([np.ones(n), x])
    quasi = np.where(y == 1, 2.0, rng.normal(size=n).clip(max=1.0))
    quasi[np.flatnonzero(y == 0)[0]] = 2.0  # one tie at the boundary: quasi-complete
    complete = np.where(y == 1, 1.0, -1.0)
    varying = np.stack([x, quasi, complete, np.zeros(n)])
    fits = fit_logistic_replicates(X, y, np.array([-0.8, 0.0]), varying={1: varying})
    assert fits.ok.tolist() == [True, False, False, False]
    assert fits.separated[1]
    assert not fits.converged[2:].any()
    assert np.isnan(fits.bse[1:]).all()


def test_replicate_fitter_rejects_bad_shapes():
    X = np.ones((10, 2))
    with pytest.raises(ValueError, match="non-empty varying"):
        fit_logistic_replicates(X, np.zeros(10), np.zeros(2))
    with pytest.raises(ValueError, match="0/1"):
        fit_logistic_replicates(X, np.full(10, 2.0), np.zeros(2), varying={1: np.ones((3, 10))})
    with pytest.raises(ValueError, match="within the design"):
        fit_logistic_replicates(X, np.zeros(10), np.zeros(2), varying={2: np.ones((3, 10))})


# --- replicate_utility ----------------------------------------------------------------


def test_replicate_utility_matches_fitting_each_masked_data_set():
    df = simulate()
    df.loc[[2, 4], "age"] = np.nan
    original = fit_model(df, SPEC)
    make = uniform_noise(df, 0.3, seed=10)
    summary = replicate_utility(df, make, SPEC, original, n_replicates=6, chunk_size=4)
    fits = [fit_model(df.assign(dose=make(r)), SPEC) for r in range(6)]
    b = np.array([f.estimate for f in fits])
    se = np.array([f.se for f in fits])
    expected = ReplicateSummary.from_replicates(original.estimate, original.se, b, se)
    assert summary.n_replicates == 6 and summary.n_failed == 0
    for name in ("estimate_mean", "estimate_min", "se_max", "mse_mean", "analysis_potential"):
        assert getattr(summary, name) == pytest.approx(getattr(expected, name), rel=1e-6)
    assert summary.relative_bias_max == pytest.approx(expected.relative_bias_max, rel=1e-5)
    assert "Analysis potential" in str(summary)


def test_replicates_equal_to_the_original_give_ap_1():
    df = simulate()
    original = fit_model(df, SPEC)
    summary = replicate_utility(df, lambda r: df["dose"], SPEC, original, n_replicates=3)
    assert summary.analysis_potential == pytest.approx(1.0, rel=1e-9)
    assert summary.abs_relative_bias_mean == pytest.approx(0.0, abs=1e-9)


def test_replicates_may_mask_a_covariate_through_a_data_frame():
    df = simulate()
    original = fit_model(df, SPEC)

    def make(r):
        rng = np.random.default_rng(r)
        noisy = df[["dose", "age"]] + rng.uniform(-0.5, 0.5, (len(df), 2))
        return noisy.assign(dose=noisy["dose"].clip(lower=0))

    summary = replicate_utility(df, make, SPEC, original, n_replicates=2)
    masked = fit_model(df.assign(**make(1)), SPEC)
    assert summary.estimate_max >= masked.estimate - 1e-9
    assert masked.estimate in (
        pytest.approx(summary.estimate_min, rel=1e-6),
        pytest.approx(summary.estimate_max, rel=1e-6),
    )


@pytest.mark.parametrize(
    ("n_replicates", "error", "message"),
    [
        (0, ModelFitError, "at least 1"),
        (-1, ModelFitError, "at least 1"),
        (MAX_REPLICATES + 1, LimitError, "at most 500 are allowed \\(bound 'replicates'\\)"),
    ],
)
def test_replicate_count_is_bounded(n_replicates, error, message):
    df = simulate(200)
    original = fit_model(df, SPEC)
    with pytest.raises(error, match=message):
        replicate_utility(df, lambda r: df["dose"], SPEC, original, n_replicates)


def test_progress_is_reported_after_each_chunk():
    df = simulate(300)
    original = fit_model(df, SPEC)
    calls = []
    replicate_utility(
        df,
        uniform_noise(df, 0.1),
        SPEC,
        original,
        n_replicates=7,
        progress=lambda done, total: calls.append((done, total)),
        chunk_size=3,
    )
    assert calls == [(3, 7), (6, 7), (7, 7)]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda df: lambda r: df[["cancer"]], "not 'cancer'"),
        (lambda df: lambda r: df[["city"]], "not 'city'"),
        (lambda df: lambda r: df["dose"].reset_index(drop=True).iloc[::-1], "index"),
        (lambda df: lambda r: df["dose"].to_numpy()[:-1], "one value per original record"),
        (lambda df: lambda r: df["dose"].where(df.index != 3), "missing or infinite"),
        (lambda df: lambda r: df["dose"].round(1).astype(str), "not numeric"),
        (lambda df: lambda r: [0.1] * len(df), "array, a Series or a DataFrame"),
    ],
)
def test_unusable_replicates_raise(make, message):
    df = simulate(200)
    original = fit_model(df, SPEC)
    with pytest.raises(ModelFitError, match=message):
        replicate_utility(df, make(df), SPEC, original, n_replicates=2)


def test_original_fit_must_belong_to_the_data_and_spec():
    df = simulate(300)
    original = fit_model(df, SPEC)
    other = ModelSpec("cancer", "dose", ("age",))
    with pytest.raises(ModelFitError, match="different model specification"):
        replicate_utility(df, lambda r: df["dose"], other, original, 2)
    with pytest.raises(ModelFitError, match="not fitted to original_df"):
        replicate_utility(df.iloc[:-5], lambda r: df["dose"].iloc[:-5], SPEC, original, 2)


def test_failed_replicates_are_excluded_and_reported():
    df = simulate(300)
    original = fit_model(df, SPEC)

    def make(r):
        return df["dose"] * 0 + 1 if r == 1 else df["dose"]

    summary = replicate_utility(df, make, SPEC, original, n_replicates=3)
    assert (summary.n_replicates, summary.n_failed) == (3, 1)
    assert "1 replicate(s) failed" in str(summary)
    with pytest.raises(ModelFitError, match="every replicate failed"):
        replicate_utility(df, lambda r: df["dose"] * 0, SPEC, original, n_replicates=2)


def test_replicate_summary_follows_cologne_table_2_definitions():
    b, se = 0.5235, 0.1548
    summary = ReplicateSummary.from_replicates(
        b, se, [0.5159, 0.5271, 0.5573], [0.155, 0.1537, 0.1584]
    )
    mse = np.array([0.155, 0.1537, 0.1584]) ** 2 + (np.array([0.5159, 0.5271, 0.5573]) - b) ** 2
    assert summary.mse_mean == pytest.approx(mse.mean())
    assert summary.mse_max == pytest.approx(mse.max())
    assert summary.analysis_potential == pytest.approx(se**2 / mse.mean())
    assert summary.relative_bias_max == pytest.approx((0.5573 - b) / b)
    assert summary.relative_bias_min == pytest.approx((0.5159 - b) / b)
    zero = ReplicateSummary.from_replicates(0.0, se, [0.01], [0.15])
    assert zero.relative_bias_mean is None and "undefined" in str(zero)
