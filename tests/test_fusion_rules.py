"""The fusion rule (search/fusion.py) as a caller meets it: which candidate comes first, and
by how much, when each of its documented parts moves (issue 32: pinned, not restated). The
numbers are the rule's own documented values; each test flips an order or a score a search
would show."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memo.search.fusion import (
    COVERAGE_POWER,
    CROSS_LINGUAL_FACTOR,
    LEX_WEIGHT,
    NOTE_WEIGHT,
    SEARCH_FUSION_K,
    VEC_WEIGHT,
    Legs,
    fuse,
    fuse_phrasings,
    lex_weight,
    rrf,
    stand_in_weight,
    standardised,
    with_notes,
)

A, B, C, D = (0, 1), (0, 2), (1, 3), (1, 4)
CROWD = [(2, i) for i in range(30)]  # candidates neither test is about: a leg's own spread


def _vec(*first: tuple) -> list:
    """A vector leg of `first` and then 30 others, cosines falling from 0.80 by 0.005."""
    return [*first, *((key, 0.80 - 0.005 * i) for i, key in enumerate(CROWD))]


def _z(values: list[float], floor: float | None = None) -> list[float]:
    mean = sum(v := [*values, *([floor] if floor is not None else [])]) / len(v)
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / len(v))
    return [(x - mean) / sd for x in values]


def test_rrf_gives_each_leg_its_weight_over_k_plus_rank_and_twins_share_a_rank():
    got = rrf([([(A, 9.0), (B, 5.0), (C, 5.0), (D, 1.0)], 2.0)])
    k = SEARCH_FUSION_K
    assert got == {A: 2 / (k + 1), B: 2 / (k + 2), C: 2 / (k + 2), D: 2 / (k + 4)}
    assert rrf([([(A, 1.0)], 1.0)], k=60) == {A: 1 / 61}
    assert rrf([([(A, 1.0)], 0.0), ([(B, 1.0)], -1.0)]) == {}  # a leg without weight counts not
    both = rrf([([(A, 2.0), (B, 1.0)], 1.0), ([(B, 2.0), (A, 1.0)], 1.0)])
    assert both[A] == both[B] == 1 / (k + 1) + 1 / (k + 2)


def test_the_lexical_weight_follows_coverage_squared_and_the_language():
    flat = [(A, 5.0), (B, 5.0)]
    assert lex_weight(Legs(lex=flat, coverage=1.0)) == LEX_WEIGHT
    assert lex_weight(Legs(lex=flat, coverage=0.5)) == pytest.approx(
        LEX_WEIGHT * 0.5**COVERAGE_POWER
    )
    across = Legs(lex=flat, coverage=1.0, query_lang="en", answer_lang="ru")
    assert across.cross_lingual
    assert lex_weight(across) == pytest.approx(LEX_WEIGHT * CROSS_LINGUAL_FACTOR)
    clear = Legs(lex=[(A, 10.0), (B, 5.0)], coverage=1.0)  # a margin adds no weight: z holds it
    assert lex_weight(clear) == LEX_WEIGHT
    assert not Legs(query_lang="en").cross_lingual  # one side unknown: not across
    assert not Legs(query_lang="ru", answer_lang="ru").cross_lingual


def test_each_score_is_its_z_over_the_leg_and_a_value_outside_gets_the_floors_z():
    z, floor = standardised([3.0, 2.0, 1.0])
    assert z == pytest.approx([1.224745, 0.0, -1.224745]) and floor == z[-1]
    z, floor = standardised([3.0, 1.0], floor=0.0)  # the floor counts among the values
    assert z == pytest.approx(_z([3.0, 1.0], 0.0))
    assert floor == pytest.approx(_z([3.0, 1.0, 0.0])[-1])
    assert floor == pytest.approx(-(1 + 1 / 3) / math.sqrt(14 / 9))
    assert standardised([2.0, 2.0]) == ([0.0, 0.0], 0.0)  # no spread: nobody stands out
    assert standardised([]) == ([], 0.0)
    assert standardised([], floor=0.0) == ([], 0.0)
    z, floor = standardised([4.0], floor=0.0, count=3)  # one match among four chunks
    assert z == pytest.approx(_z([4.0, 0.0, 0.0, 0.0])[:1]) and z[0] == pytest.approx(math.sqrt(3))
    assert floor == pytest.approx(-1 / math.sqrt(3))


def test_how_much_the_lexical_leg_decides_follows_how_many_question_words_the_notes_know():
    """A is the lexical leg's clear first and the vector leg's second, B the vector leg's
    first with a weak lexical match, C a lexical match below all the vector leg found: the
    more of the question's words the notes know (`coverage`), the more the lexical leg moves
    them. Every candidate of either leg is ranked, once."""
    vec = _vec((B, 0.95), (A, 0.90))
    lex = [(A, 12.0), (C, 6.0), (B, 3.0)]

    def order(coverage: float) -> list:
        got = fuse(Legs(lex=lex, vec=vec, coverage=coverage), "hybrid")
        assert set(got) == {A, B, C, *CROWD}
        return sorted(got, key=lambda key: -got[key])

    every_word = order(1.0)
    assert every_word[:3] == [A, B, C]  # C above the 30 chunks holding none of the words
    half = order(0.5)
    assert half[:2] == [A, B] and half.index(C) > half.index(CROWD[0])  # C sinks among them
    few = order(0.2)
    assert few[:2] == [B, A]  # the vector leg decides
    assert few.index(C) > few.index(CROWD[-5])


def test_an_exact_lexical_match_overtakes_the_vector_leg_only_when_it_stands_out():
    vec = _vec((B, 0.86), (A, 0.84))
    words = [(key, 5.0 - 0.01 * i) for i, key in enumerate(CROWD)]
    close = Legs(lex=[(A, 6.0), (B, 5.9), *words], vec=vec, coverage=1.0)
    clear = Legs(lex=[(A, 30.0), (B, 5.9), *words], vec=vec, coverage=1.0)
    assert max(fuse(close, "hybrid"), key=fuse(close, "hybrid").get) == B
    assert max(fuse(clear, "hybrid"), key=fuse(clear, "hybrid").get) == A
    half = Legs(lex=clear.lex, vec=vec, coverage=0.2)  # few of the question's words known
    assert max(fuse(half, "hybrid"), key=fuse(half, "hybrid").get) == B


def test_the_one_chunk_holding_a_rare_word_comes_first_whatever_the_vector_leg_prefers():
    """An error code, a name: one match of the lexical leg among the vector leg's 32 chunks is
    the strongest evidence either leg has (its z is √31 over the chunks holding none of it)."""
    vec = _vec((B, 0.95), (C, 0.93))  # A is the vector leg's 31st
    legs = Legs(lex=[(A, 3.0)], vec=[*vec[:-1], (A, 0.60)], coverage=1.0)
    got = fuse(legs, "hybrid")
    assert max(got, key=got.get) == A


def test_fusion_hears_how_far_a_leg_stands_out_not_only_its_order():
    """The case ranks cannot tell: both legs put a different chunk first; the vector leg's
    first stands far above its crowd, the lexical leg's a hair above its second."""
    words = [(key, 5.0 - 0.01 * i) for i, key in enumerate(CROWD)]
    legs = Legs(lex=[(A, 6.0), (B, 5.99), *words], vec=_vec((B, 0.95), (A, 0.81)), coverage=1.0)
    got = fuse(legs, "hybrid")
    assert max(got, key=got.get) == B
    flipped = Legs(
        lex=[(A, 30.0), (B, 5.99), *words], vec=_vec((B, 0.81), (A, 0.805)), coverage=1.0
    )
    got = fuse(flipped, "hybrid")
    assert max(got, key=got.get) == A


