"""Bringing one index in line with its notes: stat, hash, chunk, embed, write.

The index follows the files, never the other way round. A sync compares (path, mtime, size)
with the `files` table, hashes only what differs, re-chunks only files whose hash changed, and
re-embeds only chunks whose text is new (an edit of one section re-embeds that section). A
file's rows change in one `BEGIN IMMEDIATE` transaction, so a reader never sees half a file and
a crash (or Ctrl-C) leaves the previous state of that file.

Embedding runs in slices sized from the model's measured speed so that one call into it takes
about SLICE_SECONDS: a stop request (the watcher stopping) or Ctrl-C, which Python can only
deliver between two calls into native code, is seen within a second, and every file written
before it stays written.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..caches import digest
from ..embed.tokens import counter_within, estimate_tokens
from ..errors import EmbedderUnavailableError
from ..printable import shown
from . import skips
from .chunker import Chunk, chunk_note, decode, passage_text
from .files import FileStat, Rejected, note_files
from .lexical import lex_text
from .progress import SyncProgress, SyncStopped
from .site import Site
from .skips import Skip
from .store import IndexStore, pack_text
from .vectors import dequantize, quantize

FLUSH_CHUNKS = 64  # chunks read ahead before they are embedded and written
SLICE_SECONDS = 0.4  # one call into the model takes about this long (sized from its speed)
SLICE_MAX = 32
NOVEC = "novec:"  # hash prefix of a file indexed while the embedder was down: redo it later

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
    path: str = ""  # the collection folder, relative to the library root
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

    @property
    def caught_up(self) -> int:
        """Files this sync (re)indexed, removed or skipped: what a search's catch-up did."""
        return self.new + self.changed + self.removed + self.skipped


@dataclass(slots=True)
class SyncState:
    """What one collection's syncs learn in this process and hand on to the next sync: the
    collection keeps it, a `Syncer` reads and updates it, and nothing else does."""

    vectors_ok: bool  # False once the model failed in this process: index lexically only
    slice_size: int = 4  # passages per call into the model, sized from its measured speed
    logged: set[str] = field(default_factory=set)  # rejected notes already logged


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


def read_capped(path: Path, limit: int) -> bytes | None:
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


