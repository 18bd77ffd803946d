"""Start the dashboard headless on a free loopback port and give the tests a browser page.

Playwright drives Debian's chromium (``/usr/bin/chromium``, installed by scripts/test.sh);
``playwright install`` cannot download a browser here. Without chromium the tests are skipped
locally, but fail in CI (``CI`` set), where a skip would hide a missing install step.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest
from e2e_helpers import what_was_shown

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "artifacts"
#: The test server's sweep of made downloads (the tool's default is 20 s).
DOWNLOAD_CLEANUP_SECONDS = 5
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, process: subprocess.Popen, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the dashboard exited before it became healthy")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError("the dashboard did not answer /_stcore/health in time")


@contextlib.contextmanager
def running_dashboard(
    entrypoint: str, log: IO[str] | int = subprocess.DEVNULL, pid_file: Path | None = None
) -> Iterator[str]:
    """``streamlit run ENTRYPOINT`` headless on a free loopback port; its URL once healthy
    (its process id written to ``pid_file``, if given)."""
    port = _free_port()
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "streamlit", "run", entrypoint, "--server.headless", "true"),
            *("--server.address", "127.0.0.1", "--server.port", str(port)),
            *("--browser.gatherUsageStats", "false"),
        ],
        cwd=ROOT,
        env={
            **os.environ,
            "DEID_THREAD_DUMPS": "1",  # what_was_shown asks for the stacks
            # made downloads are swept every 5 s, not 20 s: the download test waits 1-2 sweeps
            "DEID_DOWNLOAD_CLEANUP_SECONDS": str(DOWNLOAD_CLEANUP_SECONDS),
        },
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process)
        if pid_file is not None:
            pid_file.write_text(str(process.pid))
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="session")
def download_cleanup_seconds() -> float:
    """The period of the test server's sweep of made downloads."""
    return DOWNLOAD_CLEANUP_SECONDS


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail("/usr/bin/chromium is missing: scripts/test.sh should have installed it")
        pytest.skip("Debian's chromium is not installed (bash scripts/test.sh installs it)")
    ARTIFACTS.mkdir(exist_ok=True)
    with (
        (ARTIFACTS / "streamlit.log").open("w") as log,
        running_dashboard("app.py", log, ARTIFACTS / "streamlit.pid") as url,
    ):
        yield url


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A browser test that failed reports what its page showed, the server's last log lines and
    every server thread's stack (:func:`e2e_helpers.what_was_shown`): CI keeps only the output,
    and a step that waited in vain says nothing of why."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    funcargs = getattr(item, "funcargs", {})
    pages = [funcargs["page"]] if "page" in funcargs else list(funcargs.get("two_pages", []))
    for number, page in enumerate(pages, start=1):
        report.sections.append((f"what page {number} and the server showed", what_was_shown(page)))


@pytest.fixture
def page(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    # Generous: a shared 2-core machine can be several times slower than usual (nothing is
    # timed; a wait only fails when the page never shows what it should).
    page.set_default_timeout(120_000)
    ARTIFACTS.mkdir(exist_ok=True)
    with (ARTIFACTS / "browser-events.log").open("a") as events:
        name = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
        page.on("crash", lambda _: events.write(f"{name}: the page crashed\n"))
        page.on("pageerror", lambda error: events.write(f"{name}: page error: {error}\n"))
        page.on("close", lambda _: events.flush())
        yield page
        context.close()