def test_a_question_without_a_known_word_ranks_by_the_vector_leg_alone():
    vec = _vec((B, 0.9), (A, 0.85))
    vz = _z([x for _, x in vec])
    got = fuse(Legs(vec=vec, coverage=0.0), "hybrid")
    assert got == pytest.approx({key: math.exp(z) for (key, _), z in zip(vec, vz, strict=True)})


def test_each_mode_reads_its_own_legs():
    legs = Legs(lex=[(A, 3.0), (B, 2.0)], vec=[(B, 0.9), (C, 0.5)], coverage=1.0)
    k = SEARCH_FUSION_K
    assert fuse(legs, "lex") == {A: 1 / (k + 1), B: 1 / (k + 2)}
    assert fuse(legs, "vec") == {B: 1 / (k + 1), C: 1 / (k + 2)}
    hybrid = fuse(legs, "hybrid")
    assert set(hybrid) == {A, B, C}
    no_vectors = Legs(lex=legs.lex, coverage=1.0)  # hybrid without a vector leg: lexical alone
    assert fuse(no_vectors, "hybrid") == fuse(no_vectors, "lex")


def test_a_pending_chunk_stands_in_with_its_lexical_rank_as_far_as_the_words_are_known():
    vec = _vec((B, 0.9))
    lex = [(A, 9.0), (B, 8.9), (C, 8.8), (D, 8.8)]
    vz, v_floor = standardised([s for _, s in vec])
    lz, _ = standardised([s for _, s in lex], floor=0.0, count=len(vec) - len(lex))
    base = Legs(lex=lex, vec=vec, coverage=1.0, pending={A, C, D})
    assert stand_in_weight(base) == VEC_WEIGHT
    got = fuse(base, "hybrid")
    assert got[A] == pytest.approx(math.exp(vz[0] + lz[0]))  # as if the vector leg agreed
    assert got[B] == pytest.approx(math.exp(vz[0] + lz[1]))
    assert got[C] == pytest.approx(math.exp(vz[2] + lz[2]))  # rank 3, as the vector leg's third
    assert got[D] == got[C]  # equal BM25: a shared rank
    half = Legs(lex=lex, vec=vec, coverage=0.5, pending={A})
    assert stand_in_weight(half) == pytest.approx(VEC_WEIGHT * 0.5**COVERAGE_POWER)
    lift = 0.5**COVERAGE_POWER * (vz[0] - v_floor)
    w = 0.5**COVERAGE_POWER
    assert fuse(half, "hybrid")[A] == pytest.approx(math.exp(v_floor + lift + w * lz[0]))
    across = Legs(lex=lex, vec=vec, coverage=1.0, pending={A}, query_lang="en", answer_lang="ru")
    assert stand_in_weight(across) == pytest.approx(VEC_WEIGHT * CROSS_LINGUAL_FACTOR)
    waiting = Legs(lex=lex, vec=vec, coverage=1.0)  # no longer pending: the floor, no stand-in
    assert fuse(waiting, "hybrid")[A] == pytest.approx(math.exp(v_floor + lz[0]))
    far = Legs(lex=[*((k, 9.0 - 0.1 * i) for i, k in enumerate(CROWD)), (A, 1.0)], vec=vec[:3])
    far.coverage, far.pending = 1.0, {A}  # below every vector rank: nothing to stand in with
    _, far_floor = standardised([s for _, s in far.vec])
    far_z, _ = standardised([s for _, s in far.lex], floor=0.0)  # more matches than vectors
    assert fuse(far, "hybrid")[A] == pytest.approx(math.exp(far_floor + far_z[-1]))
    assert fuse(Legs(lex=lex, vec=vec, coverage=1.0), "lex") == fuse(base, "lex")


