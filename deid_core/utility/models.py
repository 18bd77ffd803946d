"""The collaborator's regression model, fitted to original or masked data.

Utility is judged, as in Cologne et al. (2012, section 2.4), by fitting the analysis the
collaborator will run to the original data and to the masked data and comparing the
exposure coefficient. This module fits that model (:func:`fit_model`, giving a
:class:`FitResult`; :func:`fit_design` on a design matrix). The model as data and its design
matrix are in :mod:`deid_core.utility.spec` (:class:`ModelSpec`, :func:`build_design`), the
GLM fits and their separation checks in :mod:`deid_core.utility.glm`, the ERR fit in
:mod:`deid_core.utility.err`.

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
* ``"cox"``: the Cox proportional-hazards model ``h(t) = h0(t) exp(b * x + g'z)`` of a
  follow-up time (:attr:`ModelSpec.time`) and a 0/1 event indicator (the outcome), by
  statsmodels' ``PHReg`` with Breslow's or Efron's ties (:mod:`deid_core.utility.cox`);
  ``b`` is the log hazard ratio per unit of exposure; the deviance is ``-2 log`` partial
  likelihood.
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

import gc
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats

from deid_core.errors import ModelFitError
from deid_core.utility.cox import cox_null_deviance, fit_cox
from deid_core.utility.effects import EffectMeasure, effect_measure
from deid_core.utility.err import fit_err
from deid_core.utility.glm import (
    ArrayFit,
    fit_binomial_counts,
    fit_linear,
    fit_logistic,
    fit_poisson,
)
from deid_core.utility.spec import SUPPORTED_FAMILIES, Design, ModelSpec, build_design

#: Title of each family in :meth:`FitResult.__str__`.
_TITLES = {
    "logistic": "Logistic regression (binomial GLM, logit link)",
    "poisson": "Poisson regression (log link)",
    "linear": "Linear regression (ordinary least squares)",
    "err": "Linear excess-relative-risk odds model (maximum likelihood)",
    "binomial": "Binomial regression of grouped counts (logit link)",
    "cox": "Cox proportional-hazards regression (partial likelihood)",
}


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
        deviance for poisson, the residual sum of squares for linear, ``-2 log`` partial
        likelihood for cox.
    lr_statistic, lr_pvalue : float
        Likelihood-ratio test of the exposure: deviance of the model without the exposure
        minus ``deviance``, referred to chi-squared on 1 df (Cologne et al. 2012, Table 2);
        for linear, ``n log(RSS_without / RSS_with)``.
    n, n_events, n_dropped : int
        Records used, events among them (the total count for poisson; 0 for linear), and
        records dropped for missing values.
    exposure_index : int
        Position of the exposure among the coefficients (1 after an intercept, 0 for cox).
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
    exposure_index: int = field(default=1, repr=False)

    def __post_init__(self) -> None:
        if not len(self.param_names) == len(self.params) == len(self.bse):
            raise ValueError("param_names, params and bse must have the same length")
        if not (np.isfinite(self.estimate) and np.isfinite(self.se) and self.se > 0):
            raise ValueError("estimate must be finite and se finite and positive")

    def effect(self, level: float = 0.95) -> EffectMeasure:
        """The exposure's effect measure (odds, rate or hazard ratio, ...) with its Wald
        interval (:mod:`deid_core.utility.effects`)."""
        return effect_measure(self.spec.family, self.spec.exposure, self.estimate, self.se, level)

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
            f"{self.effect().label}: {self.effect().text()}",
            "-" * width,
            f"{'':{name_w}s}{'coef':>12s}{'std err':>12s}{'z':>10s}{'P>|z|':>10s}",
        ]
        for name, b, se, zi, pi in zip(self.param_names, self.params, self.bse, z, p, strict=True):
            lines.append(f"{name:{name_w}s}{b:12.4f}{se:12.4f}{zi:10.3f}{pi:10.4f}")
        lines.append("=" * width)
        return "\n".join(lines)


#: Design cells (rows x coefficients) from which :func:`fit_design` collects garbage after a
#: fit: statsmodels' IRLS leaves each iteration's weighted design and residuals in reference
#: cycles, which Python frees only at a full collection (rarely, since a fit makes few Python
#: objects): without it a fit of a million records kept half a gigabyte after it returned.
COLLECT_AFTER_CELLS = 1_000_000


def fit_model(df: pd.DataFrame, spec: ModelSpec, start: FitResult | None = None) -> FitResult:
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
    ``df`` is not modified. ``start``, a fit of the same model (e.g. to the original data),
    warm-starts the iterative fits (not err's): masked data then take a few iterations.

    Raises
    ------
    ModelFitError
        If the data cannot support the model (see :func:`build_design`), if the outcome
        is separated (perfectly or quasi-perfectly predicted), if the ERR estimate lies on
        the constraint's boundary, or if the fit fails to converge or gives a non-finite
        standard error.
    """
    design = build_design(df, spec)
    # The ERR fit starts from a logistic fit of its own, which reports separation.
    start_params = (
        np.asarray(start.params, dtype=float)
        if start is not None and start.param_names == design.names and spec.family != "err"
        else None
    )
    full = refit(spec, design, start=start_params)
    j = design.exposure_index
    reduced_X = np.delete(design.X, j, axis=1)
    # Dropping a column cannot create separation, so the reduced fit needs no sources.
    if spec.family == "linear":
        rss_reduced = float(sm.OLS(design.y, reduced_X).fit().ssr)
        lr = float(design.y.size * np.log(rss_reduced / full.deviance))
    elif spec.family == "cox" and reduced_X.shape[1] == 0:
        assert design.time is not None
        lr = cox_null_deviance(design.time, design.y, spec.ties) - full.deviance
    else:
        reduced_family = "logistic" if spec.family == "err" else spec.family
        reduced_start = (
            np.delete(start_params, j)
            if start_params is not None and reduced_family == spec.family
            else None
        )
        reduced = fit_design(
            reduced_family,
            reduced_X,
            design.y,
            offset=design.offset,
            trials=design.trials,
            time=design.time,
            ties=spec.ties,
            start=reduced_start,
        )
        lr = float(reduced.deviance - full.deviance)
    lr = max(lr, 0.0)
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
        exposure_index=j,
    )


