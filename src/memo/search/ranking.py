"""One ranking of a scope: both legs over every collection, fused once, read as hits.

The one pipeline search and route share: the legs (legs.gather: every collection's
candidates, ranked with the statistics of the whole scope) → fusion, with the candidates'
notes as witnesses too (search/fusion.py) → the best rows → hits → the passage confidence
reads → confidence. A search reads its hits from a Ranking; a route reads each collection's
best chunks from one; `search(route=K)` ranks the routed scope once and keeps the hits of its
K best collections. Whatever went wrong on the way (an index rebuilt, no model) is in
`warnings`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

import numpy as np

from ..collection.chunker import passage_text
from ..collection.collection import Collection
from ..collection.filters import Filter
from ..collection.reads import ChunkRow
from . import focus
from .confidence import confidence, signals
from .diversity import DIVERSITY_POOL, DIVERSITY_RATIO, cap_per_note
from .excerpt import cite_range
from .explain import explain as why
from .fusion import CANDIDATES, Legs, fuse_phrasings, note_z, with_notes
from .legs import Key, QueryVectors, Reader, Scope, Words, gather, note_cosines
from .results import Confidence, Hit


@dataclass(slots=True)
class Ranking:
    """Every fused candidate of a scope, best first, and what reading them met."""

    reader: Reader
    legs: Legs
    scores: dict[Key, float]
    ranked: list[Key] = field(default_factory=list)  # by fused score, best first
    only: set[int] | None = None  # the collections kept (positions in the scope); None: all
    phrasings: list[Legs] = field(default_factory=list)  # every phrasing's legs (legs first)
    mode: str = "hybrid"
    # what `explain` reads: the scores before the note step, each candidate's note and each
    # note's z among the candidates' notes, and the hits' places before diversity
    fused: dict[Key, float] = field(default_factory=dict)
    note_of: dict[Key, tuple[int, str]] = field(default_factory=dict)
    note_z: dict[tuple[int, str], float] = field(default_factory=dict)
    before: dict[Key, int] = field(default_factory=dict)
    _rows: dict[Key, ChunkRow] = field(default_factory=dict)  # rows read so far

    def __post_init__(self) -> None:
        self.ranked = sorted(self.scores, key=lambda key: -self.scores[key])
        if not self.phrasings:
            self.phrasings = [self.legs]
        if not self.fused:
            self.fused = self.scores

    @property
    def scope(self) -> Scope:
        return self.reader.scope

    @property
    def warnings(self) -> list[str]:
        return self.reader.warnings

    def parts(self) -> list[tuple[Collection, str]]:
        """The scope's collections this ranking holds (all, or those `within` kept)."""
        parts = self.scope.parts
        return [p for i, p in enumerate(parts) if self.only is None or i in self.only]

    def hits(self, k: int, per_note: int | None = None, explain: bool = False) -> list[Hit]:
        """The best k candidates as hits (ties: the newer file first), at most `per_note` per
        note while other notes match comparably; with `explain`, each says why (explain.py)."""
        order, rows = self.ordered(k * DIVERSITY_POOL if per_note else k)
        self.before = {key: at for at, key in enumerate(order, start=1)}
        if per_note:
            # A chunk either leg ranks in its top 3 is never held back: that much agreement
            # outweighs variety (measured: otherwise cross-lingual answers got pushed out).
            sure = {k for legs in self.phrasings for k in legs.lex_ranked[:3] + legs.vec_ranked[:3]}
            order = cap_per_note(
                order,
                k,
                per_note,
                lambda key: key if key in sure else (key[0], rows[key].path),
                self.scores.__getitem__,
                DIVERSITY_RATIO,
            )
        return self.hits_of(order[:k], rows, explain)

    def top_passage(self) -> str:
        """The first hit's heading path and text as the model read them ('' without hits)."""
        return self._top()[0]

    def _top(self) -> tuple[str, str | None]:
        """The first hit's passage and its language ('', None without hits)."""
        order, rows = self.ordered(1)
        if not order:
            return "", None
        row = rows[order[0]]
        return passage_text(row.heading, row.text), row.lang

    def confidence(self) -> Confidence:
        """high / low / none for the first hit (search/confidence.py), judged by the question
        when it is in the first hit's language, else by the agent's first phrasing that is (a
        translation: across languages cosines overlap, an unanswerable English question of
        Russian notes looking as close as an answerable one). One witness, not the best of
        several: the best of four phrasings said `high` of 12 of 14 wrong first hits on the
        vault (docs/design.md, "The agent's words"). A likely answer never vouches: it is
        written to look like a note. The question's keywords count with it."""
        text, lang = self._top()
        if not text:
            return "none"
        judges = [legs for legs in self.phrasings if legs.kind != "answer"] or self.phrasings
        for legs in judges:
            said = signals(legs, text, lang)
            if not said["languages_differ"]:
                return confidence(said)
        return confidence(signals(judges[0], text, lang))

    def place(self, key: Key) -> int | None:
        """A candidate's place (1-based) in the order a search shows its hits before diversity:
        by fused score, ties the newer file first (`ordered`); None for a chunk that is no
        candidate. The one place both `explain` and `memo why` give: a rank taken off the
        score-sorted list alone put twins in whichever order they were gathered."""
        if key not in self.scores:
            return None
        order, _ = self.ordered(self.ranked.index(key) + 1)
        return order.index(key) + 1 if key in order else None

    def verdict(self, hits: bool = True, skipped: bool = False) -> Confidence:
        """The confidence a search returns: its first hit's (`confidence`; `none` without
        `hits`), as far as it saw its scope. While any chunk of the scope waits for its vector,
        or part of the scope was not read (`skipped`: a broken `_meta.yaml`, an index its
        catch-up could not bring up to date), it is `low`: the vectors to come move the first
        hit's evidence either way (a query read low, high, low with the same first hit while
        they arrived: issue 50), and neither `high` nor "not in the notes" can be said of
        notes the search did not see. So a query's confidence changes once, when the last
        vector arrives. A query without a word stays `none`."""
        said = self.confidence() if hits else "none"
        if not self.legs.words or (self.legs.unseen <= 0 and not skipped):
            return said
        return "low"

    def by_collection(self, shown: int) -> list[tuple[int, list[Key]]]:
        """Each collection that has candidates, in the order of its best one, with its best
        `shown` candidates."""
        best: dict[int, list[Key]] = {}
        for key in self.ranked:
            keys = best.setdefault(key[0], [])
            if len(keys) < shown:
                keys.append(key)
        return list(best.items())

    def within(self, collections: set[int]) -> Ranking:
        """The same ranking, holding only the candidates of these collections (by position
        in the scope): what a search of just them reads, under the statistics of all."""
        every = [_legs_within(legs, collections) for legs in self.phrasings]
        scores = {key: s for key, s in self.scores.items() if key[0] in collections}
        fused = {key: s for key, s in self.fused.items() if key[0] in collections}
        return Ranking(
            self.reader,
            every[0],
            scores,
            only=collections,
            phrasings=every,
            mode=self.mode,
            fused=fused,
            note_of=self.note_of,
            note_z=self.note_z,
            _rows=self._rows,
        )

    # ------------------------------------------------------------------ reads
    def ordered(self, pool: int) -> tuple[list[Key], dict[Key, ChunkRow]]:
        """The best `pool` candidates and whatever ties with the last of them, in order
        (ties: the newer file first), with their rows. Only those rows are read: all ~100
        fused candidates cost more than both legs' SQL."""
        ranked = self.ranked
        if len(ranked) > pool:
            floor = self.scores[ranked[pool - 1]]
            ranked = [key for key in ranked if self.scores[key] >= floor]
        self._rows.update(self.reader.rows(k for k in ranked if k not in self._rows))
        rows = self._rows
        order = sorted(
            (key for key in ranked if key in rows),
            key=lambda key: (-self.scores[key], -rows[key].mtime_ns),
        )
        return order, rows

    def hits_of(
        self, keys: list[Key], rows: dict[Key, ChunkRow], explain: bool = False
    ) -> list[Hit]:
        lex_pos = {key: r for r, key in enumerate(self.legs.lex_ranked, start=1)}
        vec_pos = {key: r for r, key in enumerate(self.legs.vec_ranked, start=1)}
        read: dict[Path, list[str] | None] = {}  # each cited note read once per search
        nearest = self.focus_of(keys, rows)
        out: list[Hit] = []
        for key in keys:
            coll = self.scope.parts[key[0]][0]
            row = rows[key]
            end_line = row.line + row.text.count("\n")
            first, last = focus.lines(row.text, row.line, nearest[key])
            out.append(
                Hit(
                    collection=coll.name,
                    path=coll.root_path(row.path),
                    abs_path=str(coll.folder / row.path),
                    line=row.line,
                    heading=row.heading,
                    score=round(self.scores[key], 6),
                    text=focus.shown(row.text, nearest[key]),
                    lex_rank=lex_pos.get(key),
                    vec_rank=vec_pos.get(key),
                    end_line=end_line,
                    cite=cite_range(coll.folder / row.path, row.line, end_line, read),
                    focus_line=first,
                    focus_end_line=last,
                    explain=why(self, key, row, len(out) + 1) if explain else None,
                )
            )
        return out

    def focus_of(self, keys: list[Key], rows: dict[Key, ChunkRow]) -> dict[Key, int | None]:
        """Each hit's sentence window nearest the question, None for the whole chunk
        (search/focus.py): by the windows' vectors where the question and the chunk have
        them, else by the question's stems."""
        qvecs = [legs.qvec for legs in self.phrasings if legs.qvec is not None]
        weight = {
            t: w for legs in self.phrasings for t, w in zip(legs.terms, legs.idf, strict=True)
        }
        codes: dict[Key, np.ndarray] = {}
        for ci, cid in keys if qvecs else ():
            held = self.reader.matrices.get(ci)  # the windows the legs held in memory
            mine = held.windows(cid, rows[(ci, cid)].wins) if held is not None else None
            if mine is not None:
                codes[(ci, cid)] = mine
        return {
            key: focus.by_vectors(codes[key], qvecs)
            if key in codes
            else focus.by_words(rows[key].text, list(weight), list(weight.values()))
            for key in keys
        }


