"""Bringing one index in line with its notes, in two stages: the text first, vectors after.

Stage one (`Syncer`) makes a note searchable: the index follows the files, never the other way
round. It compares (path, mtime, size) with the `files` table (staleness.py), hashes only what
differs, re-chunks only files whose hash changed, and writes each file's chunks, FTS rows and the
vectors of chunk texts it already had in one `BEGIN IMMEDIATE` transaction: a reader never sees
half a file, and a crash (or Ctrl-C) leaves the file's previous state. It never calls the model,
so any library is searchable by the lexical leg in seconds. Stage two, a vector for every chunk
still without one, under the collection's lease, is embedding.py (`embed_pending`).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..caches import digest
from ..embed.tokens import counter_within, estimate_tokens
from ..errors import EmbedderUnavailableError
from ..printable import shown
from . import lease, skips, windows
from .chunker import Chunk, chunk_note, decode, passage_text
from .files import FileStat, Rejected, note_files
from .langid import detect_note
from .lexical import lex_text
from .links import NoteLinks, store_links
from .progress import SyncProgress, SyncStopped
from .site import Site
from .skips import Skip
from .staleness import behind, stored_stats
from .store import IndexStore, pack_text, store_vectors, window_codes

FLUSH_CHUNKS = 64  # chunks read ahead before they are written (one progress step)

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
    "chunks_pending",
    "read_elsewhere",
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
    # notes up to date that another process read since this pass began (a search's catch-up,
    # the watcher): work of this pass's, done meanwhile by `read_by`
    read_elsewhere: int = 0
    read_by: str = ""
    chunks_embedded: int = 0  # vectors made by the vector stage (the embedding cache's included)
    chunks_reused: int = 0  # vectors kept from the index's own rows (text unchanged)
    chunks_pending: int = 0  # chunks still without a vector when this sync ended
    chunks: int = 0  # chunks the index holds when this sync ended
    embedding_by: int | None = None  # pid of another process computing the vectors
    reading_by: int | None = None  # pid of a pass reading these notes: this sync left them
    unread: int = 0  # notes left to that pass (their words are not searchable yet)
    rate: float | None = None  # chunks per second the vector stage went at
    paused: bool = False  # the vector stage gave way to more urgent work, vectors left
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
            "chunks": self.chunks,
            "read_by": self.read_by,
            "embedding_by": self.embedding_by,
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
    langs: list[str | None]  # each chunk's language (langid.py)
    note: str
    meta: dict[str, Any]
    is_new: bool
    dropped: list[tuple[int, int, str]] = field(default_factory=list)  # chunker.coverage
    links: NoteLinks = field(default_factory=NoteLinks)  # its links and aliases (links.py)


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
        self.elsewhere: set[str] = set()  # notes another process read since the pass began

    def run(
        self,
        prefix: str,
        thorough: bool,
        by: str = "",
        held: lease.Lease | None = None,
        since: float | None = None,
    ) -> None:
        """Read what changed under `prefix` (`thorough`: `memo index`'s checks), as `by` (what
        this process is), under the text lease (`held`: taken already by the pass). One
        process reads a collection's notes at a time: the others wait for it, then find them
        read; a search or the watcher does not wait for a pass that took the lease ahead (it
        reads them all soon): it leaves them, and `reading_by` says who reads them. `since`:
        when the pass began (notes another process read since then are counted)."""
        held = held or self._text_lease(prefix, thorough, by)
        if held is None:
            return
        with held:
            if since is not None and thorough:
                self._read_elsewhere(prefix, since)
            self._run(prefix, thorough)

    def _text_lease(self, prefix: str, thorough: bool, by: str) -> lease.Lease | None:
        """The text lease, waited for unless a pass holds it ahead and this is no pass."""
        path = self.site.index_path
        held = lease.acquire_text(path, by)
        if held is not None:
            return held
        other = lease.reader(path)
        if other is not None and other.ahead and not thorough:
            self.report.reading_by = other.pid
            on_disk = note_files(self.site.folder, self.site.root, prefix)
            self.report.unread = behind(on_disk, stored_stats(self.store.conn, prefix)).count
            return None
        self.report.read_by = other.by if other is not None else ""
        return lease.acquire_text(path, by, wait=True)

    def _read_elsewhere(self, prefix: str, since: float) -> None:
        """Count the notes another process indexed since the pass began: a pass waited for
        it, or it read them before the pass took the lease (`read_by`: who, when seen)."""
        pre = prefix.strip("/")
        rows = self.store.conn.execute(
            "SELECT path FROM files WHERE indexed_at >= ? AND status = 'ok'", (since,)
        )
        self.elsewhere = {
            path for (path,) in rows if not pre or path == pre or path.startswith(pre + "/")
        }
        n = self.report.read_elsewhere = len(self.elsewhere)
        if n:
            self.report.read_by = self.report.read_by or "other memo processes"
            self.progress.read_elsewhere(n)

    def _run(self, prefix: str, thorough: bool) -> None:
        site, report = self.site, self.report
        rejected: Rejected = []
        on_disk = note_files(site.folder, site.root, prefix, rejected)
        for path, skip in rejected:
            self._log_rejected(path, skip)
            if thorough:
                report.warnings.append(f"{site.root_path(path)}: skipped, {skip.why}")
        stored = stored_stats(self.store.conn, prefix)
        owed = behind(on_disk, stored)
        todo, removed = owed.todo, owed.removed
        up_to_date = set(on_disk) - set(todo)
        held_out = self._still_skipped(up_to_date)
        report.unchanged = len(up_to_date) - len(held_out) - len(up_to_date & self.elsewhere)
        if thorough:
            # `memo index` says every note it does not index, and counts what it says: the
            # ones it cannot even read as notes, and those skipped before that did not change
            report.skipped += len(rejected) + len(held_out)
            for path, why in held_out:
                report.warnings.append(f"{shown(site.root_path(path))}: skipped, {why}")
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

    def _still_skipped(self, up_to_date: set[str]) -> list[tuple[str, str]]:
        """(path, why) of the notes among these that the index holds as skipped."""
        rows = self.store.conn.execute("SELECT path, note FROM files WHERE status = 'skipped'")
        return sorted((path, why or "") for path, why in rows if path in up_to_date)

    def _log_rejected(self, path: str, skip: Skip) -> None:
        """Log a note that cannot be indexed, once per process."""
        if path not in self.state.logged:
            self.state.logged.add(path)
            log.warning("%s: skipped, %s", shown(self.site.root_path(path)), skip.why)

    def _check_stop(self) -> None:
        if self.progress.stop_requested():
            raise SyncStopped(f"{self.site.rel}: stopped; files written so far are kept")

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
        if why := skips.binary_why(data):
            return self._skip(path, st, Skip.of(skips.BINARY, why=why))
        return self._chunked(path, st, file_hash, data, old is None)

    def _chunked(
        self, path: str, st: FileStat, file_hash: str, data: bytes, is_new: bool
    ) -> _Pending:
        embedder = self.site.embedder
        text, warnings = decode(data)
        budget = self.settings.chunk_budget
        name = path.rsplit("/", 1)[-1][:-3]  # the title of a note without an H1
        cap = self.settings.max_chunks_per_file
        if self.state.vectors_ok and embedder is not None:
            try:
                count = counter_within(embedder.count_tokens, embedder.max_tokens)
                note = chunk_note(
                    text,
                    count,
                    budget=budget,
                    max_tokens=embedder.max_tokens,
                    name=name,
                    max_chunks=cap,
                )
            except EmbedderUnavailableError as e:
                self._embedder_down(e)
                note = chunk_note(text, estimate_tokens, budget=budget, name=name, max_chunks=cap)
        else:
            note = chunk_note(text, estimate_tokens, budget=budget, name=name, max_chunks=cap)
        chunks = note.chunks
        passages = [passage_text(c.heading, c.text) for c in chunks]
        warnings = list(warnings) + list(note.warnings)
        for w in warnings:
            self.report.warnings.append(f"{shown(self.site.root_path(path))}: {w}")
        return _Pending(
            path=path,
            stat=st,
            hash=file_hash,
            chunks=chunks,
            passages=passages,
            langs=detect_note(passages),
            note="; ".join(warnings),
            meta={**note.meta, "tags": note.tags},  # frontmatter and inline #tags
            is_new=is_new,
            dropped=note.dropped,
            links=note.links,
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

    # ------------------------------------------------------------------ writing
    def _flush(self, pending: list[_Pending]) -> None:
        for item in pending:
            if self._write_file(item):
                if item.is_new:
                    self.report.new += 1
                else:
                    self.report.changed += 1
                action = "new" if item.is_new else "changed"
                self.report.files.append((action, self.site.root_path(item.path)))
            self.progress.files_done(1)

    def _write_file(self, item: _Pending) -> bool:
        """Write one note's rows, keeping the vectors of chunks whose text the index already
        had for it; False when there was nothing to write (edited again since it was read, or
        another process wrote these very bytes first)."""
        conn = self.store.conn
        with self.store.write():
            if not self._unchanged_since_read(item.path, item.stat):
                # Edited again since we read it, and maybe already written by a concurrent
                # catch-up that read the newer bytes: never overwrite newer rows with older
                # ones. The next sync picks the file up.
                return False
            row = conn.execute(
                "SELECT hash, status FROM files WHERE path = ?", (item.path,)
            ).fetchone()
            if row is not None and row[0] == item.hash and row[1] == "ok":
                # Another process (a second `memo index`, the watcher) wrote these bytes since
                # this sync looked: keep its rows, and the vectors they may have by now.
                conn.execute(
                    "UPDATE files SET mtime_ns=?, size=? WHERE path=?",
                    (item.stat.mtime_ns, item.stat.size, item.path),
                )
                return False
            kept = self._stored_vectors(item.path) if self.store.has_vec else {}
            self._delete_file_rows(item.path)
            self._insert_file_row(item)
            store_links(conn, item.path, item.links)  # the link graph, with the chunks
            for c, passage, lang in zip(item.chunks, item.passages, item.langs, strict=True):
                self._insert_chunk(item.path, c, passage, lang, kept)
        return True

    def _insert_file_row(self, item: _Pending) -> None:
        """The note's row in `files`: its stat, hash, warnings, frontmatter and coverage."""
        meta = item.meta if isinstance(item.meta, dict) else {}
        tags = meta.get("tags")
        tag_text = " ".join(str(t) for t in tags) if isinstance(tags, list) else str(tags or "")
        updated = meta.get("updated")
        self.store.conn.execute(
            "INSERT INTO files(path, mtime_ns, size, hash, indexed_at, status, note, updated,"
            " tags, dropped) VALUES (?, ?, ?, ?, ?, 'ok', ?, ?, ?, ?)",
            (
                item.path,
                item.stat.mtime_ns,
                item.stat.size,
                item.hash,
                time.time(),
                item.note,
                str(updated) if updated is not None else None,
                tag_text,
                json.dumps(item.dropped, ensure_ascii=False) if item.dropped else "",
            ),
        )

    def _insert_chunk(
        self,
        path: str,
        c: Chunk,
        passage: str,
        lang: str | None,
        kept: dict[str, tuple[bytes, list[bytes]]],
    ) -> None:
        """One chunk's row and FTS row, with the vectors `kept` for its text if any."""
        conn = self.store.conn
        h = digest(passage.encode("utf-8"))
        code, wins = kept.get(h, (None, []))
        conn.execute(
            "INSERT INTO chunks(path, heading, line, ord, text, hash, vec, wins, lang)"
            " VALUES (?,?,?,?,?,?,?,?,?)",
            (path, c.heading, c.line, c.ord, pack_text(c.text), h, int(bool(code)), len(wins))
            + (lang,),
        )
        cid = conn.last_insert_rowid()
        conn.execute(
            "INSERT INTO chunks_fts(rowid, lex) VALUES (?, ?)", (cid, lex_text(passage, lang))
        )
        if code:
            store_vectors(conn, cid, code, wins)
            self.report.chunks_reused += 1

    def _stored_vectors(self, path: str) -> dict[str, tuple[bytes, list[bytes]]]:
        """The int8 codes the index holds for a note's chunks, by passage hash: the chunk's
        own and its windows' (a chunk with its vector has its windows too: embed_pending)."""
        conn = self.store.conn
        rows = conn.execute(
            "SELECT c.hash, c.id, c.wins, v.embedding FROM chunks c"
            " JOIN chunks_vec v ON v.rowid = c.id WHERE c.path = ?",
            (path,),
        ).fetchall()
        out = {}
        for h, cid, n, blob in rows:
            wins = window_codes(conn, cid, n)
            if wins is not None:  # else embedded again, windows and all
                out[h] = (bytes(blob), wins)
        return out

    def _unchanged_since_read(self, path: str, st: FileStat) -> bool:
        try:
            now = os.stat(self.site.folder / path)
        except OSError:
            return False
        return (now.st_mtime_ns, now.st_size) == (st.mtime_ns, st.size)

    def _delete_file_rows(self, path: str) -> None:
        conn = self.store.conn
        rows = conn.execute("SELECT id, wins FROM chunks WHERE path=?", (path,)).fetchall()
        for cid, wins in rows:
            conn.execute("DELETE FROM chunks_fts WHERE rowid=?", (cid,))
            if self.store.has_vec:
                conn.execute("DELETE FROM chunks_vec WHERE rowid=?", (cid,))
                for row in windows.rowids(cid, wins):
                    conn.execute("DELETE FROM windows_vec WHERE rowid=?", (row,))
        conn.execute("DELETE FROM chunks WHERE path=?", (path,))
        conn.execute("DELETE FROM files WHERE path=?", (path,))
