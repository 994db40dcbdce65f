"""Fusing the lexical and vector legs into one ranked list: standardised score fusion.

Each leg's scores are standardised over its own candidates (z-scores), and a chunk's fused score
is exp(z_vec + w · z_lex), w = coverage² (the share of the query's content stems the index
holds), times 0.3 when the question's alphabet is not that of the vector leg's best chunk. A
chunk below a leg's candidates has that leg's last z (vector) or a BM25 of 0 (lexical); a chunk
still waiting for its vector takes the vector z at its lexical rank, as far as the lexical leg
knows the question. A hybrid search adds a quarter of the chunk's note's z (`with_notes`); one leg
alone ranks by plain RRF, 1 / (k + rank). Only order and ratios mean anything; ties go to the
newer file. Why, with the figures: docs/design.md, "Search" and "search/fusion.py".
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

K = TypeVar("K", bound=Hashable)  # a candidate chunk's key
N = TypeVar("N", bound=Hashable)  # a note's key

FUSION_VERSION = "zscore-cov2-script-note.25-words-mean-v6"
SEARCH_FUSION_K = 10  # the k of a one-leg search's RRF
VEC_WEIGHT = 1.0
LEX_WEIGHT = 1.0
COVERAGE_POWER = 2
CROSS_LINGUAL_FACTOR = 0.3
NOTE_WEIGHT = 0.25  # the share of the note's z a chunk gains (module docstring)
CANDIDATES = 100  # depth of each leg before fusion (the depth the rule was tuned at)


def rrf(
    legs: Sequence[tuple[Sequence[tuple[Hashable, float]], float]], k: int = SEARCH_FUSION_K
) -> dict[Hashable, float]:
    """Weighted Reciprocal Rank Fusion: sum over legs of weight / (k + rank).

    Each leg is a best-first list of (key, leg score). Equal leg scores share a rank (1, 2, 2,
    4…), so twins stay tied after fusion and the caller's tie-break (newer file first) decides.
    """
    scores: dict[Hashable, float] = {}
    for ranked, weight in legs:
        if weight <= 0:
            continue
        ranks = shared_ranks(ranked)
        for at, (key, _) in enumerate(ranked):
            scores[key] = scores.get(key, 0.0) + weight / (k + ranks[at] + 1)
    return scores


def shared_ranks(ranked: Sequence[tuple[Hashable, float]]) -> list[int]:
    """Each candidate's 0-based rank in a best-first leg, equal scores sharing the first one's
    (0, 1, 1, 3…)."""
    ranks: list[int] = []
    for at, (_, score) in enumerate(ranked):
        ranks.append(ranks[-1] if at and score == ranked[at - 1][1] else at)
    return ranks


@dataclass(slots=True)
class Legs:
    """Each leg's candidates, best first: ((collection index, chunk id), leg score)."""

    lex: list[tuple[tuple[int, int], float]] = field(default_factory=list)
    vec: list[tuple[tuple[int, int], float]] = field(default_factory=list)
    coverage: float = 0.0  # share of the query's terms the lexical index knows
    terms: list[str] = field(default_factory=list)  # the query's stems the lexical leg searched
    idf: list[float] = field(default_factory=list)  # their IDF under the scope's statistics
    query_lang: str | None = None  # the language the query is written in (langid.py)
    answer_lang: str | None = None  # the language of the vector leg's best chunk
    pending: set[tuple[int, int]] = field(default_factory=set)  # lexical candidates, no vector yet
    unseen: float = 0.0  # share of the scope's chunks the vector leg could not see (no vector)
    words: bool = True  # the query holds a word (letters or digits), not punctuation alone
    qvec: Any = None  # the query's embedding (an np.ndarray), None when no vector leg ran
    kind: str = "question"  # which of the agent's words these legs ran (search/legs.py Words)
    text: str = ""  # the phrasing these legs ran

    @property
    def cross_lingual(self) -> bool:
        """The question and the notes that answer it are in different languages."""
        q, a = self.query_lang, self.answer_lang
        return q is not None and a is not None and q != a

    @property
    def lex_ranked(self) -> list[tuple[int, int]]:
        return [key for key, _ in self.lex]

    @property
    def vec_ranked(self) -> list[tuple[int, int]]:
        return [key for key, _ in self.vec]


def lex_weight(legs: Legs) -> float:
    """How much the lexical leg's z counts for this query (see the module docstring)."""
    w = LEX_WEIGHT * legs.coverage**COVERAGE_POWER
    return w * CROSS_LINGUAL_FACTOR if legs.cross_lingual else w


def stand_in_weight(legs: Legs) -> float:
    """How much of a pending chunk's stand-in vector lift counts: the vector leg's weight, as
    far as the lexical leg knows the question (module docstring)."""
    w = VEC_WEIGHT * legs.coverage**COVERAGE_POWER
    return w * CROSS_LINGUAL_FACTOR if legs.cross_lingual else w


def standardised(
    scores: Sequence[float], floor: float | None = None, count: int = 1
) -> tuple[list[float], float]:
    """Each score's z over `scores` (and `count` values of `floor`, when given, among them),
    and the z a value outside the list gets: `floor`'s, else the last score's. Equal scores
    all have z 0."""
    values = [*scores, *[floor] * count] if floor is not None else list(scores)
    if not values:
        return [], 0.0
    mean = math.fsum(values) / len(values)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))
    if sd == 0:  # nothing stands out
        return [0.0] * len(scores), 0.0
    return [(v - mean) / sd for v in scores], (values[-1] - mean) / sd


