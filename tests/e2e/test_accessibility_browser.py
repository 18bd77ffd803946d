"""Accessibility and a first session in a real browser: every masking control's accessible
name says which column it sets, charts carry a title and a data table reachable by keyboard,
the first-run hint can be dismissed by keyboard, and the Data page stays on the upload tab."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from e2e_helpers import ARTIFACTS, METRIC_VALUE_JS, upload

pytestmark = pytest.mark.e2e

#: Roles of the controls whose accessible names are checked.
CONTROL_ROLES = ("slider", "combobox", "checkbox", "spinbutton", "radiogroup", "switch")
#: A line of Playwright's ARIA snapshot naming a control: ``- slider "Name": value``.
CONTROL_LINE = re.compile(r"^\s*- (" + "|".join(CONTROL_ROLES) + r') "([^"]*)"', re.MULTILINE)


def control_names(locator) -> list[tuple[str, str]]:
    """(role, accessible name) of every control under ``locator``, from its ARIA snapshot
    (the names assistive technology announces)."""
    return CONTROL_LINE.findall(locator.aria_snapshot())


def wait_for_mask_page(page, app_url: str) -> None:
    page.goto(app_url)
    main = page.get_by_test_id("stMain")
    main.get_by_test_id("stSlider").filter(has_text="Significant digits").first.wait_for()
    page.wait_for_function(f"() => ({METRIC_VALUE_JS})(['Average risk']) !== null")


def test_masking_controls_are_named_by_their_column(page, app_url):
    wait_for_mask_page(page, app_url)
    main = page.get_by_test_id("stMain")
    masking = main.get_by_test_id("stColumn").first
    names = control_names(masking)
    assert names, "no control found in the masking column"
    # The default recipe: dose by significant digits, two columns in intervals.
    labels = [name for _, name in names]
    # (Streamlit's sliders announce their label twice: "Interval width for age Interval ...")
    assert any(n.startswith("Significant digits for ") for n in labels), labels
    widths = [n for n in labels if n.startswith("Interval width for ")]
    assert len(widths) == 2 and len(set(widths)) == 2, widths
    methods = [n for n in labels if n.startswith("Masking method")]
    assert methods and all(n.startswith("Masking method for ") for n in methods), methods
    # No two controls of the page announce the same name.
    repeated = [n for n, c in Counter(labels).items() if c > 1]
    assert not repeated, repeated
    # Every control has a name at all.
    assert all(name.strip() for _, name in control_names(main))


def test_charts_have_titles_and_a_data_table_by_keyboard(page, app_url):
    wait_for_mask_page(page, app_url)
    main = page.get_by_test_id("stMain")
    main.locator(".vega-embed").first.wait_for()
    toggle = (
        main.get_by_test_id("stCheckbox")
        .filter(has_text=re.compile("^Show as a table: Risk-utility map"))
        .locator("input")
        .first
    )
    toggle.wait_for(state="attached")
    tables_before = main.get_by_test_id("stDataFrame").count()
    toggle.focus()
    page.keyboard.press("Space")
    page.wait_for_function(
        "([n]) => document.querySelectorAll('[data-testid=stMain] "
        "[data-testid=stDataFrame]').length > n",
        arg=[tables_before],
    )
    # The chart's title is drawn in the chart (Vega renders it as a title group).
    title = main.locator(".vega-embed .role-title-text").first
    assert title.text_content().startswith("Risk-utility map")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "mask-chart-table.png"), full_page=True)


def test_first_run_hint_is_dismissed_by_keyboard(page, app_url):
    wait_for_mask_page(page, app_url)
    main = page.get_by_test_id("stMain")
    main.get_by_text("New here? Four steps.").wait_for()
    button = main.get_by_role("button", name="Got it, hide this")
    button.focus()
    page.keyboard.press("Enter")
    main.get_by_text("New here? Four steps.").wait_for(state="detached")


def test_data_page_stays_on_the_upload_tab_after_upload_and_roles(page, app_url):
    n = 60
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "": np.arange(1, n + 1),
            "low": rng.integers(0, 2, n),
            "age": rng.integers(15, 45, n),
            "bwt": rng.integers(700, 5000, n),
        }
    )
    upload(page, app_url, "small_birthwt.csv", frame.to_csv(index=False).encode(), n)
    main = page.get_by_test_id("stMain")
    upload_tab = main.get_by_role("tab", name=re.compile("Upload a file"))
    page.wait_for_function(
        "() => [...document.querySelectorAll('[role=tab]')].some("
        "t => t.innerText.includes('Upload a file') && t.getAttribute('aria-selected') === 'true')"
    )
    assert upload_tab.get_attribute("aria-selected") == "true"
    # the demo tab's notice is not what the user sees under the uploaded file
    assert not main.get_by_text("Synthetic data: no row describes a real person").first.is_visible()
    main.get_by_role("button", name="Apply roles").click()
    main.get_by_text(re.compile("Roles applied")).first.wait_for()
    assert upload_tab.get_attribute("aria-selected") == "true"
