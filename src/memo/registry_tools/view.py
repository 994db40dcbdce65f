"""The registry in memory: entries sorted by path, prefix ranges, and the vector matrices.

A process loads the registry's rows once and then follows other processes' changes by
generation: a change that only updated existing rows (a collection's summary after a sync, an
edited description) is applied in place — at 100,000 collections re-reading every row, vector
and centroid took seconds after each watcher sync. Added, removed or moved collections shift
positions: then everything is read again.
"""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np

from .database import RegistryStore
from .entry import Entry

PATCH_MAX = 1_000  # rows changed since the last load that are applied in place
PATCH_LOG_MAX = 100_000  # positions patched since the last full read before one is forced


class RegistryView:
    def __init__(self, store: RegistryStore, dim: int | None) -> None:
        self.store = store
        self.dim = dim  # the embedder's dimension; None: no vectors are read
        self.entries: list[Entry] = []  # sorted by path
        self._paths: list[str] = []
        self._by_id: dict[int, int] = {}  # row id -> position in entries
        self.generation = -1  # of the rows loaded; -1: nothing loaded (or a failed write)
        self._vectors: tuple[np.ndarray, np.ndarray] | None = None  # descriptions (mat, has)
        self._content: tuple[np.ndarray, np.ndarray] | None = None  # centroids (mat, has)
        self._ok: np.ndarray | None = None  # bool (n,): entries without a broken meta
        # What readers (the router) derive from the loaded rows and vectors: dropped whenever
        # those are read again in full; `patched` lists the positions changed in place since,
        # for a reader that keeps per-position data and updates just those rows.
        self.derived: dict[str, Any] = {}
        self.patched: list[int] = []

    # ------------------------------------------------------------------ loading
    def load(self) -> None:
        """Catch up with the database: in place when only rows changed, in full otherwise."""
        gen = self.store.generation()
        if gen == self.generation:
            return
        # Patch only forward, and not forever: a generation that went back means a new database
        # (deleted and rebuilt), and a long patch log means a full read is due anyway.
        patchable = 0 <= self.generation < gen and len(self.patched) < PATCH_LOG_MAX
        if patchable and self._patch(self.generation):
            self.derived.pop("df", None)  # stem row counts; the router patches what else it keeps
        else:
            self.entries = self.store.rows()
            self._paths = [e.path for e in self.entries]
            self._by_id = {e.id: i for i, e in enumerate(self.entries)}
            self._ok = None
            self.release_vectors()
            self.patched = []
            self.derived.clear()
        self.generation = gen

    def _patch(self, since: int) -> bool:
        """Apply the rows changed after generation `since` in place; False if positions move."""
        if self.store.deleted_since(since):
            return False
        rows = self.store.rows(since=since, limit=PATCH_MAX + 1)
        if len(rows) > PATCH_MAX:
            return False
        changed = [(self._by_id.get(e.id), e) for e in rows]
        if any(pos is None or self.entries[pos].path != e.path for pos, e in changed):
            return False
        ok = self.ok_mask()
        for pos, e in changed:
            assert pos is not None
            self.entries[pos] = e
            ok[pos] = not e.error
            self.patched.append(pos)
        positions = [pos for pos, _ in changed if pos is not None]
        for table, loaded in (("colls_vec", self._vectors), ("colls_cvec", self._content)):
            if loaded is not None:
                loaded[0][positions], loaded[1][positions] = self._matrix(table, positions)
        return True

    # ------------------------------------------------------------------ entries
    def ok_mask(self) -> np.ndarray:
        """bool (n,) aligned with entries: True where the meta is valid (routable)."""
        if self._ok is None or len(self._ok) != len(self.entries):
            self._ok = np.array([not e.error for e in self.entries], dtype=bool)
        return self._ok

    def select(self, prefix: str | None) -> list[range]:
        """Positions of the entries a prefix covers, as ranges of the path-sorted list.

        `work` or `work/` or `work/*`: the collection `work` and everything below `work/` (never
        `work-old`); `work/j*`: every path starting with `work/j`; ''/'.'/'*'/None: all.
        """
        p = (prefix or "").strip()
        if p in ("", ".", "*", "/", "/*"):
            return [range(len(self.entries))]
        if p.endswith("/*"):
            p = p[:-2]
        elif p.endswith("*"):
            start = p.rstrip("*").lstrip("/")
            return [range(*self._between(start, start + "\U0010ffff"))]
        p = p.strip("/")
        out = []
        lo, hi = self._between(p, p + "\x00")
        if hi > lo:
            out.append(range(lo, hi))
        out.append(range(*self._between(p + "/", p + "/\U0010ffff")))
        return out

    def _between(self, a: str, b: str) -> tuple[int, int]:
        return bisect.bisect_left(self._paths, a), bisect.bisect_left(self._paths, b)

    def mask(self, prefix: str | None) -> np.ndarray:
        """bool (n,): the entries a prefix covers."""
        out = np.zeros(len(self.entries), dtype=bool)
        for r in self.select(prefix):
            out[r.start : r.stop] = True
        return out

    def broken(self, prefix: str | None) -> list[Entry]:
        """Entries under a prefix whose `_meta.yaml` is broken."""
        bad = self.mask(prefix) & ~self.ok_mask()
        return [self.entries[int(p)] for p in np.flatnonzero(bad)]

    def entry(self, path: str) -> Entry | None:
        """The entry of the collection at `path` (relative to the root), if there is one."""
        i = bisect.bisect_left(self._paths, path)
        return self.entries[i] if i < len(self._paths) and self._paths[i] == path else None

    def position(self, row_id: int) -> int | None:
        return self._by_id.get(row_id)

    # ------------------------------------------------------------------ vectors
    def vectors(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(description matrix aligned with entries, has-vector mask); None without a model."""
        if self.dim is None:
            return None
        if self._vectors is None:
            self._vectors = self._matrix("colls_vec")
        return self._vectors

    def content_vectors(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(matrix aligned with entries, has-centroid mask): each indexed collection's chunk
        centroid, zero rows elsewhere; None without a model."""
        if self.dim is None:
            return None
        if self._content is None:
            self._content = self._matrix("colls_cvec")
        return self._content

    def vectors_at(
        self, positions: list[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(description rows, has, centroid rows, has) of these positions, read from the
        database (zero rows where none): what a reader needs to patch what it derived."""
        return (*self._matrix("colls_vec", positions), *self._matrix("colls_cvec", positions))

    def release_vectors(self) -> None:
        """Forget the loaded matrices (a reader derived what it needs); reloaded on demand."""
        self._vectors = self._content = None

    def _matrix(
        self, table: str, positions: list[int] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        assert self.dim is not None
        if positions is None:
            return self.store.vectors(table, self.dim, self._by_id, len(self.entries))
        ids = [self.entries[p].id for p in positions]
        row_of = {rid: i for i, rid in enumerate(ids)}
        return self.store.vectors(table, self.dim, row_of, len(ids), ids)
