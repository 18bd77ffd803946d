"""Fuzzing ``read_table`` with generated files: whatever is loaded, it must not break or leak.

Property: ``read_table`` returns a :class:`LoadedTable` or raises a :class:`DeidError` (never
another exception type), and the error message never quotes a cell value of the file. Cell
values carry a unique marker (``MARKER``) so a leak is easy to spot.

Inputs tried: random bytes under every supported extension; valid CSV, xlsx, Parquet, Stata
and SAS transport files, truncated or with bytes overwritten; CSVs with ragged rows, quotes,
NUL bytes, byte-order marks, latin-1 / cp1252 / UTF-16 / mixed encodings, blank, duplicate and
huge headers, one column, one row, 10,000 columns, numbers such as 1e300, -0.0, 2**80, NaN and
inf strings, dates in 1850 and 2100.
"""

from __future__ import annotations

import io
import math
import os
import struct

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from deid_core.errors import DeidError, LimitError
from deid_core.io.reading import (
    MAX_COLUMNS,
    MAX_UPLOAD_BYTES,
    SUPPORTED_EXTENSIONS,
    LoadedTable,
    read_table,
)

MARKER = "QZXLEAK"
# More examples for a longer hunt: DEID_FUZZ_EXAMPLES=2000 pytest tests/unit/test_fuzz_*.py
FUZZ = settings(
    max_examples=int(os.environ.get("DEID_FUZZ_EXAMPLES", "50")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --- the property ----------------------------------------------------------------------------


def check_read(content: bytes, filename: str) -> LoadedTable | None:
    """Read ``content``; fail on any exception that is not a DeidError or that leaks a value."""
    try:
        table = read_table(content, filename)
    except DeidError as error:
        message = str(error)
        assert MARKER not in message, message
        assert MARKER.lower() not in message.lower(), message
        return None
    assert isinstance(table, LoadedTable)
    assert table.frame.shape[1] >= 1 and len(table.frame) >= 1
    for warning in table.warnings:
        # Warnings may name columns (headers carry no marker here) but never a cell value.
        assert MARKER not in warning, warning
    return table


def marked(tag: str | int) -> str:
    """A cell value that carries the marker."""
    return f"{MARKER}{tag}"


# --- strategies ------------------------------------------------------------------------------

header_names = st.text(
    alphabet=st.characters(categories=("Ll", "Lu", "Nd"), max_codepoint=0x17F),
    max_size=12,
)
special_cells = st.sampled_from(
    [
        "1e300",
        "-1e300",
        "-0.0",
        str(2**80),
        str(-(2**63)),
        str(2**63),
        "1e-300",
        "NaN",
        "nan",
        "inf",
        "-inf",
        "Infinity",
        "1850-01-01",
        "2100-12-31",
        "1850-06-15 12:00:00",
        "2100-01-01T00:00",
        "0001-01-01",
        "9999-12-31",
        "01234",
        "",
        " ",
        ".",
        "NA",
        "TRUE",
        "false",
    ]
)
marker_cells = st.builds(
    lambda text, n: f"{MARKER}{text}{n}",
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=6),
    st.integers(0, 10**6),
)
plain_cells = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=8),
)
cells = st.one_of(marker_cells, special_cells, plain_cells)


def quote_cell(cell: str, delimiter: str, style: str) -> str:
    if style == "quoted":
        return '"' + cell.replace('"', '""') + '"'
    if style == "broken":  # a stray quote, possibly never closed
        return '"' + cell
    return cell


@st.composite
def csv_texts(draw) -> tuple[str, str]:
    """(text, delimiter) of a possibly malformed delimited table with marked cells."""
    delimiter = draw(st.sampled_from([",", ";", "\t", "|"]))
    n_columns = draw(st.integers(1, 8))
    header = draw(st.lists(header_names, min_size=n_columns, max_size=n_columns))
    header_kind = draw(st.sampled_from(["as_drawn", "blank", "duplicate"]))
    if header_kind == "blank":
        header = [""] * n_columns
    elif header_kind == "duplicate":
        header = ["age"] * n_columns
    rows = []
    n_rows = draw(st.integers(0, 6))
    ragged = draw(st.booleans())
    for _ in range(n_rows):
        width = draw(st.integers(0, n_columns + 2)) if ragged else n_columns
        row = []
        for _ in range(width):
            cell = draw(cells)
            style = draw(st.sampled_from(["plain", "plain", "quoted", "broken"]))
            if style == "plain":
                cell = cell.replace(delimiter, " ").replace('"', "'")
                cell = cell.replace("\n", " ").replace("\r", " ")
            row.append(quote_cell(cell, delimiter, style))
        rows.append(delimiter.join(row))
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    text = newline.join([delimiter.join(header), *rows])
    if draw(st.booleans()):
        text += newline
    return text, delimiter


