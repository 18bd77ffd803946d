"""Reading uploaded tables: the formats, their limits, and how a table is cleaned.

:func:`read_table` turns the bytes of an uploaded file into a :class:`LoadedTable` (the cleaned
data frame, its name and plain-language warnings about what was changed). Nothing is written to
disk. Every message here names columns and counts, never a data value.

Cleaning rules applied by :func:`read_table` to every format:

- column names are stripped; a blank name becomes ``column_<position>``; repeated names get a
  suffix (``age``, ``age_2``); a column with neither a name nor any value is dropped; rows with no
  value at all are dropped; each of these changes is reported as a warning;
- each column gets its natural type (text cleaned of spaces and missing markers, numbers, ISO
  dates, 0/1 flags): :func:`deid_core.io.columns.natural_type`;
- infinite numbers (``inf``, ``-Infinity``, ``1e400``, or infinities stored in a binary file)
  become missing values, with a warning naming the column: no figure downstream can be
  computed from an infinity.

A file with more than ``MAX_COLUMNS`` columns is refused (reading and profiling it would take
minutes, and no disclosure-control analysis needs that many columns).
"""

import csv
import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import charset_normalizer
import numpy as np
import pandas as pd

from deid_core.errors import DataError
from deid_core.io.columns import natural_type

MAX_UPLOAD_BYTES = 50 * 1024 * 1024
"""Largest file :func:`read_table` accepts, in bytes."""
MAX_COLUMNS = 1000
"""Most columns :func:`read_table` accepts."""

CANDIDATE_DELIMITERS = ",;\t|"
WESTERN_FALLBACK_ENCODING = "cp1252"
"""Encoding tried when a non-UTF-8 text file's encoding cannot be recognised (Windows Western)."""
SNIFF_SAMPLE_CHARS = 64 * 1024


@dataclass(frozen=True, eq=False)
class LoadedTable:
    """A table read from an uploaded file.

    ``frame`` is the cleaned data; ``name`` is the file name without folders; ``warnings`` are
    plain-language notes on what was changed while reading (renamed or dropped columns, a
    guessed text encoding...), empty when nothing was.
    """

    frame: pd.DataFrame
    name: str
    warnings: tuple[str, ...] = ()


# --- reading -------------------------------------------------------------------------------


def read_table(content: bytes, filename: str) -> LoadedTable:
    """Read an uploaded file from its bytes; the format is chosen by the file name's extension.

    Supported: CSV / TSV / TXT (delimiter and text encoding detected), Excel .xlsx (first sheet;
    old .xls only if the optional ``xlrd`` package is installed), Parquet, Stata .dta, SAS
    .sas7bdat and .xpt. The table is cleaned as described in the module docstring.

    Raises:
        DataError: the file is too large, empty, of an unsupported type, damaged, not a
            consistent table, has more than ``MAX_COLUMNS`` columns, or has no columns or no
            rows. The message never quotes the file's content.
    """
    if len(content) > MAX_UPLOAD_BYTES:
        limit_mb = MAX_UPLOAD_BYTES / (1024 * 1024)
        raise DataError(f"The file is larger than the {limit_mb:g} MB limit.")
    if not content.strip():
        raise DataError("The file is empty.")
    extension = Path(filename).suffix.lower()
    if extension not in _READERS:
        raise DataError(
            f"Files of type '{extension or '(none)'}' are not supported. Use CSV, TSV or TXT, "
            "Excel (.xlsx), Parquet, Stata (.dta) or SAS (.sas7bdat, .xpt)."
        )
    raw, warnings = _READERS[extension](content, extension)
    _check_column_count(raw.shape[1])
    try:
        frame, tidy_warnings = _tidy_frame(raw)
    except DataError:
        raise
    except Exception:
        raise DataError(
            "The file was read, but some columns hold cells of a kind this tool cannot use "
            "(for example lists or nested records)."
        ) from None
    return LoadedTable(frame=frame, name=Path(filename).name, warnings=(*warnings, *tidy_warnings))


