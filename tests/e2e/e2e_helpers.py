"""Helpers shared by the browser tests (imported as ``e2e_helpers``)."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"


def _metric_value_js(selector: str) -> str:
    return f"""([label]) => {{
    const metrics = [...document.querySelectorAll('{selector}')];
    const metric = metrics.find(m => m.innerText.trim().startsWith(label));
    return metric ? metric.querySelector('[data-testid="stMetricValue"]').innerText.trim() : null;
}}"""


#: JavaScript: the displayed value of the first metric of the page body whose label starts
#: with the given text (null while there is none).
METRIC_VALUE_JS = _metric_value_js('[data-testid="stMain"] [data-testid="stMetric"]')
#: The same over the whole page, sidebar included.
ANY_METRIC_VALUE_JS = _metric_value_js('[data-testid="stMetric"]')


def metric_value(page, label: str) -> str | None:
    """The value of the page body's metric called ``label`` (None if not shown)."""
    return page.evaluate(METRIC_VALUE_JS, [label])


def choose_option(page, box, option) -> None:
    """Open the select box ``box`` (a locator) and choose ``option`` (its name: text, or a
    compiled regular expression). A rerun may redraw the box while its list opens, closing the
    list, before the option shows or between its showing and the click (the page reruns once
    when its background work ends: dashboard/jobs.py): the box is opened again until the
    option is clicked."""
    choice = page.get_by_role("option", name=option, exact=isinstance(option, str))
    box.first.wait_for()
    for _ in range(6):
        box.first.click()
        try:
            choice.first.wait_for(timeout=10_000)
            choice.first.click(timeout=10_000)
        except PlaywrightTimeoutError:
            continue
        return
    raise AssertionError(f"the option {option!r} could not be chosen")


def open_page(page, name: str, path: str) -> None:
    """Open the page called ``name`` from the sidebar's navigation and wait until the address
    ends with ``/path`` (a click made while the page's run redraws the sidebar can be lost:
    seen once in a full run, the Risk page stayed open; the link is clicked again)."""
    link = page.get_by_test_id("stSidebarNav").get_by_text(name, exact=True)
    for _ in range(3):
        page.wait_for_function(IDLE_JS)
        link.click()
        try:
            page.wait_for_url(re.compile(f"/{re.escape(path)}(\\?.*)?$"), timeout=20_000)
            return
        except Exception:
            continue
    raise AssertionError(f"the {name} page did not open")


def load_demo(page, app_url: str, option: str) -> None:
    """Load the demo whose title matches the regular expression ``option`` on the Data page
    and wait for the confirmation."""
    page.goto(f"{app_url}/data")
    main = page.get_by_test_id("stMain")
    demos = main.get_by_test_id("stSelectbox").filter(has_text="demo")
    choose_option(page, demos, re.compile(option))
    main.get_by_role("button", name=re.compile("Use this demo")).click()
    main.get_by_text(re.compile("Loaded the demo")).first.wait_for()


def wait_for_metric(page, label: str, expected: str, timeout: float | None = None) -> None:
    page.wait_for_function(
        f"([expected]) => ({ANY_METRIC_VALUE_JS})(['{label}']) === expected",
        arg=[expected],
        timeout=timeout,
    )


#: JavaScript: whether the page's script is not running (Streamlit's running icon is gone).
IDLE_JS = "() => !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]')"
#: No run of the page and no background job of the session under way: the status widget's
#: running icon is gone and the sidebar's status line of the jobs (``dashboard.jobs
#: .show_activity``, drawn while any job runs or waits) is not shown.
SETTLED_JS = (
    "() => !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]')"
    " && !document.querySelector('.st-key-jobs-activity')"
)
#: The sidebar's status line of the session's background jobs, or null when none is shown.
ACTIVITY_JS = (
    "() => { const e = document.querySelector('.st-key-jobs-activity');"
    " return e ? e.innerText : null; }"
)


