"""The collaborator's regression model, fitted to original or masked data.

Utility is judged, as in Cologne et al. (2012, section 2.4), by fitting the analysis the
collaborator will run to the original data and to the masked data and comparing the
exposure coefficient. This module specifies that model (:class:`ModelSpec`), turns a data
frame into its design matrix (:func:`build_design`) and fits it (:func:`fit_model`).

Four families are implemented, chosen by :attr:`ModelSpec.family` (``x`` the exposure, ``z``
the covariates, ``b`` the reported estimate):

* ``"logistic"``: ``logit P(y = 1) = a + b * x + g'z``; ``b`` is the log odds ratio per unit
  of exposure (binomial GLM by IRLS).
* ``"poisson"``: ``log E(y) = log(t) + a + b * x + g'z`` for a count ``y`` with optional
  person-time ``t`` (:attr:`ModelSpec.offset`); ``b`` is the log rate ratio per unit of
  exposure (Poisson GLM by IRLS).
* ``"linear"``: ``E(y) = a + b * x + g'z`` by ordinary least squares; ``b`` is the change in
  mean outcome per unit of exposure. The deviance is the residual sum of squares; the
  likelihood-ratio test of the exposure is the Gaussian one with the variance estimated by
  maximum likelihood under each model, ``n log(RSS_without / RSS_with)`` on 1 df (what
  statsmodels' ``compare_lr_test`` gives).
* ``"binomial"``: ``logit P(event) = a + b * x + g'z`` for grouped data, each row giving
  ``y`` events out of ``n`` trials (:attr:`ModelSpec.trials`), e.g. deaths out of the
  population of an area (Zhou et al. 2010's area-level model); ``b`` is the log odds ratio
  per unit of exposure (binomial GLM by IRLS on (events, non-events)).
* ``"err"``: the linear excess-relative-risk odds model of radiation epidemiology,
  ``odds(y = 1) = exp(a + g'z) * (1 + b * x)``; ``b`` is the excess relative risk (ERR) per
  unit dose. Fitted by maximum likelihood under ``1 + b * x > 0`` for every record (damped
  Newton-Raphson on the exact Bernoulli log-likelihood, started from the logistic fit);
  ``se`` from the observed information; deviance ``-2 log L``; the likelihood-ratio test
  compares with the logistic model without the exposure (``b = 0``).

A smoothed outcome (kernel smoothing replaces each value by a weighted average of its
neighbours') is no longer 0/1 or a whole count. With ``fractional_outcome=True`` the binary
families accept proportions in [0, 1], poisson and binomial non-negative non-integer counts,
and the same estimating equations are solved (quasi-likelihood: the estimate is the
maximum-likelihood one for the smoothed values, and its model-based SE is the "naive" one
of Zhou et al.). The original data are always validated strictly.

Every way a fit can fail is turned into a :class:`~deid_core.errors.ModelFitError` with a
one-line message naming the column at fault and never quoting a data value.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats
from scipy.optimize import linprog
from scipy.special import expit
from statsmodels.genmod.generalized_linear_model import GLMResults
from statsmodels.tools.sm_exceptions import PerfectSeparationError, PerfectSeparationWarning

from deid_core.errors import ModelFitError

#: Families :class:`ModelSpec` accepts, with the left-hand side of their formula.
_FORMULA_LHS = {
    "logistic": "logit P({outcome} = 1)",
    "poisson": "log E({outcome})",
    "linear": "E({outcome})",
    "err": "odds({outcome})",
    "binomial": "logit P({outcome} of {trials})",
}
SUPPORTED_FAMILIES = tuple(_FORMULA_LHS)
#: Families whose outcome is binary (0/1) record by record.
BINARY_FAMILIES = ("logistic", "err")

#: One-line plain description of each family for the user interface: what ``b`` means and
#: which direction is good for utility (the masked ``b`` should stay close to the original).
FAMILY_HELP = {
    "logistic": (
        "Logistic regression of a 0/1 outcome: b is the log odds ratio per unit of exposure "
        "(b > 0 means higher exposure, higher odds); utility is good when the masked b stays "
        "close to the original b."
    ),
    "poisson": (
        "Poisson regression of an event count, optionally per person-time: b is the log rate "
        "ratio per unit of exposure (b > 0 means higher exposure, higher rate); utility is good "
        "when the masked b stays close to the original b."
    ),
    "linear": (
        "Linear regression (least squares) of a numeric outcome: b is the change in the mean "
        "outcome per unit of exposure; utility is good when the masked b stays close to the "
        "original b."
    ),
    "binomial": (
        "Logistic regression of grouped counts, e.g. deaths out of the population of each "
        "area: b is the log odds ratio per unit of exposure; utility is good when the masked "
        "b stays close to the original b."
    ),
    "err": (
        "Linear excess-relative-risk model of a 0/1 outcome, odds = exp(a + g'z) (1 + b dose): "
        "b is the excess relative risk per unit dose (b = 0.5 per Gy means 50% more risk per "
        "Gy); utility is good when the masked b stays close to the original b."
    ),
}

#: Title of each family in :meth:`FitResult.__str__`.
_TITLES = {
    "logistic": "Logistic regression (binomial GLM, logit link)",
    "poisson": "Poisson regression (log link)",
    "linear": "Linear regression (ordinary least squares)",
    "err": "Linear excess-relative-risk odds model (maximum likelihood)",
    "binomial": "Binomial regression of grouped counts (logit link)",
}

#: Fewest complete records a model is fitted to.
MIN_COMPLETE_ROWS = 10
#: Most categories a text covariate may have before dummy coding is refused.
MAX_LEVELS = 50
#: Iteration limit of the IRLS fit.
MAX_ITERATIONS = 100
#: Absolute change in deviance at which the IRLS fit stops.
DEVIANCE_TOL = 1e-10
#: Relative tolerance on singular values below which the design counts as rank-deficient.
RANK_RTOL = 1e-7
#: A fitted ``mu (1 - mu)`` below this (``|eta|`` above about 18) prompts a separation check.
EXTREME_WEIGHT = 1e-8
#: Smallest objective of the separation linear programme that counts as separation.
_SEPARATION_TOL = 1e-7
#: ERR fit: smallest ``1 + b * x`` over the records that is not the constraint's boundary.
ERR_BOUNDARY_TOL = 1e-6
#: ERR fit: step size and relative log-likelihood change at which Newton-Raphson stops.
ERR_STEP_TOL = 1e-9
ERR_LOGLIK_RTOL = 1e-13
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


def numerical_failure(exc: BaseException) -> ModelFitError:
    """The message for a fit that failed numerically (the exception's type, no values)."""
    return ModelFitError(
        f"the model fit failed numerically ({type(exc).__name__}); "
        "check for extreme values or nearly collinear covariates"
    )


INTERCEPT = "Intercept"
#: Position of the exposure in the design matrix (after the intercept).
EXPOSURE_INDEX = 1


@dataclass(frozen=True)
class ModelSpec:
    """The collaborator's model: an outcome, one exposure of interest and covariates.

    Parameters
    ----------
    outcome : str
        Outcome column: 0/1 (or True/False) for ``"logistic"`` and ``"err"``, a non-negative
        whole-number count for ``"poisson"``, numeric for ``"linear"``.
    exposure : str
        Numeric exposure column whose coefficient ``b`` is the quantity of interest (the
        dose for ``"err"``).
    covariates : tuple of str
        Adjustment columns. Numeric and boolean columns enter as they are; text and
        categorical columns are dummy-coded (first category as reference).
    family : str
        Model family, one of :data:`SUPPORTED_FAMILIES` (see :data:`FAMILY_HELP`).
    offset : str or None
        ``"poisson"`` only: person-time column (positive); its log enters as an offset, so
        ``exp(b)`` is a rate ratio. ``None`` models the counts themselves.
    trials : str or None
        ``"binomial"`` only, and required there: the column of trials per row (e.g. the
        population of an area); the outcome is the events among them.
    fractional_outcome : bool
        Accept a smoothed (non-integer) outcome, fitted by quasi-likelihood (module
        docstring). Used for masked data whose outcome was smoothed.
    """

    outcome: str
    exposure: str
    covariates: tuple[str, ...] = ()
    family: str = "logistic"
    offset: str | None = None
    trials: str | None = None
    fractional_outcome: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "covariates", tuple(self.covariates))
        for role, name in (("outcome", self.outcome), ("exposure", self.exposure)):
            if not isinstance(name, str) or not name:
                raise ModelFitError(f"the {role} must be a non-empty column name")
        if not all(isinstance(c, str) and c for c in self.covariates):
            raise ModelFitError("every covariate must be a non-empty column name")
        if self.offset is not None and (not isinstance(self.offset, str) or not self.offset):
            raise ModelFitError("the offset must be a non-empty column name or None")
        if self.trials is not None and (not isinstance(self.trials, str) or not self.trials):
            raise ModelFitError("the trials column must be a non-empty column name or None")
        if len(set(self.columns)) != len(self.columns):
            raise ModelFitError(
                "the outcome, exposure, covariates, offset and trials must be distinct columns"
            )
        if self.family not in SUPPORTED_FAMILIES:
            raise ModelFitError(
                f"unsupported model family {self.family!r}; "
                f"supported: {', '.join(SUPPORTED_FAMILIES)}"
            )
        if self.offset is not None and self.family != "poisson":
            raise ModelFitError(
                f"a person-time offset is only for the poisson family, not {self.family!r}"
            )
        if (self.trials is not None) != (self.family == "binomial"):
            raise ModelFitError(
                "the binomial family needs a trials column (e.g. the population of each "
                "area), and only it takes one"
            )

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column the model uses: outcome, exposure, covariates, then any offset or
        trials column."""
        extra = tuple(c for c in (self.offset, self.trials) if c is not None)
        return (self.outcome, self.exposure, *self.covariates, *extra)

    def formula(self) -> str:
        """Readable model formula, e.g. ``logit P(y = 1) = a + b * dose + g1 * age``.

        ``"err"`` gives ``odds(y) = exp(a + g1 * city) * (1 + b * dose)``; ``"poisson"``
        with an offset ``t`` gives ``log E(y) = log(t) + a + b * x``.
        """
        lhs = _FORMULA_LHS[self.family].format(outcome=self.outcome, trials=self.trials)
        gs = [f"g{i} * {c}" for i, c in enumerate(self.covariates, start=1)]
        if self.family == "err":
            return f"{lhs} = exp({' + '.join(['a', *gs])}) * (1 + b * {self.exposure})"
        terms = ["a", f"b * {self.exposure}", *gs]
        if self.offset is not None:
            terms.insert(0, f"log({self.offset})")
        return f"{lhs} = {' + '.join(terms)}"


@dataclass(frozen=True)
class Design:
    """A model's design matrix on the complete records of a data frame.

    ``X`` has the intercept in column 0 and the exposure in column 1, then the covariate
    columns (one indicator per non-reference category of a categorical covariate).
    ``sources[j]`` is the data column behind design column ``j``; ``rows`` marks the
    records of the data frame that were used (complete on every model column); ``offset``
    is ``log`` of the person-time column of a poisson model, else ``None``; ``trials`` the
    trials of a binomial model, else ``None``.
    """

    X: np.ndarray
    y: np.ndarray
    names: tuple[str, ...]
    sources: tuple[str, ...]
    rows: np.ndarray
    offset: np.ndarray | None = None
    trials: np.ndarray | None = None

    @property
    def n_dropped(self) -> int:
        """Records left out because a model column was missing."""
        return int(self.rows.size - self.rows.sum())


@dataclass(frozen=True)
class FitResult:
    """A fitted model, summarised by its exposure coefficient.

    Attributes
    ----------
    spec : ModelSpec
        The model fitted.
    estimate, se : float
        Exposure coefficient ``b`` and its standard error (inverse Fisher information; the
        observed information for ``"err"``; the usual OLS formula for ``"linear"``).
    deviance : float
        Residual deviance of the model: ``-2 log L`` for logistic and err, the Poisson
        deviance for poisson, the residual sum of squares for linear.
    lr_statistic, lr_pvalue : float
        Likelihood-ratio test of the exposure: deviance of the model without the exposure
        minus ``deviance``, referred to chi-squared on 1 df (Cologne et al. 2012, Table 2);
        for linear, ``n log(RSS_without / RSS_with)``.
    n, n_events, n_dropped : int
        Records used, events among them (the total count for poisson; 0 for linear), and
        records dropped for missing values.
    iterations : int
        Iterations to convergence (IRLS or Newton-Raphson; 0 for linear).
    param_names, params, bse : tuple
        Every coefficient with its standard error, intercept first, exposure second.
    """

    spec: ModelSpec
    estimate: float
    se: float
    deviance: float
    lr_statistic: float
    lr_pvalue: float
    n: int
    n_events: int
    n_dropped: int
    iterations: int
    param_names: tuple[str, ...] = field(repr=False)
    params: tuple[float, ...] = field(repr=False)
    bse: tuple[float, ...] = field(repr=False)

    def __post_init__(self) -> None:
        if not len(self.param_names) == len(self.params) == len(self.bse):
            raise ValueError("param_names, params and bse must have the same length")
        if not (np.isfinite(self.estimate) and np.isfinite(self.se) and self.se > 0):
            raise ValueError("estimate must be finite and se finite and positive")

    def __str__(self) -> str:
        width = 78
        z = np.asarray(self.params) / np.asarray(self.bse)
        p = 2 * stats.norm.sf(np.abs(z))
        name_w = max(12, *(len(n) for n in self.param_names)) + 2
        lines = [
            _TITLES[self.spec.family].center(width).rstrip(),
            "=" * width,
            f"Model: {self.spec.formula()}",
            f"Records used: {self.n:<8d} events: {self.n_events:<8d} "
            f"dropped (missing values): {self.n_dropped}",
            f"Deviance: {self.deviance:<12.4f} iterations: {self.iterations}",
            f"LR test of {self.spec.exposure}: {self.lr_statistic:.4f} on 1 df, "
            f"p = {self.lr_pvalue:.4g}",
            "-" * width,
            f"{'':{name_w}s}{'coef':>12s}{'std err':>12s}{'z':>10s}{'P>|z|':>10s}",
        ]
        for name, b, se, zi, pi in zip(self.param_names, self.params, self.bse, z, p, strict=True):
            lines.append(f"{name:{name_w}s}{b:12.4f}{se:12.4f}{zi:10.3f}{pi:10.4f}")
        lines.append("=" * width)
        return "\n".join(lines)


def build_design(df: pd.DataFrame, spec: ModelSpec) -> Design:
    """Validate the model's columns and build its design matrix on the complete records.

    Checks, in order: the columns exist; the outcome suits the family (0/1 or boolean for
    logistic and err, a non-negative whole-number count for poisson, numeric for linear);
    the exposure is numeric; text covariates have at most ``MAX_LEVELS`` categories; the
    offset (poisson) is numeric and positive; no value is infinite; at least
    ``MIN_COMPLETE_ROWS`` records are complete; there are events and non-events (binary),
    events (poisson) or a varying outcome (linear); the exposure varies; the design has full
    column rank. ``df`` is not modified.

    Raises
    ------
    ModelFitError
        With a one-line message naming the column at fault.
    """
    absent = [c for c in spec.columns if c not in df.columns]
    if absent:
        raise ModelFitError(f"column(s) not found in the data: {', '.join(map(repr, absent))}")
    duplicated = [c for c in spec.columns if isinstance(df[c], pd.DataFrame)]
    if duplicated:
        raise ModelFitError(
            f"column name(s) appear more than once in the data: {', '.join(map(repr, duplicated))}"
        )

    y_all = _outcome_values(
        df[spec.outcome], spec.outcome, spec.family, fractional=spec.fractional_outcome
    )
    x_all = _numeric_values(df[spec.exposure], spec.exposure, role="exposure")
    covariates = [_covariate_values(df[c], c) for c in spec.covariates]
    t_all = None
    if spec.offset is not None:
        t_all = _numeric_values(df[spec.offset], spec.offset, role="person-time offset")
        if (t_all[~np.isnan(t_all)] <= 0).any():
            raise ModelFitError(
                f"the person-time offset {spec.offset!r} must be positive for every record"
            )

    n_all = None
    if spec.trials is not None:
        n_all = _trials_values(df[spec.trials], spec.trials, spec.fractional_outcome)
        over = ~np.isnan(y_all) & ~np.isnan(n_all) & (y_all > n_all)
        if over.any():
            raise ModelFitError(
                f"the outcome {spec.outcome!r} exceeds the trials {spec.trials!r} in "
                f"{int(over.sum())} row(s); events cannot outnumber trials"
            )

    rows = ~np.isnan(y_all) & ~np.isnan(x_all)
    for extra in (t_all, n_all):
        if extra is not None:
            rows &= ~np.isnan(extra)
    for values in covariates:
        rows &= ~(pd.isna(values) if values.dtype == object else np.isnan(values))
    n = int(rows.sum())
    if n < MIN_COMPLETE_ROWS:
        raise ModelFitError(
            f"only {n} records are complete on the model's columns; "
            f"at least {MIN_COMPLETE_ROWS} are needed"
        )
    y = y_all[rows]
    if spec.family in BINARY_FAMILIES:
        n_events = int(y.sum())
        if n_events == 0:
            raise ModelFitError(f"the outcome {spec.outcome!r} has no events (no 1s) to model")
        if n_events == n:
            raise ModelFitError(f"the outcome {spec.outcome!r} has no non-events (no 0s) to model")
    elif spec.family in ("poisson", "binomial"):
        if y.sum() == 0:
            raise ModelFitError(f"the outcome {spec.outcome!r} has no events (all counts 0)")
        if n_all is not None and (y == n_all[rows]).all():
            raise ModelFitError(
                f"the outcome {spec.outcome!r} equals the trials in every row (no non-events)"
            )
    elif np.ptp(y) == 0:
        raise ModelFitError(
            f"the outcome {spec.outcome!r} does not vary among the complete records"
        )
    x = x_all[rows]
    if np.ptp(x) == 0:
        raise ModelFitError(
            f"the exposure {spec.exposure!r} does not vary among the complete records"
        )

    columns = [np.ones(n), x]
    names = [INTERCEPT, spec.exposure]
    sources = [INTERCEPT, spec.exposure]
    for name, values in zip(spec.covariates, covariates, strict=True):
        values = values[rows]
        if values.dtype != object:
            columns.append(values)
            names.append(name)
            sources.append(name)
            continue
        levels = _levels(df[name], values)
        if len(levels) < 2:
            raise ModelFitError(
                f"the covariate {name!r} has a single category among the complete records"
            )
        for level in levels[1:]:
            columns.append((values == level).astype(float))
            names.append(f"{name}[{level}]")
            sources.append(name)
    X = np.column_stack(columns)
    check_rank(X, sources)
    if spec.family == "linear" and n <= X.shape[1]:
        raise ModelFitError(
            f"the linear model has {X.shape[1]} coefficients but only {n} complete records; "
            "drop covariates or categories"
        )
    offset = None if t_all is None else np.log(t_all[rows])
    trials = None if n_all is None else n_all[rows]
    return Design(
        X=X,
        y=y,
        names=tuple(names),
        sources=tuple(sources),
        rows=rows,
        offset=offset,
        trials=trials,
    )


def fit_model(df: pd.DataFrame, spec: ModelSpec) -> FitResult:
    """Fit the collaborator's model (``spec.family``) by maximum likelihood.

    Records missing any model column are dropped (complete-case analysis; the number used
    and dropped are reported). By family (see the module docstring):

    * logistic: statsmodels' binomial GLM with logit link, by IRLS; ``se`` from the inverse
      Fisher information;
    * poisson: statsmodels' Poisson GLM with log link and offset ``log(person-time)``;
    * linear: ordinary least squares; deviance = residual sum of squares and the LR
      statistic ``n log(RSS_without / RSS_with)``;
    * err: the linear ERR odds model, by damped Newton-Raphson under ``1 + b * x > 0``,
      started from the logistic fit; ``se`` from the observed information.

    The likelihood-ratio statistic for the exposure compares the deviance with the model
    refitted without it, as in Cologne et al. (2012, Table 2) (for err: the logistic model
    without the exposure, i.e. ``b = 0``). A fit showing signs of separation (logistic,
    err) or of a covariate pattern with no events (poisson) is checked for it exactly.
    ``df`` is not modified.

    Raises
    ------
    ModelFitError
        If the data cannot support the model (see :func:`build_design`), if the outcome
        is separated (perfectly or quasi-perfectly predicted), if the ERR estimate lies on
        the constraint's boundary, or if the fit fails to converge or gives a non-finite
        standard error.
    """
    design = build_design(df, spec)
    full = fit_design(
        spec.family,
        design.X,
        design.y,
        offset=design.offset,
        trials=design.trials,
        sources=design.sources,
    )
    reduced_X = np.delete(design.X, EXPOSURE_INDEX, axis=1)
    # Dropping a column cannot create separation, so the reduced fit needs no sources.
    if spec.family == "linear":
        rss_reduced = float(sm.OLS(design.y, reduced_X).fit().ssr)
        lr = float(design.y.size * np.log(rss_reduced / full.deviance))
    else:
        reduced_family = "logistic" if spec.family == "err" else spec.family
        reduced = fit_design(
            reduced_family, reduced_X, design.y, offset=design.offset, trials=design.trials
        )
        lr = float(reduced.deviance - full.deviance)
    lr = max(lr, 0.0)
    j = EXPOSURE_INDEX
    n_events = 0 if spec.family == "linear" else round(float(design.y.sum()))
    return FitResult(
        spec=spec,
        estimate=float(full.params[j]),
        se=float(full.bse[j]),
        deviance=float(full.deviance),
        lr_statistic=lr,
        lr_pvalue=float(stats.chi2.sf(lr, df=1)),
        n=int(design.y.size),
        n_events=n_events,
        n_dropped=design.n_dropped,
        iterations=int(full.iterations),
        param_names=design.names,
        params=tuple(float(v) for v in full.params),
        bse=tuple(float(v) for v in full.bse),
    )


class ArrayFit(NamedTuple):
    """A fit on arrays: coefficients, standard errors, deviance and iterations."""

    params: np.ndarray
    bse: np.ndarray
    deviance: float
    iterations: int


def fit_design(
    family: str,
    X: np.ndarray,
    y: np.ndarray,
    *,
    offset: np.ndarray | None = None,
    trials: np.ndarray | None = None,
    sources: tuple[str, ...] | None = None,
    start: np.ndarray | None = None,
) -> ArrayFit:
    """Fit ``family`` to a design matrix (intercept in column 0, exposure in column 1).

    ``sources`` (the data column behind each design column) lets separation be reported
    by column name; ``start`` warm-starts the iterative fits (ignored for linear). Used by
    :func:`fit_model` and by the replicate fits.

    Raises
    ------
    ModelFitError
        As :func:`fit_model`.
    """
    if family == "logistic":
        result = _fit_glm(X, y, sources, start=start)
        return ArrayFit(
            result.params,
            result.bse,
            float(result.deviance),
            int(result.fit_history["iteration"]),
        )
    if family == "poisson":
        return _fit_poisson(X, y, offset, sources, start=start)
    if family == "binomial":
        if trials is None:
            raise ModelFitError("the binomial family needs the trials of every row")
        return _fit_binomial_counts(X, y, trials, start=start)
    if family == "linear":
        return _fit_linear(X, y)
    if family == "err":
        return _fit_err(X, y, sources, start=start)
    raise ModelFitError(
        f"unsupported model family {family!r}; supported: {', '.join(SUPPORTED_FAMILIES)}"
    )


def _fit_poisson(
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
            result = sm.GLM(y, X, family=sm.families.Poisson(), offset=offset).fit(
                maxiter=MAX_ITERATIONS, tol=DEVIANCE_TOL, start_params=start
            )
        except FIT_ERRORS as exc:
            _raise_if_zero_counts(X, y, sources)
            raise numerical_failure(exc) from exc
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


def _fit_binomial_counts(
    X: np.ndarray, y: np.ndarray, trials: np.ndarray, start: np.ndarray | None = None
) -> ArrayFit:
    """Binomial GLM (logit link) of ``y`` events out of ``trials`` by IRLS, as statsmodels'
    two-column (events, non-events) form; every failure is a ModelFitError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = sm.GLM(np.column_stack([y, trials - y]), X, family=sm.families.Binomial()).fit(
                maxiter=MAX_ITERATIONS, tol=DEVIANCE_TOL, start_params=start
            )
        except FIT_ERRORS as exc:
            raise numerical_failure(exc) from exc
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


