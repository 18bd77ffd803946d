"""The masked file to send, as CSV, Excel, Parquet or Stata bytes (built in memory).

:func:`export_release` takes the released frame (masked, without direct identifiers nor, by
default, the record id: :meth:`Workspace.released_frame`), optionally shuffles its rows, and
writes it in the chosen format. Shuffling matters: the masked file keeps the source's record
order, so anyone holding the source could link row i to row i and undo every masking step.
The order is drawn from a seed the caller supplies (reproducible for the caller, but the seed is
not written anywhere in the file).

Stata (.dta, format 118) has rules of its own; :func:`stata_ready` applies them and says what
it changed:

- variable names must be valid identifiers of at most 32 characters: invalid characters become
  ``_``, a leading digit gets a ``v`` prefix, long names are cut and clashes numbered (renamed,
  and listed in the notes);
- text must be at most 2045 bytes (UTF-8) per value: a longer value is a :class:`DataError`
  (cutting it would silently change the data; use CSV, Excel or Parquet instead);
- a column mixing text and numbers is written as text (noted); categories are written as
  their values; true/false as 1/0 (missing stays missing); dates without a time zone.
"""

from __future__ import annotations

import io
import keyword
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from deid_core.errors import DataError

#: Stata's limits (format 118).
STATA_NAME_LENGTH = 32
STATA_TEXT_BYTES = 2045
EXCEL_MAX_ROWS = 1_048_575  # plus the header row
EXCEL_TEXT_LENGTH = 32_767

#: Names Stata reserves (cannot be variable names).
STATA_RESERVED = frozenset(
    {"_all", "_b", "byte", "_coef", "_cons", "double", "float", "if", "in", "int", "long"}
    | {"_n", "_N", "_pi", "_pred", "_rc", "_skip", "strL", "using", "with"}
)


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


# ---------------------------------------------------------------------------- Stata
def stata_name(name: object) -> str:
    """A valid Stata variable name close to ``name`` (not yet made unique)."""
    text = re.sub(r"[^A-Za-z0-9_]", "_", str(name))
    if not text or text[0].isdigit():
        text = "v" + text
    text = text[:STATA_NAME_LENGTH]
    if text in STATA_RESERVED or keyword.iskeyword(text):
        text = (text + "_")[:STATA_NAME_LENGTH] if len(text) < STATA_NAME_LENGTH else "v" + text[1:]
    return text