@dataclass(slots=True)
class Parts:
    """What a hybrid score is made of, per candidate: the vector leg's z (a pending chunk's
    stand-in included) and the lexical leg's z, and the lexical leg's weight; a chunk's fused
    score is exp(vec + weight * lex). `fuse` sums them, `explain` shows them."""

    vec: dict[Hashable, float]
    lex: dict[Hashable, float]
    weight: float


def parts(legs: Legs) -> Parts:
    """The z-scores of a hybrid search's candidates (module docstring)."""
    vz, v_floor = standardised([s for _, s in legs.vec])
    # the lexical leg over as many chunks as the vector leg saw: those it did not return hold
    # none of the question's words (BM25 0), so one rare word's one match stands far out
    lz, l_floor = standardised(
        [s for _, s in legs.lex], floor=0.0, count=max(1, len(legs.vec) - len(legs.lex))
    )
    vec: dict[Hashable, float] = {key: vz[i] for i, (key, _) in enumerate(legs.vec)}
    lex: dict[Hashable, float] = {key: lz[i] for i, (key, _) in enumerate(legs.lex)}
    stand_in = stand_in_weight(legs)
    ranks = shared_ranks(legs.lex)
    for at, (key, _) in enumerate(legs.lex):
        if key in vec:
            continue
        v = v_floor
        if key in legs.pending:  # the vector z the vector leg has at its lexical rank
            rank = ranks[at]
            v += stand_in * ((vz[rank] if rank < len(vz) else v_floor) - v_floor)
        vec[key] = v
    for held in vec:
        lex.setdefault(held, l_floor)
    return Parts(vec, lex, lex_weight(legs))


def fuse(legs: Legs, mode: str) -> dict[Hashable, float]:
    """One score per candidate chunk for the given mode. A z of n values is at most √n, so
    exp of a hybrid sum stays finite for any leg depth memo uses."""
    if mode == "lex" or (mode == "hybrid" and not legs.vec):
        return rrf([(legs.lex, 1.0)])
    if mode == "vec":
        return rrf([(legs.vec, 1.0)])
    z = parts(legs)
    return {key: math.exp(v + z.weight * z.lex[key]) for key, v in z.vec.items()}


def note_z(cosines: Mapping[N, float]) -> dict[N, float]:
    """Each candidate note's mean-vector cosine to the question, standardised over those
    notes: what the note step adds a share of (`with_notes`)."""
    order = list(cosines)
    z, _ = standardised([cosines[n] for n in order])
    return {note: z[i] for i, note in enumerate(order)}


def with_notes(
    scores: Mapping[K, float],
    note_of: Mapping[K, N],
    cosines: Mapping[N, float],
) -> dict[K, float]:
    """Hybrid scores with each chunk's note's evidence added (module docstring): `cosines`
    holds each candidate note's mean-vector cosine to the question, standardised here over
    those notes; a chunk whose note has no vector yet gains nothing (z 0, the notes' mean)."""
    # a chunk without a note (None) gains no z
    zn: dict[N | None, float] = {note: z for note, z in note_z(cosines).items()}
    return {
        key: s * math.exp(NOTE_WEIGHT * zn.get(note_of.get(key), 0.0)) for key, s in scores.items()
    }


def fuse_phrasings(every: Sequence[Legs], mode: str) -> dict[Hashable, float]:
    """One score per chunk for several phrasings of one question (the question, with its
    keywords in its lexical leg; the agent's other phrasings; a likely answer: search/legs.py
    Words): in a hybrid search, exp of the mean of each phrasing's log fused score (its legs'
    z-scores, `fuse`), a chunk below a phrasing's candidates at that phrasing's least. Every
    phrasing is a witness with one vote, the question's as strong as any, so a chunk most of
    them rank high beats one a single phrasing's lexical rows lift: relaxed keyword rows of one
    extra phrasing cannot outvote the others' vector legs. Measured on the Obsidian Help vault's
    tune half with words a helper wrote from the questions and the route map alone
    (docs/design.md, "The agent's words"): the mean lifted R@1 over the best of the phrasings
    (max, the rule before: 0.806 -> 0.917 ru, 0.806 -> 0.903 en>ru, 0.847 -> 0.903 en with
    phrasings alone). A one-leg search keeps the best of each phrasing's RRF score."""
    if len(every) == 1:
        return fuse(every[0], mode)
    fused = [fuse(legs, mode) for legs in every]
    if mode != "hybrid" or not any(legs.vec for legs in every):
        scores: dict[Hashable, float] = {}
        for one in fused:
            for key, s in one.items():
                scores[key] = max(s, scores.get(key, 0.0))
        return scores
    # each phrasing's log scores with its least; one that found nothing adds 0 to every chunk
    logs = [
        (d, min(d.values())) for one in fused if (d := {k: math.log(s) for k, s in one.items()})
    ]
    n = len(fused)
    return {
        key: math.exp(math.fsum(one.get(key, floor) for one, floor in logs) / n)
        for key in set().union(*(one for one, _ in logs))
    }
