"""Rendering the report checks for cancellation before each block, and the PDF also three times
while fpdf2 and its fonts are loaded and within long tables (a closed tab stops the HTML or the
PDF there), and the pages are the same bytes with the checks as without."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from counting_check import CountingCheck

from deid_core.cancellation import cancellable
from deid_core.errors import Cancelled
from deid_core.masking import UniformNoise
from deid_core.recipe import Recipe, Roles
from deid_core.report import build_report
from deid_core.risk.context import ReleaseContext
from deid_core.workspace import Workspace


@pytest.fixture(scope="module")
def report():
    rng = np.random.default_rng(2)
    n = 500
    dose = rng.gamma(0.8, 0.6, n).round(4)
    frame = pd.DataFrame(
        {
            "city": rng.choice(["Hiroshima", "Nagasaki"], n),
            "sex": rng.choice(["F", "M"], n),
            "age": rng.integers(20, 80, n),
            "dose": dose,
            "cancer": (rng.random(n) < 1 / (1 + np.exp(3 - 0.6 * dose))).astype(int),
        }
    )
    roles = Roles(("city", "sex", "age"), exposure="dose", outcome="cancer")
    recipe = Recipe(roles, (UniformNoise("dose", 0.2, floor=0.0, seed=3),))
    return build_report(
        Workspace(frame), recipe, dataset_name="t", synthetic=True, context=ReleaseContext(),
        n_replicates=3,
    )  # fmt: skip


@pytest.fixture()
def fixed_pdf_date(monkeypatch):
    """fpdf2 stamps the PDF with the time it was made; fixed, two PDFs can be compared."""
    import fpdf.fpdf

    class Fixed(dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)

    monkeypatch.setattr(fpdf.fpdf, "datetime", Fixed)


def _blocks(report) -> int:
    return sum(len(section.blocks) for section in report.sections)


def _long_table_checks(report) -> int:
    """The checks the PDF's long tables make: in each of three passes (the cells made
    drawable, fpdf2's measuring and drawing), at every ROWS_PER_CHECK-th row after the first
    (the header counts as a row)."""
    from deid_core.report.document import Figure, Table
    from deid_core.report.pdf import ROWS_PER_CHECK

    tables = [
        block.data if isinstance(block, Figure) else block
        for section in report.sections
        for block in section.blocks
        if isinstance(block, Table) or (isinstance(block, Figure) and block.data is not None)
    ]
    return sum(3 * (len(table.rows) // ROWS_PER_CHECK) for table in tables)


def test_the_html_checks_each_block_and_is_unchanged(report):
    plain = report.html()
    check = CountingCheck()
    with cancellable(check):
        checked = report.html()
    assert checked == plain
    assert check.calls == _blocks(report) > 10


def test_the_pdf_checks_each_block_and_is_unchanged(report, fixed_pdf_date):
    plain = report.pdf()
    assert report.pdf() == plain  # the date fixed, two PDFs are the same bytes
    check = CountingCheck()
    with cancellable(check):
        checked = report.pdf()
    assert checked == plain
    # once fpdf2 is imported, once the main fonts are loaded, once the fallback fonts are,
    # then each block, and within a long table every ROWS_PER_CHECK rows of its three passes
    assert check.calls == 3 + _blocks(report) + _long_table_checks(report) > 3 + _blocks(report)


@pytest.mark.parametrize("render", ["html", "pdf"])
def test_a_cancelled_rendering_stops_at_the_next_block(report, render):
    check = CountingCheck(stop_at=3)
    with cancellable(check), pytest.raises(Cancelled):
        getattr(report, render)()
    assert check.calls == 3


def test_the_residual_risks_check_each_pair_and_are_unchanged():
    from deid_core.report.board import determination_targets, residual_risks

    rng = np.random.default_rng(4)
    n = 300
    frame = pd.DataFrame(
        {
            "city": rng.choice(["A", "B", "C"], n),
            "ward": rng.integers(0, 40, n),
            "sex": rng.choice(["F", "M"], n),
            "dose": rng.gamma(0.8, 0.6, n).round(3),
            "cancer": rng.integers(0, 2, n),
        }
    )
    roles = Roles(("city", "sex"), exposure="dose", outcome="cancer")
    recipe = Recipe(roles, (UniformNoise("dose", 0.2, floor=0.0, seed=3),))
    released = list(frame.columns)
    plain = residual_risks(frame, recipe, released)
    check = CountingCheck()
    with cancellable(check):
        checked = residual_risks(frame, recipe, released)
    assert checked == plain
    targets = determination_targets(recipe, released)
    pairs = sum(1 for c in plain[0] for t in targets if t != c)
    assert check.calls == pairs > 1
    stop = CountingCheck(stop_at=2)
    with cancellable(stop), pytest.raises(Cancelled):
        residual_risks(frame, recipe, released)
    assert stop.calls == 2


def test_a_long_pdf_table_checks_every_rows_per_check_rows_and_draws_as_fpdf2_does(
    fixed_pdf_date,
):
    from fpdf import FPDF

    from deid_core.report.document import Section, Table
    from deid_core.report.pdf import ROWS_PER_CHECK, _checked_table, render_pdf

    rows = [
        (f"lab_{i:03d}", f"{i * 0.37:.2f}", "x" * (i % 50)) for i in range(2 * ROWS_PER_CHECK + 5)
    ]
    section = Section("wide", "Wide", (Table(("Column", "Value", "Note"), tuple(rows)),))
    plain = render_pdf("t", "now", [section])
    check = CountingCheck()
    with cancellable(check):
        checked = render_pdf("t", "now", [section])
    assert checked == plain
    # three times before the first block (fpdf2, the fonts), once for the block, then rows
    # 20 and 40 of each of the table's three passes (drawable cells, measuring, drawing)
    assert check.calls == 3 + 1 + 3 * 2
    stop = CountingCheck(stop_at=7)  # inside the table: fpdf2's measuring pass, at row 20
    with cancellable(stop), pytest.raises(Cancelled):
        render_pdf("t", "now", [section])
    assert stop.calls == 7

    def drawn(make_table) -> bytes:
        pdf = FPDF(format="A4")
        pdf.add_page()
        pdf.set_font("helvetica", "", 9)
        make_table(pdf, [("Column", "Value", "Note"), *rows])
        return bytes(pdf.output())

    def by_fpdf2(pdf, cells):
        with pdf.table(text_align="LEFT", line_height=5, first_row_as_headings=True) as table:
            for row_cells in cells:
                row = table.row()
                for cell in row_cells:
                    row.cell(cell)

    def checked_table(pdf, cells):
        table = _checked_table(pdf)
        for row_cells in cells:
            row = table.row()
            for cell in row_cells:
                row.cell(cell)
        table.render()

    assert drawn(checked_table) == drawn(by_fpdf2)
