"""An index's vectors in memory: every phrasing's nearest chunks, the notes' mean vectors and
each chunk's sentence windows, from one matrix read once while the index does not change.

Each index's vectors (int8 as stored, cosine as vec0's) are read into a float32 matrix, rows
sorted by chunk (its own vector, then its windows), so a search with up to five query vectors
multiplies it once each and takes each chunk's best row; the note witness, the focus, `memo why`
and `memo related` ask the same rows through `Matrix`'s methods. A matrix is read again when its
index changed (`IndexStore.changes`, checked on every read); matrices are kept least recently
used first within CACHE_BYTES.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from . import reads
from .filters import Filter
from .store import IndexStore
from .vectors import as_indexed, dequantize

CACHE_BYTES = 512 * 2**20  # every index's matrix together (the vault's 17 indexes: ~16 MB)


@dataclass(frozen=True, slots=True)
class Matrix:
    """One index's vectors: `rows` (n, dim) float32 unit rows sorted by chunk, each chunk's own
    vector first, then its windows in order; `chunks` the chunk ids (ascending) and `starts`
    the first row of each; `notes` the note paths, `known` every chunk of the index (vector or
    not, ascending) and `note_of` each one's place in `notes`; `means` each note's unit mean of
    its chunks' own vectors (a zero row for a note none of whose chunks has one yet)."""

    chunks: np.ndarray
    starts: np.ndarray
    rows: np.ndarray
    own: np.ndarray  # bool per chunk: its first row is its own vector (not a window)
    notes: list[str]
    known: np.ndarray
    note_of: np.ndarray
    means: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(
            self.rows.nbytes + self.means.nbytes + 3 * self.chunks.nbytes + 2 * self.known.nbytes
        )

    def place(self, ids: Iterable[int], among: np.ndarray | None = None) -> dict[int, int]:
        """Each of these chunk ids' position in `chunks` (or `among`), those it holds."""
        pool = self.chunks if among is None else among
        want = np.fromiter(ids, dtype=np.int64)
        if not len(pool) or not len(want):
            return {}
        at = np.searchsorted(pool, want)
        ok = (at < len(pool)) & (pool[np.minimum(at, len(pool) - 1)] == want)
        return {int(c): int(i) for c, i, k in zip(want, at, ok, strict=True) if k}

    def note_means(self, ids: Iterable[int]) -> tuple[dict[int, str], dict[str, np.ndarray]]:
        """Each of these chunks' note, and each such note's mean vector (notes without one
        left out): what collection/reads.note_means read from the index."""
        paths: dict[int, str] = {}
        means: dict[str, np.ndarray] = {}
        for cid, i in self.place(ids, self.known).items():
            note = self.notes[self.note_of[i]]
            paths[cid] = note
            mean = self.means[self.note_of[i]]
            if mean.any():
                means[note] = mean
        return paths, means

    def _span(self, at: int) -> tuple[int, int]:
        """The rows of the chunk at position `at` of `chunks`: its own vector (if it has one),
        then its windows."""
        end = int(self.starts[at + 1]) if at + 1 < len(self.starts) else len(self.rows)
        return int(self.starts[at]), end

    def windows(self, cid: int, count: int) -> np.ndarray | None:
        """The chunk's `count` window vectors in order, None unless it has all of them."""
        at = self.place([cid]).get(cid)
        if at is None or not count:
            return None
        first, end = self._span(at)
        first += int(self.own[at])
        return self.rows[first:end] if end - first == count else None

    def best(self, ids: Iterable[int], qvec: np.ndarray) -> float | None:
        """The best cosine of any of these chunks (their own vectors and their windows) to a
        query vector, as the vector leg scores it; None when none of them has a vector."""
        q = as_indexed(qvec)
        best = None
        for at in self.place(ids).values():
            first, end = self._span(at)
            sims = self.rows[first:end] @ q
            top = float(np.max(sims)) if len(sims) else None
            if top is not None and (best is None or top > best):
                best = top
        return best

    def own_vector(self, cid: int) -> np.ndarray | None:
        """The chunk's own vector as a float64 unit row; None when it has none (yet)."""
        at = self.place([cid]).get(cid)
        if at is None or not self.own[at]:
            return None
        row = self.rows[self.starts[at]].astype(np.float64)
        return row / (np.linalg.norm(row) or 1.0)

    def mean_of(self, note: str) -> np.ndarray | None:
        """The note's mean vector; None when it has no chunk with a vector."""
        if note not in self.notes or not self.means[self.notes.index(note)].any():
            return None
        return self.means[self.notes.index(note)]

    def nearest_notes(
        self, q: np.ndarray, k: int, skip: str | None = None
    ) -> list[tuple[float, int]]:
        """The k notes whose mean vectors are nearest `q` (a float64 unit vector of this
        index's dimension), as (cosine, the note's place in `notes`), best first; `skip`: a
        note left out (the one asked about). Notes without a vector are never among them."""
        if not len(self.notes) or self.means.shape[1] != len(q):
            return []
        scores = self.means @ q
        scores[~self.means.any(axis=1)] = -np.inf  # a note none of whose chunks has a vector
        if skip is not None and skip in self.notes:
            scores[self.notes.index(skip)] = -np.inf
        top = np.argsort(-scores)[:k]
        return [(float(scores[j]), int(j)) for j in top if np.isfinite(scores[j])]

    def nearest_chunk(self, note: int, q: np.ndarray) -> int | None:
        """The chunk of note number `note` whose own vector is nearest `q`; None if none has
        one."""
        ids = self.known[self.note_of == note]
        best, best_score = None, -np.inf
        for cid, at in self.place(ids).items():
            if self.own[at]:
                s = float(self.rows[self.starts[at]] @ q)
                if s > best_score:
                    best, best_score = cid, s
        return best


