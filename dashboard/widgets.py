"""Widgets: the per-method masking controls (one method selector per column plus that method's
inputs), the replicates slider, the CSV download of a table and the effect-measure metric (the
whole-data steps' controls are in :mod:`dashboard.data_step_widgets`).

Each widget's value lives under a key derived from a prefix (``mask.<epoch>.<column>``); it is
initialised from the column's current step the first time it is drawn, so the recipe stays
the single source of truth and widgets never fight it. Every input is a standard, keyboard
usable Streamlit widget.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import downloads, state
from dashboard.help import metric_help
from dashboard.text import literal
from deid_core.errors import RecipeError
from deid_core.io.export import to_bytes
from deid_core.masking import (
    AbsoluteRound,
    CodePrefix,
    DateReduce,
    GaussianNoise,
    HierarchyLevel,
    Icd10Chapter,
    IntervalGroup,
    KernelSmooth,
    MaskingStep,
    MergeLevels,
    Microaggregate,
    Pram,
    RelativeRound,
    TopBottomCode,
    Truncate,
    UniformNoise,
    ZipToThreeDigits,
    hierarchy_from_csv,
)
from deid_core.masking.categorical import DATE_PRECISIONS
from deid_core.masking.geography import zip_text
from deid_core.masking.grouping import RELEASE_FORMS, nice_widths
from deid_core.masking.microaggregation import AGGREGATES
from deid_core.utility import MAX_REPLICATES
from deid_core.utility.effects import EffectMeasure

METHODS: dict[str, str] = {
    "none": "No masking",
    "relative_round": "Relative rounding (significant digits)",
    "absolute_round": "Absolute rounding (decimals)",
    "truncate": "Truncation (drop digits)",
    "interval_group": "Interval grouping",
    "top_bottom_code": "Top/bottom coding",
    "uniform_noise": "Uniform noise",
    "gaussian_noise": "Gaussian noise",
    "microaggregate": "Microaggregation (MDAV)",
    "merge_levels": "Merge levels (categorical)",
    "pram": "PRAM (random change of category)",
    "date_reduce": "Date to year / quarter / month / week",
    "zip3": "ZIP code to 3 digits (Safe Harbor)",
    "code_prefix": "Code to its first characters (hierarchy)",
    "icd10_chapter": "ICD-10 code to its chapter",
    "hierarchy": "Hierarchy file (ARX), by level",
}

NUMERIC_METHODS = (
    "relative_round",
    "absolute_round",
    "truncate",
    "interval_group",
    "top_bottom_code",
    "uniform_noise",
    "gaussian_noise",
    "microaggregate",
)

METHOD_HELP: dict[str, str] = {
    "none": "Released as it is.",
    "relative_round": (
        "Round to a number of significant digits: the same relative precision at every size; "
        "preferred for skewed exposures such as dose (Cologne et al.)."
    ),
    "absolute_round": (
        "Round to a fixed number of decimals (negative: tens, hundreds...). Loses more "
        "relative precision near zero than relative rounding."
    ),
    "truncate": "Drop digits toward zero (e.g. ages to whole years). Biased toward zero.",
    "interval_group": (
        "Group values into intervals of a fixed width; release the label, the midpoint or the "
        "mean of the values in each interval. Gives Berkson-type error."
    ),
    "top_bottom_code": "Replace values beyond a cut by the cut (e.g. every age over 90 as 90).",
    "uniform_noise": (
        "Add random noise, uniform on [-a, a]. Unbiased on average but attenuates slopes; "
        "utility is averaged over random replicates."
    ),
    "gaussian_noise": (
        "Add normal noise with SD = fraction x SD of the column. Attenuates slopes; utility is "
        "averaged over random replicates."
    ),
    "microaggregate": (
        "Sort the values into groups of k similar ones (MDAV; the last group k to 2k-1) and "
        "release each group's mean or median: every released value is shared by k records."
    ),
    "merge_levels": "Merge categories into broader ones (e.g. 5-year into 10-year age groups).",
    "pram": (
        "Post-randomisation: each value is kept with a chosen probability, otherwise changed "
        "at random to another category (evenly, or, invariant, as often as the categories "
        "occur, so expected counts do not change)."
    ),
    "date_reduce": (
        "Keep only the year, quarter, month or ISO week of a date. To keep the order and "
        "spacing of each person's dates, use the date steps under Whole data instead."
    ),
    "code_prefix": (
        "Keep the first characters of a hierarchical code (the dot not counted): ICD-10 to its "
        "3-character category (A41.9 -> A41), ATC to any level, ZIP codes to fewer digits."
    ),
    "icd10_chapter": (
        "Release each ICD-10 code as its chapter, named by its range of categories "
        "(J18.9 -> J00-J99, diseases of the respiratory system)."
    ),
    "hierarchy": (
        "Generalise along a hierarchy you supply, as ARX writes it: a CSV file separated by "
        "';', one row per value, the value first, then its label at each level (A41.9;A41;"
        "A00-B99;*). Level 0 releases the values as they are."
    ),
    "zip3": (
        "Keep the first 3 digits of a US ZIP code, as HIPAA Safe Harbor allows; the 17 "
        "prefixes of areas of 20,000 people or fewer become 000."
    ),
}

SD_FRACTIONS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)
MAX_LEVELS_LISTED = 200
MAX_MERGE_GROUPS = 5
#: A numeric column with at most this many values is offered PRAM (a category code).
PRAM_NUMERIC_LEVELS = 20
K_CHOICES = (2, 3, 4, 5, 6, 7, 8, 10, 11, 15, 20, 25, 30, 50)
RETENTION_CHOICES = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99)
FRACTION_CHOICES = (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9)
LIMIT_CHOICES = (0.0, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)


@dataclass(frozen=True)
class EditorResult:
    """What the controls of one column ask for: a step (None: no masking), or an error to
    show (the recipe then keeps its previous step), or a note while input is incomplete."""

    step: MaskingStep | None
    error: str | None = None
    note: str | None = None


# ---------------------------------------------------------------------------- helpers
def init_key(key: str, value: Any) -> str:
    if key not in st.session_state:
        st.session_state[key] = value
    return key


def _fmt(value: float) -> str:
    return f"{value:g}"


def _nice_series(low: float, high: float) -> list[float]:
    """1-2-5 numbers from ``low`` to ``high`` (both positive)."""
    if not (low > 0 and high >= low and math.isfinite(high)):
        return [1.0]
    out = []
    for exponent in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        for mantissa in (1, 2, 5):
            value = float(f"{mantissa * 10.0**exponent:.12g}")
            if low <= value <= high * 1.0001:
                out.append(value)
    return out or [float(f"{high:.2g}")]


def _with(options: list, value: Any) -> list:
    """``options`` with ``value`` added (sorted) when it is missing."""
    if value is None or value in options:
        return list(options)
    return sorted([*options, value])


def _fact(series: pd.Series, what: str, compute: Callable[[pd.Series], Any]) -> Any:
    """``compute(series)`` of an original column, once per data set: the editors are drawn on
    every rerun, and a statistic of a million values takes tens of milliseconds."""
    return state.SessionCache("column_facts", size=256).get(
        (series.name, what), lambda: compute(series)
    )


def n_levels(series: pd.Series, dropna: bool = True) -> int:
    """The original column's number of distinct values (missing values one more without
    ``dropna``), once per data set."""
    return _fact(series, f"levels:{dropna}", lambda s: int(s.nunique(dropna=dropna)))


def _numeric(series: pd.Series) -> np.ndarray:
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    return values[np.isfinite(values)]


def is_date_column(series: pd.Series) -> bool:
    """Whether an original column holds dates (found once per data set)."""
    return bool(_fact(series, "dates", looks_like_dates))


def looks_like_dates(series: pd.Series) -> bool:
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return True
    if pd.api.types.is_numeric_dtype(series.dtype):
        return False
    sample = series.dropna().astype(str).head(200)
    if sample.empty or sample.str.strip().str.isdigit().mean() > 0.1:
        return False  # digits alone (ZIP codes, ids) read as years by the date parser
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = pd.to_datetime(sample, errors="coerce", format="mixed")
    return bool(parsed.notna().mean() >= 0.9)


def _looks_like_zip_codes(series: pd.Series) -> bool:
    """Whether 90% of (the first 200) present values read as 5-digit ZIP codes (numbers
    from 501, the smallest ZIP code, when the column is numeric)."""
    sample = series.dropna().head(200)
    if sample.empty:
        return False
    if pd.api.types.is_numeric_dtype(sample.dtype) and not (_numeric(sample) >= 501).all():
        return False
    return bool(zip_text(sample).notna().mean() >= 0.9)


def _looks_like_codes(series: pd.Series) -> bool:
    """Whether a text column looks like a coded one: more than ``PRAM_NUMERIC_LEVELS``
    distinct values, 90% of (the first 200) present ones letters, digits and dots without
    spaces (ICD-10, ATC, ZIP codes as text)."""
    if n_levels(series) <= PRAM_NUMERIC_LEVELS:
        return False
    sample = series.dropna().head(200).astype(str).str.strip()
    return bool(sample.str.fullmatch(r"[A-Za-z0-9.\-]{2,}").mean() >= 0.9)


def _looks_like_icd10(series: pd.Series) -> bool:
    """Whether 90% of (the first 200) present values start like an ICD-10 code (a letter and
    two digits)."""
    sample = series.dropna().head(200).astype(str).str.strip()
    if sample.empty:
        return False
    return bool(sample.str.match(r"^[A-Za-z][0-9]{2}").mean() >= 0.9)


def _methods_for(series: pd.Series) -> list[str]:
    """The methods that make sense for a column of this type."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return ["none", "merge_levels", "pram"]
    zip_codes = ["zip3"] if _looks_like_zip_codes(series) else []
    if pd.api.types.is_numeric_dtype(series.dtype):
        methods = ["none", *NUMERIC_METHODS]
        levels = n_levels(series)
        if levels <= MAX_LEVELS_LISTED:
            methods += ["merge_levels", "hierarchy"]
        if levels <= PRAM_NUMERIC_LEVELS:
            methods.append("pram")
        return methods + zip_codes
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return ["none", "date_reduce"]
    methods = ["none", "merge_levels", "pram"]
    if looks_like_dates(series):
        methods.append("date_reduce")
    codes = []
    if _looks_like_codes(series):
        codes.append("code_prefix")
        if _looks_like_icd10(series):
            codes.append("icd10_chapter")
    return methods + zip_codes + codes + ["hierarchy"]