ENCODINGS = ["utf-8", "utf-8-sig", "latin-1", "cp1252", "utf-16", "utf-16-le", "utf-16-be"]


def encode(text: str, encoding: str) -> bytes:
    return text.encode(encoding, errors="replace")


# --- random bytes ----------------------------------------------------------------------------


@FUZZ
@given(
    content=st.binary(min_size=0, max_size=2000),
    extension=st.sampled_from([*SUPPORTED_EXTENSIONS, ".CSV", ".json", ""]),
)
def test_random_bytes_under_any_extension(content, extension):
    check_read(content, f"upload{extension}")


@FUZZ
@given(
    prefix=st.sampled_from(
        [
            b"PK\x03\x04",  # zip (xlsx)
            b"PAR1",  # parquet
            b"<stata_dta><header><release>118</release>",
            b"\x72\x02\x01\x00",  # old Stata 114 header
            b"HEADER RECORD*******LIBRARY HEADER RECORD!!!!!!!000000000000000000000000000000  ",
            b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xc2\xea\x81\x60",  # sas7bdat
            b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",  # OLE2 (xls)
        ]
    ),
    tail=st.binary(max_size=1500),
    extension=st.sampled_from(SUPPORTED_EXTENSIONS),
)
def test_magic_numbers_followed_by_garbage(prefix, tail, extension):
    check_read(prefix + tail, f"upload{extension}")


# --- generated delimited text ----------------------------------------------------------------


@FUZZ
@given(
    table=csv_texts(),
    encoding=st.sampled_from(ENCODINGS),
    extension=st.sampled_from([".csv", ".tsv", ".txt"]),
)
def test_generated_delimited_text(table, encoding, extension):
    text, _ = table
    check_read(encode(text, encoding), f"data{extension}")


@FUZZ
@given(
    table=csv_texts(),
    insert=st.sampled_from(
        [b"\x00", b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\xe9", b"\x93\x94", b"\x81", b'"']
    ),
    position=st.floats(0, 1),
)
def test_delimited_text_with_stray_bytes(table, insert, position):
    """NUL bytes, byte-order marks in the middle, mixed encodings, a stray quote."""
    content = table[0].encode("utf-8")
    at = int(position * len(content))
    check_read(content[:at] + insert + content[at:], "data.csv")


@FUZZ
@given(
    first=st.lists(marker_cells, min_size=1, max_size=4),
    second=st.lists(marker_cells, min_size=1, max_size=4),
)
def test_mixed_encodings_in_one_file(first, second):
    """Half the rows in UTF-8, half in cp1252 (or UTF-16)."""
    head = b"a,b\n"
    one = "".join(f"é{v},1\n" for v in first).encode("utf-8")
    two = "".join(f"ü{v},2\n" for v in second).encode("cp1252", errors="replace")
    check_read(head + one + two, "mixed.csv")
    check_read(head + one + "".join(f"{v},3\n" for v in second).encode("utf-16"), "mixed.csv")


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("bom_only", b"\xef\xbb\xbf"),
        ("utf16_bom_only", b"\xff\xfe"),
        ("nul_only", b"\x00" * 10),
        ("one_column", f"x\n{marked(1)}\n{marked(2)}\n".encode()),
        ("one_row", f"a,b\n{marked(1)},2\n".encode()),
        ("header_only", b"a,b,c\n"),
        ("blank_header", f",,\n{marked(1)},2,3\n".encode()),
        ("duplicate_header", f"a,a,a\n{marked(1)},2,3\n".encode()),
        ("huge_header", ("h" * 200_000 + f",b\n{marked(1)},2\n").encode()),
        ("many_header_names", (",".join(f"c{i}" for i in range(3000)) + "\n1\n").encode()),
        (
            "wide_10000",
            (",".join(f"c{i}" for i in range(10_000)) + "\n").encode()
            + (",".join(marked(i) for i in range(10_000)) + "\n").encode(),
        ),
        ("ragged", f"a,b\n1,2\n{marked(1)},{marked(2)},{marked(3)}\n".encode()),
        ("unclosed_quote", f'a,b\n1,"{marked(1)}\n3,4\n'.encode()),
        ("quote_in_field", f'a,b\n1,x"{marked(1)}"y\n'.encode()),
        ("nul_in_cell", f"a,b\n1,{marked(1)}\x002\n".encode()),
        ("utf16_le", f"a,b\n{marked('é')},1\n".encode("utf-16")),
        ("utf16_no_bom", f"a,b\n{marked('é')},1\n".encode("utf-16-le")),
        ("cp1252", f"a,b\n{marked('“€”')},1\n".encode("cp1252")),
        ("latin1", f"a,b\n{marked('ÿé')},1\n".encode("latin-1")),
        (
            "numbers",
            b"a,b,c,d,e\n1e300,-0.0,1208925819614629174706176,NaN,inf\n-1e300,0,1,2,-inf\n",
        ),
        ("dates", b"d,t\n1850-01-01,1850-01-01 10:00\n2100-12-31,2100-12-31T23:59:59\n"),
        ("out_of_range_dates", b"d\n0001-01-01\n9999-12-31\n"),
        ("bad_dates", f"d\n2020-02-30\n{marked(1)}\n".encode()),
        ("only_delimiters", b",,,\n,,,\n"),
        ("only_newlines_and_spaces", b" \r\n\t\r\n"),
        ("lone_cr", f"a,b\r1,{marked(1)}\r".encode()),
        ("many_blank_lines", b"a\n" + b"\n" * 10_000 + b"1\n"),
        ("quotes_everywhere", b'"""",""""\n"""","\n'),
        ("sniffer_bait", f"a;b,c|d\t{marked(1)}\n1;2,3|4\t5\n".encode()),
    ],
)
def test_edge_case_delimited_files(name, content):
    check_read(content, f"{name}.csv")


