"""Utility of random masking, summarised over replicates.

A random mask (e.g. uniform noise added to the dose) gives a different masked data set on
every draw, so Cologne et al. (2012, Table 2) report the mean and range over ``R``
replicates (they used 500) of the masked estimate ``b_r``, its standard error ``se_r``,
the relative bias ``(b_r - b) / b`` and ``MSE_r = se_r^2 + (b_r - b)^2``, with the
analysis potential taken from the mean MSE: ``AP = se^2 / mean_r MSE_r``.

Fitting hundreds of replicates one by one with statsmodels is slow, and only the masked
columns differ between them. :func:`fit_logistic_replicates` therefore fits many
replicates at once by Newton-Raphson (IRLS) vectorised over replicates, warm-started from
the original fit; :func:`replicate_utility` draws the replicates, fits them in chunks and
summarises them in a :class:`ReplicateSummary`. The other families (poisson, linear, err)
are fitted replicate by replicate with their own fitter
(:func:`~deid_core.utility.models.fit_design`), warm-started from the original fit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd
from scipy.special import expit

from deid_core.errors import ModelFitError
from deid_core.utility.models import (
    EXPOSURE_INDEX,
    EXTREME_WEIGHT,
    RANK_RTOL,
    Design,
    FitResult,
    ModelSpec,
    build_design,
    fit_design,
    separating_columns,
)

#: Most replicates :func:`replicate_utility` runs (Cologne et al. used 500).
MAX_REPLICATES = 500
#: Replicates fitted together; bounds memory at about ``chunk * n * (varying columns)``.
DEFAULT_CHUNK_SIZE = 50
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

    The relative-bias fields are ``None`` when ``b`` is exactly 0.
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
        )

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
) -> ReplicateFits:
    """Fit the logistic model ``logit P(y = 1) = X_r beta`` to ``R`` designs ``X_r`` at once.

    Newton-Raphson (equivalently IRLS for the canonical logit link), vectorised over
    replicates: from ``beta = start_beta``, each replicate iterates::

        mu = expit(X beta),  W = diag(mu (1 - mu))
        I = X' W X,  U = X' (y - mu),  beta <- beta + I^-1 U

    until ``max |step| < beta_tol`` or ``|D_new - D_old| <= deviance_rtol * |D_new|``, with
    deviance ``D = 2 sum[log(1 + exp(eta)) - y eta]``. Standard errors are
    ``sqrt(diag(I^-1))`` at the estimate, as in statsmodels. A replicate fails (``converged``
    False, ``bse`` NaN) if it reaches ``max_iter`` or its information matrix is singular
    (smallest eigenvalue of the scaled matrix below ``RANK_RTOL**2`` of the largest). A
    converged replicate with fitted probabilities numerically 0 or 1 is checked for
    separation with :func:`~deid_core.utility.models.separating_columns`.

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
    """
    design = np.asarray(design, dtype=float)
    y = np.asarray(y, dtype=float)
    start = np.asarray(start_beta, dtype=float)
    if design.ndim == 3:
        if varying is not None:
            raise ValueError("varying is only for a 2-D (shared) design")
        n_rep, n, p = design.shape
        fixed_idx, var_idx = np.arange(0), np.arange(p)
        shared = np.empty((n, 0))
        replicates = design
    elif design.ndim == 2 and varying:
        n, p = design.shape
        var_idx = np.array(sorted(varying), dtype=int)
        if var_idx.min() < 0 or var_idx.max() >= p:
            raise ValueError("varying column indices must lie within the design")
        fixed_idx = np.setdiff1d(np.arange(p), var_idx)
        shared = design[:, fixed_idx]
        replicates = np.stack([np.asarray(varying[j], dtype=float) for j in var_idx], axis=-1)
        if replicates.ndim != 3 or replicates.shape[1] != n:
            raise ValueError("each varying column must have shape (R, n)")
        n_rep = replicates.shape[0]
    else:
        raise ValueError("design must be (R, n, p), or (n, p) with a non-empty varying")
    if y.shape != (n,) or not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("y must be a 0/1 vector with one value per design row")
    if start.shape != (p,) or not np.isfinite(start).all():
        raise ValueError("start_beta must be a finite vector with one value per column")
    if not (np.isfinite(shared).all() and np.isfinite(replicates).all()):
        raise ValueError("the designs must be finite")
    if chunk_size < 1 or max_iter < 1:
        raise ValueError("chunk_size and max_iter must be at least 1")

    fitter = _ChunkFitter(shared, fixed_idx, var_idx, y, start, max_iter, beta_tol, deviance_rtol)
    parts = [fitter.fit(replicates[s : s + chunk_size]) for s in range(0, n_rep, chunk_size)]
    return ReplicateFits(
        *(np.concatenate([getattr(part, f.name) for part in parts]) for f in fields(ReplicateFits))
    )


def replicate_utility(
    original_df: pd.DataFrame,
    make_masked: Callable[[int], pd.Series | np.ndarray | pd.DataFrame],
    spec: ModelSpec,
    original_fit: FitResult,
    n_replicates: int = 100,
    progress: Callable[[int, int], None] | None = None,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
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
    each chunk. Logistic replicates are fitted together by :func:`fit_logistic_replicates`;
    the other families one by one by :func:`~deid_core.utility.models.fit_design` (a
    replicate whose fit raises :class:`~deid_core.errors.ModelFitError` counts as failed).

    Raises
    ------
    ModelFitError
        If ``n_replicates`` is outside ``1 .. MAX_REPLICATES``, if ``original_fit`` does not
        belong to ``original_df`` and ``spec``, if a replicate's values are unusable, or if
        every replicate fails to fit.
    """
    if isinstance(n_replicates, bool) or not isinstance(n_replicates, (int, np.integer)):
        raise ModelFitError("the number of replicates must be a whole number")
    if not 1 <= n_replicates <= MAX_REPLICATES:
        raise ModelFitError(f"the number of replicates must be between 1 and {MAX_REPLICATES}")
    if chunk_size < 1:
        raise ModelFitError("the chunk size must be at least 1")
    if original_fit.spec != spec:
        raise ModelFitError("original_fit was fitted with a different model specification")
    design = build_design(original_df, spec)
    if design.names != original_fit.param_names or design.y.size != original_fit.n:
        raise ModelFitError("original_fit was not fitted to original_df")

    start = np.asarray(original_fit.params)
    varying_columns: tuple[str, ...] | None = None
    fitter: _ChunkFitter | None = None
    estimates, ses, n_failed = [], [], 0
    for first in range(0, n_replicates, chunk_size):
        draws = [
            _masked_columns(make_masked(r), original_df, design, spec)
            for r in range(first, min(first + chunk_size, n_replicates))
        ]
        if varying_columns is None:
            varying_columns = tuple(draws[0])
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
            )
        if any(tuple(d) != varying_columns for d in draws):
            raise ModelFitError("every replicate must mask the same columns")
        replicates = np.stack([np.column_stack(list(d.values())) for d in draws])
        if spec.family == "logistic":
            fits = fitter.fit(replicates)
            estimates.append(fits.params[fits.ok, EXPOSURE_INDEX])
            ses.append(fits.bse[fits.ok, EXPOSURE_INDEX])
            n_failed += int((~fits.ok).sum())
        else:
            b_r, se_r = _fit_one_by_one(spec.family, design, var_idx, replicates, start)
            estimates.append(b_r)
            ses.append(se_r)
            n_failed += len(draws) - b_r.size
        if progress is not None:
            progress(first + len(draws), n_replicates)
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


