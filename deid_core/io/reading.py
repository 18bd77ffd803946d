"""Reading uploaded tables: the formats, their bounds, and how a table is cleaned.

:func:`read_table` turns the bytes of an uploaded file into a :class:`LoadedTable` (the cleaned
data frame, its name and plain-language warnings about what was changed). Nothing is written to
disk. Every message here names columns, counts and bounds, never a data value.

Bounds (:mod:`deid_core.bounds`, gathered in :class:`~deid_core.io.read_budget.ReadLimits`):
a small file can unpack into a huge table (a 200 KB Parquet file of one long text repeated, a
500 KB workbook of ten million cells, a gzip file of zeros), so the file's size says little.
Rows, columns, cells and the bytes of the data once unpacked (text at its full length, numbers
at 8 bytes) are bounded while reading, before anything larger is built:

- metadata first: Parquet's footer (rows, columns, unpacked size of every row group), the
  workbook's member sizes and the sheet's dimension, the Stata header (observations and
  variables), the SAS header;
- then streaming with a budget: compressed text is unpacked chunk by chunk and stopped at the
  bound, Parquet is read batch by batch (text kept dictionary-encoded and counted at its full
  length), a workbook row by row, a SAS file chunk by chunk;
- finally the table read is checked once more, whatever the format said about itself.

Formats: CSV / TSV / TXT (delimiter and text encoding detected; also compressed as ``.gz``,
``.bz2``, ``.xz``, or alone in a ``.zip``), Excel .xlsx (first sheet; old .xls only if the
optional ``xlrd`` package is installed), Parquet, Stata .dta, SAS .sas7bdat and .xpt. Delimited
text is parsed by pyarrow's multithreaded CSV reader, every cell read as text, and each column
is then given its natural type once (:func:`deid_core.io.columns.natural_type`).

Cleaning rules applied by :func:`read_table` to every format:

- column names are stripped; a blank name becomes ``column_<position>``; repeated names get a
  suffix (``age``, ``age_2``); a column with neither a name nor any value is dropped; rows with no
  value at all are dropped; each of these changes is reported as a warning;
- each column gets its natural type (text cleaned of spaces and missing markers, numbers, ISO
  dates, 0/1 flags): :func:`deid_core.io.columns.natural_type`;
- infinite numbers (``inf``, ``-Infinity``, ``1e400``, or infinities stored in a binary file)
  become missing values, with a warning naming the column: no figure downstream can be
  computed from an infinity.

Delimited text must be a consistent table: a line with more or fewer fields than the header
line is an error naming the line (lines holding only spaces are skipped), as is a quotation mark
that is never closed.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import csv
import gzip
import io
import lzma
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import charset_normalizer
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from deid_core import bounds
from deid_core.bounds import Bound
from deid_core.errors import DataError, LimitError
from deid_core.io.columns import natural_type
from deid_core.io.read_budget import (
    CHUNK_ROWS,
    READ_LIMITS,
    UNPACK_CHUNK,
    ReadBudget,
    ReadLimits,
    longest_run,
)
from deid_core.io.workbooks import read_excel, read_excel_header

MAX_UPLOAD_BYTES = bounds.FILE_BYTES.limit
"""Largest file :func:`read_table` accepts, in bytes (the bound ``file_bytes``)."""
MAX_COLUMNS = bounds.COLUMNS.limit
"""Most columns :func:`read_table` accepts (the bound ``columns``)."""
MAX_NAME_CHARS = 1000
"""Longest column name accepted: names are shown in messages, tables and reports."""

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


def read_table(content: bytes, filename: str, limits: ReadLimits = READ_LIMITS) -> LoadedTable:
    """Read an uploaded file from its bytes; the format is chosen by the file name's extension.

    Supported formats and the bounds checked are described in the module docstring; the table
    is cleaned as described there too.

    Raises:
        LimitError: the file passes a bound (its size, or rows, columns, cells or unpacked
            bytes); the message names the bound.
        DataError: the file is empty, of an unsupported type, damaged, not a consistent table,
            or has no columns or no rows. The message never quotes the file's content.
    """
    limits.file_bytes.check(len(content), "The file has")
    if not content.strip():
        raise DataError("The file is empty.")
    name = PurePosixPath(filename.replace("\\", "/")).name
    extension, compression = _format_of(name)
    budget = ReadBudget(limits, limits.excel_cells if extension == ".xlsx" else limits.cells)
    if compression is not None:
        content, extension = _unpack(content, compression, extension, budget)
        if not content.strip():
            raise DataError("The file is empty once unpacked.")
    raw, warnings = _READERS[extension](content, extension, budget)
    _check_table(raw, budget)
    try:
        frame, tidy_warnings = _tidy_frame(raw)
    except DataError:
        raise
    except Exception:
        raise DataError(
            "The file was read, but some columns hold cells of a kind this tool cannot use "
            "(for example lists or nested records)."
        ) from None
    return LoadedTable(frame=frame, name=name, warnings=(*warnings, *tidy_warnings))


_GENERATED_NAME = re.compile(r"column_\d+(?:_\d+)*")
"""The names :func:`read_table` gives columns without one (``column_4``, ``column_4_2``)."""


@dataclass(frozen=True)
class Header:
    """The column names :func:`read_table` gives a file, known from its header alone
    (:func:`read_header`).

    ``names`` are the header's names cleaned as read_table cleans them (stripped, repeated
    ones suffixed). ``wider``: the file's later rows may be longer than its header (a
    workbook's), and read_table names the extra columns ``column_<position>``, so that such
    names may exist too.
    """

    names: tuple[str, ...]
    wider: bool = False

    def __post_init__(self) -> None:
        if not self.names or not all(self.names) or len(set(self.names)) < len(self.names):
            raise ValueError("A header's names must be given, non-blank and distinct.")

    def may_have(self, name: str) -> bool:
        """Whether the table read may have a column called ``name``."""
        return name in self.names or (self.wider and _GENERATED_NAME.fullmatch(name) is not None)


def read_header(content: bytes, filename: str, limits: ReadLimits = READ_LIMITS) -> Header | None:
    """The column names :func:`read_table` would give a delimited-text file or an .xlsx
    workbook, from its header row alone, or None when they cannot be known without reading
    the rest, so that a file lacking a column a recipe names is refused before it is parsed.

    None for: other formats (Parquet's names come from its footer elsewhere, Stata and SAS
    files are read whole), compressed text (its encoding is known only once all of it is
    unpacked), text that is not UTF-8 (read_table then guesses its encoding from all of it),
    a header line that is blank, longer than the delimiter's sample or holds a quotation
    mark (a quoted name may span lines), and a header with a blank name (read_table names it
    ``column_<position>`` or drops it, depending on its values). The delimiter is detected
    from the same sample as read_table's (:func:`_detect_delimiter`); a workbook is scanned
    within the reader's bounds first (:func:`~deid_core.io.workbooks.read_excel_header`).

    Raises the reader's own errors (DataError, LimitError) for a file it would refuse (a
    header wider than the bound ``columns``, a workbook past the bounds of its scan).
    """
    limits.file_bytes.check(len(content), "The file has")
    name = PurePosixPath(filename.replace("\\", "/")).name
    extension, compression = _format_of(name)
    if compression is not None:
        return None
    if extension in _TEXT_EXTENSIONS:
        names, wider = _delimited_header(content, extension), False
    elif extension == ".xlsx":
        budget = ReadBudget(limits, limits.excel_cells)
        names, wider = read_excel_header(content, extension, budget), True
    else:
        return None
    if names is None:
        return None
    limits.columns.check(len(names), "The file has")  # as read_table refuses a wide header
    cleaned = [_clean_name(name) for name in names]
    if not cleaned or not all(cleaned):
        return None
    return Header(tuple(_unique_names(cleaned, [])), wider)


def _delimited_header(content: bytes, extension: str) -> list[str] | None:
    """The fields of a UTF-8 delimited-text file's header line, split as
    :func:`_read_delimited` splits them (see :func:`read_header` for None)."""
    if not _is_utf8(content):
        return None
    # The first characters as read_table decodes them: 4 bytes at most per character.
    sample_bytes = content[: 4 * SNIFF_SAMPLE_CHARS + 8]
    text = codecs.getincrementaldecoder("utf-8-sig")().decode(sample_bytes, final=False)
    ends = [at for at in (text.find("\n"), text.find("\r")) if at >= 0]
    if not ends and len(sample_bytes) < len(content):
        return None  # a header line longer than the sample
    first_line = text[: min(ends)] if ends else text
    if not first_line.strip() or '"' in first_line:
        return None
    delimiter = _detect_delimiter(text, default="\t" if extension == ".tsv" else ",")
    return first_line.split(delimiter)


def _is_utf8(content: bytes) -> bool:
    """Whether ``content`` is UTF-8 text, checked in pieces (no copy of the whole as text)."""
    if content.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(content)
    try:
        for start in range(0, len(content), UNPACK_CHUNK):
            decoder.decode(view[start : start + UNPACK_CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _format_of(name: str) -> tuple[str, str | None]:
    """(the table format's extension, the compression's extension or None) of a file name."""
    suffixes = [suffix.lower() for suffix in Path(name).suffixes]
    last = suffixes[-1] if suffixes else ""
    if last == ".zip":
        return "", ".zip"  # the format is the single member's
    if last in _DECOMPRESSORS:
        inner = suffixes[-2] if len(suffixes) > 1 else ""
        if inner in _TEXT_EXTENSIONS:
            return inner, last
        raise DataError(
            f"Compressed files must be delimited text (.csv{last}, .tsv{last} or .txt{last})."
        )
    if last not in _READERS:
        raise DataError(
            f"Files of type '{last or '(none)'}' are not supported. Use CSV, TSV or TXT "
            "(also compressed: .gz, .bz2, .xz, .zip), Excel (.xlsx), Parquet, Stata (.dta) or "
            "SAS (.sas7bdat, .xpt)."
        )
    return last, None


def _unpack(
    content: bytes, compression: str, extension: str, budget: ReadBudget
) -> tuple[bytes, str]:
    """The unpacked bytes of a compressed text file and its format, read as a stream and
    stopped as soon as they pass the unpacked-bytes bound."""
    bound = budget.limits.decoded_bytes
    try:
        if compression == ".zip":
            with zipfile.ZipFile(io.BytesIO(content)) as archive:
                member = _single_text_member(archive)
                extension = Path(member.filename).suffix.lower()
                bound.check(member.file_size, "The file has")  # the archive's own claim
                with archive.open(member) as stream:
                    data = _read_bounded(stream, bound, budget.limits.cell_bytes)
        else:
            if compression == ".gz":
                bound.check(gzip_claim(content), "The file says it has")  # before inflating
            with _DECOMPRESSORS[compression](io.BytesIO(content)) as stream:
                data = _read_bounded(stream, bound, budget.limits.cell_bytes)
    except (DataError, LimitError):
        raise
    except (OSError, EOFError, zipfile.BadZipFile, lzma.LZMAError, ValueError, RuntimeError):
        raise DataError(
            f"The file could not be unpacked as {compression}; it may be damaged or not "
            "really compressed that way."
        ) from None
    return data, extension


def gzip_claim(content: bytes) -> int:
    """The unpacked bytes a gzip file's trailer claims, a lower bound of its true unpacked
    size (0 for what is not gzip). The trailer's last four bytes, ISIZE, are the last
    member's unpacked size modulo 2^32 (RFC 1952, section 2.3.1): never more than that
    member's size, itself no more than the whole file's. A claim past the unpacked-bytes bound
    is refused before anything is inflated (inflating 512 MB of zeros took 8.5 s of CPU); a
    damaged file whose trailer claims more is refused for that claim, by a message that says
    it is one."""
    if len(content) < 18 or content[:2] != b"\x1f\x8b":  # header (10) + trailer (8)
        return 0
    return int.from_bytes(content[-4:], "little")


def _read_bounded(stream: io.BufferedIOBase, bound: Bound, cell_bound: Bound) -> bytes:
    """Read ``stream`` to its end in chunks, refusing it once it passes ``bound``, or once a
    run of text without a line break or delimiter passes ``cell_bound`` (:func:`longest_run`)."""
    pieces, size, run = [], 0, 0
    while chunk := stream.read(UNPACK_CHUNK):
        size += len(chunk)
        bound.check(size, "The file has")
        longest, run = longest_run(chunk, run, _SEPARATORS)
        cell_bound.check(longest, "A cell of the file has")
        pieces.append(chunk)
    return b"".join(pieces)


_SEPARATORS = np.zeros(256, dtype=bool)
_SEPARATORS[list(b"\n\r" + CANDIDATE_DELIMITERS.encode())] = True


def _single_text_member(archive: zipfile.ZipFile) -> zipfile.ZipInfo:
    """The one delimited-text file of a .zip archive (folders and macOS metadata ignored)."""
    members = [
        info
        for info in archive.infolist()
        if not info.is_dir()
        and not info.filename.startswith("__MACOSX/")
        and not PurePosixPath(info.filename).name.startswith(".")
    ]
    if len(members) != 1 or Path(members[0].filename).suffix.lower() not in _TEXT_EXTENSIONS:
        raise DataError("A .zip file must hold exactly one CSV, TSV or TXT file.")
    return members[0]


# --- delimited text ------------------------------------------------------------------------


def _read_delimited(
    content: bytes, extension: str, budget: ReadBudget
) -> tuple[pd.DataFrame, list[str]]:
    """Decode delimited text, detect its delimiter and parse it (every cell as text); the
    first row holds the names."""
    run = 0
    for start in range(0, len(content), UNPACK_CHUNK):  # in pieces: a flag per byte at most
        longest, run = longest_run(content[start : start + UNPACK_CHUNK], run, _SEPARATORS)
        budget.limits.cell_bytes.check(longest, "A cell of the file has")
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
    first_line = text[: text.find("\n")] if "\n" in text else text
    if '"' not in first_line:  # the header's count is exact: refuse a wide file before parsing
        budget.claim(columns=first_line.count(delimiter) + 1)
    data = content.removeprefix(b"\xef\xbb\xbf") if encoding == "utf-8" else text.encode()
    del text
    table = _parse_delimited(data, delimiter, budget)
    # A quoted cell holding delimiters passes the scan above in pieces: checked once parsed.
    budget.limits.cell_bytes.check(_longest_cell(table), "A cell of the file has")
    header = [
        value if value is not None else "" for value in table.slice(0, 1).to_pylist()[0].values()
    ]
    body = table.slice(1)
    budget.take(body.num_rows, body.num_rows * body.num_columns, 0)
    frame = body.to_pandas(types_mapper={pa.string(): pd.StringDtype(na_value=np.nan)}.get)
    frame.columns = header
    return frame, warnings


def _parse_delimited(data: bytes, delimiter: str, budget: ReadBudget) -> pa.Table:
    """Parse UTF-8 delimited text into a table of text columns named f0, f1, ... (the header
    is its first row). Quoted fields may hold newlines when the text has quotation marks."""
    n_typed = budget.limits.columns.limit + 1
    quoted = b'"' in data
    invalid: list[tuple[int, int, int | None]] = []

    def on_invalid_row(row: pa_csv.InvalidRow) -> str:
        if not row.text.strip():
            return "skip"  # a line of spaces only
        invalid.append((row.expected_columns, row.actual_columns, row.number))
        return "error"

    def parse(block_size: int, use_threads: bool) -> pa.Table:
        return pa_csv.read_csv(
            io.BytesIO(data),
            read_options=pa_csv.ReadOptions(
                autogenerate_column_names=True, block_size=block_size, use_threads=use_threads
            ),
            parse_options=pa_csv.ParseOptions(
                delimiter=delimiter, newlines_in_values=quoted, invalid_row_handler=on_invalid_row
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types={f"f{i}": pa.string() for i in range(n_typed)},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )

    block_size = 1 << 20
    try:
        try:
            table = parse(block_size, use_threads=True)
        except pa.ArrowInvalid as error:
            if invalid or "block" not in str(error):
                raise
            # A line longer than the block (a huge header or cell): one block for the file.
            table = parse(len(data) + 1, use_threads=True)
    except pa.ArrowInvalid:
        if not invalid:
            raise DataError("The file could not be read as a delimited text table.") from None
        raise DataError(_describe_invalid_row(data, parse, invalid)) from None
    budget.claim(columns=table.num_columns)
    if table.num_rows == 0:
        raise DataError("The file has no columns.")
    if quoted:
        _check_closed_quotes(data, table)
    return table


def _describe_invalid_row(
    data: bytes, parse: Callable[[int, bool], pa.Table], invalid: list[tuple[int, int, int | None]]
) -> str:
    """The message for the first row whose field count differs from the header's, with its
    line number (found by parsing again on one thread, which numbers the rows)."""
    expected, actual, number = invalid[0]
    if number is None:
        invalid.clear()
        with contextlib.suppress(pa.ArrowInvalid):
            parse(max(1 << 20, len(data) + 1), False)
        if invalid:
            expected, actual, number = invalid[0]
    where = f"line {number}" if number is not None else "a line"
    more_or_fewer = "more" if actual > expected else "fewer"
    return (
        f"The file is not a consistent table: {where} has {more_or_fewer} fields than the header "
        "line. Check the delimiter and the quoting around that line."
    )


def _check_closed_quotes(data: bytes, table: pa.Table) -> None:
    """Refuse text whose last quoted field is never closed (pyarrow reads it to the end of the
    file): the last cell then spans lines and the text does not end with a quotation mark."""
    last = table.column(table.num_columns - 1)[-1].as_py() or ""
    if ("\n" in last or "\r" in last) and not data.rstrip(b"\r\n").endswith(b'"'):
        line = data.count(b"\n", 0, max(0, len(data) - len(last.encode()))) + 1
        raise DataError(
            "The file is not a consistent table: a quotation mark opened near line "
            f"{line} is never closed."
        ) from None


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
    try:
        return len(next(csv.reader([line], delimiter=delimiter), []))
    except csv.Error:  # a field longer than the csv module's limit: count without quotes
        return line.count(delimiter) + 1


# --- Parquet -------------------------------------------------------------------------------


def _read_parquet(
    content: bytes, extension: str, budget: ReadBudget
) -> tuple[pd.DataFrame, list[str]]:
    """Read a Parquet file with pyarrow, its footer checked first, then batch by batch with
    text kept dictionary-encoded and counted at its full length; a stored index becomes
    ordinary columns."""
    unreadable = (
        "The file could not be read as Parquet; it may be damaged or not really a Parquet file."
    )
    try:
        file = pq.ParquetFile(
            pa.BufferReader(content),
            thrift_string_size_limit=budget.limits.file_bytes.limit,
            thrift_container_size_limit=1_000_000,
        )
        schema = file.schema_arrow
        metadata = file.metadata
    except Exception:
        raise DataError(unreadable) from None
    budget.claim(columns=len(schema))
    if any(
        pa.types.is_nested(f.type)
        or (pa.types.is_dictionary(f.type) and pa.types.is_nested(f.type.value_type))
        for f in schema
    ):
        raise DataError(
            "The file was read, but some columns hold cells of a kind this tool cannot use "
            "(for example lists or nested records)."
        )
    groups = [metadata.row_group(i) for i in range(metadata.num_row_groups)]
    rows = max(metadata.num_rows, sum(group.num_rows for group in groups))
    budget.claim(rows=rows, columns=len(schema))
    _claim_fixed_widths(schema, metadata, budget)
    unpacked = sum(group.total_byte_size for group in groups)
    fixed = max(
        max((group.num_rows for group in groups), default=0) * fixed_row_bytes(schema, metadata),
        rows * fixed_row_bytes(schema, metadata),
    )
    budget.claim(nbytes=max(unpacked, fixed))
    text = [
        f.name
        for f in schema
        if pa.types.is_string(f.type)
        or pa.types.is_large_string(f.type)
        or pa.types.is_binary(f.type)
        or pa.types.is_large_binary(f.type)
    ]
    try:
        file = pq.ParquetFile(
            pa.BufferReader(content), read_dictionary=text, thrift_container_size_limit=1_000_000
        )
        batches = []
        for batch in file.iter_batches(batch_size=CHUNK_ROWS, use_pandas_metadata=True):
            budget.take(batch.num_rows, batch.num_rows * batch.num_columns, _unpacked_size(batch))
            budget.limits.cell_bytes.check(_longest_cell(batch), "A cell of the file has")
            batches.append(batch)
        table = pa.Table.from_batches(batches, schema=batches[0].schema if batches else None)
        if not batches:
            table = file.schema_arrow.empty_table()
        table = pa.table(
            [_plain(column) for column in table.columns], schema=_plain_schema(table.schema)
        )
        frame = table.to_pandas()
    except (DataError, LimitError):
        raise
    except Exception:
        raise DataError(unreadable) from None
    if frame.index.names != [None] or not frame.index.equals(pd.RangeIndex(len(frame))):
        frame = frame.reset_index()
    return frame, []


def _fixed_width(data_type: pa.DataType) -> int:
    """Bytes per row of a column of ``data_type`` once decoded, when every value has the same
    width (numbers, dates, fixed-width binary, decimals; a dictionary-encoded or extension
    column by its values' type); 0 for text and variable-length binary, which are counted at
    their full length batch by batch instead."""
    if pa.types.is_dictionary(data_type):
        data_type = data_type.value_type
    if isinstance(data_type, pa.ExtensionType):
        data_type = data_type.storage_type
    if pa.types.is_fixed_size_binary(data_type) or pa.types.is_decimal(data_type):
        return int(data_type.byte_width)
    try:
        return max(1, data_type.bit_width // 8)
    except ValueError:  # variable width
        return 0


def fixed_row_bytes(schema: pa.Schema, metadata: pq.FileMetaData | None = None) -> int:
    """Bytes one row takes once decoded in its fixed-width columns (:func:`_fixed_width`), by
    the Arrow schema and, when given, by the Parquet footer's physical types (a fixed-length
    byte array of ``length`` bytes), whichever is larger: a file's row count times this is
    what decoding allocates, known before anything is decoded."""
    by_arrow = sum(_fixed_width(field.type) for field in schema)
    by_footer = 0
    if metadata is not None:
        for i in range(metadata.num_columns):
            column = metadata.schema.column(i)
            if column.physical_type == "FIXED_LEN_BYTE_ARRAY":
                by_footer += int(column.length or 0)
    return max(by_arrow, by_footer)


def _claim_fixed_widths(schema: pa.Schema, metadata: pq.FileMetaData, budget: ReadBudget) -> None:
    """Refuse a fixed-width column whose every value is longer than one cell may be."""
    widths = [_fixed_width(field.type) for field in schema]
    widths += [
        int(metadata.schema.column(i).length or 0)
        for i in range(metadata.num_columns)
        if metadata.schema.column(i).physical_type == "FIXED_LEN_BYTE_ARRAY"
    ]
    budget.limits.cell_bytes.check(max(widths, default=0), "A cell of the file has")


def _longest_cell(batch: pa.RecordBatch | pa.Table) -> int:
    """Bytes of the longest text or binary value of ``batch`` (a dictionary-encoded column of a
    batch by its dictionary, which holds every value it uses)."""
    longest = 0
    for column in batch.columns:
        values = column.dictionary if pa.types.is_dictionary(column.type) else column
        kind = values.type
        if (
            pa.types.is_string(kind)
            or pa.types.is_large_string(kind)
            or pa.types.is_binary(kind)
            or pa.types.is_large_binary(kind)
        ) and len(values):
            longest = max(longest, pc.max(pc.binary_length(values)).as_py() or 0)
    return longest


def bounded_batches(
    batches: Iterable[pa.RecordBatch],
    rows: int,
    columns: int,
    nbytes: int,
    limits: ReadLimits = READ_LIMITS,
) -> Iterator[pa.RecordBatch]:
    """``batches``, checked against ``limits`` as they are read: first the shape and unpacked
    size a table's metadata announces (``rows``, ``columns``, ``nbytes``), then each batch,
    its text counted at full length and its longest value against the bound ``cell_bytes``,
    stopping as soon as a bound is passed (a LimitError naming it). For tables read elsewhere
    (a Parquet file or folder on the command line)."""
    budget = ReadBudget(limits, limits.cells)
    budget.claim(rows=rows, columns=columns, nbytes=nbytes)
    for batch in batches:
        budget.take(batch.num_rows, batch.num_rows * batch.num_columns, _unpacked_size(batch))
        limits.cell_bytes.check(_longest_cell(batch), "A cell of the file has")
        yield batch


def _unpacked_size(batch: pa.RecordBatch) -> int:
    """Bytes of ``batch`` with every text value at its full length (a dictionary-encoded
    column counts each row's value, not the dictionary once)."""
    size = 0
    for column in batch.columns:
        if pa.types.is_dictionary(column.type):
            lengths = pc.binary_length(column.dictionary)
            total = pc.sum(pc.take(lengths, column.indices)).as_py() or 0
            size += total + 8 * len(column)
        else:
            size += column.nbytes
    return size


def _plain(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A dictionary-encoded column decoded (the size was counted already)."""
    return column.cast(column.type.value_type) if pa.types.is_dictionary(column.type) else column


def _plain_schema(schema: pa.Schema) -> pa.Schema:
    fields = [
        f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f for f in schema
    ]
    return pa.schema(fields, metadata=schema.metadata)


# --- Stata and SAS -------------------------------------------------------------------------


def _read_stata(
    content: bytes, extension: str, budget: ReadBudget
) -> tuple[pd.DataFrame, list[str]]:
    """Read a Stata .dta file, its header (observations, variables) checked first; value
    labels become text."""
    shape = stata_shape(content)
    if shape is not None:
        budget.claim(rows=shape[0], columns=shape[1])
    try:
        return pd.read_stata(io.BytesIO(content)), []
    except Exception:
        raise DataError(
            "The file could not be read as a Stata .dta file; it may be damaged or saved "
            "by a version pandas cannot read."
        ) from None


def stata_shape(content: bytes) -> tuple[int, int] | None:
    """(observations, variables) from a Stata .dta header, None when it is not one.

    Formats 117-119 begin ``<stata_dta><header><release>NNN</release><byteorder>MSF|LSF
    </byteorder><K>`` with K, the variables, in 2 bytes (4 from 119) then ``</K><N>`` and N, the
    observations, in 4 bytes (117) or 8; formats 104-115 begin with the release byte, the byte
    order (1 big-endian, 2 little-endian), two more bytes, K in 2 bytes and N in 4 (Stata's
    dta file-format documentation).
    """
    new = re.match(
        rb"<stata_dta><header><release>(\d{3})</release><byteorder>(MSF|LSF)</byteorder><K>",
        content,
    )
    if new is not None:
        release = int(new.group(1))
        order = "big" if new.group(2) == b"MSF" else "little"
        position = new.end()
        k_size = 4 if release >= 119 else 2
        n_size = 4 if release == 117 else 8
        k_end = position + k_size
        if content[k_end : k_end + 7] != b"</K><N>":
            return None
        variables = int.from_bytes(content[position:k_end], order)
        observations = int.from_bytes(content[k_end + 7 : k_end + 7 + n_size], order)
        return observations, variables
    if len(content) >= 10 and 104 <= content[0] <= 115 and content[1] in (1, 2):
        order = "big" if content[1] == 1 else "little"
        return int.from_bytes(content[6:10], order), int.from_bytes(content[4:6], order)
    return None


def _read_sas(content: bytes, extension: str, budget: ReadBudget) -> tuple[pd.DataFrame, list[str]]:
    """Read a SAS .sas7bdat (possibly compressed) or transport (.xpt) file: the header's
    counts first, then chunk by chunk."""
    sas_format = "sas7bdat" if extension == ".sas7bdat" else "xport"
    unreadable = (
        f"The file could not be read as a SAS {extension} file; it may be damaged or not "
        "really a SAS file."
    )
    try:
        reader = pd.read_sas(
            io.BytesIO(content), format=sas_format, encoding="infer", chunksize=CHUNK_ROWS
        )
    except Exception:
        raise DataError(unreadable) from None
    with reader:
        if sas_format == "sas7bdat":
            budget.claim(rows=reader.row_count, columns=reader.column_count)
        else:
            budget.claim(rows=reader.nobs, columns=len(reader.fields))
        chunks = []
        try:
            for chunk in reader:
                budget.take(len(chunk), chunk.size, _frame_bytes(chunk))
                chunks.append(chunk)
        except (DataError, LimitError):
            raise
        except Exception:
            raise DataError(unreadable) from None
    if not chunks:
        raise DataError("The file has column names but no rows of data.")
    return pd.concat(chunks, ignore_index=True), []


_TEXT_EXTENSIONS = (".csv", ".tsv", ".txt")
_DECOMPRESSORS: dict[str, Callable[[io.BytesIO], io.BufferedIOBase]] = {
    ".gz": gzip.open,
    ".bz2": bz2.open,
    ".xz": lzma.open,
}
_READERS: dict[str, Callable[[bytes, str, ReadBudget], tuple[pd.DataFrame, list[str]]]] = {
    ".csv": _read_delimited,
    ".tsv": _read_delimited,
    ".txt": _read_delimited,
    ".xlsx": read_excel,
    ".xls": read_excel,
    ".parquet": _read_parquet,
    ".dta": _read_stata,
    ".sas7bdat": _read_sas,
    ".xpt": _read_sas,
}
SUPPORTED_EXTENSIONS = (*_READERS, *(f".csv{c}" for c in _DECOMPRESSORS), ".zip")
"""File name endings :func:`read_table` reads (lower case, with the dot); compressed text may
also be .tsv or .txt before the compression's extension."""


# --- the table read, checked once more -----------------------------------------------------


def _frame_bytes(frame: pd.DataFrame) -> int:
    """Bytes of ``frame`` with every text value at its full length (8 bytes per other cell):
    text cells that share one long value count once per cell, as they will once copied."""
    size = 0
    for _, column in frame.items():
        if isinstance(column.dtype, pd.StringDtype):
            size += int(column.str.len().sum()) + 8 * len(column)
        elif column.dtype == object:
            size += sum(len(v) for v in column.to_numpy() if isinstance(v, str | bytes))
            size += 8 * len(column)
        else:
            size += int(column.memory_usage(index=False, deep=False))
    return size


def _check_table(raw: pd.DataFrame, budget: ReadBudget) -> None:
    """Check the table read against every bound, whatever its format announced."""
    limits = budget.limits
    limits.columns.check(raw.shape[1], "The file has")
    limits.rows.check(raw.shape[0], "The file has")
    budget.cell_bound.check(raw.shape[0] * raw.shape[1], "The file has")
    limits.decoded_bytes.check(_frame_bytes(raw), "The file has")
    longest = max((len(str(name)) for name in raw.columns), default=0)
    if longest > MAX_NAME_CHARS:
        raise DataError(
            f"A column name of the file has {longest:,} characters; at most {MAX_NAME_CHARS:,} "
            "are allowed. Shorten the column names and load the file again."
        )


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
