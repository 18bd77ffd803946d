"""The bounds module: its messages, and the bounds checked in the core before any work starts
(each with an input just past it), including the file reader's bounds for every format at
small limits."""

from __future__ import annotations

import bz2
import io
import lzma
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hostile_inputs import (
    compressed,
    parquet_repeated_text,
    parquet_zeros,
    stata_claiming,
    xlsx_cells,
    xlsx_far_cell,
    xlsx_sheet,
)

from deid_core import bounds
from deid_core.bounds import Bound
from deid_core.errors import DataError, LimitError
from deid_core.io.reading import ReadLimits, read_table, stata_shape
from deid_core.masking.smoothing import smooth_values
from deid_core.risk.roc import empirical_roc, publish_roc
from deid_core.share import ReleaseSettings, ShareError
from deid_core.utility import ModelSpec
from deid_core.utility.spec import build_design


def test_a_bound_names_itself_and_says_what_to_do():
    bound = Bound("widgets", "widget", 10, "Use fewer widgets.")
    bound.check(10)
    with pytest.raises(LimitError) as caught:
        bound.check(12, "The recipe has")
    assert str(caught.value) == (
        "The recipe has 12 widgets; at most 10 are allowed (bound 'widgets'). Use fewer widgets."
    )
    with pytest.raises(LimitError):
        bound.check(math.nan)
    with pytest.raises(LimitError, match="an unbounded number of widgets"):
        bound.check(math.inf)
    size = Bound("size", "data", 2 * bounds.MiB, unit="bytes")
    with pytest.raises(ShareError, match=r"^The link has more than 2 MB of data \(bound 'size'\)"):
        size.check(3 * bounds.MiB, "The link has", ShareError)


def test_every_bound_is_listed_once_with_a_positive_limit():
    assert len(bounds.BOUNDS) == len({b.key for b in bounds.BOUNDS.values()})
    assert all(b.limit > 0 and b.what for b in bounds.BOUNDS.values())


# ---------------------------------------------------------------------------- core bounds
def test_a_compact_kernel_that_reaches_everyone_is_refused_before_its_pairs_are_built():
    rng = np.random.default_rng(3)
    points = rng.uniform(0, 1, (7000, 2))  # 24.5 million pairs within a bandwidth of 10
    with pytest.raises(LimitError, match="bound 'neighbour_pairs'"):
        smooth_values(np.ones(7000), points, kernel="epanechnikov", bandwidth=10.0)
    out = smooth_values(np.ones(7000), points, kernel="epanechnikov", bandwidth=0.01)
    np.testing.assert_allclose(out, 1.0)


def test_a_model_with_too_many_design_columns_is_refused_before_the_matrix_is_built():
    rng = np.random.default_rng(4)
    n = 400
    frame = pd.DataFrame({"y": rng.integers(0, 2, n), "x": rng.normal(size=n)})
    covariates = []
    for j in range(3):  # 3 text covariates of 40 levels: 2 + 3 x 39 = 119 columns
        frame[f"c{j}"] = rng.choice([f"level{k}" for k in range(40)], n)
        covariates.append(f"c{j}")
    spec = ModelSpec("y", "x", covariates=tuple(covariates))
    with pytest.raises(
        LimitError, match=r"119 design-matrix columns; at most 100 .*'design_columns'"
    ):
        build_design(frame, spec)
    build_design(frame, ModelSpec("y", "x", covariates=("c0", "c1")))  # 80 columns: fine


def test_settings_name_their_bounds():
    with pytest.raises(LimitError, match="bound 'min_cell_size'"):
        ReleaseSettings(min_cell_size=5000)
    with pytest.raises(LimitError, match="bound 'replicates'"):
        ReleaseSettings(replicates=10**9)
    lenient = ReleaseSettings.lenient({"replicates": 10**9})
    assert lenient.replicates == ReleaseSettings().replicates  # the default


def test_roc_grid_and_quantiles_are_bounded():
    curve = empirical_roc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
    with pytest.raises(LimitError, match="bound 'roc_grid'"):
        publish_roc(curve, binormal=True, grid=10**9)
    with pytest.raises(LimitError, match="bound 'roc_quantiles'"):
        publish_roc(curve, quantiles=10**9)
    assert publish_roc(curve, every=10**30).fpr.size == 2  # beyond the last point: the ends


