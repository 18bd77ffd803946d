#!/usr/bin/env python
"""Whether a demo session stays live beside two sessions doing heavy work (issue 31, item 4).

    nice .venv/bin/python bench/bench_isolation.py [--records 200000] [--replicates 500]

A measurement, not a test: it prints figures and asserts nothing. It starts the dashboard as
Streamlit Community Cloud does (``streamlit run app.py``, headless, on a free loopback port),
drives real browser sessions with Playwright and Debian's chromium (``/usr/bin/chromium``),
and samples the server's health check (``/_stcore/health``) every 0.2 s in a thread of its own
(one check at a time: a slow answer delays the next sample):

1. two heavy sessions, each a browser context of its own: the synthetic cohort at
   ``--records`` records uploaded on the Data page, a recipe with uniform noise on the exposure
   and ``--replicates`` random replicates applied, then

   - the first opens the Utility page: the model fitted to every replicate (a background job);
   - the second opens the R-U map and clicks "Run the sweep": each point of the sweep with its
     replicates (a background job, queued behind the first when the server allows one heavy
     job at a time);

2. once both are under way (``--settle`` seconds after the second click), a third context
   opens the app's root (the Mask page, on the demo cohort): the seconds until the page's
   "Max risk" and "Analysis potential" metrics show figures (its first figures);
3. the health check's latency from the first heavy click to the demo's figures: median,
   maximum and how many checks took over 1 s;
4. memory: the server's resident memory (``VmRSS``) with the three sessions, then every
   context closed and ``--after-close`` seconds later (each figure the largest of a few
   samples). Streamlit keeps a closed session's state for ``server.disconnectedSessionTTL``
   seconds (120 by default: a reconnection finds it), and drops the expired ones only when
   another session's state is stored, i.e. when another tab closes: after the last wait, a
   visitor opens a (damaged) release link and leaves, and the memory is read again
   ``--after-visitor`` seconds later.

The load (1-minute load average, CPU count) is printed at the start and at each figure.
Linux only.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from bench_hosted_memory import settled  # noqa: E402
from bench_tab_close import start_server  # noqa: E402
from e2e_helpers import (  # noqa: E402
    IDLE_JS,
    METRIC_VALUE_JS,
    apply_recipe_file,
    open_page,
    upload,
)

from deid_core.datasets.cohort import synthetic_cohort  # noqa: E402
from deid_core.masking import UniformNoise  # noqa: E402
from deid_core.recipe import Recipe, Roles  # noqa: E402
from deid_core.share import ReleaseSettings, configuration_json  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run"]
HEALTH_EVERY = 0.2
ROLES = Roles(
    quasi_identifiers=("city", "sex", "age_at_exposure", "age_at_end"),
    exposure="stomach_dose_gy",
    outcome="stomach_cancer",
)
#: JavaScript: whether the page body's "Max risk" and "Analysis potential" metrics show figures.
FIGURES_JS = (
    f"() => {{ const value = {METRIC_VALUE_JS};"
    " const risk = value(['Max risk']); const ap = value(['Analysis potential']);"
    " return risk !== null && /\\d/.test(risk) && ap !== null && /\\d/.test(ap); }"
)


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"


class HealthSampler(threading.Thread):
    """The health check's latency, sampled every :data:`HEALTH_EVERY` seconds until stopped."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = f"{url}/_stcore/health"
        self.latencies: list[float] = []
        self.failures = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            start = time.monotonic()
            try:
                with urllib.request.urlopen(self.url, timeout=60) as response:
                    response.read()
                self.latencies.append(time.monotonic() - start)
            except OSError:
                self.failures += 1
            self._halt.wait(max(0.0, HEALTH_EVERY - (time.monotonic() - start)))

    def stop(self) -> None:
        self._halt.set()
        self.join()

    def summary(self) -> str:
        if not self.latencies:
            return f"no health check answered ({self.failures} failed)"
        slow = sum(latency > 1.0 for latency in self.latencies)
        return (
            f"{len(self.latencies)} checks: median {statistics.median(self.latencies):.3f} s, "
            f"max {max(self.latencies):.2f} s, {slow} over 1 s, {self.failures} failed"
        )


