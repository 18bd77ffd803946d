"""Reading uploaded files, profiling columns, inferring and validating roles."""

import io
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from deid_core import bounds
from deid_core.errors import DataError, LimitError, RecipeError
from deid_core.io import reading as data
from deid_core.io.columns import profile_columns
from deid_core.io.reading import LoadedTable, read_table
from deid_core.io.roles import ROLES, infer_roles, validate_column_for_role

SECRET = "SECRET123"

SAMPLE = pd.DataFrame(
    {
        "patient_id": [1, 2, 3, 4],
        "sex": ["F", "M", "F", "M"],
        "age": [34.5, 61.25, 47.0, 70.75],
        "town": ["Köln", "Málaga", "Besançon", "Zürich"],
        "dose": [0.0, 0.12, 1.5, 2.25],
        "death": [0, 1, 0, 1],
    }
)


def _csv_bytes(frame: pd.DataFrame, sep: str = ",", encoding: str = "utf-8") -> bytes:
    return frame.to_csv(index=False, sep=sep).encode(encoding)


def _assert_same_as_sample(loaded: LoadedTable) -> None:
    pd.testing.assert_frame_equal(loaded.frame, SAMPLE, check_dtype=False)
    assert pd.api.types.is_numeric_dtype(loaded.frame["age"])
    assert pd.api.types.is_numeric_dtype(loaded.frame["death"])


# --- formats -------------------------------------------------------------------------------


@pytest.mark.parametrize(("sep", "filename"), [(",", "a.csv"), (";", "a.csv"), ("\t", "a.tsv")])
def test_delimited_text_with_each_delimiter(sep, filename):
    loaded = read_table(_csv_bytes(SAMPLE, sep=sep), filename)
    _assert_same_as_sample(loaded)
    assert loaded.name == filename
    assert loaded.warnings == ()


def test_pipe_delimited_txt():
    _assert_same_as_sample(read_table(_csv_bytes(SAMPLE, sep="|"), "folder/a.txt"))


def test_utf8_with_byte_order_mark():
    loaded = read_table(_csv_bytes(SAMPLE, encoding="utf-8-sig"), "a.csv")
    _assert_same_as_sample(loaded)
    assert loaded.frame.columns[0] == "patient_id"
    assert loaded.warnings == ()


def test_latin1_text_is_decoded_and_reported():
    loaded = read_table(_csv_bytes(SAMPLE, sep=";", encoding="latin-1"), "a.csv")
    _assert_same_as_sample(loaded)
    assert any("not UTF-8" in warning for warning in loaded.warnings)


def test_decimal_comma_numbers_stay_text():
    loaded = read_table(b"a;b\n1,5;x\n2,5;y\n", "a.csv")
    assert not pd.api.types.is_numeric_dtype(loaded.frame["a"])


def test_excel_first_sheet():
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer, engine="openpyxl") as writer:
        SAMPLE.to_excel(writer, sheet_name="first", index=False)
        pd.DataFrame({"other": [1]}).to_excel(writer, sheet_name="second", index=False)
    _assert_same_as_sample(read_table(buffer.getvalue(), "book.xlsx"))


def test_parquet():
    buffer = io.BytesIO()
    SAMPLE.to_parquet(buffer, index=False)
    _assert_same_as_sample(read_table(buffer.getvalue(), "a.parquet"))


def test_parquet_with_a_stored_index_keeps_it_as_a_column():
    buffer = io.BytesIO()
    SAMPLE.set_index("patient_id").to_parquet(buffer)
    _assert_same_as_sample(read_table(buffer.getvalue(), "a.parquet"))


def test_stata():
    buffer = io.BytesIO()
    SAMPLE.to_stata(buffer, write_index=False, version=118)
    _assert_same_as_sample(read_table(buffer.getvalue(), "a.dta"))


@pytest.mark.parametrize("filename", ["a.sas7bdat", "a.xpt"])
def test_corrupt_sas_file_is_a_data_error(filename):
    # pandas cannot write SAS files, so only the error path is tested here.
    with pytest.raises(DataError, match="SAS"):
        read_table(b"\x00\x01 not a SAS file " + SECRET.encode(), filename)


