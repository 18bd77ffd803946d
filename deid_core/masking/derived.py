"""Columns derived from the dates, so that the dates themselves can be coarsened or left out.

El Emam & Malin (seed 001): "many meaningful analyses of clinical trial data sets require the
dates and event order to be clear", yet "all dates are quasi-identifiers". When an analysis
needs only a length of stay and the order of a patient's admissions, these can be released as
columns of their own, computed from the dates as they came, while the dates are released to the
year (or not at all):

- :class:`Interval` releases, per row, the whole days from ``start`` to ``end``:
  ``L = day(end) - day(start)`` (calendar days; a time of day is ignored). A row whose end is
  before its start is a RecipeError that counts such rows (never a value); a missing date gives
  a missing interval.
- :class:`EventOrder` releases, per row, the rank of its date among the person's dates:
  ``V_r = 1 + #{s of the same person: d_s < d_r, or d_s = d_r and s before r}`` with
  ``ties = "first"`` (events on the same day numbered in the file's order, so every row of a
  person gets a different number 1, 2, ...), or ``V_r = 1 + #{s: d_s < d_r}`` with
  ``ties = "same"`` (events on the same day share the lower number, as ``rank(method="min")``).
  Rows with a missing date get a missing number and are not counted.

Both steps read the data as they came, before any other step (``reads_source``), and compute a
person's output from that person's own rows alone: an intruder who holds the source computes
the same values (``recomputable``), so the risk measures apply them to the source as they apply
deterministic column steps. Their outputs are quasi-identifiers (they describe dates, and every
date is one): the output column must be one of the recipe's quasi-identifiers, so that the risk
counts it, and a column of the data (the released file has the data's columns; the output
replaces that column's values: the visits demo's ``length_of_stay``, or a date column itself,
e.g. the admission date released as the visit number).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from deid_core.errors import RecipeError
from deid_core.masking.base import DATES, DataOutcome, DataStep
from deid_core.masking.dates import day_numbers, parse_dates

#: Units :class:`Interval` releases (whole calendar days).
INTERVAL_UNITS = ("days",)
#: How :class:`EventOrder` numbers a person's events on the same day.
TIE_RULES = ("first", "same")


def _column(value: Any, name: str, label: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RecipeError(f"{label}: '{name}' must be a column name.")
    return value


def _require_quasi_identifier(name: str, label: str, quasi_identifiers: Sequence[str]) -> None:
    if name not in quasi_identifiers:
        raise RecipeError(
            f"{label}: its output '{name}' describes dates, so it is a quasi-identifier: mark "
            "it as one (Data page, or the recipe's roles) so that the risk counts it."
        )


def event_order(days: np.ndarray, person: np.ndarray, ties: str = "first") -> np.ndarray:
    """Per row, the rank of ``days`` (day numbers, NaN: missing) among its person's rows, as in
    the module docstring (NaN where the day is missing)."""
    n = len(days)
    out = np.full(n, np.nan)
    present = np.flatnonzero(~np.isnan(days))
    if present.size == 0:
        return out
    frame = pd.DataFrame({"person": person[present], "day": days[present]})
    method = "first" if ties == "first" else "min"
    out[present] = frame.groupby("person")["day"].rank(method=method).to_numpy()
    return out


@dataclass(frozen=True)
class Interval(DataStep):
    """The whole days from ``start`` to ``end`` of each row, released in column ``name`` (see
    the module docstring)."""

    start: str = ""
    end: str = ""
    name: str = ""
    unit: str = "days"

    method: ClassVar[str] = "interval"
    label: ClassVar[str] = "Interval between two dates"
    recomputable: ClassVar[bool] = True
    reads_source: ClassVar[bool] = True
    takes: ClassVar[str] = DATES

    def _validate(self) -> None:
        for field_name in ("start", "end", "name"):
            _column(getattr(self, field_name), field_name, self.label)
        if self.start == self.end:
            raise RecipeError(f"{self.label}: 'start' and 'end' must be two different columns.")
        if self.unit not in INTERVAL_UNITS:
            raise RecipeError(f"{self.label}: 'unit' must be one of {', '.join(INTERVAL_UNITS)}.")

    def reads(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return (self.start, self.end)

    def kind_columns(self, quasi_identifiers: Sequence[str] = ()) -> tuple[str, ...]:
        return (self.start, self.end)

    def check_kind(self, series: pd.Series, column: str) -> None:
        parse_dates(series, column, self.label)

    def writes(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return (self.name,)

    def _apply(
        self,
        frame: pd.DataFrame,
        quasi_identifiers: tuple[str, ...],
        replicate: int,
        wildcards: Mapping[str, np.ndarray],
        *,
        persons: np.ndarray | None = None,
    ) -> DataOutcome:
        _require_quasi_identifier(self.name, self.label, quasi_identifiers)
        start = day_numbers(parse_dates(frame[self.start], self.start, self.label))
        end = day_numbers(parse_dates(frame[self.end], self.end, self.label))
        days = end - start
        backwards = int(np.sum(days < 0))
        if backwards:
            raise RecipeError(
                f"{self.label}: {backwards:,} row{'s have' if backwards > 1 else ' has'} "
                f"'{self.end}' before '{self.start}'; correct or remove "
                f"{'them' if backwards > 1 else 'it'} first."
            )
        released = pd.Series(pd.array(days, dtype="Int64"), index=frame.index, name=self.name)
        facts = {"records": len(frame), "intervals_missing": int(np.isnan(days).sum())}
        return DataOutcome(values={self.name: released}, facts=facts)

    def describe(self) -> str:
        return f"{self.name}: whole {self.unit} from {self.start} to {self.end}"

    def summary(self, facts: Mapping[str, Any]) -> str:
        missing = facts.get("intervals_missing", 0)
        note = f"; {missing:,} missing (a date missing)" if missing else ""
        return f"Interval: {self.describe()}, exact for {facts.get('records', 0):,} rows{note}"


@dataclass(frozen=True)
class EventOrder(DataStep):
    """The order of each row's ``column`` date among its person's dates (1, 2, ...), released
    in column ``name``; ``ties`` as in the module docstring. The person is the recipe's record
    id (without one, each row is a person and every number is 1)."""

    column: str = ""
    name: str = ""
    ties: str = "first"

    method: ClassVar[str] = "event_order"
    label: ClassVar[str] = "Order of a person's events"
    needs_person: ClassVar[bool] = True
    recomputable: ClassVar[bool] = True
    reads_source: ClassVar[bool] = True
    takes: ClassVar[str] = DATES

    def _validate(self) -> None:
        _column(self.column, "column", self.label)
        _column(self.name, "name", self.label)
        if self.ties not in TIE_RULES:
            raise RecipeError(f"{self.label}: 'ties' must be one of {', '.join(TIE_RULES)}.")

    def reads(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return (self.column,)

    def kind_columns(self, quasi_identifiers: Sequence[str] = ()) -> tuple[str, ...]:
        return (self.column,)

    def check_kind(self, series: pd.Series, column: str) -> None:
        parse_dates(series, column, self.label)

    def writes(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return (self.name,)

    def _apply(
        self,
        frame: pd.DataFrame,
        quasi_identifiers: tuple[str, ...],
        replicate: int,
        wildcards: Mapping[str, np.ndarray],
        *,
        persons: np.ndarray | None = None,
    ) -> DataOutcome:
        _require_quasi_identifier(self.name, self.label, quasi_identifiers)
        days = day_numbers(parse_dates(frame[self.column], self.column, self.label))
        person = np.arange(len(frame)) if persons is None else persons
        order = event_order(days, person, self.ties)
        released = pd.Series(pd.array(order, dtype="Int64"), index=frame.index, name=self.name)
        facts = {
            "records": len(frame),
            "people": int(np.unique(person).size),
            "most_events": int(np.nanmax(order)) if np.any(~np.isnan(order)) else 0,
            "dates_missing": int(np.isnan(days).sum()),
        }
        return DataOutcome(values={self.name: released}, facts=facts)

    def describe(self) -> str:
        same = "same-day events in file order" if self.ties == "first" else "same-day events share"
        return f"{self.name}: order of the person's {self.column} (1, 2, ...; {same})"

    def summary(self, facts: Mapping[str, Any]) -> str:
        missing = facts.get("dates_missing", 0)
        note = f"; {missing:,} rows without a date (missing)" if missing else ""
        return (
            f"Event order: {self.describe()}, for {facts.get('people', 0):,} people, up to "
            f"{facts.get('most_events', 0):,} events each{note}"
        )