def _fit_linear(X: np.ndarray, y: np.ndarray) -> ArrayFit:
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


def _fit_err(
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
        start = _fit_glm(X, y, sources).params
    theta = np.array(start, dtype=float)
    if not lower < theta[EXPOSURE_INDEX] < upper or not np.isfinite(theta).all():
        theta = np.where(np.isfinite(theta), theta, 0.0)
        theta[EXPOSURE_INDEX] = 0.0
    loglik = _err_loglik(theta, X, y)
    converged, iterations = False, 0
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        for it in range(1, MAX_ITERATIONS + 1):
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
            f"the ERR model did not converge in {MAX_ITERATIONS} iterations; "
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


def separating_columns(X: np.ndarray, y: np.ndarray) -> tuple[int, ...]:
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
    """
    scale = np.abs(X).max(axis=0)
    scale[scale == 0] = 1.0
    A = np.where(y == 1, 1.0, -1.0)[:, None] * (X / scale)
    support = _separating_direction(A, range(X.shape[1]))
    for j in tuple(support):
        if j in support and len(support) > 1:
            support = _separating_direction(A, [k for k in support if k != j]) or support
    return support


def _separating_direction(A: np.ndarray, columns: Iterable[int]) -> tuple[int, ...]:
    """Support of the separation LP's solution using only ``columns``; ``()`` if none."""
    allowed = set(columns)
    bounds = [(-1.0, 1.0) if j in allowed else (0.0, 0.0) for j in range(A.shape[1])]
    res = linprog(
        c=-A.sum(axis=0), A_ub=-A, b_ub=np.zeros(A.shape[0]), bounds=bounds, method="highs"
    )
    if res.status != 0 or -res.fun <= _SEPARATION_TOL * A.shape[0]:
        return ()
    return tuple(int(j) for j in np.flatnonzero(np.abs(res.x) > 1e-9))


def _fit_glm(
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
            result = sm.GLM(y, X, family=sm.families.Binomial()).fit(
                maxiter=MAX_ITERATIONS, tol=DEVIANCE_TOL, start_params=start
            )
        except FIT_ERRORS as exc:
            _raise_if_separated(X, y, sources)
            raise numerical_failure(exc) from exc
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


def _outcome_values(
    column: pd.Series, name: str, family: str = "logistic", fractional: bool = False
) -> np.ndarray:
    """The outcome as floats with NaN for missing, checked for the family.

    Binary families need 0/1 (booleans accepted), poisson and binomial non-negative whole
    numbers, linear any finite numbers. With ``fractional`` (a smoothed outcome), binary
    families accept proportions in [0, 1] and counts need not be whole.
    """
    if family in ("poisson", "binomial"):
        values = _numeric_values(column, name, role="outcome")
        observed = values[~np.isnan(values)]
        if np.any(observed < 0) or (not fractional and np.any(observed != np.round(observed))):
            raise ModelFitError(
                f"the outcome {name!r} must be a count (non-negative whole numbers) "
                f"for the {family} model"
            )
        return values
    if family == "linear":
        return _numeric_values(column, name, role="outcome")
    if fractional and not pd.api.types.is_bool_dtype(column):
        values = _numeric_values(column, name, role="outcome")
        observed = values[~np.isnan(values)]
        if np.all((observed >= 0) & (observed <= 1)):
            return values
        raise ModelFitError(f"the smoothed outcome {name!r} must lie between 0 and 1")
    if pd.api.types.is_bool_dtype(column) or pd.api.types.is_numeric_dtype(column):
        values = column.to_numpy(dtype=float, na_value=np.nan)
        observed = values[~np.isnan(values)]
        if np.all((observed == 0) | (observed == 1)):
            return values
    elif column.dtype == object and column.dropna().map(type).eq(bool).all():
        return column.to_numpy(dtype=float, na_value=np.nan)
    raise ModelFitError(f"the outcome {name!r} must be coded 0/1 (or True/False)")


def _trials_values(column: pd.Series, name: str, fractional: bool) -> np.ndarray:
    """The trials of a binomial model: positive (whole unless smoothed) numbers, NaN missing."""
    values = _numeric_values(column, name, role="trials column")
    observed = values[~np.isnan(values)]
    if np.any(observed <= 0) or (not fractional and np.any(observed != np.round(observed))):
        raise ModelFitError(
            f"the trials column {name!r} must hold positive whole numbers (e.g. population "
            "counts); drop rows with no trials"
        )
    return values


def _numeric_values(column: pd.Series, name: str, role: str) -> np.ndarray:
    """A numeric (or boolean) column as floats with NaN for missing."""
    if not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)):
        raise ModelFitError(
            f"the {role} {name!r} is not numeric (it may hold interval labels after masking); "
            "release midpoints or means instead"
        )
    values = column.to_numpy(dtype=float, na_value=np.nan)
    if np.isinf(values).any():
        raise ModelFitError(f"the {role} {name!r} contains infinite values")
    return values


