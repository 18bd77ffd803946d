"""Dates as clinical analyses need them: event order and intervals kept, the calendar hidden.

El Emam & Malin (seed 001) treat every date as a quasi-identifier, yet "many meaningful
analyses of clinical trial data sets require the dates and event order to be clear". Three
whole-data steps work person by person (the person is the recipe's record id; without one,
each record is a person of its own), so they are given the record id and never change it:

- :class:`RelativeDates` releases each listed date as the whole number of days since the
  person's anchor, ``d - a``: the person's earliest date among the listed columns
  (``anchor = "first"``), or the person's earliest date in a chosen column (randomisation,
  diagnosis). Two dates ``d1``, ``d2`` of one person keep their order and their interval
  exactly: ``(d2 - a) - (d1 - a) = d2 - d1``. A named anchor column is itself released as its
  year, quarter or month (``anchor_as``) or not at all (missing).
- :class:`DateShift` adds one random whole number of days ``s_p``, uniform on ``[-N, N]``, to
  every date of person ``p`` (the same for all of their dates, so intervals are kept). The
  released dates are perturbed, not generalised (``perturbative``): an intruder who knows a
  true date can only say it lies within ``N`` days of the released one, so the risk is the
  record-linkage risk within that reach, as for noise (:mod:`deid_core.risk.judged`).
- :class:`AgeAt` releases, in place of a date of birth ``b``, the age in completed years at a
  reference date ``r`` (each row's, or the person's first): ``year(r) - year(b) - 1`` when
  ``(month(r), day(r)) < (month(b), day(b))``, else ``year(r) - year(b)`` (a person born on
  29 February completes a year on 1 March in common years); in bands of ``width`` years
  (released as each band's lower end, ``width * floor(age / width)``) and with every age at or
  above ``top_code`` released as ``top_code`` (HIPAA Safe Harbor pools ages over 89: 45 CFR
  164.514(b)(2)(i)(C), so ``top_code = 90``).

Dates are read as pandas reads them (ISO text, or datetime columns); an entry that is not a
date is a RecipeError that counts them (never quotes them).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from deid_core.errors import RecipeError
from deid_core.masking.base import (
    DATES,
    DataOutcome,
    DataStep,
    checked_seed,
    column_names,
    require_int,
    rng_for,
)

#: How a named anchor column is released by :class:`RelativeDates`.
ANCHOR_RELEASES = ("hidden", "year", "quarter", "month")
#: Largest shift, in days, that :class:`DateShift` accepts (ten years).
MAX_SHIFT_DAYS = 3653
#: The shifts (in days) the risk-utility map tries.
SHIFT_SWEEP = (7, 15, 30, 60, 90, 180, 365)
#: The band widths (in years) the risk-utility map tries for ages.
AGE_WIDTH_SWEEP = (1, 2, 5, 10)
_NANOS_PER_DAY = 86_400 * 10**9


def parse_dates(series: pd.Series, column: str, method: str) -> pd.Series:
    """``series`` as datetimes (missing stays missing), or a RecipeError counting the present
    entries that are not dates. Time zones are dropped (the local calendar date is kept)."""
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        dates = series
    else:
        numbers = pd.api.types.is_numeric_dtype(series.dtype)
        if (numbers or pd.api.types.is_bool_dtype(series.dtype)) and series.notna().any():
            raise RecipeError(
                f"{method}: '{column}' holds numbers, not dates (dates are read as text such "
                "as 2019-03-04; if an earlier step made them days or years, put this step "
                "before it)."
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dates = pd.to_datetime(series, errors="coerce", format="mixed")
        bad = int((dates.isna() & series.notna()).sum())
        if bad:
            raise RecipeError(
                f"{method}: '{column}' has {bad} entr{'y' if bad == 1 else 'ies'} that "
                f"{'is not a date' if bad == 1 else 'are not dates'}."
            )
    if getattr(dates.dt, "tz", None) is not None:
        dates = dates.dt.tz_localize(None)
    try:
        return dates.astype("datetime64[ns]")
    except (OverflowError, ValueError) as error:  # OutOfBoundsDatetime is a ValueError
        raise RecipeError(
            f"{method}: '{column}' has dates outside the years 1678 to 2261, which this step "
            "cannot count days for."
        ) from error


def day_numbers(dates: pd.Series) -> np.ndarray:
    """Whole days since 1970-01-01 of each date (its calendar day; NaN where missing)."""
    values = dates.to_numpy(dtype="datetime64[ns]").astype("datetime64[D]")
    out = values.astype(np.int64).astype(float)
    out[np.isnat(values)] = np.nan
    return out


def _per_person_min(days: np.ndarray, person: np.ndarray) -> np.ndarray:
    """Per record, the smallest non-missing value of its person's ``days`` (NaN if none)."""
    n_people = int(person.max(initial=-1)) + 1
    lowest = np.full(n_people, np.inf)
    present = ~np.isnan(days)
    np.minimum.at(lowest, person[present], days[present])
    lowest[np.isinf(lowest)] = np.nan
    return lowest[person]


