"""The server's CPU and memory shared fairly between sessions (issue 31, item 4).

A hosted copy runs every session in one process (``streamlit run app.py``): the event loop
that answers the health check and carries every session's messages, each session's page runs,
and the background jobs of :mod:`dashboard.jobs`, all threads of that process.

- **CPU.** Heavy work (a job on a file of more than :data:`dashboard.jobs.WAIT_ROWS` records,
  and the page runs of a session holding such a file) runs at a lower CPU priority
  (:func:`lower_priority`: the calling thread's niceness raised by :data:`HEAVY_NICENESS`;
  on Linux a thread has a niceness of its own, set through its native id with
  ``os.setpriority(os.PRIO_PROCESS, tid, ...)``). The kernel's scheduler then gives the cores
  first to the event loop and to the page runs of sessions on small files (the demo): with
  nice 10 against nice 0 a thread's weight is 110 against 1,024 (Linux CFS,
  ``sched_prio_to_weight``), so it gets about a tenth of a core both want, and all of a core
  no one else wants. A thread's niceness cannot be lowered again without privilege, so only
  threads that end with their work are lowered: a job's own thread, and the page's run thread
  (Streamlit starts one per run, reused for the reruns asked during it).
- **Memory.** Memory freed by Python and numpy is kept by the C allocator (glibc's
  ``malloc``) for reuse: the process's resident memory does not fall when a session's data
  are freed. :func:`give_back_memory` asks glibc to return its free pages to the system
  (``malloc_trim(0)``); it is called when a heavy job ends and when a session's state is
  freed (:func:`on_session_freed`). Streamlit keeps a closed session's state for its
  reconnection window (``server.disconnectedSessionTTL``, 120 s) and drops it when the
  storage is next written after that (another tab closing); Streamlit 1.67 then neither
  shuts the session down nor removes its uploaded files (the whole file's bytes, held by its
  uploaded-file manager for the server's lifetime): :func:`dashboard.jobs.board` removes them
  when the session's state is freed.

Nothing here imports Streamlit: the functions work on the calling thread and the process.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
import weakref
from collections.abc import Callable

#: How much a heavy thread's niceness is raised (0: not at all; at most 19 in all). Set by
#: ``DEID_HEAVY_NICENESS``.
HEAVY_NICENESS = int(os.environ.get("DEID_HEAVY_NICENESS", 10))
#: Seconds between a session's state being freed and the memory's return to the system: the
#: rest of the session's objects are freed in the same collection, after the one watched.
TRIM_DELAY_SECONDS = 1.0


def _load_libc() -> ctypes.CDLL | None:
    """glibc, when the process runs on it (None elsewhere: macOS, Windows, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None


_LIBC = _load_libc()


def thread_niceness() -> int | None:
    """The calling thread's niceness (None where threads have none of their own)."""
    if not (sys.platform.startswith("linux") and hasattr(os, "getpriority")):
        return None
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def lower_priority(by: int = HEAVY_NICENESS) -> bool:
    """Set the calling thread's niceness to the process's (its main thread's) plus ``by``,
    capped at 19; a thread already that low is left as it is (calling again does not lower it
    further). Linux only (elsewhere ``os.setpriority`` on a thread id would change the whole
    process): True if the thread now runs at the lower priority."""
    current = thread_niceness()
    if current is None or by <= 0:
        return False
    target = min(19, os.getpriority(os.PRIO_PROCESS, os.getpid()) + by)
    if current >= target:
        return True
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), target)
    except OSError:  # e.g. a sandbox that forbids it: the work runs at the usual priority
        return False
    return True


def give_back_memory() -> bool:
    """Return the C allocator's free memory to the system (glibc's ``malloc_trim(0)``); True
    if it could (glibc says whether any memory was released, which is not needed here)."""
    if _LIBC is None:
        return False
    _LIBC.malloc_trim(0)
    return True


def on_session_freed(state: object, *cleanups: Callable[[], None]) -> None:
    """When ``state`` (an object the session's state alone holds, such as its job board) is
    freed, i.e. when the session's state is: call each of ``cleanups`` (what else the session
    left behind), then give memory back shortly after."""
    weakref.finalize(state, _session_freed, cleanups)


def _session_freed(cleanups: tuple[Callable[[], None], ...]) -> None:
    for cleanup in cleanups:
        cleanup()
    _trim_later()


def _trim_later() -> None:
    timer = threading.Timer(TRIM_DELAY_SECONDS, give_back_memory)
    timer.daemon = True
    timer.start()