# --- cleaning ------------------------------------------------------------------------------


def test_numbers_in_text_become_numeric_but_codes_with_leading_zeros_stay_text():
    content = b"count, zip ,when\n 3 ,01234,2020-01-31\n4,12345,2021-12-01\n"
    frame = read_table(content, "a.csv").frame
    assert list(frame.columns) == ["count", "zip", "when"]
    assert frame["count"].tolist() == [3, 4]
    assert frame["zip"].tolist() == ["01234", "12345"]
    assert pd.api.types.is_datetime64_any_dtype(frame["when"])


def test_only_standard_numbers_become_numeric():
    content = (
        b"signed,hexadecimal,underscored,scientific,huge,partial\n"
        b"+5,0x10,1_000,1e3,99999999999999999999,7\n"
        b"-3,0x1F,2_000,.5,1,NA\n"
    )
    frame = read_table(content, "a.csv").frame
    assert frame["signed"].dtype == "int64" and frame["signed"].tolist() == [5, -3]
    assert frame["hexadecimal"].tolist() == ["0x10", "0x1F"]  # codes, not numbers
    assert frame["underscored"].tolist() == ["1_000", "2_000"]
    assert frame["scientific"].dtype == "float64"
    assert frame["scientific"].tolist() == [1000.0, 0.5]
    assert frame["huge"].dtype == "float64"  # beyond int64: floating point
    assert frame["huge"].tolist() == [1e20, 1.0]
    assert frame["partial"].dtype == "float64" and np.isnan(frame["partial"].iloc[1])


def test_missing_markers_become_missing():
    frame = read_table(b"x,y\n1,a\nNA,b\n,c\n.,d\n", "a.csv").frame
    assert pd.api.types.is_numeric_dtype(frame["x"])
    assert frame["x"].isna().sum() == 3


def test_mostly_numeric_column_with_text_stays_text():
    frame = read_table(f"x\n1.5\n<0.1\n2.5\n{SECRET}\n3\n".encode(), "a.csv").frame
    assert not pd.api.types.is_numeric_dtype(frame["x"])
    assert frame["x"].iloc[1] == "<0.1"


def test_blank_and_duplicate_names_are_fixed_with_warnings():
    loaded = read_table(b"age,,age,\n1,2,3,\n4,5,6,\n", "a.csv")
    assert list(loaded.frame.columns) == ["age", "column_2", "age_2"]
    assert len(loaded.warnings) == 3  # blank name, repeated name, empty nameless column dropped
    assert any("column_2" in warning for warning in loaded.warnings)
    assert any("age_2" in warning for warning in loaded.warnings)


def test_empty_rows_are_dropped_with_a_warning():
    loaded = read_table(b"a,b\n1,2\n,\n3,4\n", "a.csv")
    assert len(loaded.frame) == 2
    assert loaded.warnings == ("1 empty row dropped.",)


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "filename", "message"),
    [
        (b"", "a.csv", "empty"),
        (b" \n\t\n", "a.csv", "empty"),
        (b"", "a.parquet", "empty"),
        (b"a,b,c\n", "a.csv", "no rows"),
        (b"a,b\n,\n,\n", "a.csv", "no rows"),
        (b"a,b\n1,2\n3,4,5\n", "a.csv", "line 3"),
        (b'a,b\n1,"2\n3,4\n', "a.csv", "quotation mark"),
        (b"a,b\n1,2\n", "a.json", "not supported"),
        (b"a,b\n1,2\n", "noextension", "not supported"),
        (b"\x89PNG\r\n\x1a\n\x00\x00garbage", "a.parquet", "Parquet"),
        (b"\x89PNG\r\n\x1a\n\x00\x00garbage", "a.xlsx", "Excel"),
        (b"\x89PNG\r\n\x1a\n\x00\x00garbage", "a.dta", "Stata"),
        (b"\x00\x00\x00\x01\x02\x03binary", "a.csv", "binary"),
    ],
)
def test_bad_files_raise_a_plain_data_error(content, filename, message):
    with pytest.raises(DataError, match=message):
        read_table(content, filename)


