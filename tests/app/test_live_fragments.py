"""The live figures under the orders of events a busy machine produces, made deterministic.

Two faults left a live figure missing without a word (issue 28):

1. **Delta paths.** Streamlit, when a fragment's run starts, drops that fragment's messages
   not yet sent to the browser (``AppSession._clear_queue(fragment_ids_this_run)``, i.e.
   ``ForwardMsgQueue.clear``). A ``run_every`` poll queued behind the page's own run starts
   right after it, so on a busy server the page's run may not have been sent yet: its
   fragment messages are dropped, and every later element of the page in the same parent
   container then points one place past the end (the browser's "Bad delta path index",
   after which that element is never drawn). Here the page's run is recorded under AppTest,
   the drop is done by Streamlit's own ``ForwardMsgQueue.clear`` exactly as the session does
   it, and the result is applied to a model of the browser's element tree with the
   browser's rule (an index at most the number of children of its parent).
2. **Job ordering.** A job told to cancel keeps running until its next progress call. If
   the page asked for the same figure again in between (a setting moved away and back), the
   board handed back the doomed job, which then ended cancelled: nothing recomputed the
   figure of the current recipe and nothing said so. Here the job's work waits on events
   the test sets, so the cancellation lands exactly between two progress calls.
"""

from __future__ import annotations

import threading
import time

import pytest
from app_helpers import APP, TIMEOUT, assert_clean, metric_value, texts
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.forward_msg_queue import ForwardMsgQueue
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1 import app_test as app_test_module
from streamlit.testing.v1.local_script_runner import LocalScriptRunner

from dashboard import jobs

WAIT = 30.0  # generous bound of every wait on a thread (nothing is timed)


# ---------------------------------------------------------------------------- controllable work
class Gated:
    """Work that reports progress ``steps`` times and waits, before each call and before it
    returns, until the test lets it go: the test decides what happens between two calls."""

    def __init__(self, steps: int = 3, result: object = "done") -> None:
        self.steps, self.result = steps, result
        self.at = threading.Semaphore(0)  # released by the work when it reaches a gate
        self.go = threading.Semaphore(0)  # released by the test to pass one gate
        self.reached = 0

    def __call__(self, reporter: jobs.Reporter) -> object:
        for i in range(1, self.steps + 1):
            self._gate()
            reporter.progress(i, self.steps)
        self._gate()  # after the last progress call, before the end
        return self.result

    def _gate(self) -> None:
        self.reached += 1
        self.at.release()
        assert self.go.acquire(timeout=WAIT), "the test never let the work go on"

    def wait_gate(self) -> None:
        assert self.at.acquire(timeout=WAIT), "the work never reached its next gate"

    def step(self) -> None:
        """Let the work pass one gate and wait until it reaches the next one."""
        self.go.release()
        self.wait_gate()

    def finish(self) -> None:
        for _ in range(self.steps + 2):
            self.go.release()


def test_a_cancellation_between_the_last_progress_and_the_end_never_loses_the_figure():
    """The figure's key moved away (the job is cancelled) and back before the job saw it:
    the board must start a fresh job, not hand back the doomed one."""
    board = jobs.JobBoard()
    work = Gated(steps=2)
    first = board.submit("utility", "noise", "Fitting", work, heavy=False)
    work.wait_gate()
    work.step()  # progress 1 reported; the work goes on
    board.cached("utility", "unmasked")  # "No masking" chosen: the job is stale
    again = Gated(steps=1, result="fresh")
    second = board.submit("utility", "noise", "Fitting", again, heavy=False)  # noise again
    work.finish()  # the first job's next progress call sees the cancellation
    assert first.wait(WAIT) and first.state == jobs.CANCELLED
    again.finish()
    assert second is not first, "the board handed back a job that was being cancelled"
    assert second.wait(WAIT) and second.state == jobs.DONE and second.result == "fresh"
    assert board.has("utility", "noise")


def test_a_cancelled_job_past_its_last_progress_call_keeps_its_result():
    """A cancellation that arrives after the last progress call cannot stop the work: the job
    ends done, and a later request for the same key uses it."""
    board = jobs.JobBoard()
    work = Gated(steps=1)
    job = board.submit("utility", "noise", "Fitting", work, heavy=False)
    work.wait_gate()
    work.step()  # past the one progress call, waiting before the end
    board.cached("utility", "unmasked")
    work.finish()
    assert job.wait(WAIT)
    assert job.state == jobs.DONE and job.result == "done"
    assert board.has("utility", "noise")
    assert board.submit("utility", "noise", "Fitting", Gated(), heavy=False) is job


