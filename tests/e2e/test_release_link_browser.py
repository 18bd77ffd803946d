"""End to end: a custodian uploads an identifiable visits file (name, medical record number,
date of birth), applies a recipe (identifiers removed, the record id as study_id pseudonyms,
ZIP codes to 3 digits, admission dates to the year), exports the masked file, builds the report
and copies the release link; a second browser context (a recipient) opens the link, sees the
release described without any upload, loads the exported file, is told "This is the release
described" and gets a model estimate beside the custodian's."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pandas as pd
import pytest
from e2e_helpers import (
    ANY_METRIC_VALUE_JS,
    ARTIFACTS,
    IDLE_JS,
    apply_recipe_file,
    give_file,
    open_page,
)
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))
from release_files import RECIPE, SOURCE_ONLY, visits_csv

from deid_core.share import configuration_json

pytestmark = pytest.mark.e2e


def download(page, button) -> bytes:
    with page.expect_download() as info:
        button.click()
    return Path(info.value.path()).read_bytes()


def press_until(page, button, shown, what: str) -> None:
    """Press ``button`` until ``shown`` appears (a press made while the page reruns can be
    lost)."""
    for _ in range(3):
        page.wait_for_function(IDLE_JS)
        button.click()
        try:
            shown.wait_for(timeout=60_000)
            return
        except PlaywrightTimeoutError:
            continue
    page.screenshot(path=str(ARTIFACTS / f"release-link-{what}.png"), full_page=True)
    raise AssertionError(f"{what}: nothing showed after three presses")


def test_a_recipient_opens_the_release_link_and_checks_the_file(page, browser, app_url):
    ARTIFACTS.mkdir(exist_ok=True)
    content = visits_csv()
    rows = len(pd.read_csv(io.BytesIO(content)))
    page.goto(f"{app_url}/data")
    page.wait_for_function(f"() => ({ANY_METRIC_VALUE_JS})(['Records']) !== null")
    main = page.get_by_test_id("stMain")
    give_file(page, "visits.csv", content, rows, timeout=90_000)
    apply_recipe_file(page, "recipe.json", configuration_json(RECIPE).encode())

    # Export: the masked file, then the report, then the release link.
    open_page(page, "Export", "export")
    prepare = main.get_by_role("button", name=re.compile(r"Prepare the masked data \(CSV\)"))
    data_button = main.get_by_role("button", name=re.compile(r"Download the masked data \(CSV\)"))
    press_until(page, prepare, data_button, "prepare")
    masked = download(page, data_button)
    link_code = main.get_by_test_id("stCode").filter(has_text="?release=")
    press_until(page, main.get_by_role("button", name="Build the report"), link_code, "report")
    main.get_by_text("Release link (for recipients)").first.wait_for()
    link = re.sub(r"\s+", "", link_code.first.locator("code").inner_text())
    assert link.startswith(app_url), link
    page.screenshot(path=str(ARTIFACTS / "release-link-export.png"), full_page=True)

    # A new browser context is a new session: the recipient holds the link and the file only.
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        other = context.new_page()
        other.set_default_timeout(120_000)
        other.goto(link)
        view = other.get_by_test_id("stMain")
        view.get_by_text("A release shared with you").first.wait_for()
        view.get_by_text("The custodian's verdict").first.wait_for()
        view.get_by_text(re.compile("column\\(s\\) of the source file were removed")).wait_for()
        view.get_by_text("Fitted by the custodian on the original data", exact=False).wait_for()
        view.get_by_text(re.compile("^Software: deid_core")).wait_for()  # the view's last line
        view.get_by_test_id("stDataFrame").first.wait_for()  # the custodian's estimates
        text = view.inner_text()
        for name in SOURCE_ONLY:
            assert not re.search(rf"\b{name}\b", text), name
        other.screenshot(path=str(ARTIFACTS / "release-link-view.png"), full_page=True)

        uploader = view.get_by_test_id("stFileUploader").filter(has_text="The masked file")
        matched = view.get_by_text("This is the release described")
        for _ in range(3):
            other.wait_for_function(IDLE_JS)
            uploader.locator("input[type=file]").set_input_files(
                files=[{"name": "visits_masked.csv", "mimeType": "text/csv", "buffer": masked}]
            )
            try:
                matched.first.wait_for(timeout=60_000)
                break
            except PlaywrightTimeoutError:
                continue
        else:
            raise AssertionError("the loaded file was not recognised")
        estimate = view.get_by_text(re.compile(r"Odds ratio per unit of length_of_stay .*: \d"))
        estimate.first.wait_for()
        assert other.get_by_test_id("stException").count() == 0
        other.screenshot(path=str(ARTIFACTS / "release-link-checked.png"), full_page=True)
    finally:
        context.close()
