"""Confidence: does any hit answer the question at all? high / low / none.

Signals (`signals`): the IDF-weighted share of the question's stems the first hit holds
(`top_share`); the vector leg's best cosine plus half its lift over the tail (`vec_strength`)
and how far it stands out of the tail in standard deviations (`vec_z`); whether the legs agree.
`high`: the legs agree and the hit holds most of the question, or both put it first in the
question's language with strong vectors. `none` (the answer is probably not in the notes): the
hit holds little of the question, its vectors are weak and stand out little, in the
question's language; never across languages, nor of chunks the vector leg has not seen, nor
for a lexical-only search's `high`. A query without a word is `none`. docs/design.md.
"""

from __future__ import annotations

import statistics
from typing import Any

from ..collection.langid import detect
from ..collection.lexical import terms
from .fusion import Legs
from .results import Confidence

# `none` refitted over XQuAD's 12 languages (bench/languages.py --dump, the tune half; issue
# 48): absolute cosines run higher in some languages than in others (an unanswerable Chinese
# question's best cosine is about a Russian answer's), so beside the share and the strength a
# hit must stand out of its own scope (`vec_z`: its cosine above the tail's mean, in the tail's
# standard deviations) by less than NONE_Z to be `none`. Across languages memo never says
# `none`: e5's cross-language cosines overlap answer and no answer, and the warning asks for
# the question in the notes' language, whose phrasing then judges. docs/design.md has the fit.
HIGH_SHARE = 0.48  # the first hit holds at least this share of the question (IDF-weighted)
NONE_SHARE = 0.30  # below this the first hit does not hold the question
NONE_STRENGTH = 0.895  # vector evidence below this is weak
NONE_Z = 5.75  # a first hit standing out of its scope's tail by less than this is no answer
# both legs' first chunk is `high` from this vector strength on: the floor the rule was
# measured with (docs/design.md), which was NONE_STRENGTH's until the vault joined its fit;
# lower, an unanswerable question of the vault whose legs agree on a near note said `high`
SAME_FIRST_STRENGTH = 0.89
UNSEEN_SHARE = 0.1  # of the scope without vectors yet: too much unseen to answer `none`
LIFT_FROM = 10  # the lift is measured against the candidates from this rank on
AGREE_TOP = 5


def signals(legs: Legs, top_text: str = "", top_lang: str | None = None) -> dict[str, Any]:
    """What the legs and the first hit's text (in language `top_lang`, the one its index
    stored; else read from the text) say about whether any candidate answers."""
    vec = [s for _, s in legs.vec]
    q = legs.query_lang
    if top_lang is None and top_text:
        top_lang = detect(top_text, among=(q,) if q else ())
    top_v, top_l = set(legs.vec_ranked[:AGREE_TOP]), set(legs.lex_ranked[:AGREE_TOP])
    return {
        "top_share": _top_share(legs, top_text, top_lang),
        "vec_top": vec[0] if vec else None,
        "vec_strength": _strength(vec),
        "vec_z": _z(vec),
        "agree": bool(
            legs.lex and legs.vec and (legs.lex[0][0] in top_v or legs.vec[0][0] in top_l)
        ),
        "same_first": bool(legs.lex and legs.vec and legs.lex[0][0] == legs.vec[0][0]),
        "languages_differ": q is not None and top_lang is not None and q != top_lang,
        "coverage": legs.coverage,
        "unseen": legs.unseen,
        "words": legs.words,
        "named": any(len(t) > 1 for t in legs.terms) if legs.terms else True,
    }


def _top_share(legs: Legs, top_text: str, lang: str | None) -> float:
    """The IDF-weighted share of the question's stems the first hit holds (0 without any),
    the hit's words read in its own language as its index reads them."""
    total = sum(legs.idf)
    if not legs.terms or not top_text or total <= 0:
        return 0.0
    held = set(terms(top_text, lang))
    return sum(w for t, w in zip(legs.terms, legs.idf, strict=True) if t in held) / total


def _strength(vec: list[float]) -> float | None:
    """Best cosine + half its lift over the candidates from rank LIFT_FROM + 1 on."""
    if not vec:
        return None
    rest = vec[LIFT_FROM:] if len(vec) > 2 * LIFT_FROM else vec[1:]
    lift = vec[0] - statistics.fmean(rest) if rest else 0.0
    return vec[0] + 0.5 * lift


def _z(vec: list[float]) -> float | None:
    """How far the best cosine stands above the tail (as `_strength` takes it), in the
    tail's standard deviations; None with fewer than three in the tail or no spread."""
    rest = vec[LIFT_FROM:] if len(vec) > 2 * LIFT_FROM else vec[1:]
    if len(rest) < 3:
        return None
    sd = statistics.pstdev(rest)
    return (vec[0] - statistics.fmean(rest)) / sd if sd > 0 else None


def confidence(
    s: dict[str, Any],
    high_share: float = HIGH_SHARE,
    none_share: float = NONE_SHARE,
    none_strength: float = NONE_STRENGTH,
    none_z: float = NONE_Z,
) -> Confidence:
    """high / low / none for a search's signals (see the module docstring)."""
    if not s.get("words", True):
        return "none"
    share, strength = s["top_share"], s["vec_strength"]
    unsure: Confidence = "low" if s.get("unseen", 0.0) >= UNSEEN_SHARE else "none"
    if strength is None:  # lexical only: no second opinion, so never "high"
        return unsure if share < none_share else "low"
    sure = s.get("named", True)  # a question of one-letter words is never sure
    if sure and s["agree"] and share >= high_share:
        return "high"
    if (
        sure
        and s.get("same_first")
        and not s["languages_differ"]
        and strength >= SAME_FIRST_STRENGTH
    ):
        return "high"  # both legs chose this chunk first, and it is near the question
    if s["languages_differ"]:
        return "low"  # across languages cosines say too little to say "not in the notes"
    z = s.get("vec_z")
    standing = z is not None and z >= none_z
    return unsure if share < none_share and strength < none_strength and not standing else "low"
