"""A search over every collection of a scope, ranked as one list.

Each leg (lexical, vector) gathers its candidates from every collection of the scope and is
ranked across all of them before the two legs are fused once (search/fusion.py): fusing
per-collection lists would put every collection's first hit on a par. One pass over the
collections runs both legs on each, so an index is opened once per search even when the scope
holds more collections than the pool keeps open.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import partial
from pathlib import Path
from typing import TypeVar

import numpy as np

from ..collection import queries
from ..collection.chunker import passage_text
from ..collection.collection import Collection
from ..collection.filters import Filter
from ..collection.lexical import query_terms, script
from ..collection.store import IndexStore
from ..embed import Embedder
from ..errors import EmbedderUnavailableError
from ..search.bm25 import Corpus, Postings
from ..search.diversity import DIVERSITY_POOL, DIVERSITY_RATIO, cap_per_note
from ..search.excerpt import cite_range
from ..search.fusion import Legs
from ..search.results import Hit, cut_text
from .targets import Scope

T = TypeVar("T")
QUERY_CACHE = 256  # recent query embeddings kept: route then search embeds a question once
Key = tuple[int, int]  # (position of the collection in the scope, chunk id)


class QueryVectors:
    """Query embeddings, computed once per process for a recent question."""

    def __init__(self, embedder: Embedder | None) -> None:
        self.embedder = embedder
        self._cache: dict[tuple[str, str], np.ndarray] = {}

    def get(self, query: str, warnings: list[str]) -> np.ndarray | None:
        """The query's embedding; None (with a warning) when there is no model."""
        if self.embedder is None:
            warnings.append("no embedder configured: vector leg skipped")
            return None
        key = (self.embedder.model_id, query)
        vec = self._cache.pop(key, None)
        if vec is None:
            try:
                vec = self.embedder.embed_query(query)
            except EmbedderUnavailableError as e:
                warnings.append(f"{e} — lexical results only. {e.hint}")
                return None
        self._cache[key] = vec  # most recent last
        if len(self._cache) > QUERY_CACHE:
            self._cache.pop(next(iter(self._cache)))
        return vec

    def clear(self) -> None:
        self._cache.clear()


def _read(coll: Collection, warnings: list[str], query: Callable[[IndexStore], T]) -> T:
    """A read of one index; a damaged index is rebuilt first and the result says so."""
    result, healed = coll.read(query)
    if healed:
        warnings.append(healed)
    return result


def _has_vectors(store: IndexStore) -> bool:
    return store.has_vec


def gather_legs(
    scope: Scope,
    query: str,
    mode: str,
    depth: int,
    vectors: QueryVectors,
    warnings: list[str],
    flt: Filter | None = None,
) -> Legs:
    """Each leg's candidates across every collection of the scope, best first.

    The query is embedded once, when the first collection with vectors comes up. The lexical
    leg first gathers every collection's statistics and postings, then scores them all with
    the sums (search/bm25.py): its scores mean the same in every collection.
    """
    legs = Legs()
    terms = query_terms(query) if mode in ("hybrid", "lex") else []
    corpus = Corpus(terms)
    postings: list[Postings] = []
    want_vec = mode in ("hybrid", "vec") and bool(query.strip())
    qvec: np.ndarray | None = None
    vec_failed = any_vectors = False
    for i, (coll, prefix) in enumerate(scope.parts):
        if terms:
            share = partial(queries.lex_share, terms=terms, prefix=prefix, flt=flt)
            rows, tokens, df, found = _read(coll, warnings, share)
            corpus.add(rows, tokens, df)
            postings.append(found)
        if want_vec and not vec_failed and _read(coll, warnings, _has_vectors):
            any_vectors = True
            if qvec is None:
                qvec = vectors.get(query, warnings)
                vec_failed = qvec is None
            if qvec is not None:
                find = partial(queries.vec_candidates, qvec=qvec, n=depth, prefix=prefix, flt=flt)
                vec = _read(coll, warnings, find)
                legs.vec += [((i, cid), s) for cid, s in vec]
    if terms:  # every collection's rows scored with the statistics of all of them
        legs.lex = corpus.best(postings, depth)
        legs.coverage = len(corpus.known) / len(terms)
        legs.terms, legs.idf = terms, corpus.idf().tolist()
    if want_vec and not any_vectors:
        warnings.append(
            "no embedder configured: vector leg skipped"
            if vectors.embedder is None
            else "these indexes hold no vectors (built without a model): lexical only"
        )
    # Cosine similarities are comparable across collections (one model), and BM25 scores are
    # since they share the statistics.
    legs.lex.sort(key=lambda x: -x[1])
    legs.vec.sort(key=lambda x: -x[1])
    del legs.lex[depth:], legs.vec[depth:]
    legs.query_script = script(query, query=True)
    if legs.lex and legs.vec:  # only the fusion reads it: whether the lexical leg can help
        legs.answer_script = script(" ".join(texts(scope, legs.vec_ranked[:1], warnings)))
    return legs


