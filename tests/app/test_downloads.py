"""Deferred downloads (dashboard.downloads): built at the click from an object the session
holds, and nothing once that object is gone."""

import gc

import app_helpers  # noqa: F401  (puts the repository on sys.path)
import pandas as pd
import pytest

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
