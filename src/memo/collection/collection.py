"""One collection: a folder of notes and its rebuildable index.

The index follows the files, never the other way round. `sync` compares (path, mtime, size)
with the `files` table, hashes only what differs, re-chunks only files whose hash changed, and
re-embeds only chunks whose text is new (an edit of one section re-embeds that section). A
file's rows change in one `BEGIN IMMEDIATE` transaction, so a reader never sees half a file and a
crash leaves the previous state of that file. Any change of schema, chunker, lexical analyser or
embedding model drops the index and builds it again.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import logging
import os
import shutil
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from ..config import Settings, cache_home
from ..embed import Embedder
from ..errors import EmbedderUnavailableError, IndexError_
from . import db as dbm
from .chunker import CHUNKER_VERSION, Chunk, chunk_note, decode, passage_text
from .files import FileStat, Rejected, file_identity, note_files, shown
from .filters import Filter
from .lexical import LEXICAL_VERSION, lex_text
from .meta import CollectionMeta

Progress = Callable[[int], None]  # called with the number of files just finished
VEC_SCAN_MAX = 32  # up to this many chunks, score vectors in numpy instead of a vec0 KNN
EMBED_BATCH = 64  # chunks per embedder call; files are written as their chunks are embedded
_NOVEC = "novec:"  # hash prefix of a file indexed while the embedder was down: redo it later
# Skip reasons that are failures (the file could not be read), not choices (too large, binary).
FAILURE_PREFIXES = ("unreadable", "cannot read", "cannot stat", "error", "folder cannot be read")
# A damaged database file: drop it and rebuild from the notes (the notes are the truth). A
# damaged page can also hold text that is not UTF-8 (SQLite never checks it): apsw then fails
# to decode a value it reads.
CORRUPT = (apsw.CorruptError, apsw.NotADBError, UnicodeDecodeError)

log = logging.getLogger("memo.index")


SYNC_COUNTERS = (
    "new",
    "changed",
    "removed",
    "unchanged",
    "touched",
    "skipped",
    "chunks_embedded",
    "chunks_reused",
)


@dataclass(slots=True)
class SyncReport:
    """What one sync did to one collection."""

    collection: str
    new: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    touched: int = 0  # mtime moved, content identical: nothing re-embedded
    skipped: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    rebuilt: str = ""  # why the index was rebuilt from scratch, if it was
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    embed_seconds: float = 0.0
    # (action, path relative to the library root) per file this sync wrote: new, changed,
    # removed, touched or skipped. Not part of to_dict: a driver logs it, one line per file.
    files: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            **{k: getattr(self, k) for k in SYNC_COUNTERS},
            "rebuilt": self.rebuilt,
            "warnings": self.warnings,
            "seconds": round(self.seconds, 3),
        }

    @property
    def did_work(self) -> bool:
        return bool(self.new or self.changed or self.removed or self.touched or self.rebuilt)


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: int
    path: str  # relative to the collection folder
    heading: str
    line: int
    text: str
    mtime_ns: int


@dataclass(slots=True)
class _Pending:
    """A file read and chunked, waiting for its vectors."""

    path: str
    stat: FileStat
    hash: str
    chunks: list[Chunk]
    passages: list[str]
    note: str
    meta: dict[str, Any]
    is_new: bool


def _hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _read_capped(path: Path, limit: int) -> bytes | None:
    """The file's bytes, or None when it holds more than `limit` (it grew since the stat).

    Opened non-blocking and checked to be a regular file: a FIFO swapped in after the walk
    must not hang the indexer.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        parts, total = [], 0
        while total <= limit:
            block = os.read(fd, min(1 << 20, limit + 1 - total))
            if not block:
                break
            parts.append(block)
            total += len(block)
    finally:
        os.close(fd)
    return None if total > limit else b"".join(parts)


