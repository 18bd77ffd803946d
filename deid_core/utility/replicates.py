"""Utility of random masking, summarised over replicates.

A random mask (e.g. uniform noise added to the dose) gives a different masked data set on
every draw, so Cologne et al. (2012, Table 2) report the mean and range over ``R``
replicates (they used 500) of the masked estimate ``b_r``, its standard error ``se_r``,
the relative bias ``(b_r - b) / b`` and ``MSE_r = se_r^2 + (b_r - b)^2``, with the
analysis potential taken from the mean MSE: ``AP = se^2 / mean_r MSE_r``.

Fitting hundreds of replicates one by one with statsmodels is slow, and only the masked
columns differ between them. :func:`fit_logistic_replicates` therefore fits many
replicates at once by Newton-Raphson (IRLS) vectorised over replicates, started from the
original fit extrapolated to each replicate, on one thread (threads, and drawing one chunk
while the previous one is fitted, were measured to gain nothing); :func:`replicate_utility`
draws the replicates, fits them in chunks and summarises them in a
:class:`ReplicateSummary`. The other families (poisson, linear, err)
are fitted replicate by replicate with their own fitter
(:func:`~deid_core.utility.models.refit`), warm-started from the original fit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd
from scipy.special import expit

from deid_core import bounds
from deid_core.cancellation import check_cancelled
from deid_core.errors import ModelFitError
from deid_core.masking.base import unique_rows
from deid_core.utility.counts import DEFAULT_REPLICATES as DEFAULT_REPLICATES
from deid_core.utility.counts import MAX_REPLICATES as MAX_REPLICATES
from deid_core.utility.glm import EXTREME_WEIGHT, separating_columns
from deid_core.utility.models import FitResult, refit
from deid_core.utility.spec import (
    EXPOSURE_INDEX,
    RANK_RTOL,
    Design,
    ModelSpec,
    build_design,
    check_rank,
)

#: Replicates drawn and fitted together; bounds memory at about
#: ``chunk * n * (varying columns)`` floats.
DEFAULT_CHUNK_SIZE = 50
#: Design rows (replicates x records) the Newton iterations work on at a time: the block's
#: work arrays (a few of ``BLOCK_ELEMENTS`` floats each) then stay in the CPU cache.
BLOCK_ELEMENTS = 1 << 16
#: Largest move ``d' I0 d`` (squared standard errors) of an extrapolated starting point
#: (see ``_ChunkFitter._initial``); a replicate predicted to move further starts from the
#: original fit, where the first-order prediction is not to be trusted.
EXTRAPOLATION_LIMIT = 1.0
#: ``eta`` is floored here inside ``exp(-eta)``, which stays finite; below it
#: ``log(1 + exp(eta))`` is 0 and the fitted probability below 1e-300.
ETA_FLOOR = -700.0
#: A replicate is fitted on its distinct (outcome, design row) patterns, weighted by their
#: counts, when they are at most this share of its records (see :func:`_fit_patterns`);
#: beyond, grouping costs about as much as it saves (a continuous covariate left exact).
GROUPING_SHARE = 0.25
#: Newton-Raphson defaults: iteration limit, and the step and relative deviance change at
#: which a replicate has converged.
MAX_ITER = 50
BETA_TOL = 1e-10
DEVIANCE_RTOL = 1e-12


@dataclass(frozen=True, eq=False)
class ReplicateFits:
    """Per-replicate results of :func:`fit_logistic_replicates`.

    Attributes (``R`` replicates, ``p`` coefficients)
    ----------
    params, bse : ndarray, shape (R, p)
        Coefficients and standard errors (from the inverse Fisher information); ``bse`` is
        NaN for a replicate that failed.
    deviance : ndarray, shape (R,)
        Deviance ``-2 log L`` at the last iterate.
    iterations : ndarray of int, shape (R,)
        Newton steps taken.
    converged : ndarray of bool, shape (R,)
        Convergence reached with a non-singular information matrix.
    separated : ndarray of bool, shape (R,)
        The replicate's outcome is separated by its design (no finite estimate).
    """

    params: np.ndarray
    bse: np.ndarray
    deviance: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray
    separated: np.ndarray

    @property
    def ok(self) -> np.ndarray:
        """Replicates with a usable finite estimate: converged and not separated."""
        return self.converged & ~self.separated

    def __str__(self) -> str:
        n_rep, n_par = self.params.shape
        return (
            f"ReplicateFits: {n_rep} replicates of {n_par} coefficients; "
            f"{int(self.ok.sum())} usable, {int((~self.converged).sum())} not converged, "
            f"{int(self.separated.sum())} separated"
        )


@dataclass(frozen=True)
class ReplicateSummary:
    """Utility of a random mask over replicates, as in Cologne et al. (2012, Table 2).

    Statistics are over the ``n_replicates - n_failed`` replicates that fitted; replicates
    that did not converge or were separated are excluded and counted in ``n_failed``.
    For replicate ``r`` with estimate ``b_r`` and standard error ``se_r``, and the original
    ``b``, ``se``::

        relative bias_r = (b_r - b) / b
        MSE_r           = se_r^2 + (b_r - b)^2
        AP              = MSE(b) / mean_r MSE_r,   MSE(b) = se^2

    The relative-bias fields are ``None`` when ``b`` is exactly 0. With ``R`` replicates
    fitted, the Monte-Carlo errors say how far the means could still move with more
    replicates: ``SD(b_r) / sqrt(R)`` for the mean estimate and, by the delta method,
    ``AP x SD(MSE_r) / (sqrt(R) mean_r MSE_r)`` for AP (SDs with ``R - 1``; None when R = 1).
    """

    n_replicates: int
    n_failed: int
    original_estimate: float
    original_se: float
    estimate_mean: float
    estimate_min: float
    estimate_max: float
    se_mean: float
    se_min: float
    se_max: float
    relative_bias_mean: float | None
    relative_bias_min: float | None
    relative_bias_max: float | None
    abs_relative_bias_mean: float | None
    mse_mean: float
    mse_min: float
    mse_max: float
    analysis_potential: float
    estimates: tuple[float, ...] = field(default=(), repr=False, compare=False)
    """Each fitted replicate's estimate b_r (failed replicates left out), for plots."""
    mse_sd: float | None = None
    """SD of the fitted replicates' MSE_r (None with one replicate)."""

    def __post_init__(self) -> None:
        if not 0 <= self.n_failed < self.n_replicates:
            raise ValueError("n_failed must be at least 0 and below n_replicates")

    @classmethod
    def from_replicates(
        cls,
        estimate: float,
        se: float,
        replicate_estimates: np.ndarray,
        replicate_ses: np.ndarray,
        n_failed: int = 0,
    ) -> ReplicateSummary:
        """Summarise the fitted replicates' exposure estimates and standard errors."""
        b_r = np.asarray(replicate_estimates, dtype=float)
        se_r = np.asarray(replicate_ses, dtype=float)
        if b_r.ndim != 1 or b_r.shape != se_r.shape or b_r.size == 0:
            raise ValueError("replicate estimates and ses must be equal-length, non-empty 1-D")
        if not (np.isfinite(b_r).all() and np.isfinite(se_r).all() and (se_r > 0).all()):
            raise ValueError("replicate estimates must be finite and ses finite and positive")
        if not (np.isfinite(estimate) and np.isfinite(se) and se > 0):
            raise ValueError("the original estimate must be finite and its se positive")
        mse_r = se_r**2 + (b_r - estimate) ** 2
        if estimate == 0:
            bias: tuple[float | None, ...] = (None, None, None, None)
        else:
            rel = (b_r - estimate) / estimate
            bias = (rel.mean(), rel.min(), rel.max(), np.abs(rel).mean())
        return cls(
            n_replicates=int(b_r.size + n_failed),
            n_failed=int(n_failed),
            original_estimate=float(estimate),
            original_se=float(se),
            estimate_mean=float(b_r.mean()),
            estimate_min=float(b_r.min()),
            estimate_max=float(b_r.max()),
            se_mean=float(se_r.mean()),
            se_min=float(se_r.min()),
            se_max=float(se_r.max()),
            relative_bias_mean=_float_or_none(bias[0]),
            relative_bias_min=_float_or_none(bias[1]),
            relative_bias_max=_float_or_none(bias[2]),
            abs_relative_bias_mean=_float_or_none(bias[3]),
            mse_mean=float(mse_r.mean()),
            mse_min=float(mse_r.min()),
            mse_max=float(mse_r.max()),
            analysis_potential=float(se**2 / mse_r.mean()),
            estimates=tuple(float(b) for b in b_r),
            mse_sd=float(mse_r.std(ddof=1)) if mse_r.size > 1 else None,
        )

    @property
    def estimate_mc_error(self) -> float | None:
        """Monte-Carlo standard error of ``estimate_mean`` (class docstring)."""
        if len(self.estimates) < 2:
            return None
        return float(np.std(self.estimates, ddof=1) / np.sqrt(len(self.estimates)))

    @property
    def analysis_potential_mc_error(self) -> float | None:
        """Monte-Carlo standard error of ``analysis_potential`` (class docstring)."""
        if self.mse_sd is None:
            return None
        fitted = self.n_replicates - self.n_failed
        return float(self.analysis_potential * self.mse_sd / (np.sqrt(fitted) * self.mse_mean))

    @property
    def original_mse(self) -> float:
        """``MSE(b) = se^2`` of the original estimate."""
        return self.original_se**2

    def __str__(self) -> str:
        width = 74
        head = f"{'':24s}{'original':>12s}{'mean':>12s}{'min':>12s}{'max':>12s}"

        def row(label: str, orig: str, values: tuple[float | None, ...], fmt: str) -> str:
            cells = "".join(f"{'-':>12s}" if v is None else f"{v:12{fmt}}" for v in values)
            return f"{label:24s}{orig:>12s}{cells}"

        lines = [
            f"Utility over {self.n_replicates} random-masking replicates "
            "(Cologne et al. 2012, Table 2)",
            "=" * width,
            head,
            "-" * width,
            row(
                "Estimate (b)",
                f"{self.original_estimate:.4f}",
                (self.estimate_mean, self.estimate_min, self.estimate_max),
                ".4f",
            ),
            row(
                "Std. error",
                f"{self.original_se:.4f}",
                (self.se_mean, self.se_min, self.se_max),
                ".4f",
            ),
            row(
                "Relative bias (%)",
                "",
                tuple(
                    None if v is None else 100 * v
                    for v in (
                        self.relative_bias_mean,
                        self.relative_bias_min,
                        self.relative_bias_max,
                    )
                ),
                ".3f",
            ),
            row(
                "|Relative bias| (%)",
                "",
                (
                    None
                    if self.abs_relative_bias_mean is None
                    else 100 * self.abs_relative_bias_mean,
                ),
                ".3f",
            ),
            row(
                "MSE",
                f"{self.original_mse:.5f}",
                (self.mse_mean, self.mse_min, self.mse_max),
                ".5f",
            ),
            "-" * width,
            f"Analysis potential MSE(b) / mean MSE(b_r): {self.analysis_potential:.4f}",
        ]
        if self.relative_bias_mean is None:
            lines.append("Relative bias undefined: the original estimate is exactly 0.")
        if self.n_failed:
            lines.append(
                f"{self.n_failed} replicate(s) failed (no convergence or separation) and are "
                "excluded; the summary may flatter the mask."
            )
        lines.append("=" * width)
        return "\n".join(lines)


