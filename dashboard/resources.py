"""Memory a closed session's work leaves behind, given back (issue 31, item 4).

Memory freed by Python and numpy is kept by the C allocator (glibc's ``malloc``) for reuse:
the process's resident memory does not fall when a session's data are freed.
:func:`give_back_memory` asks glibc to return its free pages to the system
(``malloc_trim(0)``); it is called when a heavy job ends and when a session's state is freed
(:func:`on_session_freed`). Streamlit keeps a closed session's state for its reconnection
window (``server.disconnectedSessionTTL``, 120 s) and drops it when its session storage is next
written after that (another tab closing); Streamlit 1.67 then neither shuts the session down
nor removes its uploaded files (the whole file's bytes, held by its uploaded-file manager for
the server's lifetime): :func:`dashboard.jobs.board` has them removed when the session's state
is freed.

Garbage that only a full collection frees (reference cycles: a closed session's state, a
model fit's results) is collected by :func:`collect_garbage` at the end of a page's run, at
most every :data:`COLLECT_EVERY_SECONDS`: Streamlit's own collection after every script run
is turned off (``runner.postScriptGC = false`` in ``.streamlit/config.toml``), since each full
collection walks every object of the process while holding the GIL (see there).

Nothing here imports Streamlit.
"""

from __future__ import annotations

import ctypes
import gc
import sys
import threading
import time
import weakref
from collections.abc import Callable

#: Seconds between a session's state being freed and the memory's return to the system: the
#: rest of the session's objects are freed in the same collection, after the one watched.
TRIM_DELAY_SECONDS = 1.0
#: At most one full garbage collection in this many seconds (:func:`collect_garbage`).
COLLECT_EVERY_SECONDS = 30.0


def _load_libc() -> ctypes.CDLL | None:
    """glibc, when the process runs on it (None elsewhere: macOS, Windows, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:  # glibc's soname, loaded directly: find_library may run a compiler and write files
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None


_LIBC = _load_libc()


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


_clock = time.monotonic
_collection = threading.Lock()
_last_collection = [float("-inf")]


def collect_garbage() -> bool:
    """A full garbage collection (``gc.collect()``), unless one ran less than
    :data:`COLLECT_EVERY_SECONDS` ago or is running; True if it ran. ``app.py`` calls it at
    the end of each page run, in place of Streamlit's collection after every script run
    (``runner.postScriptGC``, turned off in ``.streamlit/config.toml``).

    Why: a full collection visits every object the collector tracks, the libraries' own
    (about 180,000 once pandas, statsmodels, scipy and scikit-learn are loaded: 0.4 s on a
    loaded 2-core machine) and every session's, and holds the GIL throughout. Streamlit runs
    one after every script run, fragment runs included: two sessions on a large file, whose
    live figures poll every :data:`dashboard.jobs.POLL_SECONDS`, kept the server in collections
    86% of the time (py-spy, ``bench/bench_isolation.py``), so the event loop, the health check
    and a third session's page waited for the GIL for seconds (issue 31, item 4). Cycles still
    need a full collection to be freed (a closed session's state, after which
    :func:`on_session_freed` gives its memory back; statsmodels' results), hence this one,
    at most every :data:`COLLECT_EVERY_SECONDS`."""
    if not _collection.acquire(blocking=False):
        return False  # another thread is collecting
    try:
        if _clock() - _last_collection[0] < COLLECT_EVERY_SECONDS:
            return False
        gc.collect()
        _last_collection[0] = _clock()
        return True
    finally:
        _collection.release()
