"""In a real browser: a tab closed while a background job works on a large file ends the job,
cancelled because its session ended (``dashboard.jobs.Job.check``), instead of leaving it to
take a core on behalf of nobody (issue 32).

The test waits, with a generous bound, for the server's log line of the cancelled job; it
measures no time (``bench/bench_tab_close.py`` measures how soon the server's CPU falls idle).
"""

from __future__ import annotations

import re
import time

import pytest
from e2e_helpers import (
    ANY_METRIC_VALUE_JS,
    ARTIFACTS,
    apply_recipe_file,
    give_file,
    open_page,
)

from deid_core.datasets.cohort import synthetic_cohort
from deid_core.masking import UniformNoise
from deid_core.recipe import Recipe, Roles
from deid_core.share import ReleaseSettings, configuration_json

pytestmark = pytest.mark.e2e

#: More records than the pages wait for (dashboard.jobs.WAIT_ROWS): the job runs in the
#: background while the page polls it.
N_RECORDS = 60_000
SERVER_LOG = ARTIFACTS / "streamlit.log"
CANCELLED = re.compile(r"Background job '([\w.]+)' cancelled: the session ended")


def _noise_configuration() -> bytes:
    """Uniform noise on the exposure and 500 replicates: long work on this file."""
    roles = Roles(
        quasi_identifiers=("city", "sex", "age_at_exposure", "age_at_end"),
        exposure="stomach_dose_gy",
        outcome="stomach_cancer",
    )
    recipe = Recipe(roles, (UniformNoise("stomach_dose_gy", half_width=0.5),))
    return configuration_json(recipe, context=ReleaseSettings(replicates=500)).encode()


def _logged_since(offset: int, pattern: re.Pattern[str], wait: float) -> list[str]:
    """The matches of ``pattern`` in what the server logged after ``offset`` characters,
    looking again for up to ``wait`` seconds until there is one."""
    deadline = time.monotonic() + wait
    while True:
        found = pattern.findall(SERVER_LOG.read_text(errors="replace")[offset:])
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def test_a_closed_tab_cancels_its_background_job(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(120_000)
    try:
        page.goto(f"{app_url}/data")
        page.wait_for_function(f"() => ({ANY_METRIC_VALUE_JS})(['Records']) !== null")
        data = synthetic_cohort(n=N_RECORDS, seed=7).drop(columns=["person_id"])
        give_file(page, "cohort.csv", data.to_csv(index=False).encode(), N_RECORDS, 120_000)
        apply_recipe_file(page, "noise.json", _noise_configuration())
        # The R-U map's sweep: 500 replicates at each of its points, long enough to be still
        # running when the tab closes on a loaded machine (the strip's own fit of the 500
        # replicates was not always: it could end while the Utility page was being opened).
        open_page(page, "R-U map", "ru-map")
        main = page.get_by_test_id("stMain")
        main.get_by_role("button", name="Run the sweep").first.click()
        # The sweep runs in the background (or waits for the strip's fit): the page says so.
        main.get_by_text(re.compile("Updating|Waiting for a free place")).first.wait_for()
    except Exception:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "tab-close.png"), full_page=True)
        context.close()
        raise
    offset = len(SERVER_LOG.read_text(errors="replace"))
    context.close()  # the tab, and with it the session's only connection
    # Generous: the job stops at its next check, well within a second on a quiet machine.
    assert "rumap.sweep" in _logged_since(offset, CANCELLED, wait=120), SERVER_LOG.read_text(
        errors="replace"
    )[offset:][-3000:]
