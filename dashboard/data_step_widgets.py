"""Widgets of the whole-data steps (date of birth to age, dates relative to each person's
anchor, date shifting per person, a length of stay and a visit number derived from the dates,
multivariate microaggregation, local and record suppression,
subsampling): one box per step, a toggle and its inputs, on the Mask page.

As for the per-column controls (:mod:`dashboard.widgets`), each input's value lives under a
key derived from a prefix and is initialised from the recipe's current step, so the recipe
stays the single source of truth.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from dashboard.text import literal
from dashboard.widgets import (
    FRACTION_CHOICES,
    LIMIT_CHOICES,
    MAX_LEVELS_LISTED,
    PRAM_NUMERIC_LEVELS,
    aggregate_radio,
    choice_slider,
    columns_choice,
    for_column,
    init_key,
    is_date_column,
    k_slider,
    n_levels,
)
from deid_core.errors import RecipeError
from deid_core.masking import (
    AgeAt,
    DataStep,
    DateShift,
    EventOrder,
    Interval,
    LocalSuppression,
    MultivariateMicroaggregate,
    RecordSuppression,
    RelativeDates,
    Subsample,
)
from deid_core.masking.dates import ANCHOR_RELEASES, SHIFT_SWEEP
from deid_core.masking.derived import TIE_RULES

#: The whole-data steps the Mask page offers, in the order they are applied.
DATA_STEP_ORDER = (
    "age_at",
    "relative_dates",
    "date_shift",
    "interval",
    "event_order",
    "multivariate_microaggregate",
    "local_suppression",
    "record_suppression",
    "subsample",
)
DATA_STEP_HELP: dict[str, str] = {
    "age_at": (
        "Release a date of birth as the age in completed years (or bands) at a reference date "
        "of the same row or the person's first one; ages of 90 and over pooled as 90 when "
        "asked (HIPAA Safe Harbor). Runs first, on the true dates."
    ),
    "relative_dates": (
        "Release dates as days since each person's anchor (their first of these dates, or a "
        "date column such as randomisation): the order and every interval between a person's "
        "dates stay exact, the calendar is hidden. The person is the record id."
    ),
    "date_shift": (
        "Move all of a person's dates by the same random number of days (intervals kept). The "
        "dates are perturbed, so the risk is the record-linkage risk within the shift's reach, "
        "as for noise."
    ),
    "interval": (
        "Release the whole days between two dates of each row (a length of stay) in a "
        "quasi-identifier column of its own, computed from the dates as they came: the dates "
        "themselves can then be cut to the year or hidden."
    ),
    "event_order": (
        "Release each row's place among the person's dates (1, 2, ...: a visit number) in a "
        "quasi-identifier column, computed from the dates as they came, so that the order "
        "of a person's events survives when the dates are coarsened."
    ),
    "multivariate_microaggregate": (
        "Group records that are close on several numeric columns together (MDAV on "
        "standardised values, groups of k) and release each group's mean or median; within "
        "strata of categorical quasi-identifiers, each group is a class of at least k."
    ),
    "local_suppression": (
        "Release single quasi-identifier values as missing until every record matches at least "
        "k records; a suppressed value matches any value (as in sdcMicro), so few suppressions "
        "can protect many records."
    ),
    "record_suppression": (
        "Leave out the records whose class is smaller than k, if they are at most the limit's "
        "share of the records (ARX's suppression limit); otherwise it says it cannot."
    ),
    "subsample": (
        "Release a random share of the records (stratified: the same share of each stratum); "
        "an intruder cannot know who is in it, so the open-data risk at that fraction applies."
    ),
}


@dataclass(frozen=True)
class DataStepsResult:
    """What the whole-data controls ask for: the steps (None: leave the recipe's as they are),
    or an error to show."""

    steps: tuple[DataStep, ...] | None
    error: str | None = None


def data_steps_editor(
    current: tuple[DataStep, ...],
    original: pd.DataFrame,
    quasi_identifiers: tuple[str, ...],
    numeric_candidates: list[str],
    prefix: str,
    seed: int,
) -> DataStepsResult:
    """Draw one box per whole-data step (a toggle and its inputs) and return the steps they
    define, in :data:`DATA_STEP_ORDER`. A recipe whose whole-data steps these controls cannot
    show (two of a kind, another order) is shown, not edited."""
    methods = [step.method for step in current]
    canonical = [m for m in DATA_STEP_ORDER if m in methods]
    if len(set(methods)) != len(methods) or methods != canonical:
        st.info(
            literal(
                "Whole-data steps set in the recipe are kept as they are: "
                + "; ".join(step.describe() for step in current)
            )
        )
        return DataStepsResult(None)
    by_method = {step.method: step for step in current}
    dates = [
        c for c in original.columns if n_levels(original[c]) > 1 and is_date_column(original[c])
    ]
    editors = {
        "age_at": lambda same, key: _age_at(same, key, dates),
        "relative_dates": lambda same, key: _relative_dates(same, key, dates, quasi_identifiers),
        "date_shift": lambda same, key: _date_shift(same, key, dates, quasi_identifiers, seed),
        "interval": lambda same, key: _interval(same, key, dates, quasi_identifiers),
        "event_order": lambda same, key: _event_order(same, key, dates, quasi_identifiers),
        "multivariate_microaggregate": lambda same, key: _multivariate(
            same, key, original, quasi_identifiers, numeric_candidates
        ),
        "local_suppression": lambda same, key: _local_suppression(same, key, quasi_identifiers),
        "record_suppression": lambda same, key: _record_suppression(same, key),
        "subsample": lambda same, key: _subsample(same, key, original, seed),
    }
    steps: list[DataStep] = []
    for method in DATA_STEP_ORDER:
        same = by_method.get(method)
        key = f"{prefix}:{method}"
        with st.container(border=True):
            on_key = init_key(f"{key}:on", same is not None)
            on = st.toggle(DATA_STEP_LABELS[method], key=on_key, help=DATA_STEP_HELP[method])
            if not on:
                continue
            st.caption(DATA_STEP_HELP[method])
            try:
                step = editors[method](same, key)
            except RecipeError as error:
                return DataStepsResult(None, error=str(error))
            if step is not None:
                steps.append(step)
    return DataStepsResult(tuple(steps))


#: How a named anchor is released, as the radio shows it.
ANCHOR_AS_LABELS = {
    "hidden": "not at all",
    "year": "its year",
    "quarter": "its quarter",
    "month": "its month",
}
DATA_STEP_LABELS: dict[str, str] = {
    "age_at": "Date of birth to age",
    "relative_dates": "Dates relative to each person's anchor",
    "date_shift": "Date shifting per person",
    "interval": "Interval between two dates (length of stay)",
    "event_order": "Order of each person's events (visit number)",
    "multivariate_microaggregate": "Multivariate microaggregation (MDAV)",
    "local_suppression": "Local suppression",
    "record_suppression": "Record suppression",
    "subsample": "Subsampling",
}


def _is_categorical(series: pd.Series) -> bool:
    """Text, or numbers with few distinct values (codes such as race 1, 2, 3)."""
    numeric = pd.api.types.is_numeric_dtype(series.dtype)
    return not numeric or n_levels(series) <= PRAM_NUMERIC_LEVELS


def _multivariate(same, key, original, quasi_identifiers, numeric_candidates):
    continuous = [c for c in numeric_candidates if not _is_categorical(original[c])]
    preferred = [c for c in continuous if c in quasi_identifiers] or continuous
    chosen_default = list(same.columns) if same is not None else preferred[:2]
    columns = columns_choice(
        "Numeric columns to microaggregate together",
        numeric_candidates,
        chosen_default,
        f"{key}:columns",
        "Records close on all of these columns form a group; each column is released as "
        "its group's mean or median.",
    )
    strata_options = [c for c in quasi_identifiers if c not in columns]
    default_strata = (
        list(same.strata)
        if same is not None
        else [c for c in strata_options if _is_categorical(original[c])]
    )
    strata = columns_choice(
        "Within strata of (categorical quasi-identifiers)",
        strata_options,
        default_strata,
        f"{key}:strata",
        "Groups are formed within each combination of these columns' values, so a "
        "group shares them: its records then form a class of at least k.",
    )
    name = DATA_STEP_LABELS["multivariate_microaggregate"].lower()
    k = k_slider(
        for_column("Group size k", name),
        same.k if same is not None else 5,
        f"{key}:k",
        "Larger groups: lower risk, values further from the truth.",
    )
    aggregate = aggregate_radio(same.aggregate if same is not None else "mean", f"{key}:agg", name)
    if len(columns) < (1 if strata else 2):
        st.info("Choose at least two columns (or one column and a stratum).")
        return None
    return MultivariateMicroaggregate(
        columns=tuple(columns), k=k, aggregate=aggregate, strata=tuple(strata)
    )


def _local_suppression(same, key, quasi_identifiers):
    if not quasi_identifiers:
        st.info("Choose quasi-identifiers on the Data page first.")
        return None
    k = k_slider(
        "Every record matches at least k records",
        same.k if same is not None else 5,
        f"{key}:k",
        "Larger k: more values suppressed, lower risk (maximum risk 1/k).",
    )
    importance = columns_choice(
        "Keep these if possible (most important first; optional)",
        list(quasi_identifiers),
        same.importance if same else (),
        f"{key}:importance",
        "Without an order, as few values as possible are suppressed. Listed columns are "
        "suppressed last, the first one listed last of all.",
    )
    keep = columns_choice(
        "Never suppress",
        [c for c in quasi_identifiers if c not in importance],
        same.keep if same else (),
        f"{key}:keep",
        "These columns are released whole (dates whose intervals must stay exact, say). A "
        "record that cannot reach k by suppressing only the other quasi-identifiers is left "
        "as it is, and the risk shows it.",
    )
    if len(keep) == len(quasi_identifiers):
        st.info("Leave at least one quasi-identifier that may be suppressed.")
        return None
    return LocalSuppression(k=k, importance=tuple(importance), keep=tuple(keep))


def _record_suppression(same, key):
    k = k_slider(
        "Leave out records in classes smaller than k",
        same.k if same is not None else 5,
        f"{key}:k",
        "Larger k: more records left out, lower risk.",
    )
    limit = choice_slider(
        "At most this share of the records (suppression limit)",
        list(LIMIT_CHOICES),
        same.limit if same is not None else 0.05,
        f"{key}:limit",
        "If more records than this are in small classes, the step says it cannot reach k: "
        "coarsen the quasi-identifiers first.",
    )
    return RecordSuppression(k=k, limit=float(limit))


def _subsample(same, key, original, seed):
    fraction = choice_slider(
        "Share of the records released (sampling fraction)",
        list(FRACTION_CHOICES),
        same.fraction if same is not None else 0.5,
        f"{key}:fraction",
        "Smaller samples: an intruder is less sure a match is in the file (lower open-data "
        "risk), but the model has fewer records.",
    )
    options = [
        c for c in original.columns if n_levels(original[c], dropna=False) <= MAX_LEVELS_LISTED
    ]
    strata = columns_choice(
        "Stratify by (optional)",
        options,
        same.strata if same else (),
        f"{key}:strata",
        "The same share is drawn from each combination of these columns' values, so "
        "their distribution is kept (e.g. the outcome).",
    )
    return Subsample(fraction=float(fraction), strata=tuple(strata), seed=seed)


def _is_birth(column: str) -> bool:
    """Whether a column's name says it holds dates of birth."""
    return "birth" in column.lower() or column.lower() in ("dob", "bdate")


def _birth_default(dates: list[str]) -> str | None:
    named = [c for c in dates if _is_birth(c)]
    return named[0] if named else None


def _age_at(same, key, dates):
    if len(dates) < 2:
        st.info("This needs two date columns: the date of birth and a reference date.")
        return None
    k_birth = init_key(
        f"{key}:column", same.column if same else (_birth_default(dates) or dates[0])
    )
    birth = st.selectbox(
        "Date of birth", dates, key=k_birth, format_func=literal,
        help="Released in its place as the age.",
    )  # fmt: skip
    references = [c for c in dates if c != birth]
    k_ref = init_key(f"{key}:reference", same.reference if same else references[0])
    if st.session_state[k_ref] not in references:
        st.session_state[k_ref] = references[0]
    reference = st.selectbox(
        "Age at", references, key=k_ref, format_func=literal,
        help="The date at which the age is counted (an admission, a randomisation).",
    )  # fmt: skip
    k_first = init_key(f"{key}:first", same.first if same else True)
    first = st.checkbox(
        "At the person's first of these dates (one age per person)",
        key=k_first,
        help="Otherwise each row's own date: a person's age may then change from visit to "
        "visit, which tells the intruder more about the birthday.",
    )
    width = choice_slider(
        "Age in bands of (years)",
        [1, 2, 5, 10],
        same.width if same else 1,
        f"{key}:width",
        "1: whole years; wider bands are released as their lower end.",
    )
    k_top = init_key(f"{key}:top", same.top_code is not None if same else True)
    top = st.checkbox(
        "Pool ages of 90 and over as 90 (HIPAA Safe Harbor)",
        key=k_top,
        help="Safe Harbor allows ages over 89 only as one category, 90 or older.",
    )
    top_code = 90 if top else None
    return AgeAt(
        column=birth, reference=reference, first=first, width=int(width), top_code=top_code
    )


def _relative_dates(same, key, dates, quasi_identifiers):
    if not dates:
        st.info("No column holds dates.")
        return None
    events = [c for c in dates if not _is_birth(c)] or dates  # a birth date is not an event
    preferred = [c for c in events if c in quasi_identifiers] or events
    columns = columns_choice(
        "Dates released as days since the anchor",
        dates,
        list(same.columns) if same else preferred,
        f"{key}:columns",
        "Each person's order of events and every interval between them stay exact.",
    )
    anchors = ["first", *dates]
    k_anchor = init_key(f"{key}:anchor", same.anchor if same else "first")
    if st.session_state[k_anchor] not in anchors:
        st.session_state[k_anchor] = "first"
    anchor = st.selectbox(
        "Anchor (day 0)",
        anchors,
        key=k_anchor,
        format_func=lambda c: "the person's first of these dates" if c == "first" else literal(c),
        help="The person's earliest date in the chosen column (or among the listed dates).",
    )
    anchor_as = "hidden"
    if anchor != "first" and anchor not in columns:
        k_as = init_key(f"{key}:anchor_as", same.anchor_as if same else "year")
        anchor_as = st.radio(
            f"Release {literal(anchor)} as",
            ANCHOR_RELEASES,
            key=k_as,
            horizontal=True,
            format_func=ANCHOR_AS_LABELS.__getitem__,
            help="The anchor itself, generalised, or missing.",
        )
    if not columns:
        st.info("Choose the dates to release as days.")
        return None
    return RelativeDates(columns=tuple(columns), anchor=anchor, anchor_as=anchor_as)


#: How same-day events are numbered, as the radio shows it.
TIE_LABELS = {"first": "in the file's order", "same": "the same number"}


def _output_column(label, same_name, quasi_identifiers, hints, key, help_text, fallback=None):
    """A quasi-identifier to hold a derived column: the step's, else one whose name has a
    hint, else ``fallback`` when it is one, else the first."""
    if not quasi_identifiers:
        st.info("Mark the column that will hold it as a quasi-identifier (Data page).")
        return None
    named = [c for c in quasi_identifiers if any(h in c.lower() for h in hints)]
    if fallback in quasi_identifiers:
        named.append(fallback)
    k_name = init_key(key, same_name or (named[0] if named else quasi_identifiers[0]))
    if st.session_state[k_name] not in quasi_identifiers:
        st.session_state[k_name] = quasi_identifiers[0]
    return st.selectbox(
        literal(label),
        list(quasi_identifiers),
        key=k_name,
        format_func=literal,
        help=literal(help_text),
    )


def _interval(same, key, dates, quasi_identifiers):
    if len(dates) < 2:
        st.info("This needs two date columns: a start and an end.")
        return None
    events = [c for c in dates if not _is_birth(c)] or dates
    k_start = init_key(f"{key}:start", same.start if same else events[0])
    if st.session_state[k_start] not in dates:
        st.session_state[k_start] = dates[0]
    start = st.selectbox("From", dates, key=k_start, format_func=literal)
    ends = [c for c in dates if c != start]
    later = [c for c in events if c != start]
    k_end = init_key(f"{key}:end", same.end if same else (later or ends)[0])
    if st.session_state[k_end] not in ends:
        st.session_state[k_end] = ends[0]
    end = st.selectbox("To", ends, key=k_end, format_func=literal)
    name = _output_column(
        "Released in",
        same.name if same else None,
        quasi_identifiers,
        ("stay", "los", "duration", "interval", "days"),
        f"{key}:name",
        "Its values are replaced by the whole days from the first date to the second (by "
        "default the second date itself, unless a quasi-identifier is named for a stay).",
        fallback=end,
    )
    if name is None:
        return None
    return Interval(start=start, end=end, name=name)


def _event_order(same, key, dates, quasi_identifiers):
    if not dates:
        st.info("No column holds dates.")
        return None
    events = [c for c in dates if not _is_birth(c)] or dates
    k_column = init_key(f"{key}:column", same.column if same else events[0])
    if st.session_state[k_column] not in dates:
        st.session_state[k_column] = dates[0]
    column = st.selectbox("Events in date order of", dates, key=k_column, format_func=literal)
    name = _output_column(
        "Released in",
        same.name if same else None,
        quasi_identifiers,
        ("visit", "order", "number", "episode"),
        f"{key}:name",
        "Its values are replaced by 1, 2, ... per person (the date column itself may hold it).",
        fallback=column,
    )
    k_ties = init_key(f"{key}:ties", same.ties if same else "first")
    ties = st.radio(
        "Events on the same day are numbered",
        TIE_RULES,
        key=k_ties,
        horizontal=True,
        format_func=TIE_LABELS.__getitem__,
    )
    if name is None:
        return None
    return EventOrder(column=column, name=name, ties=ties)


def _date_shift(same, key, dates, quasi_identifiers, seed):
    if not dates:
        st.info("No column holds dates.")
        return None
    events = [c for c in dates if not _is_birth(c)] or dates  # a birth date is not an event
    preferred = [c for c in events if c in quasi_identifiers] or events
    columns = columns_choice(
        "Dates shifted (the same shift for all of a person's dates)",
        dates,
        list(same.columns) if same else preferred,
        f"{key}:columns",
        "Every listed date of a person moves by the same number of days.",
    )
    max_days = choice_slider(
        "Largest shift (days, either way)",
        list(SHIFT_SWEEP),
        same.max_days if same else 30,
        f"{key}:max_days",
        "Wider shifts: an intruder's true date matches more released ones (lower risk), but "
        "calendar effects (season, weekday) blur.",
    )
    if not columns:
        st.info("Choose the dates to shift.")
        return None
    return DateShift(columns=tuple(columns), max_days=int(max_days), seed=seed)
