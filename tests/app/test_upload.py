"""The upload handler: bytes in, a data set or clear messages out, never an exception."""

import app_helpers  # noqa: F401  (puts the repository on sys.path)
import numpy as np
import pandas as pd
import pytest
from app_helpers import TIMEOUT
from streamlit.testing.v1 import AppTest

from dashboard.upload import read_upload


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode("utf-8")


def base_frame(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame(
        {
            "person_id": np.arange(1, n + 1),
            "sex": rng.choice(["F", "M"], n),
            "age": rng.integers(20, 80, n),
            "dose": rng.gamma(1.0, 0.5, n).round(3),
            "death": rng.integers(0, 2, n),
        }
    )


def test_a_clean_file_loads_without_messages():
    outcome = read_upload(csv_bytes(base_frame()), "cohort.csv")
    assert outcome.frame is not None and len(outcome.frame) == 60
    assert outcome.messages.errors == () and outcome.messages.warnings == ()
    assert outcome.roles.record_id == "person_id"
    assert outcome.roles.outcome == "death"


def test_malformed_csv_is_an_error_naming_the_line():
    outcome = read_upload(b"a,b\n1,2\n3,4,5,6\n7,8\n", "bad.csv")
    assert outcome.frame is None
    (message,) = outcome.messages.errors
    assert "line 3" in message and "consistent table" in message


def test_unclosed_quote_is_an_error():
    outcome = read_upload(b'a,b\n1,"2\n3,4\n', "quote.csv")
    assert outcome.frame is None and outcome.messages.errors


@pytest.mark.parametrize("content", [b"", b"   \n\n"])
def test_empty_file_is_an_error(content):
    outcome = read_upload(content, "empty.csv")
    assert outcome.frame is None
    assert outcome.messages.errors == ("The file is empty.",)


def test_header_only_is_an_error():
    outcome = read_upload(b"a,b,c\n", "header.csv")
    assert outcome.frame is None
    assert "no rows" in outcome.messages.errors[0]


def test_unsupported_type_and_damaged_workbook_are_errors():
    assert "not supported" in read_upload(b"{}", "data.json").messages.errors[0]
    damaged = read_upload(b"PK\x03\x04 not really a workbook", "data.xlsx")
    assert damaged.frame is None and "Excel" in damaged.messages.errors[0]


def test_text_in_a_numeric_column_is_a_warning():
    frame = base_frame().astype({"age": object})
    frame.loc[[3, 10], "age"] = "unknown"
    outcome = read_upload(csv_bytes(frame), "text_in_age.csv")
    assert outcome.frame is not None
    assert any("'age' looks numeric, but 2" in w for w in outcome.messages.warnings)
    assert not any("unknown" in m for m in outcome.messages.warnings)  # never a value


def test_all_missing_column_is_a_warning():
    frame = base_frame()
    frame["notes"] = np.nan
    outcome = read_upload(csv_bytes(frame), "missing.csv")
    assert outcome.frame is not None
    assert any("'notes' has no values (all missing)" in w for w in outcome.messages.warnings)


def test_one_level_quasi_identifier_is_a_warning():
    frame = base_frame()
    frame["sex"] = "F"
    outcome = read_upload(csv_bytes(frame), "one_sex.csv")
    assert "sex" in outcome.roles.quasi_identifiers
    assert any("'sex' has a single value" in w for w in outcome.messages.warnings)


def test_outcome_without_events_is_an_error():
    frame = base_frame()
    frame["death"] = 0
    outcome = read_upload(csv_bytes(frame), "no_events.csv")
    assert outcome.frame is not None  # the data load; the model cannot be fitted
    assert any("no events" in e for e in outcome.messages.errors)


def _render(content: bytes, filename: str) -> None:
    from dashboard.upload import read_upload, show_messages

    show_messages(read_upload(content, filename).messages)


@pytest.mark.parametrize(
    ("content", "filename", "kind", "needle"),
    [
        (b"a,b\n1,2\n3,4,5,6\n", "bad.csv", "error", "line 3"),
        (b"", "empty.csv", "error", "empty"),
        (b"id,death,sex\n1,0,F\n2,0,M\n3,0,F\n", "x.csv", "error", "no events"),
        (b"id,sex,age\n1,F,30\n2,F,40\n3,F,50\n", "x.csv", "warning", "single value"),
        (b"id,age,notes\n1,30,\n2,40,\n3,50,\n", "x.csv", "warning", "all missing"),
    ],
)
def test_messages_are_drawn_as_errors_and_warnings(content, filename, kind, needle):
    at = AppTest.from_function(_render, args=(content, filename), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception
    shown = [e.value for e in getattr(at, kind)]
    assert any(needle in text for text in shown), shown
