"""How long after a browser tab is closed the dashboard's server stops computing for it.

    nice python bench/bench_tab_close.py [--records 200000] [--kinds job,step,report]
        [--close-after 3]

Starts ``streamlit run app.py`` headless on a free loopback port, opens it in Debian's
chromium with Playwright, and for each kind of long work:

- ``job``: a background job on a large file: the replicates of a random mask (uniform noise
  on the exposure, 500 replicates) on the Utility page;
- ``step``: a whole-data step in the page's own run: local suppression of the large file,
  computed by the Risk page's run;
- ``report``: the report build (Export page, "Build the report"), with the same random mask;

uploads the synthetic cohort at ``--records`` records, gives it the recipe, starts the work,
waits until the server is busy and ``--close-after`` seconds more (longer: a later part of
the work, e.g. the report's replicates rather than its risk steps), closes the tab (its
browser context) and samples the server process's CPU time (``/proc/PID/stat``: all its
threads) every 0.1 s. It prints how long after the close the CPU use fell to idle (under 5%
of a core over the last 0.5 s) and the CPU seconds the server spent after the close.
A measurement, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT))

from e2e_helpers import (  # noqa: E402
    ANY_METRIC_VALUE_JS,
    apply_recipe_file,
    give_file,
    open_page,
)

from deid_core.datasets.cohort import synthetic_cohort  # noqa: E402
from deid_core.masking import LocalSuppression, UniformNoise  # noqa: E402
from deid_core.recipe import Recipe, Roles  # noqa: E402
from deid_core.share import ReleaseSettings, configuration_json  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run"]
TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_SECONDS = 0.1
#: Idle: the server used less than this share of one core over the last IDLE_WINDOW seconds
#: (an idle server with no session uses about 0.01).
IDLE_SHARE = 0.05
IDLE_WINDOW = 0.5
#: Busy (the work has started): more than this share of a core over the last IDLE_WINDOW (low:
#: on a loaded machine the server, run under nice with the bench, gets a small share).
BUSY_SHARE = 0.15
#: Longest wait for the CPU to fall after the close.
GIVE_UP_SECONDS = 180.0

ROLES = Roles(
    quasi_identifiers=("city", "sex", "age_at_exposure", "age_at_end"),
    exposure="stomach_dose_gy",
    outcome="stomach_cancer",
)


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU time of the process (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class CpuSampler:
    """The server's CPU time, sampled every SAMPLE_SECONDS by :meth:`sample`."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.samples: list[tuple[float, float]] = []

    def sample(self) -> None:
        self.samples.append((time.monotonic(), _cpu_seconds(self.pid)))

    def share(self, window: float = IDLE_WINDOW) -> float | None:
        """Cores used on average over the last ``window`` seconds (None: too few samples)."""
        if len(self.samples) < 2:
            return None
        now, cpu = self.samples[-1]
        for then, before in reversed(self.samples[:-1]):
            if now - then >= window:
                return (cpu - before) / (now - then)
        return None

    def wait(self, condition: Callable[[float], bool], give_up: float) -> float | None:
        """Sample until ``condition(share)`` holds; the time it took, or None at ``give_up``."""
        start = time.monotonic()
        self.samples.clear()
        while time.monotonic() - start < give_up:
            self.sample()
            share = self.share()
            if share is not None and condition(share):
                return time.monotonic() - start
            time.sleep(SAMPLE_SECONDS)
        return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(log: Path) -> tuple[subprocess.Popen, str]:
    """``streamlit run app.py`` headless on a free loopback port, its output in ``log``; the
    process and its address once ``/_stcore/health`` answers (at most 120 s)."""
    port = free_port()
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"),
            *("--server.address", "127.0.0.1", "--server.port", str(port)),
            *("--browser.gatherUsageStats", "false"),
        ],
        cwd=ROOT,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return process, url
        except OSError:
            time.sleep(0.5)
    process.terminate()
    raise SystemExit("the dashboard did not become healthy")


def _recipe(kind: str) -> bytes:
    if kind == "step":
        recipe = Recipe(ROLES, (), data_steps=(LocalSuppression(k=5),))
    else:
        recipe = Recipe(ROLES, (UniformNoise("stomach_dose_gy", half_width=0.5),))
    return configuration_json(recipe, context=ReleaseSettings(replicates=500)).encode()


def _start_work(kind: str, page, url: str, data: bytes, n: int) -> None:
    """Upload the data, give the recipe and start the kind's long work."""
    page.goto(f"{url}/data")
    page.wait_for_function(f"() => ({ANY_METRIC_VALUE_JS})(['Records']) !== null")
    give_file(page, "cohort.csv", data, n, timeout=180_000)
    apply_recipe_file(page, f"{kind}.json", _recipe(kind))
    main = page.get_by_test_id("stMain")
    if kind == "job":
        open_page(page, "Utility", "utility")
    elif kind == "step":
        open_page(page, "Risk", "risk")
    else:
        open_page(page, "Export", "export")
        main.get_by_role("button", name="Build the report").click()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--kinds", default="job,step,report")
    parser.add_argument("--close-after", type=float, default=3.0)
    options = parser.parse_args()
    from playwright.sync_api import sync_playwright

    frame = synthetic_cohort(n=options.records, seed=7).drop(columns=["person_id"])
    data = frame.to_csv(index=False).encode()
    log = Path(tempfile.mkdtemp(prefix="bench-tab-close-")) / "streamlit.log"
    server, url = start_server(log)
    sampler = CpuSampler(server.pid)
    print(f"server {server.pid} at {url}, log {log}; load average {os.getloadavg()}")
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for kind in options.kinds.split(","):
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                page = context.new_page()
                page.set_default_timeout(180_000)
                _start_work(kind, page, url, data, options.records)
                busy = sampler.wait(lambda share: share > BUSY_SHARE, 120)
                # Some more seconds of work, so that it is under way in earnest.
                sampler.samples.clear()
                for _ in range(max(1, round(options.close_after / SAMPLE_SECONDS))):
                    sampler.sample()
                    time.sleep(SAMPLE_SECONDS)
                working = sampler.share(window=2.5) or 0.0
                before = _cpu_seconds(server.pid)
                context.close()
                closed = time.monotonic()
                idle = sampler.wait(lambda share: share < IDLE_SHARE, GIVE_UP_SECONDS)
                after = _cpu_seconds(server.pid) - before
                # The idle window itself is part of the wait: the fall happened at its start.
                fell = None if idle is None else max(0.0, idle - IDLE_WINDOW)
                log_lines = [
                    line.strip()
                    for line in log.read_text(errors="replace").splitlines()
                    if re.search("cancelled|session ended", line)
                ]
                print(
                    f"{kind}: busy after {busy if busy is None else round(busy, 1)} s, "
                    f"{working:.2f} cores in the 2.5 s before the close; CPU fell to idle "
                    + (f"{fell:.1f} s after the close" if fell is not None else "never (gave up)")
                    + f"; {after:.1f} CPU s spent after the close "
                    f"(wall {time.monotonic() - closed:.1f} s); load {os.getloadavg()[0]:.1f}"
                )
                for line in log_lines[-3:]:
                    print(f"    log: {line}")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