def _fit_one_by_one(
    family: str,
    design: Design,
    var_idx: np.ndarray,
    replicates: np.ndarray,
    start: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Exposure estimates and SEs of the replicates that fit (non-logistic families).

    Replicate ``r``'s design is ``design.X`` with columns ``var_idx`` replaced by
    ``replicates[r]``; each is fitted by :func:`fit_design` from ``start``.
    """
    estimates, ses = [], []
    X = design.X.copy()
    for Z in replicates:
        X[:, var_idx] = Z
        try:
            fit = fit_design(
                family, X, design.y, offset=design.offset, sources=design.sources, start=start
            )
        except ModelFitError:
            continue
        estimates.append(fit.params[EXPOSURE_INDEX])
        ses.append(fit.bse[EXPOSURE_INDEX])
    return np.asarray(estimates, dtype=float), np.asarray(ses, dtype=float)


class _ChunkFitter:
    """Vectorised Newton-Raphson for logistic regression over a chunk of replicates.

    Design column ``fixed_idx[i]`` is ``shared[:, i]`` in every replicate; column
    ``var_idx[k]`` is ``Z[r, :, k]`` in replicate ``r``. The information matrix is
    assembled block-wise, so shared columns cost one matrix product per iteration.
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
    ) -> None:
        self.shared = shared
        self.fixed = fixed_idx
        self.var = var_idx
        self.y = y
        self.start = start
        self.max_iter = max_iter
        self.beta_tol = beta_tol
        self.deviance_rtol = deviance_rtol
        n, q = shared.shape
        self.shared_outer = (shared[:, :, None] * shared[:, None, :]).reshape(n, q * q)

    def fit(self, Z: np.ndarray) -> ReplicateFits:
        """Fit the replicates ``Z`` (shape (R, n, k))."""
        n_rep, p = Z.shape[0], self.start.size
        beta = np.repeat(self.start[None, :], n_rep, axis=0)
        eta = self._eta(Z, beta)
        dev = self._deviance(eta)
        iterations = np.zeros(n_rep, dtype=int)
        converged = np.zeros(n_rep, dtype=bool)
        active = np.arange(n_rep)
        for it in range(1, self.max_iter + 1):
            if active.size == 0:
                break
            info, score = self._information_score(Z[active], eta[active])
            regular = _regular(info)
            active, info, score = active[regular], info[regular], score[regular]
            step = np.linalg.solve(info, score[..., None])[..., 0]
            beta[active] += step
            eta_new = self._eta(Z[active], beta[active])
            dev_new = self._deviance(eta_new)
            done = (np.abs(step).max(axis=1) < self.beta_tol) | (
                np.abs(dev_new - dev[active]) <= self.deviance_rtol * np.abs(dev_new)
            )
            eta[active], dev[active], iterations[active] = eta_new, dev_new, it
            converged[active[done]] = True
            active = active[~done]

        bse = np.full((n_rep, p), np.nan)
        separated = np.zeros(n_rep, dtype=bool)
        ok = np.flatnonzero(converged)
        if ok.size:
            info, _ = self._information_score(Z[ok], eta[ok])
            regular = _regular(info)
            converged[ok[~regular]] = False
            ok, info = ok[regular], info[regular]
            bse[ok] = np.sqrt(np.diagonal(np.linalg.inv(info), axis1=1, axis2=2))
            mu = expit(eta[ok])
            for r in ok[(mu * (1 - mu)).min(axis=1) < EXTREME_WEIGHT]:
                separated[r] = bool(separating_columns(self._materialise(Z[r]), self.y))
        bse[separated] = np.nan
        return ReplicateFits(beta, bse, dev, iterations, converged, separated)

    def _eta(self, Z: np.ndarray, beta: np.ndarray) -> np.ndarray:
        """Linear predictors, shape (R, n)."""
        fixed_part = beta[:, self.fixed] @ self.shared.T
        return fixed_part + np.einsum("rnk,rk->rn", Z, beta[:, self.var])

    def _deviance(self, eta: np.ndarray) -> np.ndarray:
        """``2 sum[log(1 + exp(eta)) - y eta]`` per replicate, computed without overflow."""
        return 2.0 * (np.logaddexp(0.0, eta) - self.y * eta).sum(axis=1)

    def _information_score(self, Z: np.ndarray, eta: np.ndarray) -> tuple[np.ndarray, ...]:
        """Fisher information ``X' W X`` (R, p, p) and score ``X' (y - mu)`` (R, p)."""
        n_rep, q, p = Z.shape[0], self.fixed.size, self.start.size
        mu = expit(eta)
        w = mu * (1.0 - mu)
        resid = self.y - mu
        wZ = w[:, :, None] * Z
        f, v = self.fixed, self.var
        info = np.empty((n_rep, p, p))
        info[:, f[:, None], f[None, :]] = (w @ self.shared_outer).reshape(n_rep, q, q)
        cross = np.matmul(self.shared.T, wZ)
        info[:, f[:, None], v[None, :]] = cross
        info[:, v[:, None], f[None, :]] = cross.transpose(0, 2, 1)
        info[:, v[:, None], v[None, :]] = np.matmul(Z.transpose(0, 2, 1), wZ)
        score = np.empty((n_rep, p))
        score[:, f] = resid @ self.shared
        score[:, v] = np.einsum("rn,rnk->rk", resid, Z)
        return info, score

    def _materialise(self, z: np.ndarray) -> np.ndarray:
        """One replicate's full design, shape (n, p)."""
        X = np.empty((self.y.size, self.start.size))
        X[:, self.fixed] = self.shared
        X[:, self.var] = z
        return X


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


def _masked_columns(
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
        array = array.astype(float)[design.rows]
        if not np.isfinite(array).all():
            raise ModelFitError(
                f"masked {name!r} has missing or infinite values on records the model uses"
            )
        values[name] = array
    return values
