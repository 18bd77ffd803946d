"""The bounds a reader of uploaded tables enforces (:class:`ReadLimits`, from
:mod:`deid_core.bounds`) and what a reader has taken against them so far (:class:`ReadBudget`),
shared by the readers of every format (:mod:`deid_core.io.reading`,
:mod:`deid_core.io.workbooks`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from deid_core import bounds
from deid_core.bounds import Bound

CHUNK_ROWS = 65_536
"""Rows (or cells, for a workbook) per piece when a format is read in pieces."""
UNPACK_CHUNK = 1024 * 1024
"""Bytes per piece when compressed data are unpacked."""


@dataclass(frozen=True)
class ReadLimits:
    """The bounds :func:`read_table` enforces (defaults from :mod:`deid_core.bounds`)."""

    file_bytes: Bound = bounds.FILE_BYTES
    decoded_bytes: Bound = bounds.DECODED_BYTES
    rows: Bound = bounds.ROWS
    columns: Bound = bounds.COLUMNS
    cells: Bound = bounds.CELLS
    excel_cells: Bound = bounds.EXCEL_CELLS
    cell_bytes: Bound = bounds.CELL_BYTES


READ_LIMITS = ReadLimits()


@dataclass
class ReadBudget:
    """What a reader has taken so far against the bounds: rows, cells and unpacked bytes.

    :meth:`claim` checks what a format's metadata says before reading; :meth:`take` adds a piece
    as it is read and stops as soon as a bound is passed ("at least", since the rest is unread).
    """

    limits: ReadLimits
    cell_bound: Bound
    rows: int = 0
    cells: int = 0
    nbytes: int = 0
    columns: int = field(default=0)

    def claim(
        self,
        rows: int | None = None,
        columns: int | None = None,
        nbytes: int | None = None,
        where: str = "The file has",
    ) -> None:
        """Check the shape and unpacked size a file's metadata announces (``where`` begins
        the message: "The file has", "A sheet of the file has")."""
        if columns is not None:
            self.limits.columns.check(columns, where)
        if rows is not None:
            self.limits.rows.check(rows, where)
        if rows is not None and columns is not None:
            self.cell_bound.check(rows * columns, where)
        if nbytes is not None:
            self.limits.decoded_bytes.check(nbytes, where)

    def take(self, rows: int, cells: int, nbytes: int) -> None:
        """Add a piece just read (``cells`` counts every cell worked on, padding included)."""
        self.rows += rows
        self.cells += cells
        self.nbytes += nbytes
        self.limits.rows.check(self.rows, "The file has at least")
        self.cell_bound.check(self.cells, "The file has at least")
        self.limits.decoded_bytes.check(self.nbytes, "The file has")


def longest_run(chunk: bytes, carried: int, separators: np.ndarray) -> tuple[int, int]:
    """(the longest run of bytes of ``chunk`` holding no byte flagged in ``separators``, its
    first run extended by the ``carried`` bytes that ended the previous chunk; the bytes after
    the chunk's last separator, to carry into the next).

    ``separators`` flags each of the 256 byte values. With the line breaks and every candidate
    delimiter as separators, no cell of delimited text is longer than the longest run, so a
    huge cell is refused while the text is still being unpacked (a quoted cell holding
    delimiters is cut at them: it is bounded by the unpacked size instead)."""
    flags = separators[np.frombuffer(chunk, dtype=np.uint8)]
    at = np.flatnonzero(flags)
    if at.size == 0:
        return carried + len(chunk), carried + len(chunk)
    first = carried + int(at[0])
    inner = int(np.diff(at).max()) - 1 if at.size > 1 else 0
    last = len(chunk) - int(at[-1]) - 1
    return max(first, inner, last), last
