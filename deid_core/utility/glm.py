"""Fits of the generalised linear families on a design matrix, with the checks that turn every
way a fit can fail into a one-line :class:`~deid_core.errors.ModelFitError`.

Logistic (binomial GLM, logit link), Poisson (log link, optional offset) and binomial counts
are fitted by IRLS with statsmodels; linear by ordinary least squares. A logistic fit showing
signs of separation is checked for it exactly by a linear programme
(:func:`separating_columns`), a Poisson fit for a covariate pattern with no events
(:func:`zero_count_columns`), so that the message says which column is at fault.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np
import statsmodels.api as sm
from scipy.optimize import linprog
from statsmodels.genmod.generalized_linear_model import GLMResults
from statsmodels.tools.sm_exceptions import PerfectSeparationError, PerfectSeparationWarning

from deid_core.cancellation import check_cancelled
from deid_core.errors import ModelFitError
from deid_core.utility.spec import INTERCEPT

#: Iteration limit of the IRLS fit.
MAX_ITERATIONS = 100
#: Absolute change in deviance at which the IRLS fit stops.
DEVIANCE_TOL = 1e-10
#: A fitted ``mu (1 - mu)`` below this (``|eta|`` above about 18) prompts a separation check.
EXTREME_WEIGHT = 1e-8
#: Smallest objective of the separation linear programme that counts as separation.
_SEPARATION_TOL = 1e-7
#: Linear model: residual sum of squares below this share of the total is an exact fit.
EXACT_FIT_RTOL = 1e-12

#: Exceptions a statsmodels fit raises when the data defeat it numerically.
FIT_ERRORS = (
    PerfectSeparationError,
    np.linalg.LinAlgError,
    ValueError,
    FloatingPointError,
    OverflowError,
)


class _Cancellable:
    """A statsmodels family whose IRLS fit can be cancelled: statsmodels computes the working
    weights once per iteration, and :func:`~deid_core.cancellation.check_cancelled` is called
    there first, so a fit whose result is no longer wanted (its browser tab was closed, its job
    went stale) stops after the current iteration (about 0.1 s of CPU at 200,000 records)
    instead of after the whole fit. The figures are statsmodels' own, unchanged."""

    def weights(self, mu: np.ndarray) -> np.ndarray:
        check_cancelled()
        return super().weights(mu)  # type: ignore[misc]


class _Binomial(_Cancellable, sm.families.Binomial):
    """statsmodels' binomial family (logit link), cancellable between IRLS iterations."""


class _Poisson(_Cancellable, sm.families.Poisson):
    """statsmodels' Poisson family (log link), cancellable between IRLS iterations."""


def _numerical_failure(exc: BaseException) -> ModelFitError:
    """The message for a fit that failed numerically (the exception's type, no values)."""
    return ModelFitError(
        f"the model fit failed numerically ({type(exc).__name__}); "
        "check for extreme values or nearly collinear covariates"
    )


class ArrayFit(NamedTuple):
    """A fit on arrays: coefficients, standard errors, deviance and iterations."""

    params: np.ndarray
    bse: np.ndarray
    deviance: float
    iterations: int


