"""The server's CPU and memory shared between sessions (dashboard.resources): heavy threads at a
lower priority, memory given back when a session's state is freed."""

import gc
import sys
import threading

import pytest

from dashboard import jobs, resources

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="threads have a niceness of their own on Linux"
)


def in_thread(function):
    """``function()``'s result, called in a new thread."""
    found = []
    thread = threading.Thread(target=lambda: found.append(function()))
    thread.start()
    thread.join(30)
    return found[0]


def lowered_twice(by: int):
    """Lower the thread, note its niceness, lower it again: (returned, after one, after two)."""
    first = resources.lower_priority(by)
    once = resources.thread_niceness()
    resources.lower_priority(by)
    return first, once, resources.thread_niceness()


@linux_only
def test_a_lowered_thread_runs_at_the_process_niceness_plus_the_step_and_no_lower():
    base = resources.thread_niceness()
    assert in_thread(lambda: lowered_twice(5)) == (True, min(19, base + 5), min(19, base + 5))
    assert in_thread(lambda: lowered_twice(40)) == (True, 19, 19)  # capped
    assert resources.thread_niceness() == base  # the calling thread (and process) unchanged


@linux_only
def test_no_step_leaves_the_thread_as_it_is():
    base = resources.thread_niceness()
    assert in_thread(lambda: lowered_twice(0)) == (False, base, base)


@linux_only
def test_a_heavy_job_runs_at_the_lower_priority_and_a_light_one_does_not(monkeypatch):
    monkeypatch.setattr(jobs, "HEAVY_QUEUE", jobs.HeavyJobQueue(1))
    base = resources.thread_niceness()
    board = jobs.JobBoard()
    heavy = board.submit("heavy", 1, "Heavy", lambda _: resources.thread_niceness(), heavy=True)
    light = board.submit("light", 1, "Light", lambda _: resources.thread_niceness(), heavy=False)
    assert heavy.wait(30) and light.wait(30)
    assert heavy.result == min(19, base + resources.HEAVY_NICENESS)
    assert light.result == base


def test_memory_is_given_back_once_the_watched_state_is_freed(monkeypatch):
    trimmed = threading.Event()
    monkeypatch.setattr(resources, "TRIM_DELAY_SECONDS", 0.0)
    monkeypatch.setattr(resources, "give_back_memory", lambda: trimmed.set() or True)

    class State:
        pass

    state = State()
    resources.on_session_freed(state)
    assert not trimmed.wait(0.2)  # still held: nothing given back
    del state
    gc.collect()
    assert trimmed.wait(30)


def test_a_new_board_is_watched_for_the_end_of_its_session(monkeypatch):
    watched = []
    monkeypatch.setattr(resources, "on_session_freed", lambda *args: watched.append(args))
    state = {}
    monkeypatch.setattr(jobs.st, "session_state", state)
    first = jobs.board()
    assert jobs.board() is first and watched == [(first,)] and state[jobs.KEY_JOBS] is first


def test_cleanups_run_when_the_watched_state_is_freed(monkeypatch):
    monkeypatch.setattr(resources, "TRIM_DELAY_SECONDS", 0.0)
    called = []

    class State:
        pass

    state = State()
    resources.on_session_freed(state, lambda: called.append("a"), lambda: called.append("b"))
    assert called == []
    del state
    gc.collect()
    assert called == ["a", "b"]


class FakeRuntime:
    """Streamlit's runtime as forget_uploads sees it: active sessions and an upload manager."""

    def __init__(self, active: set[str]) -> None:
        self.active = active
        self.removed: list[str] = []
        self.uploaded_file_mgr = self

    def remove_session_files(self, session_id: str) -> None:
        self.removed.append(session_id)

    def is_active_session(self, session_id: str) -> bool:
        return session_id in self.active


def test_an_ended_sessions_uploads_are_removed_and_a_live_ones_kept(monkeypatch):
    runtime = FakeRuntime({"live"})
    monkeypatch.setattr(jobs.Runtime, "exists", classmethod(lambda cls: True))
    monkeypatch.setattr(jobs.Runtime, "instance", classmethod(lambda cls: runtime))
    jobs.forget_uploads("live")
    jobs.forget_uploads("ended")
    assert runtime.removed == ["ended"]


def test_no_runtime_no_uploads_to_remove(monkeypatch):
    monkeypatch.setattr(jobs.Runtime, "exists", classmethod(lambda cls: False))
    jobs.forget_uploads("any")  # nothing to do, and no error


@pytest.mark.skipif(resources._LIBC is None, reason="glibc only")
def test_memory_can_be_given_back_on_glibc():
    assert resources.give_back_memory() is True
