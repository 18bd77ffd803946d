"""The collaborator's regression model, fitted to original or masked data.

Utility is judged, as in Cologne et al. (2012, section 2.4), by fitting the analysis the
collaborator will run to the original data and to the masked data and comparing the
exposure coefficient. This module specifies that model (:class:`ModelSpec`), turns a data
frame into its design matrix (:func:`build_design`) and fits it (:func:`fit_model`).

Only the logistic model is implemented for now: ``logit P(y = 1) = a + b * x + g'z``, with
``b`` the log odds ratio per unit of exposure ``x``. Every way the fit can fail is turned
into a :class:`~deid_core.errors.ModelFitError` with a one-line message naming the column
at fault and never quoting a data value.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats
from scipy.optimize import linprog
from statsmodels.genmod.generalized_linear_model import GLMResults
from statsmodels.tools.sm_exceptions import PerfectSeparationError, PerfectSeparationWarning

from deid_core.errors import ModelFitError

#: Families :class:`ModelSpec` accepts, with the left-hand side of their formula.
_FORMULA_LHS = {"logistic": "logit P({outcome} = 1)"}
SUPPORTED_FAMILIES = tuple(_FORMULA_LHS)

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

INTERCEPT = "Intercept"
#: Position of the exposure in the design matrix (after the intercept).
EXPOSURE_INDEX = 1


@dataclass(frozen=True)
class ModelSpec:
    """The collaborator's model: an outcome, one exposure of interest and covariates.

    Parameters
    ----------
    outcome : str
        Binary outcome column (0/1 or True/False).
    exposure : str
        Numeric exposure column whose coefficient ``b`` is the quantity of interest.
    covariates : tuple of str
        Adjustment columns. Numeric and boolean columns enter as they are; text and
        categorical columns are dummy-coded (first category as reference).
    family : str
        Model family; only ``"logistic"`` for now.
    """

    outcome: str
    exposure: str
    covariates: tuple[str, ...] = ()
    family: str = "logistic"

    def __post_init__(self) -> None:
        object.__setattr__(self, "covariates", tuple(self.covariates))
        for role, name in (("outcome", self.outcome), ("exposure", self.exposure)):
            if not isinstance(name, str) or not name:
                raise ModelFitError(f"the {role} must be a non-empty column name")
        if not all(isinstance(c, str) and c for c in self.covariates):
            raise ModelFitError("every covariate must be a non-empty column name")
        if len(set(self.columns)) != len(self.columns):
            raise ModelFitError("the outcome, exposure and covariates must be distinct columns")
        if self.family not in SUPPORTED_FAMILIES:
            raise ModelFitError(
                f"unsupported model family {self.family!r}; "
                f"supported: {', '.join(SUPPORTED_FAMILIES)}"
            )

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column the model uses: outcome, exposure, then covariates."""
        return (self.outcome, self.exposure, *self.covariates)

    def formula(self) -> str:
        """Readable model formula, e.g. ``logit P(y = 1) = a + b * dose + g1 * age``."""
        terms = ["a", f"b * {self.exposure}"]
        terms += [f"g{i} * {c}" for i, c in enumerate(self.covariates, start=1)]
        return f"{_FORMULA_LHS[self.family].format(outcome=self.outcome)} = {' + '.join(terms)}"


@dataclass(frozen=True)
class Design:
    """A model's design matrix on the complete records of a data frame.

    ``X`` has the intercept in column 0 and the exposure in column 1, then the covariate
    columns (one indicator per non-reference category of a categorical covariate).
    ``sources[j]`` is the data column behind design column ``j``; ``rows`` marks the
    records of the data frame that were used (complete on every model column).
    """

    X: np.ndarray
    y: np.ndarray
    names: tuple[str, ...]
    sources: tuple[str, ...]
    rows: np.ndarray

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
        Exposure coefficient ``b`` and its standard error (inverse Fisher information).
    deviance : float
        Residual deviance ``-2 log L`` of the model.
    lr_statistic, lr_pvalue : float
        Likelihood-ratio test of the exposure: deviance of the model without the exposure
        minus ``deviance``, referred to chi-squared on 1 df (Cologne et al. 2012, Table 2).
    n, n_events, n_dropped : int
        Records used, events among them, and records dropped for missing values.
    iterations : int
        IRLS iterations to convergence.
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
            "Logistic regression (binomial GLM, logit link)".center(width).rstrip(),
            "=" * width,
            f"Model: {self.spec.formula()}",
            f"Records used: {self.n:<8d} events: {self.n_events:<8d} "
            f"dropped (missing values): {self.n_dropped}",
            f"Deviance: {self.deviance:<12.4f} IRLS iterations: {self.iterations}",
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

    Checks, in order: the columns exist; the outcome is coded 0/1 (or boolean); the
    exposure is numeric; text covariates have at most ``MAX_LEVELS`` categories; no value
    is infinite; at least ``MIN_COMPLETE_ROWS`` records are complete; there are events and
    non-events; the exposure varies; the design has full column rank. ``df`` is not
    modified.

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

    y_all = _outcome_values(df[spec.outcome], spec.outcome)
    x_all = _numeric_values(df[spec.exposure], spec.exposure, role="exposure")
    covariates = [_covariate_values(df[c], c) for c in spec.covariates]

    rows = ~np.isnan(y_all) & ~np.isnan(x_all)
    for values in covariates:
        rows &= ~(pd.isna(values) if values.dtype == object else np.isnan(values))
    n = int(rows.sum())
    if n < MIN_COMPLETE_ROWS:
        raise ModelFitError(
            f"only {n} records are complete on the model's columns; "
            f"at least {MIN_COMPLETE_ROWS} are needed"
        )
    y = y_all[rows]
    n_events = int(y.sum())
    if n_events == 0:
        raise ModelFitError(f"the outcome {spec.outcome!r} has no events (no 1s) to model")
    if n_events == n:
        raise ModelFitError(f"the outcome {spec.outcome!r} has no non-events (no 0s) to model")
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
    _check_rank(X, sources)
    return Design(X=X, y=y, names=tuple(names), sources=tuple(sources), rows=rows)


