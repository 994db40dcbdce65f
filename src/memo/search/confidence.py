"""Confidence: does any hit answer the question at all? high / low / none.

Calibrated in bench/confidence.py (rates in docs/benchmarks.md): the vector leg's best cosine
and its gap to its 10th, the share of the query's words the index knows, and whether the two
legs agree on a top chunk.
"""

from __future__ import annotations

import statistics
from typing import Any

from ..collection.lexical import terms
from .fusion import Legs

# Cosine gap between the vector leg's 1st and 10th, its best cosine, the share of query words
# the index knows. Chosen in the middle of the region where >= 80% of negative questions and
# <= 5% of answerable ones are flagged "none".
GAP_RANK = 10
GAP_FLOOR = 0.04
VEC_FLOOR = 0.82
LEX_FLOOR = 0.75
SMALL_INDEX_SLACK = 0.04


def signals(legs: Legs, top_text: str = "") -> dict[str, Any]:
    """What the legs (and the first hit's text) say about whether any candidate answers the
    query at all."""
    vec = [s for _, s in legs.vec]
    lex = [s for _, s in legs.lex]
    top_v, top_l = set(legs.vec_ranked[:5]), set(legs.lex_ranked[:5])
    return {
        **_scale_free(legs, vec, top_text),
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


def _scale_free(legs: Legs, vec: list[float], top_text: str) -> dict[str, Any]:
    """Signals that do not move with the library's size or language.

    - `top_share`: the IDF-weighted share of the query's stems that the first hit itself
      holds: how much of what the question asks about is in the answer offered.
    - `vec_z`: how far the best cosine stands above the other candidates, in their own
      standard deviations (a real answer stands out of the scope's own distribution).
    """
    out: dict[str, Any] = {"top_share": None, "vec_z": None}
    if legs.terms and top_text:
        held = set(terms(top_text))
        total = sum(legs.idf)
        got = sum(w for t, w in zip(legs.terms, legs.idf, strict=True) if t in held)
        out["top_share"] = got / total if total > 0 else 0.0
    if len(vec) >= GAP_RANK:
        rest = vec[1:]
        spread = statistics.pstdev(rest)
        out["vec_z"] = (vec[0] - statistics.fmean(rest)) / spread if spread > 0 else None
    return out


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
