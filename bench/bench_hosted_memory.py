#!/usr/bin/env python
"""The memory of a hosted copy: the server's resident memory (RSS) with no session, one session
on the demo, and concurrent recipients on a release link.

A script, not a test: it prints figures and never fails on them. It starts the dashboard as
Streamlit Community Cloud does (``streamlit run app.py``, headless, on a free loopback port),
and drives real browser sessions with Playwright and Debian's chromium (``/usr/bin/chromium``):

1. no session: the server idle after start-up;
2. one session on the demo: the app's root opened, until the sidebar shows its key figures
   (the first run loads the libraries and the demo cohort);
3. recipients on a release link, added one by one beside the demo session (each a browser
   context of its own): the link opened (the collaborator's view), a masked file of ``--rows``
   rows loaded, until the page says "This is the release described" and shows the recipient's
   model estimate. The figures are printed after each count in ``--sessions``;
4. every browser context closed: what the server keeps ``--after-close`` seconds later.

The release is made in this process, as the Export page makes it: a synthetic identifiable
visits file (``--rows`` admissions of about ``rows / 2`` patients: name, medical record number,
date of birth, ZIP code, sex, admission date, length of stay, readmission), masked by removing
the name and date of birth, the record number released as pseudonyms, ZIP codes to 3 digits and
admission dates to the year; the report, the CSV and the link
(:func:`deid_core.release_summary.summarise_release`).

RSS is read from ``/proc/PID/status`` (``VmRSS``, and ``VmHWM``, the peak so far); each figure
is the largest of a few samples taken once the pages are idle. Linux only.

Run from the repository root::

    nice .venv/bin/python bench/bench_hosted_memory.py                     # 3 and 10 sessions
    nice .venv/bin/python bench/bench_hosted_memory.py --sessions 3 --rows 2000   # quick
"""

from __future__ import annotations

import argparse
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import harness  # puts the repository on sys.path
import numpy as np
import pandas as pd

from deid_core.io.export import export_release
from deid_core.masking import DateReduce, RandomPseudonym, ZipToThreeDigits
from deid_core.recipe import Recipe, Roles
from deid_core.release_summary import RELEASE_PARAM, encode_release, summarise_release
from deid_core.report import build_report
from deid_core.report.provenance import FileFingerprint
from deid_core.risk.context import ReleaseContext
from deid_core.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
IDLE_JS = "() => !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]')"
RECIPE = Recipe(
    Roles(
        quasi_identifiers=("zip", "sex", "admission_date"),
        direct_identifiers=("name", "date_of_birth"),
        record_id="mrn",
        exposure="length_of_stay",
        outcome="readmitted",
        covariates=("sex",),
    ),
    (
        RandomPseudonym("mrn", released_as="study_id"),
        ZipToThreeDigits("zip"),
        DateReduce("admission_date", to="year"),
    ),
)