@pytest.mark.parametrize("when", ["before", "during", "after"])
def test_a_job_ending_before_during_or_after_the_pages_run_is_shown(when, monkeypatch):
    """The Mask page on the background path (every file treated as large), the model fit's
    job held by the test: it ends before the page's run, during it (the page has drawn the
    risk figures, the fit has not been read yet) or after it (only a poll sees it). In every
    order the analysis potential is drawn, either final or marked as updating."""
    monkeypatch.setattr(jobs, "WAIT_ROWS", 0)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert_clean(at)
    gate = _hold_the_utility_job(monkeypatch)
    method = next(w for w in at.selectbox if w.key and w.key.endswith("stomach_dose_gy:method"))
    if when == "before":
        gate.release_all()
    elif when == "during":
        gate.release_on_read()
    method.set_value("uniform_noise").run()
    assert_clean(at)
    if when != "after":
        _assert_final_or_updating(at)
    gate.release_all()
    board = at.session_state[jobs.KEY_JOBS]
    assert board.wait_all(WAIT * 4)
    at.run()  # the poll that sees the end (AppTest runs the page whole)
    assert_clean(at)
    ap = metric_value(at.main, "Analysis potential")
    assert ap not in ("computing...", "unavailable", "—"), ap
    assert not any("Updating" in text for text in texts(at.caption))


def test_a_lost_rerun_after_a_cancellation_still_ends_with_the_figure(monkeypatch):
    """The job of the current recipe is cancelled (e.g. by another page opened and left at
    once) and the rerun that would have restarted it is lost: the next run of the page (a
    poll or any move) must start it again, not show nothing or the older recipe's figure."""
    monkeypatch.setattr(jobs, "WAIT_ROWS", 0)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    gate = _hold_the_utility_job(monkeypatch)
    method = next(w for w in at.selectbox if w.key and w.key.endswith("stomach_dose_gy:method"))
    method.set_value("uniform_noise").run()
    assert_clean(at)
    board = at.session_state[jobs.KEY_JOBS]
    held = board.current("utility")
    held.cancel("another page was opened")  # the rerun that follows is lost
    gate.release_all()
    assert held.wait(WAIT) and held.state == jobs.CANCELLED
    at.run()
    assert_clean(at)
    _assert_final_or_updating(at)
    assert board.current("utility") is not held
    assert board.wait_all(WAIT * 4)
    at.run()
    ap = metric_value(at.main, "Analysis potential")
    assert ap not in ("computing...", "unavailable", "—"), ap


# ---------------------------------------------------------------------------- status line
def test_the_status_line_names_each_job_its_state_and_progress(monkeypatch):
    queue = jobs.HeavyJobQueue(1)
    monkeypatch.setattr(jobs, "HEAVY_QUEUE", queue)
    board = jobs.JobBoard()
    assert jobs.activity_line(board) is None
    done = Gated(steps=1)
    finished = board.submit("sweep", 1, "Drawing the map", done, heavy=False)
    done.finish()
    assert finished.wait(WAIT)
    assert jobs.activity_line(board) is None  # nothing running: no line
    stale = Gated(steps=2)
    cancelled = board.submit("utility", "a", "Fitting a", stale, heavy=False)
    stale.wait_gate()
    fitting = Gated(steps=4)
    running = board.submit("utility", "b", "Fitting b", fitting, heavy=True)
    assert "running: Fitting a (stopping: a newer setting replaced it)" in jobs.activity_line(board)
    stale.finish()
    assert cancelled.wait(WAIT) and cancelled.state == jobs.CANCELLED
    fitting.wait_gate()
    fitting.step()  # 1 of 4 reported
    waiting = board.submit("search", 1, "Searching", Gated(), heavy=True)
    tries = 0
    while queue.position(waiting) is None:  # the queued job takes its place in the queue
        assert waiting.wait(0.01) is False
        tries += 1
        assert tries < WAIT * 100, "the job never queued"
    line = jobs.activity_line(board)
    assert line == (
        "Background work: running: Fitting b (1 of 4); queued: Searching (number 1 in the "
        "queue); finished: Drawing the map; cancelled: Fitting a (a newer setting replaced it)."
    ), line
    board.cancel_all("test over")
    fitting.finish()
    assert running.wait(WAIT) and waiting.wait(WAIT)


