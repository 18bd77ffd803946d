"""End to end: change the masking, copy the link from the sidebar, open it in a new browser
session and find the same configuration (same slider value, same risk)."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from e2e_helpers import ARTIFACTS, METRIC_VALUE_JS, metric_value

pytestmark = pytest.mark.e2e


def digits_slider(page):
    main = page.get_by_test_id("stMain")
    slider = main.get_by_test_id("stSlider").filter(has_text="Significant digits").first
    slider.wait_for()
    return slider.get_by_role("slider")


def wait_for_metric(page, label: str) -> str:
    page.wait_for_function(f"() => ({METRIC_VALUE_JS})(['{label}']) !== null")
    return metric_value(page, label)


def test_a_copied_link_opens_the_same_configuration_in_a_new_session(page, browser, app_url):
    page.goto(app_url)
    thumb = digits_slider(page)
    before = wait_for_metric(page, "Average risk")
    start = int(thumb.input_value())
    thumb.focus()
    thumb.press("ArrowLeft")
    assert int(thumb.input_value()) == start - 1
    page.wait_for_function(
        f"([before]) => {{ const v = ({METRIC_VALUE_JS})(['Average risk']);"
        " return v !== null && v !== before; }",
        arg=[before],
    )
    changed = metric_value(page, "Average risk")
    # Open the sidebar's "Copy link" popover and read the link from its code block.
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stPopover").filter(has_text="Copy link").get_by_role("button").click()
    code = page.get_by_test_id("stPopoverBody").get_by_test_id("stCode").first
    code.wait_for()
    link = re.sub(r"\s+", "", code.locator("code").inner_text())
    assert link.startswith(app_url), link
    assert "cfg" in parse_qs(urlsplit(link).query)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "share-link-popover.png"), full_page=True)

    # A new browser context is a new session: nothing is shared but the link.
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        other = context.new_page()
        other.set_default_timeout(60_000)
        other.goto(link)
        other_thumb = digits_slider(other)
        other.get_by_text("Opened the shared configuration").first.wait_for()
        assert int(other_thumb.input_value()) == start - 1
        assert wait_for_metric(other, "Average risk") == changed
        assert "cfg=" not in other.url  # consumed: a reload does not re-apply an old link
        assert other.get_by_test_id("stException").count() == 0
        other.screenshot(path=str(ARTIFACTS / "share-link-opened.png"), full_page=True)
    finally:
        context.close()