def _default_decimals(series: pd.Series) -> int:
    """Decimals that keep about three significant digits of the largest value."""
    values = np.abs(_numeric(series))
    values = values[values > 0]
    if values.size == 0:
        return 0
    return int(np.clip(2 - math.floor(math.log10(float(values.max()))), -3, 6))


def _representable(step: MaskingStep) -> bool:
    """Whether these controls can show ``step`` (a recipe written by hand may use a base or
    explicit break points, which are kept as they are)."""
    if isinstance(step, (AbsoluteRound, Truncate)):
        return step.decimals is not None and -3 <= step.decimals <= 6
    if isinstance(step, IntervalGroup):
        return step.breaks is None
    return True


# ---------------------------------------------------------------------------- editors
def for_column(label: str, column: str) -> str:
    """A control's label with the column (or whole-data step) it sets: its accessible name
    then says which of the page's many "Interval width" controls it is. ``label`` is this
    code's text; the column's name is data and shows as literal text."""
    return f"{label} for {literal(column)}"


def step_editor(
    column: str,
    series: pd.Series,
    current: MaskingStep | None,
    prefix: str,
    seed: int,
) -> EditorResult:
    """Draw the method selector and its inputs for ``column``; return the step they define.
    ``series`` is the original column (its statistics are computed once per data set). A
    smoothed column is shown, not edited: smoothing is set for several columns at once on
    the Smoothing page."""
    if isinstance(current, KernelSmooth):
        st.info(
            f"Set on the Smoothing page: {literal(current.describe())}.", icon=":material/blur_on:"
        )
        return EditorResult(current)
    methods = list(_fact(series, "methods", _methods_for))
    current_method = current.method if current is not None else "none"
    if current_method not in methods:
        methods.append(current_method)
    method_key = init_key(f"{prefix}:method", current_method)
    if st.session_state[method_key] not in methods:
        st.session_state[method_key] = "none"
    method = st.selectbox(
        for_column("Masking method", column),
        methods,
        key=method_key,
        format_func=METHODS.__getitem__,
        help="How this column is masked before it is released; the note below the box says "
        "what the chosen method does.",
    )
    st.caption(METHOD_HELP[method])
    if method == "none":
        return EditorResult(None)
    same = current if current is not None and current.method == method else None
    if same is not None and not _representable(same):
        st.info(f"Kept as set in the recipe: {literal(same.describe())}.")
        return EditorResult(same)
    editor = _EDITORS[method]
    try:
        return editor(column, series, same, f"{prefix}:{method}", seed)
    except RecipeError as error:
        return EditorResult(None, error=str(error))


