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

Nothing here imports Streamlit.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import weakref
from collections.abc import Callable

#: Seconds between a session's state being freed and the memory's return to the system: the
#: rest of the session's objects are freed in the same collection, after the one watched.
TRIM_DELAY_SECONDS = 1.0


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
