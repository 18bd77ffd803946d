"""Utility models beyond logistic: Poisson with person-time, linear, and the linear ERR model.

Each family is pinned against an independent fit (statsmodels for Poisson and OLS, a
likelihood written out here and minimised by scipy for ERR), every ModelFitError path is
exercised, and non-logistic replicates are checked against a loop of ``fit_model``.
"""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.optimize import minimize

from deid_core.datasets.cohort import TRUE_ERR_PER_GY, synthetic_cohort
from deid_core.errors import ModelFitError
from deid_core.utility import (
    FAMILY_HELP,
    SUPPORTED_FAMILIES,
    ModelSpec,
    fit_model,
    replicate_utility,
)
from deid_core.utility.spec import build_design


def simulate(n: int = 1500, seed: int = 1) -> pd.DataFrame:
    """Dose, age, sex, city, person-time, a count, a numeric outcome and a 0/1 ERR outcome."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "dose": rng.gamma(0.7, 0.9, n),
            "age": rng.normal(50, 10, n),
            "sex": rng.integers(0, 2, n),
            "city": rng.choice(["Hiroshima", "Nagasaki"], n),
            "pyr": rng.uniform(1, 30, n),
        }
    )
    nagasaki = (df["city"] == "Nagasaki").to_numpy()
    rate = np.exp(-4 + 0.3 * df["dose"] + 0.02 * (df["age"] - 50) + 0.2 * df["sex"])
    df["count"] = rng.poisson(df["pyr"] * rate)
    df["bp"] = 120 + 2.5 * df["dose"] + 0.4 * (df["age"] - 50) + 3 * nagasaki
    df["bp"] += rng.normal(0, 8, n)
    odds = np.exp(-2.5 + 0.3 * df["sex"]) * (1 + 0.8 * df["dose"])
    df["case"] = (rng.random(n) < odds / (1 + odds)).astype(int)
    return df


def noisy_dose(df: pd.DataFrame, half_width: float, seed: int = 0):
    def make(r: int) -> pd.Series:
        rng = np.random.default_rng(seed + r)
        return (df["dose"] + rng.uniform(-half_width, half_width, len(df))).clip(lower=0)

    return make


# --- ModelSpec ------------------------------------------------------------------------


def test_formulas_per_family():
    assert ModelSpec("y", "x", ("z",)).formula() == "logit P(y = 1) = a + b * x + g1 * z"
    assert (
        ModelSpec("cancer", "dose", ("city",), family="err").formula()
        == "odds(cancer) = exp(a + g1 * city) * (1 + b * dose)"
    )
    assert ModelSpec("y", "dose", family="err").formula() == "odds(y) = exp(a) * (1 + b * dose)"
    assert (
        ModelSpec("n", "dose", ("age",), family="poisson", offset="pyr").formula()
        == "log E(n) = log(pyr) + a + b * dose + g1 * age"
    )
    assert ModelSpec("n", "dose", family="poisson").formula() == "log E(n) = a + b * dose"
    assert (
        ModelSpec("bp", "dose", ("age", "sex"), family="linear").formula()
        == "E(bp) = a + b * dose + g1 * age + g2 * sex"
    )


def test_family_help_covers_every_family_in_one_line():
    assert (
        set(FAMILY_HELP)
        == set(SUPPORTED_FAMILIES)
        == {
            "logistic",
            "poisson",
            "linear",
            "err",
            "binomial",
            "cox",
        }
    )
    for text in FAMILY_HELP.values():
        assert text and "\n" not in text and " b " in text


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"family": "probit"}, "unsupported model family 'probit'"),
        ({"family": "logistic", "offset": "pyr"}, "offset is only for the poisson family"),
        ({"family": "err", "offset": "pyr"}, "offset is only for the poisson family"),
        ({"family": "linear", "offset": "pyr"}, "offset is only for the poisson family"),
        ({"family": "poisson", "offset": "x"}, "distinct"),
        ({"family": "poisson", "offset": ""}, "offset must be a non-empty"),
        ({"family": "binomial"}, "needs a trials column"),
        ({"family": "logistic", "trials": "n"}, "needs a trials column"),
        ({"family": "binomial", "trials": "x"}, "distinct"),
    ],
)
def test_spec_validation(kwargs, message):
    with pytest.raises(ModelFitError, match=message):
        ModelSpec("y", "x", **kwargs)


def test_offset_is_a_model_column():
    spec = ModelSpec("count", "dose", ("age",), family="poisson", offset="pyr")
    assert spec.columns == ("count", "dose", "age", "pyr")
    assert ModelSpec("count", "dose", family="poisson").offset is None


# --- Poisson --------------------------------------------------------------------------


@pytest.mark.parametrize("offset", ["pyr", None])
def test_poisson_matches_statsmodels_glm(offset):
    df = simulate()
    df.loc[df.index[:7], "age"] = np.nan
    spec = ModelSpec("count", "dose", ("age", "sex", "city"), family="poisson", offset=offset)
    fit = fit_model(df, spec)

    data = df.dropna()
    X = sm.add_constant(
        np.column_stack([data["dose"], data["age"], data["sex"], data["city"] == "Nagasaki"])
    ).astype(float)
    log_t = np.log(data["pyr"].to_numpy()) if offset else None
    ref = sm.GLM(data["count"].to_numpy(), X, family=sm.families.Poisson(), offset=log_t).fit()
    red = sm.GLM(
        data["count"].to_numpy(),
        np.delete(X, 1, axis=1),
        family=sm.families.Poisson(),
        offset=log_t,
    ).fit()
    np.testing.assert_allclose(fit.params, ref.params, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(fit.bse, ref.bse, rtol=1e-6)
    assert fit.estimate == pytest.approx(ref.params[1], rel=1e-7)
    assert fit.se == pytest.approx(ref.bse[1], rel=1e-6)
    assert fit.deviance == pytest.approx(ref.deviance, rel=1e-9)
    assert fit.lr_statistic == pytest.approx(red.deviance - ref.deviance, rel=1e-6)
    assert (fit.n, fit.n_dropped, fit.n_events) == (len(data), 7, int(data["count"].sum()))
    assert fit.param_names == ("Intercept", "dose", "age", "sex", "city[Nagasaki]")
    if offset:  # the true log rate ratio per unit dose is 0.3
        assert abs(fit.estimate - 0.3) < 3 * fit.se
    assert "Poisson regression" in str(fit)


def test_poisson_exposure_argument_equivalent():
    """statsmodels' exposure=pt is the same model as offset=log(pt)."""
    df = simulate(400, seed=3)
    fit = fit_model(df, ModelSpec("count", "dose", family="poisson", offset="pyr"))
    ref = sm.GLM(
        df["count"],
        sm.add_constant(df[["dose"]]),
        family=sm.families.Poisson(),
        exposure=df["pyr"],
    ).fit()
    assert fit.estimate == pytest.approx(ref.params["dose"], rel=1e-7)
    assert fit.se == pytest.approx(ref.bse["dose"], rel=1e-6)


