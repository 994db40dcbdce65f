"""The fusion rule (search/fusion.py) as a caller meets it: which candidate comes first, and
by how much, when each of its documented parts moves (issue 32: pinned, not restated). The
numbers are the rule's own documented values; each test flips an order or a score a search
would show."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memo.search.fusion import (
    COVERAGE_POWER,
    CROSS_LINGUAL_FACTOR,
    LEX_WEIGHT,
    MARGIN_BOOST,
    SEARCH_FUSION_K,
    VEC_WEIGHT,
    Legs,
    fuse,
    fuse_phrasings,
    lex_weight,
    rrf,
    stand_in_weight,
)

A, B, C, D = (0, 1), (0, 2), (1, 3), (1, 4)


def test_rrf_gives_each_leg_its_weight_over_k_plus_rank_and_twins_share_a_rank():
    got = rrf([([(A, 9.0), (B, 5.0), (C, 5.0), (D, 1.0)], 2.0)])
    k = SEARCH_FUSION_K
    assert got == {A: 2 / (k + 1), B: 2 / (k + 2), C: 2 / (k + 2), D: 2 / (k + 4)}
    assert rrf([([(A, 1.0)], 1.0)], k=60) == {A: 1 / 61}
    assert rrf([([(A, 1.0)], 0.0), ([(B, 1.0)], -1.0)]) == {}  # a leg without weight counts not
    both = rrf([([(A, 2.0), (B, 1.0)], 1.0), ([(B, 2.0), (A, 1.0)], 1.0)])
    assert both[A] == both[B] == 1 / (k + 1) + 1 / (k + 2)


def test_the_lexical_weight_follows_coverage_squared_the_language_and_the_margin():
    flat = [(A, 5.0), (B, 5.0)]  # no margin: BM25 does not stand out
    assert lex_weight(Legs(lex=flat, coverage=1.0)) == LEX_WEIGHT
    assert lex_weight(Legs(lex=flat, coverage=0.5)) == pytest.approx(
        LEX_WEIGHT * 0.5**COVERAGE_POWER
    )
    across = Legs(lex=flat, coverage=1.0, query_script="latn", answer_script="cyrl")
    assert across.cross_lingual
    assert lex_weight(across) == pytest.approx(LEX_WEIGHT * CROSS_LINGUAL_FACTOR)
    clear = Legs(lex=[(A, 10.0), (B, 5.0)], coverage=1.0)  # the best stands clear of the second
    assert lex_weight(clear) == pytest.approx(LEX_WEIGHT * (1 + MARGIN_BOOST * 0.5))
    alone = Legs(lex=[(A, 10.0)], coverage=1.0)  # one hit: no margin to measure
    assert lex_weight(alone) == LEX_WEIGHT
    assert not Legs(query_script="latn").cross_lingual  # one side unknown: not across
    assert not Legs(query_script="cyrl", answer_script="cyrl").cross_lingual


def test_an_exact_lexical_match_overtakes_the_vector_leg_only_when_it_stands_out():
    vec = [(B, 0.9), (A, 0.8)]
    close = Legs(lex=[(A, 6.0), (B, 5.9)], vec=vec, coverage=1.0)
    clear = Legs(lex=[(A, 30.0), (B, 5.0)], vec=vec, coverage=1.0)
    assert max(fuse(close, "hybrid"), key=fuse(close, "hybrid").get) == B
    assert max(fuse(clear, "hybrid"), key=fuse(clear, "hybrid").get) == A
    half = Legs(lex=clear.lex, vec=vec, coverage=0.3)  # few of the question's words known
    assert max(fuse(half, "hybrid"), key=fuse(half, "hybrid").get) == B


def test_each_mode_reads_its_own_legs():
    legs = Legs(lex=[(A, 3.0), (B, 2.0)], vec=[(B, 0.9), (C, 0.5)], coverage=1.0)
    k = SEARCH_FUSION_K
    assert fuse(legs, "lex") == {A: 1 / (k + 1), B: 1 / (k + 2)}
    assert fuse(legs, "vec") == {B: 1 / (k + 1), C: 1 / (k + 2)}
    hybrid = fuse(legs, "hybrid")
    assert set(hybrid) == {A, B, C}
    assert hybrid[C] == pytest.approx(VEC_WEIGHT / (k + 2))
    no_vectors = Legs(lex=legs.lex, coverage=1.0)  # hybrid without a vector leg: lexical alone
    assert fuse(no_vectors, "hybrid") == fuse(no_vectors, "lex")


def test_a_pending_chunk_stands_in_with_its_lexical_rank_as_far_as_the_words_are_known():
    k = SEARCH_FUSION_K
    base = Legs(lex=[(A, 9.0), (B, 8.9)], vec=[(B, 0.9)], coverage=1.0, pending={A})
    w = lex_weight(base)
    assert stand_in_weight(base) == VEC_WEIGHT
    assert fuse(base, "hybrid")[A] == pytest.approx(w / (k + 1) + VEC_WEIGHT / (k + 1))
    assert fuse(base, "hybrid")[B] == pytest.approx(w / (k + 2) + VEC_WEIGHT / (k + 1))
    half = Legs(lex=base.lex, vec=base.vec, coverage=0.5, pending={A})
    assert stand_in_weight(half) == pytest.approx(VEC_WEIGHT * 0.5**COVERAGE_POWER)
    across = Legs(
        lex=base.lex, vec=base.vec, coverage=1.0, pending={A}, query_script="latn",
        answer_script="cyrl",
    )  # fmt: skip
    assert stand_in_weight(across) == pytest.approx(VEC_WEIGHT * CROSS_LINGUAL_FACTOR)
    assert fuse(Legs(lex=base.lex, vec=base.vec, coverage=1.0), "lex") == fuse(base, "lex")


@given(st.permutations([A, B, C, D]), st.sets(st.sampled_from([A, B, C, D])))
def test_a_chunk_with_a_vector_keeps_its_score_whoever_else_waits_for_theirs(order, waiting):
    lex = [(key, 10.0 - i) for i, key in enumerate(order)]
    vec = [(key, 0.9 - 0.1 * i) for i, key in enumerate(sorted(order)) if key not in waiting]
    plain = fuse(Legs(lex=lex, vec=vec, coverage=1.0), "hybrid")
    mixed = fuse(Legs(lex=lex, vec=vec, coverage=1.0, pending=set(waiting)), "hybrid")
    for key in order:
        if key not in waiting or not vec:  # no vector anywhere yet: the lexical leg alone
            assert mixed[key] == plain[key]
        else:
            assert mixed[key] > plain[key]


def test_several_phrasings_take_each_chunks_best_score_in_the_mode_asked():
    ru = Legs(lex=[(A, 5.0)], vec=[(A, 0.9), (B, 0.8)], coverage=1.0)
    en = Legs(lex=[(B, 5.0)], vec=[(B, 0.7)], coverage=0.2)
    both = fuse_phrasings([ru, en], "hybrid")
    assert both[A] == fuse(ru, "hybrid")[A]
    assert both[B] == max(fuse(ru, "hybrid")[B], fuse(en, "hybrid")[B])
    lexical = fuse_phrasings([ru, en], "lex")
    assert lexical == {A: fuse(ru, "lex")[A], B: fuse(en, "lex")[B]}
    assert fuse_phrasings([ru, en], "vec")[A] == fuse(ru, "vec")[A]


def test_a_leg_without_weight_is_passed_over_and_the_legs_after_it_still_count():
    k = SEARCH_FUSION_K
    got = rrf([([(A, 1.0)], 0.0), ([(B, 1.0)], 1.0)])
    assert got == {B: 1 / (k + 1)}


def test_the_margin_is_relative_to_the_best_score_whatever_its_scale():
    small = Legs(lex=[(A, 0.5), (B, 0.25)], coverage=1.0)  # BM25 below 1: the same margin
    big = Legs(lex=[(A, 50.0), (B, 25.0)], coverage=1.0)
    assert lex_weight(small) == pytest.approx(lex_weight(big))
    assert lex_weight(small) == pytest.approx(LEX_WEIGHT * (1 + MARGIN_BOOST * 0.5))


def test_the_best_phrasing_wins_whichever_comes_first():
    strong = Legs(lex=[(A, 5.0), (B, 1.0)], vec=[(B, 0.9)], coverage=1.0)
    weak = Legs(lex=[(C, 5.0), (B, 1.0)], vec=[(C, 0.9), (B, 0.2)], coverage=0.1)
    for every in ([strong, weak], [weak, strong]):
        got = fuse_phrasings(every, "hybrid")
        assert got[B] == max(fuse(strong, "hybrid")[B], fuse(weak, "hybrid")[B])
        assert got[B] == fuse(strong, "hybrid")[B]
