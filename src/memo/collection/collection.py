"""One collection: a folder of notes, its `_meta.yaml`, and its rebuildable index.

The jobs live beside this module: `store` (the database and its profile), `pool` (the bound on
open databases), `sync` (bringing the index in line with the notes), `reads`, `share` and
`matrix` (what a search reads), `health` and `summary`. This class ties them to one folder:
where its index is, which profile it must have, healing when it is damaged, and what it hands
up (a share of each leg, rows, a note's chunks and links: plain data, never the open index).
Sync and status get a `Site` (site.py), never the Collection.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import apsw
import numpy as np

from .. import caches, sqlite
from ..config import Settings
from ..embed import Embedder
from ..errors import IndexError_
from . import links, reads, windows
from .chunker import passage_text
from .embedding import Pace, embed_pending
from .filters import Filter
from .health import CollectionStatus, collection_status
from .lease import Lease
from .matrix import Matrix, matrix
from .meta import CollectionMeta
from .pool import StorePool
from .share import Share, share
from .site import Site
from .staleness import Stored, stored_stats
from .store import CORRUPT, IndexStore, has_windows, reading, unpack_text, window_codes
from .sync import Syncer, SyncProgress, SyncReport, SyncState, SyncStopped
from .vectors import stored

T = TypeVar("T")
log = logging.getLogger("memo.index")


class Collection:
    def __init__(
        self,
        folder: Path,
        root: Path,
        meta: CollectionMeta,
        embedder: Embedder | None,
        settings: Settings | None = None,
        pool: StorePool | None = None,
    ) -> None:
        self.folder = folder
        self.root = root
        self.meta = meta
        self.embedder = embedder
        self.settings = settings or Settings()
        self.pool = pool if pool is not None else StorePool()  # an empty pool is falsy
        self.sync_state = SyncState(vectors_ok=embedder is not None)
        self.index_dir = caches.index_dir(folder, self.settings)
        self.index_path = self.index_dir / "index.db"
        # (chunks, of them without a vector) as this process's last sync or embed left them:
        # a search reads the pending ones' ids only where there are some (None: not known)
        self.vector_debt: tuple[int, int] | None = None
        self._held_names: tuple[tuple[int, int, int], links.Names] | None = None

    # ------------------------------------------------------------------ identity
    @property
    def name(self) -> str:
        return self.meta.name

    @functools.cached_property
    def site(self) -> Site:
        """What sync and status read of this collection. Cached, and with it `rel`: a search
        over 1,000 collections asked for `rel` 3,000 times, and os.path.relpath cost ~0.1 s
        of it."""
        rel = os.path.relpath(self.folder, self.root).replace(os.sep, "/")
        return Site(
            self.meta, self.folder, self.root, rel, self.index_path, self.settings, self.embedder
        )

    @property
    def rel(self) -> str:
        """The folder relative to the library root, posix ('.' for the root itself)."""
        return self.site.rel

    def root_path(self, path: str) -> str:
        """A note path relative to this collection -> relative to the library root."""
        return self.site.root_path(path)

    def profile(self) -> dict[str, Any]:
        """Everything that, when changed, makes the stored index wrong."""
        return self.site.profile()

    # ------------------------------------------------------------------ the open index
    def store(self) -> tuple[IndexStore, str]:
        """The open index (from the pool, or opened and checked now) and why it was (re)built.

        An index deleted or replaced under an open handle is reopened: deleting `.memo/` must
        lose nothing, also for a long-running server.
        """
        store = self.pool.get(self.index_path)
        if store is not None and not store.replaced():
            return store, ""
        if store is not None:
            self.pool.close(self.index_path)
        store, reason = IndexStore.open(
            self.index_path, self.profile(), self.folder, salvage=self._salvage
        )
        self.pool.add(store)
        return store, reason

    def _salvage(self, conn: apsw.Connection) -> None:
        """Hand an index's passages and vectors to the embedding cache before the index is
        rebuilt for a new schema, chunker or analyser (same model): a chunk whose text did not
        change is then not embedded again. The vectors served that index until now."""
        if self.embedder is None:
            return
        rows = conn.execute(
            "SELECT c.heading, c.text, v.embedding FROM chunks c"
            " JOIN chunks_vec v ON v.rowid = c.id"
        ).fetchall()
        passages = [passage_text(h, unpack_text(t)) for h, t, _ in rows]
        blobs = [v for _, _, v in rows]
        if has_windows(conn):  # schema 7 on: the sentence windows' vectors too, under the
            # texts the rule that made them gives (schemas 7 and 8 made more windows than 9 does)
            spacing = windows.spacing_of(int((sqlite.read_profile(conn) or {}).get("schema", 0)))
            for cid, h, t, count in conn.execute(
                "SELECT id, heading, text, wins FROM chunks WHERE vec = 1 AND wins > 0"
            ).fetchall():
                codes = window_codes(conn, cid, count)
                texts = windows.windows(h, unpack_text(t), spacing)
                if codes is not None and len(codes) == len(texts):
                    passages += texts
                    blobs += codes
        if passages:
            # float32 bytes whichever schema wrote them: int8 codes (schema 4 on) dequantized,
            # an older index's float32 as they are (`remember` skips any other size: b"")
            vecs = [stored(v, self.embedder.dim) for v in blobs]
            self.embedder.remember(passages, [b"" if v is None else v.tobytes() for v in vecs])

    def close(self) -> None:
        self.pool.close(self.index_path)

    def drop(self) -> None:
        """Delete the index database (the next use rebuilds it from the notes)."""
        self.close()
        sqlite.delete(self.index_path)

    def reset(self) -> None:
        """Forget the index entirely, its folder included."""
        self.close()
        shutil.rmtree(self.index_dir, ignore_errors=True)

    def read(self, query: Callable[[IndexStore], T]) -> tuple[T, str]:
        """Run a read on the index; returns its result and a warning if the index turned out
        damaged and was rebuilt from the notes first ('' otherwise)."""
        try:
            return query(self.store()[0]), ""
        except CORRUPT as e:
            warning = self.heal(e)  # first: a tuple's items are evaluated left to right
            return query(self.store()[0]), warning

    # ------------------------------------------------------------------ what is read
    # Each returns what it read and a warning when the index was found damaged and rebuilt
    # first ('' otherwise), as `read` does: the open index never leaves this folder.
    def share(
        self,
        terms: list[str],
        qvecs: Callable[[], list[np.ndarray] | None],
        depth: int,
        prefix: str = "",
        flt: Filter | None = None,
    ) -> tuple[Share, str]:
        """This collection's share of a search (share.py): both legs' candidates."""
        debt = self.vector_debt  # as this process last left it, before any healing
        ask = partial(
            share, terms=terms, qvecs=qvecs, depth=depth, prefix=prefix, flt=flt, debt=debt
        )
        return self.read(ask)

    def rows(self, ids: list[int]) -> tuple[dict[int, reads.ChunkRow], str]:
        """The chunks these ids name, by id (those the index holds)."""
        return self.read(partial(reads.chunk_rows, ids=ids))

    def vectors(self) -> tuple[Matrix | None, str]:
        """The index's vectors in memory (matrix.py); None when it holds no vector table."""
        return self.read(lambda s: matrix(s) if s.has_vec else None)

    def note_chunks(self, path: str) -> tuple[list[tuple[int, int, str, int]], str]:
        """A note's chunks in order: (id, line, heading, 1 when its vector is still to come)."""
        return self.read(partial(reads.note_chunks, path=path))

    def note_texts(self, path: str) -> tuple[list[str], str]:
        return self.read(partial(reads.note_texts, path=path))

    def chunk_at(self, path: str, line: int) -> tuple[int | None, str]:
        """The id of the note's chunk holding `line`, if any."""
        return self.read(partial(reads.chunk_at, path=path, line=line))

    def chunk_place(self, cid: int) -> tuple[tuple[int, str] | None, str]:
        """A chunk's (line, heading path), if the index holds it."""
        return self.read(partial(reads.chunk_place, cid=cid))

    def links_of(self, path: str) -> tuple[list[links.Link], str]:
        """A note's links as written, in their order (links.py)."""
        return self.read(lambda s: links.of_note(s.conn, path))

    def links_unknown(self, path: str) -> tuple[str, str]:
        """Why the index holds no links of a note ('' when it holds them)."""
        return self.read(lambda s: links.why_unknown(s.conn, path))

    def links_naming(self, names: Iterable[str]) -> tuple[list[tuple[str, links.Link]], str]:
        """(linking note, link) of every link of this collection that could name `names`."""
        return self.read(lambda s: links.naming(s.conn, names))

    def link_names(self) -> tuple[links.Names, str]:
        """Every note and (note, alias) of the index: the same object while the index does not
        change (read again only when it did), so whoever builds on them can tell."""
        return self.read(self._names)

    def _names(self, store: IndexStore) -> links.Names:
        key = store.changes()
        held = self._held_names
        if held is None or held[0] != key:
            held = self._held_names = (key, links.Names(*links.notes_and_aliases(store.conn)))
        return held[1]

    def stored(self) -> Stored:
        """What the index holds of each note (staleness.py), read-only, never opening it for
        writing; empty when there is no index or it cannot be read."""
        if not self.index_path.exists():
            return {}
        with contextlib.suppress(apsw.Error, *CORRUPT), reading(self.index_path) as conn:
            return stored_stats(conn)
        return {}

    def heal(self, e: Exception) -> str:
        """The database is damaged: drop it, rebuild it from the notes; returns the warning."""
        store = self.pool.get(self.index_path)
        if store is not None and store.replaced():  # another process rebuilt it: reopen
            self.close()
            return ""
        msg = f"{self.rel}: index was damaged ({e}); rebuilt from the notes"
        log.warning("%s", msg)
        self.drop()
        self.sync()
        return msg

    # ------------------------------------------------------------------ sync
    def sync(
        self,
        prefix: str = "",
        full: bool = False,
        progress: SyncProgress | None = None,
        thorough: bool = False,
        **reading: Any,
    ) -> SyncReport:
        """Bring the index in line with the notes (only under `prefix`, if given).

        `thorough` (an explicit `memo index`): also run SQLite's quick_check on the database and
        report notes that cannot be indexed (FIFOs, symlink loops, undecodable names).
        `reading`: how this process reads the notes (sync.Syncer.run: `by`, `held`, `since`).
        A damaged database is dropped and rebuilt; a full disk or another write failure raises
        IndexError_ and leaves every file committed so far in the index; a stop request raises
        SyncStopped, also keeping them.
        """
        t0 = time.perf_counter()
        progress = progress or SyncProgress()
        try:
            try:
                report = self._sync(prefix, full, progress, thorough, reading)
            except CORRUPT as e:
                msg = f"index was damaged ({e}): rebuilt from the notes"
                log.warning("%s: %s", self.rel, msg)
                self.drop()
                held = reading.get("held")  # the first try may have released it (or not)
                again = {**reading, "held": held if held is not None and held.live else None}
                report = self._sync(prefix, False, progress, thorough, again)
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
        self,
        prefix: str,
        full: bool,
        progress: SyncProgress,
        thorough: bool,
        reading: dict[str, Any],
    ) -> SyncReport:
        report = SyncReport(self.name, self.rel)
        if full:
            self.drop()
        store, report.rebuilt = self.store()
        if full:
            report.rebuilt = "full rebuild requested"
        if thorough and not report.rebuilt:
            rows = store.conn.execute("PRAGMA quick_check(1)").fetchall()
            if rows != [("ok",)]:
                raise apsw.CorruptError(f"quick_check: {rows[0][0] if rows else 'no answer'}")
        Syncer(self.site, store, self.sync_state, report, progress).run(prefix, thorough, **reading)
        report.chunks_pending, report.chunks = store.pending(), store.chunk_count()
        self.vector_debt = (report.chunks, report.chunks_pending)
        return report

    def embed(
        self,
        report: SyncReport | None = None,
        progress: SyncProgress | None = None,
        budget: float | None = None,
        wait: bool = False,
        held: Lease | None = None,
        pace: Pace | None = None,
    ) -> SyncReport:
        """The second stage: vectors for the chunks that have none (embedding.embed_pending),
        into `report` (a new one when None). `budget` bounds it in seconds; `wait` waits for
        another process computing them; `held` is its lease when the caller took it already;
        `pace` the pass's measured speed. A damaged index is left for the next sync to
        rebuild."""
        report = report or SyncReport(self.name, self.rel)
        t0 = time.perf_counter()
        progress = progress or SyncProgress()
        try:
            store, _ = self.store()
            embed_pending(
                self.site, store, self.sync_state, report, progress, budget, wait, held, pace
            )
        except CORRUPT as e:
            report.warnings.append(f"{self.rel}: index damaged ({e}): rebuilt on the next sync")
        except apsw.FullError as e:
            raise IndexError_(
                f"the disk holding {self.index_dir} is full ({e}); the vectors made so far "
                "are kept",
                "Free some space (or set MEMO_INDEX_DIR to another disk) and run `memo index` "
                "again: it goes on where it stopped.",
            ) from e
        except apsw.Error as e:
            raise IndexError_(f"cannot write the index {self.index_path}: {e}") from e
        report.seconds += time.perf_counter() - t0
        self.vector_debt = (report.chunks, report.chunks_pending)
        return report

    # ------------------------------------------------------------------ status
    def status(self) -> CollectionStatus:
        """Per-collection facts for `memo status`, computed without changing the index."""
        return collection_status(self.site)

    def last_write(self) -> float | None:
        return sqlite.last_write(self.index_path)


__all__ = ["Collection", "SyncProgress", "SyncReport", "SyncStopped"]
