"""Routing: which collections should a question be searched in.

The router reads the registry (registry_tools/): one row per collection with an FTS5 index over
the stems of its name, path, description, tags and headings (column `lex`) and of its most
frequent content stems (column `body`), one e5 vector per description and one centroid of its
chunk vectors per indexed collection. The
answer's shape follows the library's size (DESIGN "Routing"), chosen automatically from the
number of collections the prefix covers, or forced with `strategy=`:

- `flat` (up to FLAT_MAX): the whole list; every collection is returned, the best first, so an
  agent sees all names and descriptions at once.
- `tree` (up to TREE_MAX): the prefix filter (`work/*`) narrows the name tree, the description
  search ranks what is left, top k; the answer also lists the sub-folders below the prefix with
  their collection counts, so the agent can narrow further.
- `hybrid` (beyond): BM25 over both FTS columns and cosine (the better of the description
  vector and the content centroid), each leg cut at DEPTH, fused by RRF, top k. From MERGE_MIN
  collections the two vectors are folded into one per collection (merge_vectors): scoring two
  150 MB matrices per question was most of a route at 100,000.

Why content: a description is one line somebody wrote; questions ask about details (names,
numbers, events) that only the notes hold. On the xquad-dev question set (bench/router.py) the
description+headings router put the right collection in the top 5 for 0.78 of the questions;
with the content stems and centroids, 0.99 (docs/benchmarks.md, "Routing").

All three rank with the same fused score (a flat list in name order would waste the signal).
A prefix is a range of the path-sorted registry (a bisect), so it costs nothing at any size.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..collection.lexical import query_terms
from ..errors import MemoError
from ..registry_tools.registry import Entry, Registry

FLAT_MAX = 50
TREE_MAX = 5_000
STRATEGIES = ("auto", "flat", "tree", "hybrid")
RRF_K = 60  # plain RRF: k=20 or 120 and a 0.5x/2x weight on `body` moved top-5 by < 0.005
CONTENT = True  # use what collections hold (body stems, centroids); False: descriptions only
DEPTH = 200  # candidates per leg before fusion
MAX_ROUTE_K = 1_000
# A query stem found in more router rows than this is left out of the lexical leg (unless all
# are): its IDF is small, and its postings (every collection's content has "year") would make
# BM25 score most of 100,000 rows per query. 2% of the rows, never fewer than 1,000.
COMMON_ROWS = 1_000
COMMON_SHARE = 0.02
DF_CACHE = 100_000  # stems whose row count is remembered
MERGE_MIN = 20_000  # from this many collections, one merged vector each (see merge_vectors)


class RouteError(MemoError):
    hint = f"Use a strategy among {', '.join(STRATEGIES)} and k between 1 and {MAX_ROUTE_K}."


@dataclass(frozen=True, slots=True)
class Candidate:
    name: str
    path: str  # relative to the library root: pass it to search as is
    description: str
    tags: tuple[str, ...]
    score: float
    lex_rank: int | None = None
    vec_rank: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "description": self.description,
            "tags": list(self.tags),
            "score": round(self.score, 6),
            "lex_rank": self.lex_rank,
            "vec_rank": self.vec_rank,
        }


@dataclass(slots=True)
class RouteResult:
    query: str
    strategy: str
    collections: list[Candidate]
    took_ms: float = 0.0
    prefix: str | None = None
    total: int = 0  # collections the prefix covers
    tree: list[dict[str, Any]] = field(default_factory=list)  # tree strategy: sub-folders
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query,
            "strategy": self.strategy,
            "took_ms": round(self.took_ms, 2),
            "prefix": self.prefix,
            "total": self.total,
            "collections": [c.to_dict() for c in self.collections],
        }
        if self.tree:
            out["tree"] = self.tree
        if self.warnings:
            out["warnings"] = self.warnings
        return out


def pick_strategy(count: int) -> str:
    if count <= FLAT_MAX:
        return "flat"
    if count <= TREE_MAX:
        return "tree"
    return "hybrid"


def route(
    reg: Registry,
    query: str,
    k: int = 5,
    prefix: str | None = None,
    strategy: str | None = None,
    query_vector: Callable[[str], np.ndarray | None] | None = None,
) -> RouteResult:
    """Ranked candidate collections for `query` (see the module docstring)."""
    t0 = time.perf_counter()
    strategy = strategy or "auto"
    if strategy not in STRATEGIES:
        raise RouteError(f"unknown routing strategy {strategy!r}")
    k = max(1, min(int(k), MAX_ROUTE_K))
    ranges = reg.select(prefix)
    ok = reg.ok_mask()
    mask = np.zeros(len(reg.entries), dtype=bool)
    for r in ranges:
        mask[r.start : r.stop] = True
    mask &= ok
    total = int(mask.sum())
    if strategy == "auto":
        strategy = pick_strategy(total)
    warnings: list[str] = []
    if total == 0:
        where = f" under {prefix}" if prefix else ""
        warnings.append(f"no collection{where}: a collection is a folder holding _meta.yaml")
    lex = _lex_leg(reg, query, mask, total) if total else []
    vec = _vec_leg(reg, query, mask, warnings, query_vector) if total else []
    scores: dict[int, float] = {}
    for leg in (lex, vec):
        for rank, pos in enumerate(leg, start=1):
            scores[pos] = scores.get(pos, 0.0) + 1.0 / (RRF_K + rank)
    lex_rank = {pos: r for r, pos in enumerate(lex, start=1)}
    vec_rank = {pos: r for r, pos in enumerate(vec, start=1)}
    order = sorted(scores, key=lambda p: (-scores[p], reg.entries[p].path))
    if strategy == "flat":  # the whole list: unmatched collections follow, by path
        order += [int(p) for p in np.flatnonzero(mask) if int(p) not in scores]
    else:
        order = order[:k]
    out = [
        _candidate(reg.entries[p], scores.get(p, 0.0), lex_rank.get(p), vec_rank.get(p))
        for p in order
    ]
    res = RouteResult(query, strategy, out, prefix=prefix, total=total, warnings=warnings)
    if strategy == "tree":
        res.tree = _subtree(reg, mask, prefix)
    res.took_ms = (time.perf_counter() - t0) * 1000
    return res


def _candidate(e: Entry, score: float, lex: int | None, vec: int | None) -> Candidate:
    return Candidate(e.name, e.path, e.description, e.tags, score, lex, vec)


def _lex_leg(reg: Registry, query: str, mask: np.ndarray, total: int) -> list[int]:
    stems = _telling_stems(reg, query)
    if not stems:
        return []
    # Stems hold only \w characters, so a double-quoted string is always a literal term.
    match = " OR ".join(f'"{t}"' for t in stems)
    if not CONTENT:
        match = f"{{lex}} : ({match})"
    conn = reg._db()
    everything = total == len(reg.entries)
    # With a prefix, BM25 still ranks over the whole registry (its IDF is the library's); read
    # deeper so DEPTH candidates survive the filter.
    limit = DEPTH if everything else max(DEPTH, min(20 * DEPTH, len(reg.entries)))
    out = []
    # ORDER BY bm25(), not rank: FTS5's rank sorter prepares a statement on every query.
    for (rid,) in conn.execute(
        "SELECT rowid FROM colls_fts WHERE colls_fts MATCH ? ORDER BY bm25(colls_fts) LIMIT ?",
        (match, limit),
    ):
        pos = reg.position(rid)
        if pos is not None and mask[pos]:
            out.append(pos)
            if len(out) >= DEPTH:
                break
    return out


def _telling_stems(reg: Registry, query: str) -> list[str]:
    """The query's stems minus those too common in the router index (see COMMON_ROWS)."""
    stems = query_terms(query)
    if not stems:
        return []
    cap = max(COMMON_ROWS, int(COMMON_SHARE * len(reg.entries)))
    if len(reg.entries) <= cap:
        return stems
    # How many rows hold each stem: fts5vocab walks the stem's postings (~0.6 ms for a common
    # one at 100,000 rows), so counts are kept until the registry changes.
    df: dict[str, int] = reg.derived.setdefault("df", {})
    if len(df) > DF_CACHE:
        df.clear()
    unknown = [t for t in stems if t not in df]
    if unknown:
        conn = reg._db()
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.colls_vocab"
            " USING fts5vocab(main, colls_fts, row)"
        )
        marks = ",".join("?" * len(unknown))
        df.update({t: 0 for t in unknown})
        df.update(
            conn.execute(f"SELECT term, doc FROM temp.colls_vocab WHERE term IN ({marks})", unknown)
        )
    found = [t for t in stems if df[t]]
    keep = [t for t in found if df[t] <= cap]
    return keep or sorted(found, key=lambda t: df[t])[:2]


