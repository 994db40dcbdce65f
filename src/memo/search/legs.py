"""A search over every collection of a scope, ranked as one list.

Each leg (lexical, vector) gathers its candidates from every collection of the scope and is
ranked across all of them before the two legs are fused once (search/fusion.py): fusing
per-collection lists would put every collection's first hit on a par. One pass over the
collections runs both legs on each, so an index is opened once per search even when the scope
holds more collections than the pool keeps open.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import numpy as np

from ..collection.collection import Collection
from ..collection.filters import Filter
from ..collection.langid import detect
from ..collection.lexical import query_forms
from ..collection.lexical import terms as stems
from ..collection.matrix import Matrix
from ..collection.reads import ChunkRow, Postings
from ..collection.share import Share
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
    # the languages its notes are written in (the registry's shares): a short question the
    # language identifier is unsure of is read as one of them (collection/langid.py)
    languages: tuple[str, ...] = ()


class QueryVectors:
    """Query embeddings, computed once per process for a recent question."""

    def __init__(self, embedder: Embedder | None) -> None:
        self.embedder = embedder
        self._cache: dict[tuple[str, bool, str], np.ndarray] = {}

    def get(self, query: str, passage: bool = False) -> tuple[np.ndarray | None, str]:
        """The query's embedding (as a passage: a likely answer), or None and why (no model,
        the model failed)."""
        vecs, why = self.many([(query, passage)])
        return (vecs[0] if vecs else None), why

    def many(self, texts: list[tuple[str, bool]]) -> tuple[list[np.ndarray] | None, str]:
        """Each (text, as a passage) embedded, the ones not kept in one call to the model (the
        question, the agent's phrasings, a likely answer as a passage; none of them stored in
        the embedding cache); or None and why (no model, the model failed)."""
        if self.embedder is None:
            return None, NO_EMBEDDER
        keys = [(self.embedder.model_id, passage, text) for text, passage in texts]
        got = {k: self._cache[k] for k in keys if k in self._cache}
        todo = list(dict.fromkeys(k for k in keys if k not in got))
        queries = [k for k in todo if not k[1]]
        passages = [k for k in todo if k[1]]
        try:
            if todo:
                vecs = self.embedder.embed_queries(
                    [k[2] for k in queries], [k[2] for k in passages]
                )
                got.update(zip(queries + passages, vecs, strict=True))
        except EmbedderUnavailableError as e:
            return None, f"{e} — lexical results only. {e.hint}"
        for k in keys:
            self._cache.pop(k, None)
            self._cache[k] = got[k]  # most recent last
        while len(self._cache) > QUERY_CACHE:
            self._cache.pop(next(iter(self._cache)))
        return [got[k] for k in keys], ""


NO_EMBEDDER = "no embedder configured: vector leg skipped"


class Reader:
    """Reads of the indexes of one scope, and what they met on the way (an index found
    damaged and rebuilt, a model that failed): the warnings travel with the result."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.warnings: list[str] = []
        self.reads: Counter[int] = Counter()  # reads of each collection's index, by position
        self.matrices: dict[int, Matrix] = {}  # vectors the legs held, by position

    def note(self, warning: str) -> None:
        if warning and warning not in self.warnings:
            self.warnings.append(warning)

    def read(self, ci: int, ask: Callable[[Collection], tuple[T, str]]) -> T:
        """What the scope's `ci`-th collection answers `ask` (one of its reads: `share`,
        `rows`, `note_chunks`...); a damaged index is rebuilt first, and the warnings say so."""
        result, healed = ask(self.scope.parts[ci][0])
        self.reads[ci] += 1
        self.note(healed)
        return result

    def rows(self, keys: Iterable[Key]) -> dict[Key, ChunkRow]:
        """The chunks these keys name, read once per collection."""
        by_coll: dict[int, list[int]] = {}
        for ci, cid in keys:
            by_coll.setdefault(ci, []).append(cid)
        rows = {}
        for ci, ids in by_coll.items():
            for cid, row in self.read(ci, partial(Collection.rows, ids=ids)).items():
                rows[(ci, cid)] = row
        return rows


