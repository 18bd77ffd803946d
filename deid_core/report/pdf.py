"""The report as a PDF, built in memory with fpdf2, in fonts that ship with the project.

Text is set in DejaVu Sans (Latin, Greek, Cyrillic, Arabic, Hebrew, many symbols); characters it
lacks fall back to the bundled subsets of Droid Sans Fallback (CJK ideographs, kana, Hangul) and
Symbola (emoji up to Unicode 9), through fpdf2's fallback fonts, each loaded only when the
report needs it (``fonts/README.md`` says where each comes from). Text that needs it is shaped
with HarfBuzz, so Arabic is joined and set right to left. A character that none of these fonts
holds is drawn as U+FFFD and the PDF says how many there were (the HTML report shows them as
they are): no glyph is dropped without a word.

A table cell too long to fit on a page (a list of hundreds of column names, a very long name)
is written in full after its table instead, so every table row fits on one page. The charts are
the pages' own specifications rendered as PNG (:mod:`deid_core.report.charts`).
"""

from __future__ import annotations

import functools
import io
import unicodedata
from collections.abc import Iterable, Sequence

from deid_core.cancellation import check_cancelled
from deid_core.report.charts import FONT_DIR
from deid_core.report.document import BulletList, Figure, Paragraph, Section, Table

#: The main font, regular and bold.
MAIN_FONTS = {"": "DejaVuSans.ttf", "B": "DejaVuSans-Bold.ttf"}

#: Fallback fonts in the order fpdf2 tries them (each a subset, see fonts/README.md).
FALLBACK_FONTS = (
    "DroidSansFallback-CJK1.ttf",
    "DroidSansFallback-CJK2.ttf",
    "DroidSansFallback-Hangul.ttf",
    "Symbola-Emoji.ttf",
)

#: What a character no font holds is drawn as.
REPLACEMENT = "\ufffd"

LEFT_TO_RIGHT_MARK = "\u200e"

#: Table cells longer than this are written after the table (a row must fit on one page).
CELL_LIMIT = 400

#: A long table checks for cancellation every this many rows (of each layout pass): 20 rows
#: of 5 cells of up to :data:`CELL_LIMIT` characters are well under 0.5 s of layout.
ROWS_PER_CHECK = 20


@functools.cache
def font_characters(name: str) -> frozenset[int]:
    """The code points the bundled font ``name`` has a glyph for (fonts only: no data)."""
    from fontTools.ttLib import TTFont

    with TTFont(FONT_DIR / name, lazy=True) as font:
        return frozenset(font.getBestCmap())


@functools.cache
def covered_characters() -> frozenset[int]:
    """Code points some bundled font has a glyph for."""
    return frozenset().union(*map(font_characters, (*MAIN_FONTS.values(), *FALLBACK_FONTS)))


def fallbacks_needed(texts: Iterable[str]) -> list[str]:
    """The fallback fonts (file names) holding a character of ``texts`` that the main font
    lacks: only those are loaded (a CJK subset takes a while to parse)."""
    main = font_characters(MAIN_FONTS[""])
    wanted = {ord(c) for text in texts for c in text} - main
    return [name for name in FALLBACK_FONTS if wanted & font_characters(name)]


def needs_shaping(texts: Iterable[str]) -> bool:
    """True when some text needs HarfBuzz: right-to-left letters (joined, reordered),
    combining marks (Indic and Thai scripts, stacked accents) or format characters (emoji
    sequences). Shaping a line costs more than the rest of its layout, so plain text skips it,
    line by line and table by table (:func:`_shape_if_needed`): one Arabic column name no
    longer makes every cell of a 300-row table go through HarfBuzz.
    """
    return any(
        unicodedata.bidirectional(char) in ("R", "AL")
        or unicodedata.category(char) in ("Mn", "Mc", "Me", "Cf")
        for text in texts
        for char in set(text)
        if ord(char) > 0x7F
    )