def calendar_label(dates: pd.Series, precision: str) -> pd.Series:
    """Each date's year (a whole number), quarter ("2019-Q3"), month ("2019-07") or ISO week
    ("2019-W07", the week of ISO 8601, Monday to Sunday, in the ISO week-numbering year);
    missing stays missing."""
    if precision == "year":
        return dates.dt.year.astype("Int64")
    if precision == "quarter":
        text = (
            dates.dt.year.astype("Int64").astype(str)
            + "-Q"
            + dates.dt.quarter.astype("Int64").astype(str)
        )
    elif precision in ("month", "year-month"):
        text = dates.dt.strftime("%Y-%m")
    elif precision == "week":
        iso = dates.dt.isocalendar()
        text = iso["year"].astype("Int64").astype(str) + "-W"
        text = text + iso["week"].astype("Int64").astype(str).str.zfill(2)
    else:
        raise RecipeError(f"Unknown date precision '{precision}'.")
    return text.astype("object").where(dates.notna(), np.nan)


def _date_columns(value: Any, method: str) -> tuple[str, ...]:
    return column_names(value, "columns", method, minimum=1)


@dataclass(frozen=True)
class _DateStep(DataStep):
    """What the whole-data steps on dates share: the columns of :meth:`kind_columns` must be
    dates (:func:`parse_dates`)."""

    takes: ClassVar[str] = DATES

    def check_kind(self, series: pd.Series, column: str) -> None:
        parse_dates(series, column, self.label)


