"""The report as a PDF, built in memory with fpdf2 and a Unicode TrueType font bundled with
matplotlib (DejaVu Sans); the charts are the same PNGs as in the HTML."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from deid_core.report.document import BulletList, Paragraph, Section, Table


def render_pdf(title: str, created: str, sections: Sequence[Section]) -> bytes:
    """The same content as a PDF (fpdf2, a Unicode TrueType font bundled with matplotlib)."""
    from fpdf import FPDF
    from fpdf.enums import XPos, YPos

    pdf = FPDF(format="A4")
    pdf.set_title(title)
    pdf.set_creator("de-identification dashboard")
    pdf.set_auto_page_break(auto=True, margin=15)
    regular, bold = _font_files()
    pdf.add_font("Report", "", str(regular))
    pdf.add_font("Report", "B", str(bold))
    pdf.add_page()

    def write(text: str, size: float = 10, style: str = "", height: float = 5) -> None:
        pdf.set_font("Report", style, size)
        pdf.multi_cell(0, height, text, new_x=XPos.LMARGIN, new_y=YPos.NEXT)

    write(title, 18, "B", 9)
    write(f"Generated {created} by the de-identification dashboard.", 9)
    for section in sections:
        pdf.ln(4)
        if pdf.get_y() > pdf.h - 50:
            pdf.add_page()
        write(section.title, 14, "B", 8)
        for block in section.blocks:
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
                pdf.set_font("Report", "", 9)
                with pdf.table(
                    text_align="LEFT", line_height=5, first_row_as_headings=True
                ) as table:
                    for cells in (block.header, *block.rows):
                        row = table.row()
                        for cell in cells:
                            row.cell(cell)
                if block.caption:
                    write(block.caption, 8)
            else:
                width = pdf.epw * 0.85
                height = width * _png_aspect(block.png)
                if pdf.get_y() + height + 12 > pdf.h - pdf.b_margin:
                    pdf.add_page()
                write(block.title, 10, "B")
                pdf.image(io.BytesIO(block.png), w=width, h=height)
                if block.caption:
                    write(block.caption, 8)
    return bytes(pdf.output())


def _font_files() -> tuple[Path, Path]:
    import matplotlib

    folder = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    return folder / "DejaVuSans.ttf", folder / "DejaVuSans-Bold.ttf"


def _png_aspect(png: bytes) -> float:
    """Height / width of a PNG, from its IHDR header."""
    width = int.from_bytes(png[16:20], "big")
    height = int.from_bytes(png[20:24], "big")
    return height / width if width else 0.6
