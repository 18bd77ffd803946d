"""Background jobs: long work that a session can abandon.

A job is one piece of long work (random replicates, an R-U sweep, the record-uniqueness
lattice, the smoothing profile, the bootstrap, a model fit on a large file) run in a thread
of its own, owned by the session that started it and kept in its :class:`JobBoard`, one job
per *slot* (a place on a page, such as ``"mask.utility"``).

- **Progress and partial results.** The work is a function of a :class:`Reporter`; the core
  functions it calls take ``progress=reporter.progress`` (done, total, between chunks) and,
  where they have them, ``partial=reporter.partial`` (e.g. the running mean of the replicates
  fitted so far, with its Monte-Carlo error).
- **Cancellation.** A job is stale when a newer value replaces it in its slot, when the
  session opens another page, when the data change, or when the session ends (its browser tab
  is closed). Its next progress call then raises :class:`~deid_core.errors.Cancelled`, which
  the core lets through, so the work stops between two chunks (well within a second). The
  user can also stop a job: its last partial result then becomes its result ("stop at 20
  replicates when the Monte-Carlo error is small").
- **A limit per server.** At most :data:`MAX_HEAVY_JOBS` heavy jobs (on files of more than
  :data:`WAIT_ROWS` records) run at once on the server, whatever the number of sessions; more
  wait in a first-come queue, and the page says where they are in it.
- **Never a blank panel.** On a file of at most :data:`WAIT_ROWS` records the page waits for
  a job, with a progress bar, as for any quick computation. On a larger one it draws the last
  figures, marked as updating with what is being computed (:func:`show_status`), and a
  fragment polls every :data:`POLL_SECONDS` (:func:`live_fragment`) until the work is done.
- **Where the work stands.** While any job runs or waits, the sidebar has one status line of
  the session's jobs (:func:`activity_line`, :func:`show_activity`): what each is for and its
  progress, queue place or reason, so that computing is never confused with stuck.

- **Memory given back.** Memory a heavy job or a closed session freed is given back to the
  system, and a closed session's uploaded files are removed (:mod:`dashboard.resources`).

Nothing here keeps data across sessions: a job holds only what its own session gave it.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any

import streamlit as st
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_requests import (
    _TRIGGER_PROTO_FIELDS,
    _has_active_trigger_value,
)

from dashboard import resources
from dashboard.text import literal
from deid_core.cancellation import cancellable
from deid_core.errors import Cancelled

LOG = logging.getLogger("dashboard")

KEY_JOBS = "deid.jobs"

#: On files of at most this many records the page waits for its jobs (each takes well under a
#: second there, as on the 16,000-person demo); larger files show "updating" and poll.
WAIT_ROWS = 50_000
#: How often a page with running jobs redraws their progress and partial results.
POLL_SECONDS = 0.5
#: Heavy jobs that may run at once on one server (all sessions together); more are queued.
#: ``DEID_MAX_HEAVY_JOBS`` overrides the default of one per two CPUs: a heavy job uses two
#: cores (numpy's threads), and a model fit of a million records several hundred megabytes.
MAX_HEAVY_JOBS = int(os.environ.get("DEID_MAX_HEAVY_JOBS", 0)) or max(1, (os.cpu_count() or 1) // 2)
#: How often a queued job looks whether it is still wanted.
_QUEUE_CHECK_SECONDS = 0.1

QUEUED, RUNNING, DONE, FAILED, STOPPED, CANCELLED = (
    "queued",
    "running",
    "done",
    "failed",
    "stopped",
    "cancelled",
)


def _session_alive(session_id: str | None) -> bool:
    """Whether the session that started a job still has a browser connected (always True
    outside a Streamlit server, e.g. under AppTest)."""
    if session_id is None or not Runtime.exists():
        return True
    return Runtime.instance().is_active_session(session_id)


def session_check() -> Callable[[], None]:
    """The cancellation check of a page's own run (set by ``app.py`` around it with
    :func:`deid_core.cancellation.cancellable`): it raises :class:`Cancelled` once the browser
    tab of the run's session is closed, so that a whole-data step or a report built in the
    page's run (not in a job) stops at the core's next check instead of taking a core for
    minutes on behalf of nobody."""
    ctx = get_script_run_ctx()
    session_id = ctx.session_id if ctx is not None else None

    def check() -> None:
        if not _session_alive(session_id):
            raise Cancelled("the session ended")

    return check


class Reporter:
    """What a job's work calls between chunks: progress and partial results. Either raises
    :class:`Cancelled` when the job is no longer wanted."""

    def __init__(self, job: Job) -> None:
        self._job = job

    def progress(self, done: float, total: float) -> None:
        self._job.done, self._job.total = done, total
        self._job.check()

    def partial(self, value: Any) -> None:
        self._job.partial = value
        self._job.check()

    def check(self) -> None:
        """Raise :class:`Cancelled` if the job is no longer wanted (work that waits on
        something else than its own chunks, e.g. another thread, calls this while it waits)."""
        self._job.check()


class Job:
    """One piece of long work in a thread of its own (see the module docstring).

    ``work(reporter)`` returns the result; ``label`` says what is being computed, in the
    words the page shows ("Fitting the model to 100 random replicates"). ``state`` is one of
    queued, running, done, failed (``error`` holds the exception), stopped (by the user: the
    last partial result is the result) or cancelled (``reason`` says why).
    """

    def __init__(
        self,
        slot: str,
        key: Hashable,
        label: str,
        work: Callable[[Reporter], Any],
        *,
        heavy: bool,
        page: str | None,
        session_id: str | None,
    ) -> None:
        self.slot, self.key, self.label = slot, key, label
        self.heavy, self.page, self.session_id = heavy, page, session_id
        self.state = QUEUED
        self.done: float = 0
        self.total: float = 0
        self.partial: Any = None
        self.result: Any = None
        self.error: BaseException | None = None
        self.reason: str | None = None
        self.started = time.monotonic()
        self.finished: float | None = None
        self._work: Callable[[Reporter], Any] | None = work
        self._cancelled = threading.Event()
        self._stopped = threading.Event()
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"deid-job-{slot}", daemon=True)

    @property
    def active(self) -> bool:
        return self.state in (QUEUED, RUNNING)

    @property
    def has_result(self) -> bool:
        return self.state in (DONE, STOPPED)

    @property
    def abandoned(self) -> bool:
        """Cancelled, or still running but told to cancel: such a job keeps running until its
        next progress call and then ends cancelled, so it never stands for a wanted figure. (A
        job told to cancel after its last progress call ends done: its result is good.)"""
        return self.state == CANCELLED or (self.active and self._cancelled.is_set())

    def start(self) -> Job:
        self._thread.start()
        return self

    def check(self) -> None:
        """Raise :class:`Cancelled` if the job is stale or stopped."""
        if self._cancelled.is_set() or self._stopped.is_set():
            raise Cancelled(self.reason or "stopped")
        if not _session_alive(self.session_id):
            self.reason = "the session ended"
            raise Cancelled(self.reason)

    def cancel(self, reason: str) -> None:
        """Abandon the job: its result is no longer wanted."""
        if self.active:
            self.reason = reason
            self._cancelled.set()

    def stop(self) -> None:
        """Stop the job and keep its last partial result as the result."""
        if self.active:
            self.reason = "stopped by the user"
            self._stopped.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the job has finished (True) or ``timeout`` seconds have passed."""
        return self._finished.wait(timeout)

    def _run(self) -> None:
        try:
            if self.heavy:
                HEAVY_QUEUE.acquire(self)
            try:
                self.state = RUNNING
                with cancellable(self.check):  # the core's own loops check it too
                    self.result = self._work(Reporter(self))
                self.state = DONE
                LOG.info(
                    "Background job '%s' done in %.1f s", self.slot, time.monotonic() - self.started
                )
            finally:
                if self.heavy:
                    HEAVY_QUEUE.release(self)
        except Cancelled:
            if self._stopped.is_set() and self.partial is not None:
                self.result, self.state = self.partial, STOPPED
            else:
                self.state = CANCELLED
            LOG.info("Background job '%s' %s: %s", self.slot, self.state, self.reason)
        except Exception as error:  # shown by the page as a message (never a traceback)
            self.error, self.state = error, FAILED
            # The error's kind only: its message may quote the data.
            LOG.info("Background job '%s' failed: %s", self.slot, type(error).__name__)
        finally:
            self._work = None  # what the work referred to is no longer needed
            self.finished = time.monotonic()
            self._finished.set()
            if self.heavy:  # its intermediate arrays are freed: give their pages back
                resources.give_back_memory()


