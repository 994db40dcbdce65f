"""Confidence (search/confidence.py) as an agent meets it: which word a search says, at the
edges of each documented threshold, and which signals move it (issue 32: pinned by outcomes)."""

from __future__ import annotations

import pytest

from memo.collection.lexical import terms
from memo.search.confidence import (
    AGREE_TOP,
    HIGH_SHARE,
    LIFT_FROM,
    NONE_SHARE,
    NONE_STRENGTH,
    NONE_Z,
    SAME_FIRST_STRENGTH,
    UNSEEN_SHARE,
    confidence,
    signals,
)
from memo.search.fusion import Legs

BASE = {"agree": True, "languages_differ": False, "unseen": 0.0, "words": True}


def said(share: float, strength: float | None, **kw: object) -> str:
    return confidence({**BASE, "top_share": share, "vec_strength": strength, **kw})


def test_high_needs_both_legs_agreeing_and_the_hit_holding_the_question():
    assert said(HIGH_SHARE, 0.95) == "high"
    assert said(HIGH_SHARE - 1e-6, 0.95) == "low"
    assert said(0.9, 0.95, agree=False) == "low"
    assert said(0.9, None) == "low"  # lexical only: no second opinion, never high


def test_high_too_when_both_legs_put_one_chunk_first_near_the_question():
    """A paraphrase holds few of the note's words: two legs agreeing on the first chunk, with
    strong vector evidence, is high without the share; its floor is its own, above the weak
    floor of `none` (the vault's unanswerable questions reach between them)."""
    first = {"same_first": True}
    assert said(0.1, SAME_FIRST_STRENGTH, **first) == "high"
    below = SAME_FIRST_STRENGTH - 1e-6  # vectors below its floor: agreement is not enough
    assert said(0.4, below, **first) == "low"  # and the hit holds some of the question
    weak = min(NONE_STRENGTH, SAME_FIRST_STRENGTH) - 1e-6
    assert said(0.1, weak, **first) == "none"  # nor is the question in the hit: as before
    assert said(0.9, weak, **first, agree=False) == "low"
    assert said(0.1, 0.99, **first, languages_differ=True) == "low"  # across: cosines overlap
    assert said(0.1, None, **first) == "none"  # lexical only: never high
    assert said(0.1, 0.99) == "low"  # without it, as before
    assert said(0.1, 0.99, same_first=True, words=False) == "none"


def test_none_needs_a_hit_without_the_question_weak_and_not_standing_out_of_its_scope():
    weak = NONE_STRENGTH - 1e-6
    assert said(NONE_SHARE - 1e-6, weak, agree=False) == "none"
    assert said(NONE_SHARE, weak, agree=False) == "low"  # holds enough of the question
    assert said(0.1, NONE_STRENGTH, agree=False) == "low"  # the vectors are close enough
    # a hit standing out of its scope's tail is an answer, however low cosines run there
    assert said(0.1, weak, agree=False, vec_z=NONE_Z - 1e-6) == "none"
    assert said(0.1, weak, agree=False, vec_z=NONE_Z) == "low"
    assert said(0.1, weak, agree=False, vec_z=None) == "none"  # too few to tell: as before
    # across languages cosines overlap answer and no answer: never `none`, the warning asks
    # for the question in the notes' language
    assert said(0.1, 0.3, agree=False, languages_differ=True, vec_z=0.0) == "low"
    assert said(NONE_SHARE - 1e-6, None) == "none" and said(NONE_SHARE, None) == "low"


def test_z_is_how_far_the_first_stands_out_of_the_tail_in_its_deviations():
    many = [0.9] + [0.6] * (LIFT_FROM - 1) + [0.5, 0.3] * 6  # tail from rank 11: mean 0.4, sd 0.1
    assert signals(Legs(vec=[((0, i), c) for i, c in enumerate(many)]))["vec_z"] == (
        pytest.approx(5.0)
    )
    assert signals(Legs(vec=[((0, 0), 0.9), ((0, 1), 0.5), ((0, 2), 0.5)]))["vec_z"] is None
    flat = [0.9] + [0.5] * 5  # a tail without spread
    assert signals(Legs(vec=[((0, i), c) for i, c in enumerate(flat)]))["vec_z"] is None


