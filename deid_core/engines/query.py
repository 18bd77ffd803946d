"""The one query that grows with the data, written once in SQL and run by DuckDB or Spark.

The query is the finest cross-tabulation of the key columns (the quasi-identifiers, or the
record-uniqueness keys) after the recipe's generalisation steps: one row per distinct
combination of key values (a missing value is a value of its own, SQL's NULL group), with the
number of records, the sum of the sampling weights and, per step that can fail, the number of
values it could not read. Nothing else leaves the engine: never a record. Every figure (class
sizes, wildcard matching, the record-uniqueness lattice) is computed locally from these rows
(:mod:`deid_core.engines.crosstab`).

The SQL is kept in one dialect, DuckDB's, and transpiled to Spark SQL by SQLGlot
(:func:`render`); identifiers and text values are quoted by SQLGlot, never pasted.

Each key column is read by one rule, the same as the in-memory reader of Parquet files
(:func:`deid_core.engines.sources.read_parquet_frame`): text is trimmed of spaces, tabs and line
breaks and the missing markers (``NA``, ``.``, empty, ...) are missing; numbers that are NaN or
infinite are missing. Then each step is compiled to an expression that reproduces
:mod:`deid_core.masking` value for value (tested against it on every engine), or to one that
yields the same partition (interval grouping gives the interval's number, whatever is
released):

- absolute rounding, truncation and interval grouping of a fixed width: the value's cell on the
  decimal grid ``origin + n * width`` by the fast path of :mod:`deid_core.masking.decimal_grid`
  (each grid point one correctly rounded operation on exact integers, ``(a + n b) * 10^E``;
  the estimated cell ``floor((x - origin) / width)`` walked a width at a time until it
  brackets the value), then the nearer point (rounding, halves away from zero), the lower
  point toward zero (truncation) or the cell's number (interval grouping); values beyond the
  fast path's limit (about 4.5e15 widths, e.g. 4.5e14 for the base 0.1) are refused (count as
  unreadable: run the recipe in memory);
- relative rounding: the decimal exponent ``k`` of ``x`` (``fl(10^k) <= |x| <
  fl(10^(k+1))``), then the same rounding on the grid ``n * 10^(k - digits + 1)``; values
  whose grid exponent is beyond +-22 (below about 1e-20 or above 1e23 in size) are refused;
- interval grouping by break points: the number of break points at or below ``x``;
- interval grouping is the column's last step (what follows would need the released values);
- top/bottom coding: ``x`` above the top is the top, below the bottom the bottom;
- merging levels: the value as text, mapped to its group's label;
- dates to year (``YEAR``) or to year and month (``YEAR * 100 + MONTH``, the column's last
  step); text must be an ISO date.

Noise, smoothing and interval means or other steps that need more than the value itself are
refused with a message: they need the records (the in-memory engine).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from deid_core.errors import RecipeError
from deid_core.io.columns import MISSING_MARKERS
from deid_core.masking import (
    AbsoluteRound,
    DateReduce,
    IntervalGroup,
    MaskingStep,
    MergeLevels,
    RelativeRound,
    TopBottomCode,
    Truncate,
)
from deid_core.masking.decimal_grid import DecimalGrid

# SQLGlot is imported where it is used: the command line imports this module to refuse bad
# input and must not spend time loading SQLGlot first (see deid_core._lazy).

#: Column kinds the engines tell apart (from the source's schema).
KINDS = ("text", "integer", "float", "boolean", "date", "timestamp", "other")
#: Characters trimmed from text values (ASCII white space).
TRIMMED = " \t\n\r\x0b\x0c"
RECORDS = "records"
WEIGHT_SUM = "weight_sum"
WEIGHT_MISSING = "weight_missing"
WEIGHT_INVALID = "weight_invalid"
_LARGEST = "1.7976931348623157e308"
#: Powers of ten 10^0 .. 10^22 are exact doubles (the fast path's exponents).
_EXACT_POWERS = 22
#: Widths between the estimated cell and the value's: at most 4 (decimal_grid).
_WALK = 4


def _identifier(name: str) -> str:
    from sqlglot import exp

    return exp.to_identifier(name, quoted=True).sql("duckdb")


def _text(value: str) -> str:
    from sqlglot import exp

    return exp.Literal.string(value).sql("duckdb")


def _number(value: float) -> str:
    """A double literal that parses back to exactly ``value`` in every engine."""
    return f"CAST({float(value)!r} AS DOUBLE)"


class _Program:
    """Named intermediate columns, each an expression of earlier ones, laid out as nested
    SELECTs by dependency level (so that no expression is pasted into another twice and the
    SQL grows linearly with the steps)."""

    def __init__(self) -> None:
        self.levels: dict[str, int] = {}
        self.columns: list[tuple[str, str]] = []

    def let(self, expression: str, *inputs: str) -> str:
        """A new column computed by ``expression`` from the columns ``inputs`` (source
        columns, or names returned by earlier calls); returns its name."""
        name = f"__deid_{len(self.columns)}"
        self.levels[name] = 1 + max((self.levels.get(i, 0) for i in inputs), default=0)
        self.columns.append((name, expression))
        return name

    def select(self, source: str) -> str:
        """The nested SELECTs computing every column over the relation ``source``."""
        relation = f"(SELECT * FROM {source}) AS __deid_level_0"
        for level in range(1, max(self.levels.values(), default=0) + 1):
            new = ", ".join(f"{e} AS {n}" for n, e in self.columns if self.levels[n] == level)
            relation = f"(SELECT *, {new} FROM {relation}) AS __deid_level_{level}"
        return relation


def _finite(p: _Program, x: str) -> str:
    """The double, or NULL when it is NaN or infinite (NaN sorts above every number in DuckDB
    and Spark, so one range test catches NaN and both infinities)."""
    return p.let(
        f"CASE WHEN {x} BETWEEN CAST(-{_LARGEST} AS DOUBLE) AND CAST({_LARGEST} AS DOUBLE) "
        f"THEN {x} END",
        x,
    )


def _floor(p: _Program, v: str) -> str:
    """``floor(v)`` as a double. A double of 2^52 or more in size is a whole number already;
    below that, FLOOR is exact in every engine (Spark's returns a 64-bit integer, which would
    overflow beyond 2^63)."""
    return p.let(
        f"CASE WHEN ABS({v}) >= CAST(4503599627370496 AS DOUBLE) THEN {v} "
        f"ELSE CAST(FLOOR({v}) AS DOUBLE) END",
        v,
    )


def _signed(p: _Program, v: str, magnitude: str) -> str:
    """``copysign(magnitude, v)`` for a whole magnitude; + 0 turns -0.0 into 0.0 (engines may
    group the two zeros apart)."""
    return p.let(f"SIGN({v}) * {magnitude} + CAST(0 AS DOUBLE)", v, magnitude)


def _power_of_ten(p: _Program, exponent: str) -> str:
    """10^exponent (a whole number) as the correctly rounded double, parsed from text."""
    return p.let(
        f"CASE WHEN {exponent} IS NOT NULL "
        f"THEN CAST(CONCAT('1e', CAST({exponent} AS VARCHAR)) AS DOUBLE) END",
        exponent,
    )


@dataclass(frozen=True)
class _Grid:
    """A decimal grid's fast-path arithmetic as SQL expressions (:class:`FastPath`): the points
    ``(a + n b) * scale`` where ``multiply`` holds, else ``(a + n b) / scale`` (``scale`` an
    exact power of ten, so each point is one rounding), for values of size below ``limit``."""

    width: str
    origin: str
    a: str
    b: str
    scale: str
    multiply: str
    limit: str

    @classmethod
    def of(cls, width: float, origin: float = 0.0) -> _Grid:
        fast = DecimalGrid.of(width, origin).fast_path()
        multiply = fast.down == 1.0
        return cls(
            _number(fast.width),
            _number(fast.origin),
            _number(fast.a),
            _number(fast.b),
            _number(fast.up if multiply else fast.down),
            "TRUE" if multiply else "FALSE",
            _number(fast.limit),
        )

    def point(self, p: _Program, numerator: str) -> str:
        if self.multiply in ("TRUE", "FALSE"):
            operator = "*" if self.multiply == "TRUE" else "/"
            return p.let(f"{numerator} {operator} {self.scale}", numerator)
        return p.let(
            f"CASE WHEN {self.multiply} THEN {numerator} * {self.scale} "
            f"ELSE {numerator} / {self.scale} END",
            numerator,
            self.multiply,
            self.scale,
        )


@dataclass(frozen=True)
class _Cell:
    """A value's cell ``[low, high)`` on a grid, its numerator ``a + n b`` (a number per cell),
    and a flag for values the fast path cannot settle (beyond its limit)."""

    numerator: str
    low: str
    high: str
    beyond: str


def _cell(p: _Program, v: str, grid: _Grid) -> _Cell:
    """The cell of ``v`` as the fast path of :mod:`deid_core.masking.decimal_grid` finds it:
    from the estimate ``e = floor((v - origin) / width) * b + a``, which is off by at most 4
    widths, the points ``e + j b`` for ``j = -_WALK .. _WALK``; the lower end of the cell is
    the last of them at or below ``v`` (points grow with ``j``, so it is ``e + (count - 1 -
    _WALK) b`` for ``count`` of them at or below ``v``). Each point depends on the estimate only,
    never on another point, so the SQL grows linearly however the engine inlines it."""
    quotient = p.let(f"({v} - {grid.origin}) / {grid.width}", v, grid.width)
    whole = _floor(p, quotient)
    estimate = p.let(f"{whole} * {grid.b} + {grid.a}", whole)
    points = [
        grid.point(p, p.let(f"{estimate} + {j} * {grid.b}", estimate))
        for j in range(-_WALK, _WALK + 1)
    ]
    below = " + ".join(f"CASE WHEN {point} <= {v} THEN 1 ELSE 0 END" for point in points)
    numerator = p.let(f"{estimate} + ({below} - {_WALK + 1}) * {grid.b}", estimate, v, *points)
    low = grid.point(p, numerator)
    high = grid.point(p, p.let(f"{numerator} + {grid.b}", numerator))
    beyond = p.let(
        f"{v} IS NOT NULL AND NOT (ABS({v}) < {grid.limit} AND {low} <= {v} AND {v} < {high})",
        v,
        grid.limit,
        low,
        high,
    )
    return _Cell(numerator, low, high, beyond)


def _nearest(p: _Program, magnitude: str, grid: _Grid, cell: _Cell) -> str:
    """The nearest grid point to ``magnitude``: itself when on the grid, else the upper point
    from the half-way point ``fl(a + (n + 1/2) b) * scale`` on, else the lower."""
    twice = grid.point(p, p.let(f"2 * {cell.numerator} + {grid.b}", cell.numerator))
    middle = p.let(f"{twice} / 2", twice)
    return p.let(
        f"CASE WHEN {cell.low} <> {magnitude} AND {magnitude} >= {middle} THEN {cell.high} "
        f"ELSE {cell.low} END",
        cell.low,
        cell.high,
        magnitude,
        middle,
    )


@dataclass(frozen=True)
class _Value:
    """A key column's value so far (a column of the program), its kind, and the columns that
    flag values a step could not read."""

    name: str
    kind: str
    unreadable: tuple[str, ...] = ()
    #: The released values are not computed, only their partition (interval numbers, year
    #: and month as one number): no step may follow.
    partition_only: bool = False


def _read(p: _Program, column: str, kind: str) -> _Value:
    """The column by the engines' reading rule (module docstring)."""
    name = _identifier(column)
    if kind == "text":
        trimmed = p.let(f"TRIM({name}, {_text(TRIMMED)})", name)
        markers = ", ".join(_text(m) for m in MISSING_MARKERS)
        return _Value(p.let(f"CASE WHEN {trimmed} IN ({markers}) THEN NULL ELSE {trimmed} END",
                            trimmed), kind)  # fmt: skip
    if kind == "float":
        return _Value(_finite(p, p.let(f"CAST({name} AS DOUBLE)", name)), kind)
    if kind == "boolean":
        return _Value(p.let(f"CAST({name} AS INTEGER)", name), "integer")
    return _Value(p.let(name, name), kind)


