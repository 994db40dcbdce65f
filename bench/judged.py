"""How a benchmark judges a list of hits against a qrel (one judged section of a note).

    rank_of(hits, q)   the rank of the first hit inside the section (None: not in the list)
    scores(ranks)      R@1, R@5 and MRR over many questions' ranks

Imported by the benchmarks as a sibling module (bench/ is on sys.path when one runs as a script).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def rank_of(hits: Sequence[Any], q: dict[str, Any], k: int | None = None) -> int | None:
    """1-based rank of the first of the first `k` hits (all when None) whose path is the
    qrel's note and whose line lies in its section."""
    for rank, h in enumerate(hits[:k] if k else hits, start=1):
        if h.path == q["path"] and q["line_start"] <= h.line <= q["line_end"]:
            return rank
    return None


def scores(ranks: Iterable[int | None]) -> dict[str, float]:
    """{"r1", "r5", "mrr"} over the ranks (None: the answer was not found)."""
    ranks = list(ranks)
    n = max(1, len(ranks))
    return {
        "r1": sum(r == 1 for r in ranks) / n,
        "r5": sum(r is not None and r <= 5 for r in ranks) / n,
        "mrr": sum(1 / r for r in ranks if r) / n,
    }