@given(st.permutations([A, B, C, D]), st.sets(st.sampled_from([A, B, C, D])))
def test_a_chunk_with_a_vector_keeps_its_score_whoever_else_waits_for_theirs(order, waiting):
    lex = [(key, 10.0 - i) for i, key in enumerate(order)]
    vec = [(key, 0.9 - 0.1 * i) for i, key in enumerate(sorted(order)) if key not in waiting]
    plain = fuse(Legs(lex=lex, vec=vec, coverage=1.0), "hybrid")
    mixed = fuse(Legs(lex=lex, vec=vec, coverage=1.0, pending=set(waiting)), "hybrid")
    _, v_floor = standardised([s for _, s in vec])
    for rank, key in enumerate(order):
        if key not in waiting or not vec:  # no vector anywhere yet: the lexical leg alone
            assert mixed[key] == plain[key]
        elif rank < len(vec) and vec[rank][1] > vec[-1][1]:  # a vector rank above the floor
            assert mixed[key] > plain[key]
        else:
            assert mixed[key] == pytest.approx(plain[key])


def test_several_phrasings_rank_hybrid_by_consensus_and_one_leg_by_the_best():
    """Hybrid: a chunk every phrasing ranks high beats one that a single phrasing puts first;
    a one-leg search keeps each chunk's best score among the phrasings."""
    ru = Legs(lex=[(A, 5.0), (B, 4.0)], vec=[(A, 0.9), (B, 0.88), (C, 0.5)], coverage=1.0)
    en = Legs(lex=[(B, 5.0), (C, 1.0)], vec=[(B, 0.9), (A, 0.6), (C, 0.5)], coverage=1.0)
    assert max(fuse(ru, "hybrid"), key=fuse(ru, "hybrid").get) == A
    both = fuse_phrasings([ru, en], "hybrid")
    assert max(both, key=both.get) == B  # second for one, first for the other: both agree
    assert fuse_phrasings([en, ru], "hybrid") == pytest.approx(both)  # order does not matter
    lexical = fuse_phrasings([ru, en], "lex")
    assert lexical == {A: fuse(ru, "lex")[A], B: fuse(en, "lex")[B], C: fuse(en, "lex")[C]}
    assert fuse_phrasings([ru, en], "vec")[A] == fuse(ru, "vec")[A]
    assert fuse_phrasings([ru], "hybrid") == fuse(ru, "hybrid")  # one phrasing: as before


