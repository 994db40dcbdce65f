"""The library's collections: a fresh enough registry, and one Collection object per folder.

The registry (registry_tools/) lists every collection from its `_meta.yaml`; this module decides
when to re-scan it and keeps the Collection objects (cheap: a meta and a path) that share one
pool of open indexes.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from .. import caches
from ..collection import lease
from ..collection.collection import Collection
from ..collection.meta import META_FILE, CollectionMeta, load_meta
from ..collection.pool import StorePool, open_files_cap
from ..config import Settings
from ..embed import Embedder
from ..embed.cache import counting
from ..errors import MemoError
from ..registry_tools.entry import Entry, RefreshReport
from ..registry_tools.registry import Registry
from ..sqlite import DatabaseError

log = logging.getLogger("memo.index")
MAX_OBJECTS = 4096  # Collection objects kept (cheap: a meta and a path; no file open)
SMALL_LIBRARY = 200  # up to this many collections the registry is re-checked on every call
REGISTRY_TTL = 60.0  # beyond, it is re-checked when older than this (seconds)
INLINE_EMBED = 256  # descriptions embedded inside a search/route call; the rest: registry rebuild


class Collections:
    def __init__(self, root: Path, embedder: Embedder | None, settings: Settings) -> None:
        self.root = root
        self.embedder = embedder
        self.settings = settings
        self.pool = StorePool(settings.max_open or open_files_cap())
        self._objects: dict[Path, Collection] = {}  # bounded, least recently used first
        self._registry: Registry | None = None
        self._seen: set[str] = set()  # valid collections when `discoveries` last looked
        # a pass (memo index, the watcher) re-scanned: new descriptions wait for its vector
        # stage (`describe`), so reading notes never waits for the model to load or be built
        self.describe_later = False

    # ------------------------------------------------------------------ the registry
    def scanned(self) -> Registry:
        """The registry as the last `registry()` call left it (one scan serves one request:
        a search resolves its target, then reads the broken collections from the same scan)."""
        return self._registry if self._registry is not None else self.registry()

    def registry(self, force: bool = False) -> Registry:
        """The registry, re-scanned when it is missing or due.

        Small libraries (<= SMALL_LIBRARY collections) are re-scanned on every call: a walk over
        their folders costs a few milliseconds, and a folder that just got its _meta.yaml is
        searchable at once. Bigger ones are re-scanned when the last scan is older than
        MEMO_REGISTRY_TTL (default REGISTRY_TTL s), and by `memo index`, `memo registry
        rebuild` and the watcher (`force`).
        """
        reg = self._registry
        if reg is None:
            reg = self._registry = Registry(self.root, self.embedder, self.settings)
        reg.load()
        ttl = self.settings.registry_ttl
        if ttl is None:
            ttl = 0.0 if len(reg.entries) <= SMALL_LIBRARY else REGISTRY_TTL
        self.describe_later = self.describe_later or force
        if force or reg.scanned_at == 0 or time.time() - reg.scanned_at >= ttl:
            # a pass running elsewhere embeds new descriptions at its vector stage: a search
            # meanwhile does not take the cores from it for them
            later = self.describe_later or lease.passing(self.registry_dir) is not None
            self.refreshed(reg.refresh(embed_limit=0 if later else INLINE_EMBED))
        return reg

    @property
    def registry_dir(self) -> Path:
        return caches.registry_dir(self.root, self.settings)

    def describe(self) -> None:
        """The descriptions a pass's re-scan left for its vector stage, embedded now (up to
        INLINE_EMBED; `memo registry rebuild` does all). Failing is the router's loss only."""
        if not self.describe_later:
            return
        self.describe_later = False
        try:
            with counting():  # not chunks: what the cache serves here is not the pass's count
                self.registry().embed_descriptions(INLINE_EMBED)
        except (MemoError, DatabaseError) as e:
            log.warning("descriptions wait for the next scan: %s", e)

    def rebuild(
        self,
        embed: bool = True,
        write_yaml: bool = True,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> RefreshReport:
        """`memo registry rebuild`: full scan, index stats, every description embedded, yaml."""
        reg = self._registry or Registry(self.root, self.embedder, self.settings)
        self._registry = reg
        rep = reg.refresh(
            embed_limit=None if embed else 0, stats=True, write_yaml=write_yaml, progress=progress
        )
        self.refreshed(rep)
        return rep

    def refreshed(self, rep: RefreshReport) -> None:
        """A re-scan happened: Collection objects of changed or removed metas are rebuilt."""
        for rel in rep.changed + rep.removed:
            self.forget(self.folder(rel))

    def discoveries(self) -> tuple[list[str], list[str]]:
        """Valid collections (paths) found and gone since the last call; the first call finds
        them all. Per process: the registry is shared, what this process has seen is not."""
        reg = self.registry()
        now = {e.path for e in reg.entries if not e.error}
        found, gone = sorted(now - self._seen), sorted(self._seen - now)
        self._seen = now
        for rel in gone:
            self.forget(self.folder(rel))
        return found, gone

    def update_summaries(self, folders: list[Path]) -> None:
        """Tell the router what these collections hold now (after a sync changed them). The
        router's index is a cache: failing to tell it never fails the sync (the next scan of
        the registry reads the summaries again)."""
        if folders:
            try:
                self.registry().update_stats(folders)
            except (MemoError, DatabaseError) as e:
                log.warning(
                    "the router's view of %d collections waits for the next scan: %s",
                    len(folders),
                    e,
                )

    # ------------------------------------------------------------------ collections
    def folder(self, rel: str) -> Path:
        return self.root if rel == "." else self.root / rel

    def rel(self, folder: Path) -> str:
        return (
            "." if folder == self.root else os.path.relpath(folder, self.root).replace(os.sep, "/")
        )

    def under(self, folder: Path | None = None) -> list[Collection]:
        """Valid collections at or below `folder` (default: the root), from the registry."""
        return [self._of_entry(e) for e in self.entries_under(folder) if not e.error]

    def entries_under(self, folder: Path | None = None) -> Iterator[Entry]:
        """Registry entries at or below `folder`, broken metas included."""
        reg = self.registry()
        prefix = "" if folder is None or folder == self.root else self.rel(folder)
        for r in reg.select(prefix):
            for i in r:
                yield reg.entries[i]

    def by_path(self, rel: str) -> Collection:
        """The collection at `rel` (relative to the root), as the last scan knows it (a route
        looks up its candidates one by one: a small library would be re-scanned for each)."""
        e = self.scanned().entry(rel)
        if e is None or e.error:
            return self.at(self.folder(rel))
        return self._of_entry(e)

    def at(self, folder: Path) -> Collection:
        """The collection whose folder is `folder`; MetaInvalidError when its meta is broken."""
        coll = self._objects.pop(folder, None)
        if coll is None:
            coll = self._make(folder, load_meta(folder))
        self._keep(folder, coll)
        return coll

    def owner(self, path: Path) -> Path | None:
        """The collection folder that owns `path`: the nearest folder at or above it (a file's
        parent and up) holding a `_meta.yaml`, inside the root."""
        start = path if path.is_dir() else path.parent
        for folder in (start, *start.parents):
            if folder != self.root and self.root not in folder.parents:
                return None
            if (folder / META_FILE).is_file():
                return folder
        return None

    def forget(self, folder: Path) -> None:
        """Drop the Collection object of `folder` (its meta changed or it vanished)."""
        coll = self._objects.pop(folder, None)
        if coll is not None:
            coll.close()

    def close(self) -> None:
        self.pool.close_all()
        self._objects.clear()
        if self._registry is not None:
            self._registry.close()

    def _of_entry(self, e: Entry) -> Collection:
        folder = self.folder(e.path)
        coll = self._objects.pop(folder, None) or self._make(folder, e.meta())
        self._keep(folder, coll)
        return coll

    def _make(self, folder: Path, meta: CollectionMeta) -> Collection:
        return Collection(folder, self.root, meta, self.embedder, self.settings, self.pool)

    def _keep(self, folder: Path, coll: Collection) -> None:
        self._objects[folder] = coll  # most recent last
        if len(self._objects) > MAX_OBJECTS:
            self._objects.pop(next(iter(self._objects)))
