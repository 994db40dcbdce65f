"""Fitting hits into an agent's token budget.

`max_tokens` on a search keeps as many hits as fit, best first. What a hit costs is its header
(`path:line heading`) plus its text, counted with the embedder's own tokenizer (the model's
tokens are close to what chat models count; without a model, a conservative estimate). The hit
that does not fit whole is cut at a sentence border (at a word border only when its first
sentence alone is too long); the hits after it are dropped. The result says how many were cut
and dropped, and the total never exceeds the budget.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from .results import Budget, Hit

MIN_PIECE = 24  # tokens: a cut smaller than this is no use to a reader; drop the hit instead
ELLIPSIS = " …"
_SENTENCE_END = re.compile(r"(?<=[.!?…。;:])\s+|\n+")


def hit_cost_text(hit: Hit, text: str | None = None) -> str:
    head = f"{hit.path}:{hit.line} {hit.heading}".strip()
    return f"{head}\n{hit.text if text is None else text}"


def _pieces(text: str) -> list[str]:
    """The text's prefixes that end at a sentence border, shortest first."""
    ends = [m.start() for m in _SENTENCE_END.finditer(text)] + [len(text)]
    out: list[str] = []
    for end in ends:
        piece = text[:end].rstrip()
        if piece and (not out or piece != out[-1]):
            out.append(piece)
    return out


def _cut(hit: Hit, room: int, count: Callable[[str], int]) -> str | None:
    """The longest sentence-bordered prefix of the hit's text that fits in `room` tokens."""
    best = None
    pieces = _pieces(hit.text)
    lo, hi = 0, len(pieces) - 1
    while lo <= hi:  # costs grow with the prefix: binary search
        mid = (lo + hi) // 2
        if count(hit_cost_text(hit, pieces[mid] + ELLIPSIS)) <= room:
            best, lo = pieces[mid], mid + 1
        else:
            hi = mid - 1
    if best is not None:
        return best + ELLIPSIS
    words = hit.text.split(" ")
    lo, hi, best_n = 1, len(words), 0
    while lo <= hi:
        mid = (lo + hi) // 2
        if count(hit_cost_text(hit, " ".join(words[:mid]) + ELLIPSIS)) <= room:
            best_n, lo = mid, mid + 1
        else:
            hi = mid - 1
    return " ".join(words[:best_n]) + ELLIPSIS if best_n else None


def fit(hits: list[Hit], max_tokens: int, count: Callable[[str], int]) -> tuple[list[Hit], Budget]:
    kept: list[Hit] = []
    used = cut = 0
    for i, hit in enumerate(hits):
        cost = count(hit_cost_text(hit))
        if used + cost <= max_tokens:
            kept.append(hit)
            used += cost
            continue
        room = max_tokens - used
        text = _cut(hit, room, count) if room >= MIN_PIECE else None
        if text is not None:
            kept.append(replace(hit, text=text))
            used += count(hit_cost_text(hit, text))
            cut = 1
        dropped = len(hits) - i - (1 if text is not None else 0)
        return kept, Budget(max_tokens, used, dropped, cut)
    return kept, Budget(max_tokens, used, 0, 0)


def fit_route(
    collections: list[Any], max_tokens: int, count: Callable[[str], int]
) -> tuple[list[Any], Budget]:
    """A route's collections (route.Candidate) within `max_tokens`: each one's name, path and
    description while they fit, with as many of its best hits as fit after them; the
    collections that do not fit are dropped (a route's order is its answer)."""
    kept, used, dropped, cut = [], 0, 0, 0
    for i, c in enumerate(collections):
        head = count(f"{c.path} {c.name} {c.description}")
        if used + head > max_tokens:
            dropped = len(collections) - i
            break
        used += head
        shown = []
        for h in c.evidence:
            cost = count(f"{h.path}:{h.line} {h.heading}\n{h.text}")
            if used + cost > max_tokens:
                cut = 1
                break
            shown.append(h)
            used += cost
        kept.append(replace(c, evidence=shown))
    return kept, Budget(max_tokens, used, dropped, cut)


def fit_lines(lines: list[str], max_tokens: int, count: Callable[[str], int]) -> int:
    """How many of `lines`, from the first, fit in `max_tokens` (at least one, cut or not: a
    read that returns nothing helps no one)."""
    lo, hi, best = 1, len(lines), 1
    while lo <= hi:  # costs grow with the prefix: binary search
        mid = (lo + hi) // 2
        if count("\n".join(lines[:mid])) <= max_tokens:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best