def _as_number(p: _Program, value: _Value, step: MaskingStep) -> _Value:
    """The value as a double; text that is not a number counts as unreadable."""
    if value.kind in ("integer", "float"):
        return _Value(p.let(f"CAST({value.name} AS DOUBLE)", value.name), "float", value.unreadable)
    if value.kind == "text":
        number = _finite(p, p.let(f"TRY_CAST({value.name} AS DOUBLE)", value.name))
        bad = p.let(f"{value.name} IS NOT NULL AND {number} IS NULL", value.name, number)
        return _Value(number, "float", (*value.unreadable, bad))
    raise RecipeError(f"{step.label} needs a numeric column, but '{step.column}' is not numeric.")


def _compile(p: _Program, step: MaskingStep, value: _Value) -> _Value:
    """The value after ``step`` (module docstring)."""
    if value.partition_only:
        raise RecipeError(
            f"In the SQL engines interval grouping and dates to year-month must be the last "
            f"step of '{step.column}'; run this recipe with --engine memory."
        )
    if isinstance(step, (AbsoluteRound, Truncate)):
        number = _as_number(p, value, step)
        magnitude = p.let(f"ABS({number.name})", number.name)
        grid = _Grid.of(step.effective_base)
        cell = _cell(p, magnitude, grid)
        if isinstance(step, AbsoluteRound):
            released = _nearest(p, magnitude, grid, cell)
        else:
            released = cell.low
        signed = _signed(p, number.name, released)
        return _Value(signed, "float", (*number.unreadable, cell.beyond))
    if isinstance(step, RelativeRound):
        number = _as_number(p, value, step)
        x = number.name
        size = p.let(f"NULLIF(ABS({x}), 0)", x)
        guess = p.let(f"CAST(FLOOR(LOG10({size})) AS BIGINT)", size)
        above = _power_of_ten(p, p.let(f"{guess} + 1", guess))
        at = _power_of_ten(p, guess)
        decade = p.let(
            f"{guess} + CASE WHEN {size} >= {above} THEN 1 WHEN {size} < {at} THEN -1 ELSE 0 END",
            guess,
            size,
            above,
            at,
        )
        exponent = p.let(f"{decade} - {step.digits - 1}", decade)
        # Grids beyond 10^+-22 have no fast path: their values are refused below.
        bounded = p.let(f"GREATEST(LEAST({exponent}, {_EXACT_POWERS}), -{_EXACT_POWERS})", exponent)
        width = _power_of_ten(p, bounded)
        scale = _power_of_ten(p, p.let(f"ABS({bounded})", bounded))
        multiply = p.let(f"{bounded} >= 0", bounded)
        zero, one = _number(0.0), _number(1.0)
        # Inside the exact powers the points stay below 2^52 widths (digits <= 15): no limit.
        grid = _Grid(width, zero, zero, one, scale, multiply, f"CAST({_LARGEST} AS DOUBLE)")
        cell = _cell(p, size, grid)
        nearest = _nearest(p, size, grid, cell)
        rounded = p.let(
            f"CASE WHEN {x} = 0 THEN CAST(0 AS DOUBLE) ELSE SIGN({x}) * {nearest} END",
            x,
            nearest,
        )
        beyond = p.let(
            f"{cell.beyond} OR ({size} IS NOT NULL AND ABS({exponent}) > {_EXACT_POWERS})",
            cell.beyond,
            size,
            exponent,
        )
        return _Value(rounded, "float", (*number.unreadable, beyond))
    if isinstance(step, IntervalGroup):
        number = _as_number(p, value, step)
        x = number.name
        if step.width is not None:
            cell = _cell(p, x, _Grid.of(step.width, step.origin))
            return _Value(cell.numerator, "float", (*number.unreadable, cell.beyond),
                          partition_only=True)  # fmt: skip
        cuts = " ".join(
            f"WHEN {x} < {_number(cut)} THEN {i}" for i, cut in enumerate(step.breaks or ())
        )
        index = p.let(
            f"CAST(CASE WHEN {x} IS NULL THEN NULL {cuts} ELSE {len(step.breaks or ())} END "
            "AS DOUBLE)",
            x,
        )
        return _Value(index, "float", number.unreadable, partition_only=True)
    if isinstance(step, TopBottomCode):
        number = _as_number(p, value, step)
        x = number.name
        cases = []
        if step.top is not None:
            cases.append(f"WHEN {x} > {_number(step.top)} THEN {_number(step.top)}")
        if step.bottom is not None:
            cases.append(f"WHEN {x} < {_number(step.bottom)} THEN {_number(step.bottom)}")
        return _Value(p.let(f"CASE {' '.join(cases)} ELSE {x} END", x), "float",
                      number.unreadable)  # fmt: skip
    if isinstance(step, MergeLevels):
        text = value.name
        if value.kind != "text":
            text = p.let(f"CAST({value.name} AS VARCHAR)", value.name)
        cases = " ".join(
            f"WHEN {text} IN ({', '.join(_text(level) for level in levels)}) THEN {_text(label)}"
            for label, levels in step.groups
        )
        return _Value(p.let(f"CASE {cases} ELSE {text} END", text), "text", value.unreadable)
    if isinstance(step, DateReduce):
        unreadable = value.unreadable
        if value.kind in ("date", "timestamp"):
            moment = value.name
        elif value.kind == "text":
            moment = p.let(f"TRY_CAST({value.name} AS TIMESTAMP)", value.name)
            bad = p.let(f"{value.name} IS NOT NULL AND {moment} IS NULL", value.name, moment)
            unreadable = (*unreadable, bad)
        else:
            raise RecipeError(f"{step.label}: '{step.column}' holds no dates.")
        if step.to == "year":
            return _Value(p.let(f"YEAR({moment})", moment), "integer", unreadable)
        if step.to != "year-month":
            raise RecipeError(
                f"{step.label} of '{step.column}' to the {step.to} runs in memory only "
                "(--engine memory); the SQL engines reduce dates to the year or month."
            )
        return _Value(p.let(f"YEAR({moment}) * 100 + MONTH({moment})", moment), "integer",
                      unreadable, partition_only=True)  # fmt: skip
    raise RecipeError(
        f"{step.label} of '{step.column}' needs the records, so it runs in memory only "
        "(--engine memory); the SQL engines run rounding, truncation, interval grouping, "
        "top/bottom coding, merging levels and dates to year or month."
    )


