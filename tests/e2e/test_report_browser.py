"""End to end: build the release report on the Export page, preview it, download the PDF."""

from __future__ import annotations

import hashlib
import io
import re
from pathlib import Path

import pytest
from e2e_helpers import ARTIFACTS
from pypdf import PdfReader

pytestmark = pytest.mark.e2e

IMAGES_LOADED_JS = """() => {
    const images = [...document.images];
    return images.length >= 3 && images.every(i => i.complete && i.naturalWidth > 0);
}"""


def test_build_preview_and_download_the_report(page, app_url):
    page.goto(f"{app_url}/export")
    main = page.get_by_test_id("stMain")
    build = main.get_by_role("button", name=re.compile("Build the report"))
    build.wait_for()
    # The parameters box is off by default.
    params = main.get_by_test_id("stCheckbox").filter(has_text="Include masking parameters")
    assert not params.get_by_role("checkbox").is_checked()
    # The project details for the board, typed as a user would (Enter commits a text input).
    title = main.get_by_role("textbox", name="Project title")
    title.fill("Thyroid cancer after exposure")
    title.press("Enter")
    purpose = main.get_by_role("textbox", name="Purpose of the release")
    purpose.fill("Replicate the dose-response model")
    purpose.press("Control+Enter")
    build.click()

    pdf_button = main.get_by_role("button", name=re.compile(r"Download the report \(PDF\)"))
    pdf_button.wait_for(timeout=120_000)
    main.get_by_role("button", name=re.compile(r"Download the report \(HTML\)")).wait_for()

    # The preview renders in an iframe, its charts loaded.
    iframe = main.locator("iframe").last
    iframe.wait_for()
    frame = iframe.element_handle().content_frame()
    assert frame is not None
    frame.wait_for_function(IMAGES_LOADED_JS, timeout=60_000)
    assert frame.locator("h1").first.inner_text().startswith("De-identification report")
    assert frame.locator("section#verdict").count() == 1
    # Headings, a contents list, and a text alternative for every chart.
    assert frame.locator("h1").count() == 1
    sections = frame.locator("main section > h2").all_inner_texts()
    assert sections[0] == "Project and release record" and sections[-1] == "Sign-off"
    assert frame.locator("nav a").count() == len(sections)
    alts = frame.evaluate("() => [...document.images].map(i => i.alt)")
    titles = frame.locator("figure h3").all_inner_texts()
    assert len(alts) == len(titles) >= 3
    assert all(alt and alt != title for alt, title in zip(alts, titles, strict=True))
    summaries = frame.locator("figure details summary")
    assert summaries.count() == len(alts)
    summaries.first.click()  # a keyboard or a click opens the chart's data table
    assert frame.locator("figure details table").first.is_visible()
    record = frame.locator("section#project table")
    assert "Thyroid cancer after exposure" in record.inner_text()
    assert "Replicate the dose-response model" in record.inner_text()
    digest = record.locator("tr", has_text="Released file: SHA-256").locator("td").inner_text()
    sizes = frame.evaluate("() => [...document.images].map(i => i.naturalWidth)")
    assert all(width > 100 for width in sizes)
    ARTIFACTS.mkdir(exist_ok=True)
    iframe.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "export-report.png"), full_page=True)

    # The released file's SHA-256 is that of the file exactly as the browser downloads it.
    csv_button = main.get_by_role("button", name=re.compile(r"Download the masked data \(CSV\)"))
    with page.expect_download() as info:
        csv_button.click()
    downloaded = Path(info.value.path()).read_bytes()
    assert hashlib.sha256(downloaded).hexdigest() == digest.strip()

    with page.expect_download() as info:
        pdf_button.click()
    download = info.value
    assert download.suggested_filename.endswith("_report.pdf")
    data = Path(download.path()).read_bytes()
    reader = PdfReader(io.BytesIO(data))
    assert len(reader.pages) >= 2
    text = " ".join(" ".join(p.extract_text() for p in reader.pages).split())
    assert "Verdict" in text
    assert "rounded to 2 significant digit(s)" in text
    assert sum(len(p.images) for p in reader.pages) >= 3
    assert main.get_by_test_id("stException").count() == 0
