"""Routing by evidence: a collection ranks by what its notes answer, not only by its summary.

A route runs the search itself (federated, both legs fused) over the candidate collections and
ranks them by their best chunk; collections the search did not reach follow in the summary
router's order, except that a summary's first choice holding no note yet goes first when the
search found nothing worth reading (`none`). Up to SHORTLIST collections every one is searched,
beyond that the summary router's best SHORTLIST, so a route costs about the same at any size.
Each routed collection carries its best hits. The answer's shape (flat, tree, summary) is
decided here from the collections the prefix covers. No catch-up: routing reads the indexes as
they are. Why and the figures: docs/design.md, "Routing by evidence".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..collection.collection import Collection
from ..collection.filters import Filter
from ..requests import RouteRequest
from ..router.route import Candidate, Evidence, RouteResult, strategy_for, subtree, summary_rank
from ..search.fusion import CANDIDATES
from ..search.legs import QueryVectors, Scope, Words
from ..search.ranking import Ranking, rank
from ..search.results import cut_text
from .collections import Collections
from .targets import languages

# up to this many collections every one is searched; beyond, the summary router's best this many
SHORTLIST = 100
SHOWN_SCORE_OFFSET = 10  # a routed collection's score: 1 / (SHOWN_SCORE_OFFSET + place)
SHOWN = 2  # best hits shown per routed collection
EXCERPT = 240  # characters of each hit's text
ROUTED_BREADTH = 5  # search(route=K) ranks the summary router's best 5·K collections


@dataclass(slots=True)
class Routed:
    """A route's answer and the ranking it was read from (None: nothing was searched)."""

    result: RouteResult
    ranking: Ranking | None
    order: list[str]  # every candidate collection's path, best first


def _union(ranked: list[Candidate], more: list[list[Candidate]], limit: int) -> list[Candidate]:
    """Each phrasing's shortlist joined: every collection at the best place any phrasing gave
    it (the question first among equals), the first `limit`."""
    best: dict[str, tuple[int, int, Candidate]] = {}
    for n, listed in enumerate([ranked, *more]):
        for place, c in enumerate(listed):
            if c.path not in best or (place, n) < best[c.path][:2]:
                best[c.path] = (place, n, c)
    return [c for _, _, c in sorted(best.values(), key=lambda x: x[:2])][:limit]


def route_by_evidence(
    colls: Collections,
    vectors: QueryVectors,
    req: RouteRequest,
    breadth: int | None = None,
    mode: str = "hybrid",
    depth: int = CANDIDATES,
    flt: Filter | None = None,
    ready: Callable[[list[Collection]], None] | None = None,
) -> Routed:
    """Ranked collections for a question, each with its best hits (see the module docstring).

    `breadth`: how many collections the evidence search covers at most (all of them up to
    that many; beyond, the summary router's best; default SHORTLIST, read at the call, so
    bench/routing.py can size it). `ready` is handed those collections before they are ranked
    (a search catches them up there: a route only reads).
    """
    breadth = SHORTLIST if breadth is None else breadth
    reg = colls.registry()
    mask = reg.mask(req.prefix) & reg.ok_mask()
    total = int(mask.sum())
    strategy = strategy_for(req.strategy, total)
    # every collection in summary order (all of them are searched, or `flat` lists them all),
    # else the summary's best `breadth`
    limit = None if total <= breadth or strategy == "flat" else breadth
    ranked, warnings = summary_rank(reg, req.query, mask, limit, vectors.get)
    if total == 0:
        where = f" under {req.prefix}" if req.prefix else ""
        warnings.insert(0, f"no collection{where}: a collection is a folder holding _meta.yaml")
    if req.words.also and limit is not None:
        more = [summary_rank(reg, q, mask, limit, vectors.get)[0] for q in req.words.also]
        ranked = _union(ranked, more, limit)
    candidates = [c.path for c in ranked]
    # Only collections that have an index: a route never creates one (it only reads).
    searched = [colls.by_path(p) for p in candidates[:breadth]]
    if ready is not None:
        ready(searched)
    else:
        searched = [c for c in searched if c.index_path.exists()]
    ranking = None
    if searched and req.query.strip():
        scope = Scope(".", [(c, "") for c in searched], languages(colls, searched))
        ranking = rank(scope, Words.of(req), mode, vectors, depth, flt)
    order = _order(candidates, ranking, reg.entry)
    shown = _shown(ranking) if ranking is not None else {}
    by_path = {c.path: c for c in ranked}
    out = []
    for place, path in enumerate(order if strategy == "flat" else order[: req.k]):
        c = by_path[path]
        # `flat` lists every collection (names and descriptions at a glance); the evidence is
        # for the k the caller asked about, so a 50-collection answer stays short.
        hits = shown.get(path, []) if place < req.k else []
        score = 1.0 / (SHOWN_SCORE_OFFSET + place + 1)  # RRF-shaped: it falls with the place
        out.append(replace(c, score=score, evidence=hits))
    res = RouteResult(
        query=req.query,
        strategy=strategy,
        collections=out,
        prefix=req.prefix,
        total=total,
        warnings=warnings,
    )
    if ranking is not None:
        res.warnings += [w for w in ranking.warnings if w not in res.warnings]
    if strategy == "tree":
        res.tree = subtree(reg, mask, req.prefix)
    return Routed(res, ranking, order)


def _order(candidates: list[str], ranking: Ranking | None, entry: Callable) -> list[str]:
    """The collections the search reached, by their best chunk; then the rest in summary
    order. When the search finds nothing worth reading (confidence `none`) and the summary's
    first choice holds no note yet (a collection just made for the topic), that one goes
    first: the best chunks elsewhere say nothing against it."""
    reached: list[str] = []
    if ranking is not None:
        reached = [ranking.scope.parts[ci][0].rel for ci, _ in ranking.by_collection(1)]
    seen = set(reached)
    order = reached + [c for c in candidates if c not in seen]
    first = entry(candidates[0]) if candidates else None
    answered = ranking is not None and bool(ranking.ranked) and ranking.confidence() != "none"
    if not answered and first is not None and not first.chunks and order:
        order = [first.path] + [c for c in order if c != first.path]
    return order


def _shown(ranking: Ranking) -> dict[str, list[Evidence]]:
    """Each reached collection's best SHOWN hits, short."""
    best = ranking.by_collection(SHOWN)
    rows = ranking.reader.rows(k for _, keys in best for k in keys)
    out = {}
    for ci, keys in best:
        coll = ranking.scope.parts[ci][0]
        out[coll.rel] = [
            Evidence(
                coll.root_path(rows[k].path),
                rows[k].line,
                rows[k].heading,
                cut_text(" ".join(rows[k].text.split()), EXCERPT),
            )
            for k in keys
            if k in rows
        ]
    return out


__all__ = ["ROUTED_BREADTH", "SHORTLIST", "Routed", "route_by_evidence"]
