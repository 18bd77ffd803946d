"""Two sessions never see each other's data or results.

Two separate browser contexts (two users, two Streamlit sessions) upload two different CSV files
to the same running dashboard. Each file has its own marker, in a column name and in a category
(``region``), and its own number of records. Each page must show only its own file (the Data
page's column profile and roles, the "Records" metric), also after the other session has
uploaded, and after a reload (which starts a fresh session: it shows its own file or the demo,
never the other user's file).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from e2e_helpers import ANY_METRIC_VALUE_JS, open_page, upload, wait_for_metric

pytestmark = pytest.mark.e2e


SESSIONS = {
    "alpha": {"marker": "QZXALPHAMARK", "n": 123},
    "bravo": {"marker": "QZXBRAVOMARK", "n": 77},
}


def cohort_csv(marker: str, n: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "person_id": np.arange(1, n + 1),
            "sex": rng.choice(["F", "M"], n),
            "age": rng.integers(20, 80, n),
            f"{marker}_score": rng.normal(size=n).round(2),
            "region": rng.choice([f"{marker}_north", "south"], n),
            "dose": rng.gamma(1.0, 0.5, n).round(3),
            "death": rng.integers(0, 2, n),
        }
    )
    return frame.to_csv(index=False).encode()


def metric_value(page, label: str) -> str | None:
    return page.evaluate(ANY_METRIC_VALUE_JS, [label])


def page_text(page) -> str:
    """Everything the page shows as text, plus the accessible names of widgets and options."""
    return page.evaluate("() => document.body.innerText")


def assert_shows_only(page, own: str, other: str, n: int) -> None:
    wait_for_metric(page, "Records", f"{n:,}")
    main = page.get_by_test_id("stMain")
    # The marker is a column name: in the data grid (drawn on a canvas, so its cells are
    # "hidden" to Playwright) and in the profile; being in the page is enough.
    main.get_by_text(re.compile(f"{own}_score")).first.wait_for(state="attached")
    text = page_text(page)
    assert own in text
    assert other not in text
    assert other not in page.content()


@pytest.fixture
def two_pages(browser, app_url):
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in SESSIONS]
    pages = []
    for context in contexts:
        page = context.new_page()
        page.set_default_timeout(60_000)
        pages.append(page)
    yield pages
    for context in contexts:
        context.close()


def test_two_sessions_see_only_their_own_upload(two_pages, app_url):
    page_a, page_b = two_pages
    a, b = SESSIONS["alpha"], SESSIONS["bravo"]
    upload(page_a, app_url, "alpha_cohort.csv", cohort_csv(a["marker"], a["n"], seed=1), a["n"])
    assert_shows_only(page_a, a["marker"], b["marker"], a["n"])

    upload(page_b, app_url, "bravo_cohort.csv", cohort_csv(b["marker"], b["n"], seed=2), b["n"])
    assert_shows_only(page_b, b["marker"], a["marker"], b["n"])

    # The first session is unchanged by the second upload: rerun it by visiting another page.
    open_page(page_a, "Risk", "risk")
    wait_for_metric(page_a, "Records", f"{a['n']:,}")
    assert b["marker"] not in page_text(page_a)
    open_page(page_a, "Data", "data")
    assert_shows_only(page_a, a["marker"], b["marker"], a["n"])

    # A reload starts a fresh session: its own file (if kept) or the demo, never the other's.
    page_a.reload()
    page_a.wait_for_function(f"() => ({ANY_METRIC_VALUE_JS})(['Records']) !== null")
    records = metric_value(page_a, "Records")
    assert records != f"{b['n']:,}"
    text = page_text(page_a)
    assert b["marker"] not in text and b["marker"] not in page_a.content()
    if records == f"{a['n']:,}":
        assert a["marker"] in text

    # The second session still shows its own data after the first one reloaded.
    open_page(page_b, "Data", "data")
    assert_shows_only(page_b, b["marker"], a["marker"], b["n"])
