"""Downloads whose bytes are made when the user clicks, and are gone soon after.

How Streamlit 1.67 serves a download: ``st.download_button`` hands the bytes to the runtime's
media file manager, which keeps them in memory and serves them at ``/media/<id>`` to anyone
holding the URL, without checking the session. A file given as bytes is referenced by the
session that drew the button; when the tab closes, the session is kept for reconnection
(``server.disconnectedSessionTTL``, 120 s) and then dropped from that store without releasing
its references, so the file stays served for as long as the server runs. A file made by a
callable (a deferred download) is referenced by no session: the manager's cleanup
(``remove_orphaned_files``), which runs when any session's script run ends, marks it on one
pass and deletes it on the next; on a quiet server that may be never.

So every download of this app is deferred (:func:`download_button`):

- nothing is built on a rerun: the callable runs when the button is clicked;
- the callable reaches the session's data only through a weak reference to an object the
  session holds (kept in its state under the button's name: the prepared export, the built
  report, the recipe, a table): once the session is gone, nothing can be built from it;
- a daemon thread runs the manager's cleanup every :data:`CLEANUP_SECONDS`, so a file made for
  a click is deleted one to two periods later, whether or not anyone else uses the server.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit import runtime

from dashboard.state import SessionCache
from dashboard.text import literal
from deid_core.io.export import Export
from deid_core.report.provenance import FileFingerprint

#: Where a session keeps what its download buttons build from (button name -> object).
HELD_KEY = "deid.downloads"


def _cleanup_seconds(setting: str | None) -> float:
    """The cleanup period from ``DEID_DOWNLOAD_CLEANUP_SECONDS`` (unset or empty: 20 s)."""
    if not setting:
        return 20.0
    try:
        seconds = float(setting)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < float("inf"):
        raise ValueError("DEID_DOWNLOAD_CLEANUP_SECONDS must be a positive number of seconds")
    return seconds


#: Period of the cleanup of made files: a download's URL answers for 1-2 periods after the
#: click (the browser fetches it at once). ``DEID_DOWNLOAD_CLEANUP_SECONDS`` overrides the
#: default of 20 s (a shorter period frees made files sooner, at one sweep per period).
CLEANUP_SECONDS = _cleanup_seconds(os.environ.get("DEID_DOWNLOAD_CLEANUP_SECONDS"))

_cleaner_lock = threading.Lock()
_cleaner: threading.Thread | None = None


def _clean_forever() -> None:
    while True:
        time.sleep(CLEANUP_SECONDS)
        if runtime.exists():
            runtime.get_instance().media_file_mgr.remove_orphaned_files()


def _ensure_cleaner() -> None:
    """Start the cleanup thread once per server process."""
    global _cleaner
    with _cleaner_lock:
        if _cleaner is None or not _cleaner.is_alive():
            _cleaner = threading.Thread(target=_clean_forever, name="download-cleanup")
            _cleaner.daemon = True
            _cleaner.start()


class SessionEnded(RuntimeError):
    """The session that drew a download button is gone: there is nothing to build from."""


def deferred(owner: Any, build: Callable[[Any], bytes | str]) -> Callable[[], bytes | str]:
    """A callable for ``st.download_button``'s ``data``: ``build(owner)`` at the click, with
    ``owner`` held weakly (``build`` itself must not hold the session's data)."""
    reference = weakref.ref(owner)

    def make() -> bytes | str:
        target = reference()
        if target is None:
            raise SessionEnded("The session that offered this download has ended.")
        return build(target)

    return make


def download_button(
    label: str,
    owner: Any,
    build: Callable[[Any], bytes | str],
    *,
    name: str,
    where: Any = st,
    **kwargs: Any,
) -> None:
    """``st.download_button`` (in ``where``, its label shown as literal text) whose file
    ``build(owner)`` makes at the click (:func:`deferred`). The session holds ``owner`` under
    ``name`` (the callable only weakly); the click does not rerun the page."""
    _ensure_cleaner()
    st.session_state.setdefault(HELD_KEY, {})[name] = owner
    where.download_button(literal(label), data=deferred(owner, build), on_click="ignore", **kwargs)


def forget(name: str) -> None:
    """Let go of what the button ``name`` builds from: its file can no longer be made (a
    secret the page no longer offers does not stay reachable from the session)."""
    st.session_state.get(HELD_KEY, {}).pop(name, None)


@dataclass(frozen=True)
class PreparedFile:
    """A file to send, for the current settings (``key``): written once by ``write`` when
    first asked for, and kept in this session (one file at a time), so that the download and
    the report's SHA-256 of it are the same bytes (an Excel or Stata file written twice
    differs in its time stamp)."""

    key: Hashable
    file_name: str
    description: str
    write: Callable[[], Export]

    @staticmethod
    def _cache() -> SessionCache:
        return SessionCache("export_file", size=1)

    def cached(self) -> Export | None:
        """The file, if it was written for these settings."""
        return self._cache().peek(self.key)

    def prepared(self) -> Export:
        """The file, written now if it was not yet."""
        exported = self.cached()
        if exported is None:
            exported = self.write()
            self._cache().put(self.key, exported)
        return exported

    def keep(self, exported: Export) -> None:
        """Offer ``exported`` (the bytes a report hashed) for these settings."""
        if self.cached() is not exported:
            self._cache().put(self.key, exported)

    def fingerprint(self, exported: Export) -> FileFingerprint:
        """Name, size and SHA-256 of ``exported``'s bytes, for the report."""
        return FileFingerprint.of(exported.data, self.file_name, self.description)