def test_numbers_and_dates_are_read_as_such():
    text = (
        "big,negzero,huge,nan,inf,tiny,date\n"
        "1e300,-0.0,1208925819614629174706176,NaN,inf,1e-300,1850-01-01\n"
        "-1e300,0,1,2,-inf,0,2100-12-31\n"
    )
    table = check_read(text.encode(), "n.csv")
    assert table is not None
    frame = table.frame
    assert frame["big"].tolist() == [1e300, -1e300]
    assert frame["inf"].isna().all()  # infinities become missing values
    assert pd.api.types.is_datetime64_any_dtype(frame["date"])
    assert frame["date"].dt.year.tolist() == [1850, 2100]
    assert frame["tiny"].iloc[0] == 1e-300


def test_too_many_columns_is_a_clear_limit_error():
    header = ",".join(f"c{i}" for i in range(10_000))
    row = ",".join(marked(i) for i in range(10_000))
    with pytest.raises(LimitError, match=r"10,000 columns; at most 1,000 .*'columns'") as error:
        read_table(f"{header}\n{row}\n".encode(), "wide.csv")
    assert MARKER not in str(error.value)
    wide = pd.DataFrame(
        [[1.0] * (MAX_COLUMNS + 1)], columns=[f"c{i}" for i in range(MAX_COLUMNS + 1)]
    )
    with pytest.raises(LimitError, match="1,001 columns; at most"):
        read_table(parquet_bytes(wide), "wide.parquet")
    table = read_table(parquet_bytes(wide.iloc[:, :MAX_COLUMNS]), "ok.parquet")
    assert table.frame.shape == (1, MAX_COLUMNS)


def test_infinite_numbers_become_missing_with_a_warning():
    table = read_table(b"v,w\ninf,1\n-Infinity,2\n1e400,3\n4,4\n", "inf.csv")
    assert table.frame["v"].isna().tolist() == [True, True, True, False]
    assert any("'v' had 3 infinite numbers" in w for w in table.warnings)
    frame = pd.DataFrame({"v": [np.inf, 1.0], "code": [marked(1), marked(2)]})
    table = read_table(parquet_bytes(frame), "inf.parquet")
    assert table.frame["v"].isna().tolist() == [True, False]
    assert not any(MARKER in w for w in table.warnings)


