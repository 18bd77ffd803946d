"""End to end in a real browser: the demo opens, a masking slider moves, the risk follows."""

from __future__ import annotations

import re

import pytest
from e2e_helpers import (
    ARTIFACTS,
    METRIC_VALUE_JS,
    choose_option,
    load_demo,
    metric_value,
    open_page,
)

pytestmark = pytest.mark.e2e


def test_demo_opens_slider_moves_risk_changes(page, app_url):
    page.goto(app_url)
    main = page.get_by_test_id("stMain")
    slider = main.get_by_test_id("stSlider").filter(has_text="Significant digits").first
    slider.wait_for()
    # The demo is the synthetic cohort, labelled as such, with live figures and the R-U map.
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text(re.compile("synthetic", re.IGNORECASE)).first.wait_for()
    main.locator(".vega-embed").first.wait_for()
    page.wait_for_function(f"() => ({METRIC_VALUE_JS})(['Average risk']) !== null")
    before = metric_value(page, "Average risk")

    thumb = slider.get_by_role("slider")  # an <input type="range">
    start = int(thumb.input_value())
    thumb.focus()
    thumb.press("ArrowLeft")  # keyboard-usable: one significant digit fewer
    assert int(thumb.input_value()) == start - 1
    page.wait_for_function(
        f"([before]) => {{ const v = ({METRIC_VALUE_JS})(['Average risk']);"
        " return v !== null && v !== before; }",
        arg=[before],
    )
    after = metric_value(page, "Average risk")
    # Fewer significant digits: larger equivalence classes, lower average risk.
    assert float(after) < float(before)
    main.get_by_test_id("stSlider").filter(has_text="Significant digits").first.wait_for()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "mask-after-slider.png"), full_page=True)
    assert main.get_by_test_id("stException").count() == 0


def test_point_source_smoothing_bandwidth_moves_risk_and_profile_draws(page, app_url):
    load_demo(page, app_url, "point-source")
    main = page.get_by_test_id("stMain")
    open_page(page, "Smoothing", "smoothing")
    slider = main.get_by_test_id("stSlider").filter(has_text="Bandwidth λ").first
    slider.wait_for()
    label = "Expected correct matches"
    page.wait_for_function(f"() => ({METRIC_VALUE_JS})(['{label}']) !== null")
    before = metric_value(page, label)
    thumb = slider.get_by_role("slider")
    thumb.focus()
    for _ in range(3):
        thumb.press("ArrowLeft")  # smaller bandwidth: less smoothing, higher risk
    page.wait_for_function(
        f"([before]) => {{ const v = ({METRIC_VALUE_JS})(['{label}']);"
        " return v !== null && v !== before; }",
        arg=[before],
    )
    after = metric_value(page, label)
    assert float(after.rstrip("%")) > float(before.rstrip("%"))
    main.get_by_role("button", name="Draw the profile").click()
    main.get_by_text("Risk against MSE").first.wait_for()
    # The profile's charts are drawn one after the other: wait for all four (nothing is timed).
    page.wait_for_function(
        """() => document.querySelectorAll('[data-testid="stMain"] .vega-embed').length >= 4"""
    )
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "smoothing-profile.png"), full_page=True)
    assert main.get_by_test_id("stException").count() == 0


def test_roc_audit_on_the_seed_example_then_a_smoothed_curve(page, app_url):
    load_demo(page, app_url, "Matthews")
    main = page.get_by_test_id("stMain")
    open_page(page, "ROC release", "roc")
    page.wait_for_function(f"() => ({METRIC_VALUE_JS})(['Statuses recovered']) !== null")
    assert metric_value(page, "Statuses recovered") == "100%"
    assert metric_value(page, "Pinned to a rank") == "100%"
    main.get_by_test_id("stDataFrame").first.wait_for()  # the reconstructed record, with the truth
    choose_option(
        page,
        main.get_by_test_id("stSelectbox").filter(has_text="Publish the curve as"),
        re.compile("binormal"),
    )
    page.wait_for_function(f"() => ({METRIC_VALUE_JS})(['Pinned to a rank']) === '0%'")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "roc-binormal.png"), full_page=True)
    assert main.get_by_test_id("stException").count() == 0