def heavy_session(browser, url: str, data: bytes, n: int, recipe: bytes):
    """A browser context with the large file and the random recipe, on the Data page."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(600_000)
    upload(page, url, "cohort.csv", data, n, timeout=300_000)
    apply_recipe_file(page, "noise.json", recipe)
    return context, page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--replicates", type=int, default=500)
    parser.add_argument("--settle", type=float, default=10.0)
    parser.add_argument("--after-close", type=float, nargs="+", default=[15.0, 150.0])
    parser.add_argument("--after-visitor", type=float, default=10.0)
    parser.add_argument("--give-up", type=float, default=600.0)
    options = parser.parse_args()
    from playwright.sync_api import sync_playwright

    frame = synthetic_cohort(n=options.records, seed=7).drop(columns=["person_id"])
    data = frame.to_csv(index=False).encode()
    recipe = configuration_json(
        Recipe(ROLES, (UniformNoise("stomach_dose_gy", half_width=0.5),)),
        context=ReleaseSettings(replicates=options.replicates),
    ).encode()
    log = Path(tempfile.mkdtemp(prefix="bench-isolation-")) / "streamlit.log"
    server, url = start_server(log)
    print(f"server {server.pid} at {url}, log {log}; {load()}", flush=True)
    health = HealthSampler(url)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            first, first_page = heavy_session(browser, url, data, options.records, recipe)
            second, second_page = heavy_session(browser, url, data, options.records, recipe)
            print(f"two sessions hold the {options.records:,}-record file; {load()}", flush=True)
            health.start()
            heavy_start = time.monotonic()
            open_page(first_page, "Utility", "utility")
            open_page(second_page, "R-U map", "ru-map")
            main = second_page.get_by_test_id("stMain")
            main.get_by_role("button", name="Run the sweep").first.click()
            main.get_by_text(re.compile("Updating|Waiting for a free place")).first.wait_for()
            print(
                f"heavy work started ({time.monotonic() - heavy_start:.1f} s for both pages); "
                f"{load()}",
                flush=True,
            )
            time.sleep(options.settle)
            demo = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = demo.new_page()
            opened = time.monotonic()
            try:
                page.goto(url, timeout=options.give_up * 1000)
                loaded = f"page loaded after {time.monotonic() - opened:.1f} s"
                left = options.give_up - (time.monotonic() - opened)
                page.wait_for_function(FIGURES_JS, timeout=max(left, 1.0) * 1000)
                figures = f"{time.monotonic() - opened:.1f} s ({loaded})"
            except Exception:
                figures = f"none after {options.give_up:g} s"
            health.stop()
            print(f"demo session's first figures (Max risk, Analysis potential): {figures}")
            print(f"health check, first heavy click to the demo's figures: {health.summary()}")
            print(f"{load()}", flush=True)
            rss, peak = settled(server.pid)
            print(f"memory with the three sessions: {rss:.0f} MB (peak so far {peak:.0f} MB)")
            page.wait_for_function(IDLE_JS)
            for context in (first, second, demo):
                context.close()
            closed = time.monotonic()
            for after in sorted(options.after_close):
                time.sleep(max(0.0, after - (time.monotonic() - closed)))
                rss, peak = settled(server.pid)
                print(
                    f"every tab closed, {after:g} s later: {rss:.0f} MB (peak {peak:.0f} MB); "
                    f"{load()}",
                    flush=True,
                )
            visitor = browser.new_context()
            page = visitor.new_page()
            page.goto(f"{url}/?release=damaged")
            page.get_by_text("could not be read").first.wait_for(timeout=120_000)
            visitor.close()
            time.sleep(options.after_visitor)
            rss, peak = settled(server.pid)
            print(
                f"a visitor came and left, {options.after_visitor:g} s later: {rss:.0f} MB; "
                f"{load()}",
                flush=True,
            )
            browser.close()
    finally:
        if health.is_alive():
            health.stop()
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
