"""Reading Excel workbooks within bounds: the first sheet of an .xlsx workbook, its cells and
rows bounded from the unpacked XML as it streams (before openpyxl is even imported), then read
row by row against the reader's budget; an old .xls workbook with ``xlrd`` when installed."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import re
import sys
import zipfile
from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd

from deid_core.errors import DataError, LimitError
from deid_core.io.read_budget import CHUNK_ROWS, UNPACK_CHUNK, ReadBudget

_EXCEL_ERRORS = frozenset({"e"})
"""openpyxl's data type of an error cell (#N/A, #DIV/0!...): read as a missing value."""


@contextlib.contextmanager
def _as_workbook_error(extension: str) -> Iterator[None]:
    """Any failure of the workbook's parser becomes one plain message (never a traceback, never
    a value of the file); the reader's own refusals pass through."""
    try:
        yield
    except (DataError, LimitError):
        raise
    except Exception:
        raise DataError(
            f"The file could not be read as an Excel {extension} workbook; "
            "it may be damaged or not really an Excel file."
        ) from None


def read_excel(
    content: bytes, extension: str, budget: ReadBudget
) -> tuple[pd.DataFrame, list[str]]:
    """Read the first sheet; its first non-empty row holds the column names."""
    if extension == ".xls":
        return _read_old_excel(content, budget)
    with _first_sheet(content, extension, budget) as sheet:
        rows = list(_excel_rows(sheet, budget))
    if not rows:
        raise DataError("The first sheet of the workbook is empty.")
    width = max(len(row) for row in rows)
    cells = pd.DataFrame([row + [None] * (width - len(row)) for row in rows], dtype=object)
    frame = cells.iloc[1:].reset_index(drop=True)
    frame.columns = _names(cells.iloc[0])
    return frame, []


def read_excel_header(content: bytes, extension: str, budget: ReadBudget) -> list[str] | None:
    """The names in the first non-empty row of an .xlsx workbook's first sheet, as
    :func:`read_excel` gives them (before cleaning), read without the rows after it; None for
    an old .xls workbook or an empty sheet. Later rows may be longer than this one: their
    extra cells get columns of their own."""
    if extension == ".xls":
        return None
    with _first_sheet(content, extension, budget) as sheet:
        first = next(_excel_rows(sheet, budget), None)
    return None if first is None else _names(first)


def _names(values: Iterable[object]) -> list[str]:
    """Column names from the cells of a header row (an empty cell gives '')."""
    return ["" if pd.isna(value) else str(value) for value in values]


@contextlib.contextmanager
def _first_sheet(content: bytes, extension: str, budget: ReadBudget) -> Iterator[object]:
    """The first sheet of an .xlsx workbook, opened by openpyxl (read-only) once the workbook
    passed the scan of its XML (:func:`_scan_parts`); any failure of the parser becomes one
    plain message."""
    with _as_workbook_error(extension), zipfile.ZipFile(io.BytesIO(content)) as archive:
        # The archive's own claim of its unpacked size (zipfile stops each member there).
        budget.claim(nbytes=sum(info.file_size for info in archive.infolist()))
        _scan_parts(archive, budget)
    import openpyxl  # imported here, once the workbook passed the scan: only workbooks need it

    with _as_workbook_error(extension):
        book = openpyxl.load_workbook(
            io.BytesIO(content), read_only=True, data_only=True, keep_links=False
        )
    try:
        with _as_workbook_error(extension):
            sheet = book.worksheets[0]
            sheet.reset_dimensions()  # a recorded dimension may be wrong: read every cell
            yield sheet
    finally:
        book.close()


