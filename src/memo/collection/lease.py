"""Who computes a collection's vectors: one process at a time, by a lease a crash releases.

The lease is an advisory lock (`flock`) on `embed.lock` beside the index: the kernel releases
it when its holder exits, however it exits (kill -9 included), so no stale lease outlives a
crash. The holder writes who it is and how fast it goes into the file, so a process that
finds the lease taken can say who is computing the vectors and about how long it will take.
Two threads of one process open the file separately and exclude each other the same way.
Where `fcntl` does not exist (Windows) every lease is granted: one process embeds twice at
worst, the index stays right.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # no advisory locks there: every lease granted

LEASE_FILE = "embed.lock"
TEXT_FILE = "text.lock"  # held while one process reads a collection's changed notes
WANTED_FILE = "wanted"  # its mtime: when a search last found this index's vectors missing


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a lease, as it wrote itself into the file."""

    pid: int
    since: float  # unix time it took the lease
    rate: float | None  # chunks per second it embeds at, once measured


class Lease:
    """A held lease on one index's vector stage; `release` (or the process ending) frees it."""

    def __init__(self, path: Path, handle: IO[str]) -> None:
        self.path = path
        self._handle: IO[str] | None = handle
        self.since = time.time()
        self.tell(None)

    def tell(self, rate: float | None) -> None:
        """Write who holds the lease and its speed (readers estimate the time left from it)."""
        if self._handle is None:
            return
        with contextlib.suppress(OSError):
            self._handle.seek(0)
            self._handle.truncate()
            self._handle.write(json.dumps({"pid": os.getpid(), "since": self.since, "rate": rate}))
            self._handle.flush()

    def release(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(OSError):
                self._handle.seek(0)
                self._handle.truncate()
            self._handle.close()  # closing the description releases the flock
            self._handle = None

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


def lease_path(index_path: Path) -> Path:
    return index_path.parent / LEASE_FILE


def acquire(index_path: Path, wait: bool = False) -> Lease | None:
    """The lease on this index's vector stage, or None when another holds it (`wait`: block
    until it is free). None also when the lock file cannot be made (a read-only index folder
    falls back elsewhere before this is asked)."""
    path = lease_path(index_path)
    try:
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - kept open while held
    except OSError:
        return None
    if fcntl is not None:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError:
            handle.close()
            return None
    return Lease(path, handle)


def holder(index_path: Path) -> Holder | None:
    """Who computes this index's vectors right now (None: nobody), from what the holder wrote.
    A holder whose process is gone (it crashed: the kernel freed its lock, the file still
    names it) is nobody. Never locks, so asking never gets in an embedder's way."""
    try:
        said = json.loads(lease_path(index_path).read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return None
    pid = said.get("pid") if isinstance(said, dict) else None
    if not isinstance(pid, int) or pid <= 0 or not _alive(pid):
        return None
    rate = said.get("rate")
    return Holder(
        pid,
        float(said.get("since") or 0.0),
        float(rate) if isinstance(rate, int | float) and rate > 0 else None,
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


@contextlib.contextmanager
def reading_notes(index_path: Path) -> Iterator[None]:
    """Held while this process does a collection's text stage (sync.Syncer): another process
    (a search's catch-up beside `memo index`, the watcher beside a search) waits for it, then
    finds the notes read, instead of reading and chunking the same notes at the same time. The
    wait is one collection's text stage (seconds), never its vectors."""
    handle = None
    try:
        handle = open(index_path.parent / TEXT_FILE, "a+", encoding="utf-8")  # noqa: SIM115
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    except OSError:  # cannot lock here (a read-only folder falls back elsewhere first)
        if handle is not None:
            handle.close()
        handle = None
    try:
        yield
    finally:
        if handle is not None:
            handle.close()


def want(index_path: Path) -> None:
    """Say that a search found this index's vectors missing: whoever computes vectors takes
    the most recently wanted index next (`wanted`). Best effort: a cache folder."""
    with contextlib.suppress(OSError):
        (index_path.parent / WANTED_FILE).touch()


def wanted(index_path: Path) -> float:
    """When a search last wanted this index's vectors (0: never)."""
    try:
        return os.stat(index_path.parent / WANTED_FILE).st_mtime
    except OSError:
        return 0.0