def _invisible(char: str) -> bool:
    """Format characters (joiners, direction marks) and variation selectors: no glyph of
    their own, HarfBuzz applies them."""
    return unicodedata.category(char) == "Cf" or "\ufe00" <= char <= "\ufe0f"


def drawable(text: str) -> tuple[str, int]:
    """``text`` with each character no bundled font holds replaced by U+FFFD (control
    characters other than a line break by a space), and how many were replaced. Text holding
    right-to-left letters starts with a left-to-right mark: the report reads left to right,
    and an Arabic name inside an English sentence stays in its place."""
    covered = covered_characters()
    out: list[str] = []
    missing = 0
    for char in text:
        if char == "\n" or ord(char) in covered or _invisible(char):
            out.append(char)
        elif unicodedata.category(char) == "Cc":
            out.append(" ")
        else:
            out.append(REPLACEMENT)
            missing += 1
    if any(unicodedata.bidirectional(char) in ("R", "AL") for char in text):
        out.insert(0, LEFT_TO_RIGHT_MARK)
    return "".join(out), missing


def _texts(title: str, created: str, sections: Sequence[Section]) -> Iterable[str]:
    yield title
    yield created
    for section in sections:
        yield section.text()


def render_pdf(title: str, created: str, sections: Sequence[Section]) -> bytes:
    """The report as a PDF (fpdf2, the bundled fonts, HarfBuzz shaping).

    :func:`~deid_core.cancellation.check_cancelled` is called once fpdf2 is imported, once
    the main fonts are loaded, once the fallback fonts are, before each block (a chart is
    drawn by Vega and as a PNG) and every :data:`ROWS_PER_CHECK` rows of a long table, so
    that a PDF no longer wanted stops there."""
    from fpdf import FPDF
    from fpdf.enums import XPos, YPos

    check_cancelled()  # fpdf2 imported: about 0.3 s the first time in a process
    pdf = FPDF(format="A4")
    pdf.set_title(drawable(title)[0])
    pdf.set_creator("de-identification dashboard")
    pdf.set_auto_page_break(auto=True, margin=15)
    for style, name in MAIN_FONTS.items():
        pdf.add_font("Report", style, str(FONT_DIR / name))
    check_cancelled()  # the fonts' character sets read (once), the main fonts loaded
    texts = list(_texts(title, created, sections))
    fallbacks = ["Report"]  # bold text falls back to the regular face first
    for i, name in enumerate(fallbacks_needed(texts)):
        pdf.add_font(f"Fallback{i}", "", str(FONT_DIR / name))
        fallbacks.append(f"Fallback{i}")
    pdf.set_fallback_fonts(fallbacks, exact_match=False)
    check_cancelled()  # the text scanned, its fallback fonts loaded: up to about 0.5 s
    pdf.add_page()

    def write(text: str, size: float = 10, style: str = "", height: float = 5) -> None:
        pdf.set_font("Report", style, size)
        _shape_if_needed(pdf, (text,))
        pdf.multi_cell(0, height, drawable(text)[0], new_x=XPos.LMARGIN, new_y=YPos.NEXT)

    write(title, 18, "B", 9)
    write(f"Generated {created} by the de-identification dashboard.", 9)
    missing = sum(drawable(text)[1] for text in texts)
    if missing:
        write(
            f"{missing} character(s) of this report are in none of the PDF's fonts and are "
            f"shown as {REPLACEMENT}; the HTML report shows them as they are.",
            9,
        )
    for section in sections:
        pdf.ln(4)
        if pdf.get_y() > pdf.h - 50:
            pdf.add_page()
        write(section.title, 14, "B", 8)
        for block in section.blocks:
            check_cancelled()
            pdf.ln(1.5)
            if isinstance(block, Paragraph):
                if block.kind in ("ok", "warn"):
                    colour = (20, 110, 40) if block.kind == "ok" else (170, 30, 30)
                    pdf.set_text_color(*colour)
                    write(block.text, 11, "B", 6)
                    pdf.set_text_color(0, 0, 0)
                else:
                    write(block.text, 9 if block.kind == "note" else 10)
            elif isinstance(block, BulletList):
                for item in block.items:
                    write(f"\u2022 {item}")
            elif isinstance(block, Table):
                _table(pdf, block, write)
            else:
                _figure(pdf, block, write)
    return bytes(pdf.output())


