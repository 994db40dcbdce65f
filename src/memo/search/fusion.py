"""Fusing the lexical and vector legs into one ranked list: weighted Reciprocal Rank Fusion.

Plain RRF (k=60, equal weights) loses to the vector leg alone on real questions: in Russian the
unstemmed BM25 leg is weak, across languages it is mostly noise (English identifiers inside
Russian text lure it). The rule here was chosen on xquad-dev and xquad-dev-distract with
`bench/fusion.py`, which scores every candidate rule on the same legs (docs/benchmarks.md):

- the lexical leg sees Snowball stems (collection/lexical.py), which makes it a real leg in
  Russian (BM25 MRR@10 on ru→ru: 0.878 unstemmed, 0.953 stemmed);
- RRF with a sharp k=10: both legs are good, so their top ranks deserve the weight;
- the lexical leg weighs 0.8 of the vector leg, scaled by coverage², the share of the
  query's content stems present in the index (a question in another language has few);
- and by 0.3 when the question's alphabet differs from that of the vector leg's best chunk
  (an English question answered by a Russian note: the lexical leg can only match names/code);
- and raised by 1 + 5·margin when BM25's best hit stands clear of its second (an exact number or
  name): then the lexical leg knows.
- ties break by file mtime, newer first.

A chunk whose vector is still being computed (two-stage indexing: collection/sync.py) is a
candidate of the lexical leg only. It is not punished for what the vector leg has not seen: its
lexical rank stands in for the vector rank it lacks, weighted by what the lexical leg knows of
the question (coverage², and the cross-lingual factor), so a pending chunk that holds the
question's words ranks as if the legs agreed, and one matched across languages by a name gets
little. Its score depends on its own evidence only, never on how many other chunks have
vectors; with no chunk pending the rule is the plain one above.

Every rule in a neighbourhood of these values (k 8-12, weight 0.8-1.0, cross-lingual 0.2-0.3,
margin 4-6) meets the bar on all eight dev tasks; the values sit in its middle, not on an edge.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

FUSION_VERSION = "wrrf-k10-cov2-script-margin-v3"
SEARCH_FUSION_K = 10  # the k of the search's weighted RRF (sharp: both legs are good)
VEC_WEIGHT = 1.0
LEX_WEIGHT = 0.8
COVERAGE_POWER = 2
CROSS_LINGUAL_FACTOR = 0.3
MARGIN_BOOST = 5.0
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
        rank, last = 0, None
        for pos, (key, leg_score) in enumerate(ranked, start=1):
            if leg_score != last:
                rank, last = pos, leg_score
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    return scores


@dataclass(slots=True)
class Legs:
    """Each leg's candidates, best first: ((collection index, chunk id), leg score)."""

    lex: list[tuple[tuple[int, int], float]] = field(default_factory=list)
    vec: list[tuple[tuple[int, int], float]] = field(default_factory=list)
    coverage: float = 0.0  # share of the query's terms the lexical index knows
    terms: list[str] = field(default_factory=list)  # the query's stems the lexical leg searched
    idf: list[float] = field(default_factory=list)  # their IDF under the scope's statistics
    query_script: str | None = None  # alphabet the query is written in
    answer_script: str | None = None  # alphabet of the vector leg's best chunk
    pending: set[tuple[int, int]] = field(default_factory=set)  # lexical candidates, no vector yet
    unseen: float = 0.0  # share of the scope's chunks the vector leg could not see (no vector)
    words: bool = True  # the query holds a word (letters or digits), not punctuation alone
    qvec: Any = None  # the query's embedding (an np.ndarray), None when no vector leg ran

    @property
    def cross_lingual(self) -> bool:
        """The question and the notes that answer it are in different languages."""
        q, a = self.query_script, self.answer_script
        return q is not None and a is not None and q != a

    @property
    def lex_ranked(self) -> list[tuple[int, int]]:
        return [key for key, _ in self.lex]

    @property
    def vec_ranked(self) -> list[tuple[int, int]]:
        return [key for key, _ in self.vec]


def lex_weight(legs: Legs) -> float:
    """How much the lexical leg counts for this query (see the module docstring)."""
    w = LEX_WEIGHT * legs.coverage**COVERAGE_POWER
    if legs.cross_lingual:
        w *= CROSS_LINGUAL_FACTOR
    if len(legs.lex) >= 2:
        top, second = legs.lex[0][1], legs.lex[1][1]
        w *= 1 + MARGIN_BOOST * max(top - second, 0.0) / max(top, 1e-9)
    return w


def stand_in_weight(legs: Legs) -> float:
    """How much a pending chunk's lexical rank counts in place of its missing vector rank:
    the vector leg's weight, as far as the lexical leg knows the question (module docstring)."""
    w = VEC_WEIGHT * legs.coverage**COVERAGE_POWER
    return w * CROSS_LINGUAL_FACTOR if legs.cross_lingual else w


def fuse(legs: Legs, mode: str) -> dict[Hashable, float]:
    """One score per candidate chunk for the given mode."""
    if mode == "lex" or (mode == "hybrid" and not legs.vec):
        return rrf([(legs.lex, 1.0)])
    if mode == "vec":
        return rrf([(legs.vec, 1.0)])
    scores = rrf([(legs.vec, VEC_WEIGHT), (legs.lex, lex_weight(legs))])
    if legs.pending:
        for key, s in rrf([(legs.lex, stand_in_weight(legs))]).items():
            if key in legs.pending:
                scores[key] += s
    return scores


PHRASINGS_VERSION = "max-of-fused-v1"


def fuse_phrasings(every: Sequence[Legs], mode: str) -> dict[Hashable, float]:
    """One score per chunk for several phrasings of one question (the query, then `also`):
    the best of each phrasing's fused score. The phrasings are rarely equal evidence (a
    question in the notes' language against one in another, a spelled-out abbreviation against
    the bare one): summing let the weaker phrasing's noise lift its own candidates past the
    stronger one's answer. bench/phrasings.py measured the rules on both dev sets: max above sum
    on both (R@1 0.975 against 0.970 on xquad-dev, 0.960 against 0.950 among the distractors),
    RRF over the phrasings' rankings 0.04-0.06 below."""
    scores: dict[Hashable, float] = {}
    for legs in every:
        for key, s in fuse(legs, mode).items():
            if s > scores.get(key, 0.0):
                scores[key] = s
    return scores
