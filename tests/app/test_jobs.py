"""Background jobs (dashboard.jobs): progress, partial results, cancellation within a second,
the user's stop, the per-server queue; and the Mask page on the background path."""

import threading
import time

import pytest
from app_helpers import assert_clean, metric_value, texts

from dashboard import jobs
from deid_core.datasets import load_demo
from deid_core.errors import Cancelled
from deid_core.masking import UniformNoise
from deid_core.recipe import Recipe, Roles
from deid_core.workspace import Workspace


def counting(steps: int = 200, pause: float = 0.02, started: threading.Event | None = None):
    """Work that counts to ``steps``, reporting progress and the count so far at each step."""

    def work(reporter: jobs.Reporter) -> int:
        if started is not None:
            started.set()
        for i in range(1, steps + 1):
            time.sleep(pause)
            reporter.progress(i, steps)
            reporter.partial(i)
        return steps

    return work


def test_a_job_reports_progress_and_partial_results_then_its_result():
    board = jobs.JobBoard()
    job = board.submit("slot", "k", "Counting", counting(10, 0.01), heavy=False)
    assert job.wait(5)
    assert job.state == jobs.DONE and job.result == 10
    assert (job.done, job.total, job.partial) == (10, 10, 10)
    assert board.submit("slot", "k", "Counting", counting(), heavy=False) is job  # same key


def test_a_newer_value_cancels_the_stale_job_within_a_second():
    board = jobs.JobBoard()
    started = threading.Event()
    old = board.submit("slot", 1, "Counting", counting(started=started), heavy=False)
    assert started.wait(5)
    cancelled_at = time.monotonic()
    new = board.submit("slot", 2, "Counting", counting(5, 0.01), heavy=False)
    assert old.wait(1.0), "the stale job did not stop within a second"
    assert old.finished - cancelled_at < 1.0
    assert old.state == jobs.CANCELLED and old.reason == "a newer setting replaced it"
    assert new.wait(5) and new.result == 5
    assert board.current("slot") is new


def test_the_last_result_stays_while_a_newer_job_runs():
    board = jobs.JobBoard()
    first = board.submit("slot", 1, "Counting", counting(3, 0.001), heavy=False)
    assert first.wait(5)
    second = board.submit("slot", 2, "Counting", counting(), heavy=False)
    assert board.previous("slot") is first and first.result == 3
    second.cancel("test over")
    assert second.wait(5)


def test_stopping_keeps_the_partial_result():
    board = jobs.JobBoard()
    job = board.submit("slot", "k", "Counting", counting(), heavy=False)
    deadline = time.monotonic() + 5
    while job.partial is None or job.partial < 3:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    job.stop()
    assert job.wait(1.0)
    assert job.state == jobs.STOPPED and job.has_result
    assert 3 <= job.result < 200


def test_active_jobs_by_slot_and_a_slot_run_afresh():
    board = jobs.JobBoard()
    search = board.submit("search", "k", "Counting", counting(), heavy=False)
    done = board.submit("sweep", "k", "Counting", counting(2, 0.001), heavy=False)
    assert done.wait(5)
    assert board.active() == [search] == board.active(("search", "sweep"))
    assert board.active(("sweep",)) == []  # a fragment of the sweep alone need not poll
    deadline = time.monotonic() + 5
    while search.partial is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    search.stop()
    assert search.wait(1.0) and search.state == jobs.STOPPED
    assert board.has("search", "k")  # a stopped job keeps its slot and its result...
    board.cancel("search", "searched again")
    assert board.current("search") is None and not board.has("search", "k")  # ...until rerun
    again = board.submit("search", "k", "Counting", counting(3, 0.001), heavy=False)
    assert again is not search and again.wait(5) and again.result == 3


