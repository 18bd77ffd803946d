"""What a report is made of: sections of paragraphs, bullet lists, tables and figures.

The blocks hold text and chart specifications only; :mod:`deid_core.report.html` and
:mod:`deid_core.report.pdf` render them, and :mod:`deid_core.report.builder` fills them.
"""

from __future__ import annotations

import base64
import functools
from dataclasses import dataclass
from typing import Any

from deid_core.report.charts import render_svg, svg_to_png


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

    def lines(self) -> list[str]:
        """The header, each row and the caption as lines of text (cells joined by " | ")."""
        rows = [" | ".join(self.header), *(" | ".join(row) for row in self.rows)]
        return [*rows, self.caption] if self.caption else rows

    def column(self, row_label: str, column: int) -> str:
        """The cell of the row whose first cell is ``row_label``."""
        for row in self.rows:
            if row[0] == row_label:
                return row[column]
        raise KeyError(row_label)


@dataclass(frozen=True)
class Figure:
    """A chart: the Vega-Lite specification the pages draw (:mod:`deid_core.charts`),
    rendered as SVG in the HTML and as PNG in the PDF. Its text alternative is ``alt`` (what
    the chart shows, in a sentence or two: the image's alt text) and ``data``, the figures it
    draws as a table."""

    title: str
    spec: dict[str, Any]
    caption: str = ""
    alt: str = ""
    data: Table | None = None

    def png(self) -> bytes:
        return svg_to_png(self.svg())

    @functools.cached_property
    def _svg(self) -> str:
        return render_svg(self.spec)  # once per figure: the PNG is drawn from it

    def svg(self) -> str:
        return self._svg

    def svg_data_uri(self) -> str:
        """The SVG as a data URI: shown through an ``<img>``, which runs no script and loads
        nothing, whatever text the chart holds."""
        data = base64.b64encode(self.svg().encode("utf-8")).decode("ascii")
        return "data:image/svg+xml;base64," + data


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
                parts.extend(block.lines())
            else:
                parts.extend((block.title, block.alt, block.caption))
                if block.data is not None:
                    parts.extend(block.data.lines())
        return "\n".join(p for p in parts if p)

    def tables(self) -> list[Table]:
        return [b for b in self.blocks if isinstance(b, Table)]

    def figures(self) -> list[Figure]:
        return [b for b in self.blocks if isinstance(b, Figure)]
