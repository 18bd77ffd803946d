"""Reading uploaded tables, profiling their columns and suggesting variable roles.

Entry points:

- :func:`read_table` turns the bytes of an uploaded file into a :class:`LoadedTable` (the
  cleaned data frame, its name and plain-language warnings about what was changed). Nothing is
  written to disk.
- :func:`profile_columns` describes each column without showing any value.
- :func:`infer_roles` suggests one role per column (see ``ROLES``) from names and contents.
- :func:`validate_column_for_role` lists what stops a column from playing a role.

Every message here names columns and counts, never a data value.

Cleaning rules applied by :func:`read_table` to every format:

- column names are stripped; a blank name becomes ``column_<position>``; repeated names get a
  suffix (``age``, ``age_2``); a column with neither a name nor any value is dropped; rows with no
  value at all are dropped; each of these changes is reported as a warning;
- in text cells, surrounding spaces are removed and the markers in ``MISSING_MARKERS`` become
  missing values;
- a text column whose every non-missing entry is a standard number (``12``, ``-0.5``, ``1e3``)
  becomes numeric, unless some entry has a leading zero (``"01234"``: a code such as a postcode,
  kept as text); a column that is mostly numbers with a few other entries (``"<0.1"``) stays
  text, and :func:`profile_columns` / :func:`validate_column_for_role` report it;
- a text column of ISO dates (``2020-03-31``, optionally with a time) becomes a date column;
- true/false columns become 0/1; categorical columns (Stata value labels) become plain text;
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

from deid_core.errors import DataError, RecipeError

MAX_UPLOAD_BYTES = 50 * 1024 * 1024
"""Largest file :func:`read_table` accepts, in bytes."""
MAX_COLUMNS = 1000
"""Most columns :func:`read_table` accepts."""

CANDIDATE_DELIMITERS = ",;\t|"
WESTERN_FALLBACK_ENCODING = "cp1252"
"""Encoding tried when a non-UTF-8 text file's encoding cannot be recognised (Windows Western)."""
SNIFF_SAMPLE_CHARS = 64 * 1024

MISSING_MARKERS = ("", "NA", "N/A", "n/a", "NaN", "nan", "NULL", "null", ".")
"""Text cells read as missing values (after removing surrounding spaces)."""

ROLES = (
    "direct_identifier",
    "quasi_identifier",
    "exposure",
    "outcome",
    "covariate",
    "record_id",
    "weight",
    "other",
)
"""The roles a column can have (methods brief, section 1)."""

COLUMN_KINDS = ("numeric", "categorical", "date", "text")
CATEGORICAL_MAX_LEVELS = 50
"""A text column with at most this many distinct values is profiled as categorical."""
HIGH_CARDINALITY_SHARE = 0.9
"""A non-numeric column is high-cardinality when its distinct values exceed this share of rows."""

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?$")
_LEADING_ZERO_CODE = re.compile(r"^0\d")


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
        {position: _convert_column(raw.iloc[:, position]) for position in range(raw.shape[1])}
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


def _convert_column(column: pd.Series) -> pd.Series:
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


# --- profiling -----------------------------------------------------------------------------


def profile_columns(frame: pd.DataFrame) -> list[ColumnProfile]:
    """Describe every column of ``frame`` (in order) by its kind and counts, without values."""
    return [_profile_column(str(name), frame[name]) for name in frame.columns]


def _profile_column(name: str, column: pd.Series) -> ColumnProfile:
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


# --- roles ---------------------------------------------------------------------------------

_RECORD_ID_NAMES = re.compile(
    r"(?:patient|person|subject|record|participant|case|study)(?:id|no|num|number)|"
    r"record|subject|subjid|patid|pid|recno|seqn"
)
_DIRECT_IDENTIFIER_TOKENS = frozenset(
    {
        "name",
        "names",
        "firstname",
        "lastname",
        "surname",
        "fullname",
        "forename",
        "givenname",
        "familyname",
        "email",
        "mail",
        "phone",
        "telephone",
        "tel",
        "mobile",
        "fax",
        "address",
        "street",
        "ssn",
        "mrn",
        "nhs",
        "passport",
    }
)
_QUASI_IDENTIFIER_TOKENS = frozenset(
    {
        "sex",
        "gender",
        "dob",
        "yob",
        "yr",
        "city",
        "town",
        "zip",
        "zipcode",
        "postcode",
        "postal",
        "region",
        "county",
        "district",
        "province",
        "race",
        "marital",
        "nationality",
    }
)
_AGE_TOKEN = re.compile(r"age(?:grp|group|cat|band|yrs|years|\d+)?")
_QUASI_IDENTIFIER_PREFIXES = ("birth", "ethnic", "year")
_OUTCOME_TOKENS = frozenset(
    {
        "outcome",
        "case",
        "death",
        "died",
        "dead",
        "mortality",
        "status",
        "event",
        "disease",
        "cancer",
    }
)
_EXPOSURE_TOKENS = frozenset({"exp", "exposure", "exposed"})
_EXPOSURE_PREFIXES = ("dose", "expos")


