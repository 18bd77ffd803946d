"""The masked file to send, as CSV, Excel, Parquet or Stata bytes (built in memory).

:func:`export_release` takes the released frame (masked, without direct identifiers nor, by
default, the record id: :meth:`Workspace.released_frame`), optionally shuffles its rows, and
writes it in the chosen format. Shuffling matters: the masked file keeps the source's record
order, so anyone holding the source could link row i to row i and undo every masking step.
The order is drawn from a seed the caller supplies (reproducible for the caller, but the seed is
not written anywhere in the file).

Each format is written by its own rules, through its writer:

- CSV and Excel: a text cell or column name that starts with ``=``, ``+``, ``-``, ``@``, a tab
  or a carriage return is what a spreadsheet runs as a formula (CSV injection); by default it
  gets a leading ``'`` (OWASP's advice), header included (:func:`neutralise_formulas`). Text
  that is a plain number (``-5``, ``+1.5e3``) is left alone, and numbers stay numbers. Excel is
  written by xlsxwriter with its own option to store every string as text, never as a
  formula or a link.
- Stata (.dta, format 118): pandas' writer renames invalid variable names (letters, digits and
  ``_``, at most 32 characters, not a reserved word), keeps valid Unicode names ("städt"),
  writes text longer than 2045 bytes as strL, and warns of what it changed: its warnings
  become the export's notes. What it cannot take is prepared first (:func:`stata_ready`).
"""

from __future__ import annotations

import io
import re
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from deid_core.cancellation import check_cancelled
from deid_core.errors import DataError

#: Stata's limit on a fixed-width text value (format 118); longer text is written as strL.
STATA_TEXT_BYTES = 2045
EXCEL_MAX_ROWS = 1_048_575  # plus the header row
EXCEL_TEXT_LENGTH = 32_767

#: Characters that make a spreadsheet read a cell as a formula (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


@dataclass(frozen=True)
class ExportFormat:
    key: str
    label: str
    extension: str
    mime: str