def _read_delimited(content: bytes, extension: str) -> tuple[pd.DataFrame, list[str]]:
    """Decode delimited text, detect its delimiter and parse it; the first row holds the names."""
    text, encoding = _decode_text(content)
    warnings = []
    if encoding != "utf-8":
        warnings.append(
            f"The file is not UTF-8 text; it was read as {encoding}. "
            "Check that accented letters look right."
        )
    if "\x00" in text:
        raise DataError("The file does not look like a text table (it contains binary data).")
    delimiter = _detect_delimiter(text, default="\t" if extension == ".tsv" else ",")
    first_line = next((line for line in text[:SNIFF_SAMPLE_CHARS].splitlines() if line.strip()), "")
    _check_column_count(_count_fields(first_line, delimiter))  # before a slow parse
    try:
        cells = pd.read_csv(
            io.StringIO(text),
            sep=delimiter,
            header=None,
            dtype=str,
            keep_default_na=False,
            skip_blank_lines=True,
        )
    except pd.errors.EmptyDataError:
        raise DataError("The file has no columns.") from None
    except pd.errors.ParserError as error:
        raise DataError(_describe_parser_error(str(error))) from None
    except Exception:
        raise DataError("The file could not be read as a delimited text table.") from None
    header = cells.iloc[0].tolist()
    frame = cells.iloc[1:].reset_index(drop=True)
    frame.columns = header
    return frame, warnings


def _check_column_count(n_columns: int) -> None:
    """Refuse a table wider than ``MAX_COLUMNS``."""
    if n_columns > MAX_COLUMNS:
        raise DataError(
            f"The file has {n_columns:,} columns; at most {MAX_COLUMNS:,} can be used here. "
            "Keep only the columns the analysis needs and load the file again."
        )


def _decode_text(content: bytes) -> tuple[str, str]:
    """Decode bytes; return the text and the name of the encoding used.

    Order: UTF-8 (with or without BOM); charset-normalizer's guess when it is trustworthy (a
    byte-order mark, a UTF encoding, or a language recognised in the text), preferring
    ``WESTERN_FALLBACK_ENCODING`` among equally good guesses; then ``WESTERN_FALLBACK_ENCODING``;
    then latin-1, which decodes anything. On short files charset-normalizer cannot recognise a
    language and its first guess is close to arbitrary (an exotic code page), hence the
    Windows Western fallback, the usual encoding of spreadsheets exported on Windows.
    """
    try:
        return content.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        pass
    guesses = charset_normalizer.from_bytes(content)
    best = guesses.best()
    if best is not None and (best.bom or best.encoding.startswith("utf") or best.coherence > 0):
        tied = [
            guess.encoding
            for guess in guesses
            if (guess.chaos, guess.coherence) == (best.chaos, best.coherence)
        ]
        encoding = WESTERN_FALLBACK_ENCODING if WESTERN_FALLBACK_ENCODING in tied else best.encoding
        try:
            return content.decode(encoding), encoding
        except (UnicodeDecodeError, LookupError):
            pass
    try:
        return content.decode(WESTERN_FALLBACK_ENCODING), WESTERN_FALLBACK_ENCODING
    except UnicodeDecodeError:
        return content.decode("latin-1"), "latin-1"


def _detect_delimiter(text: str, default: str) -> str:
    """Pick the delimiter among ``CANDIDATE_DELIMITERS``: csv.Sniffer first, then counting.

    The sniffed delimiter is kept only if it splits the first line in two or more fields;
    otherwise the candidate that splits the first line into the most fields is chosen, and
    ``default`` when none splits it (a one-column file).
    """
    sample = text[:SNIFF_SAMPLE_CHARS]
    if len(text) > SNIFF_SAMPLE_CHARS and "\n" in sample:
        sample = sample[: sample.rindex("\n")]
    first_line = next((line for line in sample.splitlines() if line.strip()), "")
    try:
        sniffed = csv.Sniffer().sniff(sample, delimiters=CANDIDATE_DELIMITERS).delimiter
    except csv.Error:
        sniffed = None
    if sniffed is not None and _count_fields(first_line, sniffed) > 1:
        return sniffed
    field_counts = {
        delimiter: _count_fields(first_line, delimiter) for delimiter in CANDIDATE_DELIMITERS
    }
    best = max(field_counts, key=lambda delimiter: field_counts[delimiter])
    return best if field_counts[best] > 1 else default


