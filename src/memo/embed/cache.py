"""Vectors are reused, never recomputed: a content-addressed cache of passage embeddings.

`EmbeddingCache` is one SQLite file (`$XDG_CACHE_HOME/memo/embeddings/vectors.db`) shared by
every collection and process of the user; `open_cache(settings)` the process's (None: off),
`cache_status` what `memo status` shows, `counting()` what it served inside one call. The key
is blake2b of the engine's build (`build_id`: everything that decides the vector) and the exact
text the model reads, so a vector of another build is never found. Invariants: bounded by
MEMO_EMBED_CACHE_MB (least recently used go first), never needed for a correct index, every
row checked against its keyed checksum on read, every write one WAL transaction; queries are
not cached. The rules and their figures: docs/embedders.md, "The embedding cache".
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..config import Settings, cache_home

log = logging.getLogger("memo.embed")

FOLDER, FILE = "embeddings", "vectors.db"
FORMAT = 1  # bump when the table or the key changes: an older file is started again
GROUP = 32  # passages embedded between two writes (what an interrupt can lose at most)
TOUCH = 3600  # seconds: a hit refreshes its row's last use when that is older than this
EVICT_TO = 0.9  # eviction brings the used size down to this share of the cap
PAGE = 8192  # ~5 vectors of 384 float32 per page (4096 would hold 2 and waste a quarter)
BUSY_MS = 5_000  # a writer waits this long for another; then the store is skipped (a cache)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vectors(
    id INTEGER PRIMARY KEY,  -- the key's first 8 bytes, as a signed integer
    key BLOB NOT NULL,       -- the whole 16-byte key (a collision of ids is a miss)
    vec BLOB NOT NULL,       -- float32, little-endian
    sum BLOB NOT NULL,       -- blake2b(vec, key=key), 8 bytes: damage is a miss
    used INTEGER NOT NULL    -- unix seconds of the last use (LRU)
);
"""


def cache_path() -> Path:
    return cache_home() / "memo" / FOLDER / FILE


def passage_key(build: str, text: str) -> bytes:
    """The key of one passage: the build, then the exact text the model reads."""
    return hashlib.blake2b(f"{build}\x00passage: {text}".encode(), digest_size=16).digest()


def _checksum(key: bytes, vec: bytes) -> bytes:
    return hashlib.blake2b(vec, digest_size=8, key=key).digest()


def _row_id(key: bytes) -> int:
    return int.from_bytes(key[:8], "little", signed=True)