def fit_logistic_replicates(
    design: np.ndarray,
    y: np.ndarray,
    start_beta: np.ndarray,
    *,
    varying: Mapping[int, np.ndarray] | None = None,
    max_iter: int = MAX_ITER,
    beta_tol: float = BETA_TOL,
    deviance_rtol: float = DEVIANCE_RTOL,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    group: bool = True,
) -> ReplicateFits:
    """Fit the logistic model ``logit P(y = 1) = X_r beta`` to ``R`` designs ``X_r`` at once.

    Newton-Raphson (equivalently IRLS for the canonical logit link), vectorised over
    replicates: from ``beta = start_beta`` (with a 2-D ``design``, moved by the first-order
    change of the estimate from the data ``design`` to the replicate's, which saves about
    one step), each replicate iterates::

        mu = expit(X beta),  W = diag(mu (1 - mu))
        I = X' W X,  U = X' (y - mu),  beta <- beta + I^-1 U

    until ``max |step| < beta_tol`` or ``|D_new - D_old| <= deviance_rtol * |D_new|``, with
    deviance ``D = 2 sum[log(1 + exp(eta)) - y eta]``. Standard errors are
    ``sqrt(diag(I^-1))`` at the estimate, as in statsmodels. A replicate fails (``converged``
    False, ``bse`` NaN) if it reaches ``max_iter`` or its information matrix is singular
    (smallest eigenvalue of the scaled matrix below ``RANK_RTOL**2`` of the largest). A
    converged replicate with fitted probabilities numerically 0 or 1 is checked for
    separation with :func:`~deid_core.utility.glm.separating_columns`.

    Parameters
    ----------
    design : ndarray, shape (R, n, p) or (n, p)
        Per-replicate designs, or one design shared by all replicates whose columns listed
        in ``varying`` are replaced replicate by replicate. The shared form costs memory
        and time in proportion to the number of varying columns only.
    y : ndarray, shape (n,)
        Outcome, 0/1, common to all replicates.
    start_beta : ndarray, shape (p,)
        Starting coefficients, e.g. the original-data fit (warm start).
    varying : mapping of int to ndarray of shape (R, n), optional
        With a 2-D ``design``: column index -> that column's values in each replicate.
    max_iter, beta_tol, deviance_rtol
        Convergence settings (see above).
    chunk_size : int
        Replicates fitted together; bounds memory to about ``chunk_size * n * p`` floats.
        The results do not depend on it, up to rounding.
    group : bool
        Fit a replicate whose records have few distinct (outcome, design row) patterns (at
        most ``GROUPING_SHARE`` of its records) on those patterns, weighted by their counts
        (:func:`_fit_patterns`): the same iterations, so the same estimates and standard
        errors up to rounding, in time proportional to the patterns. ``False`` fits every
        replicate on its records.
    """
    design = np.asarray(design, dtype=float)
    if design.ndim == 2 and varying:
        fitter = SharedDesignFitter(
            design,
            y,
            start_beta,
            sorted(varying),
            max_iter=max_iter,
            beta_tol=beta_tol,
            deviance_rtol=deviance_rtol,
        )
        return fitter.fit(varying, chunk_size=chunk_size, group=group)
    if design.ndim != 3:
        raise ValueError("design must be (R, n, p), or (n, p) with a non-empty varying")
    if varying is not None:
        raise ValueError("varying is only for a 2-D (shared) design")
    n_rep, n, p = design.shape
    y, start = _checked_outcome_and_start(y, start_beta, n, p)
    replicates = design.transpose(0, 2, 1)
    if not np.isfinite(replicates).all():
        raise ValueError("the designs must be finite")
    _check_settings(chunk_size, max_iter)
    settings = (max_iter, beta_tol, deviance_rtol)
    limit = int(GROUPING_SHARE * n) if group else -1
    found: dict[int, ReplicateFits] = {}
    for r in range(n_rep):
        patterns = _patterns([y, *replicates[r]], limit)
        if patterns is not None:
            rows, counts = patterns
            found[r] = _fit_patterns(design[r, rows], y[rows], counts, start, *settings)
    rest = [r for r in range(n_rep) if r not in found]
    if rest:
        fitter = _ChunkFitter(
            np.empty((n, 0)), np.arange(0), np.arange(p), y, start, *settings, None
        )
        for s in range(0, len(rest), chunk_size):
            chunk = rest[s : s + chunk_size]
            found.update(zip(chunk, _split(fitter.fit(replicates[chunk])), strict=True))
    return _concatenate([found[r] for r in range(n_rep)])


