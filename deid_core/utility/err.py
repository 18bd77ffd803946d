"""The linear excess-relative-risk (ERR) odds model of radiation epidemiology,
``odds(y = 1) = exp(a + g'z) * (1 + b * x)``, fitted by maximum likelihood under
``1 + b * x > 0`` for every record: damped Newton-Raphson on the exact Bernoulli
log-likelihood, started from the logistic fit; ``se`` from the observed information.

The iteration limit is the GLM fits' own (:data:`deid_core.utility.glm.MAX_ITERATIONS`).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from deid_core.cancellation import check_cancelled
from deid_core.errors import ModelFitError
from deid_core.utility import glm
from deid_core.utility.glm import ArrayFit, fit_logistic
from deid_core.utility.spec import EXPOSURE_INDEX

#: ERR fit: smallest ``1 + b * x`` over the records that is not the constraint's boundary.
ERR_BOUNDARY_TOL = 1e-6
#: ERR fit: step size and relative log-likelihood change at which Newton-Raphson stops.
ERR_STEP_TOL = 1e-9
ERR_LOGLIK_RTOL = 1e-13


def fit_err(
    X: np.ndarray,
    y: np.ndarray,
    sources: tuple[str, ...] | None,
    start: np.ndarray | None = None,
) -> ArrayFit:
    """Linear ERR odds model ``odds = exp(Z g) (1 + b x)`` by damped Newton-Raphson.

    The log-odds are ``lambda = Z g + log(1 + b x)`` with ``Z`` the design without the
    exposure column ``x``. Each step solves with the observed information when it is
    positive definite, else with the Fisher information (always an ascent direction);
    the step is shortened to stay within 99% of the distance to the constraint's bound on
    ``b`` and halved until the log-likelihood does not decrease. Without ``start`` the
    logistic fit is the starting point (and reports separation). The fit stops when the
    step or the relative log-likelihood change is negligible; it fails if an iterate ends
    on the boundary (``min(1 + b x) < ERR_BOUNDARY_TOL``) or the observed information at
    the estimate is not positive definite.
    """
    x = X[:, EXPOSURE_INDEX]
    name = repr(sources[EXPOSURE_INDEX]) if sources is not None else "the exposure"
    lower = -1.0 / x.max() if (x > 0).any() else -np.inf
    upper = -1.0 / x.min() if (x < 0).any() else np.inf
    if start is None:
        start = fit_logistic(X, y, sources).params
    theta = np.array(start, dtype=float)
    if not lower < theta[EXPOSURE_INDEX] < upper or not np.isfinite(theta).all():
        theta = np.where(np.isfinite(theta), theta, 0.0)
        theta[EXPOSURE_INDEX] = 0.0
    loglik = _err_loglik(theta, X, y)
    converged, iterations = False, 0
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        for it in range(1, glm.MAX_ITERATIONS + 1):
            check_cancelled()  # a fit no longer wanted stops here (deid_core.cancellation)
            iterations = it
            score, fisher, observed = _err_derivatives(theta, X, y)
            direction = _ascent_direction(observed, fisher, score)
            if direction is None:
                break
            t = 1.0
            db = direction[EXPOSURE_INDEX]
            if db < 0 and np.isfinite(lower):
                t = min(t, 0.99 * (theta[EXPOSURE_INDEX] - lower) / -db)
            if db > 0 and np.isfinite(upper):
                t = min(t, 0.99 * (upper - theta[EXPOSURE_INDEX]) / db)
            for _ in range(60):
                candidate = theta + t * direction
                new_loglik = _err_loglik(candidate, X, y)
                if new_loglik >= loglik - 1e-12 * abs(loglik):
                    break
                t /= 2
            else:  # no ascent along the direction: at the optimum to rounding
                converged = bool(score @ direction < 1e-8)
                break
            step = candidate - theta
            change = abs(new_loglik - loglik)
            theta, loglik = candidate, new_loglik
            if np.abs(step).max() < ERR_STEP_TOL * (1 + np.abs(theta).max()) or (
                change <= ERR_LOGLIK_RTOL * abs(loglik)
            ):
                converged = True
                break
    margin = float((1 + theta[EXPOSURE_INDEX] * x).min())
    if margin < ERR_BOUNDARY_TOL or (not converged and margin < 1e-3):
        raise ModelFitError(
            f"the ERR estimate for {name} lies on the boundary 1 + b * dose = 0 (a record's "
            "odds forced to 0), a dose effect more negative than the linear ERR model allows; "
            "use the logistic model instead"
        )
    if not converged or not np.isfinite(theta).all():
        raise ModelFitError(
            f"the ERR model did not converge in {glm.MAX_ITERATIONS} iterations; "
            "check for sparse categories, extreme doses or a dose effect too large to estimate"
        )
    _, _, observed = _err_derivatives(theta, X, y)
    try:
        cov = np.linalg.inv(np.linalg.cholesky(observed))
        bse = np.sqrt((cov**2).sum(axis=0))
    except np.linalg.LinAlgError:
        bse = np.full(theta.size, np.nan)
    if not (np.isfinite(bse).all() and (bse > 0).all()):
        raise ModelFitError(
            "the ERR log-likelihood is flat or not concave at the estimate, so it has no "
            "standard error; check for sparse categories or nearly collinear covariates"
        )
    return ArrayFit(theta, bse, float(-2.0 * loglik), iterations)


def _err_loglik(theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> float:
    """Bernoulli log-likelihood of the ERR odds model; ``-inf`` outside ``1 + b x > 0``."""
    r = 1.0 + theta[EXPOSURE_INDEX] * X[:, EXPOSURE_INDEX]
    if not (r > 0).all():
        return -np.inf
    lam = np.delete(X, EXPOSURE_INDEX, axis=1) @ np.delete(theta, EXPOSURE_INDEX) + np.log(r)
    return float((y * lam - np.logaddexp(0.0, lam)).sum())


def _err_derivatives(theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """Score, Fisher information and observed information of the ERR model at ``theta``.

    With ``J`` the design whose exposure column is replaced by ``x / (1 + b x)`` (the
    derivative of ``lambda``), ``p = expit(lambda)`` and ``w = p (1 - p)``: score
    ``J'(y - p)``, Fisher information ``J' W J``, and observed information the Fisher
    information plus ``sum (y - p) x^2 / (1 + b x)^2`` in the ``(b, b)`` cell.
    """
    x = X[:, EXPOSURE_INDEX]
    r = 1.0 + theta[EXPOSURE_INDEX] * x
    lam = np.delete(X, EXPOSURE_INDEX, axis=1) @ np.delete(theta, EXPOSURE_INDEX) + np.log(r)
    p = expit(lam)
    J = X.copy()
    J[:, EXPOSURE_INDEX] = x / r
    resid = y - p
    score = J.T @ resid
    fisher = (J * (p * (1 - p))[:, None]).T @ J
    observed = fisher.copy()
    observed[EXPOSURE_INDEX, EXPOSURE_INDEX] += float((resid * (x / r) ** 2).sum())
    return score, fisher, observed


def _ascent_direction(
    observed: np.ndarray, fisher: np.ndarray, score: np.ndarray
) -> np.ndarray | None:
    """Newton direction with the observed information if positive definite, else Fisher."""
    for info in (observed, fisher):
        try:
            L = np.linalg.cholesky(info)
        except np.linalg.LinAlgError:
            continue
        direction = np.linalg.solve(L.T, np.linalg.solve(L, score))
        if np.isfinite(direction).all():
            return direction
    return None
