"""A file of 200,000 records in a real browser: the live panel works in the background.

The figures change when a slider moves, the panel is never blank while the model is fitted
in the background (the last figures stay, marked as updating), the replicates' running mean
can be stopped, and a run made stale by a newer setting is cancelled (the server logs it).
No timing is asserted.
"""

from __future__ import annotations

import re
import time

import pytest
from e2e_helpers import (
    ANY_METRIC_VALUE_JS,
    ARTIFACTS,
    METRIC_VALUE_JS,
    SETTLED_JS,
    choose_option,
    give_file,
    metric_value,
    open_page,
)

from deid_core.datasets.cohort import synthetic_cohort

pytestmark = pytest.mark.e2e

N_RECORDS = 200_000


def cohort_csv() -> bytes:
    """The synthetic cohort's shape at 200,000 records (made in memory, never saved)."""
    return synthetic_cohort(n=N_RECORDS, seed=7).drop(columns=["person_id"]).to_csv(index=False)


def choose(page, key_part: str, option: str) -> None:
    """Choose ``option`` in the select box whose widget key ends with ``key_part`` (Streamlit
    gives a keyed widget the class ``st-key-<key>``, other characters than letters, digits,
    ``_`` and ``-`` replaced by ``-``)."""
    css = re.sub(r"[^a-zA-Z0-9_-]", "-", key_part)
    box = page.locator(f'[class*="{css} "], [class$="{css}"]').locator(
        '[data-testid="stSelectbox"]'
    )
    choose_option(page, box, option)


def wait_metric_change(page, label: str, before: str | None) -> str:
    page.wait_for_function(
        f"([label, before]) => {{ const v = ({METRIC_VALUE_JS})([label]);"
        " return v !== null && v !== before && v !== 'computing...'; }",
        arg=[label, before],
    )
    return metric_value(page, label)


def server_logged(pattern: str, wait: float = 30.0) -> bool:
    """Whether the server's log (written by the app fixture) has a line matching ``pattern``,
    looking again for up to ``wait`` seconds while the server writes it."""
    deadline = time.monotonic() + wait
    while True:
        if re.search(pattern, (ARTIFACTS / "streamlit.log").read_text(errors="replace")):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)


def test_a_large_file_stays_live_and_stale_runs_are_cancelled(page, app_url):
    page.goto(f"{app_url}/data")
    page.wait_for_function(f"() => ({ANY_METRIC_VALUE_JS})(['Records']) !== null")
    main = page.get_by_test_id("stMain")
    give_file(page, "cohort.csv", cohort_csv().encode(), N_RECORDS, timeout=120_000)
    try:
        open_page(page, "Mask", "")
        page.wait_for_function(f"() => ({METRIC_VALUE_JS})(['Average risk']) !== null")
        before = metric_value(page, "Average risk")

        # A quasi-identifier grouped, then its slider moved: the figures change.
        choose(page, "age_at_end:method", "Interval grouping")
        grouped = wait_metric_change(page, "Average risk", before)
        width = main.get_by_test_id("stSlider").filter(has_text="Interval width").first
        width.get_by_role("slider").focus()
        width.get_by_role("slider").press("End")  # the widest intervals
        widest = wait_metric_change(page, "Average risk", grouped)
        assert float(widest) < float(grouped) < float(before)
        main.locator(".vega-embed").first.wait_for()  # the small map, swept in the background

        # The exposure switched to noise: never a blank panel while the replicates run.
        ap_before = wait_metric_change(page, "Analysis potential", None)
        choose(page, "stomach_dose_gy:method", "Uniform noise")
        main.get_by_text(re.compile("Updating|Running mean")).first.wait_for()
        assert metric_value(page, "Average risk") is not None
        assert metric_value(page, "Analysis potential") is not None
        # Five hundred replicates (the Utility page's setting): long enough to stop them.
        open_page(page, "Utility", "utility")
        replicates = main.get_by_test_id("stSlider").filter(has_text="Replicates").first
        thumb = replicates.get_by_role("slider")
        thumb.focus()
        thumb.press("End")
        main.get_by_text(re.compile("500 random replicates")).first.wait_for()
        open_page(page, "Mask", "")
        main.get_by_text("Live risk and utility").wait_for()
        # The running mean arrives; stop there and keep it.
        stop = main.get_by_role("button", name="Stop here and keep these replicates")
        stop.wait_for(timeout=120_000)
        main.get_by_text(re.compile("Running mean over")).first.wait_for()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "scale-200k-updating.png"), full_page=True)
        stop.click()
        main.get_by_text(re.compile("Stopped by you after")).first.wait_for()
        stopped = metric_value(page, "Analysis potential")
        assert stopped not in (None, "computing...", "unavailable")

        # A new noise width starts a new run; the method switched back makes it stale.
        half_width = main.get_by_test_id("stSlider").filter(has_text="half-width").first
        half_width.get_by_role("slider").focus()
        half_width.get_by_role("slider").press("End")
        main.get_by_text(re.compile("Updating")).first.wait_for()
        choose(page, "stomach_dose_gy:method", "No masking")
        # Once no run and no job is under way and nothing says it is updating, every figure
        # of the current recipe is shown: the panel's and the strip's analysis potential
        # (issue 28: one was left undrawn). The running icon shows a moment after a run
        # starts, so the strip's own figure is waited for too.
        page.wait_for_function(
            f"() => !document.body.innerText.includes('Updating') && ({SETTLED_JS})()",
            timeout=120_000,
        )
        page.get_by_test_id("stSidebar").get_by_test_id("stMetric").filter(
            has_text="Analysis potential"
        ).wait_for()
        assert metric_value(page, "Analysis potential") == ap_before  # the unmasked exposure
        assert server_logged(r"Background job 'utility' cancelled: a newer setting replaced it")
        assert main.get_by_test_id("stException").count() == 0
    except Exception:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "scale-200k.png"), full_page=True)
        raise  # the page's text and the server's state are reported (conftest.py)