def _legs_within(legs: Legs, collections: set[int]) -> Legs:
    return replace(
        legs,
        lex=[x for x in legs.lex if x[0][0] in collections],
        vec=[x for x in legs.vec if x[0][0] in collections],
    )


def rank(
    scope: Scope,
    words: Words | str,
    mode: str,
    vectors: QueryVectors,
    depth: int = CANDIDATES,
    flt: Filter | None = None,
) -> Ranking:
    """Both legs over every collection of the scope for each of the question's phrasings (the
    question, the agent's `also` and likely `answer`: search/legs.py Words), fused into one
    ranking (search/fusion.py fuse_phrasings), the candidates' notes as witnesses."""
    reader = Reader(scope)
    every = gather(
        reader, Words(words) if isinstance(words, str) else words, mode, depth, vectors, flt
    )
    fused = cast(dict[Key, float], fuse_phrasings(every, mode))  # keys: (collection, chunk id)
    # the candidates' notes as witnesses (search/fusion.py with_notes), as far as a phrasing
    # has a query vector (the question's and its phrasings': a likely answer is no witness of
    # what a note is about)
    qvecs = [legs.qvec for legs in every if legs.qvec is not None and legs.kind != "answer"]
    if mode != "hybrid" or not qvecs:
        return Ranking(reader, every[0], fused, phrasings=every, mode=mode)
    note_of, cosines = note_cosines(reader, fused, qvecs)
    return Ranking(
        reader,
        every[0],
        with_notes(fused, note_of, cosines),
        phrasings=every,
        mode=mode,
        fused=fused,
        note_of=note_of,
        note_z=note_z(cosines),
    )