def test_a_leg_without_weight_is_passed_over_and_the_legs_after_it_still_count():
    k = SEARCH_FUSION_K
    got = rrf([([(A, 1.0)], 0.0), ([(B, 1.0)], 1.0)])
    assert got == {B: 1 / (k + 1)}


def test_no_leg_s_scale_matters_only_how_its_candidates_spread():
    vec = _vec((B, 0.9), (A, 0.85))
    small = Legs(lex=[(A, 0.5), (B, 0.25)], vec=vec, coverage=1.0)  # BM25 below 1
    big = Legs(lex=[(A, 50.0), (B, 25.0)], vec=vec, coverage=1.0)
    assert fuse(small, "hybrid") == pytest.approx(fuse(big, "hybrid"))
    shifted = Legs(lex=big.lex, vec=[(k, s - 0.3) for k, s in vec], coverage=1.0)
    assert fuse(shifted, "hybrid") == pytest.approx(fuse(big, "hybrid"))  # cosines run lower


def test_one_phrasings_keyword_rows_cannot_outvote_the_others_vector_legs():
    """A phrasing whose lexical leg alone lifts C (its rare words) does not put C above the
    chunk the question's and another phrasing's vector legs agree on."""
    vec = [(A, 0.92), (B, 0.85), (C, 0.8), (D, 0.79)]
    question = Legs(lex=[(A, 2.0)], vec=vec, coverage=1.0)
    again = Legs(lex=[(A, 2.0)], vec=vec, coverage=1.0)
    rows = Legs(lex=[(C, 30.0), (D, 1.0)], vec=vec, coverage=1.0)
    assert max(fuse(rows, "hybrid"), key=fuse(rows, "hybrid").get) == C
    got = fuse_phrasings([question, again, rows], "hybrid")
    assert max(got, key=got.get) == A