POISSON = ModelSpec("count", "dose", ("age", "city"), family="poisson", offset="pyr")


def _set(column, values):
    return lambda d: d.__setitem__(column, values(d))


POISSON_FAILURES = {
    "negative count": (_set("count", lambda d: d["count"] - 1), "must be a count"),
    "fractional count": (_set("count", lambda d: d["count"] + 0.5), "must be a count"),
    "text count": (_set("count", lambda d: d["count"].astype(str)), "outcome 'count' is not"),
    "no events": (_set("count", lambda d: 0 * d["count"]), "no events"),
    "zero person-time": (_set("pyr", lambda d: d["pyr"].where(d.index > 3, 0.0)), "positive"),
    "negative person-time": (_set("pyr", lambda d: -d["pyr"]), "must be positive"),
    "text person-time": (
        _set("pyr", lambda d: d["pyr"].astype(str)),
        "person-time offset 'pyr' is not numeric",
    ),
    "missing offset column": (lambda d: d.__delitem__("pyr"), "'pyr'"),
    "zero counts in a category": (
        _set("count", lambda d: d["count"].where(d["city"] == "Hiroshima", 0)),
        r"counts are all zero for some records singled out by 'city'",
    ),
}


@pytest.mark.parametrize("case", POISSON_FAILURES, ids=list(POISSON_FAILURES))
def test_poisson_failures(case):
    mutate, message = POISSON_FAILURES[case]
    df = simulate(600)
    mutate(df)
    with pytest.raises(ModelFitError, match=message) as info:
        fit_model(df, POISSON)
    assert "\n" not in str(info.value)


