"""Open data sets: re-identification risk when the released file is a sample of a population.

The closed-data measures (``classes.py``) assume the intruder knows who is in the file. For an
*open* data set (a sample with sampling fraction ``pi`` from a population nobody can list,
El Emam & Malin's "Samples and Populations") the population class sizes ``F_k`` must be
estimated, and the sample-based risk overstates the risk. This module takes the per-record
sample class sizes ``f_k`` (from :func:`deid_core.risk.classes.class_sizes_from_key`) and
returns:

- **prosecutor risk** (the intruder knows the person is in the sample): ``max 1/f_k`` and the
  mean over records of ``1/f_k``;
- **journalist risk** (the person may or may not be in the sample): ``max 1/F_k`` and the mean
  over records of ``1/F_k``, with ``F_k`` estimated as the sum of the sampling weights in the
  class (the Horvitz-Thompson estimator that sdcMicro's ``freqCalc`` uses) or, without weights,
  ``f_k / pi`` (every record weighted ``1/pi``); the estimate is never allowed below ``f_k``;
- **marketer risk**: the expected share of the released records re-identified when the intruder
  matches every record to the population and picks one candidate at random,
  ``(1/n) sum_records 1/F_k``. With the same ``F_k`` estimate this equals the journalist
  average (El Emam's two scenarios differ in who is attacked, not in the arithmetic here);
- **Benedetti-Franconi individual risk** (Benedetti & Franconi 1998; Franconi & Polettini 2004;
  sdcMicro ``indivRisk``/``measure_risk``): ``r_k = E[1/F_k | f_k]`` under the model
  ``F_k - f_k ~ NegBin(f_k, p_k)``, ``p_k = f_k / F_k_hat``, i.e.
  ``r_k = sum_{h >= f} (1/h) C(h-1, f-1) p^f (1-p)^(h-f)
  = p^f int_0^1 t^(f-1) (1-(1-p) t)^(-f) dt = (p/f) 2F1(1, 1; f+1; 1-p)``
  (the last form by Euler's transformation; for f = 1 it is ``p log(1/p) / (1-p)``).
  ``p = 1`` (census) gives ``r = 1/f``. We evaluate it to about 1e-15 relative for every
  f and p (tested for f from 1 to 10^7, p from 1e-9 to 1) by a series or recurrence chosen by
  (f, p), once per distinct pair (:func:`_bf_exact`; scipy's ``hyp2f1`` is NaN or infinite
  for f >= 100 when p < 0.1). sdcMicro's ``indivRisk``/``measure_risk`` default
  (``method="approx"``) replaces it for f >= 3 by ``p / (f - 1 + p)``, which is above the
  exact value by up to 4.0% (f = 3), 1.2% (f = 5) and under 0.3% from f = 10;
  ``bf_method="sdcmicro"`` reproduces it (its ``"exact"`` method is our default). The
  expected number of re-identifications is ``sum_records r_k`` (sdcMicro's "expected number
  of re-identifications"; its global risk is that sum over n);
- **population uniques**, estimated with the three models of Dankar, El Emam, Neisa & Roffey
  (2012, "Estimating the re-identification risk of clinical data sets", BMC Med Inform Decis
  Mak 12:66, Appendix A), and the estimate their decision rule selects.

*Missing values* (``missing``, as for the closed-data measures in ``classes.py``): with
``"wildcard"`` a missing value matches any value, as in sdcMicro's ``freqCalc``. A record's
sample class size f is then the number of records compatible with it (agreeing wherever both
are observed) and its population class size the sum of their weights, or ``f / pi`` (sdcMicro's
``fk`` and ``Fk``); the prosecutor, journalist, marketer and Benedetti-Franconi risks use these
per-record sizes unchanged. (sdcMicro leaves records missing on *every* key out of the ``fk``
and ``Fk`` of the records without missing values; here such a record is compatible with every
record, both ways.) The compatible sets overlap, so the sample has no partition into classes:
the population-uniques estimators below take the number of classes of size j as
``s_j = (records with f = j) / j``, not necessarily whole (their sum is ``sum_records 1/f``,
the number of classes when the records do form a partition); the sample uniques ``s_1`` are
the records compatible with no other, and Pitman's product over ``i < u`` weights its last
factor by the fractional part of u.

Notation: n records in the sample, N in the population, ``pi = n/N``, u sample classes,
``s_j`` sample classes of size j.

*Zayatz* (1991): ``P(F=1 | f=1) = p_1 P(f=1|F=1) / sum_j p_j P(f=1|F=j)`` with ``p_j = s_j/u``
(the sample class-size distribution stands in for the population's, as in Dankar et al.) and
``P(f=1 | F=j)`` hypergeometric (j marked among N, n drawn); population uniques
``= s_1 P(F=1|f=1) / pi``. At pi = 1 it returns s_1 exactly.

*Pitman* (Hoshino 2001): the sample partition follows Pitman's two-parameter sampling formula;
``(theta, alpha)`` are fitted by maximum likelihood on the exchangeable partition probability
``prod_{i<u}(theta + i alpha) / prod_{i<n}(theta + i) * prod_k prod_{i<f_k}(i - alpha)``, and
the population uniques are the model's expected number of singletons among N,
``N (theta+alpha)_{N-1} / (theta+1)_{N-1}`` (rising factorials). Dankar et al. and ARX print its
large-N form ``Gamma(theta+1)/Gamma(theta+alpha) N^alpha``; we use the exact expectation (the
two agree for large N; tested). The fit is restricted to ``0 <= alpha < 1, theta > 0``. At
pi = 1 the estimate is the fitted model's expected singletons, close to but not exactly s_1.
With no class of size > 1 the likelihood has no maximum and the estimate is unavailable (NaN).

*SNB*, slide negative binomial (Chen & Keller-McNulty 1998): population class sizes follow
``F - 1 ~ NegBin(a, b)`` and each class is sampled binomially with pi. With ``d = (1-pi)(1-b)``
the expected numbers of sample classes of size 1 and 2 are (derived from the probability
generating function ``G(s) = s (b / (1 - (1-b) s))^a``, ``E s_1 = K pi G'(1-pi)``,
``E s_2 = K pi^2 G''(1-pi) / 2``):
``E s_1 = K pi (b/(1-d))^a (1 + a d/(1-d))`` and
``E s_2 = K pi^2 a (1-b) b^a (2 + (a-1) d) / (2 (1-d)^(a+2))``;
``(a, b)`` solve ``E s_1 = s_1, E s_2 = s_2``; population uniques ``= K b^a``. The number of
population classes K is estimated with Shlosser's estimator
``K = u + s_1 sum_j (1-pi)^j s_j / sum_j j pi (1-pi)^(j-1) s_j`` (Haas et al. 1995). (ARX's
code prints the ``(1-d)^(a+2)`` factor in the numerator and adds a correction to Shlosser's
estimator; we use the forms derived above, checked against the series in the tests.) At
pi = 1, K = u and the first equation gives ``K b^a = s_1``: the estimate is s_1. Unavailable
(NaN) when there is no class of size 2 or the equations have no solution.

*Decision rule* (Dankar et al. 2012, as implemented in ARX's ``RiskModelPopulationUniqueness``;
the paper's abstract: "selected between the Pitman, slide negative binomial and Zayatz
estimators depending on the sampling fraction and the difference between estimates"):
``pi <= 0.1`` -> Pitman (Zayatz when Pitman is unavailable); ``pi > 0.1`` -> the smaller of
Zayatz and SNB (Zayatz when SNB is unavailable). No sample uniques -> 0 population uniques.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from deid_core.errors import DataError
from deid_core.risk.classes import MISSING_MODES, check_choice, check_missing_mode

# scipy is imported where it is used: the command line imports this module to refuse bad
# input and must not spend seconds loading scipy first (see deid_core._lazy).

DANKAR_FRACTION_CUTOFF = 0.1
ESTIMATORS = ("zayatz", "pitman", "snb")

#: Where these figures differ by definition from sdcMicro's and ARX's (the Risk page, the
#: report and the README state them).
REFERENCE_TOOL_NOTES = (
    "Benedetti-Franconi individual risk: the exact E[1/F | f] by default. sdcMicro's default "
    "(indivRisk and measure_risk with method 'approx') replaces it by p / (f - 1 + p) for "
    "classes of 3 or more records, which is higher by up to 4.0% per record (f = 3), 1.2% "
    "(f = 5) and under 0.3% from f = 10; choose the sdcMicro method to reproduce an sdcMicro "
    "report.",
    "Pitman estimate of population uniques: the exact finite-population expectation "
    "N (theta + alpha)_(N-1) / (theta + 1)_(N-1). ARX prints the large-N form "
    "Gamma(theta + 1) / Gamma(theta + alpha) N^alpha, 0.03% to 0.3% higher on ARX's adult data "
    "(sampling fractions 0.01 to 0.1); the fitted theta and alpha agree with ARX's.",
    "Missing values as wildcards: a record's sample class is every record compatible with it "
    "and its population class the sum of their weights, as sdcMicro's freqCalc counts them, "
    "except that a record missing on every quasi-identifier counts towards every other "
    "record's class here (sdcMicro leaves it out of the classes of the records that have no "
    "missing value).",
)


@dataclass(frozen=True)
class SampleDesign:
    """How the released file was drawn from its population (the open-data inputs): a sampling
    fraction, or a population size, or neither (the recipe's sampling-weight column then
    gives the population class sizes)."""

    sampling_fraction: float | None = None
    population_size: int | None = None

    def __post_init__(self) -> None:
        if self.sampling_fraction is not None:
            object.__setattr__(self, "sampling_fraction", _check_fraction(self.sampling_fraction))
        size = self.population_size
        if size is not None:
            if isinstance(size, bool) or not isinstance(size, int | float) or size != int(size):
                raise DataError("population_size must be a whole number.")
            if size < 1:
                raise DataError("population_size must be at least 1.")
            object.__setattr__(self, "population_size", int(size))

    def describe(self) -> str:
        """The design in words."""
        if self.sampling_fraction is not None:
            return f"a sample with sampling fraction {self.sampling_fraction:g}"
        if self.population_size is not None:
            return f"a sample from a population of {self.population_size:,}"
        return "a sample; population class sizes from the sampling weights"


@dataclass(frozen=True)
class PopulationUniques:
    """Estimated number of population uniques by each estimator and the one Dankar's rule picks."""

    sample_uniques: int
    zayatz: float
    pitman: float
    snb: float
    selected: str
    reason: str

    @property
    def estimate(self) -> float:
        """The estimate the decision rule selects."""
        return 0.0 if self.selected == "none" else float(getattr(self, self.selected))

    def as_dict(self) -> dict[str, float]:
        return {"zayatz": self.zayatz, "pitman": self.pitman, "snb": self.snb}


