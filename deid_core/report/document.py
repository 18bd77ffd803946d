"""What a report is made of: sections of paragraphs, bullet lists, tables and figures.

The blocks hold text and PNG bytes only; :mod:`deid_core.report.html` and
:mod:`deid_core.report.pdf` render them, and :mod:`deid_core.report.builder` fills them.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass


@dataclass(frozen=True)
class Paragraph:
    """Plain text; ``kind`` is "text", "note", "ok" (a met threshold) or "warn"."""

    text: str
    kind: str = "text"


@dataclass(frozen=True)
class BulletList:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""

    def column(self, row_label: str, column: int) -> str:
        """The cell of the row whose first cell is ``row_label``."""
        for row in self.rows:
            if row[0] == row_label:
                return row[column]
        raise KeyError(row_label)


@dataclass(frozen=True)
class Figure:
    """A chart rendered as a PNG (the same bytes go into the HTML and the PDF)."""

    title: str
    png: bytes
    caption: str = ""

    def data_uri(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")


Block = Paragraph | BulletList | Table | Figure


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    blocks: tuple[Block, ...]

    def text(self) -> str:
        """Every word of the section (for tests and search), charts by title and caption."""
        parts = [self.title]
        for block in self.blocks:
            if isinstance(block, Paragraph):
                parts.append(block.text)
            elif isinstance(block, BulletList):
                parts.extend(block.items)
            elif isinstance(block, Table):
                parts.append(" | ".join(block.header))
                parts.extend(" | ".join(row) for row in block.rows)
                parts.append(block.caption)
            else:
                parts.extend((block.title, block.caption))
        return "\n".join(p for p in parts if p)

    def tables(self) -> list[Table]:
        return [b for b in self.blocks if isinstance(b, Table)]

    def figures(self) -> list[Figure]:
        return [b for b in self.blocks if isinstance(b, Figure)]
