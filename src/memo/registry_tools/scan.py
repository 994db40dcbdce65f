"""Finding what changed: the `_meta.yaml` files under a root, and the indexes' summaries.

A scan walks the tree (folders only, no notes), stats every `_meta.yaml`, and parses only those
whose (mtime, size) moved and whose bytes differ: 100,000 unchanged collections cost one walk
and 100,000 stats, no YAML. A summary is re-read only from an index whose signature ((mtime,
size) of the database and its WAL) moved since the last read: one stat otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .. import caches, sqlite
from ..caches import digest
from ..collection.excluded import for_collection
from ..collection.files import find_collections
from ..collection.meta import META_FILE
from ..collection.summary import summarize
from ..config import Settings
from .entry import Entry, read_entry


@dataclass(slots=True)
class MetaChanges:
    """What a walk of the `_meta.yaml` files found against the rows known."""

    folders: list[Path]  # every collection folder found
    upserts: list[Entry] = field(default_factory=list)  # rows to write (new, changed, restamped)
    gone: list[Entry] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)


def rel_path(root: Path, folder: Path) -> str:
    f, r = str(folder), str(root)
    if f == r:
        return "."
    return f[len(r) + 1 :].replace(os.sep, "/") if f.startswith(r + os.sep) else f


def scan_metas(root: Path, known: dict[str, Entry]) -> MetaChanges:
    """The collections under `root` against the rows known. A folder the library's own rules
    leave out (its `.memoignore`, the vault's excluded files) holds no collection: its notes
    would all be left out, so it would be a collection of nothing on every list."""
    out = MetaChanges(find_collections(root, for_collection(root, root)))
    seen: set[str] = set()
    for folder in out.folders:
        rel = rel_path(root, folder)
        seen.add(rel)
        old = known.get(rel)
        try:
            st = os.stat(folder / META_FILE)
        except OSError:
            continue  # vanished since the walk
        if old is not None and (old.mtime_ns, old.size) == (st.st_mtime_ns, st.st_size):
            continue
        try:
            raw = (folder / META_FILE).read_bytes()
        except OSError:
            continue
        if old is not None and old.hash == digest(raw):
            old.mtime_ns, old.size = st.st_mtime_ns, st.st_size
            out.upserts.append(old)  # same bytes, new stat: remember the stat only
            continue
        entry = read_entry(folder, rel, st, raw)
        if old is not None:
            entry.id = old.id
            entry.files, entry.chunks, entry.last_indexed = old.files, old.chunks, old.last_indexed
            entry.headings, entry.content, entry.content_sig = (
                old.headings,
                old.content,
                old.content_sig,
            )
            entry.languages = old.languages
        (out.changed if old is not None else out.added).append(rel)
        out.upserts.append(entry)
    out.gone = [known[p] for p in known if p not in seen]
    return out


def read_summaries(
    root: Path,
    settings: Settings,
    folders: Iterable[Path],
    entries: dict[str, Entry],
    centroids: dict[str, bytes | None],
) -> list[Entry]:
    """Update `entries` (by path) with the summary of each folder's index where it moved;
    returns the entries changed. New centroids go into `centroids` (None: delete it)."""
    out = []
    # The walk never follows a symlinked folder, so a collection's real path is the root's
    # real path + its relative path: one realpath() for all of them.
    root_real = os.path.realpath(root)
    for folder in folders:
        rel = rel_path(root, folder)
        e = entries.get(rel)
        if e is None or e.error:
            continue
        local = folder / caches.HIDDEN / "index.db"
        if settings.index_dir is None and local.exists():
            path = local
        else:  # MEMO_INDEX_DIR or a read-only folder
            real = root_real if rel == "." else os.path.join(root_real, rel)
            path = caches.index_dir(folder, settings, real) / "index.db"
        sig = sqlite.signature(path)
        if sig and sig == e.content_sig:  # the index has not moved since the last read
            continue
        s = summarize(path)
        new = (
            s.files,
            s.chunks,
            s.last_indexed,
            s.headings,
            s.stems,
            sig if s.files is not None else "",
            s.languages,
        )
        old = (
            e.files,
            e.chunks,
            e.last_indexed,
            e.headings,
            e.content,
            e.content_sig,
            e.languages,
        )
        if old == new:
            continue
        if new[5]:
            centroids[rel] = s.centroid
        elif e.content_sig:  # the index is gone (or unreadable): so is its centroid
            centroids[rel] = None
        (e.files, e.chunks, e.last_indexed, e.headings, e.content, e.content_sig, e.languages) = new
        out.append(e)
    return out
