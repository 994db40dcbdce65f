"""A bound on open indexes: at most `cap` stay open, the least recently used closes first.

A library of 100,000 collections searched with scope `*` opens them one after another; each
open index holds three descriptors (db, -wal, -shm), so an unbounded cache runs out of file
descriptors long before the end. A closed index reopens lazily on its next use (~1 ms).

The pool owns the open handles; a collection asks it for its own by path and never keeps one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the module stays cheap to import: drivers call raise_open_files_limit early
    from .store import IndexStore

MAX_OPEN = 2048  # indexes open at once when the descriptor limit allows
FD_RESERVE = 256  # descriptors left for everything else (sockets, notes being read, the model)


class StorePool:
    def __init__(self, cap: int = 64) -> None:
        self.cap = max(2, cap)
        self._open: dict[Path, IndexStore] = {}  # insertion order = recency

    def get(self, path: Path) -> IndexStore | None:
        """The open index at `path` (now the most recently used), or None."""
        store = self._open.pop(path, None)
        if store is not None:
            self._open[path] = store
        return store

    def add(self, store: IndexStore) -> None:
        old = self._open.pop(store.path, None)
        if old is not None and old is not store:
            old.close()
        self._open[store.path] = store
        while len(self._open) > self.cap:
            self._open.pop(next(iter(self._open))).close()

    def close(self, path: Path) -> None:
        store = self._open.pop(path, None)
        if store is not None:
            store.close()

    def __len__(self) -> int:
        return len(self._open)

    def close_all(self) -> None:
        for store in self._open.values():
            store.close()
        self._open.clear()


def open_files_cap() -> int:
    """How many indexes may stay open under the process's descriptor limit (at most MAX_OPEN).

    Drivers raise the limit at start (`raise_open_files_limit`); a library used from Python
    keeps whatever limit its process has.
    """
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, ValueError, OSError):  # no `resource` (Windows)
        return 64
    if soft == resource.RLIM_INFINITY:
        return MAX_OPEN
    return max(16, min(MAX_OPEN, (soft - FD_RESERVE) // 3))


def raise_open_files_limit() -> None:
    """Raise the soft limit on open files towards the hard one, enough for MAX_OPEN indexes.

    Reopening an index costs ~1 ms (connect, pragmas, sqlite-vec, profile check); a search over
    1,000 collections with 64 kept open reopened every one twice (2.5 s of a 2.8 s search).
    Called once by each driver (CLI, servers, watcher) at start, never by the core.
    """
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = MAX_OPEN * 3 + FD_RESERVE
        if soft != resource.RLIM_INFINITY and soft < want:
            new = want if hard == resource.RLIM_INFINITY else min(want, hard)
            if new > soft:
                resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    except (ImportError, ValueError, OSError):  # no `resource`, or not allowed
        pass