def _shape_if_needed(pdf, texts: Iterable[str]) -> None:
    """Text shaping on for what follows when ``texts`` need it (:func:`needs_shaping`), off
    otherwise: a line without right-to-left letters, combining marks or format characters is
    laid out as in a report that has none."""
    shaping = needs_shaping(texts)
    if shaping != bool(pdf.text_shaping):
        pdf.set_text_shaping(shaping)


def _checked_table(pdf):
    """An empty fpdf2 table, laid out as ``pdf.table(...)`` lays it out, that calls
    :func:`~deid_core.cancellation.check_cancelled` every :data:`ROWS_PER_CHECK` rows of each
    of its two passes (fpdf2 measures every cell, then draws it): the residual-risk table of a
    file with 300 columns is seconds of layout, one block. What it draws is fpdf2's own
    (``FPDF.table`` is ``Table(pdf, ...)`` then ``render()``); the two methods wrapped are
    fpdf2's internals, pinned with it in requirements.txt."""
    from fpdf.table import Table as FpdfTable

    class CheckedTable(FpdfTable):
        def _compute_rows_info(self):
            for i, info in enumerate(super()._compute_rows_info()):
                if i and i % ROWS_PER_CHECK == 0:
                    check_cancelled()
                yield info

        def _render_table_row(self, i, *args, **kwargs):
            if i and i % ROWS_PER_CHECK == 0:
                check_cancelled()
            return super()._render_table_row(i, *args, **kwargs)

    return CheckedTable(pdf, text_align="LEFT", line_height=5, first_row_as_headings=True)


def _table(pdf, block: Table, write) -> None:
    """The table, each cell longer than :data:`CELL_LIMIT` replaced by a pointer and written
    in full below it; a long table checks for cancellation every :data:`ROWS_PER_CHECK` rows
    of each pass (its cells made drawable, then fpdf2's two, :func:`_checked_table`)."""
    in_full: list[str] = []
    rows = []
    for r, cells in enumerate((block.header, *block.rows)):
        if r and r % ROWS_PER_CHECK == 0:
            check_cancelled()  # the cells made drawable: a third pass over a long table
        row = []
        for i, cell in enumerate(cells):
            if len(cell) > CELL_LIMIT:
                label = cells[0] if i else block.header[0]
                in_full.append(f"{label}: {cell}")
                row.append(f"({len(cell):,} characters, in full below the table)")
            else:
                row.append(drawable(cell)[0])
        rows.append(row)
    pdf.set_font("Report", "", 9)
    _shape_if_needed(pdf, (cell for row in rows for cell in row))  # cells are laid out at exit
    table = _checked_table(pdf)
    for cells in rows:
        row = table.row()
        for cell in cells:
            row.cell(cell)
    table.render()
    if block.caption:
        write(block.caption, 8)
    for text in in_full:
        write(text, 8)


def _figure(pdf, block: Figure, write) -> None:
    png = block.png()
    width = pdf.epw * 0.85
    height = width * _png_aspect(png)
    if pdf.get_y() + height + 12 > pdf.h - pdf.b_margin:
        pdf.add_page()
    write(block.title, 10, "B")
    pdf.image(io.BytesIO(png), w=width, h=height)
    if block.caption:
        write(block.caption, 8)
    if block.data is not None:
        _table(pdf, block.data, write)


def _png_aspect(png: bytes) -> float:
    """Height / width of a PNG, from its IHDR header."""
    width = int.from_bytes(png[16:20], "big")
    height = int.from_bytes(png[20:24], "big")
    return height / width if width else 0.6
