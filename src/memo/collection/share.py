"""What one collection gives a search, read at once: a share of each leg, as plain data.

The lexical leg's statistics and the postings of every phrasing's stems (reads.lex_share),
each phrasing's nearest chunks from the vectors in memory (matrix.py), the index's vector debt
and which chunks still lack a vector, and the language of each phrasing's nearest chunk. The
search ranks the shares of every collection of its scope as one list (search/legs.py); it
never holds the index.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import matrix, reads
from .filters import Filter
from .reads import Postings
from .store import IndexStore


@dataclass(slots=True)
class Share:
    """One collection's share of a search (see the module's docstring)."""

    rows: int
    tokens: int
    df: dict[str, int]
    postings: Postings
    has_vec: bool  # it holds vectors (and was not waiting for its first)
    vec: list[list[tuple[int, float]]]  # per phrasing with a query vector
    debt: tuple[int, int]  # (chunks, of them without a vector)
    pending: set[int]
    langs: dict[int, str | None]  # chunk id -> language, for each phrasing's nearest
    matrix: matrix.Matrix | None  # its vectors in memory (notes' means, windows)


def share(
    store: IndexStore,
    terms: list[str],
    qvecs: Callable[[], list[np.ndarray] | None],
    depth: int,
    prefix: str,
    flt: Filter | None,
    debt: tuple[int, int] | None,
) -> Share:
    """The share of the index `store` for a search of these stems (`terms`, the union of every
    phrasing's) and query vectors (`qvecs`, asked only when the index holds vectors), `depth`
    candidates a leg, within `prefix` and `flt`; `debt`: the vector debt when known."""
    rows, tokens, df, postings = (
        reads.lex_share(store, terms, prefix, flt) if terms else (0, 0, {}, Postings.empty())
    )
    debt = debt if debt is not None else reads.vector_debt(store)
    vec: list[list[tuple[int, float]]] = []
    waiting = bool(debt[0]) and debt[1] == debt[0]  # no vector yet: no KNN
    has_vec = store.has_vec and not waiting
    vecs = qvecs() if has_vec else None
    held = matrix.matrix(store) if vecs else None
    if held is not None and vecs:
        vec = matrix.nearest(held, store, vecs, depth, prefix, flt)
    pending = reads.pending_ids(store) if debt[1] else set()
    tops = [found[0][0] for found in vec if found]
    langs = reads.chunk_langs(store, tops) if tops else {}
    return Share(rows, tokens, df, postings, has_vec, vec, debt, pending, langs, held)
