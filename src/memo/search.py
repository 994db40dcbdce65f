"""Fusing the lexical and vector legs into one ranked list, and the shapes a search returns.

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

Every rule in a neighbourhood of these values (k 8-12, weight 0.8-1.0, cross-lingual 0.2-0.3,
margin 4-6) meets the bar on all eight dev tasks; the values sit in its middle, not on an edge.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

FUSION_VERSION = "wrrf-k10-cov2-script-margin-v3"
RRF_K = 10
VEC_WEIGHT = 1.0
LEX_WEIGHT = 0.8
COVERAGE_POWER = 2
CROSS_LINGUAL_FACTOR = 0.3
MARGIN_BOOST = 5.0
CANDIDATES = 100  # depth of each leg before fusion (the depth the rule was tuned at)
TEXT_LIMIT = 1200  # characters of chunk text in a hit
MODES = ("hybrid", "lex", "vec")
DIVERSITY_MIN_K = 5  # diversity is on by default from this k
DIVERSITY_POOL = 4  # candidates read per slot when capping hits per note
DIVERSITY_RATIO = 0.9  # another note's chunk must score this share of the capped one to replace it
# Confidence (bench/confidence.py): cosine gap between the vector leg's 1st and 10th, its best
# cosine, the share of query words the index knows. Chosen in the middle of the region where
# ≥ 80% of negative questions and ≤ 5% of answerable ones are flagged "none".
GAP_RANK = 10
GAP_FLOOR = 0.04
VEC_FLOOR = 0.82
LEX_FLOOR = 0.75
SMALL_INDEX_SLACK = 0.04


@dataclass(frozen=True, slots=True)
class Hit:
    collection: str
    path: str  # relative to the library root
    abs_path: str
    line: int
    heading: str
    score: float
    text: str
    lex_rank: int | None = None
    vec_rank: int | None = None
    end_line: int = 0  # last line of the cited range
    cite: str = ""  # citation hash of lines line..end_line when searched (see excerpt.py)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Freshness:
    """How current one searched collection's index was, and what this call did about it."""

    collection: str
    caught_up: int  # files (re)indexed or removed by this call before searching
    current: bool  # True when the index matched the notes before this call
    last_write: float | None  # unix time of the last index write
    rebuilt: str = ""


@dataclass(slots=True)
class SearchResult:
    query: str
    mode: str
    target: str
    hits: list[Hit]
    took_ms: float
    collections: list[str]
    freshness: list[Freshness] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    budget: dict[str, Any] | None = None  # max_tokens, used, dropped, cut (with max_tokens)
    confidence: str = "none"  # high | low | none: is there a good match at all?
    routed: list[str] | None = None  # search(route=K): the collection paths the router chose

    def to_dict(self) -> dict[str, Any]:
        out = {
            "query": self.query,
            "mode": self.mode,
            "target": self.target,
            "took_ms": round(self.took_ms, 2),
            "confidence": self.confidence,
            "collections": self.collections,
            "results": [h.to_dict() for h in self.hits],
            "freshness": [asdict(f) for f in self.freshness],
            "warnings": self.warnings,
            "budget": self.budget,
        }
        if self.routed is not None:
            out["routed"] = self.routed
        return out


