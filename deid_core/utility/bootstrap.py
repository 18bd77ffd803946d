"""Bootstrap confidence intervals for the masked estimate.

Masks that pool information across records make the masked records correlated: kernel
smoothing (every released value is a weighted average of its neighbours, Zhou, Dominici &
Louis 2010) and interval grouping released as interval means (every record of an interval
gets the same mean). A model fitted to such data treats the records as independent, so its
"naive" Wald interval ``b_m +/- z * se_m`` can be too narrow or too wide (Zhou et al. found
both). The nonparametric bootstrap repeats the whole release on resampled people:

1. draw ``n`` records with replacement from the ORIGINAL data (replicate ``r``);
2. apply the masking to the resample (so interval means and smoothing weights are
   recomputed from the resample, and a random mask draws afresh with replicate ``r``);
3. fit the collaborator's model to the masked resample, keeping the exposure estimate.

The percentile interval is the ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of the
``B`` estimates; the bootstrap SE is their standard deviation. Resamples whose model
cannot be fitted (e.g. no events drawn) are left out and counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from deid_core import bounds
from deid_core.errors import DeidError, ModelFitError
from deid_core.utility.counts import DEFAULT_RESAMPLES as DEFAULT_RESAMPLES
from deid_core.utility.counts import MAX_RESAMPLES as MAX_RESAMPLES
from deid_core.utility.counts import MIN_RESAMPLES as MIN_RESAMPLES
from deid_core.utility.models import FitResult, refit
from deid_core.utility.spec import ModelSpec, build_design

#: A bootstrap summary needs at least this share of resamples fitted.
MIN_USABLE_SHARE = 0.9

MaskFunction = Callable[[pd.DataFrame, int], pd.DataFrame]
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class BootstrapInterval:
    """Naive and bootstrap confidence intervals of the masked exposure estimate.

    Attributes
    ----------
    estimate, se : float
        Masked-data estimate ``b_m`` and its model-based (naive) standard error.
    level : float
        Confidence level, e.g. 0.95.
    naive_low, naive_high : float
        ``b_m -/+ z * se_m`` with ``z`` the standard normal ``(1 + level)/2`` quantile.
    bootstrap_low, bootstrap_high : float
        Percentile interval of the bootstrap estimates.
    bootstrap_se : float
        Standard deviation of the bootstrap estimates.
    n_resamples, n_failed : int
        Resamples drawn, and those whose model could not be fitted (excluded).
    estimates : tuple of float
        The usable bootstrap estimates (for a histogram).
    """

    estimate: float
    se: float
    level: float
    naive_low: float
    naive_high: float
    bootstrap_low: float
    bootstrap_high: float
    bootstrap_se: float
    n_resamples: int
    n_failed: int
    estimates: tuple[float, ...]

    @property
    def width_ratio(self) -> float:
        """Naive width / bootstrap width (Zhou et al.'s width ratio): above 1 the naive
        interval is too wide, below 1 too narrow."""
        width = self.bootstrap_high - self.bootstrap_low
        return float("inf") if width == 0 else (self.naive_high - self.naive_low) / width

    def to_dict(self) -> dict[str, float | int]:
        return {
            "estimate": self.estimate,
            "se": self.se,
            "level": self.level,
            "naive_low": self.naive_low,
            "naive_high": self.naive_high,
            "bootstrap_low": self.bootstrap_low,
            "bootstrap_high": self.bootstrap_high,
            "bootstrap_se": self.bootstrap_se,
            "width_ratio": self.width_ratio,
            "n_resamples": self.n_resamples,
            "n_failed": self.n_failed,
        }

    def __str__(self) -> str:
        pct = f"{100 * self.level:g}%"
        return (
            f"Masked estimate {self.estimate:.4g} (naive SE {self.se:.4g}, bootstrap SE "
            f"{self.bootstrap_se:.4g})\n"
            f"  naive {pct} CI:     ({self.naive_low:.4g}, {self.naive_high:.4g})\n"
            f"  bootstrap {pct} CI: ({self.bootstrap_low:.4g}, {self.bootstrap_high:.4g}) "
            f"from {self.n_resamples - self.n_failed} of {self.n_resamples} resamples\n"
            f"  width ratio naive/bootstrap: {self.width_ratio:.3g}"
        )


def bootstrap_interval(
    original: pd.DataFrame,
    mask: MaskFunction,
    spec: ModelSpec,
    masked_fit: FitResult,
    n_resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int | None = None,
    progress: Progress | None = None,
) -> BootstrapInterval:
    """Naive and percentile-bootstrap intervals for the masked estimate (module docstring).

    ``mask(resample, r)`` returns the masked copy of a resample for replicate ``r`` (the
    caller's recipe); ``masked_fit`` is the model fitted to the released masked data. The
    original data are never modified. ``progress(done, total)`` is called after each
    resample.

    Raises
    ------
    ModelFitError
        If the parameters are out of range or fewer than ``MIN_USABLE_SHARE`` of the
        resamples could be fitted (the bootstrap would then describe a selected subset).
    """
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)):
        raise ModelFitError("The number of bootstrap resamples must be a whole number.")
    if n_resamples < MIN_RESAMPLES:
        raise ModelFitError(
            f"The number of bootstrap resamples must be between {MIN_RESAMPLES} and "
            f"{MAX_RESAMPLES}."
        )
    bounds.BOOTSTRAP_RESAMPLES.check(n_resamples, "The bootstrap asks for")
    if not 0.5 <= level < 1:
        raise ModelFitError("The confidence level must be at least 0.5 and below 1.")
    rng = np.random.default_rng(seed)
    n = len(original)
    start = np.asarray(masked_fit.params, dtype=float)
    estimates: list[float] = []
    failed = 0
    for r in range(n_resamples):
        rows = rng.integers(0, n, size=n)
        resample = original.iloc[rows].reset_index(drop=True)
        try:
            design = build_design(mask(resample, r), spec)
            fit = refit(spec, design, start=start)
        except DeidError:
            failed += 1
        else:
            estimates.append(float(fit.params[design.exposure_index]))
        if progress is not None:
            progress(r + 1, n_resamples)
    if len(estimates) < MIN_USABLE_SHARE * n_resamples:
        raise ModelFitError(
            f"the model could be fitted to only {len(estimates)} of {n_resamples} bootstrap "
            "resamples (too few events?), so no bootstrap interval is given"
        )
    values = np.array(estimates)
    z = float(stats.norm.ppf((1 + level) / 2))
    b, se = masked_fit.estimate, masked_fit.se
    low, high = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return BootstrapInterval(
        estimate=b,
        se=se,
        level=level,
        naive_low=b - z * se,
        naive_high=b + z * se,
        bootstrap_low=float(low),
        bootstrap_high=float(high),
        bootstrap_se=float(values.std(ddof=1)),
        n_resamples=n_resamples,
        n_failed=failed,
        estimates=tuple(estimates),
    )
