"""The Cox proportional-hazards model of the time to an event, fitted with statsmodels' ``PHReg``.

The hazard of record ``i`` at time ``t`` is ``h(t | x_i) = h0(t) exp(x_i' beta)`` with an
unspecified baseline hazard ``h0`` (Cox 1972); ``beta`` maximises the partial likelihood

    L(beta) = prod over event times t_j of exp(s_j' beta) / [sum_{i in R(t_j)} exp(x_i' beta)]^d_j

(``R(t_j)`` the records still at risk at ``t_j``, ``d_j`` the events at ``t_j`` and ``s_j``
the sum of their covariates), with Breslow's handling of tied event times, or Efron's (1977)
closer approximation ``prod_{k=0}^{d_j - 1} [sum_{R} exp(x' beta) - k/d_j sum_{D_j}
exp(x' beta)]`` in the denominator. ``exp(beta_j)`` is the hazard ratio per unit of column
``j``. Standard errors come from the inverse observed information; the deviance reported is
``-2 log L(beta)`` (partial likelihood). The likelihood and its derivatives are statsmodels'
``PHReg``'s; :func:`fit_cox` maximises them with step halving.

Every failure is a one-line :class:`~deid_core.errors.ModelFitError`: a fit that does not
converge or whose estimate runs off to infinity (monotone likelihood: e.g. a category in
which no event happens, the Cox analogue of separation) is reported as such.
"""

from __future__ import annotations

import warnings

import numpy as np
from statsmodels.duration.hazard_regression import PHReg

from deid_core.cancellation import check_cancelled
from deid_core.errors import ModelFitError
from deid_core.utility.glm import FIT_ERRORS, MAX_ITERATIONS, ArrayFit

#: Largest ``|beta_j| * SD(x_j)`` accepted: a hazard ratio of e^15 per standard deviation of
#: a column is a partial likelihood still rising towards infinity, not an estimate.
MAX_STANDARDISED_COEFFICIENT = 15.0
#: Step halvings tried before a Newton step is given up as making no progress.
MAX_HALVINGS = 30
#: Relative change of the log partial likelihood at which the fit has converged.
LOGLIK_RTOL = 1e-12


def fit_cox(
    X: np.ndarray,
    time: np.ndarray,
    event: np.ndarray,
    ties: str = "breslow",
    sources: tuple[str, ...] | None = None,
    start: np.ndarray | None = None,
) -> ArrayFit:
    """Cox model of ``time`` with 0/1 ``event`` on the columns of ``X`` (no intercept).

    The partial likelihood, its score and its Hessian are statsmodels' ``PHReg``'s; they are
    maximised by Newton-Raphson with step halving (as R's ``coxph`` does), from ``start``
    (default zeros): plain Newton (``PHReg.fit``) overshoots on a skewed covariate such as
    pbc's bilirubin and ends in overflow. A step is halved, up to ``MAX_HALVINGS`` times,
    until the log partial likelihood does not fall; the fit has converged when a full step
    changes it by less than ``LOGLIK_RTOL`` relatively. Standard errors are the square roots
    of the diagonal of the inverse observed information ``-H^-1`` at the estimate.

    Raises
    ------
    ModelFitError
        If the fit fails numerically, does not converge within ``MAX_ITERATIONS`` steps, or
        its estimate diverges (monotone likelihood), naming the column when ``sources`` is
        given.
    """
    model = PHReg(time, X, status=event, ties=ties)
    beta = np.zeros(X.shape[1]) if start is None else np.array(start, dtype=float)
    converged, iterations = False, 0
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            loglik = float(model.loglike(beta))
            if not np.isfinite(loglik):
                beta = np.zeros(X.shape[1])
                loglik = float(model.loglike(beta))
            for step_number in range(1, MAX_ITERATIONS + 1):
                check_cancelled()  # a fit no longer wanted stops here (deid_core.cancellation)
                iterations = step_number
                step = np.linalg.solve(-model.hessian(beta), model.score(beta))
                for _ in range(MAX_HALVINGS):
                    trial = beta + step
                    trial_loglik = float(model.loglike(trial))
                    if np.isfinite(trial_loglik) and trial_loglik >= loglik - 1e-12 * abs(loglik):
                        break
                    step = step / 2
                else:
                    break
                change = trial_loglik - loglik
                beta, loglik = trial, trial_loglik
                if abs(change) <= LOGLIK_RTOL * abs(loglik) and np.abs(step).max() < 1e-6 * max(
                    1.0, float(np.abs(beta).max())
                ):
                    converged = True
                    break
            bse = np.sqrt(np.diag(np.linalg.inv(-model.hessian(beta))))
        except FIT_ERRORS as exc:
            raise ModelFitError(
                f"the Cox model fit failed numerically ({type(exc).__name__}); check for "
                "extreme values or nearly collinear covariates"
            ) from exc
    spread = X.std(axis=0)
    diverged = ~np.isfinite(beta) | (np.abs(beta) * spread > MAX_STANDARDISED_COEFFICIENT)
    if diverged.any():
        involved = (
            ", ".join(repr(sources[j]) for j in dict.fromkeys(np.flatnonzero(diverged)))
            if sources is not None
            else "a covariate"
        )
        raise ModelFitError(
            f"the Cox model has no finite estimate for {involved} (monotone likelihood: e.g. a "
            "category in which no event happens); merge sparse categories or drop the variable"
        )
    if not (converged and np.isfinite(bse).all() and (bse > 0).all()):
        raise ModelFitError(
            f"the Cox model did not converge in {MAX_ITERATIONS} iterations; check for sparse "
            "categories or extreme values"
        )
    return ArrayFit(beta, bse, -2.0 * loglik, iterations)


def cox_null_deviance(time: np.ndarray, event: np.ndarray, ties: str = "breslow") -> float:
    """``-2 log L(0)``: the partial likelihood with no covariates (every hazard ratio 1)."""
    model = PHReg(time, np.zeros((time.size, 1)), status=event, ties=ties)
    return -2.0 * float(model.loglike(np.zeros(1)))