# ---------------------------------------------------------------------------- reading
def small(**limits: int) -> ReadLimits:
    """The default limits with some lowered (so that small test files pass them)."""
    defaults = ReadLimits()
    return ReadLimits(
        **{name: replace(getattr(defaults, name), limit=value) for name, value in limits.items()}
    )


UNPACKED_1MB = small(decoded_bytes=1_000_000)
CSV_1_2MB = b"a,b\n" + b"1,2\n" * 300_000
TSV_1_2MB = CSV_1_2MB.replace(b",", b"\t")


@pytest.mark.parametrize(
    ("filename", "content", "limits", "bound"),
    [
        ("a.parquet", parquet_zeros(5000), small(rows=4000), "rows"),
        ("a.parquet", parquet_zeros(1000, 5), small(cells=4000), "cells"),
        ("a.parquet", parquet_repeated_text(1000, 2000), UNPACKED_1MB, "decoded_bytes"),
        ("a.xlsx", xlsx_cells(2000, 3), small(excel_cells=5000), "excel_cells"),
        ("a.xlsx", xlsx_cells(2000, 3, dimension="A1:C2000"), small(rows=1000), "rows"),
        ("a.csv.gz", compressed(CSV_1_2MB, ".gz"), UNPACKED_1MB, "decoded_bytes"),
        ("a.csv.bz2", compressed(CSV_1_2MB, ".bz2"), UNPACKED_1MB, "decoded_bytes"),
        ("a.tsv.xz", compressed(TSV_1_2MB, ".xz"), UNPACKED_1MB, "decoded_bytes"),
        ("a.zip", compressed(CSV_1_2MB, ".zip"), UNPACKED_1MB, "decoded_bytes"),
        ("a.csv", b"a,b\n" + b"1,2\n" * 3000, small(rows=2000), "rows"),
        ("a.csv", b"a,b,c\n" + b"1,2,3\n" * 3000, small(cells=6000), "cells"),
        ("a.dta", stata_claiming(5000), small(rows=4000), "rows"),
    ],
)  # fmt: skip
def test_every_format_stops_at_its_bounds(filename, content, limits, bound):
    with pytest.raises(LimitError, match=f"bound '{bound}'"):
        read_table(content, filename, limits)


@pytest.mark.parametrize("version", [114, 117, 118, 119])
def test_the_stata_header_gives_observations_and_variables(version):
    buffer = io.BytesIO()
    pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [1, 2, 3], "c": ["x", "y", "z"]}).to_stata(
        buffer, write_index=False, version=version
    )
    assert stata_shape(buffer.getvalue()) == (3, 3)
    assert stata_shape(stata_claiming(2**31, version=version)) == (2**31, 2)
    assert stata_shape(b"not a stata file at all") is None


def test_compressed_text_reads_like_the_plain_file():
    text = b"sex,age\nF,34\nM,61\nF,47\n"
    plain = read_table(text, "a.csv").frame
    for extension in (".gz", ".bz2", ".xz", ".zip"):
        name = "a.zip" if extension == ".zip" else f"a.csv{extension}"
        pd.testing.assert_frame_equal(read_table(compressed(text, extension), name).frame, plain)
    assert (
        bz2.decompress(compressed(text, ".bz2")) == text == lzma.decompress(compressed(text, ".xz"))
    )


@pytest.mark.parametrize(
    ("filename", "content", "message"),
    [
        ("a.gz", compressed(b"a\n1\n", ".gz"), "must be delimited text"),
        ("a.parquet.gz", compressed(b"a\n1\n", ".gz"), "must be delimited text"),
        ("a.csv.gz", b"not gzip at all", "could not be unpacked"),
        ("a.zip", compressed(b"a\n1\n", ".zip", member="a.xlsx"), "exactly one CSV"),
        ("a.csv", b"a,b,c\n1,2,3\n4,5\n", "line 3 has fewer fields"),
        ("a.csv", b'a,b\n1,"x\n2,3\n', "never closed"),
    ],
)
def test_compressed_and_ragged_text_get_plain_messages(filename, content, message):
    with pytest.raises(DataError, match=message):
        read_table(content, filename)


def test_quoted_newlines_and_blank_lines_are_read():
    frame = read_table(b'a,b\n1,"x\ny"\n   \n2,z\n', "a.csv").frame
    assert frame["b"].tolist() == ["x\ny", "z"] and frame["a"].tolist() == [1, 2]


