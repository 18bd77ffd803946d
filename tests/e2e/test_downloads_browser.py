"""End to end: a downloaded export is not served once its tab is gone.

Streamlit serves a download's bytes at ``/media/<id>`` to anyone holding the URL, without a
session. The masked file downloaded on the Export page must stop answering soon after the
tab that asked for it has closed (it used to answer for as long as the server ran).
"""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_a_downloaded_export_is_not_served_after_its_tab_closed(
    browser, app_url, download_cleanup_seconds
):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{app_url}/export")
    main = page.get_by_test_id("stMain")
    prepare = main.get_by_role("button", name=re.compile(r"Prepare the masked data"))
    download_button = main.get_by_role("button", name=re.compile(r"Download the masked data"))
    prepare.or_(download_button).first.wait_for()
    if prepare.count():
        prepare.click()
    download_button.wait_for(timeout=120_000)
    with page.expect_download() as info:
        download_button.click()
    download = info.value
    url = download.url
    assert "/media/" in url
    assert b"stomach_dose_gy" in Path(download.path()).read_bytes()[:2000]
    context.close()  # the tab is gone

    # Made files are deleted one to two cleanup periods after the click; allow one more.
    allowed = 3 * download_cleanup_seconds + 10
    deadline = time.monotonic() + allowed
    status = status_of(url)
    while status == 200 and time.monotonic() < deadline:
        time.sleep(2)
        status = status_of(url)
    assert status == 404, f"the export was still served {allowed:.0f} s later"