def _vec_leg(
    reg: Registry,
    query: str,
    mask: np.ndarray,
    warnings: list[str],
    query_vector: Callable[[str], np.ndarray | None] | None,
) -> list[int]:
    if not query.strip() or query_vector is None or reg.embedder is None:
        return []
    merged = CONTENT and len(reg.entries) >= MERGE_MIN
    if merged:
        mmat, has, present = _merged(reg)
    else:
        mat, has = reg.vectors() or (np.zeros((0, 0), dtype=np.float32), mask[:0])
        cmat, has_c = reg.content_vectors() or (mat[:0], has[:0])
        if not CONTENT or not has_c.any():
            cmat, has_c = mat[:0], has[:0]
        present = has | has_c if len(has_c) else has
    usable = mask & present
    if not usable.any():
        warnings.append(
            "no description vectors yet: lexical routing only (run `memo registry rebuild`)"
        )
        return []
    missing = int((mask & ~has).sum())
    if missing:
        warnings.append(
            f"{missing} descriptions not embedded yet: run `memo registry rebuild` to finish"
        )
    q = query_vector(query)
    if q is None:
        return []
    if merged:
        sims = np.where(usable, mmat @ q, -np.inf)
        return _best(sims, min(DEPTH, int(usable.sum())))
    return rank_vectors(q, mat, has, cmat, has_c, mask, DEPTH)


