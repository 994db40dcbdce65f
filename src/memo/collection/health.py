"""What `memo status` says about one collection, read without changing its index.

Skipped files are memo's choice (too large, binary, a FIFO); failed files are notes memo could
not read (a permission, an I/O error). The two are told apart by the skip's kind (skips.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import apsw

from .. import sqlite
from ..errors import IndexError_, MemoError
from ..outputs import EMPTY, Published, doc
from ..printable import shown
from . import lease
from .chunker import LOST
from .excluded import counted
from .files import Excluded, FileStat, Rejected, note_files
from .meta import load_meta
from .site import Site
from .skips import UNKNOWN, Skip
from .staleness import behind, stored_stats
from .store import CORRUPT, has_vector_table, pending_count, reading
from .summary import languages


@dataclass(slots=True)
class CollectionStatus(Published):
    """One collection's index as `memo status` shows it."""

    collection: str = doc("The collection's name.")
    path: str = doc("Its folder, relative to the library root.")
    description: str = doc("What its _meta.yaml says it holds.")
    index: str = doc("Where its index.db is.")
    indexed: bool = doc("An index exists.")
    files_on_disk: int = doc("Its notes on disk.")
    files: int = doc("Its notes in the index.", default=0)
    drafted: bool = doc("Its description was drafted by `memo init`: review it.", default=False)
    languages: str = doc(  # summary.py
        "The share of its chunks per language: 'ru:0.93 en:0.07'.", default=""
    )
    chunks: int = doc("Chunks the index holds.", default=0)
    stale: int = doc(
        "Notes changed since indexing (added, edited, removed): their words are owed.", default=0
    )
    pending: int = doc("Chunks searchable by their words, their vectors still to come.", default=0)
    embedding_by: int | None = doc("The process id computing those vectors now.", default=None)
    lost: int = doc(
        "Lines with words in no chunk that no rule dropped (a bug in memo: report it).", default=0
    )
    indexed_files: list[dict[str, Any]] = doc(
        "Each indexed note: path, chunks, note, and `dropped`: [{first, last, why}], its lines "
        "with words in no chunk.",
        factory=list,
    )
    skipped: list[dict[str, str]] = doc("Notes not indexed: path, why.", factory=list)
    excluded: list[dict[str, Any]] = doc(  # excluded.py
        "Notes left out on purpose, per rule: kind, source, pattern, why, notes.", factory=list
    )
    failed: list[dict[str, str]] = doc("Notes that could not be read: path, error.", factory=list)
    last_indexed: float | None = doc("Unix time of the last index write.", default=None)
    embedder: str | None = doc("The model its vectors come from.", default=None)
    current: bool = doc(
        "Built with this process's profile (schema, chunker, model).", default=False
    )
    size_bytes: int = doc("The index's size on disk.", default=0)
    damaged: str = doc(
        "Why the index cannot be read: rebuilt on the next index or search.",
        default="",
        omit=EMPTY,
    )
    watcher_last_seen: float | None = doc(
        "Unix time of a running `memo watch`'s last heartbeat.", default=None
    )
    last_reconcile: float | None = doc("Unix time of its last full scan.", default=None)


def collection_status(site: Site) -> CollectionStatus:
    rejected: Rejected = []
    left_out: Excluded = []
    on_disk = note_files(site.folder, site.root, rejected=rejected, excluded=left_out)
    not_notes = [(shown(site.root_path(p)), skip) for p, skip in rejected]
    st = CollectionStatus(
        collection=site.name,
        path=site.rel,
        description=site.meta.description,
        index=str(site.index_path),
        indexed=site.index_path.exists(),
        files_on_disk=len(on_disk),
        stale=len(on_disk),
        drafted=_drafted(site),
        excluded=counted(left_out),
    )
    stored: list[tuple[str, Skip]] = []
    if st.indexed:
        try:
            stored = _read_facts(site, on_disk, st, {p for p, _ in left_out})
        except (IndexError_, apsw.Error, *CORRUPT) as e:  # damaged: the next sync rebuilds it
            st.damaged = f"index unreadable ({e}); rebuilt on the next index or search"
        else:
            st.size_bytes = sqlite.size_on_disk(site.index_path)
    for path, skip in stored + not_notes:
        if skip.failed:
            st.failed.append({"path": path, "error": skip.why})
        else:
            st.skipped.append({"path": path, "why": skip.why})
    return st


def _drafted(site: Site) -> bool:
    """The description still carries `memo init`'s `drafted: true`. Read from the file: the
    registry keeps a collection's name, description and tags, not the rest of its meta."""
    if "drafted" in site.meta.extra:
        return site.meta.extra["drafted"] is True
    try:
        return load_meta(site.folder).extra.get("drafted") is True
    except MemoError:  # a meta broken since the registry read it: the next scan says so
        return False


def _read_facts(
    site: Site, on_disk: dict[str, FileStat], st: CollectionStatus, left_out: set[str]
) -> list[tuple[str, Skip]]:
    """Fill `st` from the index; returns the notes the index records as skipped. A note a
    rule leaves out is not "changed since indexing" (it leaves the index at the next sync,
    and no search serves it before: a search syncs first)."""
    with reading(site.index_path) as conn:
        profile = sqlite.read_profile(conn) or {}
        stored = stored_stats(conn)
        columns = {r[1] for r in conn.execute("PRAGMA table_info(files)")}
        kind = "skip" if "skip" in columns else repr(UNKNOWN)  # an index from before kinds
        dropped = "f.dropped" if "dropped" in columns else "''"  # before schema 6: unknown
        two_stage = "vec" in {r[1] for r in conn.execute("PRAGMA table_info(chunks)")}
        if two_stage and has_vector_table(conn):
            st.pending = pending_count(conn)
        skipped = [
            (shown(site.root_path(r[0])), Skip(r[1], r[2]))
            for r in conn.execute(f"SELECT path, {kind}, note FROM files WHERE status='skipped'")
        ]
        (chunks,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
        st.languages = languages(conn, int(chunks))
        (last,) = conn.execute("SELECT max(indexed_at) FROM files").fetchone()
        per_file = [
            {
                "path": shown(site.root_path(r[0])),
                "chunks": int(r[1]),
                "note": r[2],
                "dropped": _runs(r[3]),
            }
            for r in conn.execute(
                f"SELECT f.path, count(c.id), f.note, {dropped} FROM files f LEFT JOIN chunks c"
                " ON c.path = f.path WHERE f.status = 'ok' GROUP BY f.path ORDER BY f.path"
            )
        ]
    if st.pending:
        other = lease.holder(site.index_path)
        st.embedding_by = other.pid if other else None
    owed = behind(on_disk, stored)
    st.stale = len(owed.todo) + sum(1 for p in owed.removed if p not in left_out)
    st.lost = sum(d["last"] - d["first"] + 1 for f in per_file for d in f["dropped"] if d["lost"])
    st.files, st.chunks, st.indexed_files = len(per_file), int(chunks), per_file
    st.last_indexed, st.embedder = last, profile.get("model")
    st.current = profile == site.profile()
    return skipped


def _runs(stored: str) -> list[dict[str, Any]]:
    """The coverage report of one note as stored (files.dropped): [{first, last, why, lost}]."""
    try:
        runs = json.loads(stored) if stored else []
    except ValueError:
        return []
    return [
        {"first": int(a), "last": int(b), "why": str(why), "lost": why == LOST}
        for a, b, why in runs
    ]