def _healing(method: Callable[..., Any]) -> Callable[..., Any]:
    """Run a read of the index; if the database turns out damaged, rebuild it and run again."""

    @functools.wraps(method)
    def run(self: Collection, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except CORRUPT as e:
            self._heal(e)
            return method(self, *args, **kwargs)

    return run


def index_dir_for(folder: Path, settings: Settings, real: str | None = None) -> Path:
    """`<folder>/.memo/`; under MEMO_INDEX_DIR, or the user cache for read-only notes.

    Outside the folder, the name carries a hash of the folder's real path (`real`, when the
    caller knows it already: resolving 100,000 folders one by one is most of a registry rebuild).
    """
    base = settings.index_dir
    local = folder / ".memo"
    if base is None and not local.is_dir() and not os.access(folder, os.W_OK):
        base = cache_home() / "memo" / "indexes"
    if base is None:
        return local
    real = real or os.path.realpath(folder)
    slug = "".join(c if c.isalnum() else "-" for c in folder.name)[:40]
    return base / f"{slug}-{_hash(real.encode())[:12]}"


def _nearest(rows: list[Any], q: np.ndarray, n: int) -> list[tuple[int, float]]:
    """The n (rowid, embedding blob) rows most similar to q, as (rowid, cosine), best first."""
    if not rows:
        return []
    mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    sims = mat @ q
    order = np.argsort(-sims, kind="stable")[:n]
    return [(int(rows[i][0]), float(sims[i])) for i in order]


def _failures_apart(
    items: list[dict[str, str]],
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Split status entries {path, why} into skipped (a choice: too large, binary, a FIFO) and
    failed {path, error} (memo could not read what should have been a note)."""
    failed = [
        {"path": x["path"], "error": x["why"]}
        for x in items
        if x["why"].startswith(FAILURE_PREFIXES)
    ]
    return [x for x in items if not x["why"].startswith(FAILURE_PREFIXES)], failed


def _estimate_tokens(passage: str) -> int:
    # Used only when no embedder can count: errs on the long side (XLM-R averages 3-4 chars/token).
    return 3 + len(passage.encode("utf-8")) // 3


class Collection:
    def __init__(
        self,
        folder: Path,
        root: Path,
        meta: CollectionMeta,
        embedder: Embedder | None,
        settings: Settings | None = None,
    ) -> None:
        self.folder = folder
        self.root = root
        self.meta = meta
        self.embedder = embedder
        self.settings = settings or Settings()
        self._conn: apsw.Connection | None = None
        self._has_vec = False  # the open index has a vec0 table (fixed until it is reopened)
        self._vectors_ok = embedder is not None
        self._index_dir: Path | None = None
        self._index_path: Path | None = None
        # The library's bound on open connections (an LRU), told of every open and close.
        self.pool: ConnectionPool | None = None
        self._ino: tuple[int, int] | None = None  # (dev, inode) of the open index file
        self.healed: list[str] = []  # warnings about indexes rebuilt during reads; drained
        self._rejected_seen: set[str] = set()  # rejected notes already logged

    # ------------------------------------------------------------------ identity
    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def rel(self) -> str:
        """The folder relative to the library root, posix ('.' for the root itself)."""
        rel = os.path.relpath(self.folder, self.root).replace(os.sep, "/")
        return rel

    def root_path(self, path: str) -> str:
        """A note path relative to this collection -> relative to the library root."""
        return path if self.rel == "." else f"{self.rel}/{path}"

    @property
    def index_dir(self) -> Path:
        if self._index_dir is None:
            self._index_dir = index_dir_for(self.folder, self.settings)
        return self._index_dir

    @property
    def index_path(self) -> Path:
        if self._index_path is None:
            self._index_path = self.index_dir / "index.db"
        return self._index_path

    def profile(self) -> dict[str, Any]:
        """Everything that, when changed, makes the stored index wrong."""
        e = self.embedder
        return {
            "schema": dbm.SCHEMA_VERSION,
            "chunker": CHUNKER_VERSION,
            "chunk_budget": self.settings.chunk_budget,
            "lexical": LEXICAL_VERSION,
            "model": e.model_id if e is not None else None,
            "dim": e.dim if e is not None else None,
        }

    # ------------------------------------------------------------------ connection
    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
            if self.pool is not None:
                self.pool.forget(self)

    def _open(self) -> tuple[apsw.Connection, str]:
        """The connection, after checking the stored profile; returns why it was rebuilt."""
        if self._conn is not None:
            if self.pool is not None:
                self.pool.touch(self)
            return self._conn, ""
        conn, reason = self._connect_checked()
        if self.pool is not None:
            self.pool.touch(self)
        return conn, reason

    def _connect_checked(self) -> tuple[apsw.Connection, str]:
        want = self.profile()
        reason = ""
        if self.index_path.exists():
            try:
                conn = dbm.connect(self.index_path)
                have = dbm.read_profile(conn)
            except (IndexError_, apsw.Error, *CORRUPT) as e:
                have, reason = None, f"index unreadable ({e})"
                conn = None
            if have == want:
                self._conn = conn
                self._has_vec = dbm.has_vectors(conn)
                self._ino = self._file_id()
                return conn, ""  # type: ignore[return-value]
            if conn is not None:
                conn.close()
            if not reason:
                diff = sorted(k for k in want if (have or {}).get(k) != want[k])
                reason = (
                    f"index built with other {', '.join(diff)}" if have else "index has no profile"
                )
            self._drop_index()
        if not self.folder.is_dir():  # deleted under us: never re-create it with mkdir(parents)
            raise IndexError_(
                f"collection folder {self.folder} does not exist",
                "It was moved or deleted; memo forgets it on the next scan.",
            )
        try:
            self.index_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise IndexError_(
                f"cannot create {self.index_dir}: {e.strerror or e}",
                "Make the collection folder writable, or set MEMO_INDEX_DIR to a writable folder.",
            ) from e
        conn = dbm.connect(self.index_path)
        dbm.create_schema(conn, want["dim"], want)
        self._conn = conn
        self._has_vec = dbm.has_vectors(conn)
        self._ino = self._file_id()
        return conn, reason or "new index"

    def _file_id(self) -> tuple[int, int] | None:
        return file_identity(self.index_path)

    def _follow_file(self) -> None:
        """Reopen when the index file was deleted or replaced under an open connection.

        Deleting `.memo/` must lose nothing, also for a long-running server: without this, its
        connection would go on reading and writing an unlinked file nobody else sees.
        """
        if self._conn is not None and self._file_id() != self._ino:
            self.close()

    def _heal(self, e: Exception) -> None:
        """The database is damaged: drop it and rebuild it from the notes, with a warning."""
        replaced = self._conn is not None and self._file_id() != self._ino
        if replaced:  # another process or connection already rebuilt it: just reopen
            self.close()
            return
        msg = f"{self.rel}: index was damaged ({e}); rebuilt from the notes"
        log.warning("%s", msg)
        self._drop_index()
        self.healed.append(msg)
        self.sync()

    def _drop_index(self) -> None:
        self.close()
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.index_path}{suffix}")

    def reset(self) -> None:
        """Forget the index entirely (the next sync rebuilds it)."""
        self.close()
        shutil.rmtree(self.index_dir, ignore_errors=True)

    @contextlib.contextmanager
    def _write(self, conn: apsw.Connection) -> Iterator[None]:
        # One writer at a time, taken up front: a reader never blocks us and we never deadlock
        # upgrading a read lock. busy_timeout makes a second writer wait, not fail.
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

    # ------------------------------------------------------------------ sync
    def sync(
        self,
        prefix: str = "",
        full: bool = False,
        progress: Progress | None = None,
        thorough: bool = False,
    ) -> SyncReport:
        """Bring the index in line with the notes (only under `prefix`, if given).

        `thorough` (an explicit `memo index`): also run SQLite's quick_check on the database and
        report notes that cannot be indexed (FIFOs, symlink loops, undecodable names).
        A damaged database is dropped and rebuilt; a full disk or another write failure raises
        IndexError_ and leaves every file committed so far in the index.
        """
        t0 = time.perf_counter()
        self._follow_file()
        try:
            try:
                report = self._sync(prefix, full, progress, thorough)
            except CORRUPT as e:
                msg = f"index was damaged ({e}): rebuilt from the notes"
                log.warning("%s: %s", self.rel, msg)
                self._drop_index()
                report = self._sync(prefix, False, progress, thorough)
                report.rebuilt = msg
                report.warnings.insert(0, f"{self.rel}: {msg}")
        except apsw.FullError as e:
            log.error("%s: disk full while indexing: %s", self.rel, e)
            raise IndexError_(
                f"the disk holding {self.index_dir} is full ({e}); the notes indexed "
                "so far are kept",
                "Free some space (or set MEMO_INDEX_DIR to another disk) and run `memo index` "
                "again: it goes on where it stopped.",
            ) from e
        except apsw.Error as e:
            log.error("%s: cannot write the index: %s", self.rel, e)
            raise IndexError_(f"cannot write the index {self.index_path}: {e}") from e
        report.seconds = time.perf_counter() - t0
        return report

    def _sync(
        self, prefix: str, full: bool, progress: Progress | None, thorough: bool
    ) -> SyncReport:
        report = SyncReport(self.name)
        if full:
            self._drop_index()
        conn, report.rebuilt = self._open()
        if full:
            report.rebuilt = "full rebuild requested"
        if thorough and not report.rebuilt:
            rows = conn.execute("PRAGMA quick_check(1)").fetchall()
            if rows != [("ok",)]:
                raise apsw.CorruptError(f"quick_check: {rows[0][0] if rows else 'no answer'}")
        rejected: Rejected = []
        on_disk = note_files(self.folder, self.root, prefix, rejected)
        for path, why in rejected:
            if path not in self._rejected_seen:
                self._rejected_seen.add(path)
                log.warning("%s: skipped, %s", self.root_path(path), why)
            if thorough:
                report.warnings.append(f"{self.root_path(path)}: skipped, {why}")
        stored = self._stored_files(conn, prefix)
        removed = sorted(set(stored) - set(on_disk))
        todo = sorted(
            p
            for p, st in on_disk.items()
            if p not in stored
            or (stored[p][0], stored[p][1]) != (st.mtime_ns, st.size)
            or stored[p][2].startswith(_NOVEC)
            and self._vectors_ok
        )
        report.unchanged = len(on_disk) - len(todo)
        if progress and report.unchanged:
            progress(report.unchanged)
        if removed:
            with self._write(conn):
                for p in removed:
                    self._delete_file_rows(conn, p)
            report.removed = len(removed)
            report.files += [("removed", self.root_path(p)) for p in removed]
        pending: list[_Pending] = []
        for p in todo:
            item = self._read(p, on_disk[p], stored.get(p), report)
            if item is not None:
                pending.append(item)
            elif progress:
                progress(1)
            if sum(len(x.passages) for x in pending) >= EMBED_BATCH:
                self._flush(conn, pending, report, progress)
                pending = []
        self._flush(conn, pending, report, progress)
        return report

    def _stored_files(self, conn: apsw.Connection, prefix: str) -> dict[str, tuple[int, int, str]]:
        rows = conn.execute("SELECT path, mtime_ns, size, hash FROM files").fetchall()
        pre = prefix.strip("/")
        return {
            r[0]: (r[1], r[2], r[3])
            for r in rows
            if not pre or r[0] == pre or r[0].startswith(pre + "/")
        }

    def _read(
        self, path: str, st: FileStat, old: tuple[int, int, str] | None, report: SyncReport
    ) -> _Pending | None:
        """Read, hash and chunk one file; None when there is nothing to embed for it."""
        conn = self._conn
        assert conn is not None
        full_path = self.folder / path
        if st.size > self.settings.max_file_bytes:
            self._record_skip(
                conn,
                path,
                st,
                f"too large: {st.size} bytes > limit "
                f"{self.settings.max_file_bytes} (MEMO_MAX_FILE_BYTES)",
                old,
                report,
            )
            return None
        try:
            data = _read_capped(full_path, self.settings.max_file_bytes)
        except OSError as e:
            self._record_skip(conn, path, st, f"unreadable: {e.strerror or e}", old, report)
            return None
        if data is None:
            self._record_skip(
                conn,
                path,
                st,
                f"too large: grew past the limit {self.settings.max_file_bytes} bytes while "
                "being read (MEMO_MAX_FILE_BYTES)",
                old,
                report,
            )
            return None
        digest = _hash(data)
        if old is not None and old[2] == digest:
            with self._write(conn):  # same bytes, new mtime: remember the stat, embed nothing
                conn.execute(
                    "UPDATE files SET mtime_ns=?, size=? WHERE path=?", (st.mtime_ns, st.size, path)
                )
            report.touched += 1
            report.files.append(("touched", self.root_path(path)))
            return None
        if b"\x00" in data[:8192]:
            self._record_skip(conn, path, st, "binary: NUL bytes in a .md file", old, report)
            return None
        text, warnings = decode(data)
        count = (
            self.embedder.count_tokens if self._vectors_ok and self.embedder else _estimate_tokens
        )
        try:
            note = chunk_note(text, count, budget=self.settings.chunk_budget, max_tokens=512)
        except EmbedderUnavailableError as e:
            self._embedder_down(e, report)
            note = chunk_note(text, _estimate_tokens, budget=self.settings.chunk_budget)
        chunks = note.chunks
        warnings = list(warnings) + list(note.warnings)
        if len(chunks) > self.settings.max_chunks_per_file:
            warnings.append(
                f"{len(chunks)} chunks; only the first {self.settings.max_chunks_per_file} "
                "are indexed (MEMO_MAX_CHUNKS_PER_FILE)"
            )
            chunks = chunks[: self.settings.max_chunks_per_file]
        for w in warnings:
            report.warnings.append(f"{shown(self.root_path(path))}: {w}")
        return _Pending(
            path=path,
            stat=st,
            hash=digest,
            chunks=chunks,
            passages=[passage_text(c.heading, c.text) for c in chunks],
            note="; ".join(warnings),
            meta=note.meta,
            is_new=old is None,
        )

    def _embedder_down(self, e: Exception, report: SyncReport) -> None:
        if self._vectors_ok:
            report.warnings.append(f"embedder unavailable, indexed lexically only: {e}")
        self._vectors_ok = False

    def _record_skip(
        self,
        conn: apsw.Connection,
        path: str,
        st: FileStat,
        why: str,
        old: tuple[int, int, str] | None,
        report: SyncReport,
    ) -> None:
        with self._write(conn):
            self._delete_file_rows(conn, path)
            conn.execute(
                "INSERT INTO files(path, mtime_ns, size, hash, indexed_at, status, note)"
                " VALUES (?, ?, ?, '', ?, 'skipped', ?)",
                (path, st.mtime_ns, st.size, time.time(), why),
            )
        report.skipped += 1
        report.files.append(("skipped", self.root_path(path)))
        report.warnings.append(f"{shown(self.root_path(path))}: skipped, {why}")
        log.warning("%s: skipped, %s", shown(self.root_path(path)), why)

    def _flush(
        self,
        conn: apsw.Connection,
        pending: list[_Pending],
        report: SyncReport,
        progress: Progress | None,
    ) -> None:
        if not pending:
            return
        vectors = self._vectors_for(conn, pending, report)
        at = 0
        for item in pending:
            n = len(item.chunks)
            vecs = vectors[at : at + n] if vectors is not None else None
            at += n
            self._write_file(conn, item, vecs)
            if item.is_new:
                report.new += 1
            else:
                report.changed += 1
            report.files.append(("new" if item.is_new else "changed", self.root_path(item.path)))
            if progress:
                progress(1)

    def _vectors_for(
        self, conn: apsw.Connection, pending: list[_Pending], report: SyncReport
    ) -> np.ndarray | None:
        """Vectors for every pending chunk, reusing stored ones whose chunk text is unchanged."""
        if not self._vectors_ok or self.embedder is None:
            return None
        passages = [p for item in pending for p in item.passages]
        hashes = [_hash(p.encode("utf-8")) for p in passages]
        known = self._stored_vectors(conn, [item.path for item in pending], set(hashes))
        missing = sorted({h: i for i, h in enumerate(hashes) if h not in known}.values())
        fresh: dict[str, np.ndarray] = {}
        if missing:
            t = time.perf_counter()
            try:
                embedded = self.embedder.embed_passages([passages[i] for i in missing])
            except EmbedderUnavailableError as e:
                self._embedder_down(e, report)
                return None
            report.embed_seconds += time.perf_counter() - t
            fresh = {hashes[i]: embedded[j] for j, i in enumerate(missing)}
        report.chunks_embedded += len(missing)
        report.chunks_reused += len(passages) - len(missing)
        out = np.zeros((len(passages), self.embedder.dim), dtype=np.float32)
        for i, h in enumerate(hashes):
            out[i] = fresh[h] if h in fresh else known[h]
        return out

    def _stored_vectors(
        self, conn: apsw.Connection, paths: Sequence[str], wanted: set[str]
    ) -> dict[str, np.ndarray]:
        if not self._has_vec:
            return {}
        out: dict[str, np.ndarray] = {}
        for path in paths:
            rows = conn.execute(
                "SELECT c.hash, v.embedding FROM chunks c JOIN chunks_vec v ON v.rowid = c.id"
                " WHERE c.path = ?",
                (path,),
            ).fetchall()
            for h, blob in rows:
                if h in wanted:
                    out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def _write_file(self, conn: apsw.Connection, item: _Pending, vecs: np.ndarray | None) -> None:
        has_vec = self._has_vec
        file_hash = item.hash if (vecs is not None or not has_vec) else _NOVEC + item.hash
        tags = item.meta.get("tags") if isinstance(item.meta, dict) else None
        tag_text = " ".join(str(t) for t in tags) if isinstance(tags, list) else str(tags or "")
        updated = item.meta.get("updated") if isinstance(item.meta, dict) else None
        with self._write(conn):
            if not self._unchanged_since_read(item.path, item.stat):
                # Edited again since we read it, and maybe already written by a concurrent
                # catch-up that read the newer bytes: never overwrite newer rows with older
                # ones. The next sync picks the file up.
                return
            self._delete_file_rows(conn, item.path)
            conn.execute(
                "INSERT INTO files(path, mtime_ns, size, hash, indexed_at, status, note, updated,"
                " tags) VALUES (?, ?, ?, ?, ?, 'ok', ?, ?, ?)",
                (
                    item.path,
                    item.stat.mtime_ns,
                    item.stat.size,
                    file_hash,
                    time.time(),
                    item.note,
                    str(updated) if updated is not None else None,
                    tag_text,
                ),
            )
            for i, (c, passage) in enumerate(zip(item.chunks, item.passages, strict=True)):
                conn.execute(
                    "INSERT INTO chunks(path, heading, line, ord, text, hash) VALUES (?,?,?,?,?,?)",
                    (item.path, c.heading, c.line, c.ord, c.text, _hash(passage.encode("utf-8"))),
                )
                cid = conn.last_insert_rowid()
                conn.execute(
                    "INSERT INTO chunks_fts(rowid, lex) VALUES (?, ?)", (cid, lex_text(passage))
                )
                if vecs is not None and has_vec:
                    conn.execute(
                        "INSERT INTO chunks_vec(rowid, embedding) VALUES (?, ?)",
                        (cid, vecs[i].astype(np.float32).tobytes()),
                    )

    def _unchanged_since_read(self, path: str, st: FileStat) -> bool:
        try:
            now = os.stat(self.folder / path)
        except OSError:
            return False
        return (now.st_mtime_ns, now.st_size) == (st.mtime_ns, st.size)

    def _delete_file_rows(self, conn: apsw.Connection, path: str) -> None:
        ids = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE path=?", (path,))]
        has_vec = self._has_vec
        for cid in ids:
            conn.execute("DELETE FROM chunks_fts WHERE rowid=?", (cid,))
            if has_vec:
                conn.execute("DELETE FROM chunks_vec WHERE rowid=?", (cid,))
        conn.execute("DELETE FROM chunks WHERE path=?", (path,))
        conn.execute("DELETE FROM files WHERE path=?", (path,))

    # ------------------------------------------------------------------ search legs
    @_healing
    def lex_candidates(
        self, match: str, n: int, prefix: str = "", flt: Filter | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 score, higher is better), best first."""
        conn, _ = self._open()
        # FTS5 bm25() is lower-is-better (negative); negate so every leg sorts descending.
        where, params = _narrowing(prefix, flt)
        if where:
            rows = conn.execute(
                "SELECT chunks_fts.rowid, -bm25(chunks_fts) AS s FROM chunks_fts JOIN chunks c"
                " ON c.id = chunks_fts.rowid JOIN files f ON f.path = c.path"
                f" WHERE chunks_fts MATCH ? AND {where} ORDER BY s DESC LIMIT ?",
                (match, *params, n),
            ).fetchall()
        else:
            # `ORDER BY s`, not `ORDER BY rank`: FTS5's own rank sorter prepares a statement on
            # every query (~0.3 ms, most of a small collection's lexical leg); SQLite's top-N
            # sort gives the same order.
            rows = conn.execute(
                "SELECT rowid, -bm25(chunks_fts) AS s FROM chunks_fts WHERE chunks_fts MATCH ?"
                " ORDER BY s DESC LIMIT ?",
                (match, n),
            ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    @_healing
    def vec_candidates(
        self, qvec: np.ndarray, n: int, prefix: str = "", flt: Filter | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity), best first; [] if this index holds no vectors."""
        conn, _ = self._open()
        if not self._has_vec:
            return []
        q = np.asarray(qvec, dtype=np.float32)
        where, params = _narrowing(prefix, flt)
        if where:
            # vec0 cannot filter by path or frontmatter: score the chunks that qualify directly.
            rows = conn.execute(
                "SELECT v.rowid, v.embedding FROM chunks_vec v JOIN chunks c ON c.id = v.rowid"
                f" JOIN files f ON f.path = c.path WHERE {where}",
                tuple(params),
            ).fetchall()
            return _nearest(rows, q, n)
        if conn.execute("SELECT count(*) FROM chunks").fetchone()[0] <= VEC_SCAN_MAX:
            # A vec0 KNN reads its whole 1,024-slot chunk (1.5 MB at 384 dims): ~0.45 ms even
            # for 4 vectors. Reading them row by row costs ~8 us each (bench/scope_star.py).
            rows = conn.execute("SELECT rowid, embedding FROM chunks_vec").fetchall()
            return _nearest(rows, q, n)
        rows = conn.execute(
            "SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?",
            (q.tobytes(), n),
        ).fetchall()
        return [(int(r[0]), 1.0 - float(r[1])) for r in rows]

    @_healing
    def chunk_rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        if not ids:
            return {}
        conn, _ = self._open()
        marks = ",".join("?" * len(ids))
        rows = conn.execute(
            "SELECT c.id, c.path, c.heading, c.line, c.text, f.mtime_ns FROM chunks c"
            f" JOIN files f ON f.path = c.path WHERE c.id IN ({marks})",
            tuple(ids),
        ).fetchall()
        return {
            int(r[0]): ChunkRow(int(r[0]), r[1], r[2], int(r[3]), r[4], int(r[5])) for r in rows
        }

    @_healing
    def known_terms(self, wanted: set[str]) -> set[str]:
        """Which of these stems occur in this collection's index."""
        if not wanted:
            return set()
        conn, _ = self._open()
        marks = ",".join("?" * len(wanted))
        rows = conn.execute(f"SELECT term FROM chunks_vocab WHERE term IN ({marks})", tuple(wanted))
        return {r[0] for r in rows}

    @_healing
    def has_vectors(self) -> bool:
        self._open()
        return self._has_vec

    # ------------------------------------------------------------------ status
    def status(self) -> dict[str, Any]:
        """Per-collection facts for `memo status`, computed without changing the index."""
        rejected: Rejected = []
        on_disk = note_files(self.folder, self.root, rejected=rejected)
        not_notes = [{"path": shown(self.root_path(p)), "why": why} for p, why in rejected]
        out: dict[str, Any] = {
            "collection": self.name,
            "path": self.rel,
            "description": self.meta.description,
            "index": str(self.index_path),
            "indexed": self.index_path.exists(),
            "files_on_disk": len(on_disk),
        }
        # What status says when the index holds nothing it can tell (none yet, or damaged).
        skipped, failed = _failures_apart(not_notes)
        nothing = dict(
            files=0,
            chunks=0,
            stale=len(on_disk),
            indexed_files=[],
            skipped=skipped,
            failed=failed,
            last_indexed=None,
            embedder=None,
            size_bytes=0,
        )
        if not self.index_path.exists():
            out.update(nothing)
            return out
        try:
            facts = self._stored_facts(on_disk)
        except (IndexError_, apsw.Error, *CORRUPT) as e:  # damaged: the next sync rebuilds it
            out.update(
                nothing,
                current=False,
                damaged=f"index unreadable ({e}); rebuilt on the next index or search",
            )
            return out
        profile, stored, stale, skipped, chunks, last, per_file = facts
        skipped, failed = _failures_apart(skipped + not_notes)
        size = sum(
            os.path.getsize(f"{self.index_path}{s}")
            for s in ("", "-wal", "-shm")
            if os.path.exists(f"{self.index_path}{s}")
        )
        out.update(
            files=len(per_file),
            chunks=int(chunks),
            stale=stale,
            indexed_files=per_file,
            skipped=skipped,
            failed=failed,
            last_indexed=last,
            embedder=profile.get("model"),
            current=profile == self.profile(),
            size_bytes=size,
        )
        return out

    def _stored_facts(self, on_disk: dict[str, FileStat]) -> tuple[Any, ...]:
        conn = dbm.connect(self.index_path, readonly=True)
        try:
            profile = dbm.read_profile(conn) or {}
            stored = {
                r[0]: (r[1], r[2]) for r in conn.execute("SELECT path, mtime_ns, size FROM files")
            }
            stale = sum(
                1 for p, st in on_disk.items() if stored.get(p) != (st.mtime_ns, st.size)
            ) + sum(1 for p in stored if p not in on_disk)
            skipped = [
                {"path": shown(self.root_path(r[0])), "why": r[1]}
                for r in conn.execute("SELECT path, note FROM files WHERE status='skipped'")
            ]
            (chunks,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
            (last,) = conn.execute("SELECT max(indexed_at) FROM files").fetchone()
            per_file = [
                {"path": shown(self.root_path(r[0])), "chunks": int(r[1]), "note": r[2]}
                for r in conn.execute(
                    "SELECT f.path, count(c.id), f.note FROM files f LEFT JOIN chunks c"
                    " ON c.path = f.path WHERE f.status = 'ok' GROUP BY f.path ORDER BY f.path"
                )
            ]
        finally:
            conn.close()
        return profile, stored, stale, skipped, chunks, last, per_file


def _narrowing(prefix: str, flt: Filter | None) -> tuple[str, list[object]]:
    """A WHERE condition over `chunks c JOIN files f` for a sub-path and/or a filter."""
    conds: list[str] = []
    params: list[object] = []
    if prefix:
        conds.append("(c.path = ? OR c.path LIKE ? ESCAPE '\\')")
        params += [prefix, _like_prefix(prefix)]
    if flt is not None:
        where, more = flt.sql()
        conds.append(where)
        params += more
    return " AND ".join(conds), params


class ConnectionPool:
    """At most `cap` collections keep their connection open; the least recently used closes.

    A library of 100,000 collections searched with scope `*` opens them one after another; each
    open index holds three descriptors (db, -wal, -shm), so an unbounded cache runs out of file
    descriptors long before the end. A closed collection reopens lazily on its next use.
    """

    def __init__(self, cap: int = 64) -> None:
        self.cap = max(2, cap)
        self._open: dict[int, Collection] = {}  # insertion order = recency

    def touch(self, coll: Collection) -> None:
        key = id(coll)
        if key in self._open:
            self._open[key] = self._open.pop(key)  # move to the recent end
            return
        self._open[key] = coll
        while len(self._open) > self.cap:
            oldest = next(iter(self._open))
            self._open.pop(oldest).close()

    def forget(self, coll: Collection) -> None:
        self._open.pop(id(coll), None)

    def __len__(self) -> int:
        return len(self._open)

    def close_all(self) -> None:
        for coll in list(self._open.values()):
            coll.close()
        self._open.clear()


def _like_prefix(prefix: str) -> str:
    esc = prefix.rstrip("/").replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return esc + "/%"