class EmbeddingCache:
    """One cache file, opened on first use; safe to share between threads and processes.

    Every method is best effort: a cache that cannot be opened, read or written makes its
    callers embed (and says so once in the log), never fail.
    """

    def __init__(self, path: Path, cap_bytes: int, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.cap_bytes = cap_bytes
        self.clock = clock  # unix seconds of a use (LRU); tests/test_embed_cache.py moves it
        self._conn: Any = None
        self._lock = threading.RLock()
        self._broken = False  # could not be opened at all: behave as disabled
        self._warned: set[str] = set()

    # ------------------------------------------------------------------ the file
    def _connect(self) -> Any:
        if self._conn is not None or self._broken:
            return self._conn
        try:
            self._conn = self._open()
        except Exception as e:  # apsw.Error, OSError: the cache is off for this process
            self._broken = True
            self._warn("open", f"embedding cache {self.path} cannot be used ({e}); embedding all")
        return self._conn

    def _open(self) -> Any:
        import apsw

        self.path.parent.mkdir(parents=True, exist_ok=True)
        for attempt in (1, 2):
            conn = apsw.Connection(str(self.path))
            try:
                conn.set_busy_timeout(BUSY_MS)
                if conn.execute("PRAGMA page_count").fetchone()[0] == 0:
                    conn.execute(f"PRAGMA page_size={PAGE}")
                    conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.execute(SCHEMA)
                    row = conn.execute("SELECT value FROM meta WHERE key='format'").fetchone()
                    if row is None:
                        conn.execute(
                            "INSERT OR IGNORE INTO meta VALUES ('format', ?), ('created', ?),"
                            " ('hits', 0), ('misses', 0), ('vectors', 0)",
                            (FORMAT, time.time()),
                        )
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                if row is not None and row[0] != FORMAT:
                    raise apsw.CorruptError(f"format {row[0]}, this memo writes {FORMAT}")
                return conn
            except (apsw.CorruptError, apsw.NotADBError) as e:
                conn.close()
                if attempt == 2:
                    raise
                self._warn(
                    "damaged", f"embedding cache {self.path} was damaged ({e}): started again"
                )
                self._delete_files()
        raise AssertionError("unreachable")

    def _delete_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")

    def _warn(self, kind: str, msg: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            log.warning("%s", msg)

    def _damaged(self, e: Exception) -> None:
        """SQLite found the file damaged mid-use: start it again (nothing in it is needed)."""
        self._warn("damaged", f"embedding cache {self.path} was damaged ({e}): started again")
        self.close()
        self._delete_files()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    self._conn.close()
                self._conn = None

    # ------------------------------------------------------------------ vectors
    def get(self, keys: Sequence[bytes], dim: int) -> dict[bytes, np.ndarray]:
        """The stored vectors of these keys (those found and intact), last use refreshed."""
        import apsw

        if not keys:
            return {}
        with self._lock:
            conn = self._connect()
            if conn is None:
                return {}
            try:
                return self._get(conn, keys, dim)
            except (apsw.CorruptError, apsw.NotADBError) as e:
                self._damaged(e)
            except apsw.Error as e:  # busy beyond the timeout, I/O: embed instead
                self._warn("read", f"embedding cache {self.path} could not be read ({e})")
            return {}

    def _get(self, conn: Any, keys: Sequence[bytes], dim: int) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        stale: list[int] = []
        bad: list[int] = []
        old = int(self.clock()) - TOUCH
        wanted = {_row_id(k): k for k in keys}
        ids = list(wanted)
        for a in range(0, len(ids), 500):
            part = ids[a : a + 500]
            marks = ",".join("?" * len(part))
            for rid, key, vec, check, used in conn.execute(
                f"SELECT id, key, vec, sum, used FROM vectors WHERE id IN ({marks})", part
            ):
                if key != wanted[rid]:
                    continue  # another text's key shares the first 8 bytes: a miss
                if len(vec) != 4 * dim or _checksum(key, vec) != check:
                    bad.append(rid)
                    continue
                found[key] = np.frombuffer(vec, dtype="<f4").astype(np.float32)
                if used < old:
                    stale.append(rid)
        if bad:
            self._warn("row", f"embedding cache {self.path}: {len(bad)} damaged rows replaced")
        if stale or bad:
            now = int(self.clock())

            def refresh() -> None:
                conn.executemany("UPDATE vectors SET used=? WHERE id=?", [(now, i) for i in stale])
                self._delete_rows(conn, bad)

            self._write(conn, refresh)
        return found

    def put(
        self,
        items: Sequence[tuple[bytes, np.ndarray]],
        hits: int,
        misses: int,
        replace: bool = True,
    ) -> None:
        """Store vectors (key, float32 vector) and count one lookup's hits and misses;
        `replace=False` keeps a vector already stored under the same key."""
        import apsw

        with self._lock:
            conn = self._connect()
            if conn is None:
                return
            try:
                self._write(conn, lambda: self._put(conn, items, hits, misses, replace))
                if items:
                    self._bound(conn)
            except (apsw.CorruptError, apsw.NotADBError) as e:
                self._damaged(e)

    def _put(
        self,
        conn: Any,
        items: Sequence[tuple[bytes, np.ndarray]],
        hits: int,
        misses: int,
        replace: bool,
    ) -> None:
        now = int(self.clock())
        added = 0
        for key, vec in items:
            blob = np.ascontiguousarray(vec, dtype="<f4").tobytes()
            row = (_row_id(key), key, blob, _checksum(key, blob), now)
            conn.execute(
                "INSERT OR IGNORE INTO vectors(id, key, vec, sum, used) VALUES (?,?,?,?,?)", row
            )
            if conn.changes():
                added += 1
            elif replace:  # stored meanwhile by another process, or a colliding id: the newer wins
                conn.execute(
                    "UPDATE vectors SET key=?, vec=?, sum=?, used=? WHERE id=?", (*row[1:], row[0])
                )
        conn.execute(
            "UPDATE meta SET value = value + CASE key WHEN 'hits' THEN ? WHEN 'misses' THEN ?"
            " ELSE ? END WHERE key IN ('hits', 'misses', 'vectors')",
            (hits, misses, added if items else 0),
        )

    def _write(self, conn: Any, work: Any) -> None:
        """Run `work` in one write transaction; a busy or full disk skips it (a cache)."""
        import apsw

        try:
            conn.execute("BEGIN IMMEDIATE")  # the write lock first: no stale-snapshot upgrade
            try:
                work()
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except (apsw.CorruptError, apsw.NotADBError):
            raise
        except apsw.Error as e:  # BusyError past the timeout, FullError, ReadOnlyError
            self._warn("write", f"embedding cache {self.path} could not be written ({e})")

    def _delete_rows(self, conn: Any, ids: list[int]) -> None:
        if ids:
            conn.executemany("DELETE FROM vectors WHERE id=?", [(i,) for i in ids])
            conn.execute("UPDATE meta SET value = value - ? WHERE key='vectors'", (len(ids),))

    def used_bytes(self, conn: Any) -> int:
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        return page * (pages - free)

    def _bound(self, conn: Any) -> None:
        """Over the cap: drop the least recently used rows down to EVICT_TO of it."""
        used = self.used_bytes(conn)
        if used <= self.cap_bytes:
            return
        rows = conn.execute("SELECT value FROM meta WHERE key='vectors'").fetchone()[0]
        per_row = used / max(rows, 1)
        drop = max(1, int((used - EVICT_TO * self.cap_bytes) / per_row) + 1)

        def evict() -> None:
            ids = [
                r[0]
                for r in conn.execute("SELECT id FROM vectors ORDER BY used, id LIMIT ?", (drop,))
            ]
            self._delete_rows(conn, ids)

        self._write(conn, evict)
        with contextlib.suppress(Exception):
            conn.execute("PRAGMA incremental_vacuum")  # give the pages back to the disk

    def status(self) -> dict[str, Any]:
        return read_status(self.path, self.cap_bytes)


def read_status(path: Path, cap_bytes: int) -> dict[str, Any]:
    """Size, cap, vectors and hit rate of a cache file, read without creating or changing it."""
    out: dict[str, Any] = {
        "path": str(path),
        "enabled": cap_bytes > 0,
        "cap_bytes": cap_bytes,
        "size_bytes": 0,
        "vectors": 0,
        "hits": 0,
        "misses": 0,
        "hit_rate": None,
    }
    try:
        out["size_bytes"] = sum(
            os.path.getsize(f"{path}{s}") for s in ("", "-wal") if os.path.exists(f"{path}{s}")
        )
    except OSError:
        pass
    if not path.is_file():
        return out
    import apsw

    try:
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            conn.set_busy_timeout(1000)
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        finally:
            conn.close()
    except apsw.Error as e:
        out["error"] = f"unreadable ({e}): it is started again on next use"
        return out
    hits, misses = int(meta.get("hits", 0)), int(meta.get("misses", 0))
    out.update(vectors=int(meta.get("vectors", 0)), hits=hits, misses=misses)
    out["hit_rate"] = round(hits / (hits + misses), 4) if hits + misses else None
    return out


_open: dict[tuple[str, int], EmbeddingCache] = {}
_open_lock = threading.Lock()


def cap_of(settings: Settings) -> int:
    return max(0, settings.embed_cache_mb) * 1024 * 1024


def open_cache(settings: Settings) -> EmbeddingCache | None:
    """The process's cache at the user cache path for these settings; None when disabled."""
    cap = cap_of(settings)
    if cap <= 0:
        return None
    key = (str(cache_path()), cap)
    with _open_lock:
        if key not in _open:
            _open[key] = EmbeddingCache(cache_path(), cap)
        return _open[key]


def cache_status(settings: Settings) -> dict[str, Any]:
    """What `memo status` shows about the embedding cache (never creates it)."""
    return read_status(cache_path(), cap_of(settings))


@dataclass(slots=True)
class CacheCounts:
    """What the cache was asked inside one `counting()`: passages found and passages embedded."""

    hits: int = 0
    misses: int = 0


_counts: ContextVar[CacheCounts | None] = ContextVar("memo_cache_counts", default=None)


@contextlib.contextmanager
def counting() -> Iterator[CacheCounts]:
    """Count what every caching embedder serves inside the block, in this thread (a thread
    the block starts counts too when it runs in a copy of this context)."""
    counts = CacheCounts()
    token = _counts.set(counts)
    try:
        yield counts
    finally:
        _counts.reset(token)


def counts_here() -> CacheCounts | None:
    """The counts of the innermost `counting()` around this call (None: nobody counts)."""
    return _counts.get()