def _covariate_values(column: pd.Series, name: str) -> np.ndarray:
    """A covariate as floats, or as an object array of categories to be dummy-coded."""
    if pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return _numeric_values(column, name, role="covariate")
    if column.nunique(dropna=True) > MAX_LEVELS:
        raise ModelFitError(
            f"the covariate {name!r} is text with more than {MAX_LEVELS} categories; if it "
            "holds numbers or interval labels, release midpoints or means instead, "
            "or merge categories"
        )
    return column.astype(object).to_numpy()


def _levels(column: pd.Series, values: np.ndarray) -> list[object]:
    """Observed categories of a covariate: category order if categorical, else sorted."""
    observed = set(values)
    if isinstance(column.dtype, pd.CategoricalDtype):
        return [c for c in column.cat.categories if c in observed]
    try:
        return sorted(observed)
    except TypeError:  # mixed types in an object column
        return sorted(observed, key=str)


def check_rank(X: np.ndarray, sources: Sequence[str]) -> None:
    """Raise if the design is rank-deficient, naming the first redundant term's column.

    Columns are scaled to unit length first, so the rank does not depend on units; a
    singular value below ``RANK_RTOL`` times the largest counts as zero.
    """
    norms = np.linalg.norm(X, axis=0)
    scaled = X / np.where(norms == 0, 1.0, norms)
    if norms.all() and np.linalg.matrix_rank(scaled, rtol=RANK_RTOL) == X.shape[1]:
        return
    for j in range(1, X.shape[1]):
        if norms[j] == 0 or np.linalg.matrix_rank(scaled[:, : j + 1], rtol=RANK_RTOL) <= j:
            term = "exposure" if j == EXPOSURE_INDEX else "covariate"
            raise ModelFitError(
                f"the {term} {sources[j]!r} is constant or collinear with other model terms "
                "among the complete records; drop it or one of the terms it duplicates"
            )


def _require_usable_fit(result: Any, finite: bool) -> None:
    """A ModelFitError unless a statsmodels fit converged to finite estimates with positive SEs."""
    if not result.converged:
        raise ModelFitError(
            f"the model did not converge in {MAX_ITERATIONS} iterations; "
            "check for sparse categories or extreme values"
        )
    if not finite or np.any(result.bse <= 0):
        raise ModelFitError("the model fit gave non-finite coefficients or standard errors")
