"""The memory-bounded cache of a session's workspace (:class:`LRUCache`) and its named parts
(:class:`CacheNamespace`): what a slider move does not change is kept here, within a byte budget
that grows with the data (:func:`default_cache_bytes`), never shared between sessions."""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import fields, is_dataclass
from typing import Any

import numpy as np
import pandas as pd

from deid_core.cancellation import check_cancelled

#: Text values (object dtype) are counted at this many bytes each by :func:`approximate_nbytes`
#: (a pointer and a small Python object).
_OBJECT_VALUE_BYTES = 64
#: How deep :func:`approximate_nbytes` looks into containers and objects.
_NBYTES_DEPTH = 6
#: Bytes a workspace's cache may hold per cell (record x column) of its data, within
#: ``MIN_CACHE_BYTES .. MAX_CACHE_BYTES``: a move keeps a masked column, its codes and its
#: class sizes, a few arrays of 4 or 8 bytes per record, for the columns it touches (192 MB
#: for a million records of 6 columns).
CACHE_BYTES_PER_CELL = 32
MIN_CACHE_BYTES = 64 << 20
MAX_CACHE_BYTES = 2 << 30
#: Most entries a cache holds, however small they are.
MAX_CACHE_ENTRIES = 1024
#: Entries below this size are not dropped to free memory (only by the count): a model fit
#: takes kilobytes to keep and seconds to redo, a masked column megabytes and milliseconds.
SMALL_ENTRY_BYTES = 1 << 20
_MISSING = object()


def approximate_nbytes(value: Any) -> int:
    """About how many bytes ``value`` holds: numpy arrays and pandas objects by their buffers
    (text in object columns at 64 bytes a value), containers, dataclasses and plain objects by
    their parts (an array reached twice counted once), anything else by ``sys.getsizeof``."""
    seen: set[int] = set()

    def size(item: Any, depth: int) -> int:
        if id(item) in seen or depth > _NBYTES_DEPTH:
            return 0
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            return int(item.nbytes)
        if isinstance(item, (pd.Series, pd.Index)):
            extra = len(item) * _OBJECT_VALUE_BYTES if item.dtype == object else 0
            index = size(item.index, depth + 1) if isinstance(item, pd.Series) else 0
            return int(item.memory_usage(deep=False)) + extra + index
        if isinstance(item, pd.DataFrame):
            text = len(item) * sum(pd.api.types.is_object_dtype(d) for d in item.dtypes)
            return int(item.memory_usage(index=True, deep=False).sum()) + text * _OBJECT_VALUE_BYTES
        if isinstance(item, (str, bytes, bytearray)):
            return sys.getsizeof(item)
        if isinstance(item, dict):
            parts = [*item.keys(), *item.values()]
        elif isinstance(item, (tuple, list, set, frozenset)):
            parts = list(item)
        elif is_dataclass(item) and not isinstance(item, type):
            parts = [getattr(item, f.name) for f in fields(item)]
        elif hasattr(item, "__dict__") and not isinstance(item, type):
            parts = list(vars(item).values())
        else:
            return sys.getsizeof(item)
        return sys.getsizeof(item) + sum(size(part, depth + 1) for part in parts)

    return size(value, 0)