def _count_fields(line: str, delimiter: str) -> int:
    """Number of fields ``line`` splits into with ``delimiter``, honouring quotes."""
    return len(next(csv.reader([line], delimiter=delimiter), []))


def _describe_parser_error(message: str) -> str:
    """Paraphrase a pandas parser error, keeping only its line number (never its content)."""
    ragged = re.search(r"Expected \d+ fields in line (\d+)", message)
    if ragged:
        return (
            f"The file is not a consistent table: line {ragged.group(1)} has more fields than "
            "the header line. Check the delimiter and the quoting around that line."
        )
    unclosed = re.search(r"EOF inside string starting at row (\d+)", message)
    if unclosed:
        return (
            "The file is not a consistent table: a quotation mark opened near line "
            f"{int(unclosed.group(1)) + 1} is never closed."
        )
    return "The file is not a consistent table (rows with different numbers of fields)."


def _read_excel(content: bytes, extension: str) -> tuple[pd.DataFrame, list[str]]:
    """Read the first sheet; its first non-empty row holds the column names."""
    try:
        cells = pd.read_excel(io.BytesIO(content), sheet_name=0, header=None, dtype=object)
    except ImportError:
        raise DataError(
            "Old Excel .xls files cannot be read here; save the sheet as .xlsx or CSV."
        ) from None
    except Exception:
        raise DataError(
            f"The file could not be read as an Excel {extension} workbook; "
            "it may be damaged or not really an Excel file."
        ) from None
    cells = cells.dropna(how="all")
    if cells.empty:
        raise DataError("The first sheet of the workbook is empty.")
    header = ["" if pd.isna(name) else str(name) for name in cells.iloc[0]]
    frame = cells.iloc[1:].reset_index(drop=True)
    frame.columns = header
    return frame, []


def _read_parquet(content: bytes, extension: str) -> tuple[pd.DataFrame, list[str]]:
    """Read a Parquet file with pyarrow; a stored index becomes ordinary columns."""
    try:
        frame = pd.read_parquet(io.BytesIO(content))
    except Exception:
        raise DataError(
            "The file could not be read as Parquet; it may be damaged or not really a Parquet file."
        ) from None
    if frame.index.names != [None] or not frame.index.equals(pd.RangeIndex(len(frame))):
        frame = frame.reset_index()
    return frame, []


def _read_stata(content: bytes, extension: str) -> tuple[pd.DataFrame, list[str]]:
    """Read a Stata .dta file; value labels become text."""
    try:
        return pd.read_stata(io.BytesIO(content)), []
    except Exception:
        raise DataError(
            "The file could not be read as a Stata .dta file; it may be damaged or saved "
            "by a version pandas cannot read."
        ) from None


def _read_sas(content: bytes, extension: str) -> tuple[pd.DataFrame, list[str]]:
    """Read a SAS .sas7bdat or transport (.xpt) file."""
    sas_format = "sas7bdat" if extension == ".sas7bdat" else "xport"
    try:
        frame = pd.read_sas(io.BytesIO(content), format=sas_format, encoding="infer")
    except Exception:
        raise DataError(
            f"The file could not be read as a SAS {extension} file; it may be damaged or not "
            "really a SAS file."
        ) from None
    return frame, []