def fit_logistic(
    X: np.ndarray,
    y: np.ndarray,
    sources: tuple[str, ...] | None,
    start: np.ndarray | None = None,
) -> GLMResults:
    """Binomial-logit GLM by IRLS; every failure becomes a ModelFitError.

    A fit that warns of perfect prediction, does not converge, fails numerically or has
    fitted probabilities numerically 0 or 1 (``mu (1 - mu) < EXTREME_WEIGHT``) is checked
    for separation with :func:`separating_columns` (when ``sources`` names the columns),
    so that separation is reported as such rather than as a numerical failure.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = sm.GLM(y, X, family=_Binomial()).fit(
                maxiter=MAX_ITERATIONS, tol=DEVIANCE_TOL, start_params=start
            )
        except FIT_ERRORS as exc:
            _raise_if_separated(X, y, sources)
            raise _numerical_failure(exc) from exc
    finite = np.isfinite(result.params).all() and np.isfinite(result.bse).all()
    suspect = (
        any(issubclass(w.category, PerfectSeparationWarning) for w in caught)
        or not result.converged
        or not finite
        or (result.mu * (1 - result.mu)).min() < EXTREME_WEIGHT
    )
    if suspect:
        _raise_if_separated(X, y, sources)
    _require_usable_fit(result, finite)
    return result


def _raise_if_separated(X: np.ndarray, y: np.ndarray, sources: tuple[str, ...] | None) -> None:
    """Raise a ModelFitError naming the separating columns, if the outcome is separated."""
    if sources is None or not np.isin(y, (0.0, 1.0)).all():
        return  # a fractional (smoothed) outcome cannot be separated
    separating = separating_columns(X, y)
    if not separating:
        return
    involved = ", ".join(
        repr(c) for c in dict.fromkeys(sources[j] for j in separating) if c != INTERCEPT
    )
    raise ModelFitError(
        f"the outcome is perfectly predicted for some records by {involved} (separation), "
        "so the model has no finite estimate; merge sparse categories or drop the variable"
    )


def fit_poisson(
    X: np.ndarray,
    y: np.ndarray,
    offset: np.ndarray | None,
    sources: tuple[str, ...] | None,
    start: np.ndarray | None = None,
) -> ArrayFit:
    """Poisson GLM with log link (and offset) by IRLS; every failure is a ModelFitError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = sm.GLM(y, X, family=_Poisson(), offset=offset).fit(
                maxiter=MAX_ITERATIONS, tol=DEVIANCE_TOL, start_params=start
            )
        except FIT_ERRORS as exc:
            _raise_if_zero_counts(X, y, sources)
            raise _numerical_failure(exc) from exc
    finite = np.isfinite(result.params).all() and np.isfinite(result.bse).all()
    zero = y == 0
    if (
        not result.converged
        or not finite
        or (zero.any() and result.mu[zero].min() < EXTREME_WEIGHT)
    ):
        _raise_if_zero_counts(X, y, sources)
    _require_usable_fit(result, finite)
    return ArrayFit(
        result.params, result.bse, float(result.deviance), int(result.fit_history["iteration"])
    )


