"""The vectorised replicate fitter: its kernel, threads, chunking and extrapolated start."""

import threading

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.special import expit

from deid_core.utility import ModelSpec, fit_logistic_replicates, fit_model, replicate_utility
from deid_core.utility import replicates as replicates_module
from deid_core.utility.replicates import ETA_FLOOR, _ChunkFitter
from deid_core.utility.spec import build_design

SPEC = ModelSpec("cancer", "dose", ("sex", "city"))


def cohort(n: int = 1500, seed: int = 1) -> pd.DataFrame:
    """Dose, two categorical covariates and a binary outcome."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "dose": rng.gamma(0.6, 0.8, n),
            "sex": rng.integers(0, 2, n),
            "city": rng.choice(["Hiroshima", "Nagasaki"], n),
        }
    )
    eta = -2.0 + 0.6 * df["dose"] + 0.4 * df["sex"]
    df["cancer"] = (rng.random(n) < expit(eta)).astype(int)
    return df


def noisy_doses(df: pd.DataFrame, n_rep: int, half_width: float = 0.2) -> np.ndarray:
    """``n_rep`` replicates of the dose with uniform noise, floored at 0, shape (R, n)."""
    rng = np.random.default_rng(7)
    noise = rng.uniform(-half_width, half_width, (n_rep, len(df)))
    return np.maximum(df["dose"].to_numpy() + noise, 0.0)


def test_kernel_matches_direct_formulas_including_the_eta_floor():
    rng = np.random.default_rng(0)
    n = 300
    shared = np.column_stack([np.ones(n), rng.integers(0, 2, n), rng.normal(size=n)])
    y = (rng.random(n) < 0.4).astype(float)
    Z = rng.normal(size=(3, 1, n))
    Z[:, 0, :4] = -900.0  # eta far below ETA_FLOOR, for records with y = 0 and y = 1
    y[:2], y[2:4] = 0.0, 1.0
    beta = np.array([[0.3, -0.2, 0.5, 1.0], [-1.0, 0.4, 0.1, 0.8], [0.0, 0.0, 0.0, 1.2]])
    start = np.zeros(4)
    fitter = _ChunkFitter(shared, np.arange(3), np.array([3]), y, start, 50, 1e-10, 1e-12)
    order = fitter.order
    info, score, deviance, w = fitter._evaluate(Z[:, :, order], beta)
    for r in range(3):
        X = np.column_stack([shared, Z[r, 0]])
        eta = X @ beta[r]
        assert eta.min() < ETA_FLOOR
        mu = expit(eta)
        np.testing.assert_allclose(info[r], X.T @ ((mu * (1 - mu))[:, None] * X), rtol=1e-12)
        np.testing.assert_allclose(score[r], X.T @ (y - mu), rtol=1e-10, atol=1e-12)
        expected = 2 * (np.logaddexp(0.0, eta) - y * eta).sum()
        assert deviance[r] == pytest.approx(expected, rel=1e-13)
        np.testing.assert_allclose(w[r], (mu * (1 - mu))[order], rtol=1e-12, atol=1e-300)


def test_fits_with_grouped_covariates_agree_with_statsmodels():
    df = cohort()
    design = build_design(df, SPEC)
    doses = noisy_doses(df, 5)
    start = np.asarray(fit_model(df, SPEC).params)
    fits = fit_logistic_replicates(design.X, design.y, start, varying={1: doses})
    assert fits.ok.all()
    for r, dose in enumerate(doses):
        X = design.X.copy()
        X[:, 1] = dose
        ref = sm.GLM(design.y, X, family=sm.families.Binomial()).fit(tol=1e-12)
        np.testing.assert_allclose(fits.params[r], ref.params, rtol=1e-8)
        np.testing.assert_allclose(fits.bse[r], ref.bse, rtol=1e-6)
        assert fits.deviance[r] == pytest.approx(ref.deviance, rel=1e-10)


def test_extrapolated_start_is_near_each_replicate_fit_and_does_not_change_it():
    df = cohort()
    design = build_design(df, SPEC)
    doses = noisy_doses(df, 6, half_width=0.05)
    start = np.asarray(fit_model(df, SPEC).params)
    shared = fit_logistic_replicates(design.X, design.y, start, varying={1: doses})
    full = np.repeat(design.X[None], len(doses), axis=0)
    full[:, :, 1] = doses
    plain = fit_logistic_replicates(full, design.y, start)  # no base data: start as given
    np.testing.assert_allclose(shared.params, plain.params, rtol=1e-10)
    np.testing.assert_allclose(shared.bse, plain.bse, rtol=1e-8)
    fixed = np.array([0, 2, 3])
    fitter = _ChunkFitter(
        design.X[:, fixed],
        fixed,
        np.array([1]),
        design.y,
        start,
        50,
        1e-10,
        1e-12,
        design.X[:, [1]].T,
    )
    initial = fitter._initial(doses[:, None, fitter.order])
    moved = np.abs(shared.params - start).max(axis=1)
    assert (np.abs(shared.params - initial).max(axis=1) < 0.7 * moved).all()
    far = fitter._initial(10 * doses[:1, None, fitter.order])  # beyond EXTRAPOLATION_LIMIT
    np.testing.assert_array_equal(far[0], start)


def test_chunks_and_blocks_do_not_change_the_results(monkeypatch):
    df = cohort()
    design = build_design(df, SPEC)
    doses = noisy_doses(df, 23)
    start = np.asarray(fit_model(df, SPEC).params)
    monkeypatch.setattr(replicates_module, "BLOCK_ELEMENTS", 4 * len(df))  # 4 per block

    def fit(**kwargs):
        return fit_logistic_replicates(design.X, design.y, start, varying={1: doses}, **kwargs)

    one = fit()
    whole = fit(chunk_size=23)
    for name in ("params", "bse", "deviance", "iterations", "converged", "separated"):
        np.testing.assert_array_equal(getattr(whole, name), getattr(one, name))
    chunked = fit(chunk_size=5)
    np.testing.assert_allclose(chunked.params, one.params, rtol=1e-13)
    np.testing.assert_allclose(chunked.bse, one.bse, rtol=1e-13)
    np.testing.assert_array_equal(chunked.iterations, one.iterations)
    with pytest.raises(ValueError, match="chunk_size"):
        fit(chunk_size=0)


def test_replicate_utility_reports_progress_from_the_calling_thread():
    df = cohort()
    original = fit_model(df, SPEC)
    doses = noisy_doses(df, 7)
    calls = []

    def progress(done: int, total: int) -> None:
        calls.append((done, total, threading.get_ident()))

    def make(r: int) -> pd.Series:
        return pd.Series(doses[r], index=df.index)

    summary = replicate_utility(df, make, SPEC, original, 7, progress, chunk_size=3)
    single = replicate_utility(df, make, SPEC, original, 7, chunk_size=7)
    assert [(d, t) for d, t, _ in calls] == [(3, 7), (6, 7), (7, 7)]
    assert {ident for *_, ident in calls} == {threading.get_ident()}
    assert summary.estimates == pytest.approx(single.estimates, rel=1e-12)
    assert summary.analysis_potential == pytest.approx(single.analysis_potential, rel=1e-12)


def test_binomial_counts_replicates_are_fitted_with_their_trials():
    """Grouped counts (events out of trials) under exposure noise: each replicate's fit is
    the one statsmodels gives for that replicate's masked exposure."""
    rng = np.random.default_rng(21)
    n = 200
    df = pd.DataFrame({"x": rng.normal(size=n), "n": rng.integers(20, 100, n)})
    df["deaths"] = rng.binomial(df["n"], 1 / (1 + np.exp(-(-2 + 0.5 * df["x"]))))
    spec = ModelSpec("deaths", "x", family="binomial", trials="n")
    original = fit_model(df, spec)

    def noisy(r: int) -> np.ndarray:
        return df["x"].to_numpy() + np.random.default_rng([5, r]).uniform(-0.2, 0.2, n)

    summary = replicate_utility(df, noisy, spec, original, n_replicates=4)
    expected = [
        sm.GLM(
            np.column_stack([df["deaths"], df["n"] - df["deaths"]]),
            sm.add_constant(noisy(r)),
            family=sm.families.Binomial(),
        )
        .fit()
        .params[1]
        for r in range(4)
    ]
    np.testing.assert_allclose(summary.estimates, expected, rtol=1e-6)