def test_another_page_cancels_its_jobs_but_not_the_sessions():
    board = jobs.JobBoard()
    on_page = board.submit("mask.sweep", 1, "Sweeping", counting(), heavy=False, page="Mask")
    everywhere = board.submit("utility", 1, "Fitting", counting(), heavy=False)
    board.leave_pages_except("Risk")
    assert on_page.wait(1.0) and on_page.state == jobs.CANCELLED
    assert everywhere.active
    board.cancel_all("test over")
    assert everywhere.wait(1.0) and everywhere.state == jobs.CANCELLED


def test_the_end_of_the_session_cancels_its_jobs(monkeypatch):
    alive = {"session": True}
    monkeypatch.setattr(jobs, "_session_alive", lambda session_id: alive["session"])
    job = jobs.JobBoard().submit("slot", "k", "Counting", counting(), heavy=False)
    time.sleep(0.1)
    alive["session"] = False
    assert job.wait(1.0)
    assert job.state == jobs.CANCELLED and job.reason == "the session ended"


def test_a_failing_job_keeps_its_error():
    def work(reporter):
        raise ValueError("boom")

    job = jobs.JobBoard().submit("slot", "k", "Failing", work, heavy=False)
    assert job.wait(5)
    assert job.state == jobs.FAILED and isinstance(job.error, ValueError)


def test_heavy_jobs_beyond_the_limit_wait_in_a_queue(monkeypatch):
    queue = jobs.HeavyJobQueue(1)
    monkeypatch.setattr(jobs, "HEAVY_QUEUE", queue)
    started = threading.Event()
    board = jobs.JobBoard()
    first = board.submit("a", 1, "First", counting(started=started), heavy=True)
    assert started.wait(5)
    second = board.submit("b", 1, "Second", counting(3, 0.001), heavy=True)
    third = board.submit("c", 1, "Third", counting(3, 0.001), heavy=True)
    time.sleep(0.3)
    assert second.state == jobs.QUEUED and queue.position(second) == 1
    assert queue.position(third) == 2
    assert "number 2 in the queue" in jobs.describe(third)
    third.cancel("not wanted any more")  # a queued job leaves the queue when stale
    assert third.wait(1.0) and third.state == jobs.CANCELLED
    assert queue.position(second) == 1
    first.cancel("test over")
    assert second.wait(5) and second.result == 3
    assert queue.running == 0


def test_replicates_stop_between_chunks_and_nothing_is_cached():
    frame = load_demo("cohort")
    roles = Roles(
        quasi_identifiers=("city", "sex"), exposure="stomach_dose_gy", outcome="stomach_cancer"
    )
    recipe = Recipe(roles, (UniformNoise("stomach_dose_gy", half_width=0.1, seed=3),))
    workspace = Workspace(frame)
    seen = []

    def partial(result):
        seen.append(result.replicates.n_replicates)
        if len(seen) == 2:
            raise Cancelled("enough")

    with pytest.raises(Cancelled):
        workspace.utility(recipe, 200, partial=partial)
    assert not workspace.utility_is_cached(recipe, 200)
    summary = workspace.utility(recipe, 200).replicates
    assert seen[0] < seen[1] < summary.n_replicates == 200
    assert summary.estimate_mc_error is not None and summary.analysis_potential_mc_error > 0


# ---------------------------------------------------------------------------- the Mask page
def test_on_a_large_file_the_mask_page_shows_figures_at_once_and_fits_in_the_background(
    app, monkeypatch
):
    monkeypatch.setattr(jobs, "WAIT_ROWS", 0)  # the demo is treated as a large file
    before = metric_value(app.main, "Average risk")
    app.selectbox(key=next(k for k in keys(app) if k.endswith("stomach_dose_gy:method"))).set_value(
        "uniform_noise"
    ).run()
    assert_clean(app)
    # The risk figures are there at once; the analysis potential is marked as updating.
    assert metric_value(app.main, "Average risk") != before
    assert metric_value(app.main, "Analysis potential")
    board = app.session_state[jobs.KEY_JOBS]
    assert board.wait_all(60)
    app.run()
    assert_clean(app)
    ap = metric_value(app.main, "Analysis potential")
    assert ap not in ("computing...", "unavailable") and 0 < float(ap) < 1.5
    assert not any("Updating" in text for text in texts(app.caption))