def _relative_round(column, series, same, key, seed) -> EditorResult:
    digits = same.digits if same is not None else 2
    k = init_key(f"{key}:digits", digits)
    value = st.slider(
        for_column("Significant digits", column),
        min_value=1,
        max_value=max(5, int(st.session_state[k])),
        step=1,
        key=k,
        help="Fewer digits: coarser values, larger equivalence classes, lower risk.",
    )
    return EditorResult(RelativeRound(column, digits=int(value)))


def _decimals_editor(cls: type, label: str) -> Callable[..., EditorResult]:
    def editor(column, series, same, key, seed) -> EditorResult:
        decimals = (
            same.decimals if same is not None else _fact(series, "decimals", _default_decimals)
        )
        k = init_key(f"{key}:decimals", decimals)
        value = st.slider(
            for_column(literal(label), column),
            min_value=-3,
            max_value=6,
            step=1,
            key=k,
            help=(
                "Digits kept after the decimal point; 0 keeps whole numbers, -1 tens, "
                "-2 hundreds. Fewer decimals: lower risk, less precision."
            ),
        )
        return EditorResult(cls(column, decimals=int(value)))

    return editor


def choice_slider(label: str, options: list, default, key: str, help_text: str):
    """A select-slider over ``options`` (plus ``default``), its value kept in session state."""
    options = _with(options, default)
    k = init_key(key, default)
    if st.session_state[k] not in options:
        st.session_state[k] = default
    return st.select_slider(
        literal(label),
        options=options,
        key=k,
        format_func=lambda value: literal(_fmt(value)),
        help=literal(help_text),
    )