def test_what_the_vector_leg_could_not_see_is_never_answered_none():
    weak = {"agree": False}
    assert said(0.1, 0.5, **weak, unseen=UNSEEN_SHARE) == "low"
    assert said(0.1, 0.5, **weak, unseen=UNSEEN_SHARE - 1e-6) == "none"
    assert said(0.1, None, unseen=UNSEEN_SHARE) == "low"
    assert confidence({k: v for k, v in BASE.items() if k != "unseen"} | {
        "top_share": 0.1, "vec_strength": 0.5, "agree": False}) == "none"  # fmt: skip


def test_a_query_without_a_word_is_none_whatever_else():
    assert said(1.0, 0.99, words=False) == "none"
    assert confidence({k: v for k, v in BASE.items() if k != "words"} | {
        "top_share": 1.0, "vec_strength": 0.99}) == "high"  # fmt: skip


def test_the_share_is_idf_weighted_over_the_question_stems_the_hit_holds():
    q = terms("routing table gateway")
    legs = Legs(terms=q, idf=[3.0, 1.0, 0.0])  # "gateway" is in every chunk: worth nothing
    assert signals(legs, "the routing of packets")["top_share"] == pytest.approx(0.75)
    assert signals(legs, "a table")["top_share"] == pytest.approx(0.25)
    assert signals(legs, "")["top_share"] == 0.0
    assert signals(Legs(terms=q, idf=[0.0, 0.0, 0.0]), "routing table")["top_share"] == 0.0
    assert signals(Legs(), "routing")["top_share"] == 0.0


def test_the_legs_agree_when_either_top_hit_is_in_the_others_top_five():
    k = [(0, i) for i in range(10)]
    lex = [(key, 10.0 - i) for i, key in enumerate(k)]  # k0 first, k9 last

    def agree(order: list[int]) -> bool:
        vec = [(k[i], 0.9 - 0.01 * r) for r, i in enumerate(order)]
        return signals(Legs(lex=lex, vec=vec), "x")["agree"]

    assert agree([0, 9, 8, 7, 6, 5, 4, 3, 2, 1])
    assert agree([9, 8, 7, 6, 0, 5, 4, 3, 2, 1])  # the lexical best at vector rank AGREE_TOP
    assert not agree([9, 8, 7, 6, 5, 0, 4, 3, 2, 1])  # one rank further: no
    assert agree([4, 9, 8, 7, 6, 5, 3, 2, 1, 0])  # the vector best at lexical rank AGREE_TOP
    assert not agree([5, 9, 8, 7, 6, 4, 3, 2, 1, 0])
    assert AGREE_TOP == 5
    assert not signals(Legs(lex=lex[:1]), "x")["agree"]  # one leg: no agreement
    assert not signals(Legs(vec=[(k[0], 1.0)]), "x")["agree"]


def test_same_first_is_both_legs_first_chunk_being_one():
    a, b = (0, 1), (1, 1)  # the same chunk id in two collections is two chunks

    def first(lex: list, vec: list) -> bool:
        return signals(Legs(lex=lex, vec=vec), "x")["same_first"]

    assert first([(a, 2.0), (b, 1.0)], [(a, 0.9), (b, 0.8)])
    assert not first([(a, 2.0), (b, 1.0)], [(b, 0.9), (a, 0.8)])
    assert not first([(b, 2.0)], [(a, 0.9)])
    assert not first([], [(a, 0.9)]) and not first([(a, 2.0)], [])


def test_vector_strength_is_the_best_cosine_plus_half_its_lift_over_the_tail():
    # more than twice LIFT_FROM candidates: the tail starts at rank LIFT_FROM + 1
    many = [0.9] + [0.5] * (LIFT_FROM - 1) + [0.3] * (LIFT_FROM + 5)
    legs = Legs(vec=[((0, i), s) for i, s in enumerate(many)])
    assert signals(legs)["vec_strength"] == pytest.approx(0.9 + 0.5 * (0.9 - 0.3))
    few = [0.9, 0.7, 0.5]  # the tail is every candidate after the first
    legs = Legs(vec=[((0, i), s) for i, s in enumerate(few)])
    assert signals(legs)["vec_strength"] == pytest.approx(0.9 + 0.5 * (0.9 - 0.6))
    assert signals(Legs(vec=[((0, 0), 0.8)]))["vec_strength"] == pytest.approx(0.8)
    assert signals(Legs())["vec_strength"] is None and signals(Legs())["vec_top"] is None
    assert signals(Legs(vec=[((0, 0), 0.8), ((0, 1), 0.1)]))["vec_top"] == 0.8