_SHEET_PART = re.compile(r"xl/worksheets/[^/]+\.xml", re.IGNORECASE)
_SHARED_TEXTS_PART = re.compile(r"xl/sharedStrings\.xml", re.IGNORECASE)
_NAME_END = np.zeros(256, dtype=bool)
_NAME_END[list(b" \t\n\r\x0b\x0c/>")] = True
"""The bytes that may end an element's name in a tag (XML white space, ``/``, ``>``)."""
_PREFIX = rb"[A-Za-z_][\w.-]*:"
_ROW_NUMBER = rb"row(?=[\s/>])[^>]*?\sr\s*=\s*[\"']([^\"']*)"
_ROW_NUMBERS = re.compile(rb"<" + _ROW_NUMBER)
_PREFIXED_ROW_NUMBERS = re.compile(rb"<" + _PREFIX + _ROW_NUMBER)
_DIMENSION = re.compile(
    rb"<(?:" + _PREFIX + rb")?dimension(?=[\s/>])[^>]*?\sref\s*=\s*[\"']\s*\$?([A-Za-z]{1,3})"
    rb"\$?(\d{1,18})(?::\$?([A-Za-z]{1,3})\$?(\d{1,18}))?\s*[\"']"
)
_LAST_ROW = sys.maxsize
"""Row numbers are read up to this (a larger one refuses the sheet just the same)."""


def _scan_parts(archive: zipfile.ZipFile, budget: ReadBudget) -> None:
    """Bound every sheet (and the workbook's shared texts) from its unpacked XML as it is
    streamed, before openpyxl is even imported; a fast lower bound of openpyxl's work (about
    0.1 s for 16 MB of XML, where parsing takes seconds, and openpyxl parses a whole sheet to
    size it when the sheet records no dimension):

    - a sheet's recorded ``<dimension ref="A1:C2000">`` is a claim, refused past the bounds
      (never trusted to allow anything: it may lie, or be missing);
    - the cells of all sheets are counted (``<c>`` elements), and the highest row number of
      each sheet (its ``<row r="...">`` attributes) counts too: openpyxl yields every row up
      to it, one empty row for each missing one. The larger of the two is checked against
      the cell bound as the XML is unpacked, so a sheet of two cells, one at row 1,048,576,
      is refused from its 242 bytes of XML;
    - the shared texts (``<si>`` elements) are counted against the cell bound;
    - the longest run of XML without a ``<`` (a value lies between two tags) is checked
      against the bound ``cell_bytes``.
    """
    cells = 0
    for info in archive.infolist():
        if _SHEET_PART.fullmatch(info.filename):
            cells = _scan_part(archive, info, b"c", budget, cells, sheet=True)
        elif _SHARED_TEXTS_PART.fullmatch(info.filename):
            _scan_part(archive, info, b"si", budget, 0, sheet=False)


def _scan_part(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    name: bytes,
    budget: ReadBudget,
    count: int,
    *,
    sheet: bool,
) -> int:
    """``count`` plus the elements called ``name`` (any namespace prefix) in the member
    ``info``, checked as the member is unpacked (see :func:`_scan_parts`); for a ``sheet``,
    its dimension and highest row number too. The XML is cut into pieces at their last
    ``<``, so that no tag spans two pieces."""
    tail = b""
    last_row = 0
    first = True
    with archive.open(info) as stream:
        while chunk := stream.read(UNPACK_CHUNK):
            text = tail + chunk
            starts = np.flatnonzero(np.frombuffer(text, dtype=np.uint8) == ord("<"))
            if starts.size == 0:  # no tag yet: one long run, carried whole
                budget.limits.cell_bytes.check(len(text), "A cell of the file has")
                tail = text
                continue
            longest = max(int(starts[0]), len(text) - int(starts[-1]) - 1)
            if starts.size > 1:
                longest = max(longest, int(np.diff(starts).max()) - 1)
            budget.limits.cell_bytes.check(longest, "A cell of the file has")
            if sheet and first:
                _claim_dimension(text, budget)
            first = False
            cut = int(starts[-1])  # the tag that may go on in the next piece: carried
            count += _count_elements(text, starts[:-1], name, cut)
            if sheet:
                last_row = max(last_row, _last_row_number(text, cut))
            budget.cell_bound.check(max(count, last_row), "The file has at least")
            tail = text[cut:]
    count += _count_elements(tail, np.flatnonzero(np.frombuffer(tail, np.uint8) == 60), name)
    if sheet:
        last_row = max(last_row, _last_row_number(tail, len(tail)))
    budget.cell_bound.check(max(count, last_row), "The file has")
    return count


