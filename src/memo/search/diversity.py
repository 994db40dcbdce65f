"""Diversity: one long note must not take every slot of a result set while others match.

Measured (docs/benchmarks.md, "Diversity"): capping a note at max(3, ceil(k/2)) hits, and holding
a chunk back only for a comparable one of another note (>= DIVERSITY_RATIO of its score), never
cost an answer on the dev tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)  # a candidate's key

DIVERSITY_MIN_K = 5  # diversity is on by default from this k
DIVERSITY_POOL = 4  # candidates read per slot when capping hits per note
DIVERSITY_RATIO = 0.9  # another note's chunk must score this much of the capped one's score


def notes_cap(k: int) -> int:
    """How many of k hits one note may hold while other notes match (k=5: 3, k=8: 4)."""
    return max(3, -(-k // 2))


def cap_per_note(
    order: Sequence[K],
    k: int,
    cap: int,
    note_of: Callable[[K], Hashable],
    score_of: Callable[[K], float] | None = None,
    ratio: float = 0.0,
) -> list[K]:
    """The first k keys with at most `cap` per note while other notes match comparably.

    A key over its note's cap is held back only when a key of another (under-cap) note further
    down scores at least `ratio` times as much: a clearly better chunk of the same note stays.
    Held-back keys fill whatever is left, in rank order, so k is never starved.
    """
    rank = {key: i for i, key in enumerate(order)}
    taken: list[K] = []
    held: list[K] = []
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
    order: Sequence[K],
    i: int,
    cap: int,
    per: dict[Hashable, int],
    note_of: Callable[[K], Hashable],
    score_of: Callable[[K], float] | None,
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