def refit(
    spec: ModelSpec,
    design: Design,
    X: np.ndarray | None = None,
    start: np.ndarray | None = None,
) -> ArrayFit:
    """Fit ``spec``'s family to ``design`` with everything the design carries (offset,
    trials, follow-up times, the columns' sources for separation messages), ``X`` in place of
    ``design.X`` when given (a replicate's masked columns), warm-started from ``start``.

    The one way a model is refitted: the original fit (:func:`fit_model`), the replicates
    of a random mask and the bootstrap resamples all go through it.
    """
    return fit_design(
        spec.family,
        design.X if X is None else X,
        design.y,
        offset=design.offset,
        trials=design.trials,
        time=design.time,
        ties=spec.ties,
        sources=design.sources,
        start=start,
    )


def fit_design(
    family: str,
    X: np.ndarray,
    y: np.ndarray,
    *,
    offset: np.ndarray | None = None,
    trials: np.ndarray | None = None,
    time: np.ndarray | None = None,
    ties: str = "breslow",
    sources: tuple[str, ...] | None = None,
    start: np.ndarray | None = None,
) -> ArrayFit:
    """Fit ``family`` to a design matrix (intercept in column 0, exposure in column 1; for
    cox no intercept, the exposure first, with the follow-up ``time`` and ``ties``).

    ``sources`` (the data column behind each design column) lets separation be reported
    by column name; ``start`` warm-starts the iterative fits (ignored for linear). Prefer
    :func:`refit`, which passes everything a :class:`~deid_core.utility.spec.Design`
    carries.

    A fit of at least :data:`COLLECT_AFTER_CELLS` design cells is followed by a garbage
    collection (see there).

    Raises
    ------
    ModelFitError
        As :func:`fit_model`.
    """
    try:
        return _fit_family(family, X, y, offset, trials, time, ties, sources, start)
    finally:
        if X.size >= COLLECT_AFTER_CELLS:
            gc.collect()


def _fit_family(
    family: str,
    X: np.ndarray,
    y: np.ndarray,
    offset: np.ndarray | None,
    trials: np.ndarray | None,
    time: np.ndarray | None,
    ties: str,
    sources: tuple[str, ...] | None,
    start: np.ndarray | None,
) -> ArrayFit:
    if family == "logistic":
        result = fit_logistic(X, y, sources, start=start)
        return ArrayFit(
            result.params,
            result.bse,
            float(result.deviance),
            int(result.fit_history["iteration"]),
        )
    if family == "poisson":
        return fit_poisson(X, y, offset, sources, start=start)
    if family == "binomial":
        if trials is None:
            raise ModelFitError("the binomial family needs the trials of every row")
        return fit_binomial_counts(X, y, trials, start=start)
    if family == "linear":
        return fit_linear(X, y)
    if family == "err":
        return fit_err(X, y, sources, start=start)
    if family == "cox":
        if time is None:
            raise ModelFitError("the Cox model needs the follow-up time of every record")
        return fit_cox(X, time, y, ties, sources, start=start)
    raise ModelFitError(
        f"unsupported model family {family!r}; supported: {', '.join(SUPPORTED_FAMILIES)}"
    )