def texts(scope: Scope, keys: list[Key], warnings: list[str]) -> list[str]:
    """The chunk texts of these keys, in order."""
    out = []
    for ci, cid in keys:
        coll = scope.parts[ci][0]
        row = _read(coll, warnings, partial(queries.chunk_rows, ids=[cid])).get(cid)
        if row is not None:
            out.append(row.text)
    return out


def assemble_hits(
    scope: Scope,
    scores: dict[Hashable, float],
    legs: Legs,
    k: int,
    warnings: list[str],
    per_note: int | None = None,
) -> tuple[list[Hit], str]:
    """The best k fused candidates as hits (ties: the newer file first), at most `per_note`
    per note while other notes match comparably; and the first hit's passage, its heading path
    and text as the index read them (what confidence reads)."""
    # Read rows only for the best k and whatever ties with the k-th (the tie-break needs
    # their mtime): reading all ~100 fused candidates cost more than both legs' SQL. With a
    # per-note cap, read DIVERSITY_POOL times more: the cap needs other notes to choose.
    ranked: list[Key] = sorted(scores, key=lambda key: -scores[key])  # type: ignore[arg-type]
    pool = k * DIVERSITY_POOL if per_note else k
    if len(ranked) > pool:
        floor = scores[ranked[pool - 1]]
        ranked = [key for key in ranked if scores[key] >= floor]
    rows = chunk_rows(scope, ranked, warnings)
    order = sorted(
        (key for key in ranked if key in rows),
        key=lambda key: (-scores[key], -rows[key].mtime_ns),
    )
    if per_note:
        # A chunk either leg ranks in its top 3 is never held back: that much agreement
        # outweighs variety (measured: otherwise cross-lingual answers got pushed out).
        sure = set(legs.lex_ranked[:3]) | set(legs.vec_ranked[:3])
        order = cap_per_note(
            order,
            k,
            per_note,
            lambda key: key if key in sure else (key[0], rows[key].path),
            scores.__getitem__,
            DIVERSITY_RATIO,
        )
    lex_pos = {key: r for r, key in enumerate(legs.lex_ranked, start=1)}
    vec_pos = {key: r for r, key in enumerate(legs.vec_ranked, start=1)}
    hits = []
    read: dict[Path, list[str] | None] = {}  # each cited note read once per search
    for key in order[:k]:
        coll = scope.parts[key[0]][0]
        row = rows[key]
        end_line = row.line + row.text.count("\n")
        hits.append(
            Hit(
                collection=coll.name,
                path=coll.root_path(row.path),
                abs_path=str(coll.folder / row.path),
                line=row.line,
                heading=row.heading,
                score=round(scores[key], 6),
                text=cut_text(row.text),
                lex_rank=lex_pos.get(key),
                vec_rank=vec_pos.get(key),
                end_line=end_line,
                cite=cite_range(coll.folder / row.path, row.line, end_line, read),
            )
        )
    first = rows[order[0]] if hits else None
    return hits, passage_text(first.heading, first.text) if first else ""


def chunk_rows(scope: Scope, keys: list[Key], warnings: list[str]) -> dict[Key, queries.ChunkRow]:
    """The chunks these keys name, read once per collection."""
    by_coll: dict[int, list[int]] = {}
    for ci, cid in keys:
        by_coll.setdefault(ci, []).append(cid)
    rows = {}
    for ci, ids in by_coll.items():
        coll = scope.parts[ci][0]
        for cid, row in _read(coll, warnings, partial(queries.chunk_rows, ids=ids)).items():
            rows[(ci, cid)] = row
    return rows