def test_excel_cells_convert_as_pandas_converts_them():
    buffer = io.BytesIO()
    pd.DataFrame({"n": [1.0, 2.0, 3.5], "t": ["a", "#N/A", "c"]}).to_excel(buffer, index=False)
    frame = read_table(buffer.getvalue(), "a.xlsx").frame
    assert frame["n"].tolist() == [1.0, 2.0, 3.5]
    assert pd.api.types.is_integer_dtype(read_table(_excel({"k": [1.0, 2.0]}), "k.xlsx").frame["k"])


def _excel(columns: dict) -> bytes:
    buffer = io.BytesIO()
    pd.DataFrame(columns).to_excel(buffer, index=False)
    return buffer.getvalue()


# ---------------------------------------------------------------------------- workbook scan
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def _random_sheet(rng: np.random.Generator) -> bytes:
    """A sheet's XML with cells written every way the format allows (bare, with attributes,
    empty, under a namespace prefix), elements whose names begin like a cell's (``col``,
    ``cfRule``, ``color``), rows with and without numbers in any order, and values of random
    length."""
    parts = [f'<worksheet xmlns="{_MAIN}" xmlns:x="{_MAIN}"><cols><col min="1" max="2"/></cols>']
    parts.append("<sheetData>")
    for _ in range(rng.integers(0, 40)):
        row = rng.choice(
            [
                "<row>",
                f'<row r="{rng.integers(1, 120)}">',
                f"<x:row r='{rng.integers(1, 300)}' s='1'>",
            ]
        )
        parts.append(row)
        for _ in range(rng.integers(0, 6)):
            value = "x" * int(rng.integers(0, 300))
            parts.append(
                rng.choice(
                    [
                        f"<c><v>{value}</v></c>",
                        f'<c r="B2" t="inlineStr"><is><t>{value}</t></is></c>',
                        "<c/>",
                        f'<x:c\ts="1"><x:v>{value}</x:v></x:c>',
                    ]
                )
            )
        parts.append("</x:row>" if row.startswith("<x:") else "</row>")
    parts.append('</sheetData><conditionalFormatting sqref="A1"><cfRule type="x" priority="1">')
    parts.append('<color rgb="FF000000"/></cfRule></conditionalFormatting></worksheet>')
    return "".join(parts).encode()


def _truth(xml: bytes) -> tuple[int, int, int]:
    """(cells, highest row number, longest run of bytes without '<') by a real XML parser."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(xml)
    cells = sum(1 for _ in root.iter(f"{{{_MAIN}}}c"))
    numbers = [int(row.get("r")) for row in root.iter(f"{{{_MAIN}}}row") if row.get("r")]
    return cells, max(numbers, default=0), max(len(run) for run in xml.split(b"<"))


def _scan(xml: bytes, excel_cells: int, cell_bytes: int) -> None:
    import zipfile

    from deid_core.io.read_budget import ReadBudget
    from deid_core.io.workbooks import _scan_parts

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("xl/worksheets/sheet1.xml", xml)
    limits = small(excel_cells=excel_cells, cell_bytes=cell_bytes)
    with zipfile.ZipFile(buffer) as archive:
        _scan_parts(archive, ReadBudget(limits, limits.excel_cells))


@pytest.mark.parametrize("chunk", [11, 64, 1 << 20])
def test_the_workbook_scan_counts_cells_rows_and_runs_as_a_parser_finds_them(monkeypatch, chunk):
    """The scan's count (the larger of the cells and the highest row number) and its longest
    run without a tag, checked against an XML parser's on random sheets, read in pieces of
    every size (a tag cut between two pieces is counted once): each sheet passes bounds equal
    to its true figures and is refused by bounds one less."""
    monkeypatch.setattr("deid_core.io.workbooks.UNPACK_CHUNK", chunk)
    rng = np.random.default_rng(chunk)
    for _ in range(25):
        xml = _random_sheet(rng)
        cells, last_row, longest = _truth(xml)
        count = max(cells, last_row)
        _scan(xml, max(count, 1), longest)
        if count:
            with pytest.raises(LimitError, match=rf"has (at least )?{count:,} Excel cells?;"):
                _scan(xml, count - 1, longest)
        with pytest.raises(LimitError, match="bound 'cell_bytes'"):
            _scan(xml, max(count, 1), longest - 1)


def test_a_far_row_or_a_wide_dimension_is_refused_before_openpyxl_reads_the_workbook(
    monkeypatch,
):
    """Two cells, one at row 5,000: openpyxl would yield 5,000 rows (4,998 empty); the scan
    refuses the sheet from its row number. A recorded dimension past a bound is refused too,
    naming the sheet's claim. openpyxl is never asked to open either workbook."""
    import openpyxl

    def opened(*args, **kwargs):
        raise AssertionError("openpyxl opened a workbook the scan should have refused")

    monkeypatch.setattr(openpyxl, "load_workbook", opened)
    far = xlsx_far_cell(row=5000, column="B")
    with pytest.raises(LimitError, match=r"at least 5,000 Excel cells; at most 4,000"):
        read_table(far, "far.xlsx", small(excel_cells=4000))
    wide = xlsx_sheet([b"<row><c><v>1</v></c></row>"], dimension="A1:XFD3")
    with pytest.raises(LimitError, match=r"^A sheet of the file has 16,384 columns;"):
        read_table(wide, "wide.xlsx")
    with pytest.raises(LimitError, match=r"Excel cells; at most 4,000 are allowed"):
        read_table(xlsx_cells(2000, 3), "cells.xlsx", small(excel_cells=4000))


