"""Who computes a collection's vectors: one process at a time, by a lease a crash releases.

The lease is a `flock` on `embed.lock` beside the index: the kernel releases it however its holder
exits (kill -9 included), so no stale lease outlives a crash. The holder writes who it is and how
fast it goes there, so others can say who computes the vectors and about how long it will take.
Threads of one process exclude each other the same way; without `fcntl` (Windows) every lease is
granted (one process embeds twice at worst, the index stays right). Reading changed notes (the
text stage) has its own lease, `text.lock`. A pass over the library takes both leases of every
collection it will do before it starts (`ahead`), so a search meanwhile neither reads those notes
nor waits for them: it answers from what is indexed and says who is at work.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
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
RECORD = 256  # bytes the holder's record is padded to: rewritten in place by one write


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a lease, as it wrote itself into the file."""

    pid: int
    since: float  # unix time it took the lease
    rate: float | None  # chunks per second it embeds at, once measured
    by: str = ""  # what it is: "memo index", "a search", "the watcher"
    ahead: bool = False  # a pass that took it before reaching this collection (it will)


class Lease:
    """A held lease (on one index's vector stage, or on reading its notes); `release` (or the
    process ending) frees it. The holder's record (pid, since, what it is, its rate) is in
    the file for the others to read: rewritten in place, never truncated while held, so a
    reader never finds it empty."""

    def __init__(self, path: Path, handle: IO[str] | None, **facts: Any) -> None:
        self.path = path
        self._handle = handle
        self.since = time.time()
        self.facts: dict[str, Any] = {"pid": os.getpid(), "since": self.since, **facts}
        self.tell(None)

    def tell(self, rate: float | None) -> None:
        """Write who holds the lease and its speed (readers estimate the time left from it)."""
        self.facts["rate"] = rate
        self._write()

    def _write(self) -> None:
        if self._handle is None:
            return
        record = json.dumps(self.facts).encode()
        with contextlib.suppress(OSError):
            os.pwrite(self._handle.fileno(), record.ljust(max(RECORD, len(record))), 0)

    @property
    def live(self) -> bool:
        """Still held (not released)."""
        return self._handle is not None

    def release(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(OSError):
                self._handle.truncate(0)
            self._handle.close()  # closing the description releases the flock
            self._handle = None

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


def lease_path(index_path: Path) -> Path:
    return index_path.parent / LEASE_FILE


def text_path(index_path: Path) -> Path:
    return index_path.parent / TEXT_FILE


def acquire(index_path: Path, wait: bool = False, **facts: Any) -> Lease | None:
    """The lease on this index's vector stage, or None when another holds it (`wait`: block
    until it is free). None also when the lock file cannot be made (a read-only index folder
    falls back elsewhere before this is asked)."""
    handle = _lock(lease_path(index_path), wait)
    return None if handle is None else Lease(lease_path(index_path), handle, **facts)


def acquire_text(
    index_path: Path, by: str, wait: bool = False, ahead: bool = False
) -> Lease | None:
    """The lease on reading this index's notes (sync.Syncer), or None when another process
    holds it (`wait`: block until it is free). `by` says what this process is, `ahead` that
    it takes it before reaching the collection. Where no lock file can be made, a lease that
    locks nothing: the notes are read anyway (a read-only folder falls back elsewhere first)."""
    path = text_path(index_path)
    handle = _lock(path, wait)
    if handle is None and not _lockable(path):
        return Lease(path, None)
    return None if handle is None else Lease(path, handle, by=by, ahead=ahead)


def _lock(path: Path, wait: bool) -> IO[str] | None:
    """The file `path` opened and flock'ed (None: taken, and not `wait`; or no file)."""
    try:  # not O_APPEND: the record is rewritten in place (pwrite appends under O_APPEND)
        handle = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, 0o644), "r+", encoding="utf-8")
    except OSError:
        return None
    if fcntl is not None:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError:
            handle.close()
            return None
    return handle


def _lockable(path: Path) -> bool:
    try:
        open(path, "a+").close()
    except OSError:
        return False
    return True


PASS_FILE = "pass.lock"  # beside a library's registry: a pass over it is running


def acquire_pass(registry_dir: Path, by: str) -> Lease | None:
    """Say for the whole library that a pass (`memo index`) runs: a search meanwhile leaves
    new descriptions to it (library/collections.py). None when another pass says so."""
    try:
        registry_dir.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    path = registry_dir / PASS_FILE
    handle = _lock(path, wait=False)
    return None if handle is None else Lease(path, handle, by=by)


def passing(registry_dir: Path) -> Holder | None:
    """The pass running over the library whose registry is there (None: none)."""
    return _holder(registry_dir / PASS_FILE)


def holder(index_path: Path) -> Holder | None:
    """Who computes this index's vectors right now (None: nobody), from what the holder wrote.
    A holder whose process is gone (it crashed: the kernel freed its lock, the file still
    names it) is nobody. Never locks, so asking never gets in an embedder's way."""
    return _holder(lease_path(index_path))


def reader(index_path: Path) -> Holder | None:
    """Who reads this index's notes right now (None: nobody), as `holder` tells the embedder."""
    return _holder(text_path(index_path))


def _holder(path: Path) -> Holder | None:
    try:
        said = json.loads(path.read_text(encoding="utf-8").strip() or "{}")
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
        str(said.get("by") or ""),
        said.get("ahead") is True,
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


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