def _count_elements(text: bytes, starts: np.ndarray, name: bytes, end: int | None = None) -> int:
    """The elements called ``name`` that open at ``starts`` (positions of ``<`` in ``text``),
    prefixed ones (``<x:c>``) among the tags before ``end`` counted too when there are any."""
    codes = np.frombuffer(text, dtype=np.uint8)
    found = np.ones(starts.size, dtype=bool)
    for offset, byte in enumerate(name, start=1):
        found &= codes.take(starts + offset, mode="clip") == byte
    found &= _NAME_END[codes.take(starts + len(name) + 1, mode="clip")]
    count = int(found.sum())
    if b":" + name in text:
        count += len(re.findall(rb"<" + _PREFIX + name + rb"[\s/>]", text[:end]))
    return count


def _last_row_number(text: bytes, end: int) -> int:
    """The highest row number (``r`` attribute of a ``<row>``) among the tags before ``end``;
    0 when there is none. A number openpyxl cannot read either (``r="x"``) is a ValueError."""
    numbers = _ROW_NUMBERS.findall(text, 0, end)
    if b":row" in text:
        numbers += _PREFIXED_ROW_NUMBERS.findall(text, 0, end)
    return min(_LAST_ROW, int(max(map(float, numbers)))) if numbers else 0


def _claim_dimension(text: bytes, budget: ReadBudget) -> None:
    """Refuse a sheet whose recorded dimension (``<dimension ref="A1:C2000"/>``, written before
    its cells) passes the bounds on rows, columns or cells."""
    found = _DIMENSION.search(text)
    if found is None:
        return
    first_column, first_row, last_column, last_row = found.groups()
    if last_column is None:  # one cell
        return
    rows = int(last_row) - int(first_row) + 1
    columns = _column_number(last_column) - _column_number(first_column) + 1
    budget.claim(rows=rows, columns=columns, where="A sheet of the file has")


def _column_number(letters: bytes) -> int:
    """The number of a column from its letters (A is 1, Z 26, AA 27, XFD 16,384)."""
    number = 0
    for letter in letters.upper():
        number = 26 * number + letter - ord("A") + 1
    return number


def _excel_rows(sheet: object, budget: ReadBudget) -> Iterator[list[object]]:
    """The sheet's non-empty rows as lists of values, converted as pandas converts them (error
    cells missing, whole floats as integers); trailing empty cells are cut. Every row and cell
    met, empty ones included, counts against the budget."""
    pending_rows = pending_cells = pending_bytes = 0
    for row in sheet.iter_rows():  # type: ignore[attr-defined]
        values: list[object] = []
        for cell in row:
            value = cell.value
            if value is not None:
                if cell.data_type in _EXCEL_ERRORS:
                    value = None
                elif type(value) is float and math.isfinite(value) and value.is_integer():
                    value = int(value)
                elif type(value) is str:
                    pending_bytes += len(value)
            values.append(value)
        pending_rows += 1
        pending_cells += max(1, len(values))
        pending_bytes += 8 * len(values)
        if pending_cells >= CHUNK_ROWS:
            budget.take(pending_rows, pending_cells, pending_bytes)
            pending_rows = pending_cells = pending_bytes = 0
        while values and values[-1] is None:
            values.pop()
        if values:
            yield values
    budget.take(pending_rows, pending_cells, pending_bytes)


def _read_old_excel(content: bytes, budget: ReadBudget) -> tuple[pd.DataFrame, list[str]]:
    """An old .xls workbook (uncompressed, so bounded by its size), with ``xlrd`` when
    installed."""
    if importlib.util.find_spec("xlrd") is None:
        raise DataError("Old Excel .xls files cannot be read here; save the sheet as .xlsx or CSV.")
    try:
        cells = pd.read_excel(
            io.BytesIO(content),
            sheet_name=0,
            header=None,
            dtype=object,
            nrows=budget.limits.rows.limit + 1,
        )
    except Exception:
        raise DataError(
            "The file could not be read as an Excel .xls workbook; "
            "it may be damaged or not really an Excel file."
        ) from None
    cells = cells.dropna(how="all")
    if cells.empty:
        raise DataError("The first sheet of the workbook is empty.")
    header = _names(cells.iloc[0])
    frame = cells.iloc[1:].reset_index(drop=True)
    frame.columns = header
    return frame, []