@dataclass(frozen=True)
class CrossTabQuery:
    """The cross-tabulation of ``keys`` after their ``steps`` (in recipe order, per key), with
    record counts and, given a ``weight`` column, weight sums and the weights' checks."""

    keys: tuple[str, ...]
    steps: Mapping[str, tuple[MaskingStep, ...]]
    weight: str | None = None

    def unreadable_columns(self) -> list[str]:
        """Names of the per-key counts of unreadable values, in key order."""
        return [f"unreadable_{i}" for i in range(len(self.keys))]

    def sql(self, kinds: Mapping[str, str], source: str) -> str:
        """The query in DuckDB's dialect over the relation ``source``; ``kinds`` gives each
        column's kind (:data:`KINDS`)."""
        p = _Program()
        finals, counted = [], []
        for i, key in enumerate(self.keys):
            value = _read(p, key, kinds[key])
            for step in self.steps.get(key, ()):
                value = _compile(p, step, value)
            test = " OR ".join(value.unreadable) or "FALSE"
            flag = p.let(f"CASE WHEN {test} THEN 1 ELSE 0 END", *value.unreadable)
            finals.append(f"{value.name} AS k{i}")
            counted.append(f"SUM({flag}) AS unreadable_{i}")
        if self.weight is not None:
            if kinds[self.weight] not in ("integer", "float"):
                raise RecipeError(f"The weight column '{self.weight}' must be numeric.")
            name = _identifier(self.weight)
            w = p.let(f"CAST({name} AS DOUBLE)", name)
            counted += [
                f"SUM({w}) AS {WEIGHT_SUM}",
                f"SUM(CASE WHEN {w} IS NULL OR ISNAN({w}) THEN 1 ELSE 0 END) AS {WEIGHT_MISSING}",
                f"SUM(CASE WHEN {w} > 0 AND {w} <= CAST({_LARGEST} AS DOUBLE) THEN 0 ELSE 1 END) "
                f"AS {WEIGHT_INVALID}",
            ]
        columns = ", ".join([*finals, f"COUNT(*) AS {RECORDS}", *counted])
        query = f"SELECT {columns} FROM {p.select(source)}"
        if finals:
            query += " GROUP BY " + ", ".join(final.split(" AS ")[0] for final in finals)
        return query


def render(sql: str, dialect: str) -> str:
    """The DuckDB-dialect query in ``dialect`` ("duckdb": as written; "spark": transpiled by
    SQLGlot)."""
    if dialect == "duckdb":
        return sql
    import sqlglot

    return sqlglot.transpile(sql, read="duckdb", write=dialect)[0]


def crosstab_query(
    keys: Sequence[str], steps: Mapping[str, Sequence[MaskingStep]], weight: str | None
) -> CrossTabQuery:
    """The query for ``keys`` with the steps of each (non-key columns' steps are ignored)."""
    return CrossTabQuery(
        keys=tuple(keys),
        steps={k: tuple(steps.get(k, ())) for k in keys},
        weight=weight,
    )
