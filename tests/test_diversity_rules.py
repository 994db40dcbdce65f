"""The diversity rule (search/diversity.py) as a caller sees it (issue 32): one note holds at
most `cap` of k hits while another note matches comparably; a clearly better chunk of the same
note stays; k is never starved. Keys here are (note, score) pairs, best first."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memo.search.diversity import DIVERSITY_MIN_K, DIVERSITY_RATIO, cap_per_note, notes_cap

from .conftest import REPO


def note(key: tuple[str, float]) -> str:
    return key[0]


def score(key: tuple[str, float]) -> float:
    return key[1]


def pick(order, k: int, cap: int, ratio: float = DIVERSITY_RATIO, scored: bool = True):
    return cap_per_note(order, k, cap, note, score if scored else None, ratio)


def test_notes_cap_is_half_of_k_rounded_up_and_at_least_three() -> None:
    assert [notes_cap(k) for k in (1, 3, 5, 6, 7, 8, 10)] == [3, 3, 3, 3, 4, 4, 5]


def test_a_long_note_gives_up_slots_to_a_comparable_other_note() -> None:
    order = [("a", 1.0), ("a", 0.99), ("a", 0.98), ("b", 0.95), ("b", 0.94)]
    assert pick(order, 3, 2) == [("a", 1.0), ("a", 0.99), ("b", 0.95)]


def test_a_clearly_better_chunk_of_the_same_note_stays() -> None:
    order = [("a", 1.0), ("a", 0.99), ("a", 0.98), ("b", 0.5)]
    assert pick(order, 3, 2) == order[:3]  # b scores below 0.9 x 0.98


def test_the_ratio_is_a_floor_that_a_rival_may_meet_exactly() -> None:
    order = [("a", 1.0), ("a", 1.0), ("b", 0.5)]
    assert pick(order, 2, 1, ratio=0.5) == [("a", 1.0), ("b", 0.5)]
    assert pick(order, 2, 1, ratio=0.51) == [("a", 1.0), ("a", 1.0)]


def test_without_scores_any_other_note_is_a_rival() -> None:
    order = [("a", 1.0), ("a", 0.9), ("a", 0.8), ("b", 0.01)]
    assert pick(order, 2, 1, scored=False) == [("a", 1.0), ("b", 0.01)]


def test_too_few_other_notes_the_rest_of_the_strong_note_comes_back_in_order() -> None:
    order = [("a", 1.0), ("a", 0.99), ("b", 0.98), ("a", 0.97), ("a", 0.96)]
    assert pick(order, 4, 1) == [("a", 1.0), ("a", 0.99), ("b", 0.98), ("a", 0.97)]


def test_a_held_back_chunk_returns_before_a_lower_one_of_its_note() -> None:
    # a's second chunk is held for b; once b is taken and c (under cap) is far below, a's
    # next slot goes to its best held-back chunk, not to the lower one met now
    order = [("a", 1.0), ("a", 0.99), ("b", 0.95), ("a", 0.5), ("c", 0.1)]
    assert pick(order, 3, 1) == [("a", 1.0), ("a", 0.99), ("b", 0.95)]


def test_fewer_keys_than_k_returns_them_all() -> None:
    order = [("a", 1.0), ("a", 0.9)]
    assert pick(order, 5, 1) == order
    assert pick([], 5, 1) == []


keys = st.lists(st.tuples(st.sampled_from("abcd"), st.floats(0, 1)), max_size=12).map(
    lambda ks: [(n, s, i) for i, (n, s) in enumerate(sorted(ks, key=lambda k: -k[1]))]
)  # best first; the index makes each key one chunk


@given(keys, st.integers(1, 8), st.integers(1, 4), st.sampled_from([0.0, 0.5, 0.9, 1.0]))
def test_invariants(order, k: int, cap: int, ratio: float) -> None:
    out = pick(order, k, cap, ratio)
    assert len(out) == min(k, len(order))  # never starved
    idx = [order.index(x) for x in out]
    assert idx == sorted(idx)  # in rank order
    assert len(set(out)) == len(out)  # no chunk twice
    best = order[: min(k, len(order))]
    if best:
        assert out[0] == order[0]  # the best hit always stays
    if cap >= k or len({note(x) for x in order}) <= 1:
        assert out == order[:k]  # the cap never bites: the plain top k


def test_a_note_already_at_its_cap_is_no_rival() -> None:
    order = [("a", 1.0), ("b", 0.99), ("a", 0.98), ("b", 0.97)]
    assert pick(order, 3, 1) == [("a", 1.0), ("b", 0.99), ("a", 0.98)]


def test_the_floor_is_the_ratio_times_the_capped_chunks_score() -> None:
    assert pick([("a", 0.5), ("a", 0.5), ("b", 0.46)], 2, 1) == [("a", 0.5), ("b", 0.46)]
    assert pick([("a", 0.5), ("a", 0.5), ("b", 0.44)], 2, 1) == [("a", 0.5), ("a", 0.5)]


def test_without_a_ratio_any_lower_chunk_of_another_note_is_a_rival() -> None:
    order = [("a", 1.0), ("a", 0.9), ("b", 0.1)]
    assert cap_per_note(order, 2, 1, note, score) == [("a", 1.0), ("b", 0.1)]


def test_held_back_chunks_fill_what_is_left_best_first_and_no_more() -> None:
    # a's 2nd and 3rd chunks are held for b; b is taken; one slot is left: a's better one
    order = [("a", 1.0), ("a", 0.99), ("a", 0.98), ("b", 0.97)]
    assert pick(order, 3, 1) == [("a", 1.0), ("a", 0.99), ("b", 0.97)]


def test_the_readme_says_the_rule_that_runs():
    """Issue 42: the README promised a hard cap of ⌈k/2⌉ a note; what runs holds a chunk back
    only for another note's scoring DIVERSITY_RATIO of it, and never a top-3 chunk of a leg."""
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    said = readme.split("- Diversity (default for k ≥ 5):", 1)[1].split("turns it off")[0]
    assert f"k ≥ {DIVERSITY_MIN_K}" in readme and "⌈k/2⌉ (min 3)" in said
    assert [notes_cap(k) for k in (5, 6, 8, 10)] == [3, 3, 4, 5]
    assert f"at least {DIVERSITY_RATIO} of it" in said and "top 3" in said