@dataclass(frozen=True)
class SampleRisk:
    """Re-identification risk of a sample from a population (open data set)."""

    n_records: int
    population_size: int
    sampling_fraction: float
    f_estimator: str
    prosecutor_max: float
    prosecutor_average: float
    journalist_max: float
    journalist_average: float
    marketer: float
    bf_max: float
    bf_mean: float
    expected_reidentifications: float
    uniques: PopulationUniques
    missing: str = "category"
    bf_method: str = "exact"
    class_size: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)
    population_class_size: np.ndarray = field(
        default_factory=lambda: np.zeros(0), repr=False, compare=False
    )
    individual_risk: np.ndarray = field(
        default_factory=lambda: np.zeros(0), repr=False, compare=False
    )

    def to_dict(self) -> dict[str, object]:
        return {
            "n_records": self.n_records,
            "population_size": self.population_size,
            "sampling_fraction": self.sampling_fraction,
            "f_estimator": self.f_estimator,
            "prosecutor_max": self.prosecutor_max,
            "prosecutor_average": self.prosecutor_average,
            "journalist_max": self.journalist_max,
            "journalist_average": self.journalist_average,
            "marketer": self.marketer,
            "bf_max": self.bf_max,
            "bf_mean": self.bf_mean,
            "expected_reidentifications": self.expected_reidentifications,
            "sample_uniques": self.uniques.sample_uniques,
            "population_uniques": self.uniques.as_dict(),
            "population_uniques_selected": self.uniques.selected,
            "population_uniques_estimate": self.uniques.estimate,
            "missing": self.missing,
            "bf_method": self.bf_method,
        }

    def __str__(self) -> str:
        u = self.uniques

        def fmt(x: float) -> str:
            return "n/a" if math.isnan(x) else f"{x:.1f}"

        lines = [
            "Re-identification risk (open data: the file is a sample of a population)",
            f"  records / population        {self.n_records} / {self.population_size}",
            f"  sampling fraction           {self.sampling_fraction:.4f}",
            f"  population class sizes      {self.f_estimator}",
            f"  prosecutor max / average    {self.prosecutor_max:.4f} / "
            f"{self.prosecutor_average:.4f}",
            f"  journalist max / average    {self.journalist_max:.4f} / "
            f"{self.journalist_average:.4f}",
            f"  marketer risk               {self.marketer:.4f}",
            f"  Benedetti-Franconi max/mean {self.bf_max:.4f} / {self.bf_mean:.4f} "
            f"({BF_METHODS[self.bf_method]})",
            f"  expected re-identifications {self.expected_reidentifications:.2f}",
            f"  sample uniques              {u.sample_uniques}",
            f"  population uniques: Zayatz {fmt(u.zayatz)}, Pitman {fmt(u.pitman)}, "
            f"SNB {fmt(u.snb)}",
            f"  selected (Dankar et al.)    {u.selected}: {fmt(u.estimate)} ({u.reason})",
            f"  missing QI values           {MISSING_MODES[self.missing]}",
        ]
        return "\n".join(lines)