_cache: OrderedDict[str, tuple[tuple[int, int, int], Matrix]] = OrderedDict()
_lock = threading.Lock()


def matrix(store: IndexStore) -> Matrix:
    """This index's vectors as they are now (read from the index when they changed)."""
    key, name = store.changes(), str(store.path)
    with _lock:
        held = _cache.get(name)
        if held is not None and held[0] == key:
            _cache.move_to_end(name)
            return held[1]
    made = _read(store)
    with _lock:
        _cache.pop(name, None)
        if made.nbytes <= CACHE_BYTES:
            _cache[name] = (key, made)
            total = sum(m.nbytes for _, m in _cache.values())
            while total > CACHE_BYTES and len(_cache) > 1:
                _, (_, old) = _cache.popitem(last=False)
                total -= old.nbytes
    return made


def _read(store: IndexStore) -> Matrix:
    ids, slots, codes, paths = reads.vector_rows(store)
    order = np.lexsort((slots, ids))
    ids, slots = ids[order], slots[order]
    rows = dequantize(codes[order]) if len(ids) else np.zeros((0, codes.shape[1]), np.float32)
    chunks, starts = np.unique(ids, return_index=True)
    own = slots[starts] == 0
    known = np.asarray(sorted(paths), dtype=np.int64)
    notes = sorted(set(paths.values()))
    number = {p: i for i, p in enumerate(notes)}
    note_of = np.asarray([number[paths[int(c)]] for c in known], dtype=np.int64)
    means = np.zeros((len(notes), rows.shape[1]), dtype=np.float64)
    with_own = chunks[own]
    at = np.searchsorted(known, with_own)
    np.add.at(means, note_of[at], rows[starts[own]].astype(np.float64))
    norms = np.linalg.norm(means, axis=1, keepdims=True)
    means = np.divide(means, norms, out=np.zeros_like(means), where=norms > 0)
    return Matrix(chunks, starts.astype(np.int64), rows, own, notes, known, note_of, means)


def clear() -> None:
    """Forget every matrix (a process that wants its memory back)."""
    with _lock:
        _cache.clear()


def nearest(
    m: Matrix,
    store: IndexStore,
    qvecs: Sequence[np.ndarray],
    n: int,
    prefix: str = "",
    flt: Filter | None = None,
) -> list[list[tuple[int, float]]]:
    """For each query vector, the n chunks nearest it as (chunk id, cosine), best first; a
    chunk at the best of its own vector and its windows'. A sub-path or filter keeps the
    chunks that qualify (the same SQL as the lexical leg's)."""
    if not len(m.chunks) or not qvecs:
        return [[] for _ in qvecs]
    q = as_indexed(np.asarray(qvecs, dtype=np.float32))
    # one matrix-vector product a query: BLAS runs those on one thread, where a product with
    # all of them at once spread over threads two busy cores could not give it
    best = np.stack([np.maximum.reduceat(m.rows @ v, m.starts) for v in q], axis=1)
    chunks = m.chunks
    where, params = reads.narrowing(prefix, flt)
    if where:
        keep = np.isin(chunks, reads.qualifying(store, where, params))
        chunks, best = chunks[keep], best[keep]
    out = []
    for j in range(best.shape[1]):
        col = best[:, j]
        top = np.argpartition(-col, n - 1)[:n] if len(col) > n else np.arange(len(col))
        top = top[np.lexsort((chunks[top], -col[top]))]  # best first; equals by chunk id
        out.append([(int(chunks[i]), float(col[i])) for i in top])
    return out