class LRUCache:
    """The one cache of a session: least-recently-used entries are dropped once the entries
    hold more than ``max_bytes`` (by :func:`approximate_nbytes`; large entries first, see
    :data:`SMALL_ENTRY_BYTES`) or number more than ``max_entries``. Safe to share between
    threads (a session's background jobs use it too).

    Keys are tuples whose first item names what is cached (``("codes", column, steps)``);
    :meth:`put` can also keep at most ``limit`` entries of that name. A value larger than
    ``max_bytes`` is returned but not kept. A workspace owns one (:attr:`Workspace.cache`), so
    it is never shared between sessions and goes away when the data change.
    """

    def __init__(self, max_bytes: int, max_entries: int = MAX_CACHE_ENTRIES) -> None:
        if max_bytes < 1 or max_entries < 1:
            raise ValueError("A cache must be able to hold at least one byte and one entry.")
        self.max_bytes = int(max_bytes)
        self.max_entries = int(max_entries)
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._nbytes = 0
        self._lock = threading.RLock()
        self._making: dict[Hashable, tuple[threading.Event, int]] = {}
        self._waiting: dict[int, Hashable] = {}  # thread -> the entry it waits for

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @property
    def nbytes(self) -> int:
        """Bytes the entries hold (approximately)."""
        with self._lock:
            return self._nbytes

    def peek(self, key: Hashable, default: Any = None) -> Any:
        """The entry for ``key`` (now the most recently used), or ``default``."""
        with self._lock:
            found = self._entries.get(key, _MISSING)
            if found is _MISSING:
                return default
            self._entries.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: Any, limit: int | None = None) -> None:
        """Keep ``value`` under ``key``; with ``limit``, at most that many entries whose key
        starts with the same name."""
        nbytes = approximate_nbytes(value)
        with self._lock:
            self._drop(key)
            self._entries[key] = (value, nbytes)
            self._nbytes += nbytes
            if limit is not None:
                name = _name_of(key)
                same = [k for k in self._entries if _name_of(k) == name]
                for old in same[: max(len(same) - limit, 0)]:
                    self._drop(old)
            while self._nbytes > self.max_bytes:
                self._drop(self._oldest(min_bytes=SMALL_ENTRY_BYTES))
            while len(self._entries) > self.max_entries:
                self._drop(next(iter(self._entries)))

    def get_or_make(self, key: Hashable, make: Callable[[], Any], limit: int | None = None) -> Any:
        """The entry for ``key``, else ``make()``, kept (see :meth:`put`) and returned. ``make``
        runs outside the lock; a thread asking for an entry another thread is making waits
        for it rather than making it twice (a model fit of a large file takes seconds), unless
        that thread waits, directly or through others, for an entry this one is making: then
        waiting would never end (a page's run and a background job can ask for the same two
        entries in opposite orders), and the entry is made here, without the guard."""
        check_cancelled()  # every piece of a workspace's work passes here
        me = threading.get_ident()
        while True:
            with self._lock:
                found = self._entries.get(key, _MISSING)
                if found is not _MISSING:
                    self._entries.move_to_end(key)
                    return found[0]
                making = self._making.get(key)
                if making is None:
                    done = threading.Event()
                    self._making[key] = (done, me)
                    break
                if making[1] == me or self._waits_for(making[1], me):
                    return make()  # asked again while making it, or a wait that would not end
                self._waiting[me] = key
            try:
                making[0].wait()  # then look again: made and kept, or else make it here
            finally:
                with self._lock:
                    del self._waiting[me]
        try:
            value = make()
            self.put(key, value, limit)
        finally:
            with self._lock:
                del self._making[key]
            done.set()
        return value

    def items(self) -> list[tuple[Hashable, Any]]:
        """The entries, least recently used first (a snapshot)."""
        with self._lock:
            return [(key, value) for key, (value, _) in self._entries.items()]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._nbytes = 0

    def _waits_for(self, thread: int, me: int) -> bool:
        """Whether ``thread`` waits for an entry that ``me`` is making, directly or through
        the threads making what it waits for (called under the lock)."""
        seen = set()
        while thread not in seen:
            seen.add(thread)
            key = self._waiting.get(thread, _MISSING)
            making = None if key is _MISSING else self._making.get(key)
            if making is None:
                return False
            thread = making[1]
            if thread == me:
                return True
        return False

    def _oldest(self, min_bytes: int) -> Hashable:
        """The least recently used key holding at least ``min_bytes`` (else the least
        recently used of all)."""
        for key, (_, nbytes) in self._entries.items():
            if nbytes >= min_bytes:
                return key
        return next(iter(self._entries))

    def _drop(self, key: Hashable) -> None:
        found = self._entries.pop(key, None)
        if found is not None:
            self._nbytes -= found[1]


def _name_of(key: Hashable) -> Hashable:
    return key[0] if isinstance(key, tuple) and key else key


class CacheNamespace:
    """The entries of an :class:`LRUCache` whose keys start with ``name``, used as a dict
    (what a masking step's ``cache=`` and the dashboard's per-page caches expect)."""

    def __init__(self, cache: LRUCache, name: str, limit: int | None = None) -> None:
        self.cache, self.name, self.limit = cache, name, limit

    def __contains__(self, key: Hashable) -> bool:
        return (self.name, key) in self.cache

    def __getitem__(self, key: Hashable) -> Any:
        found = self.cache.peek((self.name, key), _MISSING)
        if found is _MISSING:
            raise KeyError(key)
        return found

    def __setitem__(self, key: Hashable, value: Any) -> None:
        self.cache.put((self.name, key), value, self.limit)

    def get(self, key: Hashable, default: Any = None) -> Any:
        return self.cache.peek((self.name, key), default)

    def get_or_make(self, key: Hashable, make: Callable[[], Any]) -> Any:
        return self.cache.get_or_make((self.name, key), make, self.limit)

    def values(self) -> list[Any]:
        """This namespace's entries, least recently used first."""
        return [value for key, value in self.cache.items() if _name_of(key) == self.name]


def default_cache_bytes(frame: pd.DataFrame) -> int:
    """The cache budget of a workspace on ``frame`` (:data:`CACHE_BYTES_PER_CELL`)."""
    cells = len(frame) * max(frame.shape[1], 1)
    return int(np.clip(cells * CACHE_BYTES_PER_CELL, MIN_CACHE_BYTES, MAX_CACHE_BYTES))