@dataclass(frozen=True, slots=True)
class Phrasing:
    """One way of asking that runs through the legs: the question, a phrasing of it, or a
    likely answer (`Words.phrasings`)."""

    kind: str  # "question", "also" or "answer"
    text: str  # what the vector leg embeds
    lexical: str  # whose stems the lexical leg searches
    passage: bool = False  # embedded as a passage (a likely answer reads like a note)


@dataclass(frozen=True, slots=True)
class Words:
    """A question and the agent's words for it (requests.py declares them): `also`, other
    phrasings in the notes' language, run through both legs; `keywords`, exact terms, added
    to the question's lexical leg only; `answer`, a likely answer, run through both legs and
    embedded as a passage. docs/design.md, "The agent's words", has the measurements."""

    query: str
    also: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    answer: str | None = None

    @classmethod
    def of(cls, req: Any) -> Words:
        """The words of a search or route request (requests.py): its query, `also`,
        `keywords` and `answer`."""
        said = req.words
        return cls(req.query, tuple(said.also), tuple(said.keywords), said.answer)

    def phrasings(self) -> list[Phrasing]:
        lexical = " ".join((self.query, *self.keywords))
        out = [Phrasing("question", self.query, lexical)]
        out += [Phrasing("also", a, a) for a in self.also]
        if self.answer:
            out.append(Phrasing("answer", self.answer, self.answer, passage=True))
        return out


def gather(
    reader: Reader,
    words: Words,
    mode: str,
    depth: int,
    vectors: QueryVectors,
    flt: Filter | None = None,
) -> list[Legs]:
    """Each leg's candidates for each phrasing (`Words.phrasings`) across every collection of
    the reader's scope, best first: one read of each index for all of them.

    The phrasings are embedded at the first collection with vectors. The lexical leg gathers
    every collection's statistics and postings (of every phrasing's stems at once), then scores
    each phrasing with the sums (search/bm25.py): its scores mean the same in every collection.
    """
    said = words.phrasings()
    lexical = mode in ("hybrid", "lex")
    among = reader.scope.languages
    langs = [detect(p.text, query=True, among=among) for p in said]
    forms = [
        query_forms(p.lexical, lang, among) if lexical else []
        for p, lang in zip(said, langs, strict=True)
    ]
    union = list(dict.fromkeys(t for fs in forms for f in fs for t in f))
    want_vec = mode in ("hybrid", "vec") and bool(words.query.strip())
    embedded: list[list[np.ndarray] | None] = []

    def qvecs() -> list[np.ndarray] | None:
        if not embedded:
            embedded.append(_embed(reader, vectors, said) if want_vec else None)
        return embedded[0]

    shares = []
    for i, (_, prefix) in enumerate(reader.scope.parts):
        ask = partial(
            Collection.share, terms=union, qvecs=qvecs, depth=depth, prefix=prefix, flt=flt
        )
        share = reader.read(i, ask)
        if share.matrix is not None:
            reader.matrices[i] = share.matrix
        shares.append(share)
    vecs = embedded[0] if embedded else None
    df = Counter[str]()
    for s in shares:
        df.update(s.df)
    terms = [_known_forms(fs, df) for fs in forms]
    any_vectors = any(s.has_vec for s in shares)
    waiting = any(s.debt[0] and s.debt[1] == s.debt[0] for s in shares)
    if want_vec and not any_vectors and not waiting:
        reader.note(
            NO_EMBEDDER
            if vectors.embedder is None
            else "these indexes hold no vectors (built without a model): lexical only"
        )
    return [
        _legs_of(
            p,
            j,
            langs[j],
            terms[j],
            union,
            shares,
            depth,
            vecs,
            want_vec and (any_vectors or waiting),
        )
        for j, p in enumerate(said)
    ]


def _known_forms(forms: list[tuple[str, ...]], df: Counter[str]) -> list[str]:
    """Each word's term in the question's language, or the first of its other forms the
    scope's index holds when it holds not that one (lexical.query_forms)."""
    out = [next((t for t in f if df[t]), f[0]) for f in forms]
    return list(dict.fromkeys(out))