def test_parquet_with_list_cells_is_a_data_error():
    buffer = io.BytesIO()
    pd.DataFrame({"codes": [[1, 2], [3]], "age": [30, 40]}).to_parquet(buffer)
    with pytest.raises(DataError, match="cannot use"):
        read_table(buffer.getvalue(), "a.parquet")


def test_oversize_file_is_refused():
    limits = data.ReadLimits(file_bytes=replace(bounds.FILE_BYTES, limit=10))
    with pytest.raises(LimitError, match="bound 'file_bytes'"):
        read_table(b"a,b\n1,2\n3,4\n", "a.csv", limits)


@pytest.mark.parametrize(
    ("content", "filename"),
    [
        (f"a,b\n1,{SECRET}\n3,4,{SECRET}\n".encode(), "a.csv"),
        (f'a,b\n1,"{SECRET}\n3,4\n'.encode(), "a.csv"),
        (f"PAR1{SECRET}PAR1".encode(), "a.parquet"),
        (f"PK\x03\x04{SECRET}".encode(), "a.xlsx"),
        (SECRET.encode(), "a.dta"),
        (SECRET.encode(), "a.xpt"),
    ],
)
def test_error_messages_never_quote_the_content(content, filename):
    with pytest.raises(DataError) as caught:
        read_table(content, filename)
    assert SECRET not in str(caught.value)
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__


# --- profiles ------------------------------------------------------------------------------


def test_profile_describes_columns_without_values():
    frame = pd.DataFrame(
        {
            "age": [30, 40, np.nan, 50],
            "sex": ["F", "M", "F", "F"],
            "note": ["a", "b", "c", "d"],
            "empty": [np.nan] * 4,
            "country": ["X"] * 4,
            "lab": ["1.5", SECRET, "2", "3"],
            "visit": pd.to_datetime(["2020-01-01", "2020-02-01", "2020-01-01", None]),
        }
    )
    profiles = {profile.name: profile for profile in profile_columns(frame)}
    assert list(profiles) == list(frame.columns)
    assert profiles["age"].kind == "numeric"
    assert (profiles["age"].n_missing, profiles["age"].n_distinct) == (1, 3)
    assert profiles["sex"].kind == "categorical"
    assert profiles["note"].high_cardinality
    assert not profiles["age"].high_cardinality
    assert profiles["empty"].all_missing
    assert profiles["country"].one_level
    assert profiles["lab"].numeric_with_text == 1
    assert profiles["sex"].numeric_with_text == 0
    assert profiles["visit"].kind == "date"
    assert SECRET not in repr(profiles)


def test_many_distinct_strings_are_text_not_categorical():
    frame = pd.DataFrame({"comment": [f"c{i}" for i in range(100)]})
    assert profile_columns(frame)[0].kind == "text"


# --- roles ---------------------------------------------------------------------------------


def test_infer_roles_from_names_and_contents():
    frame = pd.DataFrame(
        {
            "PatientID": [1, 2, 3, 4],
            "family_id": [1, 1, 2, 2],
            "hospital_number_id": [11, 12, 13, 14],
            "surname": ["a", "b", "c", "d"],
            "email": ["a", "b", "c", "d"],
            "MRN": [5, 6, 7, 8],
            "sex": ["F", "M", "F", "M"],
            "AgeAtVisit": [30, 40, 50, 60],
            "year_of_birth": [1950, 1960, 1970, 1980],
            "postcode": ["A", "B", "C", "D"],
            "ethnicity": ["p", "q", "p", "q"],
            "pack_years": [0.0, 10.0, 20.0, 5.0],
            "dose_gy": [0.0, 0.1, 0.2, 0.3],
            "exposure_2": [0.0, 0.1, 0.2, 0.3],
            "cancer": [0, 1, 0, 0],
            "death": [0, 1, 1, 0],
            "status": ["alive", "dead", "alive", "dead"],
            "bmi": [20.0, 25.0, 30.0, 22.0],
            "diet": ["x", "y", "x", "y"],
        }
    )
    assert infer_roles(frame) == {
        "PatientID": "record_id",
        "family_id": "other",
        "hospital_number_id": "direct_identifier",
        "surname": "direct_identifier",
        "email": "direct_identifier",
        "MRN": "direct_identifier",
        "sex": "quasi_identifier",
        "AgeAtVisit": "quasi_identifier",
        "year_of_birth": "quasi_identifier",
        "postcode": "quasi_identifier",
        "ethnicity": "quasi_identifier",
        "pack_years": "covariate",
        "dose_gy": "exposure",
        "exposure_2": "covariate",
        "cancer": "outcome",
        "death": "covariate",
        "status": "other",
        "bmi": "covariate",
        "diet": "other",
    }
    assert set(infer_roles(frame).values()) <= set(ROLES)


