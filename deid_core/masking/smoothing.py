"""Kernel smoothing over locations (Zhou, Dominici & Louis 2010, "A risk-utility framework for
masking individual-level health data").

Every released value is a weighted average of the original values of the same variable,

    z_i* = sum_k w(s_i, s_k) z_k / sum_k w(s_i, s_k),

with the same weights for every smoothed variable (exposure, outcome, covariates), so that an
exact straight-line relation y = a + b x still holds between the smoothed y and x. The bandwidth
``lambda`` is the *degree* of masking (lambda -> 0 gives the original data; lambda == 0 returns
the values unchanged) and the kernel is its *form*. The seed text lost its formulas, so the
kernels below are our concrete choices, each with w(s, s) = 1:

- ``gaussian``: each coordinate divided by its sample SD (a constant coordinate by 1); for two
  coordinates with correlation ``rho`` the Mahalanobis form
  ``q = (u^2 - 2 rho u v + v^2) / (1 - rho^2)`` of the standardised differences (u, v), else
  ``q`` = the squared Euclidean distance of the standardised coordinates;
  ``w = exp(-q / (2 lambda^2))``. Lambda is in SD units. Zhou's Medicare analysis used the
  bivariate normal density with rho = 0 and +/- values.
- ``exponential``: ``w = exp(-d / lambda)``, d the Euclidean distance in the coordinates' own
  units (Zhou's "Euclidean kernel"). Lambda is in those units.
- ``prior`` (prior knowledge of the exposure pattern, Zhou's "ring" kernel):
  ``w = exp(-(|p_i - p_k| + spatial_weight * d) / lambda)``, p the ``pattern`` column (for a
  point source: the distance from it) and d as for ``exponential``. The default
  ``spatial_weight = 0`` is Zhou's pure ring kernel, whose weight depends only on |p_i - p_k|
  (the locations are then optional). Lambda is in the pattern's units; ``spatial_weight``
  converts distance units into pattern units.
- ``epanechnikov`` (compact): ``w = max(0, 1 - (d / lambda)^2)``, d Euclidean in data units,
  so only neighbours closer than lambda count; computed from neighbour queries
  (``scipy.spatial.cKDTree``) and sparse products, for large n.

Dense weights are floored at exp(-700) ~ 1e-304 (smaller ones are subnormal or 0, which numpy's
exp computes about 10x slower); against the weight 1 of the point itself this changes nothing
visible, so tiny bandwidths still return the data (to about 1e-300 relative).

Blocks (``within``): with a grouping column, only records of the same group are neighbours
(every weight between two groups is 0), as in Zhou's "ring block" kernel, which smooths the
blocked and the unblocked area separately; e.g. smoothing area-level rows of two population
groups within each group keeps the group indicator exact.

Missing values: coordinates and the pattern must be complete and finite (else RecipeError); a
missing value of a smoothed variable stays missing and gets zero weight as a neighbour, and
infinite values are refused. Every smoothed value lies within [min, max] of the observed values
of its variable (a weighted average with non-negative weights; the result is clipped to that
range to remove floating-point rounding).

Limits: dense kernels (gaussian, exponential, prior) are computed in row blocks of about
262,000 weights (2 MB), never the full n x n matrix, and are refused above
:data:`DENSE_LIMIT` points (20,000: about 4 * 10^8 weights per smoothing); use the compact
kernel beyond that. Weights are kept (in a step's cache) as a matrix only up to
:data:`KEEP_DENSE_LIMIT` points; above it each smoothed column recomputes its blocks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from deid_core import bounds
from deid_core.errors import RecipeError
from deid_core.masking.base import (
    NUMBERS,
    MaskingStep,
    numeric_values,
    require_finite,
    restore_integer_dtype,
)

# scipy is imported where it is used: the command line imports this module to refuse bad
# input and must not spend seconds loading scipy first (see deid_core._lazy).
if TYPE_CHECKING:
    from scipy import sparse

KERNELS = ("gaussian", "exponential", "prior", "epanechnikov")
COMPACT_KERNELS = ("epanechnikov",)
#: Largest number of points for the dense (non-compact) kernels.
DENSE_LIMIT = bounds.SMOOTHING_POINTS.limit
#: Largest number of points whose dense weights are kept as one matrix (128 MB).
KEEP_DENSE_LIMIT = 4_000
_BLOCK_WEIGHTS = 262_144
#: Exponents below this are raised to it: exp(-700) ~ 1e-304 is still a normal float, while
#: smaller results underflow to subnormals or 0, which numpy's exp computes about 10x slower.
_LOWEST_EXPONENT = -700.0
_LABEL = "Kernel smoothing"


def _divide(block: np.ndarray, *divisors: float) -> None:
    """``block *= -1 / (product of divisors)`` in place, the exponent of a dense kernel.

    With a tiny bandwidth the product underflows to 0 (``2 lambda^2`` for lambda = 1e-300) and
    its reciprocal is infinite (0 x inf would make the point's own weight NaN): the block is
    then divided by each divisor in turn, distances overflowing to -inf (weight 0, floored like
    every weight) and the zero distance of a point to itself staying 0 (weight 1). Otherwise
    the single multiplication, as always (the same figures to the last digit)."""
    product = float(np.prod(divisors))
    if product > 0 and math.isfinite(1.0 / product):
        block *= -1.0 / product
        return
    with np.errstate(over="ignore"):
        for divisor in divisors:
            block /= divisor
    np.negative(block, out=block)


def _check_kernel(
    kernel: Any,
    bandwidth: Any,
    rho: Any,
    n_locations: int,
    has_pattern: bool,
    spatial_weight: Any,
) -> None:
    """Raise RecipeError unless the kernel parameters fit together."""
    if kernel not in KERNELS:
        raise RecipeError(f"{_LABEL}: 'kernel' must be one of {', '.join(KERNELS)}.")
    if require_finite(bandwidth, "bandwidth", _LABEL) < 0:
        raise RecipeError(f"{_LABEL}: 'bandwidth' must not be negative.")
    rho = require_finite(rho, "rho", _LABEL)
    if not -1 < rho < 1:
        raise RecipeError(f"{_LABEL}: 'rho' must be strictly between -1 and 1.")
    if rho != 0 and (kernel != "gaussian" or n_locations != 2):
        raise RecipeError(
            f"{_LABEL}: 'rho' tilts the Gaussian kernel over exactly 2 coordinates; set it to 0 "
            "for other kernels or numbers of coordinates."
        )
    spatial_weight = require_finite(spatial_weight, "spatial_weight", _LABEL)
    if spatial_weight < 0:
        raise RecipeError(f"{_LABEL}: 'spatial_weight' must not be negative.")
    if kernel == "prior":
        if not has_pattern:
            raise RecipeError(
                f"{_LABEL}: the prior-knowledge kernel needs a 'pattern' column (the known "
                "exposure pattern, e.g. the distance from the source)."
            )
        low = 1 if spatial_weight > 0 else 0
    else:
        if has_pattern:
            raise RecipeError(
                f"{_LABEL}: 'pattern' is used only by the prior-knowledge kernel ('prior')."
            )
        if spatial_weight != 0:
            raise RecipeError(
                f"{_LABEL}: 'spatial_weight' is used only by the prior-knowledge kernel ('prior')."
            )
        low = 1
    if not low <= n_locations <= 3:
        raise RecipeError(
            f"{_LABEL}: 'locations' must name {low} to 3 coordinate columns"
            + (
                " (the prior-knowledge kernel with spatial_weight 0 needs none)."
                if kernel == "prior"
                else "."
            )
        )


@dataclass(frozen=True, eq=False)
class _Weights:
    """The raw (unnormalised) weights of one kernel on one set of points, applied as
    ``W @ z / W @ observed``. ``matrix`` holds them (sparse for the compact kernel and for
    bandwidth 0, dense when kept); otherwise they are recomputed in row blocks of about
    ``_BLOCK_WEIGHTS`` weights (2 MB, cache-friendly)."""

    kernel: str
    bandwidth: float
    points: np.ndarray
    pattern: np.ndarray | None
    spatial_weight: float
    groups: np.ndarray | None = None
    matrix: np.ndarray | sparse.csr_array | None = None

    @classmethod
    def build(
        cls,
        coords: np.ndarray,
        kernel: str,
        bandwidth: float,
        rho: float,
        pattern: np.ndarray | None,
        spatial_weight: float,
        keep: bool,
        groups: np.ndarray | None = None,
    ) -> _Weights:
        """The weights; ``keep`` stores dense ones as a matrix when n <= KEEP_DENSE_LIMIT
        (worth it only when several variables are smoothed one after the other); ``groups``
        (integer codes) restricts neighbours to the same group."""
        n = coords.shape[0]
        weights = cls(
            kernel, bandwidth, _kernel_points(coords, kernel, rho), pattern, spatial_weight, groups
        )
        if bandwidth == 0:
            from scipy import sparse

            matrix: np.ndarray | sparse.csr_array | None = sparse.eye_array(n, format="csr")
        elif kernel in COMPACT_KERNELS:
            matrix = _epanechnikov(weights.points, bandwidth, groups)
        elif n > DENSE_LIMIT:
            bounds.SMOOTHING_POINTS.check(n, f"{_LABEL} with the {kernel} kernel asks for")
        elif keep and n <= KEEP_DENSE_LIMIT:
            matrix = weights._dense()
        else:
            return weights
        return replace(weights, matrix=matrix)

    def _block(self, rows: slice) -> np.ndarray:
        """Raw dense weights of the points ``rows`` against every point."""
        from scipy.spatial.distance import cdist

        lam = self.bandwidth
        if self.kernel == "gaussian":
            block = cdist(self.points[rows], self.points, "sqeuclidean")
            _divide(block, 2.0 * lam, lam)
        elif self.kernel == "exponential":
            block = cdist(self.points[rows], self.points, "euclidean")
            _divide(block, lam)
        else:
            assert self.pattern is not None
            block = np.abs(self.pattern[rows, None] - self.pattern[None, :])
            if self.spatial_weight > 0:
                block += self.spatial_weight * cdist(self.points[rows], self.points, "euclidean")
            _divide(block, lam)
        np.maximum(block, _LOWEST_EXPONENT, out=block)
        np.exp(block, out=block)
        if self.groups is not None:
            block *= self.groups[rows, None] == self.groups[None, :]
        return block

    def _each_block(self, work: Callable[[slice, np.ndarray], None]) -> None:
        """Call ``work(rows, raw weights of rows)`` for every row block in turn (one thread:
        the block products already use the BLAS threads, and more threads oversubscribe)."""
        n = self.points.shape[0]
        step = max(1, _BLOCK_WEIGHTS // n)
        for start in range(0, n, step):
            rows = slice(start, min(n, start + step))
            work(rows, self._block(rows))

    def _dense(self) -> np.ndarray:
        n = self.points.shape[0]
        full = np.empty((n, n))

        def store(rows: slice, block: np.ndarray) -> None:
            full[rows] = block

        self._each_block(store)
        return full

    def smooth(self, values: np.ndarray) -> np.ndarray:
        """Smooth the columns of ``values`` (n, m); NaN = missing (see the module notes)."""
        observed = ~np.isnan(values)
        m = values.shape[1]
        stacked = np.hstack([np.where(observed, values, 0.0), observed.astype("float64")])
        products = np.empty((values.shape[0], 2 * m))
        if self.matrix is not None:
            products[:] = self.matrix @ stacked
        else:

            def multiply(rows: slice, block: np.ndarray) -> None:
                products[rows] = block @ stacked

            self._each_block(multiply)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = products[:, :m] / products[:, m:]
        out[~observed] = np.nan
        low = np.where(observed, values, np.inf).min(axis=0)
        high = np.where(observed, values, -np.inf).max(axis=0)
        return np.clip(out, low, high)

    def normalised(self) -> np.ndarray | sparse.csr_array:
        """The weights with every row divided by its sum."""
        from scipy import sparse

        full = self._dense() if self.matrix is None else self.matrix
        sums = np.asarray(full.sum(axis=1)).ravel()
        if sparse.issparse(full):
            return sparse.csr_array(sparse.diags_array(1.0 / sums) @ full)
        return full / sums[:, None]


def _kernel_points(coords: np.ndarray, kernel: str, rho: float) -> np.ndarray:
    """The coordinates in which the kernel's distance is Euclidean: for the Gaussian kernel each
    coordinate over its SD, then whitened by the Cholesky factor of the inverse correlation
    matrix, so that the squared distance is the Mahalanobis form q."""
    if kernel != "gaussian" or coords.shape[1] == 0:
        return coords
    sd = coords.std(axis=0, ddof=1) if coords.shape[0] > 1 else np.ones(coords.shape[1])
    sd = np.where(sd > 0, sd, 1.0)
    standard = coords / sd
    if rho == 0:
        return standard
    factor = np.linalg.cholesky(np.linalg.inv(np.array([[1.0, rho], [rho, 1.0]])))
    return standard @ factor


def _epanechnikov(
    points: np.ndarray, bandwidth: float, groups: np.ndarray | None = None
) -> sparse.csr_array:
    """Sparse raw Epanechnikov weights from the pairs closer than ``bandwidth`` (and in the
    same group, given ``groups``)."""
    from scipy import sparse
    from scipy.spatial import cKDTree

    n = points.shape[0]
    tree = cKDTree(points)
    # Counted first (pairs within reach, both orders and each point with itself), because a
    # bandwidth that reaches everyone makes n^2 / 2 pairs.
    within = int(tree.count_neighbors(tree, bandwidth))
    bounds.NEIGHBOUR_PAIRS.check((within - n) // 2, f"{_LABEL} with this bandwidth reaches")
    pairs = tree.query_pairs(bandwidth, output_type="ndarray")
    if groups is not None:
        pairs = pairs[groups[pairs[:, 0]] == groups[pairs[:, 1]]]
    first, second = pairs[:, 0], pairs[:, 1]
    distance = np.sqrt(((points[first] - points[second]) ** 2).sum(axis=1))
    weight = 1.0 - (distance / bandwidth) ** 2
    keep = weight > 0
    first, second, weight = first[keep], second[keep], weight[keep]
    diagonal = np.arange(n)
    rows = np.concatenate([first, second, diagonal])
    cols = np.concatenate([second, first, diagonal])
    data = np.concatenate([weight, weight, np.ones(n)])
    return sparse.coo_array((data, (rows, cols)), shape=(n, n)).tocsr()


def _as_inputs(
    coords: np.ndarray | None, pattern: np.ndarray | None, n: int
) -> tuple[np.ndarray, np.ndarray | None]:
    coords = np.zeros((n, 0)) if coords is None else np.asarray(coords, dtype="float64")
    if coords.ndim == 1:
        coords = coords[:, None]
    if coords.ndim != 2 or coords.shape[0] != n:
        raise RecipeError(f"{_LABEL}: the coordinates must have one row per value.")
    if not np.isfinite(coords).all():
        raise RecipeError(f"{_LABEL}: the coordinates must be complete and finite.")
    if pattern is not None:
        pattern = np.asarray(pattern, dtype="float64").ravel()
        if pattern.shape[0] != n:
            raise RecipeError(f"{_LABEL}: the pattern must have one value per row.")
        if not np.isfinite(pattern).all():
            raise RecipeError(f"{_LABEL}: the pattern must be complete and finite.")
    return coords, pattern


def _weights_for(
    coords: np.ndarray | None,
    n: int,
    kernel: str,
    bandwidth: float,
    rho: float,
    pattern: np.ndarray | None,
    spatial_weight: float,
    groups: np.ndarray | None = None,
) -> _Weights:
    points, pattern = _as_inputs(coords, pattern, n)
    _check_kernel(kernel, bandwidth, rho, points.shape[1], pattern is not None, spatial_weight)
    return _Weights.build(
        points,
        kernel,
        float(bandwidth),
        float(rho),
        pattern,
        float(spatial_weight),
        keep=False,
        groups=_group_codes(groups, n),
    )


def _group_codes(groups: Any, n: int) -> np.ndarray | None:
    """Integer codes of a grouping (any labels; missing labels are a RecipeError)."""
    if groups is None:
        return None
    labels = pd.Series(np.asarray(groups).ravel())
    if len(labels) != n:
        raise RecipeError(f"{_LABEL}: the groups must have one label per row.")
    if labels.isna().any():
        raise RecipeError(f"{_LABEL}: the groups must have no missing labels.")
    return pd.factorize(labels)[0]


def smooth_values(
    values: np.ndarray,
    coords: np.ndarray | None,
    *,
    kernel: str = "gaussian",
    bandwidth: float,
    rho: float = 0.0,
    pattern: np.ndarray | None = None,
    spatial_weight: float = 0.0,
    groups: np.ndarray | None = None,
) -> np.ndarray:
    """Kernel-smooth every column of ``values`` (n,) or (n, m) with the same weights.

    ``coords`` is (n, d) with d = 1..3 (or (n,), or None for the pure ring kernel); ``pattern``
    (n,) is the exposure pattern of the ``prior`` kernel; ``groups`` (n,) labels blocks whose
    records are each other's only neighbours. See the module notes for the kernels,
    missing values and limits. Returns a new array of the shape of ``values``; the inputs are
    not modified.
    """
    array = np.asarray(values, dtype="float64")
    if array.ndim not in (1, 2):
        raise RecipeError(f"{_LABEL}: the values must be a vector or a matrix (n, m).")
    if np.isinf(array).any():
        raise RecipeError(f"{_LABEL}: the values to smooth must not be infinite.")
    weights = _weights_for(
        coords, array.shape[0], kernel, bandwidth, rho, pattern, spatial_weight, groups
    )
    if bandwidth == 0:
        return array.copy()
    matrix = array[:, None] if array.ndim == 1 else array
    smoothed = weights.smooth(matrix)
    return smoothed[:, 0] if array.ndim == 1 else smoothed


def smoothing_weights(
    coords: np.ndarray | None,
    *,
    kernel: str = "gaussian",
    bandwidth: float,
    rho: float = 0.0,
    pattern: np.ndarray | None = None,
    spatial_weight: float = 0.0,
    groups: np.ndarray | None = None,
) -> np.ndarray | sparse.csr_array:
    """The normalised weights (each row sums to 1) that :func:`smooth_values` applies when no
    value is missing: a dense (n, n) array, or a sparse CSR array for the compact kernel and
    for bandwidth 0 (the identity). For inspection and tests: it holds every weight."""
    n = len(pattern) if coords is None and pattern is not None else len(np.asarray(coords))
    return _weights_for(
        coords, n, kernel, bandwidth, rho, pattern, spatial_weight, groups
    ).normalised()


@dataclass(frozen=True)
class KernelSmooth(MaskingStep):
    """Replace each value by the kernel-weighted average of the column over nearby locations
    (Zhou et al. 2010; formulas in the module notes).

    ``locations`` names 1 to 3 coordinate columns (none for the pure ring kernel), ``kernel`` is
    one of ``gaussian``, ``exponential``, ``prior``, ``epanechnikov``, ``bandwidth`` (>= 0) is
    the degree of masking, ``rho`` tilts the Gaussian kernel over exactly 2 coordinates,
    ``pattern`` is the exposure-pattern column of the ``prior`` kernel (required there,
    forbidden otherwise) and ``spatial_weight`` (>= 0, prior kernel only) adds the Euclidean
    distance to its pattern difference; ``within`` names a grouping column whose groups are
    smoothed separately (no weight between groups). Weights always come from the original
    coordinates, pattern and groups (the ``frame`` passed to :meth:`apply`), even if a recipe
    also masks them.
    """

    locations: tuple[str, ...] = ()
    kernel: str = "gaussian"
    bandwidth: float = 0.1
    rho: float = 0.0
    pattern: str | None = None
    spatial_weight: float = 0.0
    within: str | None = None

    method: ClassVar[str] = "kernel_smooth"
    takes: ClassVar[str] = NUMBERS
    label: ClassVar[str] = _LABEL
    random: ClassVar[bool] = False
    _PERTURBATIVE: ClassVar[bool] = True
    sweep_parameter: ClassVar[str | None] = "bandwidth"
    _ELEMENTWISE: ClassVar[bool] = False

    def _validate(self) -> None:
        locations = self.locations
        if isinstance(locations, str) or not isinstance(locations, Sequence):
            raise RecipeError(f"{_LABEL}: 'locations' must be a list of column names.")
        if not all(isinstance(c, str) and c.strip() for c in locations):
            raise RecipeError(f"{_LABEL}: 'locations' must be a list of column names.")
        if len(set(locations)) != len(locations):
            raise RecipeError(f"{_LABEL}: 'locations' lists a column twice.")
        object.__setattr__(self, "locations", tuple(locations))
        if self.pattern is not None and (
            not isinstance(self.pattern, str) or not self.pattern.strip()
        ):
            raise RecipeError(f"{_LABEL}: 'pattern' must be a column name.")
        if self.pattern is not None and self.pattern in locations:
            raise RecipeError(f"{_LABEL}: the pattern column cannot also be a location.")
        if self.within is not None and (not isinstance(self.within, str) or not self.within):
            raise RecipeError(f"{_LABEL}: 'within' must be a column name.")
        if self.within is not None and self.within == self.column:
            raise RecipeError(f"{_LABEL}: a column cannot be smoothed within its own groups.")
        _check_kernel(
            self.kernel,
            self.bandwidth,
            self.rho,
            len(locations),
            self.pattern is not None,
            self.spatial_weight,
        )

    @property
    def context_columns(self) -> tuple[str, ...]:
        extra = tuple(c for c in (self.pattern, self.within) if c and c not in self.locations)
        return self.locations + tuple(dict.fromkeys(extra))

    def kind_columns(self, quasi_identifiers: Sequence[str] = ()) -> tuple[str, ...]:
        """The smoothed column, the coordinates and the pattern (the groups of ``within``
        may hold any values)."""
        read = (self.column, *self.locations, *((self.pattern,) if self.pattern else ()))
        return tuple(dict.fromkeys(read))

    def _transform(
        self,
        series: pd.Series,
        replicate: int,
        *,
        frame: pd.DataFrame,
        cache: dict[Any, Any],
    ) -> pd.Series:
        values = numeric_values(series, self.column, self.label)
        if np.isinf(values).any():
            raise RecipeError(f"{_LABEL}: '{self.column}' has infinite values.")
        coords = np.column_stack(
            [self._complete(frame[c], c) for c in self.locations] or [np.zeros((len(frame), 0))]
        )
        pattern = (
            None if self.pattern is None else self._complete(frame[self.pattern], self.pattern)
        )
        groups = None
        if self.within is not None:
            labels = frame[self.within]
            if labels.isna().any():
                raise RecipeError(
                    f"{_LABEL} of '{self.column}': the grouping column '{self.within}' has "
                    f"{int(labels.isna().sum())} missing entries; every record needs a group."
                )
            groups = _group_codes(labels.to_numpy(), len(frame))
        if self.bandwidth == 0:
            return restore_integer_dtype(series, values)
        key = (
            self.method,
            self.kernel,
            self.locations,
            float(self.bandwidth),
            float(self.rho),
            self.pattern,
            float(self.spatial_weight),
            self.within,
        )
        kept = cache.get(key)
        if (
            kept is not None
            and np.array_equal(kept[0], coords)
            and _same(kept[1], pattern)
            and _same(kept[2], groups)
        ):
            weights = kept[3]
        else:
            weights = _Weights.build(
                coords,
                self.kernel,
                float(self.bandwidth),
                float(self.rho),
                pattern,
                float(self.spatial_weight),
                keep=True,
                groups=groups,
            )
            cache[key] = (coords, pattern, groups, weights)
        return restore_integer_dtype(series, weights.smooth(values[:, None])[:, 0])

    def _complete(self, series: pd.Series, column: str) -> np.ndarray:
        values = numeric_values(series, column, self.label)
        bad = int((~np.isfinite(values)).sum())
        if bad:
            raise RecipeError(
                f"{_LABEL} of '{self.column}': column '{column}' has {bad} missing or infinite "
                f"entr{'y' if bad == 1 else 'ies'}; smoothing weights need every location "
                "(and pattern value). Fill or drop those records first."
            )
        return values

    def describe(self) -> str:
        where = ", ".join(self.locations)
        lam = f"{self.bandwidth:g}"
        if self.kernel == "gaussian":
            tilt = f", correlation {self.rho:g}" if self.rho else ""
            how = f"Gaussian kernel over {where}, bandwidth {lam} SD{tilt}"
        elif self.kernel == "exponential":
            how = f"exponential kernel over {where}, bandwidth {lam}"
        elif self.kernel == "epanechnikov":
            how = f"Epanechnikov kernel over {where}, neighbours closer than {lam}"
        else:
            spatial = (
                f" plus {self.spatial_weight:g} x distance over {where}"
                if self.spatial_weight
                else ""
            )
            how = f"ring kernel on the difference in '{self.pattern}'{spatial}, bandwidth {lam}"
        within = f", within groups of '{self.within}'" if self.within else ""
        return f"{self.column}: kernel smoothing ({how}{within})"

    def sweep_values(self, series: pd.Series) -> list[Any]:
        """Bandwidths to try. Gaussian: fixed values in SD units. Other kernels work in the
        units of the coordinates or the pattern, which the column alone does not reveal: 0 and
        multiples (0.1x to 5x) of the current bandwidth (of 1 if it is 0)."""
        if self.kernel == "gaussian":
            return [0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
        base = float(self.bandwidth) or 1.0
        return [0.0] + [float(f"{base * f:.2g}") for f in (0.1, 0.2, 0.5, 1.0, 2.0, 5.0)]


def _same(kept: np.ndarray | None, pattern: np.ndarray | None) -> bool:
    if kept is None or pattern is None:
        return kept is None and pattern is None
    return np.array_equal(kept, pattern)


__all__ = [
    "COMPACT_KERNELS",
    "DENSE_LIMIT",
    "KEEP_DENSE_LIMIT",
    "KERNELS",
    "KernelSmooth",
    "smooth_values",
    "smoothing_weights",
]
