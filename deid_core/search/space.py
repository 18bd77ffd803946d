"""The search space: for each searched column, the masking settings a user would consider.

A *setting* is a tuple of column steps (the empty tuple releases the column as it is); a
column's settings are listed from the finest (usually "as it is") to the coarsest. A recipe of
the space picks one setting per column; the space holds ``prod(len(settings))`` recipes. A
*suppression limit* (ARX's) lets each recipe remove up to that share of the records, those in
classes too small for the threshold (:class:`~deid_core.masking.RecordSuppression`).

:func:`default_space` proposes settings from the data, keeping only those that change the data
and that differ from each other on it (six identical roundings of whole numbers are one
setting):

- numbers: interval grouping (midpoints, so the model still reads numbers) with nested widths
  (each a multiple of the one before: 1-2-4 and 1-5-10 chains of :func:`nice_widths`), whose
  partitions grow coarser one from the next, so the search can prune them (see
  :mod:`deid_core.search.search`); for numbers with decimals, truncation to fewer decimals first;
- categories with at most :data:`MAX_MERGE_LEVELS` levels: all levels merged into one (the
  column no longer tells records apart).

Every column's settings can be replaced (:meth:`SearchSpace.with_settings`), with any column
steps, random ones included; the space is data (it serialises to JSON) like a recipe.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from deid_core.errors import RecipeError
from deid_core.masking import (
    IntervalGroup,
    MaskingStep,
    MergeLevels,
    TopBottomCode,
    Truncate,
    step_from_dict,
)
from deid_core.masking.grouping import nice_widths
from deid_core.recipe import Recipe

#: The most settings a default column gets (the first is "as it is").
DEFAULT_SETTINGS_PER_COLUMN = 6
#: The most recipes one search may hold (a bound on the work a request can ask for).
MAX_RECIPES = 20_000
#: Categorical columns with at most this many levels get "all levels merged" by default.
MAX_MERGE_LEVELS = 50

Setting = tuple[MaskingStep, ...]


def setting_label(setting: Setting) -> str:
    """A setting in a few words: each step's description without its column, or "as is"."""
    if not setting:
        return "as is"
    parts = []
    for step in setting:
        text = step.describe()
        prefix = f"{step.column}: "
        parts.append(text[len(prefix) :] if text.startswith(prefix) else text)
    return "; ".join(parts)


@dataclass(frozen=True)
class ColumnSettings:
    """The settings tried for one column, finest first (the empty tuple: as it is)."""

    column: str
    settings: tuple[Setting, ...]

    def __post_init__(self) -> None:
        settings = tuple(tuple(s) for s in self.settings)
        object.__setattr__(self, "settings", settings)
        if not isinstance(self.column, str) or not self.column:
            raise RecipeError("Search space: each column needs a name.")
        if not settings:
            raise RecipeError(f"Search space: '{self.column}' needs at least one setting.")
        for setting in settings:
            for step in setting:
                if not isinstance(step, MaskingStep) or step.column != self.column:
                    raise RecipeError(
                        f"Search space: every setting of '{self.column}' must be column steps "
                        "of that column."
                    )
        keys = [_setting_key(s) for s in settings]
        if len(set(keys)) != len(keys):
            raise RecipeError(f"Search space: '{self.column}' lists a setting twice.")

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(setting_label(s) for s in self.settings)


def _setting_key(setting: Setting) -> str:
    return json.dumps([step.to_dict() for step in setting], sort_keys=True, default=str)


