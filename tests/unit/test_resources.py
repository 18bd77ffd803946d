"""Memory a closed session's work leaves behind, given back (dashboard.resources, and the job
board's watch over its session)."""

import gc
import threading

import pytest

from dashboard import jobs, resources


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


def test_the_end_of_a_heavy_job_gives_memory_back_and_a_light_ones_does_not(monkeypatch):
    monkeypatch.setattr(jobs, "HEAVY_QUEUE", jobs.HeavyJobQueue(1))
    trims = []
    monkeypatch.setattr(resources, "give_back_memory", lambda: trims.append(1) or True)
    board = jobs.JobBoard()
    light = board.submit("light", 1, "Light", lambda _: 1, heavy=False)
    assert light.wait(30)
    assert trims == []
    heavy = board.submit("heavy", 1, "Heavy", lambda _: 2, heavy=True)
    heavy._thread.join(30)  # the trim follows the job's end, in its thread
    assert trims == [1] and heavy.result == 2


def test_a_full_collection_runs_at_most_once_per_interval(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(resources, "_clock", lambda: now[0])
    monkeypatch.setattr(resources, "_last_collection", [float("-inf")])
    collections = []
    monkeypatch.setattr(resources.gc, "collect", lambda *args: collections.append(now[0]) or 0)
    assert resources.collect_garbage() is True
    now[0] += resources.COLLECT_EVERY_SECONDS / 2
    assert resources.collect_garbage() is False
    now[0] += resources.COLLECT_EVERY_SECONDS / 2
    assert resources.collect_garbage() is True
    assert collections == [1000.0, 1000.0 + resources.COLLECT_EVERY_SECONDS]


def test_the_periodic_collection_frees_a_closed_sessions_cycles(monkeypatch):
    """Streamlit's collection after every run is off: a session state caught in a reference
    cycle is freed, and its memory given back, by :func:`resources.collect_garbage`."""
    monkeypatch.setattr(resources, "TRIM_DELAY_SECONDS", 0.0)
    monkeypatch.setattr(resources, "_last_collection", [float("-inf")])
    trimmed = threading.Event()
    monkeypatch.setattr(resources, "give_back_memory", lambda: trimmed.set() or True)

    class State:
        pass

    state = State()
    state.itself = state  # a cycle: only a full collection frees it
    resources.on_session_freed(state)
    gc.disable()  # no automatic collection in between
    try:
        del state
        assert not trimmed.wait(0.2)
        assert resources.collect_garbage() is True
    finally:
        gc.enable()
    assert trimmed.wait(30)