def rank_vectors(
    q: np.ndarray,
    mat: np.ndarray,
    has: np.ndarray,
    cmat: np.ndarray,
    has_c: np.ndarray,
    mask: np.ndarray,
    depth: int,
) -> list[int]:
    """Positions of `mask` ranked by cosine, best first, at most `depth`.

    A position's score is the better of its description's cosine (`mat`, where `has`) and its
    content centroid's (`cmat`, where `has_c`; both may be empty: no centroids) levelled down
    by the mean gap between the two over the positions having both: a centroid is a mean of
    many chunks and sits ~0.04 higher. Every vector is scored: two matrix-vector products.
    """
    described = mask & has
    dsims = mat @ q
    sims = np.where(described, dsims, -np.inf).astype(np.float32)
    if len(has_c):
        csims = cmat @ q
        both = (described & has_c).astype(np.float32)
        count = float(both.sum())
        level = float((csims - dsims) @ both) / count if count else 0.0  # the mean gap
        np.maximum(sims, np.where(mask & has_c, csims - level, -np.inf), out=sims)
    return _best(sims, min(depth, int(np.isfinite(sims).sum())))


def merge_vectors(
    mat: np.ndarray,
    has: np.ndarray,
    cmat: np.ndarray,
    has_c: np.ndarray,
    delta: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One vector per position whose cosine with a query is the mean of the description's
    cosine and the levelled centroid's (the centroid's alone, levelled, without a description);
    returns it with the level vector `delta` (computed here unless given).

    Why: at 100,000 collections the two matrices are 150 MB each and scoring both is
    memory-bound (~14 ms here, most of a route); folding them into one halves that. The level
    (mean centroid - description gap) is a mean over every collection having both, folded in
    as a vector. The mean rule ranks a little worse than the max (bench/router.py: routing
    top-5 on 1,000 collections 0.985 against 0.994, top-1 0.88 against 0.92), so it is used only
    from MERGE_MIN collections on.
    """
    both = has & has_c
    out = np.where(has[:, None], mat, np.float32(0)).astype(np.float32)
    if delta is None:
        delta = np.zeros(mat.shape[1], dtype=np.float32)
        if both.any():
            rows = both[:, None]
            gap = cmat.sum(axis=0, where=rows, dtype=np.float64)
            gap -= mat.sum(axis=0, where=rows, dtype=np.float64)
            delta = (gap / both.sum()).astype(np.float32)
    only_c = has_c & ~has
    out[only_c] = cmat[only_c] - delta
    out[both] = (mat[both] + cmat[both] - delta) / 2
    return out, delta


@dataclass(slots=True)
class _Merged:
    """The merged matrix with its masks, the level it folded in, and how far it followed the
    registry's in-place patches."""

    mat: np.ndarray
    has: np.ndarray  # has a description vector
    present: np.ndarray  # has any vector
    delta: np.ndarray
    seen: int  # len(reg.patched) when last brought up to date
    drift: int = 0  # rows patched with the old level since it was computed