def visits(rows: int, seed: int = 20261128) -> pd.DataFrame:
    """``rows`` admissions of about ``rows / 2`` patients (see the module docstring)."""
    rng = np.random.default_rng(seed)
    n_people = max(1, rows // 2)
    person = np.sort(rng.integers(0, n_people, rows))
    dob = pd.Timestamp("1930-01-01") + pd.to_timedelta(rng.integers(0, 25_000, n_people), "D")
    zips = rng.choice([f"0{p}{d:02d}" for p in range(10, 40) for d in range(0, 100, 7)], n_people)
    stay = rng.geometric(0.25, rows)
    logit = -2.0 + 0.12 * (stay - 4)
    return pd.DataFrame(
        {
            "name": [f"Patient {i}" for i in person],
            "mrn": [f"MRN{100000 + i}" for i in person],
            "date_of_birth": dob.strftime("%Y-%m-%d").to_numpy()[person],
            "zip": zips[person],
            "sex": rng.choice(["F", "M"], n_people)[person],
            "admission_date": (
                pd.Timestamp("2018-01-01") + pd.to_timedelta(rng.integers(0, 1800, rows), "D")
            ).strftime("%Y-%m-%d"),
            "length_of_stay": stay,
            "readmitted": (rng.random(rows) < 1 / (1 + np.exp(-logit))).astype(int),
        }
    )


def make_release(rows: int) -> tuple[str, bytes]:
    """The release link's parameter and the masked CSV, as the Export page makes them."""
    frame = visits(rows)
    workspace = Workspace(frame, name="visits")
    release = workspace.release(RECIPE)
    export = export_release(release.frame, "csv", shuffle_seed=1)
    report = build_report(
        workspace,
        RECIPE,
        dataset_name="visits.csv",
        synthetic=True,
        context=ReleaseContext(public=True, min_cell_size=5),
        n_replicates=2,
        released_file=FileFingerprint.of(export.data, "visits_masked.csv"),
    )
    summary = summarise_release(
        report,
        RECIPE,
        frame.columns,
        release.frame.columns,
        export.columns,
        export.n_rows,
        export.format.label,
    )
    return encode_release(summary), export.data


def memory(pid: int) -> tuple[float, float]:
    """(RSS, peak RSS) of process ``pid`` in MB, from ``/proc/PID/status``."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return values["VmRSS"], values["VmHWM"]


def settled(pid: int, samples: int = 4, every: float = 0.5) -> tuple[float, float]:
    """The largest RSS over a few samples, and the peak so far."""
    found = []
    for _ in range(samples):
        found.append(memory(pid))
        time.sleep(every)
    return max(r for r, _ in found), max(p for _, p in found)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    command = [
        sys.executable,
        *("-m", "streamlit", "run", "app.py"),
        *("--server.headless", "true", "--server.port", str(port)),
        *("--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"),
    ]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the dashboard exited before it became healthy")
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{port}/_stcore/health", timeout=2
            ) as response:
                if response.status == 200:
                    return process
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise TimeoutError("the dashboard did not answer its health check")


def line(label: str, figures: tuple[float, float]) -> None:
    print(f"{label:<52}{figures[0]:>9.0f} MB   (peak so far {figures[1]:.0f} MB)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000, help="rows of the masked file")
    parser.add_argument(
        "--sessions", type=int, nargs="+", default=[3, 10], help="recipient counts to report"
    )
    parser.add_argument("--after-close", type=float, default=15.0, help="seconds to wait")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    print(harness.machine(np, pd))
    param, masked = make_release(args.rows)
    link_query = f"?{RELEASE_PARAM}={param}"
    print(f"release link: {len(param):,} characters; masked file {len(masked):,} bytes")
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    server = start_server(port)
    try:
        time.sleep(3)
        line("no session", settled(server.pid))
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=["--headless=new", "--no-sandbox"]
            )
            contexts = []
            demo = browser.new_context(viewport={"width": 1400, "height": 1000})
            contexts.append(demo)
            page = demo.new_page()
            page.set_default_timeout(300_000)
            page.goto(url)
            page.get_by_test_id("stSidebar").get_by_test_id("stMetric").first.wait_for()
            page.wait_for_function(IDLE_JS)
            line("one session on the demo", settled(server.pid))
            for count in range(1, max(args.sessions) + 1):
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                contexts.append(context)
                other = context.new_page()
                other.set_default_timeout(300_000)
                other.goto(url + link_query)
                view = other.get_by_test_id("stMain")
                uploader = view.get_by_test_id("stFileUploader").filter(has_text="The masked file")
                uploader.wait_for()
                other.wait_for_function(IDLE_JS)
                uploader.locator("input[type=file]").set_input_files(
                    files=[{"name": "masked.csv", "mimeType": "text/csv", "buffer": masked}]
                )
                view.get_by_text("This is the release described").first.wait_for()
                view.get_by_text(re.compile(r"per unit of .*\(95% CI\): \d")).first.wait_for()
                other.wait_for_function(IDLE_JS)
                if count in args.sessions:
                    line(
                        f"demo + {count} recipient(s), {args.rows:,}-row file", settled(server.pid)
                    )
            for context in contexts:
                context.close()
            browser.close()
        time.sleep(args.after_close)
        line(f"every tab closed, {args.after_close:g} s later", settled(server.pid))
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    main()