def test_poisson_non_convergence(monkeypatch):
    monkeypatch.setattr("deid_core.utility.glm.MAX_ITERATIONS", 1)
    with pytest.raises(ModelFitError, match="did not converge in 1 iterations"):
        fit_model(simulate(600), POISSON)


# --- linear ---------------------------------------------------------------------------


def test_linear_matches_statsmodels_ols():
    df = simulate()
    spec = ModelSpec("bp", "dose", ("age", "city"), family="linear")
    fit = fit_model(df, spec)
    X = sm.add_constant(np.column_stack([df["dose"], df["age"], df["city"] == "Nagasaki"]))
    ref = sm.OLS(df["bp"].to_numpy(), X.astype(float)).fit()
    red = sm.OLS(df["bp"].to_numpy(), np.delete(X, 1, axis=1).astype(float)).fit()
    np.testing.assert_allclose(fit.params, ref.params, rtol=1e-9)
    np.testing.assert_allclose(fit.bse, ref.bse, rtol=1e-9)
    assert fit.deviance == pytest.approx(ref.ssr, rel=1e-10)
    lr, p, dof = ref.compare_lr_test(red)
    assert dof == 1
    assert fit.lr_statistic == pytest.approx(lr, rel=1e-8)
    assert fit.lr_pvalue == pytest.approx(p, rel=1e-6, abs=1e-300)
    assert fit.n_events == 0
    assert abs(fit.estimate - 2.5) < 3 * fit.se
    assert "Linear regression" in str(fit)


LINEAR_FAILURES = {
    "text outcome": (_set("bp", lambda d: d["bp"].astype(str)), "outcome 'bp' is not numeric"),
    "constant outcome": (_set("bp", lambda d: 0 * d["bp"] + 1), "does not vary"),
    "exact fit": (_set("bp", lambda d: 1 + 2 * d["dose"] - d["age"]), "exact linear function"),
}


@pytest.mark.parametrize("case", LINEAR_FAILURES, ids=list(LINEAR_FAILURES))
def test_linear_failures(case):
    mutate, message = LINEAR_FAILURES[case]
    df = simulate(300)
    mutate(df)
    with pytest.raises(ModelFitError, match=message) as info:
        fit_model(df, ModelSpec("bp", "dose", ("age",), family="linear"))
    assert "\n" not in str(info.value)


def test_linear_needs_more_records_than_coefficients():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"y": rng.normal(size=10), "x": rng.normal(size=10), "g": [*"abcdefghi", "a"]}
    )
    with pytest.raises(ModelFitError, match="10 coefficients but only 10 complete records"):
        fit_model(df, ModelSpec("y", "x", ("g",), family="linear"))


# --- ERR ------------------------------------------------------------------------------


def err_reference(df: pd.DataFrame, outcome: str, dose: str, covariates: list[str]):
    """Independent ERR fit: minimise -log L written out here, SE from a numerical Hessian."""
    y = df[outcome].to_numpy(float)
    x = df[dose].to_numpy(float)
    Z = np.column_stack([np.ones(len(df)), *(df[c].to_numpy(float) for c in covariates)])

    def nll(theta):
        b, g = theta[0], theta[1:]
        r = 1 + b * x
        if np.any(r <= 0):
            return np.inf
        lam = Z @ g + np.log(r)
        return -np.sum(y * lam - np.logaddexp(0, lam))

    start = np.zeros(Z.shape[1] + 1)
    start[1] = np.log(y.mean() / (1 - y.mean()))
    res = minimize(
        nll,
        start,
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 40000, "maxfev": 40000},
    )
    res = minimize(nll, res.x, method="BFGS", options={"gtol": 1e-9})
    theta = res.x
    k, h = theta.size, 1e-4
    H = np.empty((k, k))
    for i in range(k):
        for j in range(k):
            e_i, e_j = np.eye(k)[i] * h, np.eye(k)[j] * h
            H[i, j] = (
                nll(theta + e_i + e_j)
                - nll(theta + e_i - e_j)
                - nll(theta - e_i + e_j)
                + nll(theta - e_i - e_j)
            ) / (4 * h * h)
    se = np.sqrt(np.diag(np.linalg.inv(H)))
    return theta, se, 2 * res.fun