class HeavyJobQueue:
    """At most ``limit`` heavy jobs run at once; the others wait, first come first served."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._condition = threading.Condition()
        self._running: set[Job] = set()
        self._waiting: deque[Job] = deque()

    def acquire(self, job: Job) -> None:
        """Wait for a free place (raises :class:`Cancelled` if the job goes stale first)."""
        with self._condition:
            self._waiting.append(job)
            try:
                while not (self._waiting[0] is job and len(self._running) < self.limit):
                    self._condition.wait(_QUEUE_CHECK_SECONDS)
                    job.check()
            except BaseException:
                self._waiting.remove(job)
                self._condition.notify_all()
                raise
            self._waiting.popleft()
            self._running.add(job)

    def release(self, job: Job) -> None:
        with self._condition:
            self._running.discard(job)
            self._condition.notify_all()

    def position(self, job: Job) -> int | None:
        """Where a waiting job is in the queue (1 = next), None if it is not waiting."""
        with self._condition:
            return self._waiting.index(job) + 1 if job in self._waiting else None

    @property
    def running(self) -> int:
        with self._condition:
            return len(self._running)


HEAVY_QUEUE = HeavyJobQueue(MAX_HEAVY_JOBS)


class JobBoard:
    """A session's jobs: the current job of each slot, and the last one that gave a result
    (what the page shows while a newer one runs)."""

    #: How many of the session's latest jobs the board remembers for :func:`activity_line`.
    HISTORY = 30

    def __init__(self) -> None:
        self._current: dict[str, Job] = {}
        self._previous: dict[str, Job] = {}
        self._history: deque[Job] = deque(maxlen=self.HISTORY)

    def submit(
        self,
        slot: str,
        key: Hashable,
        label: str,
        work: Callable[[Reporter], Any],
        *,
        heavy: bool,
        page: str | None = None,
    ) -> Job:
        """The slot's job for ``key``: the current one if it computes the same thing (running
        or finished) and has not been told to cancel, else a new job, started; a job it
        replaces is cancelled. ``page`` (None: every page) is where the job is wanted: opening
        another page cancels it.

        A job told to cancel is never handed back, even for its own key: the key may have
        moved away and back before the job's next progress call, after which it ends
        cancelled and nothing would compute the figure the page asks for (issue 28)."""
        current = self._current.get(slot)
        if current is not None and current.key == key and not current.abandoned:
            return current
        if current is not None:
            current.cancel("a newer setting replaced it")
            if current.has_result:
                self._previous[slot] = current
        ctx = get_script_run_ctx()
        job = Job(
            slot,
            key,
            label,
            work,
            heavy=heavy,
            page=page,
            session_id=ctx.session_id if ctx is not None else None,
        )
        self._current[slot] = job
        self._history.append(job)
        return job.start()

    def history(self) -> list[Job]:
        """The session's latest jobs (at most :attr:`HISTORY`), oldest first, in any state."""
        return list(self._history)

    def current(self, slot: str) -> Job | None:
        return self._current.get(slot)

    def cached(self, slot: str, key: Hashable) -> None:
        """The slot now shows ``key``, already known: a job computing anything else there is
        stale and is cancelled."""
        job = self._current.get(slot)
        if job is not None and job.key != key:
            job.cancel("a newer setting replaced it")

    def has(self, slot: str, key: Hashable) -> bool:
        """Whether the slot's current job computes ``key`` (running or finished, and not told
        to cancel)."""
        job = self._current.get(slot)
        return job is not None and job.key == key and not job.abandoned

    def previous(self, slot: str) -> Job | None:
        """The slot's last job with a result, other than the current one."""
        return self._previous.get(slot)

    def active(self, slots: tuple[str, ...] | None = None) -> list[Job]:
        """The jobs running or queued (in ``slots`` only, if given)."""
        return [
            job
            for slot, job in self._current.items()
            if job.active and (slots is None or slot in slots)
        ]

    def leave_pages_except(self, page: str) -> None:
        """The session opened ``page``: cancel the jobs other pages started."""
        for job in self._current.values():
            if job.page is not None and job.page != page:
                job.cancel("another page was opened")

    def cancel(self, slot: str, reason: str) -> None:
        """Forget the slot's job (cancelled if still active): it is to be run afresh."""
        job = self._current.pop(slot, None)
        if job is not None:
            job.cancel(reason)

    def cancel_all(self, reason: str) -> None:
        for job in self._current.values():
            job.cancel(reason)
        self._current.clear()
        self._previous.clear()
        self._history.clear()

    def wait_all(self, timeout: float | None = None) -> bool:
        """Wait until no job is active (True), or ``timeout`` seconds have passed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for job in list(self._current.values()):
            left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            if not job.wait(left):
                return False
        return True


def board() -> JobBoard:
    """This session's job board (every run makes sure it has one: ``app.py``). When the
    session's state is freed (its tab closed and its reconnection window passed), so is the
    board: the session's uploaded files are then removed (:func:`forget_uploads`) and the
    memory is given back to the system (:func:`dashboard.resources.on_session_freed`)."""
    jobs_board = st.session_state.get(KEY_JOBS)
    if jobs_board is None:
        jobs_board = st.session_state[KEY_JOBS] = JobBoard()
        ctx = get_script_run_ctx()
        cleanups = () if ctx is None else (functools.partial(forget_uploads, ctx.session_id),)
        resources.on_session_freed(jobs_board, *cleanups)
    return jobs_board


def forget_uploads(session_id: str) -> None:
    """Remove the uploaded files of a session that has ended (called once its state is freed):
    Streamlit 1.67 drops a closed session's state after its reconnection window without
    shutting it down, and its uploaded files (the bytes of every file the user gave) would
    stay in the server's memory for good. A session still connected is left alone."""
    if not Runtime.exists():
        return
    runtime = Runtime.instance()
    if not runtime.is_active_session(session_id):
        runtime.uploaded_file_mgr.remove_session_files(session_id)


