"""The CSV writer checks for cancellation between pieces of rows (a closed tab stops the
released file within a piece) and writes exactly the bytes of one ``DataFrame.to_csv`` call."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from counting_check import CountingCheck

from deid_core.cancellation import cancellable
from deid_core.errors import Cancelled
from deid_core.io import export
from deid_core.io.export import CSV_PIECE_CELLS, to_bytes


def _frame(n: int) -> pd.DataFrame:
    """Four columns of kinds pandas formats piece by piece or with care: a datetime column
    whose times are all midnight in the first piece only (pandas then writes dates alone
    there), floats with missing values, categories, text with quotes and line breaks."""
    rng = np.random.default_rng(5)
    rows = CSV_PIECE_CELLS // 4
    when = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 900, n), unit="D")
    late = np.arange(n) >= rows
    when = when + pd.to_timedelta(np.where(late, rng.integers(0, 86_400, n), 0), unit="s")
    dose = rng.normal(size=n) / 3
    dose[rng.random(n) < 0.05] = np.nan
    return pd.DataFrame(
        {
            "when": when,
            "dose": dose,
            "city": pd.Categorical(rng.choice(["Hiroshima", "Nagasaki"], n)),
            "note": rng.choice(['a "quoted" word', "two\r\nlines", "=1+1", "plain"], n),
        }
    )


def _reference(frame: pd.DataFrame) -> bytes:
    """The CSV as the writer made it before it was split: one ``to_csv`` call."""
    return frame.to_csv(index=False, lineterminator="\r\n").encode("utf-8")


@pytest.mark.parametrize("n", [0, 1, CSV_PIECE_CELLS // 4, CSV_PIECE_CELLS // 4 + 1, 60_001])
def test_the_csv_is_byte_identical_to_one_to_csv_call(n):
    frame = _frame(n)
    check = CountingCheck()
    with cancellable(check):
        written = to_bytes(frame, "csv", neutralise=False).data
    assert written == _reference(frame)
    assert to_bytes(frame, "csv", neutralise=False).data == written  # no check set: the same
    assert check.calls == max(1, -(-n // (CSV_PIECE_CELLS // 4)))  # one check per piece


def test_pieces_other_than_pandas_own_would_change_the_dates(monkeypatch):
    """Why the pieces are pandas' own: split elsewhere, a piece of midnights loses its times
    (so the identity test above can fail)."""
    frame = _frame(60_001)
    monkeypatch.setattr(export, "CSV_PIECE_CELLS", CSV_PIECE_CELLS * 2)
    assert to_bytes(frame, "csv", neutralise=False).data != _reference(frame)


def test_a_cancelled_csv_stops_between_pieces():
    frame = _frame(60_001)
    check = CountingCheck(stop_at=2)
    with cancellable(check), pytest.raises(Cancelled):
        to_bytes(frame, "csv")
    assert check.calls == 2
