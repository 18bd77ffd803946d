"""In a real browser: Markdown and HTML planted in every place a user controls (a link's column
names and masking, an upload's column names, category names and file name, a link naming an
unknown demo) show as literal text, and nothing renders or loads: no image, no link to the
outside, no request to any host but the dashboard's own (Playwright's request log).

Also the hosted entry point (``serve.py``): its response headers, and a page that loads
through it with no request leaving the server.
"""

from __future__ import annotations

import base64
import contextlib
import json
import zlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit
from urllib.request import urlopen

import numpy as np
import pandas as pd
import pytest
from conftest import running_dashboard
from e2e_helpers import ANY_METRIC_VALUE_JS, ARTIFACTS, SETTLED_JS, give_file, open_page

from deid_core.masking import MergeLevels
from deid_core.recipe import Recipe, Roles
from deid_core.share import PARAM, SharedConfig, encode_config

pytestmark = pytest.mark.e2e

ATTACKER = "attacker.example"
PIXEL = f"![p](https://{ATTACKER}/pixel.png)"
LINK = f"[Upload your file here](https://{ATTACKER}/upload)"
TAG = f"<img src=https://{ATTACKER}/i.png>"
FILE_NAME = f"![f](https:{ATTACKER}) <b>x _y_.csv"
#: The pages visited, with their addresses (``open_page`` waits for the address to change).
PAGES = (
    ("Mask", ""),
    ("Risk", "risk"),
    ("Utility", "utility"),
    ("R-U map", "ru-map"),
    ("Export", "export"),
    ("Data", "data"),
)


def hostile_csv(n: int = 80) -> bytes:
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {
            "person_id": np.arange(1, n + 1),
            PIXEL: rng.choice([LINK, TAG, "plain"], n),
            "age": rng.integers(20, 80, n),
            "dose": rng.gamma(1.0, 0.5, n).round(3),
            "death": rng.integers(0, 2, n),
        }
    )
    return frame.to_csv(index=False).encode()


def hostile_link() -> str:
    roles = Roles(
        quasi_identifiers=(PIXEL, "age"),
        exposure="dose",
        outcome="death",
        covariates=(PIXEL,),
        record_id="person_id",
    )
    recipe = Recipe(roles, (MergeLevels(PIXEL, groups={LINK: [LINK, TAG]}),))
    columns = ("person_id", PIXEL, "age", "dose", "death")
    return encode_config(SharedConfig(recipe, columns=columns))


def outside_requests(requests: list[str], app_url: str) -> list[str]:
    own = urlsplit(app_url).netloc
    return [url for url in requests if urlsplit(url).netloc not in (own, "")]


def assert_nothing_planted_renders(page, requests: list[str], app_url: str, where: str) -> None:
    planted = page.evaluate(
        """([host]) => [
            ...[...document.querySelectorAll('img')].map(e => e.src),
            ...[...document.querySelectorAll('a')].map(e => e.href),
            ...[...document.querySelectorAll('[src],[href]')]
                .map(e => e.getAttribute('src') || e.getAttribute('href')),
        ].filter(u => u && u.includes(host))""",
        [ATTACKER],
    )
    assert planted == [], (where, planted)
    assert outside_requests(requests, app_url) == [], (where, outside_requests(requests, app_url))


def shown(locator) -> str:
    """The text a reader sees (the invisible word joiners that break autolinks removed)."""
    return locator.inner_text().replace("\u2060", "")


def wait_settled(page) -> None:
    page.wait_for_function(f"() => ({ANY_METRIC_VALUE_JS})(['Records']) !== null")
    page.wait_for_function(SETTLED_JS)  # the run has finished drawing, no job is under way


@contextlib.contextmanager
def watched_page(browser, **options) -> Iterator[tuple[Any, list[str]]]:
    """A page in a fresh browser context, and the list of every URL it requests."""
    context = browser.new_context(**options)
    page = context.new_page()
    page.set_default_timeout(120_000)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    try:
        yield page, requests
    finally:
        context.close()