class Syncer:
    """One sync of one collection (or of a sub-path of it) over an open index.

    It reads the collection through `site`, writes the index through `store` and what it did
    into `report`; `state` is the one thing it changes that outlives it.
    """

    def __init__(
        self,
        site: Site,
        store: IndexStore,
        state: SyncState,
        report: SyncReport,
        progress: SyncProgress,
    ) -> None:
        self.site = site
        self.store = store
        self.state = state
        self.report = report
        self.progress = progress
        self.settings = site.settings

    def run(self, prefix: str, thorough: bool) -> None:
        site, report = self.site, self.report
        rejected: Rejected = []
        on_disk = note_files(site.folder, site.root, prefix, rejected)
        for path, skip in rejected:
            self._log_rejected(path, skip)
            if thorough:
                report.warnings.append(f"{site.root_path(path)}: skipped, {skip.why}")
        stored = self._stored_files(prefix)
        removed = sorted(set(stored) - set(on_disk))
        todo = sorted(
            p
            for p, st in on_disk.items()
            if p not in stored
            or (stored[p][0], stored[p][1]) != (st.mtime_ns, st.size)
            or stored[p][2].startswith(NOVEC)
            and self.state.vectors_ok
        )
        report.unchanged = len(on_disk) - len(todo)
        if todo or removed:
            label = site.root_path(prefix.strip("/")) if prefix else site.rel
            self.progress.begin(label, len(todo))
        if removed:
            with self.store.write():
                for p in removed:
                    self._delete_file_rows(p)
            report.removed = len(removed)
            report.files += [("removed", site.root_path(p)) for p in removed]
        pending: list[_Pending] = []
        for p in todo:
            self._check_stop()
            item = self._read(p, on_disk[p], stored.get(p))
            if item is not None:
                pending.append(item)
            else:
                self.progress.files_done(1)
            if sum(len(x.passages) for x in pending) >= FLUSH_CHUNKS:
                self._flush(pending)
                pending = []
        self._flush(pending)
        if todo or removed:
            self.store.compact()

    def _log_rejected(self, path: str, skip: Skip) -> None:
        """Log a note that cannot be indexed, once per process."""
        if path not in self.state.logged:
            self.state.logged.add(path)
            log.warning("%s: skipped, %s", shown(self.site.root_path(path)), skip.why)

    def _check_stop(self) -> None:
        if self.progress.stop_requested():
            raise SyncStopped(f"{self.site.rel}: stopped; files written so far are kept")

    def _stored_files(self, prefix: str) -> dict[str, tuple[int, int, str]]:
        rows = self.store.conn.execute("SELECT path, mtime_ns, size, hash FROM files").fetchall()
        pre = prefix.strip("/")
        return {
            r[0]: (r[1], r[2], r[3])
            for r in rows
            if not pre or r[0] == pre or r[0].startswith(pre + "/")
        }

    # ------------------------------------------------------------------ reading one file
    def _read(self, path: str, st: FileStat, old: tuple[int, int, str] | None) -> _Pending | None:
        """Read, hash and chunk one file; None when there is nothing to embed for it."""
        limit = self.settings.max_file_bytes
        if st.size > limit:
            return self._skip(path, st, Skip.of(skips.TOO_LARGE, size=st.size, limit=limit))
        try:
            data = read_capped(self.site.folder / path, limit)
        except OSError as e:
            return self._skip(path, st, Skip.of(skips.UNREADABLE, error=e.strerror or e))
        if data is None:
            return self._skip(path, st, Skip.of(skips.GREW, limit=limit))
        file_hash = digest(data)
        if old is not None and old[2] == file_hash:
            with self.store.write():  # same bytes, new mtime: remember the stat, embed nothing
                self.store.conn.execute(
                    "UPDATE files SET mtime_ns=?, size=? WHERE path=?", (st.mtime_ns, st.size, path)
                )
            self.report.touched += 1
            self.report.files.append(("touched", self.site.root_path(path)))
            return None
        if skips.is_binary(data):
            return self._skip(path, st, Skip.of(skips.BINARY))
        return self._chunked(path, st, file_hash, data, old is None)

    def _chunked(
        self, path: str, st: FileStat, file_hash: str, data: bytes, is_new: bool
    ) -> _Pending:
        embedder = self.site.embedder
        text, warnings = decode(data)
        budget = self.settings.chunk_budget
        name = path.rsplit("/", 1)[-1][:-3]  # the title of a note without an H1
        if self.state.vectors_ok and embedder is not None:
            try:
                count = counter_within(embedder.count_tokens, embedder.max_tokens)
                note = chunk_note(
                    text, count, budget=budget, max_tokens=embedder.max_tokens, name=name
                )
            except EmbedderUnavailableError as e:
                self._embedder_down(e)
                note = chunk_note(text, estimate_tokens, budget=budget, name=name)
        else:
            note = chunk_note(text, estimate_tokens, budget=budget, name=name)
        chunks = note.chunks
        warnings = list(warnings) + list(note.warnings)
        cap = self.settings.max_chunks_per_file
        if len(chunks) > cap:
            warnings.append(
                f"{len(chunks)} chunks; only the first {cap} are indexed (MEMO_MAX_CHUNKS_PER_FILE)"
            )
            chunks = chunks[:cap]
        for w in warnings:
            self.report.warnings.append(f"{shown(self.site.root_path(path))}: {w}")
        return _Pending(
            path=path,
            stat=st,
            hash=file_hash,
            chunks=chunks,
            passages=[passage_text(c.heading, c.text) for c in chunks],
            note="; ".join(warnings),
            meta={**note.meta, "tags": note.tags},  # frontmatter and inline #tags
            is_new=is_new,
        )

    def _embedder_down(self, e: Exception) -> None:
        if self.state.vectors_ok:
            self.report.warnings.append(f"embedder unavailable, indexed lexically only: {e}")
        self.state.vectors_ok = False

    def _skip(self, path: str, st: FileStat, skip: Skip) -> None:
        """Record a note memo will not index, with its kind and reason (status lists it)."""
        with self.store.write():
            self._delete_file_rows(path)
            self.store.conn.execute(
                "INSERT INTO files(path, mtime_ns, size, hash, indexed_at, status, skip, note)"
                " VALUES (?, ?, ?, '', ?, 'skipped', ?, ?)",
                (path, st.mtime_ns, st.size, time.time(), skip.kind, skip.why),
            )
        where = shown(self.site.root_path(path))
        self.report.skipped += 1
        self.report.files.append(("skipped", self.site.root_path(path)))
        self.report.warnings.append(f"{where}: skipped, {skip.why}")
        log.warning("%s: skipped, %s", where, skip.why)
        return None

    # ------------------------------------------------------------------ embedding and writing
    def _flush(self, pending: list[_Pending]) -> None:
        if not pending:
            return
        vectors = self._vectors_for(pending)
        at = 0
        for item in pending:
            n = len(item.chunks)
            vecs = vectors[at : at + n] if vectors is not None else None
            at += n
            self._write_file(item, vecs)
            if item.is_new:
                self.report.new += 1
            else:
                self.report.changed += 1
            action = "new" if item.is_new else "changed"
            self.report.files.append((action, self.site.root_path(item.path)))
            self.progress.files_done(1)

    def _vectors_for(self, pending: list[_Pending]) -> np.ndarray | None:
        """Vectors for every pending chunk, reusing stored ones whose chunk text is unchanged."""
        embedder = self.site.embedder
        if not self.state.vectors_ok or embedder is None:
            return None
        passages = [p for item in pending for p in item.passages]
        hashes = [digest(p.encode("utf-8")) for p in passages]
        known = self._stored_vectors([item.path for item in pending], set(hashes))
        missing = sorted({h: i for i, h in enumerate(hashes) if h not in known}.values())
        fresh: dict[str, np.ndarray] = {}
        start = 0
        while start < len(missing):
            self._check_stop()
            part = missing[start : start + self.state.slice_size]
            start += len(part)
            t = time.perf_counter()
            try:
                embedded = embedder.embed_passages([passages[i] for i in part])
            except EmbedderUnavailableError as e:
                self._embedder_down(e)
                return None
            spent = time.perf_counter() - t
            self.report.embed_seconds += spent
            rate = len(part) / max(spent, 1e-6)  # passages per second, this model, this machine
            self.state.slice_size = max(1, min(SLICE_MAX, int(rate * SLICE_SECONDS)))
            fresh.update({hashes[i]: embedded[j] for j, i in enumerate(part)})
            self.progress.chunks_done(len(part))
        self.report.chunks_embedded += len(missing)
        self.report.chunks_reused += len(passages) - len(missing)
        out = np.zeros((len(passages), embedder.dim), dtype=np.float32)
        for i, h in enumerate(hashes):
            out[i] = fresh[h] if h in fresh else known[h]
        return out

    def _stored_vectors(self, paths: list[str], wanted: set[str]) -> dict[str, np.ndarray]:
        if not self.store.has_vec:
            return {}
        out: dict[str, np.ndarray] = {}
        for path in paths:
            rows = self.store.conn.execute(
                "SELECT c.hash, v.embedding FROM chunks c JOIN chunks_vec v ON v.rowid = c.id"
                " WHERE c.path = ?",
                (path,),
            ).fetchall()
            for h, blob in rows:
                if h in wanted:  # written back as the same codes (vectors.quantize)
                    out[h] = dequantize(blob)
        return out

    def _write_file(self, item: _Pending, vecs: np.ndarray | None) -> None:
        conn, has_vec = self.store.conn, self.store.has_vec
        file_hash = item.hash if (vecs is not None or not has_vec) else NOVEC + item.hash
        meta = item.meta if isinstance(item.meta, dict) else {}
        tags = meta.get("tags")
        tag_text = " ".join(str(t) for t in tags) if isinstance(tags, list) else str(tags or "")
        updated = meta.get("updated")
        with self.store.write():
            if not self._unchanged_since_read(item.path, item.stat):
                # Edited again since we read it, and maybe already written by a concurrent
                # catch-up that read the newer bytes: never overwrite newer rows with older
                # ones. The next sync picks the file up.
                return
            self._delete_file_rows(item.path)
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
            codes = quantize(vecs) if vecs is not None and has_vec else None
            for i, (c, passage) in enumerate(zip(item.chunks, item.passages, strict=True)):
                conn.execute(
                    "INSERT INTO chunks(path, heading, line, ord, text, hash) VALUES (?,?,?,?,?,?)",
                    (
                        item.path,
                        c.heading,
                        c.line,
                        c.ord,
                        pack_text(c.text),
                        digest(passage.encode("utf-8")),
                    ),
                )
                cid = conn.last_insert_rowid()
                conn.execute(
                    "INSERT INTO chunks_fts(rowid, lex) VALUES (?, ?)", (cid, lex_text(passage))
                )
                if codes is not None:
                    conn.execute(
                        "INSERT INTO chunks_vec(rowid, embedding) VALUES (?, vec_int8(?))",
                        (cid, codes[i].tobytes()),
                    )

    def _unchanged_since_read(self, path: str, st: FileStat) -> bool:
        try:
            now = os.stat(self.site.folder / path)
        except OSError:
            return False
        return (now.st_mtime_ns, now.st_size) == (st.mtime_ns, st.size)

    def _delete_file_rows(self, path: str) -> None:
        conn = self.store.conn
        ids = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE path=?", (path,))]
        for cid in ids:
            conn.execute("DELETE FROM chunks_fts WHERE rowid=?", (cid,))
            if self.store.has_vec:
                conn.execute("DELETE FROM chunks_vec WHERE rowid=?", (cid,))
        conn.execute("DELETE FROM chunks WHERE path=?", (path,))
        conn.execute("DELETE FROM files WHERE path=?", (path,))
