"""In a real browser, on the 16,000-person demo: the R-U map page searches whole recipes, and
one click on a frontier recipe applies it (the sidebar's maximum risk then meets 1/5)."""

from __future__ import annotations

import re

import pytest
from e2e_helpers import ANY_METRIC_VALUE_JS, ARTIFACTS, open_page

pytestmark = pytest.mark.e2e


def test_a_frontier_recipe_is_applied_in_one_click(page, app_url):
    page.goto(app_url)
    page.wait_for_function(f"() => ({ANY_METRIC_VALUE_JS})(['Max risk']) !== null")
    before = page.evaluate(ANY_METRIC_VALUE_JS, ["Max risk"])
    assert float(before) > 0.2
    open_page(page, "R-U map", "ru-map")
    main = page.get_by_test_id("stMain")
    main.get_by_text("Search whole recipes").first.wait_for()
    limit = main.get_by_role("spinbutton", name=re.compile("Suppression limit"))
    for _ in range(3):  # a click during a rerun may be lost: open the settings until shown
        main.get_by_text(re.compile("Settings tried per column")).first.click()
        try:
            limit.wait_for(timeout=20_000)
            break
        except Exception:
            continue
    limit.fill("5")
    limit.press("Enter")
    main.get_by_test_id("stBaseButton-primary").filter(has_text=re.compile("^Search$")).click()
    # The search runs in the background, its best recipes so far drawn as they come; wait for
    # its end (the summary no longer says "partial result").
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stText"]')]
            .some(t => t.innerText.startsWith('Search of') && !t.innerText.includes('partial'))""",
        timeout=240_000,
    )
    apply = main.get_by_role("button", name="Apply", exact=True).first
    apply.wait_for()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "search-frontier.png"), full_page=True)
    apply.click()
    page.wait_for_function(
        f"() => {{ const v = ({ANY_METRIC_VALUE_JS})(['Max risk']); "
        "return v !== null && parseFloat(v) <= 0.2; }",
        timeout=120_000,
    )