def _interval_group(column, series, same, key, seed) -> EditorResult:
    widths = _fact(series, "widths", nice_widths)
    width = same.width if same is not None else widths[len(widths) // 2]
    chosen = choice_slider(
        for_column("Interval width", column),
        widths,
        width,
        f"{key}:width",
        "Wider intervals: larger classes and lower risk, but coarser values.",
    )
    k_origin = init_key(f"{key}:origin", float(same.origin) if same is not None else 0.0)
    origin = st.number_input(
        for_column("Origin (where the first interval starts)", column),
        key=k_origin,
        format="%g",
        help="Intervals are [origin + i x width, origin + (i + 1) x width).",
    )
    k_release = init_key(f"{key}:release", same.release if same is not None else "midpoint")
    release = st.radio(
        for_column("Release each value as", column),
        RELEASE_FORMS,
        key=k_release,
        horizontal=True,
        format_func=RELEASE_FORM_LABELS.__getitem__,
        help="A label makes the column text (the model then cannot use it as a number).",
    )
    return EditorResult(
        IntervalGroup(column, width=float(chosen), origin=float(origin), release=release)
    )


def _top_bottom(column, series, same, key, seed) -> EditorResult:
    low, high = _fact(series, "cuts", _default_cuts)
    use_top = init_key(f"{key}:use_top", same.top is not None if same is not None else True)
    use_bottom = init_key(
        f"{key}:use_bottom", same.bottom is not None if same is not None else False
    )
    k_top = init_key(f"{key}:top", float(same.top) if same and same.top is not None else high)
    k_bottom = init_key(
        f"{key}:bottom", float(same.bottom) if same and same.bottom is not None else low
    )
    left, right = st.columns(2)
    with left:
        top_on, top = _cut_inputs("Top", "above", column, use_top, k_top)
    with right:
        bottom_on, bottom = _cut_inputs("Bottom", "below", column, use_bottom, k_bottom)
    if not top_on and not bottom_on:
        return EditorResult(None, note="Tick a top or a bottom cut to apply top/bottom coding.")
    return EditorResult(
        TopBottomCode(
            column,
            top=float(top) if top_on else None,
            bottom=float(bottom) if bottom_on else None,
        )
    )


def _cut_inputs(side: str, where: str, column: str, on_key: str, value_key: str):
    """(on, cut) of a top or bottom cut: a checkbox and its number."""
    on = st.checkbox(
        for_column(f"{literal(side)}-code", column),
        key=on_key,
        help=f"Values {literal(where)} the cut become the cut.",
    )
    cut = st.number_input(
        for_column(f"{literal(side)} cut", column), key=value_key, format="%g", disabled=not on
    )
    return on, cut


def _default_cuts(series: pd.Series) -> tuple[float, float]:
    """The 1st and 99th percentiles (3 significant digits): default bottom and top cuts."""
    values = _numeric(series)
    if not values.size:
        return 0.0, 0.0
    low, high = np.quantile(values, [0.01, 0.99])
    return float(f"{low:.3g}"), float(f"{high:.3g}")


def _minimum(series: pd.Series) -> float | None:
    values = _numeric(series)
    return float(values.min()) if values.size else None


def _sd(series: pd.Series) -> float:
    """The column's SD (1 when undefined or zero): the scale of the noise sliders."""
    values = _numeric(series)
    sd = float(np.std(values, ddof=1)) if values.size > 1 else 1.0
    return sd if sd > 0 else 1.0


def _floor_inputs(column, series, same, key) -> float | None:
    minimum = _fact(series, "minimum", _minimum)
    non_negative = minimum is not None and minimum >= 0
    default_floor = 0.0 if non_negative or minimum is None else float(f"{minimum:.3g}")
    use = init_key(
        f"{key}:use_floor", (same.floor is not None) if same is not None else non_negative
    )
    k_floor = init_key(
        f"{key}:floor", float(same.floor) if same and same.floor is not None else default_floor
    )
    on = st.checkbox(
        for_column("Floor: set values below a floor to the floor", column),
        key=use,
        help="Cologne et al. set negative noisy doses to 0.",
    )
    floor = st.number_input(for_column("Floor", column), key=k_floor, format="%g", disabled=not on)
    return float(floor) if on else None


def _uniform_noise(column, series, same, key, seed) -> EditorResult:
    sd = _fact(series, "sd", _sd)
    options = _nice_series(sd / 1000, sd)
    default = same.half_width if same is not None else max(v for v in options if v <= sd / 10)
    half_width = choice_slider(
        for_column("Noise half-width a (noise uniform on [-a, a])", column),
        options,
        default,
        f"{key}:half_width",
        f"In the column's units (its SD is {sd:.3g}). Wider noise: lower risk, more bias.",
    )
    floor = _floor_inputs(column, series, same, key)
    rounded = _noise_precision_input(column, same, key)
    return EditorResult(
        UniformNoise(
            column,
            half_width=float(half_width),
            floor=floor,
            seed=seed,
            round_to_noise_scale=rounded,
        )
    )


def _gaussian_noise(column, series, same, key, seed) -> EditorResult:
    default = same.sd_fraction if same is not None else 0.1
    fraction = choice_slider(
        for_column("Noise SD as a fraction of the column's SD", column),
        list(SD_FRACTIONS),
        default,
        f"{key}:sd_fraction",
        "Larger fraction: lower risk, more attenuation of the slope.",
    )
    floor = _floor_inputs(column, series, same, key)
    rounded = _noise_precision_input(column, same, key)
    return EditorResult(
        GaussianNoise(
            column,
            sd_fraction=float(fraction),
            floor=floor,
            seed=seed,
            round_to_noise_scale=rounded,
        )
    )


def _noise_precision_input(column, same, key) -> bool:
    """Whether noisy values are released rounded to the noise's scale (on for a new step)."""
    rounded = init_key(f"{key}:round_to_noise_scale", same.round_to_noise_scale if same else True)
    return st.checkbox(
        for_column("Round the noisy values to the noise's scale", column),
        key=rounded,
        help="Noisy values carry digits that say nothing and show that noise was added (130 "
        "with noise of ±5 becomes 127.3816...). Rounded to the power of ten at or below a fifth "
        "of the noise's reach (the half-width, or 2 SD): ±5 gives whole numbers, ±0.5 one "
        "decimal. Rounding after the noise never tells an intruder more, and the risk figures "
        "allow for it (the matching tolerance grows by half the rounding base).",
    )


def _merge_levels(column, series, same, key, seed) -> EditorResult:
    levels = _fact(series, "levels", _levels)
    if len(levels) > MAX_LEVELS_LISTED:
        return EditorResult(
            None,
            error=(
                f"'{column}' has {len(levels)} levels, too many to merge by hand here; use "
                "interval grouping for numbers, or recode the column before uploading."
            ),
        )
    existing = list(same.groups) if same is not None else []
    k_n = init_key(f"{key}:n_groups", max(1, len(existing)))
    n_groups = st.number_input(
        for_column("Number of merged groups", column),
        min_value=1,
        max_value=MAX_MERGE_GROUPS,
        step=1,
        key=k_n,
    )
    groups: dict[str, list[str]] = {}
    taken: set[str] = set()
    for g in range(int(n_groups)):
        label0, chosen0 = existing[g] if g < len(existing) else ("", ())
        k_levels = init_key(f"{key}:levels{g}", [v for v in chosen0 if v in levels])
        k_label = init_key(f"{key}:label{g}", label0)
        st.session_state[k_levels] = [
            v for v in st.session_state[k_levels] if v in levels and v not in taken
        ]
        chosen = st.multiselect(
            for_column(f"Levels to merge (group {g + 1:d})", column),
            [v for v in levels if v not in taken],
            key=k_levels,
            help="These levels are all released as the new label.",
        )
        label = st.text_input(
            for_column(f"New label (group {g + 1:d})", column),
            key=k_label,
            placeholder="e.g. 40-59",
            help="Left empty, the label joins the merged levels with '+'.",
        )
        if chosen:
            name = label.strip() or "+".join(chosen)
            if name in groups:
                return EditorResult(None, error="Two merged groups have the same new label.")
            groups[name] = list(chosen)
            taken.update(chosen)
    if not groups:
        return EditorResult(None, note="Choose the levels to merge.")
    return EditorResult(MergeLevels(column, groups=groups))


def _levels(series: pd.Series) -> list[str]:
    """The column's distinct values as text, numbers in numeric order."""
    return sorted({str(v) for v in series.dropna().unique()}, key=_level_sort_key)


def _level_sort_key(text: str) -> tuple:
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text)


