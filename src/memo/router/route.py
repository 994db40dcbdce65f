"""Routing: which collections should a question be searched in.

The answer's shape follows the number of collections the prefix covers (or `strategy=`): `flat`
(up to FLAT_MAX) every collection, the best first; `tree` (up to TREE_MAX) the top k under the
prefix, with its sub-folders and their collection counts; `summary` (beyond) the top k. The shape
is decided in library/evidence.py; this module ranks (`summary_rank`) with one score for all
three: the lexical leg (lexical_leg.py) and the vector leg (vector_leg.py), each cut at DEPTH,
fused by plain RRF (search/fusion.py, k = SUMMARY_FUSION_K). A prefix is a bisected range of the
path-sorted registry, so it costs nothing at any size. Why content: docs/design.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np

from ..outputs import EMPTY, NONE, Published, doc
from ..registry_tools.entry import Entry
from ..registry_tools.registry import Registry
from ..search.fusion import rrf
from ..search.results import BUDGET, Budget
from .lexical_leg import lexical_leg
from .vector_leg import vector_leg

FLAT_MAX = 50
TREE_MAX = 5_000
# the k of the plain RRF of the summary's two legs: k=20 or 120, and a 0.5x/2x weight on
# `body`, moved top-5 by < 0.005
SUMMARY_FUSION_K = 60
CONTENT = True  # rank by what collections hold too (False: descriptions only; bench/router.py)


@dataclass(frozen=True, slots=True)
class Evidence(Published):
    """One of a collection's best hits for the question, short."""

    path: str = doc("Note path relative to the library root.")
    line: int = doc("1-based line where the hit's section starts.")
    heading: str = doc("The section's heading path.")
    text: str = doc("A short excerpt of the hit.")


@dataclass(frozen=True, slots=True)
class Candidate(Published):
    """One collection a route names."""

    name: str = doc("The collection's name.")
    path: str = doc("Pass this as memo_search's path.")  # relative to the library root
    description: str = doc("What its _meta.yaml says it holds.")
    tags: tuple[str, ...] = doc("Its _meta.yaml tags.")
    score: float = doc("Higher ranks first.", digits=6)
    # the summary's lexical leg (description, content stems) and vector leg (description,
    # centroid)
    lex_rank: int | None = doc("Its rank by the summary's words (null: unranked).", default=None)
    vec_rank: int | None = doc("Its rank by the summary's meaning (null: unranked).", default=None)
    evidence: list[Evidence] = doc("The collection's best hits, best first.", factory=list)
    languages: dict[str, float] = doc(
        "The share of the collection's chunks in each language ('ru': 0.93): write phrasings "
        "and a likely answer in its main one.",
        factory=dict,
    )


@dataclass(frozen=True, slots=True)
class Folder(Published):
    """A folder below a route's prefix (the tree strategy's)."""

    prefix: str = doc("Pass it as the route's prefix to narrow it ('work/*': more below).")
    collections: int = doc("The collections it holds.")


@dataclass(slots=True, kw_only=True)
class RouteResult(Published):
    """A route's answer: the collections that answer the question, best first."""

    query: str = doc("The question as routed.")
    strategy: str = doc("flat, tree or summary: the answer's shape.")
    took_ms: float = doc("Milliseconds the route took.", default=0.0, digits=2)
    prefix: str | None = doc("The folder the collections were taken from.", default=None)
    total: int = doc("Collections the prefix covers.", default=0)
    collections: list[Candidate] = doc("The collections, best first.")
    tree: list[Folder] = doc(
        "The tree strategy's sub-folders below the prefix.", factory=list, omit=EMPTY
    )
    warnings: list[str] = doc(factory=list, omit=EMPTY)
    budget: Budget | None = doc(BUDGET, default=None, omit=NONE)  # what was left out


def strategy_for(requested: str, count: int) -> str:
    """The answer's shape: the one asked for, or by the number of collections (`auto`)."""
    if requested != "auto":
        return requested
    if count <= FLAT_MAX:
        return "flat"
    if count <= TREE_MAX:
        return "tree"
    return "summary"


def summary_rank(
    reg: Registry,
    query: str,
    mask: np.ndarray,
    limit: int | None,
    query_vector: Callable[[str], tuple[np.ndarray | None, str]] | None = None,
) -> tuple[list[Candidate], list[str]]:
    """The collections of `mask` ranked by their summaries (see the module docstring), with the
    vector leg's warnings: the best `limit`, or (None) every one, those neither leg matched
    following by path."""
    total = int(mask.sum())
    if not total:
        return [], []
    lex = lexical_leg(reg, query, mask, total, CONTENT)
    vec, warnings = vector_leg(reg, query, mask, query_vector, CONTENT)
    # Each leg is a ranked list of positions: its rank is its score (no ties to share).
    fused = rrf([(_ranked(lex), 1.0), (_ranked(vec), 1.0)], k=SUMMARY_FUSION_K)
    scores = cast(dict[int, float], fused)  # the legs' keys: registry positions
    lex_rank = {pos: r for r, pos in enumerate(lex, start=1)}
    vec_rank = {pos: r for r, pos in enumerate(vec, start=1)}
    order = sorted(scores, key=lambda p: (-scores[p], reg.entries[p].path))
    if limit is None:
        order += [int(p) for p in np.flatnonzero(mask) if int(p) not in scores]
    else:
        order = order[:limit]
    out = [
        _candidate(reg.entries[p], scores.get(p, 0.0), lex_rank.get(p), vec_rank.get(p))
        for p in order
    ]
    return out, list(dict.fromkeys(warnings))


def _ranked(positions: list[int]) -> list[tuple[int, float]]:
    return [(p, -float(i)) for i, p in enumerate(positions)]


def _candidate(e: Entry, score: float, lex: int | None, vec: int | None) -> Candidate:
    return Candidate(
        e.name, e.path, e.description, e.tags, score, lex, vec, [], e.language_shares()
    )


def subtree(reg: Registry, mask: np.ndarray, prefix: str | None) -> list[Folder]:
    """The next level of folders below the prefix, with how many collections each holds."""
    base = (prefix or "").rstrip("*").strip("/")
    depth = len(base.split("/")) if base else 0
    counts: dict[str, int] = {}
    for p in np.flatnonzero(mask):
        parts = reg.entries[p].path.split("/")
        key = "/".join(parts[: depth + 1])
        key = key + "/*" if len(parts) > depth + 1 else key
        counts[key] = counts.get(key, 0) + 1
    return [Folder(k, v) for k, v in sorted(counts.items())][:200]
