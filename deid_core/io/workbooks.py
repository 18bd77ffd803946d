"""Reading Excel workbooks within bounds: the first sheet of an .xlsx workbook, its cells
counted in the unpacked XML before openpyxl parses anything, then read row by row against the
reader's budget; an old .xls workbook with ``xlrd`` when installed."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import re
import zipfile
from collections.abc import Iterator

import numpy as np
import pandas as pd

from deid_core.errors import DataError, LimitError
from deid_core.io.read_budget import CHUNK_ROWS, UNPACK_CHUNK, ReadBudget, longest_run

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
    import openpyxl  # imported here: only workbooks need it

    with _as_workbook_error(extension):
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            # The archive's own claim of its unpacked size (zipfile stops each member there).
            budget.claim(nbytes=sum(info.file_size for info in archive.infolist()))
            _count_cell_tags(archive, budget)
        book = openpyxl.load_workbook(
            io.BytesIO(content), read_only=True, data_only=True, keep_links=False
        )
    try:
        with _as_workbook_error(extension):
            sheet = book.worksheets[0]
            try:
                first_column, first_row, last_column, last_row = _sheet_dimension(sheet)
            except ValueError:  # no dimension recorded: the rows are counted as they come
                pass
            else:
                budget.claim(rows=last_row - first_row + 1, columns=last_column - first_column + 1)
            sheet.reset_dimensions()  # a recorded dimension may be wrong: read every cell
            rows = list(_excel_rows(sheet, budget))
    finally:
        book.close()
    if not rows:
        raise DataError("The first sheet of the workbook is empty.")
    width = max(len(row) for row in rows)
    cells = pd.DataFrame([row + [None] * (width - len(row)) for row in rows], dtype=object)
    header = ["" if pd.isna(name) else str(name) for name in cells.iloc[0]]
    frame = cells.iloc[1:].reset_index(drop=True)
    frame.columns = header
    return frame, []


def _sheet_dimension(sheet: object) -> tuple[int, int, int, int]:
    """(first column, first row, last column, last row) the sheet records; ValueError when it
    records none."""
    from openpyxl.utils.cell import range_boundaries

    bounds_ = range_boundaries(sheet.calculate_dimension())  # type: ignore[attr-defined]
    if any(value is None for value in bounds_):
        raise ValueError("no dimension")
    return bounds_  # type: ignore[return-value]


_TAG_START = np.zeros(256, dtype=bool)
_TAG_START[ord("<")] = True
_SHEET_PART = re.compile(r"xl/worksheets/[^/]+\.xml", re.IGNORECASE)
_SHARED_TEXTS_PART = re.compile(r"xl/sharedStrings\.xml", re.IGNORECASE)
_CELL_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?c[\s/>]")
_SHARED_TEXT_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?si[\s/>]")


def _count_cell_tags(archive: zipfile.ZipFile, budget: ReadBudget) -> None:
    """Count the cells of every sheet (and the workbook's shared texts) in the unpacked XML,
    refused past the bound before openpyxl parses anything: a fast upper bound (about 1 s for
    100 MB of XML), where parsing takes minutes (openpyxl even parses a whole sheet to size it
    when the sheet records no dimension)."""
    cells = 0
    for info in archive.infolist():
        if _SHEET_PART.fullmatch(info.filename):
            cells = _count_tags(archive, info, _CELL_TAG, budget, cells)
        elif _SHARED_TEXTS_PART.fullmatch(info.filename):
            _count_tags(archive, info, _SHARED_TEXT_TAG, budget, 0)


def _count_tags(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    tag: re.Pattern[bytes],
    budget: ReadBudget,
    count: int,
) -> int:
    """``count`` plus the elements ``tag`` matches in the member ``info``, checked against the
    cell bound as the member is unpacked; the longest run of XML without a ``<`` (a cell's or
    shared text's value lies between two tags) is checked against the bound ``cell_bytes``."""
    tail = b""
    run = 0
    with archive.open(info) as stream:
        while chunk := stream.read(UNPACK_CHUNK):
            longest, run = longest_run(chunk, run, _TAG_START)
            budget.limits.cell_bytes.check(longest, "A cell of the file has")
            text = tail + chunk
            cut = max(0, len(text) - 64)
            count += len(tag.findall(text, 0, cut))
            tail = text[cut:]
            budget.cell_bound.check(count, "The file has at least")
    count += len(tag.findall(tail))
    budget.cell_bound.check(count, "The file has")
    return count


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
    header = ["" if pd.isna(name) else str(name) for name in cells.iloc[0]]
    frame = cells.iloc[1:].reset_index(drop=True)
    frame.columns = header
    return frame, []