# --- validation ----------------------------------------------------------------------------


def test_valid_columns_have_no_problems():
    for column, role in {
        "patient_id": "record_id",
        "sex": "quasi_identifier",
        "dose": "exposure",
        "death": "outcome",
        "age": "covariate",
        "town": "other",
    }.items():
        assert validate_column_for_role(SAMPLE, column, role) == [], column


def test_exposure_with_text_reports_the_count_not_the_values():
    frame = pd.DataFrame({"dose": ["0.1", "0.2", SECRET, "<0.1", "0.5"]})
    (problem,) = validate_column_for_role(frame, "dose", "exposure")
    assert "2 of its 5 entries are not numbers" in problem
    assert SECRET not in problem and "<0.1" not in problem


def test_exposure_must_be_numeric():
    (problem,) = validate_column_for_role(SAMPLE, "town", "exposure")
    assert "must be numeric" in problem


def test_outcome_without_events():
    frame = pd.DataFrame({"x": [0, 0, 0]})
    assert validate_column_for_role(frame, "x", "outcome") == [
        "The outcome 'x' has no events (all 0): the regression cannot be fitted."
    ]


def test_outcome_without_non_events_and_non_binary_outcome():
    frame = pd.DataFrame({"all_ill": [1, 1], "score": [1, 2], "grade": [1, 2.5]})
    assert "no non-events (all 1)" in validate_column_for_role(frame, "all_ill", "outcome")[0]
    assert validate_column_for_role(frame, "score", "outcome") == []
    three_levels = pd.DataFrame({"y": [0, 1, 2]})
    assert "must be binary" in validate_column_for_role(three_levels, "y", "outcome")[0]


def test_all_missing_column():
    frame = pd.DataFrame({"x": [np.nan, np.nan]})
    for role in ROLES:
        assert validate_column_for_role(frame, "x", role) == ["'x' has no values (all missing)."]


def test_one_level_quasi_identifier():
    frame = pd.DataFrame({"country": ["X", "X", "X"]})
    assert validate_column_for_role(frame, "country", "quasi_identifier") == [
        "'country' has a single value: it adds no risk and can be left out."
    ]


def test_high_cardinality_categorical_quasi_identifier():
    frame = pd.DataFrame({"street": [f"s{i}" for i in range(20)], "height": range(20)})
    (problem,) = validate_column_for_role(frame, "street", "quasi_identifier")
    assert "almost every record" in problem
    assert validate_column_for_role(frame, "height", "quasi_identifier") == []


def test_mostly_numeric_text_is_reported_for_covariates_and_quasi_identifiers():
    frame = pd.DataFrame({"lab": ["1.5", SECRET, "2", "3", "2", "3", "1.5"]})
    for role in ("covariate", "quasi_identifier"):
        (problem,) = validate_column_for_role(frame, "lab", role)
        assert "1 of its entries is not a number" in problem
        assert SECRET not in problem


def test_record_id_must_be_present_and_may_repeat():
    frame = pd.DataFrame({"id": [1, 1, np.nan]})
    (problem,) = validate_column_for_role(frame, "id", "record_id")
    assert "missing for 1 records" in problem
    visits = pd.DataFrame({"id": [1, 1, 2, 2]})  # two visits per person
    assert validate_column_for_role(visits, "id", "record_id") == []


def test_unknown_role_or_column():
    with pytest.raises(RecipeError, match="Unknown role"):
        validate_column_for_role(SAMPLE, "sex", "secret_role")
    with pytest.raises(DataError, match="no column"):
        validate_column_for_role(SAMPLE, "missing", "covariate")


