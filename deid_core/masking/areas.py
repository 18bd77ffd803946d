"""Aggregation of individual records to areas: the first step of two-step spatial smoothing.

Zhou, Dominici & Louis ("A smoothing approach for masking spatial data", Annals of Applied
Statistics, 2010) mask spatial data in two ways. In their simulations they partition the study
area into equal square cells and replace the records of cell ``j`` by the cell means
``X_j = sum_{i in j} X_i / n_j`` and ``Y_j = sum_{i in j} Y_i / n_j``, with ``n_j`` the number of
records in the cell (section 3). In the Medicare analysis, where only the zip code of each
person is known, they first aggregate the persons to zip codes (death counts, person-years, the
share of each race, age group and sex, and the death rate) and then smooth the zip-code table
with a kernel in the zip-code centroids (section 4).

:func:`grid_areas` assigns records to equal cells; :func:`aggregate_to_areas` builds the area
table; :func:`deid_core.utility.area_level.area_level_data` moves the collaborator's analysis
(roles and model) to that table. For an area ``j`` with records ``i = 1..n_j`` the table holds:

- ``n``: the number of records ``n_j``;
- for each count column ``c`` (an event indicator or an event count): the sum
  ``c_j = sum_i c_i`` (named ``c``) and the proportion ``c_j / n_j`` (named ``c_proportion``;
  for a 0/1 column the share of records with the event, for a count the mean count);
- for each mean column ``v``: the mean ``sum_i v_i / n_j`` (named ``v_mean``);
- with a person-time column ``t``: its sum ``t_j`` (named ``t``) and, for each count column,
  the rate ``c_j / t_j`` (named ``c_rate``);
- for each coordinate column: the mean of the records' coordinates (the centroid, under the
  coordinate's own name, so that a smoothing step can use the same location columns).

Missing values are refused rather than dropped: a record without an area cannot be placed, and
dropping a missing count would silently change ``n_j`` against the sum. Drop or impute them
before aggregating. The input frame is never modified.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from deid_core.errors import DataError

AREA_SIZE = "n"
"""Name of the column holding the number of records of each area."""

PROPORTION_SUFFIX = "_proportion"
MEAN_SUFFIX = "_mean"
RATE_SUFFIX = "_rate"


@dataclass(frozen=True)
class AreaTable:
    """Records aggregated to areas: one row per area, in order of first appearance.

    ``table`` has the columns ``area``, ``n``, then per count column its sum and proportion,
    per mean column its mean, the person-time sum and the rates, and the centroid coordinates
    (see the module docstring for the formulas and names).
    """

    table: pd.DataFrame
    area: str
    coordinates: tuple[str, ...] = ()
    count_columns: tuple[str, ...] = ()
    mean_columns: tuple[str, ...] = ()
    person_time: str | None = None
    n_records: int = 0

    def __post_init__(self) -> None:
        repeated = sorted({c for c in self.columns if self.columns.count(c) > 1})
        if repeated:
            raise DataError(
                f"The area table would have two columns named {', '.join(map(repr, repeated))}; "
                "rename the input columns."
            )
        missing = [c for c in self.columns if c not in self.table.columns]
        if missing:
            raise DataError(f"The area table lacks the columns {', '.join(missing)}.")
        if not self.table[self.area].is_unique:
            raise DataError(f"The area table has more than one row for some '{self.area}'.")
        if self.n_records != int(self.table[AREA_SIZE].sum()):
            raise DataError("The area table's record count does not match its areas' sizes.")

    @property
    def value_columns(self) -> tuple[str, ...]:
        """The aggregated values (everything but the area id and the coordinates): the columns
        a smoothing step averages."""
        columns: list[str] = [AREA_SIZE]
        for column in self.count_columns:
            columns += [column, column + PROPORTION_SUFFIX]
        columns += [column + MEAN_SUFFIX for column in self.mean_columns]
        if self.person_time is not None:
            columns.append(self.person_time)
            columns += [column + RATE_SUFFIX for column in self.count_columns]
        return tuple(columns)

    @property
    def columns(self) -> tuple[str, ...]:
        """All columns of :attr:`table`, in order."""
        return (self.area, *self.value_columns, *self.coordinates)

    @property
    def n_areas(self) -> int:
        return len(self.table)

    def __str__(self) -> str:
        sizes = self.table[AREA_SIZE]
        lines = [
            f"{self.n_records:,} records in {self.n_areas:,} areas by '{self.area}' "
            f"(records per area: min {sizes.min():,}, median {sizes.median():g}, "
            f"max {sizes.max():,})."
        ]
        if self.count_columns:
            lines.append("Counts (sum and proportion of records): " + ", ".join(self.count_columns))
        if self.mean_columns:
            lines.append("Means: " + ", ".join(self.mean_columns))
        if self.person_time is not None:
            lines.append(f"Person-time: {self.person_time} (sum; rates = count / person-time)")
        if self.coordinates:
            lines.append("Centroid of: " + ", ".join(self.coordinates))
        return "\n".join(lines)


def aggregate_to_areas(
    df: pd.DataFrame,
    area: str,
    *,
    coordinates: Sequence[str] = (),
    count_columns: Sequence[str] = (),
    mean_columns: Sequence[str] = (),
    person_time: str | None = None,
) -> AreaTable:
    """Aggregate the records of ``df`` to the areas named in column ``area``.

    ``count_columns`` are summed (with their proportion of records and, given ``person_time``,
    their rate per unit of person-time), ``mean_columns`` averaged, ``coordinates`` averaged to
    the centroid. All of them must be numeric (booleans count as 0/1) and finite, counts and
    person-time non-negative, and each area's person-time positive.

    Raises DataError for an empty frame, an unknown, repeated or missing column, a missing
    value, a non-numeric or negative value where it is not allowed, or an output name that two
    inputs would share.
    """
    coordinates, count_columns, mean_columns = (
        tuple(coordinates),
        tuple(count_columns),
        tuple(mean_columns),
    )
    if df.empty:
        raise DataError("There are no records to aggregate.")
    timed = (person_time,) if person_time is not None else ()
    named = (area, *coordinates, *count_columns, *mean_columns, *timed)
    _check_columns(df, named)
    if df[area].isna().any():
        raise DataError(
            f"{int(df[area].isna().sum()):,} records have no value in the area column '{area}'; "
            "assign them to an area or drop them first."
        )
    values = {c: _numeric(df[c], c) for c in named[1:]}
    for column in (*count_columns, *timed):
        if (values[column] < 0).any():
            raise DataError(f"The column '{column}' must not be negative (counts, person-time).")

    frame = pd.DataFrame(values, index=df.index)
    grouped = frame.groupby(df[area].to_numpy(), sort=False)
    sums = grouped.sum()
    means = grouped.mean()
    out = pd.DataFrame({area: sums.index, AREA_SIZE: grouped.size().to_numpy()})
    for column in count_columns:
        whole = pd.api.types.is_integer_dtype(df[column]) or pd.api.types.is_bool_dtype(df[column])
        out[column] = sums[column].to_numpy().astype("int64" if whole else float)
        out[column + PROPORTION_SUFFIX] = out[column] / out[AREA_SIZE]
    for column in mean_columns:
        out[column + MEAN_SUFFIX] = means[column].to_numpy()
    if person_time is not None:
        out[person_time] = sums[person_time].to_numpy()
        if (out[person_time] <= 0).any():
            raise DataError(
                f"Some areas have no person-time in '{person_time}', so their rates are "
                "undefined; merge them with a neighbour or drop them."
            )
        for column in count_columns:
            out[column + RATE_SUFFIX] = out[column] / out[person_time]
    for column in coordinates:
        out[column] = means[column].to_numpy()
    return AreaTable(
        table=out,
        area=area,
        coordinates=coordinates,
        count_columns=count_columns,
        mean_columns=mean_columns,
        person_time=person_time,
        n_records=len(df),
    )


def grid_areas(
    df: pd.DataFrame,
    x: str,
    y: str,
    cells_per_side: int,
    *,
    bounds: tuple[float, float, float, float] | None = None,
) -> pd.Series:
    """Assign each record to one of ``cells_per_side``^2 equal cells of the study area.

    The study area is ``bounds = (x_min, x_max, y_min, y_max)``, by default the range of the
    records' coordinates. With ``k = cells_per_side``, column ``floor(k (x - x_min) / (x_max -
    x_min))`` and row ``floor(k (y - y_min) / (y_max - y_min))`` (both capped at ``k - 1``, so
    the upper edges belong to the last cells, and 0 when the range is a point), a record's cell
    is ``row x k + column``: 0 in the lower left corner, ``k^2 - 1`` in the upper right.

    Returns an int64 Series named ``"cell"`` with the index of ``df``. Raises DataError for an
    empty frame, missing or non-numeric coordinates, ``cells_per_side < 1``, empty bounds or a
    record outside them.
    """
    if isinstance(cells_per_side, bool) or not isinstance(cells_per_side, int | np.integer):
        raise DataError("cells_per_side must be a whole number.")
    if cells_per_side < 1:
        raise DataError("cells_per_side must be at least 1.")
    if df.empty:
        raise DataError("There are no records to assign to cells.")
    _check_columns(df, (x, y))
    xs, ys = _numeric(df[x], x), _numeric(df[y], y)
    if bounds is None:
        bounds = (xs.min(), xs.max(), ys.min(), ys.max())
    x_min, x_max, y_min, y_max = (float(b) for b in bounds)
    if not (x_min <= x_max and y_min <= y_max):
        raise DataError("The grid bounds must be (x_min, x_max, y_min, y_max) with min <= max.")
    outside = (xs < x_min) | (xs > x_max) | (ys < y_min) | (ys > y_max)
    if outside.any():
        raise DataError(f"{int(outside.sum()):,} records lie outside the grid bounds.")
    column = _cell_index(xs, x_min, x_max, cells_per_side)
    row = _cell_index(ys, y_min, y_max, cells_per_side)
    return pd.Series(row * cells_per_side + column, index=df.index, name="cell", dtype="int64")


def _cell_index(values: np.ndarray, low: float, high: float, cells: int) -> np.ndarray:
    """Index 0..cells-1 of the equal interval of [low, high] holding each value."""
    if high == low:
        return np.zeros(len(values), dtype="int64")
    return np.minimum(np.floor(cells * (values - low) / (high - low)), cells - 1).astype("int64")


def _check_columns(df: pd.DataFrame, names: Sequence[str]) -> None:
    """Every name is a column of ``df`` and appears only once among ``names``."""
    unknown = [name for name in names if name not in df.columns]
    if unknown:
        raise DataError(f"There is no column {', '.join(map(repr, unknown))} in the data.")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise DataError(
            f"The column(s) {', '.join(map(repr, repeated))} were named more than once; give each "
            "column one role."
        )


def _numeric(column: pd.Series, name: str) -> np.ndarray:
    """A complete, finite numeric (or boolean) column as floats."""
    if not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)):
        raise DataError(f"The column '{name}' must be numeric to be aggregated.")
    values = column.to_numpy(dtype=float, na_value=np.nan)
    if np.isnan(values).any():
        raise DataError(
            f"The column '{name}' has {int(np.isnan(values).sum()):,} missing values; drop or "
            "impute them before aggregating."
        )
    if not np.isfinite(values).all():
        raise DataError(f"The column '{name}' has infinite values.")
    return values