def _embed(reader: Reader, vectors: QueryVectors, said: list[Phrasing]) -> list[np.ndarray] | None:
    vecs, why = vectors.many([(p.text, p.passage) for p in said])
    reader.note(why)
    return vecs


def _legs_of(
    p: Phrasing,
    j: int,
    lang: str | None,
    terms: list[str],
    union: list[str],
    shares: list[Share],
    depth: int,
    vecs: list[np.ndarray] | None,
    vectors_seen: bool,
) -> Legs:
    """The legs of phrasing `j` from every collection's share."""
    legs = Legs(words=bool(stems(p.text)), kind=p.kind, text=p.text)
    if terms:
        corpus = Corpus(terms)
        at = {union.index(t): k for k, t in enumerate(terms)}
        for s in shares:
            corpus.add(s.rows, s.tokens, {t: s.df[t] for t in terms if t in s.df})
        legs.lex = corpus.best([_narrowed(s.postings, at) for s in shares], depth)
        legs.coverage = len(corpus.known) / len(terms)
        legs.terms, legs.idf = terms, corpus.idf().tolist()
    if vecs is not None:
        legs.vec = [((i, cid), sim) for i, s in enumerate(shares) if s.vec for cid, sim in s.vec[j]]
        legs.vec.sort(key=lambda x: -x[1])
        del legs.vec[depth:]
        legs.qvec = vecs[j]
    # the question's language is the question's own (its keywords may be in the notes')
    legs.query_lang = lang
    if legs.lex and legs.vec:  # only the fusion reads it: whether the lexical leg can help
        ci, cid = legs.vec[0][0]
        legs.answer_lang = shares[ci].langs.get(cid)
    if vectors_seen:
        by_coll: dict[int, set[int]] = {}
        for (ci, cid), _ in legs.lex:
            by_coll.setdefault(ci, set()).add(cid)
        legs.pending = {
            (ci, cid) for ci, ids in by_coll.items() for cid in ids & shares[ci].pending
        }
        chunks = sum(s.debt[0] for s in shares)
        legs.unseen = sum(s.debt[1] for s in shares) / chunks if chunks else 0.0
    return legs


def _narrowed(postings: Postings, at: dict[int, int]) -> Postings:
    """The postings of some of the union's terms (`at`: union position -> the phrasing's)."""
    keep = [k for k, t in enumerate(postings.terms) if t in at]
    if len(keep) == len(postings.terms):
        return Postings(
            postings.docs, [at[t] for t in postings.terms], postings.tf, postings.length
        )
    return Postings(
        [postings.docs[k] for k in keep],
        [at[postings.terms[k]] for k in keep],
        [postings.tf[k] for k in keep],
        [postings.length[k] for k in keep],
    )


def note_cosines(
    reader: Reader, keys: Iterable[Key], qvecs: Sequence[np.ndarray]
) -> tuple[dict[Key, tuple[int, str]], dict[tuple[int, str], float]]:
    """Each candidate's note (collection position, path), and each such note's mean vector's
    cosine to the question: the best over its phrasings' vectors (search/fusion.py
    with_notes). Notes with no vector yet have none. From the vectors the legs held in memory
    (collection/matrix.py): nothing is read."""
    by_coll: dict[int, list[int]] = {}
    for ci, cid in keys:
        by_coll.setdefault(ci, []).append(cid)
    q = np.asarray(qvecs, dtype=np.float64)
    note_of: dict[Key, tuple[int, str]] = {}
    cosines: dict[tuple[int, str], float] = {}
    for ci, ids in by_coll.items():
        held = reader.matrices.get(ci)
        if held is None:  # no vectors in this index (yet): no note has a mean
            continue
        paths, means = held.note_means(ids)
        note_of.update({(ci, cid): (ci, path) for cid, path in paths.items()})
        cosines.update({(ci, path): float(np.max(q @ m)) for path, m in means.items()})
    return note_of, cosines