def test_the_languages_differ_when_the_question_is_in_another_language_than_the_hit():
    ru = "Маршрутизация по политикам (PBR)"
    assert signals(Legs(query_lang="en"), ru)["languages_differ"]
    assert not signals(Legs(query_lang="ru"), ru)["languages_differ"]
    assert signals(Legs(query_lang="ru"), "policy based routing")["languages_differ"]
    assert not signals(Legs(query_lang="en"), "PBR 802.1Q")["languages_differ"]  # no word says
    assert not signals(Legs(query_lang=None), ru)["languages_differ"]
    # any pair, whatever the scripts: German and English share an alphabet
    de = "Die Normannen eroberten England im Jahr 1066 unter Wilhelm dem Eroberer."
    assert signals(Legs(query_lang="en"), de)["languages_differ"]
    assert not signals(Legs(query_lang="de"), de)["languages_differ"]
    assert signals(Legs(query_lang="en"), "诺曼人于1066年征服了英格兰。")["languages_differ"]
    assert not signals(Legs(query_lang="en"), "")["languages_differ"]
    assert signals(Legs(coverage=0.3, unseen=0.2), "x")["coverage"] == 0.3
    assert signals(Legs(coverage=0.3, unseen=0.2), "x")["unseen"] == 0.2


def test_a_hit_is_in_the_language_its_words_are_not_the_script_most_of_its_letters_are():
    # a Russian note's commands hold more Latin letters than its Russian words
    ru = "Проверка: `/ip route print where routing-table=via-isp2` показывает маршруты таблицы"
    assert signals(Legs(query_lang="en"), ru)["languages_differ"]
    assert not signals(Legs(query_lang="ru"), ru)["languages_differ"]
    en = "The Russian word «маршрут» means a route: configure the routing table first."
    assert signals(Legs(query_lang="ru"), en)["languages_differ"]
    # punctuation and numbers are no language: no claim
    assert not signals(Legs(query_lang="ru"), "___ ``` [[ 42")["languages_differ"]
    assert not signals(Legs(query_lang="en"), "policy based routing")["languages_differ"]
    assert not signals(Legs(query_lang="ru"))["languages_differ"]  # no hit text: no claim


def test_the_tail_of_exactly_twice_lift_from_candidates_is_every_candidate_after_the_first():
    vec = [0.9] + [0.5] * (2 * LIFT_FROM - 1)  # 20 candidates: not more than twice LIFT_FROM
    legs = Legs(vec=[((0, i), s) for i, s in enumerate(vec)])
    assert signals(legs)["vec_strength"] == pytest.approx(0.9 + 0.5 * 0.4)
    vec[1:LIFT_FROM] = [0.8] * (LIFT_FROM - 1)  # the first ten differ from the rest now
    legs = Legs(vec=[((0, i), s) for i, s in enumerate(vec)])
    mean = (0.8 * (LIFT_FROM - 1) + 0.5 * LIFT_FROM) / (2 * LIFT_FROM - 1)
    assert signals(legs)["vec_strength"] == pytest.approx(0.9 + 0.5 * (0.9 - mean))


def test_small_idf_weights_still_make_a_share_and_no_terms_make_none():
    q = terms("routing table")
    legs = Legs(terms=q, idf=[0.5, 0.25])  # every weight below 1: still a share
    assert signals(legs, "routing")["top_share"] == pytest.approx(0.5 / 0.75)
    assert signals(Legs(terms=[], idf=[]), "routing")["top_share"] == 0.0
    assert signals(Legs(terms=q, idf=[0.5, 0.25]))["top_share"] == 0.0  # no text given: none


def test_a_search_without_a_word_says_none_from_its_own_signals():
    s = signals(Legs(lex=[((0, 1), 3.0)], vec=[((0, 1), 0.95)], words=False), "x")
    assert s["words"] is False and confidence(s) == "none"
    assert signals(Legs(), "x")["words"] is True


def test_a_question_of_one_letter_words_is_never_high():
    """`x` names nothing: the first hit holding the letter holds all of the question, and the
    legs may agree on it, but that is no answer."""
    assert said(1.0, 0.95, named=False) == "low"
    assert said(1.0, 0.95, named=False, same_first=True) == "low"
    assert said(1.0, 0.95) == "high"
    legs = Legs(lex=[((0, 1), 3.0)], vec=[((0, 1), 0.9)], terms=terms("x"), idf=[1.0])
    assert signals(legs, "the width x height")["named"] is False
    legs = Legs(lex=[((0, 1), 3.0)], vec=[((0, 1), 0.9)], terms=terms("ip x"), idf=[1.0, 1.0])
    assert signals(legs, "ip x")["named"] is True
