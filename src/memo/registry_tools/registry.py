"""The registry: every collection of a library, its `_meta.yaml`, and the router index over them.

Two caches, both rebuilt from the `_meta.yaml` files whenever they are missing: `_registry.yaml`
at the root (export.py), the human-readable list, written by `memo registry rebuild` and kept
current once it exists (memo drops no file into a notes tree unasked); and `.memo/registry.db`
(database.py), which the router reads (router/). A refresh (scan.py) re-reads only the metas that
changed and embeds only new or changed descriptions, `embed_limit` of them inside a search call
(the rest wait for an explicit rebuild, and the router says so). The rows live in memory in a
RegistryView (view.py), which follows other processes' changes in place.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .. import caches
from ..collection.lexical import LEXICAL_VERSION
from ..collection.meta import META_FILE
from ..config import Settings
from ..embed import Embedder
from ..errors import EmbedderUnavailableError
from . import export, scan
from .database import REGISTRY_SCHEMA, RegistryStore
from .entry import Entry, RefreshReport
from .view import RegistryView

EMBED_BATCH = 64


class Registry(RegistryView):
    """The collections of one library root, loaded in memory, sorted by path."""

    def __init__(self, root: Path, embedder: Embedder | None, settings: Settings | None = None):
        self.root = root
        self.embedder = embedder
        self.settings = settings or Settings()
        self.folder = caches.registry_dir(root, self.settings)
        store = RegistryStore(self.folder, self.profile())
        super().__init__(store, embedder.dim if embedder is not None else None)
        self.scanned_at = 0.0
        self._centroids: dict[str, bytes | None] = {}  # path -> centroid waiting to be written

    @property
    def yaml_path(self) -> Path:
        return export.yaml_path(self.root, self.folder, self.settings.index_dir is not None)

    def profile(self) -> dict[str, Any]:
        """What makes the stored rows wrong when it changes (the model only owns the vectors:
        see `RegistryStore.claim_vectors`)."""
        return {"schema": REGISTRY_SCHEMA, "lexical": LEXICAL_VERSION}

    def load(self) -> None:
        """(Re)read the registry if another process (or a refresh) changed it."""
        super().load()
        self.scanned_at = float(self.store.value("scanned_at") or 0)

    def close(self) -> None:
        self.store.close()

    def ok_entries(self) -> list[Entry]:
        return [e for e in self.entries if not e.error]

    # ------------------------------------------------------------------ refresh
    def refresh(
        self,
        embed_limit: int | None = None,
        stats: bool = False,
        write_yaml: bool | None = None,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> RefreshReport:
        """Bring the registry in line with the `_meta.yaml` files under the root.

        `embed_limit`: embed at most this many new descriptions now (None = all).
        `stats`: also read every collection's index summary (counts, headings, stems, centroid).
        `write_yaml`: write _registry.yaml (default: only if it exists already).
        """
        t0 = time.perf_counter()
        self.load()
        if self.embedder is not None and self.store.claim_vectors(self.embedder.model_id):
            self.load()  # another model's vectors are gone: their summaries are read again
            stats = True
        stats = stats or self.store.created  # a new database is filled whole, summaries too
        self.store.created = False
        rep = RefreshReport()
        known = {e.path: e for e in self.entries}
        found = scan.scan_metas(self.root, known)
        rep.walk_seconds = time.perf_counter() - t0
        rep.added, rep.changed = found.added, found.changed
        rep.removed = sorted(e.path for e in found.gone)
        upserts = found.upserts
        if stats:
            pending = {**known, **{e.path: e for e in upserts}}
            fresh = scan.read_summaries(
                self.root, self.settings, found.folders, pending, self._centroids
            )
            queued = {id(u) for u in upserts}  # by identity: a set, not a scan per entry
            upserts += [e for e in fresh if id(e) not in queued]
        if upserts or found.gone:
            self._write(upserts, found.gone)
        self.store.set_scanned(time.time())
        self.load()
        rep.errors = [f"{self._meta_path(e)}: {e.error}" for e in self.entries if e.error]
        rep.collections = len(self.entries) - len(rep.errors)
        self._embed_missing(rep, embed_limit, progress)
        if write_yaml or (write_yaml is None and rep.changed_any and self.yaml_path.exists()):
            export.write_yaml(self.yaml_path, self.root, self.entries)
            rep.wrote_yaml = True
        rep.seconds = time.perf_counter() - t0
        return rep

    def update_stats(self, folders: Iterable[Path]) -> RefreshReport:
        """Re-read the index summary of these collections (after a sync changed them).

        Cheap for an index that has not moved (one stat); the rest of the registry is untouched.
        """
        t0 = time.perf_counter()
        self.load()
        rep = RefreshReport()
        known = {e.path: e for e in self.entries}
        upserts = scan.read_summaries(self.root, self.settings, folders, known, self._centroids)
        if upserts:
            self._write(upserts, [])
            self.load()
        rep.collections = len(self.entries)
        rep.seconds = time.perf_counter() - t0
        return rep

    def write_yaml(self) -> Path:
        return export.write_yaml(self.yaml_path, self.root, self.entries)

    def _write(self, upserts: list[Entry], gone: list[Entry]) -> None:
        # The callers changed the loaded entries already (stats, stamps): if this write fails,
        # the next load must read everything again, not patch over those edits.
        try:
            self.store.write(upserts, gone, self._centroids)
        except BaseException:
            self.generation = -1
            raise

    def embed_descriptions(self, limit: int | None = None) -> RefreshReport:
        """Embed up to `limit` descriptions that have no vector yet (None: all)."""
        rep = RefreshReport()
        self._embed_missing(rep, limit, None)
        return rep

    def _embed_missing(
        self,
        rep: RefreshReport,
        limit: int | None,
        progress: Callable[[str, int, int], None] | None,
    ) -> None:
        if self.embedder is None:
            return
        have = self.store.description_hashes()
        todo = [e for e in self.entries if not e.error and have.get(e.id) != e.text_hash()]
        now = todo if limit is None else todo[:limit]
        t0 = time.perf_counter()
        done = 0
        try:
            for i in range(0, len(now), EMBED_BATCH):
                batch = now[i : i + EMBED_BATCH]
                vecs = self.embedder.embed_passages([e.embed_text() for e in batch])
                self.store.write_vectors(
                    (e.id, e.text_hash(), np.asarray(v, dtype=np.float32).tobytes())
                    for e, v in zip(batch, vecs, strict=True)
                )
                done += len(batch)
                if progress:
                    progress("embedding descriptions", done, len(now))
        except EmbedderUnavailableError as e:
            rep.errors.append(f"descriptions not embedded: {e}")
        rep.embedded = done
        rep.not_embedded = len(todo) - done
        rep.embed_seconds = time.perf_counter() - t0
        if done:
            self.release_vectors()
            self.derived.clear()

    # ------------------------------------------------------------------ for the router
    def search(self, match: str, limit: int) -> list[int]:
        """Positions of the entries whose words match an FTS5 expression, best BM25 first."""
        out = []
        for rid in self.store.search(match, limit):
            pos = self.position(rid)
            if pos is not None:
                out.append(pos)
        return out

    def row_counts(self, stems: list[str], cache_max: int) -> dict[str, int]:
        """How many rows hold each stem; kept until the registry is read again."""
        df: dict[str, int] = self.derived.setdefault("df", {})
        if len(df) > cache_max:
            df.clear()
        unknown = [t for t in stems if t not in df]
        if unknown:
            df.update(self.store.row_counts(unknown))
        return df

    def broken_warnings(self, prefix: str | None) -> list[str]:
        """One line per broken `_meta.yaml` under a prefix."""
        return [f"{self._meta_path(e)}: {e.error}" for e in self.broken(prefix)]

    @staticmethod
    def _meta_path(e: Entry) -> str:
        return META_FILE if e.path == "." else f"{e.path}/{META_FILE}"