# ---------------------------------------------------------------------------- drawing
def live_fragment(
    body: Callable[[], None],
    prepare: Callable[[], None] | None = None,
    slots: tuple[str, ...] | None = None,
) -> None:
    """Run ``body`` as a fragment that reruns every :data:`POLL_SECONDS` while this session
    has jobs running (only those of ``slots``, if given: the body draws nothing else, and
    redrawing it would only slow the work down). ``prepare`` starts the body's jobs first, so
    that polling starts with them; a job started by the body itself (e.g. by a button) reruns
    the page to start polling, and the end of the work, seen by a polling run, reruns the
    whole page once, so that what is drawn outside the fragment (the sidebar strip) shows the
    final figures too (work that ends during the page's own run needs no second run). Either
    rerun waits while a click of this run is still to be read (:func:`click_waiting`): a rerun
    resets every click, and the button clicked as the work ended would do nothing.

    The fragment draws into a container of its own, made by the page's run just before it.
    When a fragment's run starts, Streamlit drops that fragment's messages not yet sent to
    the browser; a poll queued behind the page's own run starts right after it, and on a busy
    server the page's run may not have been sent by then. Were the fragment an element among
    the page's own, every later element of the page in the same container would then point
    one place past the end ("Bad delta path index" in the browser) and never be drawn; in a
    container of its own, only the fragment's own messages go, and its run draws them again
    (``tests/app/test_live_fragments.py``, issue 28)."""
    if prepare is not None:
        prepare()
    polling = bool(board().active(slots))
    in_page_run = [True]  # the fragment's first run is part of the page's own run

    def run() -> None:
        body()
        active = bool(board().active(slots))
        started = active and not polling  # polling starts with a rerun of the page
        ended = polling and not active and not in_page_run[0]  # the strip shows the end too
        if started or ended or st.session_state.get(KEY_RERUN_OWED):
            rerun_unless_a_click_waits()

    with st.container():  # the page's, not the fragment's: its place survives a dropped run
        st.fragment(run, run_every=POLL_SECONDS if polling else None)()
    in_page_run[0] = False


