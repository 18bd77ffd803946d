"""Widgets: the per-method masking controls (one method selector per column plus that method's
inputs), the replicates slider and the CSV download of a table.

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

from dashboard import state
from dashboard.help import metric_help
from deid_core.errors import RecipeError
from deid_core.masking import (
    AbsoluteRound,
    DateReduce,
    GaussianNoise,
    IntervalGroup,
    KernelSmooth,
    MaskingStep,
    MergeLevels,
    RelativeRound,
    TopBottomCode,
    Truncate,
    UniformNoise,
    ZipToThreeDigits,
)
from deid_core.masking.geography import zip_text
from deid_core.masking.grouping import RELEASE_FORMS, nice_widths
from deid_core.utility import MAX_REPLICATES

METHODS: dict[str, str] = {
    "none": "No masking",
    "relative_round": "Relative rounding (significant digits)",
    "absolute_round": "Absolute rounding (decimals)",
    "truncate": "Truncation (drop digits)",
    "interval_group": "Interval grouping",
    "top_bottom_code": "Top/bottom coding",
    "uniform_noise": "Uniform noise",
    "gaussian_noise": "Gaussian noise",
    "merge_levels": "Merge levels (categorical)",
    "date_reduce": "Date to year / month",
    "zip3": "ZIP code to 3 digits (Safe Harbor)",
}

NUMERIC_METHODS = (
    "relative_round",
    "absolute_round",
    "truncate",
    "interval_group",
    "top_bottom_code",
    "uniform_noise",
    "gaussian_noise",
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
    "merge_levels": "Merge categories into broader ones (e.g. 5-year into 10-year age groups).",
    "date_reduce": "Keep only the year (or year and month) of a date.",
    "zip3": (
        "Keep the first 3 digits of a US ZIP code, as HIPAA Safe Harbor allows; the 17 "
        "prefixes of areas of 20,000 people or fewer become 000."
    ),
}

SD_FRACTIONS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)
MAX_LEVELS_LISTED = 200
MAX_MERGE_GROUPS = 5


@dataclass(frozen=True)
class EditorResult:
    """What the controls of one column ask for: a step (None: no masking), or an error to
    show (the recipe then keeps its previous step), or a note while input is incomplete."""

    step: MaskingStep | None
    error: str | None = None
    note: str | None = None


# ---------------------------------------------------------------------------- helpers
def _init(key: str, value: Any) -> str:
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


def _numeric(series: pd.Series) -> np.ndarray:
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    return values[np.isfinite(values)]


def _looks_like_dates(series: pd.Series) -> bool:
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return True
    if pd.api.types.is_numeric_dtype(series.dtype):
        return False
    sample = series.dropna().astype(str).head(200)
    if sample.empty:
        return False
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


def _methods_for(series: pd.Series) -> list[str]:
    """The methods that make sense for a column of this type."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return ["none", "merge_levels"]
    zip_codes = ["zip3"] if _looks_like_zip_codes(series) else []
    if pd.api.types.is_numeric_dtype(series.dtype):
        methods = ["none", *NUMERIC_METHODS]
        if series.nunique(dropna=True) <= MAX_LEVELS_LISTED:
            methods.append("merge_levels")
        return methods + zip_codes
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return ["none", "date_reduce"]
    methods = ["none", "merge_levels"]
    if _looks_like_dates(series):
        methods.append("date_reduce")
    return methods + zip_codes


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
def step_editor(
    column: str,
    series: pd.Series,
    current: MaskingStep | None,
    prefix: str,
    seed: int,
) -> EditorResult:
    """Draw the method selector and its inputs for ``column``; return the step they define.
    A smoothed column is shown, not edited: smoothing is set for several columns at once on
    the Smoothing page."""
    if isinstance(current, KernelSmooth):
        st.info(f"Set on the Smoothing page: {current.describe()}.", icon=":material/blur_on:")
        return EditorResult(current)
    methods = _methods_for(series)
    current_method = current.method if current is not None else "none"
    if current_method not in methods:
        methods.append(current_method)
    method_key = _init(f"{prefix}:method", current_method)
    if st.session_state[method_key] not in methods:
        st.session_state[method_key] = "none"
    method = st.selectbox(
        "Masking method",
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
        st.info(f"Kept as set in the recipe: {same.describe()}.")
        return EditorResult(same)
    editor = _EDITORS[method]
    try:
        return editor(column, series, same, f"{prefix}:{method}", seed)
    except RecipeError as error:
        return EditorResult(None, error=str(error))


def _relative_round(column, series, same, key, seed) -> EditorResult:
    digits = same.digits if same is not None else 2
    k = _init(f"{key}:digits", digits)
    value = st.slider(
        "Significant digits",
        min_value=1,
        max_value=max(5, int(st.session_state[k])),
        step=1,
        key=k,
        help="Fewer digits: coarser values, larger equivalence classes, lower risk.",
    )
    return EditorResult(RelativeRound(column, digits=int(value)))


def _decimals_editor(cls: type, label: str) -> Callable[..., EditorResult]:
    def editor(column, series, same, key, seed) -> EditorResult:
        decimals = same.decimals if same is not None else _default_decimals(series)
        k = _init(f"{key}:decimals", decimals)
        value = st.slider(
            label,
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


def _choice_slider(label: str, options: list, default, key: str, help_text: str):
    """A select-slider over ``options`` (plus ``default``), its value kept in session state."""
    options = _with(options, default)
    k = _init(key, default)
    if st.session_state[k] not in options:
        st.session_state[k] = default
    return st.select_slider(label, options=options, key=k, format_func=_fmt, help=help_text)


def _interval_group(column, series, same, key, seed) -> EditorResult:
    widths = nice_widths(series)
    width = same.width if same is not None else widths[len(widths) // 2]
    chosen = _choice_slider(
        "Interval width",
        widths,
        width,
        f"{key}:width",
        "Wider intervals: larger classes and lower risk, but coarser values.",
    )
    k_origin = _init(f"{key}:origin", float(same.origin) if same is not None else 0.0)
    origin = st.number_input(
        "Origin (where the first interval starts)",
        key=k_origin,
        format="%g",
        help="Intervals are [origin + i x width, origin + (i + 1) x width).",
    )
    k_release = _init(f"{key}:release", same.release if same is not None else "midpoint")
    release = st.radio(
        "Release each value as",
        RELEASE_FORMS,
        key=k_release,
        horizontal=True,
        format_func={
            "label": "interval label",
            "midpoint": "midpoint",
            "mean": "mean of its interval",
        }.__getitem__,
        help="A label makes the column text (the model then cannot use it as a number).",
    )
    return EditorResult(
        IntervalGroup(column, width=float(chosen), origin=float(origin), release=release)
    )


def _top_bottom(column, series, same, key, seed) -> EditorResult:
    values = _numeric(series)
    high = float(f"{np.quantile(values, 0.99):.3g}") if values.size else 0.0
    low = float(f"{np.quantile(values, 0.01):.3g}") if values.size else 0.0
    use_top = _init(f"{key}:use_top", same.top is not None if same is not None else True)
    use_bottom = _init(f"{key}:use_bottom", same.bottom is not None if same is not None else False)
    k_top = _init(f"{key}:top", float(same.top) if same and same.top is not None else high)
    k_bottom = _init(
        f"{key}:bottom", float(same.bottom) if same and same.bottom is not None else low
    )
    left, right = st.columns(2)
    with left:
        top_on = st.checkbox("Top-code", key=use_top, help="Values above the cut become the cut.")
        top = st.number_input("Top cut", key=k_top, format="%g", disabled=not top_on)
    with right:
        bottom_on = st.checkbox(
            "Bottom-code", key=use_bottom, help="Values below the cut become the cut."
        )
        bottom = st.number_input("Bottom cut", key=k_bottom, format="%g", disabled=not bottom_on)
    if not top_on and not bottom_on:
        return EditorResult(None, note="Tick a top or a bottom cut to apply top/bottom coding.")
    return EditorResult(
        TopBottomCode(
            column,
            top=float(top) if top_on else None,
            bottom=float(bottom) if bottom_on else None,
        )
    )


def _floor_inputs(series, same, key) -> float | None:
    values = _numeric(series)
    non_negative = bool(values.size) and float(values.min()) >= 0
    default_floor = 0.0 if non_negative or not values.size else float(f"{values.min():.3g}")
    use = _init(f"{key}:use_floor", (same.floor is not None) if same is not None else non_negative)
    k_floor = _init(
        f"{key}:floor", float(same.floor) if same and same.floor is not None else default_floor
    )
    on = st.checkbox(
        "Floor: set values below a floor to the floor",
        key=use,
        help="Cologne et al. set negative noisy doses to 0.",
    )
    floor = st.number_input("Floor", key=k_floor, format="%g", disabled=not on)
    return float(floor) if on else None


def _uniform_noise(column, series, same, key, seed) -> EditorResult:
    values = _numeric(series)
    sd = float(np.std(values, ddof=1)) if values.size > 1 else 1.0
    sd = sd if sd > 0 else 1.0
    options = _nice_series(sd / 1000, sd)
    default = same.half_width if same is not None else max(v for v in options if v <= sd / 10)
    half_width = _choice_slider(
        "Noise half-width a (noise uniform on [-a, a])",
        options,
        default,
        f"{key}:half_width",
        f"In the column's units (its SD is {sd:.3g}). Wider noise: lower risk, more bias.",
    )
    floor = _floor_inputs(series, same, key)
    return EditorResult(UniformNoise(column, half_width=float(half_width), floor=floor, seed=seed))


def _gaussian_noise(column, series, same, key, seed) -> EditorResult:
    default = same.sd_fraction if same is not None else 0.1
    fraction = _choice_slider(
        "Noise SD as a fraction of the column's SD",
        list(SD_FRACTIONS),
        default,
        f"{key}:sd_fraction",
        "Larger fraction: lower risk, more attenuation of the slope.",
    )
    floor = _floor_inputs(series, same, key)
    return EditorResult(GaussianNoise(column, sd_fraction=float(fraction), floor=floor, seed=seed))


def _merge_levels(column, series, same, key, seed) -> EditorResult:
    present = series.dropna()
    levels = sorted({str(v) for v in present.unique()}, key=_level_sort_key)
    if len(levels) > MAX_LEVELS_LISTED:
        return EditorResult(
            None,
            error=(
                f"'{column}' has {len(levels)} levels, too many to merge by hand here; use "
                "interval grouping for numbers, or recode the column before uploading."
            ),
        )
    existing = list(same.groups) if same is not None else []
    k_n = _init(f"{key}:n_groups", max(1, len(existing)))
    n_groups = st.number_input(
        "Number of merged groups", min_value=1, max_value=MAX_MERGE_GROUPS, step=1, key=k_n
    )
    groups: dict[str, list[str]] = {}
    taken: set[str] = set()
    for g in range(int(n_groups)):
        label0, chosen0 = existing[g] if g < len(existing) else ("", ())
        k_levels = _init(f"{key}:levels{g}", [v for v in chosen0 if v in levels])
        k_label = _init(f"{key}:label{g}", label0)
        st.session_state[k_levels] = [
            v for v in st.session_state[k_levels] if v in levels and v not in taken
        ]
        chosen = st.multiselect(
            f"Levels to merge (group {g + 1})",
            [v for v in levels if v not in taken],
            key=k_levels,
            help="These levels are all released as the new label.",
        )
        label = st.text_input(
            f"New label (group {g + 1})",
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


def _level_sort_key(text: str) -> tuple:
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text)


def _date_reduce(column, series, same, key, seed) -> EditorResult:
    k = _init(f"{key}:to", same.to if same is not None else "year")
    to = st.radio(
        "Keep",
        ("year", "year-month"),
        key=k,
        horizontal=True,
        format_func={"year": "year only", "year-month": "year and month"}.__getitem__,
    )
    return EditorResult(DateReduce(column, to=to))


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
    "zip3": lambda column, series, same, key, seed: EditorResult(ZipToThreeDigits(column)),
}


# ---------------------------------------------------------------------------- other widgets
def replicates_slider(label: str, disabled: bool = False) -> None:
    """The session's number of replicates for random masking (1..500), shared by all pages."""
    st.slider(
        label,
        min_value=1,
        max_value=MAX_REPLICATES,
        **state.bound_to_setting("replicates"),
        help=metric_help("replicates"),
        disabled=disabled,
    )


def csv_download(label: str, table: pd.DataFrame, file_name: str, help_text: str | None = None):
    """A button that downloads ``table`` as CSV (built in memory, full precision, no index)."""
    st.download_button(
        label,
        table.to_csv(index=False).encode(),
        file_name=file_name,
        mime="text/csv",
        help=help_text,
    )