FORMATS: dict[str, ExportFormat] = {
    "csv": ExportFormat("csv", "CSV", "csv", "text/csv"),
    "xlsx": ExportFormat(
        "xlsx",
        "Excel",
        "xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    "parquet": ExportFormat("parquet", "Parquet", "parquet", "application/vnd.apache.parquet"),
    "dta": ExportFormat("dta", "Stata", "dta", "application/x-stata-dta"),
}


@dataclass(frozen=True)
class Export:
    """The file's bytes, its format and what had to change to write it (Stata renames...)."""

    data: bytes
    format: ExportFormat
    n_rows: int
    columns: tuple[str, ...]
    notes: tuple[str, ...] = ()


# ---------------------------------------------------------------------------- shuffling
def shuffle_rows(frame: pd.DataFrame, seed: int | None) -> pd.DataFrame:
    """A copy of ``frame`` with its rows in a random order drawn from ``seed`` (same seed, same
    order) and a fresh 0..n-1 index, so the position cannot link back to the source."""
    order = np.random.default_rng(seed).permutation(len(frame))
    return frame.iloc[order].reset_index(drop=True)


# ---------------------------------------------------------------------------- formulas
def _is_formula(value: object) -> bool:
    return (
        isinstance(value, str)
        and value.startswith(FORMULA_STARTS)
        and not _PLAIN_NUMBER.fullmatch(value)
    )


def _neutralised(value: object) -> object:
    return "'" + value if _is_formula(value) else value


def neutralise_formulas(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """A copy in which every text cell and column name that a spreadsheet would run as a
    formula (it starts with one of :data:`FORMULA_STARTS` and is not a plain number) starts
    with ``'`` instead, and how many cells and names changed. Numbers are never touched."""
    changed = 0
    columns = []
    for name in frame.columns:
        changed += _is_formula(name)
        columns.append(_neutralised(name))
    out = frame.copy()
    for position in range(frame.shape[1]):
        series = frame.iloc[:, position]
        if isinstance(series.dtype, pd.CategoricalDtype):
            categories = series.cat.categories
            hits = sum(_is_formula(c) * int((series == c).sum()) for c in categories)
            if hits:
                out.isetitem(position, series.cat.rename_categories(categories.map(_neutralised)))
                changed += hits
        elif series.dtype == object or pd.api.types.is_string_dtype(series.dtype):
            hits = series.map(_is_formula, na_action="ignore").fillna(False).astype(bool)
            if hits.any():
                out.isetitem(position, series.map(_neutralised, na_action="ignore"))
                changed += int(hits.sum())
    out.columns = columns
    return out, changed


def _formula_note(count: int) -> str:
    return (
        f"{count:,} text cell(s) or column name(s) starting with =, +, -, @, a tab or a carriage "
        "return now start with ' so that spreadsheets show them as text instead of running "
        "them as formulas."
    )


# ---------------------------------------------------------------------------- Stata
def _is_text(value: object) -> bool:
    return isinstance(value, str)


def stata_ready(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """A copy of ``frame`` that pandas' Stata writer takes, and notes on what was changed:
    categories as their values, dates in UTC without a time zone, a column mixing text and
    other values as text, a column without any value as numeric missing. Names, true/false,
    nullable numbers, whole numbers too large for Stata and long text are left to the writer."""
    notes: list[str] = []
    out, mixed = mixed_to_text(frame)
    notes += mixed
    for position, column in enumerate(frame.columns):
        series = out.iloc[:, position]
        dtype = series.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            series = series.astype(dtype.categories.dtype)
        elif isinstance(dtype, pd.DatetimeTZDtype):
            series = series.dt.tz_convert("UTC").dt.tz_localize(None)
            notes.append(f"'{column}': dates converted to UTC without a time zone.")
        elif series.dtype == object and series.isna().all():
            series = pd.Series(np.nan, index=series.index, dtype="float64")
        else:
            continue
        out.isetitem(position, series)
    return out, notes


def _long_text_columns(frame: pd.DataFrame) -> list[object]:
    """Columns holding text longer than Stata's fixed-width limit (written as strL)."""
    found = []
    for column in frame.columns:
        series = frame[column]
        if series.dtype == object or pd.api.types.is_string_dtype(series.dtype):
            lengths = series.dropna().map(lambda v: len(str(v).encode("utf-8")))
            if len(lengths) and lengths.max() > STATA_TEXT_BYTES:
                found.append(column)
    return found


# ---------------------------------------------------------------------------- writers
#: Cells of one piece of a CSV file: pandas' own default piece
#: (``pandas.io.formats.csvs._DEFAULT_CHUNKSIZE_CELLS``). pandas formats a piece's values
#: together (a datetime column whose times are all midnight within the piece is written
#: without them), so :func:`_csv` writes exactly the pieces ``DataFrame.to_csv`` would.
CSV_PIECE_CELLS = 100_000


def _csv(frame: pd.DataFrame) -> bytes:
    """RFC 4180 line breaks (CRLF): a value holding a carriage return is then quoted, so it
    stays one field instead of splitting its row.

    Written piece by piece (``CSV_PIECE_CELLS // columns`` rows, pandas' own pieces: the
    bytes are those of one ``to_csv`` call), with
    :func:`~deid_core.cancellation.check_cancelled` before each piece, so that a file no
    longer wanted (its browser tab was closed) stops within a piece (about 0.03 s).
    """
    rows = max(1, CSV_PIECE_CELLS // max(frame.shape[1], 1))
    pieces = []
    for start in range(0, max(len(frame), 1), rows):  # an empty frame still has its header
        check_cancelled()
        piece = frame.iloc[start : start + rows]
        pieces.append(
            piece.to_csv(index=False, header=start == 0, lineterminator="\r\n", chunksize=rows)
        )
    return "".join(pieces).encode("utf-8")


def _excel(frame: pd.DataFrame) -> bytes:
    if len(frame) > EXCEL_MAX_ROWS:
        raise DataError(
            f"Excel holds at most {EXCEL_MAX_ROWS:,} records; this file has {len(frame):,}. "
            "Export as CSV or Parquet instead."
        )
    frame = frame.copy()
    for position, column in enumerate(frame.columns):
        series = frame.iloc[:, position]
        if isinstance(series.dtype, pd.DatetimeTZDtype):
            frame.isetitem(position, series.dt.tz_convert("UTC").dt.tz_localize(None))
        elif not pd.api.types.is_numeric_dtype(series.dtype) and not (
            pd.api.types.is_datetime64_any_dtype(series.dtype)
        ):
            lengths = series.dropna().astype(object).map(lambda v: len(str(v)))
            if len(lengths) and lengths.max() > EXCEL_TEXT_LENGTH:
                raise DataError(
                    f"Excel cells hold at most {EXCEL_TEXT_LENGTH:,} characters; column "
                    f"'{column}' has longer text. Export as CSV or Parquet instead."
                )
    buffer = io.BytesIO()
    # xlsxwriter's own options: every string is stored as text (never as a formula or a
    # link), and the file is assembled in memory (no temporary files).
    options = {"strings_to_formulas": False, "strings_to_urls": False, "in_memory": True}
    with pd.ExcelWriter(buffer, engine="xlsxwriter", engine_kwargs={"options": options}) as w:
        frame.to_excel(w, index=False, sheet_name="masked data")
    return buffer.getvalue()


def mixed_to_text(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """A copy in which each column mixing text with other values (numbers...) holds text only
    (missing values stay missing), and a note per such column."""
    out = frame.copy()
    notes = []
    for column in frame.columns:
        series = frame[column]
        if series.dtype != object:
            continue
        present = series.dropna()
        kinds = {type(v) for v in present}
        if len(kinds) > 1 and str in kinds:
            out[column] = series.map(lambda v: v if _is_text(v) or pd.isna(v) else str(v))
            notes.append(f"'{column}' mixes text and other values: written as text.")
    return out, notes


def _parquet(frame: pd.DataFrame) -> tuple[bytes, list[str]]:
    frame, notes = mixed_to_text(frame)
    buffer = io.BytesIO()
    try:
        frame.to_parquet(buffer, index=False, engine="pyarrow")
    except (ValueError, TypeError, ImportError) as error:
        raise DataError(
            "Parquet cannot hold these data (a column has values of an unsupported type). "
            "Export as CSV instead."
        ) from error
    return buffer.getvalue(), notes


def _stata(frame: pd.DataFrame) -> tuple[bytes, list[str]]:
    ready, notes = stata_ready(frame)
    buffer = io.BytesIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            ready.to_stata(
                buffer, write_index=False, version=118, convert_strl=_long_text_columns(ready)
            )
        except (ValueError, TypeError) as error:  # pandas' own checks; messages name columns
            raise DataError(
                "Stata cannot hold these data (a column has an unsupported type). Export as "
                "CSV, Excel or Parquet instead."
            ) from error
    data = buffer.getvalue()
    for warning in caught:
        if issubclass(warning.category, pd.errors.InvalidColumnName):
            notes.append(_renamed_note(frame, data))
        elif issubclass(warning.category, pd.errors.PossiblePrecisionLoss):
            notes.append(
                "Whole numbers too large for Stata's long type are written as doubles (exact "
                "up to 2^53)."
            )
        else:  # any other adjustment the writer reports, in its first line
            notes.append(str(warning.message).strip().split("\n")[0])
    return data, list(dict.fromkeys(notes))


def _renamed_note(frame: pd.DataFrame, data: bytes) -> str:
    """The names the Stata writer changed, read back from the file's header."""
    with pd.read_stata(io.BytesIO(data), iterator=True) as reader:
        written = list(reader.variable_labels())
    renamed = [
        f"'{old}' -> '{new}'"
        for old, new in zip(frame.columns, written, strict=True)
        if str(old) != new
    ]
    return (
        "Stata variable names are letters (any script), digits and _ (at most 32 characters, "
        "not starting with a digit, not a reserved word); renamed: " + ", ".join(renamed) + "."
    )


def to_bytes(frame: pd.DataFrame, fmt: str, neutralise: bool = True) -> Export:
    """``frame`` written in format ``fmt`` (a key of :data:`FORMATS`), in memory. With
    ``neutralise``, CSV and Excel cells that a spreadsheet would run as formulas are
    neutralised (:func:`neutralise_formulas`)."""
    if fmt not in FORMATS:
        raise DataError(f"Unknown export format '{fmt}'; use one of {', '.join(FORMATS)}.")
    notes: list[str] = []
    if neutralise and fmt in ("csv", "xlsx"):
        frame, changed = neutralise_formulas(frame)
        if changed:
            notes.append(_formula_note(changed))
    if fmt == "csv":
        data = _csv(frame)
    elif fmt == "xlsx":
        data = _excel(frame)
    elif fmt == "parquet":
        data, notes = _parquet(frame)
    else:
        data, notes = _stata(frame)
    return Export(data, FORMATS[fmt], len(frame), tuple(map(str, frame.columns)), tuple(notes))


def export_release(
    released: pd.DataFrame,
    fmt: str,
    shuffle_seed: int | None = None,
    shuffle: bool = True,
    neutralise: bool = True,
) -> Export:
    """The released frame in format ``fmt``; rows shuffled from ``shuffle_seed`` when
    ``shuffle`` (a None seed draws a fresh order each time); spreadsheet formulas neutralised
    in CSV and Excel unless ``neutralise`` is False."""
    frame = shuffle_rows(released, shuffle_seed) if shuffle else released.reset_index(drop=True)
    return to_bytes(frame, fmt, neutralise=neutralise)


def read_back(data: bytes, fmt: str) -> pd.DataFrame:
    """Read an export back (for checks and tests)."""
    buffer = io.BytesIO(data)
    if fmt == "csv":
        return pd.read_csv(buffer)
    if fmt == "xlsx":
        return pd.read_excel(buffer, engine="openpyxl")
    if fmt == "parquet":
        return pd.read_parquet(buffer)
    if fmt == "dta":
        return pd.read_stata(buffer)
    raise DataError(f"Unknown export format '{fmt}'.")
