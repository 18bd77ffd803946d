"""Recoding of categorical values and dates: merging levels, reducing dates to the year,
quarter, month or ISO week."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd

from deid_core.errors import RecipeError
from deid_core.masking.base import DATES, MaskingStep
from deid_core.masking.dates import calendar_label

#: From coarsest to finest: the year (a number), "2019-Q3", "2019-07", the ISO week "2019-W07".
DATE_PRECISIONS = ("year", "quarter", "year-month", "week")


@dataclass(frozen=True)
class MergeLevels(MaskingStep):
    """Merge categorical levels: every level listed under a new label is replaced by it
    (e.g. {"40-59": ["40-44", "45-49", "50-54", "55-59"]}). Other levels are unchanged.
    Levels are matched by their text, so 5 and "5" are the same level."""

    groups: Any = ()

    method: ClassVar[str] = "merge_levels"
    label: ClassVar[str] = "Merge levels"
    _ELEMENTWISE: ClassVar[bool] = True

    def __post_init__(self) -> None:
        groups = self.groups
        if isinstance(groups, Mapping):
            groups = tuple((str(k), tuple(str(v) for v in vs)) for k, vs in groups.items())
        else:
            groups = tuple((str(k), tuple(str(v) for v in vs)) for k, vs in groups)
        object.__setattr__(self, "groups", groups)
        super().__post_init__()

    def _validate(self) -> None:
        if not self.groups:
            raise RecipeError(f"{self.label}: give at least one group of levels to merge.")
        seen: set[str] = set()
        for new_label, levels in self.groups:
            if not levels:
                raise RecipeError(f"{self.label}: the group '{new_label}' lists no levels.")
            overlap = seen.intersection(levels)
            if overlap:
                raise RecipeError(f"{self.label}: a level is listed in more than one group.")
            seen.update(levels)

    @property
    def mapping(self) -> dict[str, str]:
        return {old: new for new, olds in self.groups for old in olds}

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        mapping = self.mapping
        present = series.notna()
        as_text = series.astype("object").where(~present, series.astype(str))
        merged = as_text.map(lambda v: mapping.get(v, v) if isinstance(v, str) else v)
        if not set(mapping).intersection(as_text[present].unique()):
            return series
        return merged.astype("object")

    def to_dict(self, include_seed: bool = True) -> dict[str, Any]:
        return {
            "method": self.method,
            "column": self.column,
            "groups": {new: list(olds) for new, olds in self.groups},
        }

    def describe(self) -> str:
        parts = [f"{' + '.join(olds)} -> {new}" for new, olds in self.groups]
        return f"{self.column}: levels merged ({'; '.join(parts)})"


@dataclass(frozen=True)
class DateReduce(MaskingStep):
    """Reduce dates to the year (released as a number), the quarter ("2019-Q3"), year-month
    ("2011-07") or the ISO 8601 week ("2019-W07": weeks run Monday to Sunday, numbered within
    the ISO week-numbering year, so 2020-12-31 is in "2020-W53" and 2021-01-03 too)."""

    to: str = "year"

    method: ClassVar[str] = "date_reduce"
    label: ClassVar[str] = "Date to year / quarter / month / week"
    sweep_parameter: ClassVar[str | None] = "to"
    _ELEMENTWISE: ClassVar[bool] = True
    takes: ClassVar[str] = DATES

    def _validate(self) -> None:
        if self.to not in DATE_PRECISIONS:
            raise RecipeError(f"{self.label}: 'to' must be one of {', '.join(DATE_PRECISIONS)}.")

    def _transform(self, series: pd.Series, replicate: int) -> pd.Series:
        return calendar_label(self._dates(series, self.column), self.to)

    def check_kind(self, series: pd.Series, column: str) -> None:
        self._dates(series, column)

    def _dates(self, series: pd.Series, column: str) -> pd.Series:
        """``series`` as datetimes, or a RecipeError counting the entries that are not
        dates."""
        if pd.api.types.is_datetime64_any_dtype(series.dtype):
            return series
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dates = pd.to_datetime(series, errors="coerce", format="mixed")
        bad = int((dates.isna() & series.notna()).sum())
        if bad:
            entries = (
                "1 entry that is not a date" if bad == 1 else f"{bad:,} entries that are not dates"
            )
            raise RecipeError(f"{self.label}: '{column}' has {entries}.")
        return dates

    def describe(self) -> str:
        return f"{self.column}: dates reduced to {self.to}"

    def sweep_values(self, series: pd.Series | None = None) -> list[Any]:
        return list(DATE_PRECISIONS)