def test_err_matches_an_independent_maximum_likelihood_fit():
    df = simulate()
    fit = fit_model(df, ModelSpec("case", "dose", ("sex", "age"), family="err"))
    theta, se, deviance = err_reference(df, "case", "dose", ["sex", "age"])
    # reference order (b, a, g_sex, g_age); ours (a, b, g_sex, g_age)
    ours = np.array(fit.params)[[1, 0, 2, 3]]
    ours_se = np.array(fit.bse)[[1, 0, 2, 3]]
    np.testing.assert_allclose(ours, theta, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours_se, se, rtol=1e-3)
    assert fit.deviance == pytest.approx(deviance, rel=1e-9)
    logistic_no_dose = sm.GLM(
        df["case"], sm.add_constant(df[["sex", "age"]]), family=sm.families.Binomial()
    ).fit()
    assert fit.lr_statistic == pytest.approx(logistic_no_dose.deviance - fit.deviance, rel=1e-7)
    assert abs(fit.estimate - 0.8) < 3 * fit.se


@pytest.mark.parametrize("covariates", [(), ("sex",)])
def test_err_recovers_the_synthetic_cohorts_true_err(covariates):
    """ERR per Gy within 2 SEs of the truth 0.5; the logistic slope is a different quantity."""
    df = synthetic_cohort()
    err = fit_model(df, ModelSpec("stomach_cancer", "stomach_dose_gy", covariates, family="err"))
    assert abs(err.estimate - TRUE_ERR_PER_GY) < 2 * err.se
    # Observed on the default cohort: 0.7489 (SE 0.3640) without covariates,
    # 0.7590 (SE 0.3672) with sex; the logistic log-odds slope is 0.378 (SE 0.127).
    assert err.estimate == pytest.approx(0.7489 if not covariates else 0.7590, abs=5e-4)
    logistic = fit_model(df, ModelSpec("stomach_cancer", "stomach_dose_gy", covariates))
    assert abs(err.estimate - logistic.estimate) > 0.3
    assert err.n_events == 85


def boundary_data(seed: int = 0) -> pd.DataFrame:
    """Risk falling steeply with dose: the ERR optimum is at b = -1 / max(dose)."""
    rng = np.random.default_rng(seed)
    dose = rng.uniform(0, 1, 400)
    case = (rng.random(400) < 0.5 * (1 - dose) ** 3).astype(int)
    case[np.argmax(dose)] = 0
    return pd.DataFrame({"case": case, "dose": dose})


ERR_FAILURES = {
    "count outcome": (_set("case", lambda d: 2 * d["case"]), None, "must be coded 0/1"),
    "no events": (_set("case", lambda d: 0 * d["case"]), None, "no events"),
    "separation": (
        _set("case", lambda d: (d["age"] > 50).astype(int)),
        ("age",),
        r"by 'age' \(separation\)",
    ),
}


@pytest.mark.parametrize("case", ERR_FAILURES, ids=list(ERR_FAILURES))
def test_err_failures(case):
    mutate, covariates, message = ERR_FAILURES[case]
    df = simulate(300)
    mutate(df)
    with pytest.raises(ModelFitError, match=message) as info:
        fit_model(df, ModelSpec("case", "dose", covariates or ("sex",), family="err"))
    assert "\n" not in str(info.value)


def test_err_boundary_solution_is_reported():
    df = boundary_data()
    with pytest.raises(ModelFitError, match=r"'dose' lies on the boundary 1 \+ b \* dose = 0"):
        fit_model(df, ModelSpec("case", "dose", family="err"))
    # the logistic model has an ordinary finite (negative) slope on the same data
    assert fit_model(df, ModelSpec("case", "dose")).estimate < 0


