"""A model fit whose result is no longer wanted stops between iterations (a closed tab, a
stale job: deid_core.cancellation), and a fit nobody cancels gives statsmodels' own figures."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from counting_check import CountingCheck

from deid_core.cancellation import cancellable
from deid_core.errors import Cancelled
from deid_core.utility.cox import fit_cox
from deid_core.utility.err import fit_err
from deid_core.utility.glm import DEVIANCE_TOL, MAX_ITERATIONS, fit_logistic, fit_poisson
from deid_core.utility.replicates import fit_logistic_replicates


def _data(seed: int = 3, n: int = 2000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    X = np.column_stack([np.ones(n), x])
    y = (rng.random(n) < 1 / (1 + np.exp(-(-1 + 0.8 * x)))).astype(float)
    counts = rng.poisson(np.exp(0.2 + 0.5 * x)).astype(float)
    return X, y, counts


@pytest.mark.parametrize("family", ["logistic", "poisson"])
def test_a_fit_checks_once_per_iteration_and_matches_statsmodels(family):
    X, y, counts = _data()
    check = CountingCheck()
    with cancellable(check):
        if family == "logistic":
            fit = fit_logistic(X, y, None)
            ours, iterations = fit, fit.fit_history["iteration"]
        else:
            ours = fit_poisson(X, counts, None, None)
            iterations = ours.iterations
    reference_family = sm.families.Binomial() if family == "logistic" else sm.families.Poisson()
    reference = sm.GLM(y if family == "logistic" else counts, X, family=reference_family).fit(
        maxiter=MAX_ITERATIONS, tol=DEVIANCE_TOL
    )
    np.testing.assert_array_equal(ours.params, reference.params)
    np.testing.assert_array_equal(ours.bse, reference.bse)
    # One check per IRLS iteration (statsmodels computes the weights once per iteration).
    assert check.calls >= iterations >= 2


def test_a_cancelled_fit_stops_at_its_next_iteration():
    X, y, _ = _data()
    check = CountingCheck(stop_at=2)
    with cancellable(check), pytest.raises(Cancelled, match="the session ended"):
        fit_logistic(X, y, None)
    assert check.calls == 2


def _survival(seed: int = 4, n: int = 400) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 1))
    time = rng.exponential(np.exp(-0.5 * x[:, 0]))
    event = (rng.random(n) < 0.7).astype(float)
    return x, time, event


def _err_data(seed: int = 5, n: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    dose = rng.uniform(0, 2, n)
    odds = np.exp(-2.0) * (1 + 0.8 * dose)
    y = (rng.random(n) < odds / (1 + odds)).astype(float)
    return np.column_stack([np.ones(n), dose]), y


@pytest.mark.parametrize("model", ["cox", "err"])
def test_the_cox_and_err_fits_check_each_iteration_and_stop_when_cancelled(model):
    def fit():
        if model == "cox":
            return fit_cox(*_survival())
        # From a given start: the logistic fit that would start it checks on its own.
        return fit_err(*_err_data(), None, start=np.array([-2.0, 0.5]))

    counting = CountingCheck()
    with cancellable(counting):
        result = fit()
    assert counting.calls >= result.iterations >= 2
    np.testing.assert_array_equal(fit().params, result.params)  # the check changes nothing
    stopping = CountingCheck(stop_at=2)
    with cancellable(stopping), pytest.raises(Cancelled, match="the session ended"):
        fit()
    assert stopping.calls == 2


# ------------------------------------------------------------- replicates' vectorised fit
def _replicates(n: int = 3000, n_rep: int = 7) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """A logistic design (intercept, exposure, sex), the original fit's coefficients, and
    ``n_rep`` replicates of the exposure with uniform noise."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=n)
    sex = rng.integers(0, 2, n).astype(float)
    X = np.column_stack([np.ones(n), x, sex])
    y = (rng.random(n) < 1 / (1 + np.exp(-(-1 + 0.7 * x + 0.4 * sex)))).astype(float)
    start = fit_logistic(X, y, None).params
    noisy = x[None, :] + rng.uniform(-0.5, 0.5, size=(n_rep, n))
    return X, y, start, {1: noisy}


def test_the_replicates_fit_checks_each_newton_pass_and_gives_the_same_figures():
    X, y, start, varying = _replicates()
    plain = fit_logistic_replicates(X, y, start, varying=varying)
    check = CountingCheck()
    with cancellable(check):
        checked = fit_logistic_replicates(X, y, start, varying=varying)
    for name in ("params", "bse", "deviance", "iterations", "converged", "separated"):
        np.testing.assert_array_equal(getattr(checked, name), getattr(plain, name))
    assert plain.converged.all()
    # One block here (BLOCK_ELEMENTS // 3000 = 21 replicates >= 7): one check per pass, and a
    # pass per iteration of the slowest replicate plus the pass that finds it converged.
    assert check.calls == plain.iterations.max() + 1


def test_a_cancelled_replicates_fit_stops_at_its_next_pass():
    X, y, start, varying = _replicates()
    check = CountingCheck(stop_at=2)
    with cancellable(check), pytest.raises(Cancelled):
        fit_logistic_replicates(X, y, start, varying=varying)
    assert check.calls == 2
