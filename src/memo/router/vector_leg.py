"""The router's vector leg: a question's cosine with each collection's description vector and
with the centroid of its chunk vectors.

A collection scores the better of the two, the centroids first levelled to the descriptions (a
centroid of many chunks sits ~0.04 higher). From MERGE_MIN collections on, the two vectors are
folded into one per collection (merge_vectors): scoring two 150 MB matrices per question was
most of a route at 100,000.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..registry_tools.registry import Registry
from .lexical_leg import DEPTH

MERGE_MIN = 20_000  # from this many collections, one merged vector each (see merge_vectors)


def vector_leg(
    reg: Registry,
    query: str,
    mask: np.ndarray,
    query_vector: Callable[[str], tuple[np.ndarray | None, str]] | None,
    content: bool = True,
) -> tuple[list[int], list[str]]:
    """Positions under `mask` ranked by cosine with the query, best first, at most DEPTH, and
    what the reader should know (vectors missing, no model).

    `content=False` uses the description vectors only (no centroids)."""
    warnings: list[str] = []
    if not query.strip() or query_vector is None or reg.embedder is None:
        return [], warnings
    merged = content and len(reg.entries) >= MERGE_MIN
    if merged:
        mmat, has, present = _merged(reg)
    else:
        mat, has = reg.vectors() or (np.zeros((0, 0), dtype=np.float32), mask[:0])
        cmat, has_c = reg.content_vectors() or (mat[:0], has[:0])
        if not content or not has_c.any():
            cmat, has_c = mat[:0], has[:0]
        present = has | has_c if len(has_c) else has
    usable = mask & present
    if not usable.any():
        warnings.append(
            "no description vectors yet: lexical routing only (run `memo registry rebuild`)"
        )
        return [], warnings
    missing = int((mask & ~has).sum())
    if missing:
        warnings.append(
            f"{missing} descriptions not embedded yet: run `memo registry rebuild` to finish"
        )
    q, why = query_vector(query)
    if q is None:
        return [], warnings + [why]
    if merged:
        sims = np.where(usable, mmat @ q, -np.inf)
        return _best(sims, min(DEPTH, int(usable.sum()))), warnings
    return rank_vectors(q, mat, has, cmat, has_c, mask, DEPTH), warnings


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