def _date_reduce(column, series, same, key, seed) -> EditorResult:
    k = init_key(f"{key}:to", same.to if same is not None else "year")
    to = st.radio(
        for_column("Keep", column),
        DATE_PRECISIONS,
        key=k,
        horizontal=True,
        format_func=DATE_PRECISION_LABELS.__getitem__,
    )
    return EditorResult(DateReduce(column, to=to))


def _code_prefix(column, series, same, key, seed) -> EditorResult:
    lengths = _fact(series, "code_lengths", CodePrefix(column).sweep_values)
    default = same.length if same is not None else min(3, lengths[-1])
    k = init_key(f"{key}:length", default)
    length = st.slider(
        for_column("Characters kept", column),
        min_value=1,
        max_value=max(lengths[-1], int(st.session_state[k]), 2),
        step=1,
        key=k,
        help="Each level of the code's hierarchy: fewer characters, broader groups (ICD-10: 3 "
        "keeps the category, 1 the letter).",
    )
    return EditorResult(CodePrefix(column, length=int(length)))


def _hierarchy(column, series, same, key, seed) -> EditorResult:
    """A hierarchy file (read in memory, never written to disk) and its level; a step already
    in the recipe keeps its hierarchy until another file is given."""
    upload = st.file_uploader(
        for_column("Hierarchy file (ARX format: ';' separated, one row per value)", column),
        type=["csv", "txt"],
        key=f"{key}:file",
        help="The value first, then its label at each level, as ARX exports a hierarchy. "
        "Every value of the column needs a row, and each level must merge whole groups of "
        "the level below.",
    )
    rows = same.hierarchy if same is not None else None
    if upload is not None:
        try:
            rows = hierarchy_from_csv(upload.getvalue().decode("utf-8-sig"))
        except UnicodeDecodeError:
            return EditorResult(None, error="The hierarchy file is not text (UTF-8).")
    if rows is None:
        return EditorResult(None, note="Give the column's hierarchy file.")
    depth = max(1, max(len(row) for row in rows) - 1)
    k = init_key(f"{key}:level", same.level if same is not None else 1)
    st.session_state[k] = min(int(st.session_state[k]), depth)
    level = st.slider(
        for_column("Level of the hierarchy", column),
        min_value=0,
        max_value=depth,
        step=1,
        key=k,
        help="0: the values as they are; each level up merges them into broader groups.",
    )
    return EditorResult(HierarchyLevel(column, level=int(level), hierarchy=rows))


