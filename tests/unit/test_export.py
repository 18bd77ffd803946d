"""Exports of the masked file (deid_core.io.export): formats, identifiers, shuffling, Stata."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.errors import DataError
from deid_core.io.export import (
    FORMATS,
    export_release,
    neutralise_formulas,
    read_back,
    shuffle_rows,
    to_bytes,
)
from deid_core.masking import IntervalGroup, RelativeRound
from deid_core.recipe import Recipe, Roles
from deid_core.workspace import Workspace


def source(n: int = 200, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "person_id": np.arange(1, n + 1),
            "name": [f"Person {i}" for i in range(n)],
            "city": rng.choice(["Hiroshima", "Nagasaki"], n),
            "age": rng.integers(20, 80, n),
            "dose": rng.gamma(1.0, 0.5, n).round(4),
            "cancer": rng.integers(0, 2, n),
        }
    )


ROLES = Roles(
    quasi_identifiers=("city", "age", "dose"),
    direct_identifiers=("name",),
    exposure="dose",
    outcome="cancer",
    record_id="person_id",
)
RECIPE = Recipe(
    ROLES, (RelativeRound("dose", 2), IntervalGroup("age", width=10.0, release="midpoint"))
)


@pytest.fixture
def released() -> pd.DataFrame:
    return Workspace(source()).released_frame(RECIPE)


def comparable(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for column in out.columns:
        if pd.api.types.is_numeric_dtype(out[column]):
            out[column] = out[column].astype("float64")
        else:
            out[column] = out[column].astype(object)
    return out.reset_index(drop=True)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_each_format_round_trips(released, fmt):
    exported = to_bytes(released, fmt)
    assert isinstance(exported.data, bytes) and exported.data
    back = read_back(exported.data, fmt)
    assert list(back.columns) == list(released.columns)
    pd.testing.assert_frame_equal(comparable(back), comparable(released))


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_identifiers_and_record_id_are_absent(released, fmt):
    back = read_back(export_release(released, fmt, shuffle_seed=3).data, fmt)
    assert "name" not in back.columns and "person_id" not in back.columns
    text = back.astype(str).to_numpy().ravel()
    assert not any(v.startswith("Person ") for v in text)


def test_keeping_the_record_id_is_explicit():
    frame = Workspace(source()).released_frame(RECIPE, keep_record_id=True)
    back = read_back(to_bytes(frame, "csv").data, "csv")
    assert "person_id" in back.columns and "name" not in back.columns


def test_shuffling_changes_the_order_not_the_rows(released):
    shuffled = shuffle_rows(released, seed=42)
    assert not shuffled.reset_index(drop=True).equals(released.reset_index(drop=True))
    assert list(shuffled.index) == list(range(len(released)))

    def rows(frame):
        return sorted(map(tuple, frame.astype(str).to_numpy()))

    assert rows(shuffled) == rows(released)
    pd.testing.assert_frame_equal(shuffled, shuffle_rows(released, seed=42))
    assert not shuffled.equals(shuffle_rows(released, seed=43))


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_shuffled_export_is_reproducible_from_the_seed(released, fmt):
    first = export_release(released, fmt, shuffle_seed=9)
    again = export_release(released, fmt, shuffle_seed=9)
    plain = export_release(released, fmt, shuffle=False)
    assert first.data == again.data
    assert first.data != plain.data
    pd.testing.assert_frame_equal(
        comparable(read_back(plain.data, fmt)), comparable(released.reset_index(drop=True))
    )


def test_the_input_frame_is_not_modified(released):
    before = released.copy(deep=True)
    for fmt in FORMATS:
        export_release(released, fmt, shuffle_seed=1)
    pd.testing.assert_frame_equal(released, before)


def test_stata_renames_invalid_names_keeps_unicode_ones_and_says_so():
    frame = pd.DataFrame(
        {
            "age at diagnosis (years)": [40, 50],
            "1st dose": [0.1, 0.2],
            "a" * 40: [1, 2],
            "if": [5, 6],
            "städt": ["Köln", "Bonn"],
            "地区": ["北京", "上海"],
        }
    )
    exported = to_bytes(frame, "dta")
    back = read_back(exported.data, "dta")
    names = list(back.columns)
    assert names[4:] == ["städt", "地区"]  # valid Unicode names are kept
    assert all(len(n) <= 32 for n in names)
    assert len(set(names)) == len(names)
    assert "if" not in names and "1st dose" not in names
    (note,) = [n for n in exported.notes if "renamed" in n]
    assert f"'1st dose' -> '{names[1]}'" in note and "städt" not in note
    assert back[names[1]].tolist() == [0.1, 0.2]
    assert back["städt"].tolist() == ["Köln", "Bonn"]


def test_stata_writes_long_text():
    """Text longer than 2045 bytes goes in as Stata's strL (refused before)."""
    frame = pd.DataFrame({"notes": ["short", "x" * 3000, "ü" * 1500, None]})
    exported = to_bytes(frame, "dta")
    back = read_back(exported.data, "dta")
    assert back["notes"].tolist()[:3] == ["short", "x" * 3000, "ü" * 1500]


