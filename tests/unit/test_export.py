"""Exports of the masked file (deid_core.io.export): formats, identifiers, shuffling, Stata."""

import numpy as np
import pandas as pd
import pytest

from deid_core.errors import DataError
from deid_core.io.export import (
    FORMATS,
    STATA_NAME_LENGTH,
    export_release,
    read_back,
    shuffle_rows,
    stata_names,
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


def test_stata_renames_invalid_and_long_names_and_says_so():
    frame = pd.DataFrame(
        {
            "age at diagnosis (years)": [40, 50],
            "1st dose": [0.1, 0.2],
            "a" * 40: [1, 2],
            "a" * 40 + "b": [3, 4],
            "if": [5, 6],
        }
    )
    exported = to_bytes(frame, "dta")
    back = read_back(exported.data, "dta")
    names = list(back.columns)
    assert names[0] == "age_at_diagnosis__years_"
    assert names[1] == "v1st_dose"
    assert all(len(n) <= STATA_NAME_LENGTH for n in names)
    assert len(set(names)) == len(names)
    assert "if" not in names
    assert any("renamed" in note and "'1st dose' -> 'v1st_dose'" in note for note in exported.notes)
    assert back["v1st_dose"].tolist() == [0.1, 0.2]


def test_stata_names_are_unique_case_insensitively():
    names = stata_names(["Dose", "dose", "x y", "x_y"])
    assert len({n.lower() for n in names.values()}) == 4


def test_stata_text_too_long_is_a_clear_error():
    frame = pd.DataFrame({"notes": ["short", "x" * 3000]})
    with pytest.raises(DataError, match=r"'notes'.*longer than 2045 bytes"):
        to_bytes(frame, "dta")


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


def test_excel_keeps_text_that_looks_like_a_formula():
    frame = pd.DataFrame({"code": ["=1+1", "plain"]})
    back = read_back(to_bytes(frame, "xlsx").data, "xlsx")
    assert back["code"].tolist() == ["=1+1", "plain"]


def test_unknown_format_is_a_clear_error(released):
    with pytest.raises(DataError, match="Unknown export format"):
        to_bytes(released, "sav")