def keys(app) -> list[str]:
    return [w.key for w in app.selectbox if w.key]


def test_a_new_data_set_or_another_page_cancels_the_sessions_jobs(app):
    board = app.session_state[jobs.KEY_JOBS]
    everywhere = board.submit("slot", "k", "Counting", counting(), heavy=False)
    on_mask = board.submit("mask.slot", "k", "Counting", counting(), heavy=False, page="Mask")
    app.switch_page("app_pages/data.py").run()
    assert on_mask.wait(1.0) and on_mask.state == jobs.CANCELLED
    assert everywhere.active
    next(b for b in app.button if b.label == "Reload this demo").click().run()
    assert_clean(app)
    assert everywhere.wait(1.0) and everywhere.state == jobs.CANCELLED


def test_a_value_already_known_cancels_the_slots_stale_job():
    board = jobs.JobBoard()
    running = board.submit("utility", "noise", "Fitting", counting(), heavy=False)
    board.cached("utility", "noise")  # the same value: kept
    assert running.active
    board.cached("utility", "unmasked")
    assert running.wait(1.0) and running.state == jobs.CANCELLED


def test_a_whole_data_step_stops_from_inside_when_its_session_ends(monkeypatch):
    """The job's work calls no progress callback: the core's own check (set by the job runner)
    stops the search of local suppression, on data within its bound, within a second."""
    import numpy as np
    import pandas as pd

    from deid_core import bounds
    from deid_core.masking import LocalSuppression
    from deid_core.masking.suppression import DistinctKeys, search_work

    rng = np.random.default_rng(1)
    frame = pd.DataFrame({c: rng.integers(0, 40, 12_000) for c in ("p", "q", "r")})
    keys = DistinctKeys.of(frame, ["p", "q", "r"], {})
    violators = np.flatnonzero(keys.compatible_counts() < 3)
    assert search_work(keys.weight, violators, 3) < bounds.SUPPRESSION_WORK.limit
    alive = {"session": True}
    monkeypatch.setattr(jobs, "_session_alive", lambda session_id: alive["session"])
    started = threading.Event()

    def work(reporter: jobs.Reporter):
        started.set()
        return LocalSuppression(k=3).apply(frame, ["p", "q", "r"])

    job = jobs.JobBoard().submit("slot", "k", "Suppressing", work, heavy=False)
    assert started.wait(5)
    time.sleep(0.3)
    assert job.active, "the search ended before the test could cancel it"
    alive["session"] = False
    ended_at = time.monotonic()
    assert job.wait(1.0), "the search did not stop within a second"
    assert job.finished - ended_at < 1.0
    assert job.state == jobs.CANCELLED and job.reason == "the session ended"


def test_a_page_run_stops_when_its_tab_is_closed(monkeypatch):
    """app.py sets jobs.session_check() around the page's run: the check passes while the
    session is alive and raises Cancelled once it ended."""
    alive = {"session": True}
    monkeypatch.setattr(jobs, "_session_alive", lambda session_id: alive["session"])
    check = jobs.session_check()
    check()
    alive["session"] = False
    with pytest.raises(Cancelled, match="the session ended"):
        check()


def test_a_page_never_shows_a_cancellation_as_an_error(caplog):
    """A page shows what failed with state.user_message inside ``except Exception``: a
    cancellation (the tab was closed) passes through it, so the page's run ends there instead
    of going on to its next section's work, and nothing is logged as an unexpected error."""
    from dashboard import state
    from deid_core.errors import DataError

    with pytest.raises(Cancelled, match="the session ended"):
        state.user_message(Cancelled("the session ended"))
    assert "Unexpected" not in caplog.text
    assert state.user_message(DataError("no such column")) == "no such column"