def rrf(
    legs: Sequence[tuple[Sequence[tuple[Hashable, float]], float]], k: int = RRF_K
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
    query_script: str | None = None  # alphabet the query is written in
    answer_script: str | None = None  # alphabet of the vector leg's best chunk

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


def fuse(legs: Legs, mode: str) -> dict[Hashable, float]:
    """One score per candidate chunk for the given mode."""
    if mode == "lex" or (mode == "hybrid" and not legs.vec):
        return rrf([(legs.lex, 1.0)])
    if mode == "vec":
        return rrf([(legs.vec, 1.0)])
    return rrf([(legs.vec, VEC_WEIGHT), (legs.lex, lex_weight(legs))])


def notes_cap(k: int) -> int:
    """How many of k hits one note may hold while other notes match (k=5: 3, k=8: 4)."""
    return max(3, -(-k // 2))


def cap_per_note(
    order: Sequence[Hashable],
    k: int,
    cap: int,
    note_of: Callable[[Hashable], Hashable],
    score_of: Callable[[Hashable], float] | None = None,
    ratio: float = 0.0,
) -> list[Hashable]:
    """The first k keys with at most `cap` per note while other notes match comparably.

    A key over its note's cap is held back only when a key of another (under-cap) note further
    down scores at least `ratio` times as much: a clearly better chunk of the same note stays.
    Held-back keys fill whatever is left, in rank order, so k is never starved.
    """
    rank = {key: i for i, key in enumerate(order)}
    taken: list[Hashable] = []
    held: list[Hashable] = []
    per: dict[Hashable, int] = {}
    for i, key in enumerate(order):
        note = note_of(key)
        if per.get(note, 0) >= cap:
            if _rival(order, i, cap, per, note_of, score_of, ratio):
                held.append(key)
                continue
            same = [h for h in held if note_of(h) == note]
            if same:  # no rival any more: the note's best held-back key goes first
                held.remove(same[0])
                held.append(key)
                key = same[0]
        per[note] = per.get(note, 0) + 1
        taken.append(key)
        if len(taken) == k:
            return sorted(taken, key=rank.__getitem__)
    # Too few other notes matched: the rest of the strongest note comes back, in rank order.
    held.sort(key=rank.__getitem__)
    return sorted(taken + held[: k - len(taken)], key=rank.__getitem__)


def _rival(
    order: Sequence[Hashable],
    i: int,
    cap: int,
    per: dict[Hashable, int],
    note_of: Callable[[Hashable], Hashable],
    score_of: Callable[[Hashable], float] | None,
    ratio: float,
) -> bool:
    """Is there a later key of an under-cap note scoring >= ratio x order[i]'s score?"""
    floor = ratio * score_of(order[i]) if score_of is not None else float("-inf")
    for later in order[i + 1 :]:
        if score_of is not None and score_of(later) < floor:
            return False  # order is by score: nothing further down qualifies
        if per.get(note_of(later), 0) < cap:
            return True
    return False


def cut_text(text: str, limit: int = TEXT_LIMIT) -> str:
    """At most `limit` characters, cut at a sentence or word border when there is one."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    for sep in ("\n\n", ". ", "! ", "? ", "\n", " "):
        at = head.rfind(sep)
        if at > limit // 2:
            return head[: at + len(sep)].rstrip() + " …"
    return head + "…"


def signals(legs: Legs) -> dict[str, Any]:
    """What the legs say about whether any candidate answers the query at all."""
    vec = [s for _, s in legs.vec]
    lex = [s for _, s in legs.lex]
    top_v, top_l = set(legs.vec_ranked[:5]), set(legs.lex_ranked[:5])
    return {
        "vec_top": vec[0] if vec else None,
        # How far the best chunk stands above the 10th: a real answer stands out; without one
        # the vector leg returns a flat run of near-misses.
        "vec_gap": vec[0] - vec[GAP_RANK - 1] if len(vec) >= GAP_RANK else None,
        "lex_top": lex[0] if lex else None,
        "lex_margin": (lex[0] - lex[1]) / max(lex[0], 1e-9) if len(lex) >= 2 else float(bool(lex)),
        "coverage": legs.coverage,
        "agree": bool(lex and vec and (legs.lex[0][0] in top_v or legs.vec[0][0] in top_l)),
        "cross_lingual": legs.cross_lingual,
    }


def confidence(
    s: dict[str, Any],
    gap_floor: float = GAP_FLOOR,
    vec_floor: float = VEC_FLOOR,
    lex_floor: float = LEX_FLOOR,
) -> str:
    """high / low / none (calibrated in bench/confidence.py; rates in docs/benchmarks.md).

    high: both legs agree on a top chunk and the index knows most of the query's words.
    none: the vector leg's best is weak and does not stand out from its 10th.
    low: anything between: read the hits before trusting them.
    """
    vt, lt = s["vec_top"], s["lex_top"]
    if vt is None:  # lexical only: no second opinion, so never "high"
        return "low" if lt and s["coverage"] >= lex_floor else "none"
    if s["agree"] and s["coverage"] >= lex_floor:
        return "high"
    gap = s["vec_gap"]
    if gap is None:  # fewer than 10 chunks to compare with: judge by the similarity alone
        return "none" if vt < vec_floor - SMALL_INDEX_SLACK and s["coverage"] < lex_floor else "low"
    return "none" if gap < gap_floor and vt < vec_floor else "low"