def test_a_chunk_gains_a_quarter_of_its_notes_z_over_the_candidates_notes():
    scores = {A: 2.0, B: 2.0, C: 1.0}
    note_of = {A: "links", B: "tags", C: "links"}
    got = with_notes(scores, note_of, {"links": 0.9, "tags": 0.7})
    assert got[A] == pytest.approx(2.0 * math.exp(NOTE_WEIGHT * 1.0))  # z of 0.9 among two: +1
    assert got[B] == pytest.approx(2.0 * math.exp(NOTE_WEIGHT * -1.0))
    assert got[C] == pytest.approx(1.0 * math.exp(NOTE_WEIGHT * 1.0))
    assert NOTE_WEIGHT == 0.25


def test_the_note_about_the_question_settles_two_sections_the_chunks_cannot():
    # two near sections, a hair apart: the one in the note about the question comes first
    scores = {A: 2.00, B: 2.02}
    got = with_notes(scores, {A: "links", B: "tags"}, {"links": 0.85, "tags": 0.80})
    assert max(got, key=got.__getitem__) == A
    # a chunk that stands clearly out keeps its place whatever its note
    clear = with_notes({A: 2.0, B: 9.0}, {A: "links", B: "tags"}, {"links": 0.85, "tags": 0.80})
    assert max(clear, key=clear.__getitem__) == B


def test_a_note_without_vectors_or_one_note_alone_changes_nothing():
    scores = {A: 2.0, B: 1.5, C: 1.0}
    # C's note has no vector yet: neither punished nor lifted (z 0, the notes' mean)
    got = with_notes(scores, {A: "x", B: "y", C: "z"}, {"x": 0.9, "y": 0.7})
    assert got[C] == scores[C]
    assert with_notes(scores, {A: "x", B: "x", C: "x"}, {"x": 0.9}) == scores
    assert with_notes(scores, {}, {}) == scores
    flat = {"x": 0.8, "y": 0.8}  # nothing stands out
    assert with_notes(scores, {A: "x", B: "y"}, flat) == scores


def test_a_chunk_one_phrasing_puts_first_loses_to_the_one_every_phrasing_finds():
    """The best-of rule would keep A, which the second phrasing never finds; the consensus
    keeps B, which both find (A is at the second phrasing's least there)."""
    first = Legs(lex=[(A, 9.0), (B, 3.0)], vec=_vec((A, 0.95), (B, 0.9)), coverage=1.0)
    second = Legs(lex=[(B, 3.0)], vec=_vec((B, 0.9), (C, 0.85)), coverage=1.0)
    one, two = fuse(first, "hybrid"), fuse(second, "hybrid")
    assert A not in two and one[A] > max(two.values()) > one[B]  # A best of any phrasing
    got = fuse_phrasings([first, second], "hybrid")
    assert max(got, key=got.get) == B
    # without vectors there is no consensus to read: each chunk's best lexical score
    lexical = [Legs(lex=first.lex, coverage=1.0), Legs(lex=second.lex, coverage=1.0)]
    got = fuse_phrasings(lexical, "hybrid")
    assert got == {A: fuse(lexical[0], "hybrid")[A], B: fuse(lexical[1], "hybrid")[B]}


def test_phrasings_that_agree_change_nothing_and_one_that_finds_nothing_changes_no_order():
    legs = Legs(lex=[(A, 9.0), (B, 3.0)], vec=_vec((A, 0.95), (B, 0.9)), coverage=1.0)
    alone = fuse(legs, "hybrid")
    assert fuse_phrasings([legs, legs, legs], "hybrid") == pytest.approx(alone)
    nothing = Legs(coverage=0.0)  # an answer no note holds a word or a vector of
    got = fuse_phrasings([legs, nothing], "hybrid")
    assert sorted(got, key=got.get) == sorted(alone, key=alone.get)