def fit_model(df: pd.DataFrame, spec: ModelSpec) -> FitResult:
    """Fit the logistic model ``logit P(y = 1) = a + b * x + g'z`` by maximum likelihood.

    Records missing any model column are dropped (complete-case analysis; the number used
    and dropped are reported). The fit is statsmodels' binomial GLM with logit link, by
    IRLS; ``se`` comes from the inverse Fisher information. The likelihood-ratio statistic
    for the exposure compares the deviance with the model refitted without it, as in
    Cologne et al. (2012, Table 2). A fit showing signs of separation (see
    :func:`separating_columns`) is checked for it exactly. ``df`` is not modified.

    Raises
    ------
    ModelFitError
        If the data cannot support the model (see :func:`build_design`), if the outcome
        is separated (perfectly or quasi-perfectly predicted), or if the fit fails to
        converge or gives a non-finite standard error.
    """
    design = build_design(df, spec)
    full = _fit_glm(design.X, design.y, design.sources)
    # Dropping a column cannot create separation, so the reduced fit needs no sources.
    reduced = _fit_glm(np.delete(design.X, EXPOSURE_INDEX, axis=1), design.y, sources=None)
    j = EXPOSURE_INDEX
    lr = max(float(reduced.deviance - full.deviance), 0.0)
    return FitResult(
        spec=spec,
        estimate=float(full.params[j]),
        se=float(full.bse[j]),
        deviance=float(full.deviance),
        lr_statistic=lr,
        lr_pvalue=float(stats.chi2.sf(lr, df=1)),
        n=int(design.y.size),
        n_events=int(design.y.sum()),
        n_dropped=design.n_dropped,
        iterations=int(full.fit_history["iteration"]),
        param_names=design.names,
        params=tuple(float(v) for v in full.params),
        bse=tuple(float(v) for v in full.bse),
    )


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


def _fit_glm(X: np.ndarray, y: np.ndarray, sources: tuple[str, ...] | None) -> GLMResults:
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
                maxiter=MAX_ITERATIONS, tol=DEVIANCE_TOL
            )
        except (
            PerfectSeparationError,
            np.linalg.LinAlgError,
            ValueError,
            FloatingPointError,
            OverflowError,
        ) as exc:
            _raise_if_separated(X, y, sources)
            raise ModelFitError(
                f"the model fit failed numerically ({type(exc).__name__}); "
                "check for extreme values or nearly collinear covariates"
            ) from exc
    finite = np.isfinite(result.params).all() and np.isfinite(result.bse).all()
    suspect = (
        any(issubclass(w.category, PerfectSeparationWarning) for w in caught)
        or not result.converged
        or not finite
        or (result.mu * (1 - result.mu)).min() < EXTREME_WEIGHT
    )
    if suspect:
        _raise_if_separated(X, y, sources)
    if not result.converged:
        raise ModelFitError(
            f"the model did not converge in {MAX_ITERATIONS} iterations; "
            "check for sparse categories or extreme values"
        )
    if not finite or np.any(result.bse <= 0):
        raise ModelFitError("the model fit gave non-finite coefficients or standard errors")
    return result


def _raise_if_separated(X: np.ndarray, y: np.ndarray, sources: tuple[str, ...] | None) -> None:
    """Raise a ModelFitError naming the separating columns, if the outcome is separated."""
    if sources is None:
        return
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


def _outcome_values(column: pd.Series, name: str) -> np.ndarray:
    """The outcome as floats 0/1 with NaN for missing; booleans are accepted."""
    if pd.api.types.is_bool_dtype(column) or pd.api.types.is_numeric_dtype(column):
        values = column.to_numpy(dtype=float, na_value=np.nan)
        observed = values[~np.isnan(values)]
        if np.all((observed == 0) | (observed == 1)):
            return values
    elif column.dtype == object and column.dropna().map(type).eq(bool).all():
        return column.to_numpy(dtype=float, na_value=np.nan)
    raise ModelFitError(f"the outcome {name!r} must be coded 0/1 (or True/False)")


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


def _check_rank(X: np.ndarray, sources: list[str]) -> None:
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
