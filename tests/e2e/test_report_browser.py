"""End to end: build the release report on the Export page, preview it, download the PDF."""

from __future__ import annotations

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
    sizes = frame.evaluate("() => [...document.images].map(i => i.naturalWidth)")
    assert all(width > 100 for width in sizes)
    ARTIFACTS.mkdir(exist_ok=True)
    iframe.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "export-report.png"), full_page=True)

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
