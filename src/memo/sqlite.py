"""The SQLite helpers every memo database shares: opening, the stored profile, deleting.

apsw, not the stdlib sqlite3: it ships a current SQLite with FTS5 on every platform and can
load extensions (sqlite-vec) even where the Python build disabled that for sqlite3.

Every database is opened the same way: WAL (readers never block the writer), a busy timeout
(a second writer waits instead of failing), `synchronous=NORMAL` (WAL stays consistent after a
crash; the last transactions may be lost, and the notes can always rebuild them).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw

from .errors import IndexError_

# What any of memo's databases raises when SQLite fails (busy, full, damaged...): named here so
# that whoever only catches it (the library, of the registry's writes) never imports apsw
DatabaseError = apsw.Error
BUSY_TIMEOUT_MS = 10_000
PROTOCOL_RETRIES = 5  # opens retried on SQLITE_PROTOCOL (a WAL index being set up elsewhere)
SUFFIXES = ("", "-wal", "-shm")  # a database and the files WAL keeps beside it


def connect(
    path: Path, *, readonly: bool = False, vectors: bool = False, layout: tuple[str, ...] = ()
) -> apsw.Connection:
    """Open (creating if needed, unless read-only) a database with memo's settings.

    `vectors` loads sqlite-vec (the collection indexes need it; the registry does not).
    `layout`: pragmas that shape a new database (no page yet), page size and auto_vacuum, run
    before WAL mode writes its first page; never on an existing one (setting auto_vacuum again
    rewrites page 1, a write every reader's open would make).
    Failures raise IndexError_ with a hint.
    """
    flags = (
        apsw.SQLITE_OPEN_READONLY
        if readonly
        else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    )
    for attempt in range(PROTOCOL_RETRIES + 1):
        try:
            return _open(path, flags, readonly, vectors, layout)
        except apsw.ProtocolError as e:
            # SQLITE_PROTOCOL: another process was setting up the WAL index at that very moment
            # (seen with `memo index` and a search starting together); it passes
            if attempt == PROTOCOL_RETRIES:
                raise IndexError_(f"cannot open {path}: {e}") from e
            time.sleep(0.05 * 2**attempt)
    raise AssertionError("unreachable")


@functools.cache
def vectors_missing() -> str | None:
    """Why sqlite-vec cannot be loaded in this process (None: it can): the vector leg's
    indexes need it. Tried once, on a database in memory."""
    try:
        import sqlite_vec

        conn = apsw.Connection(":memory:")
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.close()
    except (ImportError, OSError, apsw.Error) as e:
        return f"the sqlite-vec extension is not loaded ({type(e).__name__}: {e})"
    return None


def _load_vectors(conn: apsw.Connection, path: Path) -> None:
    """sqlite-vec into `conn`; when it cannot be loaded, an IndexError_ that says so."""
    try:
        import sqlite_vec

        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
    except (ImportError, OSError, apsw.Error) as e:
        raise IndexError_(
            f"cannot open {path}: the sqlite-vec extension is not loaded ({type(e).__name__}: "
            f"{e}), so the vector leg is unavailable and memo cannot read this index",
            "Reinstall memo's dependencies: pip install --force-reinstall sqlite-vec",
        ) from e


def _open(
    path: Path, flags: int, readonly: bool, vectors: bool, layout: tuple[str, ...]
) -> apsw.Connection:
    try:
        conn = apsw.Connection(str(path), flags=flags)
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        if vectors:
            _load_vectors(conn, path)
        if not readonly:
            if layout and conn.execute("PRAGMA page_count").fetchone()[0] == 0:
                for pragma in layout:
                    conn.execute(pragma)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
    except apsw.ProtocolError:
        raise
    except apsw.FullError as e:
        raise IndexError_(
            f"cannot open {path}: the disk is full ({e})",
            "Free some space (or set MEMO_INDEX_DIR to another disk) and run `memo index` again.",
        ) from e
    except apsw.Error as e:
        raise IndexError_(f"cannot open {path}: {e}") from e
    return conn


def read_profile(conn: apsw.Connection) -> dict[str, Any] | None:
    """The profile a database was built with (meta table, key 'profile'); None if absent."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='profile'").fetchone()
    except apsw.SQLError:
        return None
    return json.loads(row[0]) if row else None


def write_profile(conn: apsw.Connection, profile: dict[str, Any]) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('profile', ?)",
        (json.dumps(profile, sort_keys=True),),
    )


def delete(path: Path) -> None:
    """Delete a database with its WAL and shared-memory files (missing ones are fine)."""
    for suffix in SUFFIXES:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")


def size_on_disk(path: Path) -> int:
    return sum(os.path.getsize(f"{path}{s}") for s in SUFFIXES if os.path.exists(f"{path}{s}"))


def last_write(path: Path) -> float | None:
    """Unix time of the last write to a database (its file or its WAL), None if absent. An
    empty WAL is no write: a reader that opens an index nobody holds open creates one."""
    times = []
    for suffix in ("", "-wal"):
        with contextlib.suppress(OSError):
            st = os.stat(f"{path}{suffix}")
            if st.st_size or not suffix:
                times.append(st.st_mtime)
    return max(times) if times else None


def signature(path: Path) -> str:
    """(mtime, size) of a database and its WAL: changes whenever a transaction commits; ''
    when the database does not exist."""
    parts = []
    for suffix in ("", "-wal"):
        try:
            st = os.stat(f"{path}{suffix}")
        except OSError:
            if not suffix:
                return ""
            continue
        parts.append(f"{st.st_mtime_ns}:{st.st_size}")
    return "/".join(parts)


@contextlib.contextmanager
def write_transaction(conn: apsw.Connection) -> Iterator[None]:
    """`BEGIN IMMEDIATE` ... `COMMIT`: one writer at a time, taken up front.

    A reader never blocks it and it never deadlocks upgrading a read lock; the busy timeout
    makes a second writer wait. On any error (KeyboardInterrupt included) it rolls back.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        # SQLite may already have rolled back by itself (SQLITE_FULL, I/O errors): a second
        # ROLLBACK would raise and hide the real error.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