def test_err_non_convergence(monkeypatch):
    monkeypatch.setattr("deid_core.utility.glm.MAX_ITERATIONS", 1)
    with pytest.raises(ModelFitError, match="did not converge in 1 iterations"):
        fit_model(simulate(600), ModelSpec("case", "dose", ("sex",), family="err"))


def test_err_negative_dose_values_are_constrained_both_ways():
    """With doses of both signs 1 + b x > 0 bounds b on both sides; the fit still matches."""
    df = simulate(800)
    df["dose"] = df["dose"] - 0.2
    fit = fit_model(df, ModelSpec("case", "dose", family="err"))
    theta, se, _ = err_reference(df, "case", "dose", [])
    assert fit.estimate == pytest.approx(theta[0], rel=1e-4)
    assert fit.se == pytest.approx(se[0], rel=1e-3)


# --- replicates -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        ModelSpec("count", "dose", ("age", "city"), family="poisson", offset="pyr"),
        ModelSpec("bp", "dose", ("age",), family="linear"),
        ModelSpec("case", "dose", ("sex",), family="err"),
    ],
    ids=lambda s: s.family,
)
def test_replicates_agree_with_a_loop_of_fit_model(spec):
    df = simulate(800)
    make = noisy_dose(df, 0.5, seed=11)
    original = fit_model(df, spec)
    calls = []
    summary = replicate_utility(
        df,
        make,
        spec,
        original,
        n_replicates=7,
        chunk_size=3,
        progress=lambda done, total: calls.append((done, total)),
    )
    loop = []
    for r in range(7):
        masked = df.copy()
        masked["dose"] = make(r)
        loop.append(fit_model(masked, spec))
    b = np.array([f.estimate for f in loop])
    se = np.array([f.se for f in loop])
    np.testing.assert_allclose(summary.estimates, b, rtol=1e-6, atol=1e-9)
    assert summary.se_mean == pytest.approx(se.mean(), rel=1e-6)
    assert summary.mse_mean == pytest.approx(
        np.mean(se**2 + (b - original.estimate) ** 2), rel=1e-6
    )
    assert summary.n_failed == 0 and summary.n_replicates == 7
    assert calls == [(3, 7), (6, 7), (7, 7)]


def test_err_replicates_that_fail_are_counted():
    """A replicate whose fit raises counts as failed, as for separated logistic replicates."""
    df = simulate(400)
    spec = ModelSpec("case", "dose", family="err")
    original = fit_model(df, spec)

    def make(r: int) -> np.ndarray:
        if r == 1:  # masked to a constant: b is not identified, the fit fails
            return df["dose"].to_numpy() * 0 + 0.5
        return df["dose"].to_numpy()

    summary = replicate_utility(df, make, spec, original, n_replicates=3)
    assert summary.n_failed == 1
    assert summary.estimate_mean == pytest.approx(original.estimate, rel=1e-6)


@pytest.mark.parametrize(
    "spec",
    [
        ModelSpec("case", "dose", ("sex",), family="err"),
        ModelSpec("bp", "dose", ("sex",), family="linear"),
        ModelSpec("count", "dose", ("sex",), family="poisson", offset="pyr"),
        ModelSpec("case", "dose", ("sex",), family="logistic"),
    ],
    ids=lambda spec: spec.family,
)
def test_replicates_with_an_unidentified_exposure_fail_in_every_family(spec):
    """A replicate whose exposure is collinear with the intercept (masked to a constant)
    has no estimate, as the original data would have none: it counts as failed instead of
    reporting a point on a flat ridge of the likelihood."""
    df = simulate(400)
    original = fit_model(df, spec)

    def make(r: int) -> np.ndarray:
        return np.full(len(df), 0.5) if r in (1, 2) else df["dose"].to_numpy()

    summary = replicate_utility(df, make, spec, original, n_replicates=4)
    assert summary.n_failed == 2
    assert summary.estimate_mean == pytest.approx(original.estimate, rel=1e-6)
    with pytest.raises(ModelFitError, match="does not vary"):  # as on the original data
        fit_model(df.assign(dose=0.5), spec)


