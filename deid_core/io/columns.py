"""What a column holds: its natural type when read, and its profile (kind and counts).

:func:`natural_type` gives a column read from a file its natural type:

- in text cells, surrounding spaces are removed and the markers in ``MISSING_MARKERS`` become
  missing values;
- a text column whose every non-missing entry is a standard number (``12``, ``-0.5``, ``1e3``)
  becomes numeric, unless some entry has a leading zero (``"01234"``: a code such as a postcode,
  kept as text); a column that is mostly numbers with a few other entries (``"<0.1"``) stays
  text, and :func:`profile_columns` / :func:`deid_core.io.roles.validate_column_for_role`
  report it;
- a text column of ISO dates (``2020-03-31``, optionally with a time) becomes a date column;
- true/false columns become 0/1; categorical columns (Stata value labels) become plain text.

:func:`profile_columns` describes each column without showing any value.
"""

import re
from dataclasses import dataclass

import pandas as pd

MISSING_MARKERS = ("", "NA", "N/A", "n/a", "NaN", "nan", "NULL", "null", ".")
"""Text cells read as missing values (after removing surrounding spaces)."""

COLUMN_KINDS = ("numeric", "categorical", "date", "text")
CATEGORICAL_MAX_LEVELS = 50
"""A text column with at most this many distinct values is profiled as categorical."""
HIGH_CARDINALITY_SHARE = 0.9
"""A non-numeric column is high-cardinality when its distinct values exceed this share of rows."""

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?$")
_LEADING_ZERO_CODE = re.compile(r"^0\d")


@dataclass(frozen=True)
class ColumnProfile:
    """What a column holds, described by counts only (never by its values).

    ``kind`` is one of ``COLUMN_KINDS``. ``high_cardinality`` is set for a non-numeric column
    whose distinct values exceed ``HIGH_CARDINALITY_SHARE`` of the rows. ``numeric_with_text``
    counts the entries that are not numbers in a text column that is otherwise mostly numbers
    (0 when that does not apply).
    """

    name: str
    kind: str
    n_missing: int
    n_distinct: int
    all_missing: bool
    one_level: bool
    high_cardinality: bool
    numeric_with_text: int


# --- names ---------------------------------------------------------------------------------


def name_words(name: str) -> set[str]:
    """Lower-case words of a column name, split at non-letters and at camel-case humps
    (``PatientID`` and ``patient_id`` both give ``patient``, ``id``)."""
    words = set()
    for part in re.split(r"[^A-Za-z0-9]+", name):
        for word in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", part):
            words.add(word.lower())
    return words


# --- types ---------------------------------------------------------------------------------


def natural_type(column: pd.Series) -> pd.Series:
    """Give one column its natural type (see the module docstring)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype(object)
    if pd.api.types.is_bool_dtype(column.dtype):
        return column.astype("float64" if column.isna().any() else "int64")
    if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_datetime64_any_dtype(
        column.dtype
    ):
        return column
    if isinstance(column.dtype, pd.StringDtype):
        values = column.str.strip()
    else:
        values = column.map(lambda value: value.strip() if isinstance(value, str) else value)
    values = values.mask(values.isin(MISSING_MARKERS))
    present = values.dropna()
    if present.empty:
        return values.astype("float64")
    kind = pd.api.types.infer_dtype(present, skipna=True)
    if kind == "boolean":
        return values.astype("float64" if values.isna().any() else "int64")
    as_text = present.astype(str)
    numbers = _as_numbers(values)
    if numbers is not None:
        if not as_text.str.match(_LEADING_ZERO_CODE).any():
            return numbers
    elif kind in ("datetime", "datetime64", "date") or as_text.str.match(_ISO_DATE).all():
        dates = _as_dates(values)
        if dates is not None:
            return dates
    if not isinstance(values.dtype, pd.StringDtype):
        values = values.map(lambda value: value if pd.isna(value) else str(value))
    return values.astype("str")


def _as_numbers(values: pd.Series) -> pd.Series | None:
    """``values`` as int64 or float64 when every present entry is a standard number, else None.

    Text is cast with pyarrow (fast, exact for integers, stops at the first non-number); other
    object columns (Excel cells) go through ``pd.to_numeric``.
    """
    if isinstance(values.dtype, pd.StringDtype):
        for dtype in ("int64", "float64"):
            try:
                return values.astype(dtype)
            except (ValueError, TypeError, OverflowError):
                continue
        return None
    try:
        return pd.to_numeric(values)
    except (ValueError, TypeError):
        return None


def _as_dates(values: pd.Series) -> pd.Series | None:
    """``values`` as datetimes (ISO text or date objects), or None when they do not convert."""
    try:
        return pd.to_datetime(values, format="ISO8601")
    except (ValueError, TypeError, OverflowError):
        return None


def numeric_columns(frame: pd.DataFrame) -> list[str]:
    """The columns that hold numbers (true/false columns excluded), in order."""
    return [
        c
        for c in frame.columns
        if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
    ]


# --- profiling -----------------------------------------------------------------------------


def profile_columns(frame: pd.DataFrame) -> list[ColumnProfile]:
    """Describe every column of ``frame`` (in order) by its kind and counts, without values."""
    return [profile_column(str(name), frame[name]) for name in frame.columns]


def profile_column(name: str, column: pd.Series) -> ColumnProfile:
    """Profile one column (see :class:`ColumnProfile`)."""
    n_rows = len(column)
    n_missing = int(column.isna().sum())
    n_distinct = int(column.nunique(dropna=True))
    kind = _column_kind(column, n_distinct)
    return ColumnProfile(
        name=name,
        kind=kind,
        n_missing=n_missing,
        n_distinct=n_distinct,
        all_missing=n_missing == n_rows,
        one_level=n_distinct == 1,
        high_cardinality=kind != "numeric" and n_distinct > HIGH_CARDINALITY_SHARE * n_rows,
        numeric_with_text=_count_text_among_numbers(column),
    )


def _column_kind(column: pd.Series, n_distinct: int) -> str:
    """One of ``COLUMN_KINDS``: text columns are categorical up to ``CATEGORICAL_MAX_LEVELS``
    distinct values, or while at most half of their entries are distinct."""
    if pd.api.types.is_numeric_dtype(column.dtype):
        return "numeric"
    if pd.api.types.is_datetime64_any_dtype(column.dtype):
        return "date"
    n_present = int(column.notna().sum())
    if n_distinct <= CATEGORICAL_MAX_LEVELS or n_distinct <= n_present / 2:
        return "categorical"
    return "text"


def _count_text_among_numbers(column: pd.Series) -> int:
    """Entries that are not numbers, in a non-numeric column whose entries are mostly numbers.

    Returns 0 for numeric and date columns, and for columns where numbers are not the majority.
    """
    if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_datetime64_any_dtype(
        column.dtype
    ):
        return 0
    counts = column.dropna().astype(str).value_counts()
    is_number = pd.to_numeric(counts.index.to_series(), errors="coerce").notna().to_numpy()
    n_numbers = int(counts[is_number].sum())
    n_text = int(counts.sum()) - n_numbers
    return n_text if n_numbers > n_text else 0
