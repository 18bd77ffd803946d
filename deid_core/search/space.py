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
  column no longer tells records apart);
- dates (text or datetimes): the ISO week, the month, the quarter, the year (El Emam &
  Malin: generalisation applied "differently to dates and zip codes");
- 5-digit ZIP codes: their first 4 and 3 digits, and Safe Harbor's 3 digits (restricted
  prefixes as 000); other codes (ICD-10, ATC: text of letters and digits with more than
  :data:`MAX_MERGE_LEVELS` values): their prefixes along the code's hierarchy, and ICD-10's
  chapters;
- a column the base recipe generalises along a hierarchy file (ARX's format,
  :class:`~deid_core.masking.HierarchyLevel`): every level of that hierarchy, from 0 (as it
  is) up, in place of the proposals above (the user's hierarchy is the column's own
  structure; its levels only merge classes, so the search can prune them too).

With ``keep_data_steps`` the space keeps the base recipe's whole-data steps (local
suppression, dates relative to each person, ages...) in every recipe it holds, instead of
dropping them; the columns they write are not searched by default (their steps already shape
them).

Every column's settings can be replaced (:meth:`SearchSpace.with_settings`), with any column
steps, random ones included; the space is data (it serialises to JSON) like a recipe.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from deid_core.errors import RecipeError
from deid_core.masking import (
    CodePrefix,
    DateReduce,
    HierarchyLevel,
    Icd10Chapter,
    IntervalGroup,
    MaskingStep,
    MergeLevels,
    TopBottomCode,
    Truncate,
    ZipToThreeDigits,
    step_from_dict,
)
from deid_core.masking.categorical import DATE_PRECISIONS
from deid_core.masking.codes import icd10_chapters
from deid_core.masking.geography import zip_text
from deid_core.masking.grouping import nice_widths
from deid_core.recipe import Recipe
from deid_core.search.limits import DEFAULT_SETTINGS_PER_COLUMN

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
    keep_data_steps: bool = False

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
        if not isinstance(self.keep_data_steps, bool):
            raise RecipeError("Search space: 'keep_data_steps' must be true or false.")
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
        return SearchSpace(
            tuple(columns), self.suppression_limit, keep_data_steps=self.keep_data_steps
        )

    def with_suppression_limit(self, limit: float) -> SearchSpace:
        return SearchSpace(self.columns, limit, keep_data_steps=self.keep_data_steps)

    def keeping_data_steps(self, keep: bool = True) -> SearchSpace:
        """The same space, keeping (or not) the base recipe's whole-data steps."""
        return SearchSpace(self.columns, self.suppression_limit, keep_data_steps=keep)

    def recipe(self, base: Recipe, choice: Sequence[int]) -> Recipe:
        """``base`` with each searched column's steps replaced by the chosen setting (one
        index per column), with ``base``'s whole-data steps when the space keeps them, else
        without (the search adds record suppression when its limit allows)."""
        recipe = base if self.keep_data_steps else base.with_data_steps(())
        for settings, index in zip(self.columns, choice, strict=True):
            recipe = recipe.with_steps_for(settings.column, settings.settings[index])
        return recipe

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": {
                c.column: [[step.to_dict() for step in s] for s in c.settings] for c in self.columns
            },
            "suppression_limit": self.suppression_limit,
            "keep_data_steps": self.keep_data_steps,
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
        unknown = set(data) - {"columns", "suppression_limit", "keep_data_steps"}
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
        return cls(
            tuple(columns),
            data.get("suppression_limit", 0.0),
            keep_data_steps=data.get("keep_data_steps", False),
        )


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