def test_stata_handles_categories_booleans_and_mixed_columns():
    frame = pd.DataFrame(
        {
            "group": pd.Categorical(["a", "b", "a"]),
            "flag": [True, False, True],
            "mixed": ["x", 1, None],
            "count": pd.array([1, None, 3], dtype="Int64"),
        }
    )
    exported = to_bytes(frame, "dta")
    back = read_back(exported.data, "dta")
    assert back["group"].tolist() == ["a", "b", "a"]
    assert back["flag"].tolist() == [1, 0, 1]
    assert back["mixed"].tolist()[:2] == ["x", "1"]
    assert back["count"].isna().tolist() == [False, True, False]
    assert any("'mixed' mixes text" in note for note in exported.notes)


def test_excel_stores_text_as_text_even_without_neutralising():
    import io

    import openpyxl

    frame = pd.DataFrame({"code": ["=1+1", "plain", "http://example.org"]})
    data = to_bytes(frame, "xlsx", neutralise=False).data
    sheet = openpyxl.load_workbook(io.BytesIO(data)).active
    cells = [cell for (cell,) in sheet.iter_rows(min_row=2, max_col=1)]
    assert [c.value for c in cells] == ["=1+1", "plain", "http://example.org"]
    assert [c.data_type for c in cells] == ["s", "s", "s"]  # no formula, no link
    assert all(c.hyperlink is None for c in cells)


HOSTILE = pd.DataFrame(
    {
        "=HYPERLINK(A1)": ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\rx", "plain", None],
        "dose": [-1.5, -2.0, 0.0, 1.0, 2.0, 3.0, -4.0, 5.0],
        "as text": ["-5", "+1.5e3", "-.5", "1", "x", "y", "z", "w"],
        "group": pd.Categorical(["=a", "b", "=a", "b", "b", "b", "b", "b"]),
    }
)


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_spreadsheet_formulas_are_neutralised_header_included(fmt):
    exported = to_bytes(HOSTILE, fmt)
    back = read_back(exported.data, fmt)
    assert back.columns[0] == "'=HYPERLINK(A1)"
    first = back.iloc[:, 0].str.replace("_x000D_", "\r").tolist()  # Excel's escape of CR
    assert first[:7] == ["'=1+1", "'+SUM(A1)", "'-2+3", "'@cmd", "'\tx", "'\rx", "plain"]
    assert pd.isna(first[7])
    assert back["dose"].tolist() == HOSTILE["dose"].tolist()  # negative numbers stay numbers
    assert pd.api.types.is_numeric_dtype(back["dose"])
    assert back["as text"].astype(str).tolist()[:3] in (
        ["-5", "+1.5e3", "-.5"],
        ["-5", "1500", "-0.5"],
    )
    assert back["group"].tolist()[:2] == ["'=a", "b"]
    (note,) = exported.notes
    assert note.startswith("9 text cell(s) or column name(s)")


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_neutralising_can_be_turned_off(fmt):
    exported = to_bytes(HOSTILE, fmt, neutralise=False)
    back = read_back(exported.data, fmt)
    assert back.columns[0] == "=HYPERLINK(A1)"
    assert back.iloc[0, 0] == "=1+1"
    assert exported.notes == ()


def test_parquet_and_stata_keep_values_as_they_are():
    for fmt in ("parquet", "dta"):
        back = read_back(to_bytes(HOSTILE, fmt).data, fmt)
        assert back.iloc[0, 0] == "=1+1"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=6), st.floats(allow_nan=False)), max_size=20))
def test_neutralising_only_prefixes_formulas(values):
    frame = pd.DataFrame({"x": pd.Series(values, dtype=object)})
    out, changed = neutralise_formulas(frame)
    hits = 0
    for before, after in zip(frame["x"], out["x"], strict=True):
        if isinstance(before, str) and before != after:
            hits += 1
            assert after == "'" + before and before[0] in "=+-@\t\r"
        elif isinstance(before, str):  # left alone: not a formula, or a plain number
            assert not before.startswith(("=", "@", "\t", "\r"))
            if before.startswith(("+", "-")):
                float(before)
        else:
            assert before is after or (pd.isna(before) and pd.isna(after))
    assert changed == hits
    pd.testing.assert_series_equal(frame["x"], pd.Series(values, dtype=object, name="x"))


def test_unknown_format_is_a_clear_error(released):
    with pytest.raises(DataError, match="Unknown export format"):
        to_bytes(released, "sav")