def table_uploader(page):
    """The Data page's "Upload a table" uploader, its tab opened. The tab's content is drawn
    only while it is open: it is opened until the uploader shows (a click during a rerun can be
    lost), never falling back on the page's other uploader (the recipe's)."""
    main = page.get_by_test_id("stMain")
    uploader = main.get_by_test_id("stFileUploader").filter(has_text="Upload a table").first
    for _ in range(3):
        main.get_by_role("tab", name=re.compile("Upload a file")).click()
        try:
            uploader.wait_for(timeout=20_000)
            return uploader
        except Exception:
            continue
    raise AssertionError("the Upload a file tab did not open")


def upload(page, app_url: str, name: str, content: bytes, n: int, timeout: float = 60_000) -> None:
    """Open the Data page, upload ``content`` and wait until the sidebar counts its ``n``
    records (see :func:`give_file`)."""
    page.goto(f"{app_url}/data")
    # Wait for the session's first run to finish (the sidebar counts the demo's records):
    # an upload made before the page is connected to its session can be lost on a busy machine.
    page.wait_for_function(f"() => ({ANY_METRIC_VALUE_JS})(['Records']) !== null")
    give_file(page, name, content, n, timeout)


def give_file(page, name: str, content: bytes, n: int, timeout: float = 60_000) -> None:
    """Give ``content`` to the open Data page's table uploader and wait until the sidebar counts
    its ``n`` records (``timeout`` ms for each try).

    (The "Loaded ..." notice is shown once and the uploader's list of files may be cleared by
    the next rerun, so the test waits on the record count rather than on either.) A file given
    to an uploader that a rerun then redraws is lost (seen in full runs: the uploader showed no
    file and the demo stayed loaded): the file is given again, after the page's run, until its
    records are counted."""
    for attempt in range(3):
        uploader = table_uploader(page)
        page.wait_for_function(IDLE_JS)
        uploader.locator("input[type=file]").set_input_files(
            files=[{"name": name, "mimeType": "text/csv", "buffer": content}]
        )
        try:
            wait_for_metric(page, "Records", f"{n:,}", timeout=timeout)
            return
        except Exception:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"upload-{name}-{attempt}.png"), full_page=True)
    raise AssertionError(f"the upload of {name} was not counted ({n:,} records)")


def apply_recipe_file(page, name: str, content: bytes) -> None:
    """Give a recipe or configuration file to the open Data page's recipe uploader and wait
    until the page says it was applied (given again, after the page's run, if a rerun lost
    it)."""
    main = page.get_by_test_id("stMain")
    uploader = main.get_by_test_id("stFileUploader").filter(has_text="Recipe or configuration")
    applied = main.get_by_text(re.compile(f"Applied the recipe '{re.escape(name)}'"))
    for _ in range(3):
        uploader.first.wait_for()
        page.wait_for_function(IDLE_JS)
        uploader.first.locator("input[type=file]").set_input_files(
            files=[{"name": name, "mimeType": "application/json", "buffer": content}]
        )
        try:
            applied.first.wait_for(timeout=40_000)
            return
        except Exception:
            continue
    raise AssertionError(f"the recipe {name} was not applied")


def what_was_shown(page) -> str:
    """What the page and the server said when a step failed (CI keeps only the test's output):
    the sidebar's status line of the session's jobs, the page's text, and the server's last
    log lines with every thread's stack (the server
    dumps them on SIGUSR1, see ``dashboard.hosting.allow_thread_dumps``): whether a page's run
    or a background job was still working, and where."""
    try:
        text = page.get_by_test_id("stMain").inner_text(timeout=5_000)
    except Exception as error:  # the page itself may be gone
        text = f"(unreadable: {type(error).__name__})"
    try:
        os.kill(int((ARTIFACTS / "streamlit.pid").read_text()), signal.SIGUSR1)
        time.sleep(1.0)  # the dump is written by the server's own signal handler
    except (OSError, ValueError):
        pass
    try:
        activity = page.evaluate(ACTIVITY_JS) or "(no job running or queued)"
    except Exception as error:
        activity = f"(unreadable: {type(error).__name__})"
    log = (ARTIFACTS / "streamlit.log").read_text(errors="replace").splitlines()
    return (
        "--- the session's background work:\n"
        + activity
        + "\n--- the page said:\n"
        + text[-4000:]
        + "\n--- the server logged:\n"
        + "\n".join(line for line in log[-400:] if "site-packages" not in line)
    )