def hierarchy_settings(recipe: Recipe, column: str) -> tuple[Setting, ...]:
    """Every level of the hierarchy file the recipe applies to ``column`` (level 0 as "as
    is"), finest first; empty when the recipe has no hierarchy step for it."""
    for step in recipe.steps_for(column):
        if isinstance(step, HierarchyLevel):
            levels = (step.with_params(level=level) for level in range(1, step.depth + 1))
            return ((), *((level,) for level in levels))
    return ()


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
    elif _is_dates(distinct):
        candidates += [(DateReduce(column, to=to),) for to in DATE_PRECISIONS[::-1]]
    elif zip_text(distinct.head(200)).notna().mean() >= 0.9:
        candidates += [(CodePrefix(column, length=4),), (ZipToThreeDigits(column),)]
        candidates += [(CodePrefix(column, length=n),) for n in (3, 2)]  # when they differ
    elif distinct.size > MAX_MERGE_LEVELS and _is_codes(distinct):
        longest = max(CodePrefix(column).sweep_values(distinct))
        candidates += [(CodePrefix(column, length=n),) for n in range(longest - 1, 0, -1)]
        if icd10_chapters(distinct.head(200))[1] == 0:
            candidates.append((Icd10Chapter(column),))
    if numbers is None and 1 < distinct.size <= MAX_MERGE_LEVELS:
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


def _is_dates(distinct: pd.Series) -> bool:
    """Whether a column's distinct values are dates: datetimes, or text of which 90% of the
    first 200 read as dates (digits alone, such as ZIP codes, do not)."""
    if pd.api.types.is_datetime64_any_dtype(distinct.dtype):
        return True
    if pd.api.types.is_numeric_dtype(distinct.dtype) or distinct.empty:
        return False
    sample = distinct.head(200).astype(str).str.strip()
    if sample.str.isdigit().mean() > 0.1:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = pd.to_datetime(sample, errors="coerce", format="mixed")
    return bool(parsed.notna().mean() >= 0.9)


def _is_codes(distinct: pd.Series) -> bool:
    """Whether 90% of (the first 200) distinct values are codes: letters, digits and dots
    without spaces, at least two characters."""
    if pd.api.types.is_numeric_dtype(distinct.dtype):
        return False
    sample = distinct.head(200).astype(str).str.strip()
    return bool(sample.str.fullmatch(r"[A-Za-z0-9.\-]{2,}").mean() >= 0.9)


def _partition_signature(values: pd.Series) -> bytes:
    """How a setting groups the distinct values (codes in order of appearance): two settings
    with the same signature release the same classes."""
    codes, _ = pd.factorize(values, use_na_sentinel=False)
    return codes.astype(np.int64).tobytes()


#: Whole-data steps that only suppress values or records: they shape no column's values.
SUPPRESSING_STEPS = ("local_suppression", "record_suppression", "subsample")


def shaped_columns(recipe: Recipe) -> set[str]:
    """The columns whose values the recipe's whole-data steps other than suppression and
    subsampling write (dates made relative, ages, microaggregated values)."""
    qis = recipe.roles.quasi_identifiers
    return {
        c
        for step in recipe.data_steps
        if step.method not in SUPPRESSING_STEPS
        for c in step.writes(qis)
    }


def default_space(
    data: pd.DataFrame,
    recipe: Recipe,
    columns: Sequence[str] | None = None,
    count: int = DEFAULT_SETTINGS_PER_COLUMN,
    suppression_limit: float = 0.0,
    keep_data_steps: bool = False,
) -> SearchSpace:
    """The default space: ``columns`` (default: the quasi-identifiers, then the exposure, less
    the columns that kept whole-data steps other than suppression write), each with
    :func:`default_settings` (at most ``count``); ``keep_data_steps``: see the module notes."""
    roles = recipe.roles
    names = list(columns) if columns is not None else list(roles.quasi_identifiers)
    if columns is None and roles.exposure and roles.exposure not in names:
        names.append(roles.exposure)
    if columns is None and keep_data_steps:  # shaped by the kept steps: not searched
        written = shaped_columns(recipe)
        names = [c for c in names if c not in written]
    if not names:
        raise RecipeError("Search: choose quasi-identifiers (and an exposure) to search.")
    missing = [c for c in names if c not in data.columns]
    if missing:
        raise RecipeError(f"Search: the data have no column '{missing[0]}'.")
    if not names:
        raise RecipeError(
            "Search: every quasi-identifier is shaped by the recipe's whole-data steps; name "
            "the columns to search."
        )
    settings = tuple(
        ColumnSettings(c, hierarchy_settings(recipe, c) or tuple(default_settings(data[c], count)))
        for c in names
    )
    return SearchSpace(settings, suppression_limit, keep_data_steps=keep_data_steps)