def _merged(reg: Registry) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(merged matrix, has-description mask, has-any-vector mask), kept until the registry is
    read again in full; the two full matrices are then released (the merged one replaces them).

    Rows the registry patched in place (another process's sync) are re-merged from their
    stored vectors with the level kept; once more than 1% of the rows were patched so, the
    level is recomputed over everything (reading every vector again).
    """
    got: _Merged | None = reg.derived.get("merged")
    if got is not None and len(reg.patched) > got.seen:
        new = sorted(set(reg.patched[got.seen :]))
        if got.drift + len(new) > max(100, len(reg.entries) // 100):
            got = None
        else:
            d, hd, c, hc = reg.vectors_at(new)
            got.mat[new], _ = merge_vectors(d, hd, c, hc, got.delta)
            got.has[new], got.present[new] = hd, hd | hc
            got.seen, got.drift = len(reg.patched), got.drift + len(new)
    if got is None:
        mat, has = reg.vectors() or (None, None)
        cmat, has_c = reg.content_vectors() or (None, None)
        assert mat is not None and has is not None and cmat is not None and has_c is not None
        merged, delta = merge_vectors(mat, has, cmat, has_c)
        got = _Merged(merged, has.copy(), has | has_c, delta, len(reg.patched))
        reg.release_vectors()
        reg.derived["merged"] = got
    return got.mat, got.has, got.present


def _best(sims: np.ndarray, n: int) -> list[int]:
    """Positions of the n highest scores, best first (ties: the lower position first)."""
    if n <= 0:
        return []
    top = np.argpartition(-sims, n - 1)[:n]
    top = top[np.argsort(-sims[top], kind="stable")]
    return [int(p) for p in top]


def _subtree(reg: Registry, mask: np.ndarray, prefix: str | None) -> list[dict[str, Any]]:
    """The next level of folders below the prefix, with how many collections each holds."""
    base = (prefix or "").rstrip("*").strip("/")
    depth = len(base.split("/")) if base else 0
    counts: dict[str, int] = {}
    for p in np.flatnonzero(mask):
        parts = reg.entries[p].path.split("/")
        key = "/".join(parts[: depth + 1])
        key = key + "/*" if len(parts) > depth + 1 else key
        counts[key] = counts.get(key, 0) + 1
    return [{"prefix": k, "collections": v} for k, v in sorted(counts.items())][:200]