def pattern_codes(
    columns: Sequence[np.ndarray | tuple[np.ndarray, int]],
    limit: int | None = None,
) -> tuple[np.ndarray, int] | None:
    """The records' patterns of ``columns`` (equal-length 1-D arrays, read side by side)
    coded from 0 in the order of their first record, and how many there are; None when
    there are more than ``limit`` of them (None: no limit).

    Each column is coded by hashing (``pd.factorize``), unless it is given coded as
    ``(codes, number of codes)`` (codes from 0, equal exactly for equal values), and a row is
    read as a mixed-radix number of its codes (re-coded to the distinct numbers so far when
    the radix product would pass ``2**62``); records with equal numbers have equal rows.
    """
    key, span = np.zeros(1, dtype=np.int64), 1
    for column in columns:
        if isinstance(column, tuple):
            codes, size = column
        else:
            codes, levels = pd.factorize(column)
            size = levels.size
        if limit is not None and size > limit:
            return None
        if span * size >= 2**62:
            key, distinct = pd.factorize(key)
            key, span = key.astype(np.int64), distinct.size
        key = key * size + codes
        span *= size
    codes, distinct = pd.factorize(key)
    if limit is not None and distinct.size > limit:
        return None
    return codes, int(distinct.size)


def _patterns(
    columns: Sequence[np.ndarray | tuple[np.ndarray, int]],
    limit: int,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The distinct rows of ``columns`` (as read by :func:`pattern_codes`), in the order of
    their first record: one record of each and its count, or None when there are more than
    ``limit`` of them."""
    found = pattern_codes(columns, limit)
    if found is None:
        return None
    codes, size = found
    rows = np.empty(size, dtype=np.int64)
    rows[codes] = np.arange(codes.size)  # any record of a pattern stands for it: rows are equal
    return rows, np.bincount(codes, minlength=size).astype(float)


def fit_logistic_patterns(
    X: np.ndarray, y: np.ndarray, counts: np.ndarray, start: np.ndarray
) -> ReplicateFits:
    """The logistic fit of records given as distinct (outcome, design row) patterns ``X``
    (G, p) with outcomes ``y`` and ``counts`` records each, from ``start``, with the default
    settings: the fit :func:`fit_logistic_replicates` gives those records when it groups
    them (:func:`_fit_patterns`), a one-replicate result."""
    return _fit_patterns(
        np.asarray(X, dtype=float),
        np.asarray(y, dtype=float),
        np.asarray(counts, dtype=float),
        np.asarray(start, dtype=float),
        MAX_ITER,
        BETA_TOL,
        DEVIANCE_RTOL,
    )


def _fit_patterns(
    X: np.ndarray,
    y: np.ndarray,
    counts: np.ndarray,
    start: np.ndarray,
    max_iter: int,
    beta_tol: float,
    deviance_rtol: float,
) -> ReplicateFits:
    """One replicate's logistic fit from its distinct (outcome, design row) patterns ``X``
    (G, p) with outcomes ``y`` and ``counts`` records each, from ``start``.

    Records with the same design row and outcome add the same terms to the information, the
    score and the deviance, so with frequency weights ``c``::

        mu = expit(X beta),  w = mu (1 - mu)
        I = X' diag(c w) X,  U = X' (c (y - mu)),  D = 2 sum c [log(1 + exp(eta)) - y eta]

    are the records' own sums, and the Newton-Raphson iterations, the stopping rule, the
    standard errors ``sqrt(diag(I^-1))`` (model-based, as the weights are counts), the
    singularity test and the separation check (:func:`separating_columns` with the counts as
    weights: the same linear programme) are those of :meth:`_ChunkFitter._fit_block`; only
    the order of the additions differs. See e.g. McCullagh and Nelder (1989, section 4.5)
    for IRLS with prior weights.
    """
    beta = start.astype(float).copy()
    bse = np.full(beta.size, np.nan)
    dev, step_max, iterations = np.nan, np.inf, 0
    converged = separated = False
    for it in range(max_iter + 1):
        check_cancelled()  # a fit no longer wanted stops here (deid_core.cancellation)
        eta = X @ beta
        mu = expit(eta)
        w = mu * (1.0 - mu)
        info = X.T @ ((counts * w)[:, None] * X)
        score = X.T @ (counts * (y - mu))
        terms = np.where(y == 1.0, np.logaddexp(0.0, -eta), np.logaddexp(0.0, eta))
        dev_new = 2.0 * float(counts @ terms)
        done = step_max < beta_tol or abs(dev_new - dev) <= deviance_rtol * abs(dev_new)
        dev = dev_new
        regular = bool(_regular(info[None])[0])
        if done and regular:
            converged = True
            bse = np.sqrt(np.diagonal(np.linalg.inv(info)))
            if w.min() < EXTREME_WEIGHT:
                separated = bool(separating_columns(X, y, weights=counts))
        if it == max_iter or done or not regular:
            break
        step = np.linalg.solve(info, score)
        beta += step
        step_max = float(np.abs(step).max())
        iterations = it + 1
    if separated:
        bse[:] = np.nan
    return ReplicateFits(
        beta[None],
        bse[None],
        np.array([dev]),
        np.array([iterations]),
        np.array([converged]),
        np.array([separated]),
    )


def _split(fits: ReplicateFits) -> list[ReplicateFits]:
    """Each replicate of ``fits`` as a ReplicateFits of its own."""
    return [
        ReplicateFits(*(getattr(fits, f.name)[r : r + 1] for f in fields(ReplicateFits)))
        for r in range(fits.params.shape[0])
    ]


def _checked_outcome_and_start(
    y: np.ndarray, start_beta: np.ndarray, n: int, p: int
) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y, dtype=float)
    start = np.asarray(start_beta, dtype=float)
    if y.shape != (n,) or not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("y must be a 0/1 vector with one value per design row")
    if start.shape != (p,) or not np.isfinite(start).all():
        raise ValueError("start_beta must be a finite vector with one value per column")
    return y, start


def _check_settings(chunk_size: int, max_iter: int) -> None:
    if chunk_size < 1 or max_iter < 1:
        raise ValueError("chunk_size and max_iter must be at least 1")


class SharedDesignFitter:
    """:func:`fit_logistic_replicates` of one shared design ``(n, p)`` whose columns
    ``varying_columns`` change from replicate to replicate, prepared once and fitted to any
    number of batches of replicates.

    The preparation (grouping the records by outcome and fixed columns, and the linearisation
    of the score around the data ``start_beta`` was fitted to, :class:`_ChunkFitter`) costs
    about as much as a few fits on a large file; a caller that fits many batches with the
    same varying columns (the recipe search, :mod:`deid_core.search`) prepares it once. The
    fits are those of :func:`fit_logistic_replicates` with the same arguments: each replicate
    passes the varying columns it does not change at their values in ``design``.
    """

    def __init__(
        self,
        design: np.ndarray,
        y: np.ndarray,
        start_beta: np.ndarray,
        varying_columns: Sequence[int],
        *,
        max_iter: int = MAX_ITER,
        beta_tol: float = BETA_TOL,
        deviance_rtol: float = DEVIANCE_RTOL,
    ) -> None:
        design = np.asarray(design, dtype=float)
        if design.ndim != 2 or not len(varying_columns):
            raise ValueError("design must be (R, n, p), or (n, p) with a non-empty varying")
        n, p = design.shape
        var_idx = np.array(sorted(varying_columns), dtype=int)
        if var_idx.min() < 0 or var_idx.max() >= p or np.unique(var_idx).size != var_idx.size:
            raise ValueError("varying column indices must lie within the design")
        y, start = _checked_outcome_and_start(y, start_beta, n, p)
        fixed_idx = np.setdiff1d(np.arange(p), var_idx)
        shared = design[:, fixed_idx]
        if not np.isfinite(shared).all():
            raise ValueError("the designs must be finite")
        _check_settings(1, max_iter)
        self.n, self.var_idx = n, var_idx
        self._settings = (max_iter, beta_tol, deviance_rtol)
        self._fitter = _ChunkFitter(
            shared, fixed_idx, var_idx, y, start, max_iter, beta_tol, deviance_rtol,
            design[:, var_idx].T,
        )  # fmt: skip

    def fit(
        self,
        varying: Mapping[int, np.ndarray],
        *,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        group: bool = True,
        codes: Sequence[Sequence[tuple[np.ndarray, int] | None]] | None = None,
    ) -> ReplicateFits:
        """Fit the replicates whose varying columns are ``varying`` (column index -> that
        column's values in each replicate, shape (R, n); exactly the prepared columns).
        ``codes[r][i]`` (optional) is the ``i``-th prepared varying column of replicate ``r``
        already coded, ``(codes from 0, number of codes)`` with codes equal exactly for equal
        values (e.g. a caller's cache of ``pd.factorize`` of a column many replicates share),
        or None to have it coded here.

        With ``group`` (see :func:`fit_logistic_replicates`), a replicate whose records
        have at most ``GROUPING_SHARE x n`` distinct patterns of (outcome and fixed columns,
        varying columns) is fitted on them with their counts as weights
        (:func:`_fit_patterns`), from the same extrapolated start; the others together,
        record by record."""
        if sorted(varying) != self.var_idx.tolist():
            raise ValueError("varying column indices must lie within the design")
        replicates = np.stack([np.asarray(varying[j], dtype=float) for j in self.var_idx], axis=1)
        if replicates.ndim != 3 or replicates.shape[2] != self.n:
            raise ValueError("each varying column must have shape (R, n)")
        if not np.isfinite(replicates).all():
            raise ValueError("the designs must be finite")
        _check_settings(chunk_size, 1)
        n_rep = replicates.shape[0]
        fitter = self._fitter
        limit = int(GROUPING_SHARE * self.n) if group else -1
        patterns = {}
        for r in range(n_rep):
            given = [None] * len(self.var_idx) if codes is None else codes[r]
            columns = [z if c is None else c for z, c in zip(replicates[r], given, strict=True)]
            found = _patterns([(fitter.inverse, fitter.counts.size), *columns], limit)
            if found is not None:
                patterns[r] = found
        out: dict[int, ReplicateFits] = {}
        if patterns:
            grouped = list(patterns)
            starts = fitter._initial(replicates[grouped], caller_order=True)
            for r, start in zip(grouped, starts, strict=True):
                rows, counts = patterns[r]
                group_of = fitter.inverse[rows]
                X = np.empty((rows.size, fitter.start.size))
                X[:, fitter.fixed] = fitter.values[group_of]
                X[:, fitter.var] = replicates[r][:, rows].T
                y = fitter.group_outcome[group_of]
                out[r] = _fit_patterns(X, y, counts, start, *self._settings)
        rest = [r for r in range(n_rep) if r not in out]
        for s in range(0, len(rest), chunk_size):
            chunk = rest[s : s + chunk_size]
            out.update(zip(chunk, _split(fitter.fit(replicates[chunk])), strict=True))
        return _concatenate([out[r] for r in range(n_rep)])


def replicate_utility(
    original_df: pd.DataFrame,
    make_masked: Callable[[int], pd.Series | np.ndarray | pd.DataFrame],
    spec: ModelSpec,
    original_fit: FitResult,
    n_replicates: int = 100,
    progress: Callable[[int, int], None] | None = None,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    partial: Callable[[ReplicateSummary], None] | None = None,
) -> ReplicateSummary:
    """Fit ``spec`` to ``n_replicates`` randomly masked versions of the data and summarise.

    The caller masks only what is random. ``make_masked(r)`` (``r = 0 .. n_replicates-1``)
    returns replicate ``r``'s masked values, aligned row for row with ``original_df``:

    * a 1-D array or Series: the masked exposure column; or
    * a DataFrame holding the masked numeric model columns only (exposure and/or numeric
      covariates); every other model column keeps its original values.

    It should be deterministic in ``r`` (e.g. seed the generator with ``base_seed + r``)
    so the summary is reproducible. A Series or DataFrame must carry ``original_df``'s
    index. The records are those complete in the original model (``original_fit.n``); the
    masked values must be finite there. Replicates are drawn and fitted ``chunk_size`` at a
    time, warm-started from ``original_fit``, and ``progress(done, total)`` is called after
    each chunk has been fitted, and ``partial(summary)`` with the summary of the replicates
    fitted so far (a running mean, with its Monte-Carlo error); either may raise to stop the
    work (e.g. :class:`~deid_core.errors.Cancelled`). Logistic replicates are fitted together
    as by :func:`fit_logistic_replicates`; the other families one by one by
    :func:`~deid_core.utility.models.refit` (a replicate whose fit raises
    :class:`~deid_core.errors.ModelFitError` counts as failed).
    The results do not depend (up to rounding) on ``chunk_size``.

    Raises
    ------
    ModelFitError
        If ``n_replicates`` is outside ``1 .. MAX_REPLICATES``, if ``original_fit`` does not
        belong to ``original_df`` and ``spec``, if a replicate's values are unusable, or if
        every replicate fails to fit.
    """
    if isinstance(n_replicates, bool) or not isinstance(n_replicates, (int, np.integer)):
        raise ModelFitError("the number of replicates must be a whole number")
    if n_replicates < 1:
        raise ModelFitError("the number of replicates must be at least 1")
    bounds.REPLICATES.check(n_replicates, "The analysis asks for")
    if chunk_size < 1:
        raise ModelFitError("the chunk size must be at least 1")
    if original_fit.spec != spec:
        raise ModelFitError("original_fit was fitted with a different model specification")
    design = build_design(original_df, spec)
    if design.names != original_fit.param_names or design.y.size != original_fit.n:
        raise ModelFitError("original_fit was not fitted to original_df")

    start = np.asarray(original_fit.params)
    varying_columns: list[str] = []

    def draw_chunk(first: int) -> np.ndarray:
        """The chunk of replicates from ``first`` on: their masked columns, (R, k, n)."""
        draws = [
            masked_model_columns(make_masked(r), original_df, design, spec)
            for r in range(first, min(first + chunk_size, n_replicates))
        ]
        if not varying_columns:
            varying_columns.extend(draws[0])
        if any(list(d) != varying_columns for d in draws):
            raise ModelFitError("every replicate must mask the same columns")
        replicates = np.empty((len(draws), len(varying_columns), design.y.size))
        for replicate, d in zip(replicates, draws, strict=True):
            for row, column in zip(replicate, d.values(), strict=True):
                row[:] = column
        return replicates

    estimates: list[np.ndarray] = []
    ses: list[np.ndarray] = []
    n_done = 0

    def record(b_r: np.ndarray, se_r: np.ndarray, n_chunk: int) -> None:
        """Keep a chunk's fitted estimates and SEs; report progress."""
        nonlocal n_done
        estimates.append(b_r)
        ses.append(se_r)
        n_done += n_chunk
        if progress is not None:
            progress(n_done, n_replicates)
        n_fitted = sum(b.size for b in estimates)
        if partial is not None and n_fitted:
            partial(
                ReplicateSummary.from_replicates(
                    original_fit.estimate,
                    original_fit.se,
                    np.concatenate(estimates),
                    np.concatenate(ses),
                    n_failed=n_done - n_fitted,
                )
            )

    chunks = range(0, n_replicates, chunk_size)
    if spec.family == "logistic":
        fitter: _ChunkFitter | None = None
        for first in chunks:
            replicates = draw_chunk(first)
            if fitter is None:
                var_idx = np.array([design.sources.index(c) for c in varying_columns])
                fixed_idx = np.setdiff1d(np.arange(design.X.shape[1]), var_idx)
                fitter = _ChunkFitter(
                    design.X[:, fixed_idx],
                    fixed_idx,
                    var_idx,
                    design.y,
                    start,
                    MAX_ITER,
                    BETA_TOL,
                    DEVIANCE_RTOL,
                    design.X[:, var_idx].T,
                )
            record(*_exposure_estimates(fitter.fit(replicates)))
    else:
        for first in chunks:
            replicates = draw_chunk(first)
            var_idx = np.array([design.sources.index(c) for c in varying_columns])
            b_r, se_r = _fit_one_by_one(spec, design, var_idx, replicates, start)
            record(b_r, se_r, replicates.shape[0])
    n_failed = n_replicates - sum(b.size for b in estimates)
    if n_failed == n_replicates:
        raise ModelFitError(
            "every replicate failed to fit (no convergence or separation); "
            "the masking is too strong for this model"
        )
    return ReplicateSummary.from_replicates(
        original_fit.estimate,
        original_fit.se,
        np.concatenate(estimates),
        np.concatenate(ses),
        n_failed=n_failed,
    )


def _exposure_estimates(fits: ReplicateFits) -> tuple[np.ndarray, np.ndarray, int]:
    """Exposure estimates and SEs of the usable replicates, and the number fitted."""
    return fits.params[fits.ok, EXPOSURE_INDEX], fits.bse[fits.ok, EXPOSURE_INDEX], fits.ok.size


def _fit_one_by_one(
    spec: ModelSpec,
    design: Design,
    var_idx: np.ndarray,
    replicates: np.ndarray,
    start: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Exposure estimates and SEs of the replicates that fit (non-logistic families).

    Replicate ``r``'s design is ``design.X`` with columns ``var_idx`` replaced by the rows
    of ``replicates[r]`` (shape (k, n)); each is fitted by :func:`refit` from ``start``.
    A replicate whose design is rank-deficient (e.g. an exposure masked to a constant) fails
    like the original data would (:func:`check_rank`): its coefficients are not identified,
    and a fit would only report a point on a ridge of equal likelihood.
    """
    estimates, ses = [], []
    X = design.X.copy()
    j = design.exposure_index
    for Z in replicates:
        X[:, var_idx] = Z.T
        try:
            check_rank(X, design.sources)
            fit = refit(spec, design, X, start=start)
        except ModelFitError:
            continue
        estimates.append(fit.params[j])
        ses.append(fit.bse[j])
    return np.asarray(estimates, dtype=float), np.asarray(ses, dtype=float)


class _ChunkFitter:
    """Vectorised Newton-Raphson for logistic regression over a chunk of replicates.

    Design column ``fixed_idx[i]`` is ``shared[:, i]`` in every replicate; column
    ``var_idx[k]`` is ``Z[r, k, :]`` in replicate ``r``. The records are reordered once so
    that records with the same shared columns (e.g. intercept, sex, city) are contiguous:
    sums over records that involve the shared columns then reduce to one sum per group and
    a small product with the groups' shared values. The replicates are fitted in blocks of
    about ``BLOCK_ELEMENTS`` design rows, so that a block's work arrays stay in the CPU
    cache.
    """

    def __init__(
        self,
        shared: np.ndarray,
        fixed_idx: np.ndarray,
        var_idx: np.ndarray,
        y: np.ndarray,
        start: np.ndarray,
        max_iter: int,
        beta_tol: float,
        deviance_rtol: float,
        base: np.ndarray | None = None,
    ) -> None:
        n, q = shared.shape
        keys, inverse, _ = unique_rows(np.column_stack([y, shared]))
        self.order = np.argsort(inverse.ravel(), kind="stable")
        counts = np.bincount(inverse.ravel(), minlength=keys.shape[0])
        #: Group g (sorted by y, then by the shared columns) is records
        #: ``starts[g] : starts[g] + counts[g]`` in ``order``; it has outcome ``keys[g, 0]``
        #: and shared columns ``values[g]``. Records with y = 0 come first, ``n0`` of them.
        self.counts = counts
        #: Each record's group (in the caller's record order), and each group's outcome.
        self.inverse = inverse.ravel()
        self.group_outcome = keys[:, 0]
        self.starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self.values = keys[:, 1:]
        self.one_row = bool((self.values == self.values[0]).all())
        self.outer = (self.values[:, :, None] * self.values[:, None, :]).reshape(len(keys), q * q)
        #: Sign of a group's log terms in the deviance: -log(1 - mu) for y = 0 records,
        #: +log1p(e) for y = 1 (see :meth:`_evaluate`).
        self.term_sign = np.where(keys[:, 0] == 1.0, 1.0, -1.0)
        self.n0 = int((y == 0.0).sum())
        self.shared = shared[self.order]
        self.y = y[self.order]
        self.fixed = fixed_idx
        self.var = var_idx
        self.start = start
        self.max_iter = max_iter
        self.beta_tol = beta_tol
        self.deviance_rtol = deviance_rtol
        self.block = max(1, BLOCK_ELEMENTS // max(n, 1))
        self.extrapolation = None if base is None else self._linearise(base[:, self.order])
        #: ``A`` of the extrapolation with its records in the caller's order (made once).
        self._caller_A: np.ndarray | None = None

    def _linearise(self, base: np.ndarray) -> tuple[np.ndarray, ...] | None:
        """What :meth:`_initial` needs to extrapolate the start to each replicate.

        ``base`` (k, n) holds the varying columns of the data ``start`` was fitted to.
        Returns ``(A, c, U0, I0, I0_inv)`` with ``A = [y - mu0, W0 X0]`` (n, 1 + p) and
        ``c = base A``, or None if the information ``I0`` at the start is singular.
        """
        X0 = self._materialise(base)
        mu0 = expit(X0 @ self.start)
        w0 = mu0 * (1.0 - mu0)
        info0 = X0.T @ (w0[:, None] * X0)
        if not _regular(info0[None])[0]:
            return None
        A = np.column_stack([self.y - mu0, w0[:, None] * X0])
        return A, base @ A, X0.T @ (self.y - mu0), info0, np.linalg.inv(info0)

    def _initial(self, Z: np.ndarray, *, caller_order: bool = False) -> np.ndarray:
        """Starting coefficients (R, p) for the replicates ``Z`` (R, k, n), whose records are
        in the fitter's order (``caller_order``: in the caller's).

        Without a base, ``start`` itself. With one, ``start`` moved by the first-order
        change of the estimate with the varying columns: one Newton step from ``start``
        with the replicate's score linearised around the base data, ``delta = Z - base``::

            U = U0 + sum_k [e_k (y - mu0)' delta_k - start_k X0' W0 delta_k]
            beta = start + I0^-1 U

        which saves about one Newton step per replicate when the masking is mild. A
        replicate keeps ``start`` if its move ``d = beta - start`` is not finite or if
        ``d' I0 d > EXTRAPOLATION_LIMIT``.
        """
        beta = np.repeat(self.start[None, :], Z.shape[0], axis=0)
        if self.extrapolation is None:
            return beta
        A, c, score0, info0, info0_inv = self.extrapolation
        if caller_order:
            if self._caller_A is None:
                self._caller_A = np.empty_like(A)
                self._caller_A[self.order] = A
            A = self._caller_A
        G = np.matmul(Z, A) - c  # (R, k, 1 + p): delta_k' A
        score = score0 - np.einsum("k,rkp->rp", self.start[self.var], G[:, :, 1:])
        score[:, self.var] += G[:, :, 0]
        move = score @ info0_inv
        with np.errstate(invalid="ignore", over="ignore"):
            near = np.einsum("rp,pq,rq->r", move, info0, move) <= EXTRAPOLATION_LIMIT
        beta[near] += move[near]
        return beta

    def fit(self, Z: np.ndarray) -> ReplicateFits:
        """Fit the replicates ``Z`` (shape (R, k, n)), block by block."""
        bounds = range(0, Z.shape[0], self.block)
        return _concatenate([self._fit_block(Z[s : s + self.block]) for s in bounds])

    def _fit_block(self, Z: np.ndarray) -> ReplicateFits:
        """Newton-Raphson on one block of replicates ``Z`` (shape (R, k, n)).

        Each pass evaluates, at the current ``beta`` of every active replicate, the
        deviance, information and score; a replicate has converged when the step that led
        to this ``beta`` or the deviance change it caused is small, and its standard errors
        then come from the information at this ``beta``. Otherwise it takes the next step.
        :func:`~deid_core.cancellation.check_cancelled` is called before each pass (a pass
        over one block is about ``BLOCK_ELEMENTS`` design rows of work, or one replicate of a
        large file), so that a fit no longer wanted stops there.
        """
        Z = np.take(Z, self.order, axis=2)
        n_rep, p = Z.shape[0], self.start.size
        beta = self._initial(Z)
        bse = np.full((n_rep, p), np.nan)
        dev = np.full(n_rep, np.nan)
        step_max = np.full(n_rep, np.inf)
        iterations = np.zeros(n_rep, dtype=int)
        converged = np.zeros(n_rep, dtype=bool)
        separated = np.zeros(n_rep, dtype=bool)
        active = np.arange(n_rep)
        for it in range(self.max_iter + 1):
            check_cancelled()  # a fit no longer wanted stops here (deid_core.cancellation)
            Za = Z if active.size == n_rep else Z[active]
            dev_old = dev[active]
            info, score, dev_new, w = self._evaluate(Za, beta[active])
            dev[active] = dev_new
            done = (step_max[active] < self.beta_tol) | (
                np.abs(dev_new - dev_old) <= self.deviance_rtol * np.abs(dev_new)
            )
            regular = _regular(info)
            fin = done & regular
            if fin.any():
                ok = active[fin]
                converged[ok] = True
                bse[ok] = np.sqrt(np.diagonal(np.linalg.inv(info[fin]), axis1=1, axis2=2))
                for i in np.flatnonzero(fin & (w.min(axis=1) < EXTREME_WEIGHT)):
                    r = active[i]
                    separated[r] = bool(separating_columns(self._materialise(Z[r]), self.y))
            keep = ~done & regular
            if it == self.max_iter or not keep.any():
                break
            step = np.linalg.solve(info[keep], score[keep][..., None])[..., 0]
            active = active[keep]
            beta[active] += step
            step_max[active] = np.abs(step).max(axis=1)
            iterations[active] = it + 1
        bse[separated] = np.nan
        return ReplicateFits(beta, bse, dev, iterations, converged, separated)

    def _evaluate(self, Z: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, ...]:
        """Information ``X' W X`` (R, p, p), score ``X' (y - mu)`` (R, p), deviance (R,)
        and weights ``W = mu (1 - mu)`` (R, n) at ``beta`` (R, p), for designs ``Z``.

        With ``e = exp(-eta)`` and ``mu = 1 / (1 + e)``, the deviance
        ``2 sum[log(1 + exp(eta)) - y eta]`` is ``-2 sum log(1 - mu)`` over the records
        with ``y = 0`` and ``2 sum log1p(e)`` over those with ``y = 1`` (precise as ``mu``
        approaches 1 under separation). ``eta`` is floored at ``ETA_FLOOR`` inside ``exp``,
        so that ``e`` stays finite, and the floor is added back to the ``y = 1`` terms.
        """
        n_rep, k, n = Z.shape
        q, p, n0 = self.fixed.size, self.start.size, self.n0
        # rows of `rows`: weights, log terms of the deviance, residuals, weighted varying columns
        rows = np.empty((n_rep, 3 + k, n))
        w, terms, resid = rows[:, 0], rows[:, 1], rows[:, 2]
        e = w  # w holds e until the weights replace it
        neta = np.empty((n_rep, n))  # -eta
        np.multiply(Z[:, 0], -beta[:, self.var[0], None], out=neta)
        for j in range(1, k):
            neta -= Z[:, j] * beta[:, self.var[j], None]
        group_eta = beta[:, self.fixed] @ self.values.T  # (R, groups)
        neta -= group_eta[:, :1] if self.one_row else np.repeat(group_eta, self.counts, axis=1)
        if neta.max() <= -ETA_FLOOR:
            np.exp(neta, out=e)
            np.log1p(e[:, n0:], out=terms[:, n0:])
        else:
            np.minimum(neta, -ETA_FLOOR, out=e)
            np.subtract(neta[:, n0:], e[:, n0:], out=terms[:, n0:])  # eta_floor - eta
            np.exp(e, out=e)
            terms[:, n0:] += np.log1p(e[:, n0:])
        np.add(e, 1.0, out=neta)
        mu = resid  # resid holds mu until the residuals replace it
        np.divide(1.0, neta, out=mu)
        np.subtract(1.0, mu, out=w)
        np.log(w[:, :n0], out=terms[:, :n0])
        w *= mu
        np.subtract(self.y, mu, out=resid)
        for j in range(k):
            np.multiply(w, Z[:, j], out=rows[:, 3 + j])
        group_sums = np.add.reduceat(rows, self.starts, axis=2)  # (R, 3 + k, groups)
        products = np.matmul(rows[:, 2:], Z.transpose(0, 2, 1))  # (R, 1 + k, k)
        f, v = self.fixed, self.var
        info = np.empty((n_rep, p, p))
        info[:, f[:, None], f[None, :]] = (group_sums[:, 0] @ self.outer).reshape(n_rep, q, q)
        cross = group_sums[:, 3:] @ self.values  # (R, k, q)
        info[:, v[:, None], f[None, :]] = cross
        info[:, f[:, None], v[None, :]] = cross.transpose(0, 2, 1)
        info[:, v[:, None], v[None, :]] = products[:, 1:]
        score = np.empty((n_rep, p))
        score[:, f] = group_sums[:, 2] @ self.values
        score[:, v] = products[:, 0]
        deviance = 2.0 * (group_sums[:, 1] @ self.term_sign)
        return info, score, deviance, w

    def _materialise(self, z: np.ndarray) -> np.ndarray:
        """One replicate's full design, shape (n, p), from its varying columns (k, n), in
        the fitter's record order."""
        X = np.empty((self.y.size, self.start.size))
        X[:, self.fixed] = self.shared
        X[:, self.var] = z.T
        return X


def _concatenate(parts: list[ReplicateFits]) -> ReplicateFits:
    """The replicates of ``parts``, in order, as one :class:`ReplicateFits`."""
    return ReplicateFits(
        *(np.concatenate([getattr(part, f.name) for part in parts]) for f in fields(ReplicateFits))
    )


def _float_or_none(value: float | None) -> float | None:
    return None if value is None else float(value)


def _regular(info: np.ndarray) -> np.ndarray:
    """Which information matrices are finite and non-singular (scale-free test)."""
    finite = np.isfinite(info).all(axis=(1, 2))
    diag = np.diagonal(info, axis1=1, axis2=2)
    good = finite & (diag > 0).all(axis=1)
    out = np.zeros(info.shape[0], dtype=bool)
    if good.any():
        d = np.sqrt(diag[good])
        eig = np.linalg.eigvalsh(info[good] / (d[:, :, None] * d[:, None, :]))
        out[good] = eig[:, 0] > RANK_RTOL**2 * eig[:, -1]
    return out


def masked_model_columns(
    draw: pd.Series | np.ndarray | pd.DataFrame,
    original_df: pd.DataFrame,
    design: Design,
    spec: ModelSpec,
) -> dict[str, np.ndarray]:
    """One replicate's masked columns, on the model's complete records, as float arrays."""
    if isinstance(draw, pd.DataFrame):
        columns = {str(c): draw[c] for c in draw.columns}
    elif isinstance(draw, pd.Series | np.ndarray):
        columns = {spec.exposure: draw}
    else:
        raise ModelFitError("make_masked must return an array, a Series or a DataFrame")
    if not columns:
        raise ModelFitError("make_masked returned no columns")
    numeric = {spec.exposure} | {
        c
        for c, src in zip(design.names, design.sources, strict=True)
        if c == src and c in spec.covariates
    }
    values: dict[str, np.ndarray] = {}
    for name, column in columns.items():
        if name not in numeric:
            raise ModelFitError(
                f"replicates may mask only the exposure and numeric covariates, not {name!r}"
            )
        if isinstance(column, pd.Series):
            if not column.index.equals(original_df.index):
                raise ModelFitError(f"masked {name!r} must carry the original data's index")
            if not pd.api.types.is_numeric_dtype(column):
                raise ModelFitError(
                    f"masked {name!r} is not numeric (interval labels?); "
                    "release midpoints or means instead"
                )
            column = column.to_numpy(dtype=float, na_value=np.nan)
        array = np.asarray(column)
        if array.shape != (len(original_df),):
            raise ModelFitError(f"masked {name!r} must have one value per original record")
        if not np.issubdtype(array.dtype, np.number):
            raise ModelFitError(
                f"masked {name!r} is not numeric (interval labels?); "
                "release midpoints or means instead"
            )
        if design.rows.all():
            array = array.astype(float)  # a copy: make_masked may reuse its array
        else:
            array = array[design.rows].astype(float, copy=False)
        if not np.isfinite(array).all():
            raise ModelFitError(
                f"masked {name!r} has missing or infinite values on records the model uses"
            )
        values[name] = array
    return values