#: How an interval step releases each value, as the radio shows it.
RELEASE_FORM_LABELS = {
    "label": "interval label",
    "midpoint": "midpoint",
    "mean": "mean of its interval",
}
#: The choices of the date step, as the radio shows them.
DATE_PRECISION_LABELS = {
    "year": "year",
    "quarter": "quarter",
    "year-month": "month",
    "week": "ISO week",
}


def columns_choice(label: str, options: list[str], default, key: str, help_text: str) -> list:
    """A multiselect of column names, initialised from ``default``; a stored choice no longer
    among the options is dropped."""
    k = init_key(key, [c for c in default if c in options])
    st.session_state[k] = [c for c in st.session_state[k] if c in options]
    return st.multiselect(literal(label), options, key=k, help=literal(help_text))


def k_slider(label: str, default: int, key: str, help_text: str) -> int:
    """A select-slider of group or class sizes k."""
    return int(choice_slider(label, list(K_CHOICES), int(default), key, help_text))


def _microaggregate(column, series, same, key, seed) -> EditorResult:
    k = k_slider(
        for_column("Group size k", column),
        same.k if same is not None else 3,
        f"{key}:k",
        "Larger groups: each released value is shared by more records (lower risk), but "
        "values move further from the truth.",
    )
    aggregate = aggregate_radio(
        same.aggregate if same is not None else "mean", f"{key}:agg", column
    )
    return EditorResult(Microaggregate(column, k=k, aggregate=aggregate))