def test_an_event_indicator_with_only_events_suits_the_cox_model():
    frame = pd.DataFrame({"died": [1] * 12})
    assert "no non-events" in validate_column_for_role(frame, "died", "outcome")[0]
    assert validate_column_for_role(frame, "died", "outcome", "cox") == []
    none = pd.DataFrame({"died": [0] * 12})
    assert "no events" in validate_column_for_role(none, "died", "outcome", "cox")[0]


def test_a_parquet_folder_is_read_by_the_engines_rule_within_the_bounds(tmp_path):
    """The command line reads Parquet by the engines' rule; with limits, the same frame, and
    the footers' row counts, then the rows read, are checked against the bounds."""
    from deid_core.engines.sources import read_parquet_frame

    for part in range(3):
        pd.DataFrame({"age": np.arange(40) + part, "sex": [" F ", "M"] * 20}).to_parquet(
            tmp_path / f"part{part}.parquet"
        )
    bounded = read_parquet_frame(tmp_path, limits=data.READ_LIMITS)
    pd.testing.assert_frame_equal(bounded, read_parquet_frame(tmp_path))
    assert len(bounded) == 120 and bounded["sex"].iloc[0] == "F"
    for bound in ("rows", "cells"):
        limits = data.ReadLimits(**{bound: replace(getattr(bounds, bound.upper()), limit=100)})
        with pytest.raises(LimitError, match=f"bound '{bound}'"):
            read_parquet_frame(tmp_path, limits=limits)


def test_a_row_number_column_is_the_record_id_and_a_binary_column_the_outcome():
    """MASS birthwt as R's write.csv leaves it: an unnamed column of row numbers, then the
    0/1 low-birth-weight indicator, which no outcome word names."""
    rng = np.random.default_rng(5)
    n = 189
    frame = pd.DataFrame(
        {
            "column_1": np.arange(1, n + 1),
            "low": rng.integers(0, 2, n),
            "age": rng.integers(14, 46, n),
            "lwt": rng.integers(80, 251, n),
            "smoke": rng.integers(0, 2, n),
            "bwt": rng.integers(709, 4991, n),
        }
    )
    roles = infer_roles(frame)
    assert roles["column_1"] == "record_id"
    assert roles["low"] == "outcome"
    assert roles["smoke"] == "covariate"  # only the first binary column is the outcome
    # R's own row names (85, 86, ...: not from 1, but so named) are an id too.
    renamed = frame.rename(columns={"column_1": "rownames"}).assign(rownames=np.arange(n) + 85)
    assert infer_roles(renamed)["rownames"] == "record_id"


def test_whole_numbers_that_are_not_row_numbers_stay_covariates():
    # parity runs 1..4 without a gap or a repeat, but four records are too few to tell it
    # from row numbers; birth weights are not consecutive.
    frame = pd.DataFrame({"bwt": [2500, 3100, 2900, 4000], "parity": [1, 2, 3, 4]})
    assert infer_roles(frame) == {"bwt": "covariate", "parity": "covariate"}
    shuffled = pd.DataFrame({"visit": np.random.default_rng(1).permutation(np.arange(30))})
    assert infer_roles(shuffled) == {"visit": "record_id"}  # 0..29 in any order
    repeated = pd.DataFrame({"visit": np.arange(30) // 2})
    assert infer_roles(repeated) == {"visit": "covariate"}


@pytest.mark.parametrize("kind", ["junk", "zip_without_workbook", "workbook_without_sheet"])
def test_a_damaged_workbook_is_one_plain_message(kind):
    """Whatever fails in the workbook's parser, before or while its sheet is read, the user
    gets one sentence naming the format (no traceback, no value of the file)."""
    import zipfile

    buffer = io.BytesIO()
    if kind == "junk":
        buffer.write(b"\x00secret-value\x01" * 50)
    else:
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("notes.txt", "secret-value")
            if kind == "workbook_without_sheet":
                archive.writestr("[Content_Types].xml", "<Types/>")
                archive.writestr("xl/workbook.xml", "<workbook/>")
    with pytest.raises(DataError, match=r"could not be read as an Excel \.xlsx workbook") as info:
        read_table(buffer.getvalue(), "table.xlsx")
    assert "secret" not in str(info.value)
