"""A search over every collection of a scope, ranked as one list.

Each leg (lexical, vector) gathers its candidates from every collection of the scope and is
ranked across all of them before the two legs are fused once (search/fusion.py): fusing
per-collection lists would put every collection's first hit on a par. One pass over the
collections runs both legs on each, so an index is opened once per search even when the scope
holds more collections than the pool keeps open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import numpy as np

from ..collection import queries
from ..collection.collection import Collection
from ..collection.filters import Filter
from ..collection.lexical import query_terms, script
from ..collection.lexical import terms as stems
from ..collection.queries import Postings
from ..collection.store import IndexStore
from ..embed import Embedder
from ..errors import EmbedderUnavailableError
from .bm25 import Corpus
from .fusion import Legs

T = TypeVar("T")
QUERY_CACHE = 256  # recent query embeddings kept: route then search embeds a question once
Key = tuple[int, int]  # (position of the collection in the scope, chunk id)


@dataclass(frozen=True, slots=True)
class Scope:
    """Which collections a target covers, and the sub-path inside each (''=all of it)."""

    target: str  # the target as shown in results: relative to the root, '.' for all
    parts: list[tuple[Collection, str]]


class QueryVectors:
    """Query embeddings, computed once per process for a recent question."""

    def __init__(self, embedder: Embedder | None) -> None:
        self.embedder = embedder
        self._cache: dict[tuple[str, str], np.ndarray] = {}

    def get(self, query: str) -> tuple[np.ndarray | None, str]:
        """The query's embedding, or None and why (no model, the model failed)."""
        if self.embedder is None:
            return None, NO_EMBEDDER
        key = (self.embedder.model_id, query)
        vec = self._cache.pop(key, None)
        if vec is None:
            try:
                vec = self.embedder.embed_query(query)
            except EmbedderUnavailableError as e:
                return None, f"{e} — lexical results only. {e.hint}"
        self._cache[key] = vec  # most recent last
        if len(self._cache) > QUERY_CACHE:
            self._cache.pop(next(iter(self._cache)))
        return vec, ""

    def clear(self) -> None:
        self._cache.clear()


NO_EMBEDDER = "no embedder configured: vector leg skipped"