# ---------------------------------------------------------------------------- header first
_HEADERS = [
    ["id", "sex", "age"],
    [" id ", "âge", "Unnamed", "x y"],
    ["a", "a", "a_2", "b"],  # repeated: suffixed as read_table suffixes them
    ["2019", "dose (Gy)", "città"],
]


@pytest.mark.parametrize("names", _HEADERS)
@pytest.mark.parametrize("form", ["csv", "semicolons", "tsv", "bom_crlf", "xlsx"])
def test_the_header_alone_gives_the_names_read_table_gives(names, form):
    """read_header's names are read_table's, for every delimiter and workbooks (a workbook's
    later rows may be longer: its header then gives the first names)."""
    from deid_core.io.reading import read_header

    rows = [names, *[[str(i * 10 + j) for j in range(len(names))] for i in range(5)]]
    if form == "xlsx":
        import openpyxl

        book = openpyxl.Workbook()
        for row in [*rows, [*rows[1], "extra"]]:  # the last row is longer than the header
            book.active.append(row)
        buffer = io.BytesIO()
        book.save(buffer)
        content, filename = buffer.getvalue(), "a.xlsx"
    else:
        delimiter = {"semicolons": ";", "tsv": "\t"}.get(form, ",")
        newline = "\r\n" if form == "bom_crlf" else "\n"
        text = newline.join(delimiter.join(row) for row in rows) + newline
        content = (b"\xef\xbb\xbf" if form == "bom_crlf" else b"") + text.encode()
        filename = "a.tsv" if form == "tsv" else "a.csv"
    header = read_header(content, filename)
    assert header is not None
    read = list(read_table(content, filename).frame.columns)
    assert list(header.names) == read[: len(header.names)]
    assert header.wider == (form == "xlsx")
    assert all(header.may_have(name) for name in read)  # the extra column: column_<position>
    assert not header.may_have("postcode")


@pytest.mark.parametrize(
    ("filename", "content"),
    [
        ("a.csv", b'"a\nb",c\n1,2\n'),  # a quoted name may span lines
        ("a.csv", b"a,,c\n1,2,3\n"),  # a blank name: named or dropped by its values
        ("a.csv", b"\xe2ge,b\n1,2\n"),  # not UTF-8: the encoding is guessed from all of it
        ("a.csv", b"\na,b\n1,2\n"),  # a blank first line
        ("a.csv.gz", compressed(b"a,b\n1,2\n", ".gz")),
        ("a.dta", stata_claiming(3)),
    ],
)
def test_a_header_that_does_not_settle_the_names_gives_none(filename, content):
    from deid_core.io.reading import read_header

    assert read_header(content, filename) is None


def test_a_header_past_a_bound_is_refused_as_read_table_refuses_it():
    from deid_core.io.reading import read_header

    wide = b",".join(b"c%d" % i for i in range(1001)) + b"\n" + b"1," * 1000 + b"1\n"
    for read in (read_header, read_table):
        with pytest.raises(LimitError, match=r"The file has 1,001 columns"):
            read(wide, "wide.csv")
        with pytest.raises(LimitError, match="bound 'excel_cells'"):
            read(xlsx_cells(2000, 3), "a.xlsx", small(excel_cells=5000))