def test_planted_markdown_and_html_never_render_or_load(browser, app_url):
    with watched_page(browser, viewport={"width": 1400, "height": 1000}) as (page, requests):
        # A link made on an uploaded file whose column names are Markdown and HTML.
        page.goto(f"{app_url}/data?{PARAM}={hostile_link()}")
        wait_settled(page)
        main = page.get_by_test_id("stMain")
        main.get_by_text("waiting for its data").first.wait_for()
        assert PIXEL in shown(main)  # the column names, as written
        assert_nothing_planted_renders(page, requests, app_url, "the waiting link")

        # The upload: same columns, Markdown in the category names and the file name.
        give_file(page, FILE_NAME, hostile_csv(), 80)
        sidebar = page.get_by_test_id("stSidebar")
        assert FILE_NAME in shown(sidebar)  # the file name, as written
        for name, path in PAGES:
            open_page(page, name, path)
            wait_settled(page)
            assert_nothing_planted_renders(page, requests, app_url, name)
        open_page(page, "Mask", "")
        wait_settled(page)
        assert PIXEL in shown(page.get_by_test_id("stMain"))
        sidebar.get_by_test_id("stPopover").filter(has_text="Copy link").get_by_role(
            "button"
        ).click()
        page.get_by_test_id("stPopoverBody").get_by_text("Exactly what the link holds").wait_for()
        assert_nothing_planted_renders(page, requests, app_url, "the Copy link popover")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "hostile-mask.png"), full_page=True)


def test_a_link_naming_a_markdown_demo_shows_it_literally(browser, app_url):
    with watched_page(browser) as (page, requests):
        payload = json.dumps({"v": 1, "data": {"demo": PIXEL}, "config": {}}).encode()
        link = base64.urlsafe_b64encode(zlib.compress(payload)).decode().rstrip("=")
        page.goto(f"{app_url}/?{PARAM}={link}")
        wait_settled(page)
        page.get_by_text("shared link could not be used").first.wait_for()
        assert PIXEL in shown(page.get_by_test_id("stMain"))
        assert_nothing_planted_renders(page, requests, app_url, "an unknown demo")


@pytest.fixture(scope="module")
def served_url():
    """The dashboard started as a host would start it: ``streamlit run serve.py``."""
    with running_dashboard("serve.py") as url:
        yield url


def test_the_hosted_entry_point_forbids_framing_and_asks_no_other_server(browser, served_url):
    with urlopen(f"{served_url}/") as response:
        policy = response.headers["Content-Security-Policy"]
        assert "frame-ancestors 'self'" in policy and "img-src 'self' data: blob:" in policy
        assert "script-src 'self' 'sha256-" in policy and "'unsafe-inline'" not in policy
        assert response.headers["X-Frame-Options"] == "SAMEORIGIN"
    with watched_page(browser) as (page, requests):
        page.goto(served_url)
        wait_settled(page)
        icon = page.evaluate("() => document.querySelector('link[rel*=icon]').href")
        assert icon.startswith(("data:", served_url)), icon
        assert outside_requests(requests, served_url) == []


def test_streamlit_run_app_py_sends_the_same_headers(browser, app_url):
    """``streamlit run app.py``, what Community Cloud runs, serves app.py's st.App: the same
    headers as serve.py, and the page still draws its charts under the script policy."""
    with urlopen(f"{app_url}/") as response:
        policy = response.headers["Content-Security-Policy"]
        assert "frame-ancestors 'self'" in policy and "script-src 'self' 'sha256-" in policy
        assert response.headers["X-Frame-Options"] == "SAMEORIGIN"
    with watched_page(browser) as (page, _):
        page.goto(f"{app_url}/risk")
        wait_settled(page)
        chart = page.get_by_test_id("stMain").locator(".vega-embed").first
        chart.locator("canvas, svg").first.wait_for()  # Vega ran: the chart is drawn