def test_oversized_file_is_a_clear_limit_error():
    with pytest.raises(LimitError, match=r"more than 50 MB of data \(bound 'file_bytes'\)"):
        read_table(b"a\n" + b"1\n" * (MAX_UPLOAD_BYTES // 2 + 1), "big.csv")


def test_limit_is_exactly_the_streamlit_upload_cap():
    import tomllib
    from pathlib import Path

    config = tomllib.loads((Path(__file__).parents[2] / ".streamlit/config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 1024 * 1024 == MAX_UPLOAD_BYTES


# --- valid binary files, then damaged --------------------------------------------------------


def sample_frame(n: int = 5) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "code": [marked(i) for i in range(n)],
            "x": np.linspace(-1e300, 1e300, n),
            "k": np.arange(n, dtype="int64") * 2**40,
            "d": pd.to_datetime(
                ["1850-01-01", "1900-06-30", "2000-01-01", "2099-12-31", "2100-12-31"][:n]
            ),
        }
    )


def xlsx_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_excel(buffer, index=False)
    return buffer.getvalue()


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    return buffer.getvalue()


def stata_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame = frame.assign(k=frame["k"].astype("float64"), x=frame["x"].clip(-1e300, 1e300))
    frame.to_stata(buffer, write_index=False, version=118)
    return buffer.getvalue()


def _xpt_header(name: str) -> bytes:
    return f"HEADER RECORD*******{name:<8}HEADER RECORD!!!!!!!{'0' * 30}  ".encode("ascii")


def _ibm_float(value: float) -> bytes:
    """An IEEE double as an 8-byte IBM hexadecimal float (SAS transport v5)."""
    if value == 0 or math.isnan(value):
        return b"\x2e" + b"\x00" * 7 if math.isnan(value) else b"\x00" * 8
    sign = 0x80 if value < 0 else 0
    value = abs(value)
    exponent = 0
    while value >= 1:
        value /= 16
        exponent += 1
    while value < 1 / 16:
        value *= 16
        exponent -= 1
    mantissa = int(value * 2**56)
    return bytes([sign | (exponent + 64)]) + mantissa.to_bytes(7, "big")


def xpt_bytes(n: int = 3) -> bytes:
    """A minimal SAS transport (XPORT v5) file: a character column of marked codes and a number."""

    def pad(data: bytes) -> bytes:
        return data + b" " * (-len(data) % 80)

    stamp = b"01JAN20:00:00:00"
    out = _xpt_header("LIBRARY") + pad(b"SAS     SAS     SASLIB  9.4     LINUX" + b" " * 24 + stamp)
    out += pad(stamp)
    out += (
        b"HEADER RECORD*******MEMBER  HEADER RECORD!!!!!!!000000000000000001600000000140  "
        b"HEADER RECORD*******DSCRPTR HEADER RECORD!!!!!!!000000000000000000000000000000  "
    )
    out += pad(b"SAS     DATA    SASDATA 9.4     LINUX" + b" " * 24 + stamp)
    out += pad(stamp)
    out += b"HEADER RECORD*******NAMESTR HEADER RECORD!!!!!!!000000000200000000000000000000  "
    variables = [(2, 16, b"CODE"), (1, 8, b"X")]
    namestrs, position = b"", 0
    for number, (kind, length, name) in enumerate(variables, start=1):
        namestr = struct.pack(
            ">hhhh8s40s8shhh2s8shhl52s",
            kind,
            0,
            length,
            number,
            name.ljust(8),
            b"".ljust(40),
            b"".ljust(8),
            0,
            0,
            0,
            b"  ",
            b"".ljust(8),
            0,
            0,
            position,
            b"\x00" * 52,
        )
        namestrs += namestr
        position += length
    out += pad(namestrs)
    out += _xpt_header("OBS")
    rows = b""
    for i in range(n):
        rows += marked(i).encode("ascii").ljust(16) + _ibm_float(1e70 * (-1) ** i)
    out += pad(rows)
    return out


VALID_FILES = {
    ".xlsx": lambda: xlsx_bytes(sample_frame()),
    ".parquet": lambda: parquet_bytes(sample_frame()),
    ".dta": lambda: stata_bytes(sample_frame()),
    ".xpt": lambda: xpt_bytes(),
    ".csv": lambda: sample_frame().to_csv(index=False).encode(),
}


@pytest.mark.parametrize("extension", sorted(VALID_FILES))
def test_valid_files_of_each_format_load(extension):
    table = check_read(VALID_FILES[extension](), f"valid{extension}")
    assert table is not None, extension
    frame = table.frame
    assert len(frame) >= 2
    assert frame.iloc[:, 0].astype(str).str.startswith(MARKER).all()


@pytest.fixture(scope="module")
def valid_files() -> dict[str, bytes]:
    return {extension: make() for extension, make in VALID_FILES.items()}


@FUZZ
@given(
    extension=st.sampled_from(sorted(VALID_FILES)),
    cut=st.floats(0, 1),
    damage=st.lists(st.tuples(st.floats(0, 1), st.binary(min_size=1, max_size=8)), max_size=4),
    as_extension=st.sampled_from([None, *SUPPORTED_EXTENSIONS]),
)
def test_truncated_or_corrupted_valid_files(extension, cut, damage, as_extension):
    content = bytearray(VALID_FILE_BYTES[extension])
    for where, patch in damage:
        at = int(where * len(content))
        content[at : at + len(patch)] = patch
    content = bytes(content[: max(1, int(cut * len(content)))]) if cut < 0.98 else bytes(content)
    assume(content)
    check_read(content, f"damaged{as_extension or extension}")


VALID_FILE_BYTES = {extension: make() for extension, make in VALID_FILES.items()}


@FUZZ
@given(
    codes=st.lists(marker_cells, min_size=1, max_size=5),
    numbers=st.lists(
        st.one_of(
            st.floats(allow_nan=True, allow_infinity=True),
            st.sampled_from([1e300, -1e300, -0.0, 1e-300, float(2**80)]),
        ),
        min_size=1,
        max_size=5,
    ),
    fmt=st.sampled_from([".parquet", ".xlsx", ".dta"]),
)
def test_generated_binary_tables(codes, numbers, fmt):
    n = min(len(codes), len(numbers))
    frame = pd.DataFrame({"code": codes[:n], "value": numbers[:n]})
    if fmt == ".parquet":
        content = parquet_bytes(frame)
    elif fmt == ".xlsx":
        frame = frame.assign(
            code=frame["code"].str.replace(r"[\x00-\x1f]", "", regex=True),
            value=frame["value"].where(np.isfinite(frame["value"])),
        )
        content = xlsx_bytes(frame)
    else:
        frame = frame.assign(
            code=frame["code"].map(lambda s: s.encode("utf-8")[:2000].decode("utf-8", "ignore")),
            value=frame["value"].where(
                np.isfinite(frame["value"]) & (frame["value"].abs() < 8e307)
            ),
        )
        try:
            content = stata_bytes(frame.assign(k=0.0, x=0.0, d=pd.Timestamp("2000-01-01")))
        except Exception:  # pandas cannot write it: nothing to test
            assume(False)
    table = check_read(content, f"gen{fmt}")
    if table is not None and "value" in table.frame.columns:
        values = table.frame["value"]
        if pd.api.types.is_numeric_dtype(values.dtype):
            assert not np.isinf(values.to_numpy(dtype="float64", na_value=np.nan)).any()


def test_parquet_with_unusual_column_types():
    frame = pd.DataFrame(
        {
            "lists": [[marked(0)], [marked(1)]],
            "nested": [{"a": marked(2)}, {"a": "x"}],
            "bytes": [marked(3).encode(), b"\x00\xff"],
            "dec": pd.array([1, 2], dtype="Int64"),
            "tz": pd.to_datetime(["1850-01-01", "2100-01-01"]).tz_localize("UTC"),
            "td": pd.to_timedelta([1, 2], unit="D"),
            "cat": pd.Categorical([marked(4), "b"]),
        }
    )
    check_read(parquet_bytes(frame), "odd.parquet")
    for column in frame.columns:
        check_read(parquet_bytes(frame[[column]]), f"odd_{column}.parquet")


def test_parquet_with_a_stored_index_and_odd_names():
    frame = pd.DataFrame({"v": [1.0, 2.0]}, index=pd.Index([marked(1), marked(2)], name=None))
    check_read(parquet_bytes(frame), "index.parquet")
    frame = pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([("a", "b"), ("a", "c")]))
    check_read(parquet_bytes(frame), "multi.parquet")
    frame = pd.DataFrame([[1, 2, 3]], columns=["a", "a", ""])
    check_read(parquet_bytes(frame.set_axis(["x", "y", "z"], axis=1)), "plain.parquet")


def test_xlsx_with_formulas_errors_and_odd_cells():
    from openpyxl import Workbook

    workbook = Workbook()
    sheet = workbook.active
    sheet.append(["a", "a", None, "when"])
    sheet.append([marked(1), "=1/0", "=A2", pd.Timestamp("1850-01-01").to_pydatetime()])
    sheet.append([1e300, -0.0, 2**62, "2100-12-31"])
    sheet.append([None, None, None, None])
    sheet.append(["#N/A", "#DIV/0!", True, False])
    buffer = io.BytesIO()
    workbook.save(buffer)
    check_read(buffer.getvalue(), "odd.xlsx")
    empty = Workbook()
    buffer = io.BytesIO()
    empty.save(buffer)
    check_read(buffer.getvalue(), "empty.xlsx")