def infer_roles(frame: pd.DataFrame) -> dict[str, str]:
    """Suggest one role (from ``ROLES``) for each column, from its name and contents.

    Names are split into lower-case words (``PatientID`` and ``patient_id`` both give
    ``patient``, ``id``). The first rule that matches decides, in this order:

    1. a word of a direct identifier (name, surname, email, phone, address, ssn, mrn, ...):
       ``direct_identifier``;
    2. an id-like name (``id``, ``*_id``, ``record``, ``subject``, ``patientid``, ...): the first
       such column whose values are all present and all different is the ``record_id``, later
       ones are ``direct_identifier``; an id-like column with repeated values is ``other``;
    3. a word of a quasi-identifier (sex, gender, age*, birth*, yob, dob, city, zip, postcode,
       region, race, ethnic*, year* except "years", yr, ...): ``quasi_identifier``;
    4. a 0/1 column named like outcome, case, death, status, event, disease or cancer: the
       first one is the ``outcome``;
    5. a name like dose*, exposure, exposed or exp: the first one is the ``exposure``;
    6. any other numeric column: ``covariate``; anything else: ``other``.

    A column can matter in two ways (a dose is both exposure and quasi-identifier); only the
    primary role is returned here.
    """
    roles: dict[str, str] = {}
    for name in frame.columns:
        role = _infer_role(str(name), frame[name], set(roles.values()))
        roles[str(name)] = role
    return roles


def _infer_role(name: str, column: pd.Series, roles_taken: set[str]) -> str:
    """The role of one column, given the roles already given to earlier columns."""
    words = _name_words(name)
    if words & _DIRECT_IDENTIFIER_TOKENS:
        return "direct_identifier"
    if "id" in words or _RECORD_ID_NAMES.fullmatch("".join(words)):
        if column.notna().all() and column.is_unique:
            return "direct_identifier" if "record_id" in roles_taken else "record_id"
        return "other"
    if _is_quasi_identifier_name(words):
        return "quasi_identifier"
    if "outcome" not in roles_taken and words & _OUTCOME_TOKENS and _is_zero_one(column):
        return "outcome"
    if "exposure" not in roles_taken and (
        words & _EXPOSURE_TOKENS or any(word.startswith(_EXPOSURE_PREFIXES) for word in words)
    ):
        return "exposure"
    return "covariate" if pd.api.types.is_numeric_dtype(column.dtype) else "other"


def _name_words(name: str) -> set[str]:
    """Lower-case words of a column name, split at non-letters and at camel-case humps."""
    words = set()
    for part in re.split(r"[^A-Za-z0-9]+", name):
        for word in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", part):
            words.add(word.lower())
    return words


def _is_quasi_identifier_name(words: set[str]) -> bool:
    """True when a word of the name marks a usual quasi-identifier."""
    return bool(words & _QUASI_IDENTIFIER_TOKENS) or any(
        _AGE_TOKEN.fullmatch(word)
        or (word.startswith(_QUASI_IDENTIFIER_PREFIXES) and word != "years")
        for word in words
    )


def _is_zero_one(column: pd.Series) -> bool:
    """True for a numeric column whose present values are all 0 or 1 (at least one present)."""
    if not pd.api.types.is_numeric_dtype(column.dtype):
        return False
    present = column.dropna()
    return not present.empty and bool(present.isin([0, 1]).all())


# --- validation ----------------------------------------------------------------------------


def validate_column_for_role(
    frame: pd.DataFrame, column: str, role: str, family: str = "logistic"
) -> list[str]:
    """List, in plain language, what keeps ``column`` from playing ``role`` (empty when fine).

    Checks: any role - the column has at least one value; exposure - numeric, more than one
    value; outcome - for the binary model families (``family`` "logistic" or "err") binary
    (0/1, or two distinct values) with at least one event and one non-event when coded 0/1,
    for "poisson" and "binomial" non-negative whole-number counts with some events, for
    "linear" numeric and varying; quasi-identifier - more than one value, not a different value for
    almost every record when non-numeric; covariate - more than one value; quasi-identifier
    and covariate - no stray text in a mostly numeric column; record id - present and unique.

    Raises:
        RecipeError: ``role`` is not one of ``ROLES``.
        DataError: ``frame`` has no column ``column``.
    """
    if role not in ROLES:
        raise RecipeError(f"Unknown role '{role}'; choose one of: {', '.join(ROLES)}.")
    if column not in frame.columns:
        raise DataError(f"The data have no column '{column}'.")
    profile = _profile_column(column, frame[column])
    if profile.all_missing:
        return [f"'{column}' has no values (all missing)."]
    checks: dict[str, Callable[[pd.Series, ColumnProfile], list[str]]] = {
        "exposure": _exposure_problems,
        "outcome": lambda v, p: _outcome_problems(v, p, family),
        "quasi_identifier": _quasi_identifier_problems,
        "covariate": _covariate_problems,
        "record_id": _record_id_problems,
        "weight": _weight_problems,
    }
    check = checks.get(role)
    return check(frame[column], profile) if check else []