class Reader:
    """Reads of the indexes of one scope, and what they met on the way (an index found
    damaged and rebuilt, a model that failed): the warnings travel with the result."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.warnings: list[str] = []

    def note(self, warning: str) -> None:
        if warning and warning not in self.warnings:
            self.warnings.append(warning)

    def read(self, ci: int, query: Callable[[IndexStore], T]) -> T:
        """A read of the index of the scope's `ci`-th collection (a damaged index is rebuilt
        first, and the warnings say so)."""
        result, healed = self.scope.parts[ci][0].read(query)
        self.note(healed)
        return result

    def rows(self, keys: Iterable[Key]) -> dict[Key, queries.ChunkRow]:
        """The chunks these keys name, read once per collection."""
        by_coll: dict[int, list[int]] = {}
        for ci, cid in keys:
            by_coll.setdefault(ci, []).append(cid)
        rows = {}
        for ci, ids in by_coll.items():
            for cid, row in self.read(ci, partial(queries.chunk_rows, ids=ids)).items():
                rows[(ci, cid)] = row
        return rows


def _has_vectors(store: IndexStore) -> bool:
    return store.has_vec


def gather_legs(
    reader: Reader,
    query: str,
    mode: str,
    depth: int,
    vectors: QueryVectors,
    flt: Filter | None = None,
) -> Legs:
    """Each leg's candidates across every collection of the reader's scope, best first.

    The query is embedded once, when the first collection with vectors comes up. The lexical
    leg first gathers every collection's statistics and postings, then scores them all with
    the sums (search/bm25.py): its scores mean the same in every collection.
    """
    legs = Legs(words=bool(stems(query)))
    terms = query_terms(query) if mode in ("hybrid", "lex") else []
    corpus = Corpus(terms)
    postings: list[Postings] = []
    want_vec = mode in ("hybrid", "vec") and bool(query.strip())
    qvec: np.ndarray | None = None
    vec_failed = any_vectors = waiting = False
    for i, (_, prefix) in enumerate(reader.scope.parts):
        if terms:
            share = partial(queries.lex_share, terms=terms, prefix=prefix, flt=flt)
            rows, tokens, df, found = reader.read(i, share)
            corpus.add(rows, tokens, df)
            postings.append(found)
        debt = reader.scope.parts[i][0].vector_debt  # (chunks, pending) as last synced
        if debt is not None and debt[0] and debt[1] == debt[0]:
            waiting = True  # no vector yet (the vector stage has not reached it): no KNN
        elif want_vec and not vec_failed and reader.read(i, _has_vectors):
            any_vectors = True
            if qvec is None:
                qvec, why = vectors.get(query)
                reader.note(why)
                vec_failed = qvec is None
            if qvec is not None:
                find = partial(queries.vec_candidates, qvec=qvec, n=depth, prefix=prefix, flt=flt)
                legs.vec += [((i, cid), s) for cid, s in reader.read(i, find)]
    if terms:  # every collection's rows scored with the statistics of all of them
        legs.lex = corpus.best(postings, depth)
        legs.coverage = len(corpus.known) / len(terms)
        legs.terms, legs.idf = terms, corpus.idf().tolist()
    if want_vec and not any_vectors and not waiting:
        reader.note(
            NO_EMBEDDER
            if vectors.embedder is None
            else "these indexes hold no vectors (built without a model): lexical only"
        )
    # Cosine similarities are comparable across collections (one model), and BM25 scores are
    # since they share the statistics.
    legs.lex.sort(key=lambda x: -x[1])
    legs.vec.sort(key=lambda x: -x[1])
    del legs.lex[depth:], legs.vec[depth:]
    legs.query_script = script(query, query=True)
    legs.qvec = qvec
    if legs.lex and legs.vec:  # only the fusion reads it: whether the lexical leg can help
        top = reader.rows(legs.vec_ranked[:1])
        legs.answer_script = script(" ".join(r.text for r in top.values()))
    if want_vec and (any_vectors or waiting):
        _pending(reader, legs)
    return legs


def note_cosines(
    reader: Reader, keys: Iterable[Key], qvecs: Sequence[np.ndarray]
) -> tuple[dict[Key, tuple[int, str]], dict[tuple[int, str], float]]:
    """Each candidate's note (collection position, path), and each such note's mean vector's
    cosine to the question: the best over its phrasings' vectors (search/fusion.py
    with_notes). Notes with no vector yet have none."""
    by_coll: dict[int, list[int]] = {}
    for ci, cid in keys:
        by_coll.setdefault(ci, []).append(cid)
    q = np.asarray(qvecs, dtype=np.float64)
    note_of: dict[Key, tuple[int, str]] = {}
    cosines: dict[tuple[int, str], float] = {}
    for ci, ids in by_coll.items():
        paths, means = reader.read(ci, partial(queries.note_means, ids=ids))
        note_of.update({(ci, cid): (ci, path) for cid, path in paths.items()})
        cosines.update({(ci, path): float(np.max(q @ m)) for path, m in means.items()})
    return note_of, cosines


def _pending(reader: Reader, legs: Legs) -> None:
    """Which lexical candidates have no vector yet, and what share of the scope that is: the
    fusion lets their lexical rank stand in for the vector rank (search/fusion.py), and
    confidence does not answer `none` for what the vector leg could not see."""
    chunks = unseen = 0
    by_coll: dict[int, list[int]] = {}
    for (ci, cid), _ in legs.lex:
        by_coll.setdefault(ci, []).append(cid)
    for i, (coll, _) in enumerate(reader.scope.parts):
        debt = coll.vector_debt
        if debt is None:
            debt = reader.read(i, queries.vector_debt)
        chunks, unseen = chunks + debt[0], unseen + debt[1]
        if debt[1] and i in by_coll:
            ids = reader.read(i, partial(queries.pending_among, ids=by_coll[i]))
            legs.pending |= {(i, cid) for cid in ids}
    legs.unseen = unseen / chunks if chunks else 0.0