@dataclass(frozen=True)
class SearchSpace:
    """Searched columns with their settings, and the suppression limit (a share of the
    records, 0..1; 0 removes none)."""

    columns: tuple[ColumnSettings, ...]
    suppression_limit: float = 0.0
    notes: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        if not self.columns:
            raise RecipeError("Search space: give at least one column to search.")
        names = [c.column for c in self.columns]
        if len(set(names)) != len(names):
            raise RecipeError("Search space: a column is listed twice.")
        limit = self.suppression_limit
        if (
            isinstance(limit, bool)
            or not isinstance(limit, (int, float))
            or not math.isfinite(limit)
            or not 0 <= limit <= 1
        ):
            raise RecipeError("Search space: the suppression limit is a share from 0 to 1.")
        if self.size > MAX_RECIPES:
            raise RecipeError(
                f"Search space: {self.size:,} recipes is more than {MAX_RECIPES:,}; give fewer "
                "settings per column."
            )

    @property
    def size(self) -> int:
        """The number of recipes in the space."""
        return math.prod(len(c.settings) for c in self.columns)

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.column for c in self.columns)

    def settings_of(self, column: str) -> ColumnSettings:
        for settings in self.columns:
            if settings.column == column:
                return settings
        raise RecipeError(f"Search space: '{column}' is not searched.")

    def with_settings(self, column: str, settings: Sequence[Setting]) -> SearchSpace:
        """The space with ``column``'s settings replaced (added when it was not searched)."""
        new = ColumnSettings(column, tuple(settings))
        columns = [new if c.column == column else c for c in self.columns]
        if column not in self.column_names:
            columns.append(new)
        return SearchSpace(tuple(columns), self.suppression_limit)

    def with_suppression_limit(self, limit: float) -> SearchSpace:
        return SearchSpace(self.columns, limit)

    def recipe(self, base: Recipe, choice: Sequence[int]) -> Recipe:
        """``base`` with each searched column's steps replaced by the chosen setting (one
        index per column) and without whole-data steps (the search adds suppression)."""
        recipe = base.with_data_steps(())
        for settings, index in zip(self.columns, choice, strict=True):
            recipe = recipe.with_steps_for(settings.column, settings.settings[index])
        return recipe

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": {
                c.column: [[step.to_dict() for step in s] for s in c.settings] for c in self.columns
            },
            "suppression_limit": self.suppression_limit,
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SearchSpace:
        """The space from its JSON form: ``{"columns": {COLUMN: [[step, ...], ...]},
        "suppression_limit": 0.05}``."""
        if not isinstance(data, Mapping) or not isinstance(data.get("columns"), Mapping):
            raise RecipeError(
                "A search space is an object with 'columns' (each column's list of settings, "
                "a setting being a list of steps)."
            )
        unknown = set(data) - {"columns", "suppression_limit"}
        if unknown:
            raise RecipeError(f"Search space: unknown field(s) {', '.join(sorted(unknown))}.")
        columns = []
        for column, settings in data["columns"].items():
            if not isinstance(settings, list) or not all(isinstance(s, list) for s in settings):
                raise RecipeError(
                    f"Search space: the settings of '{column}' must be a list of lists of steps."
                )
            columns.append(
                ColumnSettings(
                    str(column), tuple(tuple(step_from_dict(d) for d in s) for s in settings)
                )
            )
        return cls(tuple(columns), data.get("suppression_limit", 0.0))


def _numbers(series: pd.Series) -> np.ndarray | None:
    """The finite numbers of a numeric (not boolean) column, else None."""
    if not pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series):
        return None
    values = series.to_numpy(dtype=float, na_value=np.nan)
    return values[np.isfinite(values)]


def _nested_widths(series: pd.Series) -> list[float]:
    """Interval widths from :func:`nice_widths`, finest first, each a whole multiple of the one
    before it (so each grouping coarsens the one before): the longest such chain that ends at
    the widest width."""
    widths = nice_widths(series)
    chain = [widths[-1]]
    for width in reversed(widths[:-1]):
        ratio = chain[-1] / width
        if abs(ratio - round(ratio)) < 1e-9:
            chain.append(width)
    return chain[::-1]