def aggregate_radio(default: str, key: str, name: str) -> str:
    """The mean or the median of each group; ``name``: the column or step it is for."""
    k_aggregate = init_key(key, default)
    return st.radio(
        for_column("Release each group's", name),
        AGGREGATES,
        key=k_aggregate,
        horizontal=True,
        help="The mean keeps the column's mean exactly; the median resists outliers.",
    )


def _pram(column, series, same, key, seed) -> EditorResult:
    levels = n_levels(series)
    if levels > MAX_LEVELS_LISTED:
        return EditorResult(
            None,
            error=f"'{column}' has {levels} levels, too many for PRAM here; merge levels first.",
        )
    retention = choice_slider(
        for_column("Retention probability (a value is kept with this probability)", column),
        list(RETENTION_CHOICES),
        same.retention if same is not None else 0.8,
        f"{key}:retention",
        "Lower: more values change category, so an intruder cannot trust any one value "
        "(lower risk), and tables and models drift more.",
    )
    k_invariant = init_key(f"{key}:invariant", same.invariant if same is not None else True)
    invariant = st.checkbox(
        for_column("Invariant: redraw a changed value from the column's own distribution", column),
        key=k_invariant,
        help="The expected count of every category is then unchanged (invariant PRAM); "
        "otherwise a changed value goes to any other category with equal probability.",
    )
    return EditorResult(Pram(column, retention=float(retention), invariant=invariant, seed=seed))


