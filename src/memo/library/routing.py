"""Routing by evidence: a collection ranks by what its notes answer, not only by its summary.

The router's summary (router/: description, headings, top content stems, chunk centroid) blurs
a collection of unrelated notes into one vector, and its description may be in another
language than the question: routed that way, the agent's flow (route, then search the first
collection) lost 10-21 points of recall@5 against searching everything (issue 16).

So a route runs the search itself over the candidate collections (the global-statistics
federated search, both legs fused) and ranks them by their best chunk: the collections the
search reached come first, in the order of their best chunk; the summary router's order ranks
the rest. When the search finds nothing worth reading (confidence `none`) and the summary's
first choice holds no note yet (a collection just made for the topic), that one goes first.
Up to EVIDENCE_ALL collections every one is searched; beyond, the summary router shortlists
SHORTLIST of them first, so a route costs about the same at 200 collections as at 100,000 (a
federated search costs ~0.4 ms per small collection: 1,000 of them ~400 ms, a shortlist of 100
~50 ms; on the 1,000-collection library the shortlist of 100 kept the exhaustive first choice
for every question, bench/routing.py --thousand-only). Each routed collection
carries its best hits, so an agent often has its answer without the second call (under
`flat`, which lists every collection, only the first k carry them).

Measured on the dev libraries (bench/routing.py --study), every rule that let the summary or a
collection's further chunks move the first place lost: route top-1 on distract ru>ru is 0.97
by the best chunk alone, 0.95 with the summary's rank fused in at half weight, 0.88 summing
each collection's chunks in the top 5 (big documentation collections hold many near misses);
letting the summary decide whenever the search said `none` cost 1-3 points of top-1.

No catch-up here: routing reads the indexes as they are; the search that follows catches up.
"""

from __future__ import annotations

from typing import Any

from ..collection.chunker import passage_text
from ..requests import RouteRequest
from ..router.route import Candidate, RouteResult, pick_strategy, route_in, subtree
from ..search.confidence import confidence, signals
from ..search.fusion import CANDIDATES, fuse
from ..search.results import cut_text
from . import federated
from .collections import Collections
from .targets import Scope

SHORTLIST = 100  # the summary router's best this many are searched, beyond EVIDENCE_ALL
EVIDENCE_ALL = SHORTLIST  # up to this many collections, the evidence search covers every one
RRF_K = 10  # shapes the score shown: 1 / (RRF_K + place)
SHOWN = 2  # best hits shown per routed collection
EXCERPT = 240  # characters of each hit's text


def route_by_evidence(
    colls: Collections,
    vectors: federated.QueryVectors,
    req: RouteRequest,
    warnings: list[str],
) -> RouteResult:
    """Ranked collections for a question, each with its best hits (see the module docstring)."""
    reg = colls.registry()
    mask = reg.mask(req.prefix) & reg.ok_mask()
    total = int(mask.sum())
    strategy = pick_strategy(total) if req.strategy == "auto" else req.strategy
    if total <= EVIDENCE_ALL or strategy == "flat":  # every collection, in summary order
        ask = RouteRequest(req.query, max(total, 1), req.prefix, "flat")
    else:
        ask = RouteRequest(req.query, SHORTLIST, req.prefix, "hybrid")
    summary = route_in(reg, ask, lambda q: vectors.get(q, warnings))
    candidates = [c.path for c in summary.collections]
    searched = candidates if total <= EVIDENCE_ALL else candidates[:SHORTLIST]
    found, answered = _evidence(colls, searched, req.query, vectors, warnings)
    order = _fused(candidates, found)
    first = reg.entry(candidates[0]) if candidates else None
    if not answered and first is not None and not first.chunks:
        # No note answers, and the summary's first choice holds no note yet (a collection just
        # made for this topic): the best chunks elsewhere say nothing against it.
        order = [(first.path, order[0][1])] + [(c, s) for c, s in order if c != first.path]
    if strategy != "flat":
        order = order[: req.k]
    by_path = {c.path: c for c in summary.collections}
    out = []
    for place, (path, score) in enumerate(order):
        c = by_path[path]
        # `flat` lists every collection (names and descriptions at a glance); the evidence is
        # for the k the caller asked about, so a 50-collection answer stays short.
        hits = found.get(path, {}).get("hits", []) if place < req.k else []
        out.append(
            Candidate(c.name, path, c.description, c.tags, score, c.lex_rank, c.vec_rank, hits)
        )
    res = RouteResult(
        req.query, strategy, out, prefix=req.prefix, total=total, warnings=summary.warnings
    )
    if strategy == "tree":
        res.tree = subtree(reg, mask, req.prefix)
    return res


def _evidence(
    colls: Collections,
    paths: list[str],
    query: str,
    vectors: federated.QueryVectors,
    warnings: list[str],
) -> tuple[dict[str, dict[str, Any]], bool]:
    """Per collection path: the rank of its best chunk in one fused search over all of them
    ('rank'), and its best SHOWN hits ('hits'); and whether that search found anything worth
    reading (its confidence is not `none`)."""
    if not paths or not query.strip():
        return {}, False
    # Only collections that have an index: a route never creates one (it only reads).
    parts = [(c, "") for c in (colls.by_path(p) for p in paths) if c.index_path.exists()]
    if not parts:
        return {}, False
    scope = Scope(".", parts)
    legs = federated.gather_legs(scope, query, "hybrid", CANDIDATES, vectors, warnings)
    scores = fuse(legs, "hybrid")
    ranked = sorted(scores, key=lambda key: -scores[key])
    if not ranked:
        return {}, False
    best: dict[int, list[Any]] = {}
    for key in ranked:
        keys = best.setdefault(key[0], [])
        if len(keys) < SHOWN:
            keys.append(key)
    # one read for every shown row; the top chunk is among them (its collection's first)
    rows = federated.chunk_rows(scope, [k for ks in best.values() for k in ks], warnings)
    top = rows.get(ranked[0])
    top_text = passage_text(top.heading, top.text) if top else ""
    answered = confidence(signals(legs, top_text)) != "none"
    out: dict[str, dict[str, Any]] = {}
    for rank, ci in enumerate(best, start=1):  # dicts keep the order of first appearance
        coll = scope.parts[ci][0]
        hits = [_shown(coll.root_path(rows[k].path), rows[k]) for k in best[ci] if k in rows]
        out[coll.rel] = {"rank": rank, "score": scores[best[ci][0]], "hits": hits}
    return out, answered


def _shown(path: str, row: Any) -> dict[str, Any]:
    text = " ".join(row.text.split())
    return {"path": path, "line": row.line, "heading": row.heading, "text": cut_text(text, EXCERPT)}


def _fused(candidates: list[str], found: dict[str, dict[str, Any]]) -> list[tuple[str, float]]:
    """The collections the search reached, by their best chunk; then the rest in summary
    order. The score shown is RRF-shaped (1 / (RRF_K + place)) so it falls with the place."""
    order = sorted(found, key=lambda c: found[c]["rank"])
    order += [c for c in candidates if c not in found]
    return [(c, 1.0 / (RRF_K + place)) for place, c in enumerate(order, start=1)]


__all__ = ["EVIDENCE_ALL", "SHORTLIST", "route_by_evidence"]