def _tail_cuts(numbers: np.ndarray) -> tuple[float | None, float | None]:
    """Bottom and top coding cuts for the coarsest setting: the 5th and 95th percentiles to two
    significant digits (None where a cut changes nothing or would cross the other)."""
    low, high = float(numbers.min()), float(numbers.max())
    bottom = float(f"{float(np.quantile(numbers, 0.05)):.2g}")
    top = float(f"{float(np.quantile(numbers, 0.95)):.2g}")
    bottom_cut = bottom if low < bottom < high else None
    top_cut = top if low < top < high and (bottom_cut is None or top > bottom_cut) else None
    return bottom_cut, top_cut


def _changes(series: pd.Series, setting: Setting) -> pd.Series | None:
    """The column after ``setting``'s steps, or None when a step cannot mask it."""
    try:
        for step in setting:
            series = step.apply(series)
    except (RecipeError, ValueError, TypeError):
        return None
    return series


def default_settings(series: pd.Series, count: int = DEFAULT_SETTINGS_PER_COLUMN) -> list[Setting]:
    """Settings for one column, finest first: as it is, then at most ``count - 1`` of the
    candidates of the module notes that change the data and group it differently from each
    other, spread from the finest to the coarsest (which is always kept)."""
    column = str(series.name)
    distinct = pd.Series(series.dropna().unique(), name=column)
    candidates: list[Setting] = []
    numbers = _numbers(series)
    if numbers is not None and numbers.size:
        whole = bool(np.all(numbers == np.round(numbers)))
        if not whole:
            candidates += [(Truncate(column, decimals=d),) for d in (2, 1, 0)]
        widths = [w for w in _nested_widths(distinct) if not whole or w > 1]
        candidates += [(IntervalGroup(column, width=w),) for w in widths]
        bottom, top = _tail_cuts(numbers) if widths else (None, None)
        if bottom is not None or top is not None:
            candidates.append(
                (
                    TopBottomCode(column, top=top, bottom=bottom),
                    IntervalGroup(column, width=widths[-1]),
                )
            )
    elif 1 < distinct.size <= MAX_MERGE_LEVELS:
        labels = tuple(str(v) for v in distinct)
        candidates.append((MergeLevels(column, groups={"all": list(labels)}),))
    seen = {_partition_signature(distinct)}
    found: list[tuple[int, Setting]] = []
    for setting in candidates:
        masked = _changes(distinct, setting)
        if masked is None:
            continue
        signature = _partition_signature(masked)
        if signature in seen:
            continue
        seen.add(signature)
        found.append((int(masked.nunique(dropna=False)), setting))
    found.sort(key=lambda item: -item[0])  # finest (most released values) first
    keep = count - 1
    if len(found) > keep > 0:
        picks = np.unique(np.round(np.linspace(0, len(found) - 1, keep)).astype(int))
        found = [found[i] for i in picks]
    return [(), *(setting for _, setting in found[: max(keep, 0)])]


def _partition_signature(values: pd.Series) -> bytes:
    """How a setting groups the distinct values (codes in order of appearance): two settings
    with the same signature release the same classes."""
    codes, _ = pd.factorize(values, use_na_sentinel=False)
    return codes.astype(np.int64).tobytes()


def default_space(
    data: pd.DataFrame,
    recipe: Recipe,
    columns: Sequence[str] | None = None,
    count: int = DEFAULT_SETTINGS_PER_COLUMN,
    suppression_limit: float = 0.0,
) -> SearchSpace:
    """The default space: ``columns`` (default: the quasi-identifiers, then the exposure), each
    with :func:`default_settings` (at most ``count``)."""
    roles = recipe.roles
    names = list(columns) if columns is not None else list(roles.quasi_identifiers)
    if columns is None and roles.exposure and roles.exposure not in names:
        names.append(roles.exposure)
    if not names:
        raise RecipeError("Search: choose quasi-identifiers (and an exposure) to search.")
    missing = [c for c in names if c not in data.columns]
    if missing:
        raise RecipeError(f"Search: the data have no column '{missing[0]}'.")
    settings = tuple(ColumnSettings(c, tuple(default_settings(data[c], count))) for c in names)
    return SearchSpace(settings, suppression_limit)