def _weight_problems(values: pd.Series, profile: ColumnProfile) -> list[str]:
    """A sampling weight must be numeric, complete and positive."""
    name = profile.name
    if profile.kind != "numeric":
        return [f"The weight '{name}' must be numeric."]
    if profile.n_missing:
        return [f"The weight '{name}' has {profile.n_missing} missing value(s)."]
    n_bad = int((pd.to_numeric(values) <= 0).sum())
    if n_bad:
        return [f"The weight '{name}' has {n_bad} value(s) that are not positive."]
    return []


def _exposure_problems(values: pd.Series, profile: ColumnProfile) -> list[str]:
    """An exposure must be numeric and vary."""
    name = profile.name
    if profile.kind != "numeric":
        n_present = len(values) - profile.n_missing
        if profile.numeric_with_text:
            return [
                f"The exposure '{name}' must be numeric, but {profile.numeric_with_text} of its "
                f"{n_present} entries are not numbers."
            ]
        return [f"The exposure '{name}' must be numeric, but its entries are not numbers."]
    if profile.one_level:
        return [f"The exposure '{name}' has a single value: its effect cannot be estimated."]
    return []


def _outcome_problems(values: pd.Series, profile: ColumnProfile, family: str) -> list[str]:
    """An outcome must suit the model family: binary with events and non-events, counts with
    some events, or varying numbers."""
    name = profile.name
    if family in ("poisson", "binomial", "linear"):
        numbers = pd.to_numeric(values, errors="coerce") if profile.kind != "numeric" else values
        observed = numbers.dropna().astype(float)
        if observed.size < values.notna().sum() or pd.api.types.is_bool_dtype(values):
            return [f"The outcome '{name}' must be numeric for the {family} model."]
        if family == "linear":
            return (
                []
                if not profile.one_level
                else [f"The outcome '{name}' has a single value: the regression cannot be fitted."]
            )
        if (observed < 0).any() or (observed != observed.round()).any():
            return [
                f"The outcome '{name}' must be a count (non-negative whole numbers) for the "
                f"{family} model."
            ]
        if (observed == 0).all():
            return [f"The outcome '{name}' has no events (all 0): the model cannot be fitted."]
        return []
    if profile.n_distinct > 2:
        return [
            f"The outcome '{name}' must be binary (0/1 or two values), but it has "
            f"{profile.n_distinct} different values."
        ]
    if _is_zero_one(values) and profile.one_level:
        if values.dropna().iloc[0] == 0:
            return [f"The outcome '{name}' has no events (all 0): the regression cannot be fitted."]
        return [f"The outcome '{name}' has no non-events (all 1): the regression cannot be fitted."]
    if profile.one_level:
        return [f"The outcome '{name}' has a single value: the regression cannot be fitted."]
    return []


def _quasi_identifier_problems(values: pd.Series, profile: ColumnProfile) -> list[str]:
    """A quasi-identifier should vary, and not be distinct for nearly every record."""
    name = profile.name
    if profile.one_level:
        return [f"'{name}' has a single value: it adds no risk and can be left out."]
    problems = []
    if profile.high_cardinality:
        problems.append(
            f"'{name}' has a different value for almost every record ({profile.n_distinct} "
            f"values in {len(values)} records): as a quasi-identifier it makes nearly every "
            "record unique; generalize it or leave it out."
        )
    return problems + _stray_text_problems(profile)


def _covariate_problems(values: pd.Series, profile: ColumnProfile) -> list[str]:
    """A covariate should vary."""
    if profile.one_level:
        return [
            f"The covariate '{profile.name}' has a single value: its effect cannot be estimated."
        ]
    return _stray_text_problems(profile)


def _stray_text_problems(profile: ColumnProfile) -> list[str]:
    """Report a mostly numeric column kept as text because of a few other entries."""
    if not profile.numeric_with_text:
        return []
    return [
        f"'{profile.name}' looks numeric, but {profile.numeric_with_text} of its entries are "
        "not numbers, so it is treated as text. Fix or blank those entries to use it as a number."
    ]


def _record_id_problems(values: pd.Series, profile: ColumnProfile) -> list[str]:
    """A record id must be present and different for every record."""
    problems = []
    if profile.n_missing:
        problems.append(
            f"The record id '{profile.name}' is missing for {profile.n_missing} records."
        )
    if profile.n_distinct < len(values) - profile.n_missing:
        problems.append(
            f"The record id '{profile.name}' repeats values: it must differ for every record."
        )
    return problems
