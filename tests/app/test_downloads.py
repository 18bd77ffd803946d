"""Deferred downloads (dashboard.downloads): built at the click from an object the session
holds, and nothing once that object is gone."""

import gc

import app_helpers  # noqa: F401  (puts the repository on sys.path)
import pandas as pd
import pytest

from dashboard import downloads
from dashboard.downloads import SessionEnded, deferred


def test_a_deferred_download_builds_at_the_call_and_not_after_its_owner_is_gone():
    calls = []
    table = pd.DataFrame({"a": [1, 2]})

    def build(frame):
        calls.append(1)
        return frame.to_csv(index=False).encode()

    make = deferred(table, build)
    assert calls == []  # nothing is built before the click
    assert make() == b"a\n1\n2\n" and calls == [1]
    del table
    gc.collect()
    with pytest.raises(SessionEnded):
        make()
    assert calls == [1]


@pytest.mark.parametrize(
    ("setting", "seconds"), [(None, 20.0), ("", 20.0), ("5", 5.0), ("0.5", 0.5)]
)
def test_the_cleanup_period_comes_from_its_setting(setting, seconds):
    assert downloads._cleanup_seconds(setting) == seconds


@pytest.mark.parametrize("setting", ["0", "-1", "abc", "inf", "nan"])
def test_a_cleanup_period_that_is_not_a_positive_number_is_refused(setting):
    with pytest.raises(ValueError, match="DEID_DOWNLOAD_CLEANUP_SECONDS"):
        downloads._cleanup_seconds(setting)