_EDITORS: dict[str, Callable[..., EditorResult]] = {
    "relative_round": _relative_round,
    "absolute_round": _decimals_editor(AbsoluteRound, "Decimals"),
    "truncate": _decimals_editor(Truncate, "Decimals kept (truncation)"),
    "interval_group": _interval_group,
    "top_bottom_code": _top_bottom,
    "uniform_noise": _uniform_noise,
    "gaussian_noise": _gaussian_noise,
    "merge_levels": _merge_levels,
    "date_reduce": _date_reduce,
    "microaggregate": _microaggregate,
    "pram": _pram,
    "zip3": lambda column, series, same, key, seed: EditorResult(ZipToThreeDigits(column)),
    "code_prefix": _code_prefix,
    "icd10_chapter": lambda column, series, same, key, seed: EditorResult(Icd10Chapter(column)),
    "hierarchy": _hierarchy,
}


# ---------------------------------------------------------------------------- other widgets
def replicates_slider(label: str, disabled: bool = False) -> None:
    """The session's number of replicates for random masking (1..500), shared by all pages."""
    st.slider(
        literal(label),
        min_value=1,
        max_value=MAX_REPLICATES,
        **state.bound_to_setting("replicates"),
        help=metric_help("replicates"),
        disabled=disabled,
    )


def csv_download(label: str, table: pd.DataFrame, file_name: str, help_text: str | None = None):
    """A button that downloads ``table`` as CSV (built in memory at the click, full precision,
    no index, spreadsheet formulas neutralised: :func:`deid_core.io.export.to_bytes`)."""
    downloads.download_button(
        label,
        table,
        lambda frame: to_bytes(frame, "csv").data,
        name=f"csv:{file_name}:{label}",
        file_name=file_name,
        mime="text/csv",
        help=None if help_text is None else literal(help_text),
    )


def effect_metric(place: Any, label: str, measure: EffectMeasure | None) -> None:
    """An effect measure (odds, rate or hazard ratio) in ``place``: the estimate as the metric's
    value and its confidence interval on the line below, so that a narrow column never cuts the
    interval off ("1.38 (1.28 to 1…"). ``measure`` None shows "unavailable"."""
    with place:
        if measure is None:
            st.metric(literal(label), "unavailable", help=metric_help("effect"))
            return
        st.metric(literal(label), f"{measure.value:#.3g}", help=metric_help("effect"))
        st.caption(
            f"{100 * measure.level:g}% CI {measure.low:#.3g} to {measure.high:#.3g}",
            help="The Wald confidence interval of the estimate above.",
        )
