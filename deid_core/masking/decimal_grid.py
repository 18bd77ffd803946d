"""Exact decimal grids: truncation, rounding and intervals of float values.

**The rule.** A number is the decimal it is written as: the shortest decimal that reads back as
the same float (what Python prints and a CSV file holds), so the base 0.1 is the decimal 0.1.
A *grid* is the set of decimals ``origin + n * width`` for all integers ``n``; its points, as
floats, are ``g_n = fl(origin + n * width)``, where ``fl`` rounds a real number to the nearest
float (ties to even), as reading a number from text does.

- A value is *on the grid* when it is one of the ``g_n``: truncating or rounding it to the grid
  leaves it unchanged (``71638.54`` stays ``71638.54`` with base 0.01).
- A value's *cell* is ``[g_n, g_(n+1))`` with ``g_n <= value < g_(n+1)``, comparing floats.
  For a value that is not on the grid this is exactly the cell of its decimal.
- Its *half-way point* is ``h_n = fl(origin + (n + 1/2) * width)``. A value that is not on the
  grid and is at or beyond ``h_n`` is nearer ``g_(n+1)``; a value equal to ``h_n`` is the
  half-way point (so 0.35 rounds to 0.4 with base 0.1, halves away from zero).
- When the width is below half the gap between a value and its neighbouring floats, the grid
  is finer than the floats there: the value is a grid point and its own cell,
  ``[value, next float)``, whose midpoint is taken to be the value itself.

Results are exact for every finite float, subnormals to 1.8e308. Most values are computed in
one correctly rounded operation on exact integers, ``(A + n B) * 10^E`` with ``|A + n B| <
2^52`` and ``|E| <= 22`` (Clinger's fast path for reading decimals). The others use
double-double arithmetic (error-free transformations: Dekker 1971; Knuth, TAOCP vol. 2,
4.2.2) with an error bound that certifies each rounding; the rare value that the bound cannot
settle (a grid point within about 2^-100 of a tie between two floats) is computed exactly with
rational arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np

#: 10^0 .. 10^22 are exact floats.
_EXACT_POWERS = 22
#: Integers below this (2^52) stay exact with a few widths and a half added.
_FAST_LIMIT = 2.0**52
#: Veltkamp's splitter for Dekker's exact product.
_SPLITTER = 2.0**27 + 1.0
#: Bound on the relative error of each double-double step (the true bound is about 2^-102).
_CERTAIN = 2.0**-100
#: The walk from the estimated cell takes at most 4 steps; values still walking after this
#: many are computed exactly (none are).
_MAX_STEPS = 8

Param = Any  # a float, or an array of floats aligned with the values


def written(value: float) -> Fraction:
    """The decimal a float is written as (its shortest round-trip repr), exactly."""
    return Fraction(repr(float(value)))


def nearest_float(value: Fraction) -> float:
    """``fl(value)``: the nearest float (ties to even; beyond the largest float, infinity)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _decimal_exponent(value: Fraction) -> int:
    """The largest ``E`` with ``value / 10^E`` an integer (``value`` a nonzero decimal)."""
    denominator = value.denominator
    if denominator > 1:
        twos = (denominator & -denominator).bit_length() - 1
        fives = 0
        while denominator % 5 == 0:
            denominator //= 5
            fives += 1
        return -max(twos, fives)
    numerator, exponent = abs(value.numerator), 0
    while numerator % 10 == 0:
        numerator //= 10
        exponent += 1
    return exponent


def _binary_exponent(value: Fraction) -> int:
    """``s`` with ``2^s <= value < 2^(s+1)`` (``value`` > 0)."""
    s = value.numerator.bit_length() - value.denominator.bit_length()
    return s - 1 if Fraction(2) ** s > value else s


def _double_double(value: Fraction) -> tuple[float, float]:
    """``(hi, lo)``: ``hi = fl(value)``, ``lo = fl(value - hi)``."""
    high = float(value)
    return high, float(value - Fraction(high))