def test_the_page_shows_the_status_line_while_a_job_runs_and_not_after(monkeypatch):
    monkeypatch.setattr(jobs, "WAIT_ROWS", 0)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    gate = _hold_the_utility_job(monkeypatch)
    method = next(w for w in at.selectbox if w.key and w.key.endswith("stomach_dose_gy:method"))
    method.set_value("uniform_noise").run()
    assert_clean(at)
    lines = [t for t in texts(at.sidebar.caption) if "Background work:" in t]
    assert len(lines) == 1, lines
    # The held fit runs, or waits for the server's place for heavy work (every job is heavy
    # here) while a job of the first run, told to cancel, reaches its next progress call.
    states = [part.split(": ", 1) for part in lines[0].split("Background work: ")[1].split("; ")]
    fitting = [state for state, named in states if "Fitting the model" in named]
    assert any(state in ("running", "queued") for state in fitting), lines
    gate.release_all()
    assert at.session_state[jobs.KEY_JOBS].wait_all(WAIT * 4)
    at.run()
    assert not [t for t in texts(at.sidebar.caption) if "Background work:" in t]


# ---------------------------------------------------------------------------- delta paths
@pytest.mark.parametrize("page", ["mask", "rumap"])
def test_a_poll_queued_behind_the_pages_run_leaves_no_element_undrawn(page, monkeypatch):
    """The page's run (a job still running, so every live fragment polls) is recorded; a
    poll of the live fragments starts before the run was sent, so Streamlit drops those
    fragments' messages; the browser gets the rest, then the fragments' own new run. Every
    element of the page's run must then be in the browser's tree, and no message may point
    past the end of its container."""
    monkeypatch.setattr(jobs, "WAIT_ROWS", 0)
    recorded: list[list[ForwardMsg]] = []

    class Recording(LocalScriptRunner):
        def run(self, *args, **kwargs):
            tree = super().run(*args, **kwargs)
            copies = []
            for message in self.forward_msgs():
                copy = ForwardMsg()
                copy.CopyFrom(message)
                copies.append(copy)
            recorded.append(copies)
            return tree

    monkeypatch.setattr(app_test_module, "LocalScriptRunner", Recording)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    gate = _hold_the_utility_job(monkeypatch)
    method = next(w for w in at.selectbox if w.key and w.key.endswith("stomach_dose_gy:method"))
    method.set_value("uniform_noise").run()
    assert_clean(at)
    if page != "mask":
        at.switch_page(f"app_pages/{page}.py").run()
        assert_clean(at)
    page_run = recorded[-1]
    polling = _polling(page_run)
    assert len(polling) >= 2, "the page's live part and the strip should poll while a job runs"

    queue = ForwardMsgQueue()
    for message in page_run:
        queue.enqueue(message)
    # The poll's run starts before the session sent the page's run (AppSession, on the
    # fragment run's SCRIPT_STARTED).
    queue.clear(retain_lifecycle_msgs=True, fragment_ids_this_run=sorted(polling))
    browser = BrowserTree()
    for message in queue.flush():
        browser.apply(message)
    for message in page_run:  # the fragments' own run draws what they drew before
        if message.WhichOneof("type") == "delta" and message.delta.fragment_id in polling:
            browser.apply(message)
    gate.release_all()
    assert not browser.errors, browser.errors[:3]
    wanted = _element_texts(page_run)
    missing = [text for text in wanted if text not in browser.texts()]
    assert not missing, f"drawn by the page but never shown: {missing[:5]}"


def test_a_poll_landing_after_the_page_moved_on_draws_nothing_of_the_old_page(monkeypatch):
    """The Mask page polls; the user opens the Risk page; a poll sent by the browser before
    it heard of the new page arrives after the new page's run. Streamlit runs a poll only
    for a fragment the last full run registered (``AppSession.request_rerun`` asks
    ``has_fragment``): the Mask panel's fragment must be gone, so the late poll cannot draw
    the old page's panel into the new one; only the strip's, drawn on every page, remains."""
    monkeypatch.setattr(jobs, "WAIT_ROWS", 0)
    recorded: list[list[ForwardMsg]] = []

    class Recording(LocalScriptRunner):
        def run(self, *args, **kwargs):
            tree = super().run(*args, **kwargs)
            recorded.append(list(self.forward_msgs()))
            return tree

    monkeypatch.setattr(app_test_module, "LocalScriptRunner", Recording)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    gate = _hold_the_utility_job(monkeypatch)
    method = next(w for w in at.selectbox if w.key and w.key.endswith("stomach_dose_gy:method"))
    method.set_value("uniform_noise").run()
    mask_polls = _polling(recorded[-1])
    at.switch_page("app_pages/risk.py").run()
    assert_clean(at)
    risk_polls = _polling(recorded[-1])
    storage = at._fragment_storage
    gate.release_all()
    left_behind = [f for f in mask_polls - risk_polls if storage.contains(f)]
    assert not left_behind, "a fragment of the page left would still answer a late poll"
    assert len(mask_polls - risk_polls) >= 1  # the Mask panel's fragment is among them
    assert at.session_state[jobs.KEY_JOBS].wait_all(WAIT * 4)