def test_build_design_keeps_log_person_time():
    df = simulate(100)
    df.loc[df.index[0], "pyr"] = np.nan
    design = build_design(df, POISSON)
    assert design.n_dropped == 1
    np.testing.assert_allclose(design.offset, np.log(df["pyr"].to_numpy()[1:]))
    assert build_design(df, ModelSpec("case", "dose", family="err")).offset is None


def grouped_counts(seed: int = 4, n_groups: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n_groups)
    z = rng.integers(0, 2, n_groups)
    trials = rng.integers(20, 200, n_groups)
    p = 1 / (1 + np.exp(-(-2.0 + 0.4 * x + 0.3 * z)))
    return pd.DataFrame({"x": x, "z": z, "n": trials, "deaths": rng.binomial(trials, p)})


def test_binomial_counts_match_the_expanded_logistic_fit():
    """Events out of trials per row give the same b and SE as the 0/1 records they stand
    for (an independent check: statsmodels' logistic fit of the expanded data)."""
    df = grouped_counts()
    spec = ModelSpec("deaths", "x", ("z",), family="binomial", trials="n")
    assert spec.formula() == "logit P(deaths of n) = a + b * x + g1 * z"
    fit = fit_model(df, spec)
    rows = df.loc[df.index.repeat(df["n"])].reset_index(drop=True)
    events = np.concatenate(
        [np.r_[np.ones(d), np.zeros(n - d)] for d, n in zip(df["deaths"], df["n"], strict=True)]
    )
    expanded = sm.GLM(
        events, sm.add_constant(rows[["x", "z"]].to_numpy()), family=sm.families.Binomial()
    ).fit()
    assert fit.estimate == pytest.approx(expanded.params[1], rel=1e-7)
    assert fit.se == pytest.approx(expanded.bse[1], rel=1e-6)
    assert fit.n_events == int(df["deaths"].sum())
    # The LR statistic against the model without x equals the expanded one.
    reduced = sm.GLM(
        events, sm.add_constant(rows[["z"]].to_numpy()), family=sm.families.Binomial()
    ).fit()
    assert fit.lr_statistic == pytest.approx(2 * (expanded.llf - reduced.llf), rel=1e-6)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.assign(deaths=d["n"] + 1), "exceeds the trials"),
        (lambda d: d.assign(n=0), "positive whole numbers"),
        (lambda d: d.assign(deaths=0), "no events"),
        (lambda d: d.assign(deaths=d["deaths"] + 0.5), "must be a count"),
    ],
)
def test_binomial_counts_bad_input(change, message):
    spec = ModelSpec("deaths", "x", family="binomial", trials="n")
    with pytest.raises(ModelFitError, match=message):
        fit_model(change(grouped_counts()), spec)


def test_fractional_outcome_only_when_asked_and_fitted_by_quasi_likelihood():
    rng = np.random.default_rng(8)
    n = 500
    x = rng.normal(size=n)
    share = 1 / (1 + np.exp(-(0.2 + 0.7 * x + rng.normal(0, 0.3, n))))  # smoothed 0/1
    counts = np.exp(0.5 + 0.3 * x) + rng.uniform(0, 0.2, n)  # smoothed counts
    df = pd.DataFrame({"x": x, "share": share, "count": counts})
    with pytest.raises(ModelFitError, match="coded 0/1"):
        fit_model(df, ModelSpec("share", "x"))
    with pytest.raises(ModelFitError, match="must be a count"):
        fit_model(df, ModelSpec("count", "x", family="poisson"))
    logistic = fit_model(df, ModelSpec("share", "x", fractional_outcome=True))
    reference = sm.GLM(share, sm.add_constant(x), family=sm.families.Binomial()).fit()
    assert logistic.estimate == pytest.approx(reference.params[1], rel=1e-7)
    assert logistic.estimate == pytest.approx(0.7, rel=0.15)
    poisson = fit_model(df, ModelSpec("count", "x", family="poisson", fractional_outcome=True))
    reference = sm.GLM(counts, sm.add_constant(x), family=sm.families.Poisson()).fit()
    assert poisson.estimate == pytest.approx(reference.params[1], rel=1e-7)
    with pytest.raises(ModelFitError, match="between 0 and 1"):
        fit_model(
            df.assign(share=df["share"] + 1), ModelSpec("share", "x", fractional_outcome=True)
        )