#: Set when a rerun was put off because a click was waiting (:func:`rerun_unless_a_click_waits`).
KEY_RERUN_OWED = "deid.jobs.rerun_owed"


def click_waiting() -> bool:
    """Whether this run carries a click (a button's, or any other trigger widget's) that no
    widget drawn in this run has read yet.

    ``st.rerun()`` ends the run and resets every trigger (Streamlit 1.67:
    ``SessionState._reset_triggers`` when a run finishes or is cut short by a rerun). A click
    that arrived with this run, for a widget further down the page or in a fragment queued
    after this one (a poll and a click sent together run as one queue of fragments), would
    then be lost: the user's button does nothing. Reads Streamlit's widget states (the
    version is pinned); anything unexpected there counts as no click waiting."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return False
    try:
        widgets = ctx.session_state._state._new_widget_state
        drawn = ctx.shared.widget_ids_this_run.snapshot()
        for widget_id, value in list(widgets.states.items()):
            metadata = widgets.widget_metadata.get(widget_id)
            if widget_id in drawn or metadata is None:
                continue  # read in this run, or never drawn in this session
            if metadata.value_type not in _TRIGGER_PROTO_FIELDS:
                continue
            stored = value.value  # a Value's deserialized value, or a Serialized's proto
            if hasattr(stored, "WhichOneof"):
                if _has_active_trigger_value(stored):
                    return True
            elif stored not in (False, None):
                return True
    except Exception:  # Streamlit's internals moved: behave as before
        return False
    return False


def rerun_unless_a_click_waits() -> None:
    """``st.rerun()``, unless a click waits to be read (:func:`click_waiting`): then the rerun
    is owed, and paid by the next live fragment's run that ends with no click waiting (the
    clicked one's, queued after this one), or by the page's run at its end
    (:func:`pay_owed_rerun`)."""
    if click_waiting():
        st.session_state[KEY_RERUN_OWED] = True
        return
    st.session_state.pop(KEY_RERUN_OWED, None)
    st.rerun()


def pay_owed_rerun() -> None:
    """At the end of the page's run: the rerun a live fragment put off while a click waited
    (every widget of the page has been drawn, so the click has been read)."""
    if st.session_state.pop(KEY_RERUN_OWED, False):
        st.rerun()


#: The words of each state in the status line of the session's jobs.
_STATE_WORDS = {
    RUNNING: "running",
    QUEUED: "queued",
    DONE: "finished",
    STOPPED: "stopped by you",
    CANCELLED: "cancelled",
    FAILED: "failed",
}
#: At most this many jobs of one finished state are named in the status line (the rest are
#: counted).
_NAMED_PER_STATE = 2


def activity_line(jobs_board: JobBoard) -> str | None:
    """One line saying where the session's background work stands, or None when no job is
    running or queued: each running or queued job with what it is for and how far it is, then
    the latest finished, stopped, cancelled (with why) and failed ones, e.g. "Background work:
    running: Fitting the model to 100 random replicates (40 of 100); cancelled: Drawing the
    risk-utility map (a newer setting replaced it)". A user, and a test, can tell computing
    from stuck."""
    history = jobs_board.history()
    if not any(job.active for job in history):
        return None
    parts = []
    for state in (RUNNING, QUEUED, DONE, STOPPED, CANCELLED, FAILED):
        these = [job for job in history if job.state == state]
        if not these:
            continue
        named = these if state in (RUNNING, QUEUED) else these[-_NAMED_PER_STATE:]
        items = [_job_words(job) for job in named]
        if len(these) > len(named):
            items.append(f"{len(these) - len(named)} more")
        parts.append(f"{_STATE_WORDS[state]}: {', '.join(items)}")
    return "Background work: " + "; ".join(parts) + "."


def _job_words(job: Job) -> str:
    """What one job is for, with its progress (running), queue place (queued) or reason
    (cancelled)."""
    if job.active and job.abandoned:  # told to cancel: it stops at its next progress call
        return f"{job.label} (stopping: {job.reason})"
    if job.state == RUNNING and job.total:
        return f"{job.label} ({job.done:g} of {job.total:g})"
    if job.state == QUEUED:
        position = HEAVY_QUEUE.position(job)
        return f"{job.label} (number {position} in the queue)" if position else job.label
    if job.state == CANCELLED and job.reason:
        return f"{job.label} ({job.reason})"
    return job.label


def show_activity() -> None:
    """The status line of the session's jobs (:func:`activity_line`), in a container keyed
    ``jobs-activity`` (the browser tests read it), while any job is running or queued; it
    redraws itself as the work goes on."""

    def body() -> None:
        line = activity_line(board())
        if line is not None:
            with st.container(key="jobs-activity"):
                st.caption(f":material/sync: {literal(line)}")

    live_fragment(body)


def wait_for(job: Job, where: Any | None = None) -> None:
    """Wait for ``job`` (a small file's job), with a progress bar in ``where`` once it has
    reported progress."""
    bar = None
    try:
        while not job.wait(0.1):
            if where is not None and job.total:
                fraction = min(max(job.done / job.total, 0.0), 1.0)
                text = f"{job.label} ({job.done:g} of {job.total:g})"
                if bar is None:
                    bar = where.progress(fraction, text=text)
                else:
                    bar.progress(fraction, text=text)
    finally:
        if bar is not None:
            bar.empty()


def describe(job: Job) -> str:
    """What the job is doing, in a sentence (queue position, progress)."""
    if job.state == QUEUED:
        position = HEAVY_QUEUE.position(job)
        return (
            f"Waiting for a free place: the server runs at most {HEAVY_QUEUE.limit} long "
            f"computations at once and is busy"
            + (f"; yours is number {position} in the queue." if position else ".")
        )
    if job.total:
        return f"{job.label}: {job.done:g} of {job.total:g} done."
    return f"{job.label}..."


def show_status(
    job: Job,
    where: Any,
    stop_label: str | None = None,
    key: str = "",
    before_partial: bool = False,
) -> None:
    """Say in ``where`` that ``job`` is updating the figures shown: what is being computed,
    its progress bar or queue position, and (with ``stop_label``) a button that stops it and
    keeps what it has computed so far: once it has a partial result, or from the start with
    ``before_partial`` (for work that need not be redone when stopped with nothing to keep)."""
    with where:
        text = describe(job)
        if job.total and job.state == RUNNING:
            st.progress(min(max(job.done / job.total, 0.0), 1.0), text=f"Updating: {literal(text)}")
        else:
            st.caption(f":material/hourglass_top: Updating: {literal(text)}")
        if stop_label and job.state == RUNNING and (job.partial is not None or before_partial):
            st.button(literal(stop_label), key=f"jobs.stop.{job.slot}.{key}", on_click=job.stop)