@dataclass(frozen=True)
class RelativeDates(_DateStep):
    """Each listed date released as whole days since the person's anchor (see the module
    docstring): ``anchor = "first"`` (the person's earliest listed date) or a date column's
    name (the person's earliest date in it); a named anchor column is released as its
    ``anchor_as`` ("year", "quarter", "month") or as missing ("hidden"). Times of day are
    ignored: days are counted between calendar dates."""

    columns: tuple[str, ...] = ()
    anchor: str = "first"
    anchor_as: str = "hidden"

    method: ClassVar[str] = "relative_dates"
    label: ClassVar[str] = "Dates relative to the person's anchor"
    sweep_parameter: ClassVar[str | None] = "anchor_as"
    needs_person: ClassVar[bool] = True
    recomputable: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if isinstance(self.columns, list):
            object.__setattr__(self, "columns", tuple(self.columns))
        super().__post_init__()

    def _validate(self) -> None:
        _date_columns(self.columns, self.label)
        if not isinstance(self.anchor, str) or not self.anchor.strip():
            raise RecipeError(
                f"{self.label}: 'anchor' must be \"first\" or the name of a date column."
            )
        if self.anchor_as not in ANCHOR_RELEASES:
            raise RecipeError(
                f"{self.label}: 'anchor_as' must be one of {', '.join(ANCHOR_RELEASES)}."
            )
        if self.anchor == "first" and self.anchor_as != "hidden":
            raise RecipeError(
                f"{self.label}: with the person's first date as the anchor, the anchor is no "
                "column of its own; choose a date column as the anchor to release it "
                "generalised."
            )
        if self.anchor in self.columns and self.anchor_as != "hidden":
            raise RecipeError(
                f"{self.label}: the anchor '{self.anchor}' is also listed, so it is released as "
                "days like the others; leave it out of the list to release it generalised."
            )

    @property
    def named_anchor(self) -> str | None:
        """The anchor column (None: the person's first listed date)."""
        return None if self.anchor == "first" else self.anchor

    def reads(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        extra = (self.anchor,) if self.named_anchor and self.anchor not in self.columns else ()
        return (*self.columns, *extra)

    def writes(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return self.reads(quasi_identifiers)

    def kind_columns(self, quasi_identifiers: Sequence[str] = ()) -> tuple[str, ...]:
        return self.reads(quasi_identifiers)

    def _apply(
        self,
        frame: pd.DataFrame,
        quasi_identifiers: tuple[str, ...],
        replicate: int,
        wildcards: Mapping[str, np.ndarray],
        *,
        persons: np.ndarray | None = None,
    ) -> DataOutcome:
        person = np.arange(len(frame)) if persons is None else persons
        dates = {c: parse_dates(frame[c], c, self.label) for c in self.reads(quasi_identifiers)}
        days = {c: day_numbers(d) for c, d in dates.items()}
        if self.named_anchor is None:
            earliest = np.fmin.reduce([days[c] for c in self.columns])
        else:
            earliest = days[self.anchor]
        anchor = _per_person_min(earliest, person)
        values: dict[str, pd.Series] = {}
        for column in self.columns:
            relative = pd.array(days[column] - anchor, dtype="Int64")
            values[column] = pd.Series(relative, index=frame.index, name=column)
        if self.named_anchor is not None and self.anchor not in self.columns:
            if self.anchor_as == "hidden":
                values[self.anchor] = pd.Series(np.nan, index=frame.index, dtype=object)
            else:
                values[self.anchor] = calendar_label(dates[self.anchor], self.anchor_as)
        no_anchor = int(np.isnan(anchor).sum())
        facts = {
            "records": len(frame),
            "people": int(np.unique(person).size),
            "records_without_anchor": no_anchor,
        }
        return DataOutcome(values=values, facts=facts)

    def describe(self) -> str:
        listed = ", ".join(self.columns)
        if self.named_anchor is None:
            return f"{listed}: days since the person's first of these dates (calendar hidden)"
        shown = (
            "not released" if self.anchor_as == "hidden" else f"released as its {self.anchor_as}"
        )
        return f"{listed}: days since the person's {self.anchor} ({self.anchor} {shown})"

    def summary(self, facts: Mapping[str, Any]) -> str:
        missing = facts.get("records_without_anchor", 0)
        note = f"; {missing:,} records have no anchor date (released as missing)" if missing else ""
        return (
            f"Relative dates: {', '.join(self.columns)} released as days since the anchor for "
            f"{facts.get('people', 0):,} people{note}"
        )

    def sweep_values(self, series: pd.Series | None = None) -> list[Any]:
        if self.named_anchor is None or self.anchor in self.columns:
            return []
        return list(ANCHOR_RELEASES)


@dataclass(frozen=True)
class DateShift(_DateStep):
    """Every listed date of a person shifted by the same random whole number of days, uniform
    on ``[-max_days, max_days]`` (one draw per person; ``seed`` and the replicate choose the
    draws, as for noise). Released as dates (times of day kept)."""

    columns: tuple[str, ...] = ()
    max_days: int = 30
    seed: int | None = None

    method: ClassVar[str] = "date_shift"
    label: ClassVar[str] = "Date shifting per person"
    random: ClassVar[bool] = True
    sweep_parameter: ClassVar[str | None] = "max_days"
    needs_person: ClassVar[bool] = True
    _PERTURBATIVE: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if isinstance(self.columns, list):
            object.__setattr__(self, "columns", tuple(self.columns))
        super().__post_init__()

    def _validate(self) -> None:
        _date_columns(self.columns, self.label)
        object.__setattr__(
            self, "max_days", require_int(self.max_days, "max_days", self.label, 1, MAX_SHIFT_DAYS)
        )
        object.__setattr__(self, "seed", checked_seed(self.seed, self.label))

    def reads(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return self.columns

    def writes(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return self.columns

    def kind_columns(self, quasi_identifiers: Sequence[str] = ()) -> tuple[str, ...]:
        return self.columns

    def offsets(self, person: np.ndarray, replicate: int = 0) -> np.ndarray:
        """The shift in days of each record: one draw per person, uniform on [-N, N]."""
        n_people = int(person.max(initial=-1)) + 1
        rng = rng_for(self.seed, replicate)
        drawn = rng.integers(-self.max_days, self.max_days, size=n_people, endpoint=True)
        return drawn[person]

    def _apply(
        self,
        frame: pd.DataFrame,
        quasi_identifiers: tuple[str, ...],
        replicate: int,
        wildcards: Mapping[str, np.ndarray],
        *,
        persons: np.ndarray | None = None,
    ) -> DataOutcome:
        person = np.arange(len(frame)) if persons is None else persons
        shift = pd.to_timedelta(self.offsets(person, replicate), unit="D")
        values = {c: (parse_dates(frame[c], c, self.label) + shift).rename(c) for c in self.columns}
        facts = {
            "records": len(frame),
            "people": int(np.unique(person).size),
            "max_days": self.max_days,
        }
        return DataOutcome(values=values, facts=facts)

    def describe(self) -> str:
        return (
            f"{', '.join(self.columns)}: each person's dates shifted by one random number of "
            f"days in [-{self.max_days}, {self.max_days}] (intervals kept)"
        )

    def summary(self, facts: Mapping[str, Any]) -> str:
        return (
            f"Date shifting: the dates of {facts.get('people', 0):,} people shifted by up to "
            f"{facts.get('max_days', self.max_days)} days each"
        )

    def sweep_values(self, series: pd.Series | None = None) -> list[Any]:
        return list(SHIFT_SWEEP)


def completed_years(birth: pd.Series, reference: pd.Series) -> np.ndarray:
    """Age in completed years at ``reference`` of each person born on ``birth`` (both
    datetimes, aligned): the year difference, less one when the reference's (month, day)
    comes before the birthday's; NaN where either is missing."""
    years = (reference.dt.year - birth.dt.year).to_numpy(dtype=float, na_value=np.nan)
    before = (reference.dt.month < birth.dt.month) | (
        (reference.dt.month == birth.dt.month) & (reference.dt.day < birth.dt.day)
    )
    return years - before.to_numpy(dtype=bool, na_value=False)


@dataclass(frozen=True)
class AgeAt(_DateStep):
    """A date of birth (``column``) released as the age in completed years at ``reference``
    (a date column: each row's date, or with ``first`` the person's earliest one), in bands of
    ``width`` years (each released as its lower end), ages at or above ``top_code`` released as
    ``top_code`` (None: no pooling). See the module docstring for the formula."""

    column: str = ""
    reference: str = ""
    first: bool = False
    width: int = 1
    top_code: int | None = None

    method: ClassVar[str] = "age_at"
    label: ClassVar[str] = "Date of birth to age"
    sweep_parameter: ClassVar[str | None] = "width"
    needs_person: ClassVar[bool] = True
    recomputable: ClassVar[bool] = True

    def _validate(self) -> None:
        for name in ("column", "reference"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise RecipeError(f"{self.label}: '{name}' must be a column name.")
        if self.column == self.reference:
            raise RecipeError(
                f"{self.label}: the reference date must be another column than the date of birth."
            )
        if not isinstance(self.first, bool):
            raise RecipeError(f"{self.label}: 'first' must be true or false.")
        object.__setattr__(self, "width", require_int(self.width, "width", self.label, 1, 50))
        if self.top_code is not None:
            top = require_int(self.top_code, "top_code", self.label, 1, 150)
            if top % self.width:
                raise RecipeError(
                    f"{self.label}: the top code ({top}) must be a multiple of the band width "
                    f"({self.width}), so that no band is cut in two."
                )
            object.__setattr__(self, "top_code", top)

    def reads(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return (self.column, self.reference)

    def kind_columns(self, quasi_identifiers: Sequence[str] = ()) -> tuple[str, ...]:
        return (self.column, self.reference)

    def writes(self, quasi_identifiers: Sequence[str]) -> tuple[str, ...]:
        return (self.column,)

    def _apply(
        self,
        frame: pd.DataFrame,
        quasi_identifiers: tuple[str, ...],
        replicate: int,
        wildcards: Mapping[str, np.ndarray],
        *,
        persons: np.ndarray | None = None,
    ) -> DataOutcome:
        birth = parse_dates(frame[self.column], self.column, self.label)
        reference = parse_dates(frame[self.reference], self.reference, self.label)
        if self.first:
            person = np.arange(len(frame)) if persons is None else persons
            days = _per_person_min(day_numbers(reference), person)
            reference = pd.Series(pd.to_datetime(days, unit="D", origin="unix"), index=frame.index)
        age = completed_years(birth, reference)
        negative = int(np.sum(age < 0))
        if negative:
            raise RecipeError(
                f"{self.label}: {negative} record{'s have' if negative > 1 else ' has'} a date of "
                f"birth after the reference date '{self.reference}'."
            )
        banded = np.floor(age / self.width) * self.width
        pooled = 0
        if self.top_code is not None:
            over = age >= self.top_code
            pooled = int(over.sum())
            banded[over] = self.top_code
        released = pd.Series(pd.array(banded, dtype="Int64"), index=frame.index, name=self.column)
        facts = {
            "records": len(frame),
            "ages_missing": int(np.isnan(age).sum()),
            "ages_pooled": pooled,
        }
        return DataOutcome(values={self.column: released}, facts=facts)

    def describe(self) -> str:
        at = f"the person's first {self.reference}" if self.first else self.reference
        unit = "completed years" if self.width == 1 else f"{self.width}-year bands (lower end)"
        top = f", {self.top_code} and over as {self.top_code}" if self.top_code else ""
        return f"{self.column}: age at {at} in {unit}{top}"

    def summary(self, facts: Mapping[str, Any]) -> str:
        pooled = facts.get("ages_pooled", 0)
        note = f"; {pooled:,} ages pooled at {self.top_code}" if self.top_code else ""
        return f"Age: {self.describe()}{note}"

    def sweep_values(self, series: pd.Series | None = None) -> list[Any]:
        if self.top_code is None:
            return list(AGE_WIDTH_SWEEP)
        return [w for w in AGE_WIDTH_SWEEP if self.top_code % w == 0]
