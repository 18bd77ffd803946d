"""In a real browser: the Risk page's open-data panel, its Benedetti-Franconi method and the
definitions that differ from sdcMicro and ARX."""

from __future__ import annotations

import re

import pytest
from e2e_helpers import ARTIFACTS, METRIC_VALUE_JS, choose_option, metric_value

pytestmark = pytest.mark.e2e


def test_open_data_bf_method_switch(page, app_url):
    page.goto(f"{app_url}/risk")
    main = page.get_by_test_id("stMain")
    main.get_by_text("The released file is a sample of a larger population").click()
    label = "Expected re-identifications"
    page.wait_for_function(f"() => ({METRIC_VALUE_JS})(['{label}']) !== null")
    exact = float(metric_value(page, label).replace(",", ""))

    choose_option(
        page,
        main.get_by_test_id("stSelectbox").filter(has_text="Individual (Benedetti-Franconi)"),
        re.compile("sdcMicro's default approximation"),
    )
    page.wait_for_function(
        f"([before]) => {{ const v = ({METRIC_VALUE_JS})(['{label}']);"
        " return v !== null && v !== before; }",
        arg=[metric_value(page, label)],
    )
    approx = float(metric_value(page, label).replace(",", ""))
    assert exact < approx <= 1.04 * exact  # the approximation is a little above the exact value

    main.get_by_text("Definitions that differ from sdcMicro and ARX").click()
    main.get_by_text(re.compile("ARX prints the large-N form")).wait_for()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "risk-open-data.png"), full_page=True)
    assert main.get_by_test_id("stException").count() == 0