def _polling(messages: list[ForwardMsg]) -> set[str]:
    """The fragments a run set to poll."""
    return {m.auto_rerun.fragment_id for m in messages if m.WhichOneof("type") == "auto_rerun"}


# ---------------------------------------------------------------------------- helpers
class _UtilityGate:
    """Holds the session's model fits until released (all at once, or as soon as the page
    reads its job's state: "during" the page's run)."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.on_read = False

    def release_all(self) -> None:
        self.open.set()

    def release_on_read(self) -> None:
        self.on_read = True


def _hold_the_utility_job(monkeypatch) -> _UtilityGate:
    gate = _UtilityGate()
    submit = jobs.JobBoard.submit

    def held_submit(self, slot, key, label, work, **kwargs):
        if slot != "utility":
            return submit(self, slot, key, label, work, **kwargs)

        def held(reporter):
            if gate.on_read:
                gate.open.set()  # the page's run is under way: the job ends during it
            deadline = time.monotonic() + WAIT * 4
            while not gate.open.wait(0.05):  # held, but cancellable as real work is
                reporter.check()
                assert time.monotonic() < deadline, "the test never released the model fit"
            return work(reporter)

        return submit(self, slot, key, label, held, **kwargs)

    monkeypatch.setattr(jobs.JobBoard, "submit", held_submit)
    return gate


def _assert_final_or_updating(at: AppTest) -> None:
    """The analysis potential is drawn, and either final or said to be updating."""
    ap = metric_value(at.main, "Analysis potential")
    updating = any("Updating" in text for text in texts(at.caption)) or any(
        "Updating" in (p.proto.text or "") for p in _progress_bars(at)
    )
    assert ap not in ("unavailable",), ap
    assert updating or ap not in ("computing...", "—"), (ap, texts(at.caption))


def _progress_bars(at: AppTest) -> list:
    return [node for node in at.main if getattr(node, "type", None) == "progress"]


def _element_texts(messages: list[ForwardMsg]) -> list[str]:
    """A readable identity of each element the messages draw (metrics by label, text
    elements by body)."""
    out = []
    for message in messages:
        if message.WhichOneof("type") != "delta":
            continue
        text = _element_text(message)
        if text:
            out.append(text)
    return out


def _element_text(message: ForwardMsg) -> str | None:
    delta = message.delta
    if delta.WhichOneof("type") != "new_element":
        return None
    element = delta.new_element
    kind = element.WhichOneof("type")
    if kind == "metric":
        return f"metric:{element.metric.label}"
    if kind in ("markdown", "alert"):
        return f"{kind}:{getattr(element, kind).body}"
    return None


class BrowserTree:
    """The browser's element tree, as far as delta paths go: a delta at ``path`` replaces the
    node at its last index or appends one there, and every index must be at most the number
    of children of its parent (the browser's rule; past it, it throws "Bad delta path index"
    and the element is not drawn). A new block at an existing place keeps that place's
    children, as the browser does."""

    def __init__(self) -> None:
        self.roots: dict[int, dict] = {}
        self.errors: list[str] = []

    def apply(self, message: ForwardMsg) -> None:
        if message.WhichOneof("type") != "delta":
            return
        path = list(message.metadata.delta_path)
        node = self.roots.setdefault(path[0], {"children": [], "text": None})
        for depth, index in enumerate(path[1:], start=1):
            children = node["children"]
            if index < 0 or index > len(children):
                self.errors.append(
                    f"Bad delta path index {index} (should be between [0, {len(children)}]) "
                    f"at {path[: depth + 1]} for {_element_text(message) or 'a block'}"
                )
                return
            last = depth == len(path) - 1
            if last:
                new = {"children": [], "text": _element_text(message)}
                if index < len(children):
                    if message.delta.WhichOneof("type") == "add_block":
                        new["children"] = children[index]["children"]
                    children[index] = new
                else:
                    children.append(new)
            elif index == len(children):
                self.errors.append(f"no block at {path[: depth + 1]}")
                return
            else:
                node = children[index]

    def texts(self) -> set[str]:
        out: set[str] = set()

        def walk(node: dict) -> None:
            if node["text"]:
                out.add(node["text"])
            for child in node["children"]:
                walk(child)

        for root in self.roots.values():
            walk(root)
        return out