def fit_binomial_counts(
    X: np.ndarray, y: np.ndarray, trials: np.ndarray, start: np.ndarray | None = None
) -> ArrayFit:
    """Binomial GLM (logit link) of ``y`` events out of ``trials`` by IRLS, as statsmodels'
    two-column (events, non-events) form; every failure is a ModelFitError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = sm.GLM(np.column_stack([y, trials - y]), X, family=_Binomial()).fit(
                maxiter=MAX_ITERATIONS, tol=DEVIANCE_TOL, start_params=start
            )
        except FIT_ERRORS as exc:
            raise _numerical_failure(exc) from exc
    finite = np.isfinite(result.params).all() and np.isfinite(result.bse).all()
    mu = np.asarray(result.mu)
    if finite and result.converged and (mu * (1 - mu)).min() < EXTREME_WEIGHT:
        raise ModelFitError(
            "some groups of rows have all or no events, so the model has no finite "
            "estimate (separation); merge sparse categories or drop the variable"
        )
    _require_usable_fit(result, finite)
    return ArrayFit(
        result.params, result.bse, float(result.deviance), int(result.fit_history["iteration"])
    )


def zero_count_columns(X: np.ndarray, y: np.ndarray) -> tuple[int, ...]:
    """Design columns along which a Poisson fit has no finite estimate; ``()`` if none.

    The Poisson maximum-likelihood estimate is infinite exactly when some direction
    ``beta != 0`` has ``x_i' beta = 0`` for every record with a positive count and
    ``x_i' beta <= 0`` for every zero count, strictly for some (e.g. a category with no
    events). Found, as for :func:`separating_columns`, by a linear programme on columns
    scaled to max |x| = 1: minimise ``sum_{y_i = 0} x_i' beta`` under those constraints and
    ``|beta_j| <= 1``; a negative optimum means no finite estimate.
    """
    scale = np.abs(X).max(axis=0)
    scale[scale == 0] = 1.0
    Xs = X / scale
    zero = y == 0
    if not zero.any():
        return ()
    positive = Xs[~zero]
    res = linprog(
        c=Xs[zero].sum(axis=0),
        A_ub=Xs[zero],
        b_ub=np.zeros(int(zero.sum())),
        A_eq=positive if positive.size else None,
        b_eq=np.zeros(positive.shape[0]) if positive.size else None,
        bounds=[(-1.0, 1.0)] * X.shape[1],
        method="highs",
    )
    if res.status != 0 or res.fun >= -_SEPARATION_TOL * X.shape[0]:
        return ()
    return tuple(int(j) for j in np.flatnonzero(np.abs(res.x) > 1e-9))


def _raise_if_zero_counts(X: np.ndarray, y: np.ndarray, sources: tuple[str, ...] | None) -> None:
    """Raise a ModelFitError naming the columns along which the counts are all 0."""
    if sources is None:
        return
    columns = zero_count_columns(X, y)
    if not columns:
        return
    involved = (
        ", ".join(repr(c) for c in dict.fromkeys(sources[j] for j in columns) if c != INTERCEPT)
        or "the intercept"
    )
    raise ModelFitError(
        f"the counts are all zero for some records singled out by {involved}, so the rate "
        "model has no finite estimate; merge sparse categories or drop the variable"
    )


def fit_linear(X: np.ndarray, y: np.ndarray) -> ArrayFit:
    """Ordinary least squares; deviance = residual sum of squares."""
    result = sm.OLS(y, X).fit()
    rss = float(result.ssr)
    tss = float(((y - y.mean()) ** 2).sum())
    if not rss > EXACT_FIT_RTOL * tss:
        raise ModelFitError(
            "the outcome is an exact linear function of the model terms (no residual "
            "variation), so the standard errors are zero; check the outcome column"
        )
    if not (np.isfinite(result.params).all() and np.isfinite(result.bse).all()):
        raise ModelFitError("the model fit gave non-finite coefficients or standard errors")
    return ArrayFit(np.asarray(result.params), np.asarray(result.bse), rss, 0)


def separating_columns(
    X: np.ndarray, y: np.ndarray, *, weights: np.ndarray | None = None
) -> tuple[int, ...]:
    """Design columns involved in a complete or quasi-complete separation; ``()`` if none.

    The maximum-likelihood estimate is finite exactly when no direction ``beta != 0`` has
    ``(2 y_i - 1) x_i' beta >= 0`` for every record (Albert and Anderson 1984). Following
    Konis (2007), solve the linear programme: maximise ``sum_i (2 y_i - 1) x_i' beta``
    subject to those constraints and ``|beta_j| <= 1`` (columns scaled to max |x| = 1).
    The optimum is 0 without separation and positive with it (the threshold allows the
    solver's feasibility tolerance on each of the ``n`` constraints). The columns with a
    non-zero ``beta_j`` separate; each is then dropped in turn while separation remains,
    leaving a minimal set to name. If the solver fails, ``()`` is returned and the fit's
    own convergence checks remain.

    ``weights`` (counts, optional): row ``i`` of ``X`` stands for ``weights[i]`` records
    with the same design row and outcome (the distinct patterns of a grouped fit). The
    objective and the threshold are then those of the records themselves,
    ``sum_i weights_i (2 y_i - 1) x_i' beta`` against the tolerance times ``sum_i weights_i``,
    and the constraints are the records' own without their repeats: the same programme.
    """
    scale = np.abs(X).max(axis=0)
    scale[scale == 0] = 1.0
    A = np.where(y == 1, 1.0, -1.0)[:, None] * (X / scale)
    w = np.ones(A.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    support = _separating_direction(A, w, range(X.shape[1]))
    for j in tuple(support):
        if j in support and len(support) > 1:
            support = _separating_direction(A, w, [k for k in support if k != j]) or support
    return support


def _separating_direction(
    A: np.ndarray, weights: np.ndarray, columns: Iterable[int]
) -> tuple[int, ...]:
    """Support of the separation LP's solution using only ``columns``; ``()`` if none."""
    allowed = set(columns)
    bounds = [(-1.0, 1.0) if j in allowed else (0.0, 0.0) for j in range(A.shape[1])]
    res = linprog(
        c=-(weights @ A), A_ub=-A, b_ub=np.zeros(A.shape[0]), bounds=bounds, method="highs"
    )
    if res.status != 0 or -res.fun <= _SEPARATION_TOL * weights.sum():
        return ()
    return tuple(int(j) for j in np.flatnonzero(np.abs(res.x) > 1e-9))


def _require_usable_fit(result: Any, finite: bool) -> None:
    """A ModelFitError unless a statsmodels fit converged to finite estimates with positive SEs."""
    if not result.converged:
        raise ModelFitError(
            f"the model did not converge in {MAX_ITERATIONS} iterations; "
            "check for sparse categories or extreme values"
        )
    if not finite or np.any(result.bse <= 0):
        raise ModelFitError("the model fit gave non-finite coefficients or standard errors")