@dataclass(frozen=True)
class FastPath:
    """The grid points ``origin + n * width`` as ``(a + n b) * up / down``: exact integers
    ``a``, ``b``, and ``up``, ``down`` an exact power of ten and 1 (so one rounding), for values
    of magnitude below ``limit``. Each field is a float, or an array with one entry per value.
    """

    width: Param
    origin: Param
    a: Param
    b: Param
    up: Param
    down: Param
    limit: Param

    def pick(self, rows: np.ndarray) -> FastPath:
        """The same for the values at ``rows`` only."""
        return FastPath(*(_rows_of(value, rows) for value in vars(self).values()))

    def point(self, numerator: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``fl(numerator * up / down)``: one rounding, since one of ``up``, ``down`` is 1
        (into ``out`` if given)."""
        if np.ndim(self.up) == 0 and self.up == 1.0:
            return np.divide(numerator, self.down, out=out)
        if np.ndim(self.down) == 0 and self.down == 1.0:
            return np.multiply(numerator, self.up, out=out)
        out = np.multiply(numerator, self.up, out=out)
        return np.divide(out, self.down, out=out)


@dataclass(frozen=True)
class _DoubleDouble:
    """The grid in double-double arithmetic on values scaled by ``2^-scale``: width
    ``w_hi + w_lo`` (``w_hi`` in [1, 2), split into ``w_split_hi + w_split_lo`` for Dekker's
    product), origin ``o_hi + o_lo``, within ``floor_error`` (a subnormal part) of the
    decimals. Each field is a float, or an array with one entry per value."""

    scale: Param
    w_hi: Param
    w_lo: Param
    w_split_hi: Param
    w_split_lo: Param
    o_hi: Param
    o_lo: Param
    floor_error: Param


def _rows_of(value: Param, rows: np.ndarray) -> Param:
    return value[rows] if np.ndim(value) else value


def _paths(origin: Fraction, width: Fraction) -> tuple[FastPath, _DoubleDouble]:
    """The arithmetic of the grid ``origin + n * width`` (|origin| <= width / 2)."""
    exponent = _decimal_exponent(width)
    if origin:
        exponent = min(exponent, _decimal_exponent(origin))
    a = origin / Fraction(10) ** exponent
    b = width / Fraction(10) ** exponent
    limit = up = down = 1.0
    if abs(exponent) <= _EXACT_POWERS and b <= 2**50 and abs(a) <= 2**50:
        up, down = (10.0**exponent, 1.0) if exponent >= 0 else (1.0, 10.0**-exponent)
        limit = float((_FAST_LIMIT - 8 * b - abs(a)) * Fraction(10) ** exponent) * (1 - 2.0**-40)
    else:  # no fast path: no value is below the limit
        a, b, limit = Fraction(0), Fraction(1), 0.0
    scale = _binary_exponent(width)
    w_hi, w_lo = _double_double(width / Fraction(2) ** scale)
    o_hi, o_lo = _double_double(origin / Fraction(2) ** scale)
    split = _SPLITTER * w_hi
    w_split_hi = split - (split - w_hi)
    fast = FastPath(float(width), float(origin), float(a), float(b), up, down, limit)
    # An origin this small (relative to the width) has a subnormal part, off by up to half
    # the smallest subnormal.
    floor_error = 2.0**-1074 if origin and abs(o_hi) < 2.0**-960 else 0.0
    slow = _DoubleDouble(
        float(scale), w_hi, w_lo, w_split_hi, w_hi - w_split_hi, o_hi, o_lo, floor_error
    )
    return fast, slow


@dataclass(frozen=True)
class Cells:
    """Per value: its cell ``[lower, upper)`` and the cell's half-way point ``middle``
    (NaN for a value that is not finite)."""

    lower: np.ndarray
    upper: np.ndarray
    middle: np.ndarray


@dataclass(frozen=True)
class DecimalGrid:
    """The grid of decimals ``origin + n * width`` (see the module's rule)."""

    width: Fraction
    origin: Fraction = Fraction(0)

    def __post_init__(self) -> None:
        if self.width <= 0:
            raise ValueError("A grid needs a width greater than zero.")

    @classmethod
    def of(cls, width: float, origin: float = 0.0) -> DecimalGrid:
        """The grid of the decimals that ``width`` and ``origin`` are written as."""
        return cls(written(width), written(origin))

    def cells(self, values: np.ndarray, middle: bool = True) -> Cells:
        """Each value's cell and (if ``middle``, else NaN) its half-way point (see the
        module's rule)."""
        width = self.width
        origin = self.origin - round(self.origin / width) * width  # same grid, near zero
        fast, slow = _grid_paths(origin, width)
        return _cells(values, fast, lambda rows: slow, lambda row: (origin, width), middle)

    def fast_path(self) -> FastPath:
        """The one-rounding arithmetic :meth:`cells` uses for values below its ``limit`` in
        size (``limit`` 0: none), for code that reproduces the cells elsewhere (the SQL
        engines)."""
        width = self.width
        return _grid_paths(self.origin - round(self.origin / width) * width, width)[0]


@cache
def _grid_paths(origin: Fraction, width: Fraction) -> tuple[FastPath, _DoubleDouble]:
    return _paths(origin, width)


# ---------------------------------------------------------------------------- powers of ten
#: Decades of floats: fl(10^k) for k = -324 .. 309 (fl(10^-324) is 0, fl(10^309) infinite).
_LOWEST_DECADE = -324
_DECADES = np.array([nearest_float(Fraction(10) ** k) for k in range(_LOWEST_DECADE, 310)])
#: Widths of relative rounding, 10^e for e = -338 .. 308.
_LOWEST_POWER = _LOWEST_DECADE - 14


@cache
def _power_tables() -> tuple[FastPath, _DoubleDouble]:
    """The arithmetic of the grids ``n * 10^e``, as arrays with one entry per ``e``."""
    fast_rows, slow_rows = zip(
        *(_paths(Fraction(0), Fraction(10) ** e) for e in range(_LOWEST_POWER, 309)), strict=True
    )
    fast = FastPath(
        *(np.array(c) for c in zip(*(vars(f).values() for f in fast_rows), strict=True))
    )
    slow = _DoubleDouble(
        *(np.array(c) for c in zip(*(vars(d).values() for d in slow_rows), strict=True))
    )
    return fast, slow


def decades(magnitudes: np.ndarray) -> np.ndarray:
    """For each finite magnitude > 0, the ``k`` with ``fl(10^k) <= magnitude < fl(10^(k+1))``:
    the exponent of the first significant digit of its decimal."""
    with np.errstate(divide="ignore"):
        k = np.floor(np.log10(magnitudes)).astype(np.int64) - _LOWEST_DECADE
    k = np.clip(k, 0, len(_DECADES) - 2)
    k -= _DECADES[k] > magnitudes  # log10 may be off by one near a power of ten
    k += _DECADES[k + 1] <= magnitudes
    return k + _LOWEST_DECADE


def power_of_ten_cells(magnitudes: np.ndarray, exponents: np.ndarray) -> Cells:
    """The cells of each value on its own grid ``n * 10^e`` (``exponents`` gives ``e``,
    between -338 and 308)."""
    fast_table, slow_table = _power_tables()
    table_rows = exponents - _LOWEST_POWER
    fast = FastPath(
        fast_table.width[table_rows],
        0.0,
        0.0,
        1.0,
        fast_table.up[table_rows],
        fast_table.down[table_rows],
        fast_table.limit[table_rows],
    )
    return _cells(
        magnitudes,
        fast,
        lambda rows: _DoubleDouble(*(v[table_rows[rows]] for v in vars(slow_table).values())),
        lambda row: (Fraction(0), Fraction(10) ** int(exponents[row])),
        middle=True,
    )


# ---------------------------------------------------------------------------- the cells
def _cells(
    values: np.ndarray,
    fast: FastPath,
    slow: Callable[[np.ndarray], _DoubleDouble],
    exact_grid: Callable[[int], tuple[Fraction, Fraction]],
    middle: bool,
) -> Cells:
    """The cells of ``values``: by the fast path below its limit, else directly when the grid
    is finer than the floats, else in double-double arithmetic, else exactly."""
    x = np.asarray(values, dtype="float64")
    with np.errstate(all="ignore"):
        in_fast = np.abs(x) < fast.limit  # False for NaN
        if in_fast.all():
            cells, unsettled = _fast_cells(x, fast, middle)
            _settle(cells, x, unsettled, exact_grid)
            return cells
        cells = Cells(*(np.full(x.shape, np.nan) for _ in range(3)))
        rows = np.flatnonzero(in_fast)
        found, unsettled = _fast_cells(x[rows], fast.pick(rows), middle)
        _fill(cells, rows, found)
        _settle(cells, x, rows[unsettled], exact_grid)
        rows = np.flatnonzero(~in_fast & np.isfinite(x))
        # Where the grid is finer than the floats, the value is its own cell.
        magnitude = np.abs(x[rows])
        fine = 2 * _rows_of(fast.width, rows) < magnitude - np.nextafter(magnitude, 0.0)
        own = x[rows[fine]]
        _fill(cells, rows[fine], Cells(own, np.nextafter(own, np.inf), own))
        rows = rows[~fine]
        if rows.size:
            found, unsettled = _double_double_cells(x[rows], slow(rows))
            _fill(cells, rows, found)
            _settle(cells, x, rows[unsettled], exact_grid)
    return cells


def _fill(cells: Cells, rows: np.ndarray, found: Cells) -> None:
    """Put ``found`` (the cells of the values at ``rows``) into ``cells``."""
    for into, values in zip(vars(cells).values(), vars(found).values(), strict=True):
        into[rows] = values


def _settle(
    cells: Cells,
    x: np.ndarray,
    rows: np.ndarray,
    exact_grid: Callable[[int], tuple[Fraction, Fraction]],
) -> None:
    """Compute the cells of the values at ``rows`` exactly, value by value."""
    for row in rows:
        exact = _exact_cell(float(x[row]), *exact_grid(row))
        cells.lower[row], cells.upper[row], cells.middle[row] = exact


def _fast_cells(x: np.ndarray, p: FastPath, middle: bool) -> tuple[Cells, np.ndarray]:
    """Cells of values within the fast path's limit, and the positions of any whose walk did
    not settle (none: the walk takes at most 4 steps, since the estimated cell is off by at
    most 2 and a value can be a grid point up to 2 widths above the floor of its quotient).

    Every point is one rounding of an exact integer; the estimated cell is moved a width at a
    time until it brackets the value. Midpoints only if ``middle``, else NaN.
    """
    numerator = np.divide(x - p.origin if _nonzero(p.origin) else x, p.width)
    np.floor(numerator, out=numerator)
    if _nonzero(p.b - 1):
        numerator *= p.b
    if _nonzero(p.a):
        numerator += p.a
    low = p.point(numerator)
    high = np.add(numerator, p.b)
    p.point(high, out=high)
    rows = None
    for _ in range(_MAX_STEPS):
        if rows is None:
            too_high, too_low = np.flatnonzero(low > x), np.flatnonzero(high <= x)
        else:
            too_high, too_low = rows[low[rows] > x[rows]], rows[high[rows] <= x[rows]]
        rows = np.concatenate([too_high, too_low])
        if not rows.size:
            break
        for moved, step in ((too_high, -1.0), (too_low, 1.0)):
            q = p.pick(moved) if np.ndim(p.up) else p
            numerator[moved] += step * q.b
            if step < 0:
                high[moved] = low[moved]
                low[moved] = q.point(numerator[moved])
            else:
                low[moved] = high[moved]
                high[moved] = q.point(numerator[moved] + q.b)
    if not middle:
        numerator.fill(np.nan)
        return Cells(low, high, numerator), rows
    numerator *= 2
    numerator += p.b
    p.point(numerator, out=numerator)
    numerator /= 2
    return Cells(low, high, numerator), rows


def _nonzero(value: Param) -> bool:
    """Whether a parameter is an array or a nonzero number (so that adding it does something)."""
    return bool(np.ndim(value)) or value != 0


def _two_sum(a: np.ndarray, b: Param) -> tuple[np.ndarray, np.ndarray]:
    """``s + t == a + b`` exactly, ``s = fl(a + b)`` (Knuth)."""
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


def _fast_two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s + t == a + b`` exactly for ``|a| >= |b|`` (Dekker)."""
    s = a + b
    return s, b - (s - a)


def _two_product(a: np.ndarray, p: _DoubleDouble) -> tuple[np.ndarray, np.ndarray]:
    """``s + t == a * w_hi`` exactly (Dekker), for integers ``|a| <= 2^60``."""
    s = a * p.w_hi
    split = _SPLITTER * a
    a_hi = split - (split - a)
    a_lo = a - a_hi
    t = ((a_hi * p.w_split_hi - s) + a_hi * p.w_split_lo + a_lo * p.w_split_hi) + (
        a_lo * p.w_split_lo
    )
    return s, t


def _double_double_cells(x: np.ndarray, p: _DoubleDouble) -> tuple[Cells, np.ndarray]:
    """Cells in double-double arithmetic on values scaled by ``2^-scale``, and the positions
    of the values whose cells its error bound could not settle (for the exact computation).

    The cell's lower point ``origin + n * width`` is computed for an estimated ``n`` with an
    exact product, then moved a width at a time until it brackets the value; the point of
    index 0 is the origin itself (so that a point 0 is exactly 0).
    """
    scale = np.asarray(p.scale, dtype=np.int64)
    xs = np.ldexp(x, -scale)
    unsettled = np.ldexp(xs, scale) != x  # the scaling itself lost digits
    n = np.floor((xs - p.o_hi) / p.w_hi)
    s, t = _two_product(n, p)
    hi, lo = _two_sum(s, p.o_hi)
    hi, lo = _fast_two_sum(hi, lo + (t + (n * p.w_lo + p.o_lo)))
    low = _Point(n, hi, lo, _CERTAIN * (np.abs(n) * p.w_hi + np.abs(p.o_hi)) + p.floor_error)
    low = low.at_origin(p)
    high = low.plus(p.w_hi, p.w_lo, p)
    unsettled |= ~low.settled() | ~high.settled()
    for _ in range(_MAX_STEPS):
        too_high = (low.hi > xs) & ~unsettled
        too_low = (high.hi <= xs) & ~unsettled
        if not (too_high.any() or too_low.any()):
            break
        down = low.plus(-p.w_hi, -p.w_lo, p)
        low, high = low.where(too_high, down), high.where(too_high, low)
        up = high.plus(p.w_hi, p.w_lo, p)
        low, high = low.where(too_low, high), high.where(too_low, up)
        unsettled |= (too_high & ~low.settled()) | (too_low & ~high.settled())
    unsettled |= (low.hi > xs) | (high.hi <= xs)  # a walk that did not end (none does)
    half = low.plus(p.w_hi / 2, p.w_lo / 2, p)
    unsettled |= ~half.settled()
    found = []
    for point in (low, high, half):
        value = np.ldexp(point.hi, scale)
        unsettled |= np.ldexp(value, -scale) != point.hi  # subnormal, or beyond the largest float
        found.append(value)
    return Cells(*found), np.flatnonzero(unsettled)


@dataclass(frozen=True)
class _Point:
    """Grid points ``origin + index * width`` (scaled) as double-doubles ``hi + lo`` within
    ``error`` of the exact decimals."""

    index: np.ndarray
    hi: np.ndarray
    lo: np.ndarray
    error: np.ndarray

    def plus(self, b_hi: Param, b_lo: Param, p: _DoubleDouble) -> _Point:
        """The point ``(b_hi + b_lo) / width`` indices further (a width, or half of one)."""
        s, t = _two_sum(self.hi, b_hi)
        s, t = _fast_two_sum(s, t + (self.lo + b_lo))
        error = self.error + _CERTAIN * (np.abs(s) + np.abs(b_hi))
        return _Point(self.index + b_hi / p.w_hi, s, t, error).at_origin(p)

    def at_origin(self, p: _DoubleDouble) -> _Point:
        """The same points, the one of index 0 taken as the origin itself."""
        origin = self.index == 0
        if not origin.any():
            return self
        exact = _Point(
            self.index,
            np.zeros_like(self.hi) + p.o_hi,
            np.zeros_like(self.lo) + p.o_lo,
            np.zeros_like(self.error) + (_CERTAIN * np.abs(p.o_hi) + p.floor_error),
        )
        return self.where(origin, exact)

    def where(self, condition: np.ndarray, other: _Point) -> _Point:
        """``other`` where ``condition`` holds, else this."""
        return _Point(
            *(np.where(condition, b, a) for a, b in zip(self.fields(), other.fields(), strict=True))
        )

    def fields(self) -> tuple[np.ndarray, ...]:
        return self.index, self.hi, self.lo, self.error

    def settled(self) -> np.ndarray:
        """Whether ``hi`` is certainly the nearest float to the exact point."""
        magnitude = np.abs(self.hi)
        gap = magnitude - np.nextafter(magnitude, 0.0)
        return (self.error == 0) | (np.abs(self.lo) + self.error < gap / 2)


def _exact_cell(x: float, origin: Fraction, width: Fraction) -> tuple[float, float, float]:
    """The cell of one value in rational arithmetic: ``(lower, upper, middle)``."""
    n = math.floor((Fraction(x) - origin) / width)
    while nearest_float(origin + (n + 1) * width) <= x:
        n += 1
    return (
        nearest_float(origin + n * width),
        nearest_float(origin + (n + 1) * width),
        nearest_float(origin + (n + Fraction(1, 2)) * width),
    )