_READERS: dict[str, Callable[[bytes, str], tuple[pd.DataFrame, list[str]]]] = {
    ".csv": _read_delimited,
    ".tsv": _read_delimited,
    ".txt": _read_delimited,
    ".xlsx": _read_excel,
    ".xls": _read_excel,
    ".parquet": _read_parquet,
    ".dta": _read_stata,
    ".sas7bdat": _read_sas,
    ".xpt": _read_sas,
}
SUPPORTED_EXTENSIONS = tuple(_READERS)
"""File name extensions :func:`read_table` reads (lower case, with the dot)."""

# --- cleaning ------------------------------------------------------------------------------


def _tidy_frame(raw: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Fix column names, drop empty columns and rows, and give each column its natural type."""
    if raw.shape[1] == 0:
        raise DataError("The file has no columns.")
    frame = pd.DataFrame(
        {position: natural_type(raw.iloc[:, position]) for position in range(raw.shape[1])}
    ).reset_index(drop=True)
    warnings = []

    names = [_clean_name(name) for name in raw.columns]
    nameless_and_empty = [
        position for position, name in enumerate(names) if not name and frame[position].isna().all()
    ]
    if nameless_and_empty:
        frame = frame.drop(columns=nameless_and_empty)
        names = [name for position, name in enumerate(names) if position not in nameless_and_empty]
        warnings.append(
            f"{_plural(len(nameless_and_empty), 'column')} with no name and no values dropped."
        )
    if not names:
        raise DataError("The file has no columns.")
    frame.columns = _unique_names(names, warnings)
    frame = _drop_infinities(frame, warnings)

    empty_rows = frame.isna().all(axis=1)
    if empty_rows.all():
        raise DataError("The file has column names but no rows of data.")
    if empty_rows.any():
        frame = frame.loc[~empty_rows].reset_index(drop=True)
        warnings.append(f"{_plural(int(empty_rows.sum()), 'empty row')} dropped.")
    return frame, warnings


def _drop_infinities(frame: pd.DataFrame, warnings: list[str]) -> pd.DataFrame:
    """Make infinite numbers missing, with one warning per column (counts, never values)."""
    for name in frame.columns:
        column = frame[name]
        if not pd.api.types.is_float_dtype(column.dtype):
            continue
        infinite = np.isinf(column.to_numpy(dtype="float64", na_value=np.nan))
        if infinite.any():
            frame[name] = column.mask(infinite)
            warnings.append(
                f"'{name}' had {_plural(int(infinite.sum()), 'infinite number')} (such as inf "
                "or 1e400); they were read as missing values."
            )
    return frame


def _clean_name(name: object) -> str:
    """A column name as stripped text; missing names and pandas' 'Unnamed: n' become ''."""
    if name is None or (isinstance(name, float) and np.isnan(name)):
        return ""
    text = str(name).strip()
    return "" if re.fullmatch(r"Unnamed: \d+", text) else text


def _unique_names(names: list[str], warnings: list[str]) -> list[str]:
    """Name blank columns ``column_<position>`` and suffix repeated names ``_2``, ``_3``..."""
    unique: list[str] = []
    taken = {name for name in names if name}
    for position, name in enumerate(names, start=1):
        if not name:
            new_name = _first_free(f"column_{position}", taken)
            warnings.append(f"Column {position} had no name; it was named '{new_name}'.")
            name = new_name
        elif name in unique:
            new_name = _first_free(name, taken)
            warnings.append(
                f"Column {position} repeats the name '{name}'; it was renamed '{new_name}'."
            )
            name = new_name
        taken.add(name)
        unique.append(name)
    return unique


def _first_free(name: str, taken: set[str]) -> str:
    """``name`` if unused, else the first unused ``name_2``, ``name_3``..."""
    if name not in taken:
        return name
    suffix = 2
    while f"{name}_{suffix}" in taken:
        suffix += 1
    return f"{name}_{suffix}"


def _plural(count: int, noun: str) -> str:
    """'1 column', '3 columns'."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
