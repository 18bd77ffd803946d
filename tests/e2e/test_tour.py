"""End to end in a real browser: El Emam's tour, started from the Learn page and walked with
"Next" to the end, then the data set from before the tour is restored."""

from __future__ import annotations

import re

import pytest
from e2e_helpers import ARTIFACTS, METRIC_VALUE_JS

pytestmark = pytest.mark.e2e


def wait_metric(page, label: str, value: str) -> None:
    page.wait_for_function(
        f"([label, value]) => ({METRIC_VALUE_JS})([label]) === value", arg=[label, value]
    )


def test_el_emam_tour_walks_to_the_end_and_restores(page, app_url):
    page.goto(f"{app_url}/learn")
    main = page.get_by_test_id("stMain")
    main.get_by_text(re.compile("El Emam & Malin: equivalence classes")).first.wait_for()
    # Streamlit marks a keyed widget's container with the class st-key-<key> (dots -> dashes).
    main.locator(".st-key-learn-start-el_emam").get_by_role("button").click()
    # The session holds the synthetic cohort: the tour asks before replacing it.
    main.get_by_text(re.compile("This replaces your data set")).first.wait_for()
    main.get_by_role("button", name="Start the tour").click()

    main.get_by_text(re.compile(r"1\. Classes, and three ways")).first.wait_for()
    wait_metric(page, "Average risk", "0.593")
    wait_metric(page, "Maximum risk", "1.000")

    main.get_by_role("button", name=re.compile("Next")).click()
    main.get_by_text(re.compile(r"2\. Generalise year of birth")).first.wait_for()
    wait_metric(page, "Average risk", "0.333")
    main.get_by_text(re.compile("printed values disagree")).first.wait_for()

    main.get_by_role("button", name=re.compile("Next")).click()
    main.get_by_text(re.compile(r"3\. Suppress the records")).first.wait_for()
    wait_metric(page, "Strict average risk after suppression", "0.200")
    # The last step has Finish instead of Next. The previous step's buttons may still be on
    # screen while the new ones draw: wait for Finish to appear and for Next to go.
    main.locator(".st-key-learn-finish").get_by_role("button").wait_for()
    main.locator(".st-key-learn-next").wait_for(state="detached")
    assert main.locator(".st-key-learn-next").count() == 0

    main.get_by_role("button", name=re.compile("Reset to this step")).click()
    wait_metric(page, "Strict average risk after suppression", "0.200")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "learn-el-emam.png"), full_page=True)

    main.get_by_role("button", name=re.compile("Finish")).click()
    restore = main.get_by_role("button", name=re.compile("Restore Synthetic radiation cohort"))
    restore.wait_for()
    restore.click()
    main.get_by_text(re.compile("Restored Synthetic radiation cohort")).first.wait_for()
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text(re.compile("Synthetic radiation cohort")).first.wait_for()
    assert main.get_by_test_id("stException").count() == 0