# ---------------------------------------------------------------- validation


def _as_class_sizes(
    class_sizes: np.ndarray, records: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None, int]:
    """(class sizes, records per entry or None, number of records), checked. Without
    ``records`` there is one size per record; with it, one per cell of a cross-tabulation."""
    f = np.asarray(class_sizes)
    if f.ndim != 1 or f.size == 0:
        raise DataError("class_sizes must be a non-empty one-dimensional array (one per record).")
    if not np.issubdtype(f.dtype, np.number) or not np.all(np.isfinite(f)):
        raise DataError("class_sizes must be finite numbers.")
    if np.any(f < 1) or np.any(f != np.round(f)):
        raise DataError("class_sizes must be whole numbers of at least 1.")
    f = f.astype(np.int64)
    if records is None:
        n = int(f.size)
    else:
        records = np.asarray(records, dtype=np.int64)
        if records.shape != f.shape or np.any(records < 1):
            raise DataError("records must give a positive count for every class size.")
        n = int(records.sum())
    if f.max() > n:
        raise DataError("A class size exceeds the number of records: class_sizes are inconsistent.")
    return f, records, n


def _size_histogram(
    f: np.ndarray, missing: str = "category", records: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(sizes j, number of sample classes s_j of each size) from class sizes (one per record,
    or with ``records`` one per cross-tabulation cell holding that many records).

    With ``missing="wildcard"`` the sizes are compatible-record counts, which overlap:
    ``s_j = (records with f = j) / j``, not necessarily whole (see the module docstring)."""
    sizes, inverse = np.unique(f, return_inverse=True)
    if records is None:
        records = np.bincount(inverse.reshape(-1), minlength=sizes.size)
    else:
        records = np.bincount(inverse.reshape(-1), weights=records, minlength=sizes.size)
        records = records.astype(np.int64)
    if missing == "wildcard":
        return sizes, records / sizes
    if np.any(records % sizes):
        raise DataError(
            "class_sizes are inconsistent: the number of records with class size j must be a "
            "multiple of j."
        )
    return sizes, records // sizes


def _check_fraction(pi: float) -> float:
    try:
        pi = float(pi)
    except (TypeError, ValueError):
        raise DataError("sampling_fraction must be a number in (0, 1].") from None
    if not (0.0 < pi <= 1.0) or math.isnan(pi):
        raise DataError(f"sampling_fraction must be in (0, 1]; got {pi!r}.")
    return pi


# ---------------------------------------------------------------- Benedetti-Franconi

#: How the Benedetti-Franconi risk is computed (the ``bf_method`` argument).
BF_METHODS = {
    "exact": "exact E[1/F | f]",
    "sdcmicro": "sdcMicro's default approximation p / (f - 1 + p) for f >= 3",
}
#: Sample class sizes from which :func:`_bf_exact` sums the inverse factorial series.
_BF_FACTORIAL_FROM = 60
_BF_FACTORIAL_TERMS = 30
#: Below this p (and below ``_BF_FACTORIAL_FROM``) the recurrence in f, from it the series in q.
_BF_RECURRENCE_BELOW = 0.3
_BF_SERIES_TERMS = 110


def check_bf_method(method: str) -> str:
    """``method`` if it is a known Benedetti-Franconi method, else a DataError naming them."""
    return check_choice("bf_method", method, BF_METHODS)


def _bf_exact(f: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``r = E[1/F | f]`` for ``F - f ~ NegBin(f, p)``, to about 1e-15 relative, for every
    whole ``f >= 1`` and ``0 < p <= 1`` (arrays of distinct pairs).

    With ``q = 1 - p``, ``r = p^f int_0^1 t^(f-1) (1 - q t)^(-f) dt``; the substitution
    ``v = p t / (1 - q t)`` gives ``r = int_0^1 v^(f-1) p / (p + q v) dv``. Three evaluations:

    - ``f >= 60``: the inverse factorial series. Since ``(f-1)/(F-1)`` is the unbiased
      estimator of p under negative-binomial sampling, ``E[1/((F-1)(F-2)...(F-j))] =
      p^j / ((f-1)(f-2)...(f-j))`` for ``j < f``; expanding ``1/F = sum_{j=1..m} (-1)^(j+1)
      (j-1)! / ((F-1)...(F-j)) + (-1)^m m! / (F (F-1)...(F-m))`` gives
      ``r = sum_{j=1..m} (-1)^(j+1) (j-1)! p^j / ((f-1)...(f-j))`` with an error below
      ``m! p^(m+1) / ((f-1)...(f-m-1))``: with m = 30 below 4e-17 of ``r >= p/f``.
    - ``f < 60, p < 0.3``: with ``c = p/q`` and ``J_g = int_0^1 v^(g-1) / (v + c) dv``,
      ``r = c J_f``, ``J_1 = log(1/p)`` and ``J_{g+1} = 1/g - c J_g`` (an error in ``J_g`` is
      multiplied by ``c < 0.43`` at each step).
    - ``f < 60, p >= 0.3``: the hypergeometric series ``r = (p/f) 2F1(1, 1; f+1; q) =
      (p/f) sum_k k! q^k / ((f+1)...(f+k))``, whose terms are below ``q^k <= 0.7^k``.
    """
    r = np.empty_like(p)
    census = p >= 1.0
    r[census] = 1.0 / f[census]
    large = ~census & (f >= _BF_FACTORIAL_FROM)
    if large.any():
        fl, pl = f[large], p[large]
        term = pl / (fl - 1.0)
        total = term.copy()
        for j in range(1, _BF_FACTORIAL_TERMS):
            term *= -j * pl / (fl - 1.0 - j)
            total += term
        r[large] = total
    small = ~census & ~large
    recurrence = small & (p < _BF_RECURRENCE_BELOW)
    if recurrence.any():
        fr, pr = f[recurrence], p[recurrence]
        c = pr / (1.0 - pr)
        j_g = -np.log(pr)
        j_f = j_g.copy()
        for g in range(1, int(fr.max())):
            j_g = 1.0 / g - c * j_g
            j_f[fr == g + 1] = j_g[fr == g + 1]
        r[recurrence] = c * j_f
    series = small & (p >= _BF_RECURRENCE_BELOW)
    if series.any():
        fs, qs = f[series], 1.0 - p[series]
        term = np.ones_like(qs)
        total = term.copy()
        for k in range(1, _BF_SERIES_TERMS):
            term *= qs * k / (fs + k)
            total += term
        r[series] = (1.0 - qs) / fs * total
    return r


def _bf_sdcmicro(f: np.ndarray, p: np.ndarray) -> np.ndarray:
    """sdcMicro's default (``indivRisk(method = "approx")``, Franconi & Polettini 2004):
    ``p / (f - (1 - p))`` for ``f >= 3``; its closed forms for f = 1 and 2 are exact."""
    r = _bf_exact(f, p)
    approximated = f >= 3
    fa, pa = f[approximated], p[approximated]
    r[approximated] = pa / (fa - 1.0 + pa)
    return r


def benedetti_franconi_risk(
    f: np.ndarray, population_f: np.ndarray, method: str = "exact"
) -> np.ndarray:
    """Per-record Benedetti-Franconi risk ``E[1/F | f]``, ``F - f ~ NegBin(f, p)``,
    ``p = f/F_hat`` (see the module docstring), evaluated once per distinct (f, p) pair.

    ``method="exact"`` (default) evaluates it to about 1e-15 relative for every f and p
    (:func:`_bf_exact`); ``"sdcmicro"`` reproduces sdcMicro's default approximation
    ``p / (f - 1 + p)`` for ``f >= 3``, which is above the exact value by up to 4.0% (f = 3).
    """
    method = check_bf_method(method)
    f = np.asarray(f, dtype=float)
    p = f / np.maximum(np.asarray(population_f, dtype=float), f)
    codes, pairs = pd.factorize(f + 1j * p)
    f_pair, p_pair = np.ascontiguousarray(pairs.real), np.ascontiguousarray(pairs.imag)
    evaluate = _bf_exact if method == "exact" else _bf_sdcmicro
    # r <= 1/f (the risk without sampling); the bound only removes rounding near p = 1.
    return np.minimum(evaluate(f_pair, p_pair), 1.0 / f_pair)[codes]


# ---------------------------------------------------------------- population uniques


def _zayatz(sizes: np.ndarray, counts: np.ndarray, n: int, big_n: int) -> float:
    u = counts.sum()
    s1 = counts[sizes == 1].sum()
    if s1 == 0:
        return 0.0
    from scipy import stats

    p_j = counts / u
    like = stats.hypergeom.pmf(1, big_n, sizes, n)  # P(f = 1 | F = j)
    denom = float(np.sum(p_j * like))
    if denom <= 0.0:
        return float("nan")
    p11 = float(p_j[sizes == 1].sum() * like[sizes == 1].sum()) / denom
    return float(s1 * p11 * big_n / n)


def _pitman_fit(sizes: np.ndarray, counts: np.ndarray, n: int) -> tuple[float, float] | None:
    from scipy import optimize, special

    u = float(counts.sum())
    if u < 2 or np.all(sizes == 1) or u >= n:
        return None
    # prod_{i=1..u-1} (theta + i alpha); a fractional u (wildcard) weights the last factor
    # by its fractional part.
    i = np.arange(1, math.ceil(u), dtype=float)
    i_weight = np.ones_like(i)
    i_weight[-1] = u - i[-1]
    big = sizes > 1
    sz, ct = sizes[big].astype(float), counts[big].astype(float)

    def negloglik(x: np.ndarray) -> tuple[float, np.ndarray]:
        theta, alpha = math.exp(x[0]), x[1]
        ll = (
            np.sum(i_weight * np.log(theta + i * alpha))
            - (special.gammaln(theta + n) - special.gammaln(theta + 1))
            + np.sum(ct * (special.gammaln(sz - alpha) - special.gammaln(1 - alpha)))
        )
        d_theta = np.sum(i_weight / (theta + i * alpha)) - (
            special.digamma(theta + n) - special.digamma(theta + 1)
        )
        d_alpha = np.sum(i_weight * i / (theta + i * alpha)) - np.sum(
            ct * (special.digamma(sz - alpha) - special.digamma(1 - alpha))
        )
        return -float(ll), -np.array([d_theta * theta, d_alpha])

    best = None
    for start in ((math.log(max(u, 1.0)), 0.5), (0.0, 0.1), (math.log(u * u / n + 1), 0.8)):
        res = optimize.minimize(
            negloglik,
            np.array(start),
            jac=True,
            method="L-BFGS-B",
            bounds=[(-20.0, 30.0), (0.0, 1.0 - 1e-9)],
        )
        if np.all(np.isfinite(res.x)) and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        return None
    theta, alpha = math.exp(best.x[0]), float(best.x[1])
    if best.x[0] >= 30.0 - 1e-6 or alpha >= 1.0 - 1e-6:  # no interior maximum
        return None
    return theta, alpha


def pitman_expected_singletons(theta: float, alpha: float, big_n: float) -> float:
    """Expected number of singletons among N under Pitman(theta, alpha):
    ``N (theta+alpha)_{N-1} / (theta+1)_{N-1}``."""
    from scipy import special

    log_ratio = (
        special.gammaln(theta + alpha + big_n - 1)
        - special.gammaln(theta + alpha)
        - special.gammaln(theta + big_n)
        + special.gammaln(theta + 1)
    )
    return float(big_n * math.exp(log_ratio))


def _pitman(sizes: np.ndarray, counts: np.ndarray, n: int, big_n: int) -> float:
    if counts[sizes == 1].sum() == 0:
        return 0.0
    fit = _pitman_fit(sizes, counts, n)
    if fit is None:
        return float("nan")
    return min(pitman_expected_singletons(*fit, big_n), float(big_n))


def shlosser_classes(sizes: np.ndarray, counts: np.ndarray, pi: float) -> float:
    """Shlosser's estimate of the number of population classes (Haas et al. 1995)."""
    u = float(counts.sum())
    s1 = float(counts[sizes == 1].sum())
    q = 1.0 - pi
    num = float(np.sum(q**sizes * counts))
    den = float(np.sum(sizes * pi * q ** (sizes - 1) * counts))
    return u if den <= 0 else u + s1 * num / den


def snb_expected_s1_s2(k: float, pi: float, a: float, b: float) -> tuple[float, float]:
    """Expected numbers of sample classes of size 1 and 2 under the SNB model."""
    d = (1.0 - pi) * (1.0 - b)
    e1 = k * pi * (b / (1.0 - d)) ** a * (1.0 + a * d / (1.0 - d))
    e2 = k * pi**2 * a * (1.0 - b) * b**a * (2.0 + (a - 1.0) * d) / (2.0 * (1.0 - d) ** (a + 2.0))
    return e1, e2


def _snb(sizes: np.ndarray, counts: np.ndarray, pi: float) -> float:
    from scipy import optimize, special

    s1 = float(counts[sizes == 1].sum())
    s2 = float(counts[sizes == 2].sum())
    if s1 == 0:
        return 0.0
    if s2 == 0:
        return float("nan")
    k = shlosser_classes(sizes, counts, pi)

    def residuals(x: np.ndarray) -> np.ndarray:
        a, b = math.exp(x[0]), special.expit(x[1])
        e1, e2 = snb_expected_s1_s2(k, pi, a, b)
        return np.array([e1 / s1 - 1.0, e2 / s2 - 1.0])

    best = None
    for start in ((0.0, 0.0), (-2.0, -3.0), (1.0, 2.0), (-4.0, -6.0)):
        with np.errstate(all="ignore"):
            res = optimize.least_squares(residuals, np.array(start), xtol=1e-14, ftol=1e-14)
        if np.all(np.isfinite(res.fun)) and (best is None or res.cost < best.cost):
            best = res
    if best is None or np.max(np.abs(best.fun)) > 1e-6:
        return float("nan")
    a, b = math.exp(best.x[0]), special.expit(best.x[1])
    return float(k * b**a)


def estimate_population_uniques(
    class_sizes: np.ndarray,
    sampling_fraction: float,
    population_size: int | None = None,
    missing: str = "category",
    records: np.ndarray | None = None,
) -> PopulationUniques:
    """Zayatz, Pitman and SNB estimates of population uniques and Dankar et al.'s choice.

    ``missing="wildcard"``: ``class_sizes`` are compatible-record counts (see the module
    docstring for the class-size distribution the estimators then use). ``records``: the
    class sizes are per cross-tabulation cell, each holding that many records."""
    missing = check_missing_mode(missing)
    f, records, n = _as_class_sizes(class_sizes, records)
    pi = _check_fraction(sampling_fraction)
    big_n = int(population_size) if population_size is not None else max(n, round(n / pi))
    sizes, counts = _size_histogram(f, missing, records)
    s1 = int(counts[sizes == 1].sum())
    if s1 == 0:
        return PopulationUniques(0, 0.0, 0.0, 0.0, "none", "no sample uniques")
    zay = _zayatz(sizes, counts, n, big_n)
    pit = _pitman(sizes, counts, n, big_n)
    snb = _snb(sizes, counts, pi)

    def ok(x: float) -> bool:
        return not math.isnan(x) and x > 0

    if pi <= DANKAR_FRACTION_CUTOFF:
        if ok(pit):
            selected, reason = "pitman", f"sampling fraction <= {DANKAR_FRACTION_CUTOFF}"
        else:
            selected, reason = "zayatz", "sampling fraction <= 0.1 but Pitman unavailable"
    elif ok(snb):
        selected = "zayatz" if zay < snb else "snb"
        reason = f"sampling fraction > {DANKAR_FRACTION_CUTOFF}: smaller of Zayatz and SNB"
    else:
        selected, reason = "zayatz", "sampling fraction > 0.1 and SNB unavailable"
    return PopulationUniques(s1, zay, pit, snb, selected, reason)


# ---------------------------------------------------------------- main entry points


def sample_risk(
    class_sizes: np.ndarray,
    sampling_fraction: float | None = None,
    population_size: int | None = None,
    weights: np.ndarray | None = None,
    *,
    class_key: np.ndarray | None = None,
    compatible_weights: np.ndarray | None = None,
    missing: str = "category",
    bf_method: str = "exact",
    records: np.ndarray | None = None,
) -> SampleRisk:
    """Risk of a released sample (see the module docstring for every formula).

    ``class_sizes``: per-record sample class size f_k. Give the sampling fraction, the
    population size, or sampling weights. Without a fraction it is taken as
    ``n / population_size`` or ``n / sum(weights)``; when both a fraction and a population
    size are given they must agree (within 1%).

    ``missing`` says how the class sizes were counted: ``"category"`` (a missing value is a
    value; the classes partition the records and, with weights, ``class_key``, one class
    identifier per record such as the key from :func:`combine_codes`, sums the weights within
    each class) or ``"wildcard"`` (``class_sizes`` are the compatible-record counts of
    :func:`compatible_class_sizes` and, with weights, ``compatible_weights`` the summed weights
    of the compatible records, the same function with ``weights``). ``bf_method`` is
    ``"exact"`` or ``"sdcmicro"`` (:func:`benedetti_franconi_risk`).

    ``records``: the entries are the cells of a cross-tabulation of the quasi-identifiers (an
    engine's aggregates, a missing value a value of its own) instead of records; cell i holds
    ``records[i]`` records, ``class_sizes[i]`` is their class size (category: the cell's own
    count; wildcard: the records of the compatible cells), ``weights[i]`` the sum of their
    weights and ``compatible_weights[i]`` (wildcard) that of the compatible cells. Figures are
    then averaged over records, and no per-record arrays are kept in the result.
    """
    missing = check_missing_mode(missing)
    bf_method = check_bf_method(bf_method)
    f, records, n = _as_class_sizes(class_sizes, records)
    if population_size is not None:
        if isinstance(population_size, bool) or int(population_size) != population_size:
            raise DataError("population_size must be a whole number.")
        population_size = int(population_size)
        if population_size < n:
            raise DataError(
                f"population_size ({population_size}) must be at least the sample size ({n})."
            )
    if sampling_fraction is not None:
        sampling_fraction = _check_fraction(sampling_fraction)

    w = total_w = None
    if weights is not None:
        w = np.asarray(weights, dtype=float)
        if w.shape != f.shape:
            raise DataError("weights must have one value per record (same length as class_sizes).")
        if not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise DataError("weights must be positive and finite.")
        total_w = float(w.sum())
    if w is not None and missing == "wildcard":
        if compatible_weights is None:
            raise DataError(
                "compatible_weights (the summed weights of the records compatible with each "
                "record) are needed with weights when a missing value matches any value."
            )
        big_f = np.asarray(compatible_weights, dtype=float)
        if big_f.shape != f.shape or not np.all(np.isfinite(big_f)) or np.any(big_f <= 0):
            raise DataError("compatible_weights must be positive and finite, one per record.")
        f_estimator = "sum of sampling weights of the compatible records"
    elif w is not None and records is not None:
        big_f = w  # a cell is a class: its weight sum is the population class size
        f_estimator = "sum of sampling weights in the class"
    elif w is not None:
        if class_key is None:
            raise DataError("class_key is needed with weights, to sum the weights in each class.")
        key = np.asarray(class_key)
        if key.shape != f.shape:
            raise DataError("class_key must have one value per record.")
        codes = np.unique(key, return_inverse=True)[1].ravel()
        if not np.array_equal(np.bincount(codes)[codes], f):
            raise DataError("class_key does not match class_sizes.")
        big_f = np.bincount(codes, weights=w)[codes]
        f_estimator = "sum of sampling weights in the class"
    else:
        big_f = None

    if sampling_fraction is not None:
        pi = sampling_fraction
        if population_size is not None and abs(n / pi - population_size) > max(
            1.0, 0.01 * population_size
        ):
            raise DataError(
                f"sampling_fraction ({pi}) and population_size ({population_size}) disagree "
                f"for {n} records; give one of them."
            )
        big_n = population_size if population_size is not None else max(n, round(n / pi))
    elif population_size is not None:
        big_n = population_size
        pi = n / big_n
    elif total_w is not None:
        big_n = max(n, round(total_w))
        pi = n / big_n
    else:
        raise DataError("Give the sampling_fraction, the population_size or sampling weights.")

    if big_f is None:
        big_f = f / pi
        f_estimator = f"f_k / sampling fraction ({pi:.4g})"
    big_f = np.maximum(big_f, f)  # a population class is never smaller than its sample

    prosecutor = 1.0 / f
    journalist = 1.0 / big_f
    bf = benedetti_franconi_risk(f, big_f, bf_method)

    def total(values: np.ndarray) -> float:
        """Sum over records."""
        return float(values.sum() if records is None else np.dot(values, records))

    per_record = records is None
    empty = np.zeros(0)
    return SampleRisk(
        n_records=n,
        population_size=int(big_n),
        sampling_fraction=float(pi),
        f_estimator=f_estimator,
        prosecutor_max=float(prosecutor.max()),
        prosecutor_average=total(prosecutor) / n,
        journalist_max=float(journalist.max()),
        journalist_average=total(journalist) / n,
        marketer=total(journalist) / n,
        bf_max=float(bf.max()),
        bf_mean=total(bf) / n,
        expected_reidentifications=total(bf),
        uniques=estimate_population_uniques(f, pi, big_n, missing, records),
        missing=missing,
        bf_method=bf_method,
        class_size=f if per_record else empty,
        population_class_size=big_f if per_record else empty,
        individual_risk=bf if per_record else empty,
    )


def population_uniqueness_curve(
    class_sizes: np.ndarray, fractions: Sequence[float], missing: str = "category"
) -> list[tuple[float, dict[str, float]]]:
    """Estimated share of population uniques (estimate / N, N = n / pi) against the sampling
    fraction, by each estimator and by Dankar et al.'s rule ("dankar"); NaN = unavailable.
    ``missing`` as for :func:`estimate_population_uniques`."""
    missing = check_missing_mode(missing)
    f, _, n = _as_class_sizes(class_sizes)
    out = []
    for pi in fractions:
        pi = _check_fraction(pi)
        big_n = max(n, round(n / pi))
        est = estimate_population_uniques(f, pi, big_n, missing)
        shares = {name: value / big_n for name, value in est.as_dict().items()}
        shares["dankar"] = est.estimate / big_n
        out.append((pi, shares))
    return out