def stata_names(columns: list[object]) -> dict[object, str]:
    """Unique valid Stata names for ``columns`` (clashes get _2, _3... within 32 characters)."""
    used: set[str] = set()
    names: dict[object, str] = {}
    for column in columns:
        base = stata_name(column)
        name, n = base, 1
        while name.lower() in used:
            n += 1
            suffix = f"_{n}"
            name = base[: STATA_NAME_LENGTH - len(suffix)] + suffix
        used.add(name.lower())
        names[column] = name
    return names


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def stata_ready(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """A copy of ``frame`` that Stata can hold, and notes on what was changed."""
    notes: list[str] = []
    out = pd.DataFrame(index=frame.index)
    names = stata_names(list(frame.columns))
    renamed = [f"'{old}' -> '{new}'" for old, new in names.items() if str(old) != new]
    if renamed:
        notes.append(
            "Stata variable names must be letters, digits and _ (at most 32, not starting with "
            "a digit); renamed: " + ", ".join(renamed) + "."
        )
    for column in frame.columns:
        name = names[column]
        series = frame[column]
        dtype = series.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            series = series.astype(dtype.categories.dtype)
            dtype = series.dtype
        if pd.api.types.is_bool_dtype(dtype):
            out[name] = series.astype("float64" if series.isna().any() else "int8")
            continue
        if pd.api.types.is_datetime64_any_dtype(dtype):
            if getattr(dtype, "tz", None) is not None:
                series = series.dt.tz_convert("UTC").dt.tz_localize(None)
                notes.append(f"'{column}': dates converted to UTC without a time zone.")
            out[name] = series
            continue
        if pd.api.types.is_extension_array_dtype(dtype) and pd.api.types.is_numeric_dtype(dtype):
            series = series.astype("float64")  # nullable integers / floats: missing -> .
            out[name] = series
            continue
        if pd.api.types.is_numeric_dtype(dtype):
            if pd.api.types.is_integer_dtype(dtype) and len(series):
                low, high = series.min(), series.max()
                if low < -2_147_483_647 or high > 2_147_483_620:
                    series = series.astype("float64")
                    notes.append(
                        f"'{column}': whole numbers too large for Stata's long type are written "
                        "as doubles."
                    )
            out[name] = series
            continue
        # text or a mix
        present = series.dropna()
        if present.empty:
            out[name] = pd.Series(np.nan, index=series.index, dtype="float64")
            continue
        is_text = present.map(_is_text)
        if not is_text.all():
            notes.append(f"'{column}' mixes text and other values: written as text.")
            series = series.map(lambda v: v if v is None or _is_text(v) or pd.isna(v) else str(v))
        text = series.dropna().astype(str)
        too_long = int((text.map(lambda v: len(v.encode("utf-8"))) > STATA_TEXT_BYTES).sum())
        if too_long:
            raise DataError(
                f"Stata cannot hold the text of column '{column}': {too_long} value(s) are longer "
                f"than {STATA_TEXT_BYTES} bytes. Shorten them, or export as CSV, Excel or Parquet."
            )
        out[name] = series.astype(object).where(series.notna(), None)
    return out, notes


# ---------------------------------------------------------------------------- writers
def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode("utf-8")


def _excel(frame: pd.DataFrame) -> bytes:
    if len(frame) > EXCEL_MAX_ROWS:
        raise DataError(
            f"Excel holds at most {EXCEL_MAX_ROWS:,} records; this file has {len(frame):,}. "
            "Export as CSV or Parquet instead."
        )
    frame = frame.copy()
    for column in frame.columns:
        series = frame[column]
        if isinstance(series.dtype, pd.DatetimeTZDtype):
            frame[column] = series.dt.tz_convert("UTC").dt.tz_localize(None)
        elif not pd.api.types.is_numeric_dtype(series.dtype) and not (
            pd.api.types.is_datetime64_any_dtype(series.dtype)
        ):
            lengths = series.dropna().map(lambda v: len(str(v)))
            if len(lengths) and lengths.max() > EXCEL_TEXT_LENGTH:
                raise DataError(
                    f"Excel cells hold at most {EXCEL_TEXT_LENGTH:,} characters; column "
                    f"'{column}' has longer text. Export as CSV or Parquet instead."
                )
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer, engine="openpyxl") as writer:
        frame.to_excel(writer, index=False, sheet_name="masked data")
        sheet = writer.sheets["masked data"]
        # Text that starts with "=" is stored as text, not run as a formula.
        for row in sheet.iter_rows(min_row=2):
            for cell in row:
                if cell.data_type == "f":
                    cell.data_type = "s"
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
    try:
        ready.to_stata(buffer, write_index=False, version=118)
    except (ValueError, TypeError) as error:  # pandas' own checks; messages name columns only
        raise DataError(
            "Stata cannot hold these data (a column has an unsupported type). Export as CSV, "
            "Excel or Parquet instead."
        ) from error
    return buffer.getvalue(), notes


def to_bytes(frame: pd.DataFrame, fmt: str) -> Export:
    """``frame`` written in format ``fmt`` (a key of :data:`FORMATS`), in memory."""
    if fmt not in FORMATS:
        raise DataError(f"Unknown export format '{fmt}'; use one of {', '.join(FORMATS)}.")
    notes: list[str] = []
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
    released: pd.DataFrame, fmt: str, shuffle_seed: int | None = None, shuffle: bool = True
) -> Export:
    """The released frame in format ``fmt``; rows shuffled from ``shuffle_seed`` when
    ``shuffle`` (a None seed draws a fresh order each time)."""
    frame = shuffle_rows(released, shuffle_seed) if shuffle else released.reset_index(drop=True)
    return to_bytes(frame, fmt)


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
