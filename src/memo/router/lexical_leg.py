"""The router's lexical leg: BM25 over the registry's words (name, path, description, tags,
headings) and each collection's top content stems.

The registry is one FTS5 table with a row per collection, so its BM25 statistics are the whole
library's: a score is comparable across collections as it is (the federated search's problem
of per-collection statistics does not arise here).
"""

from __future__ import annotations

import numpy as np

from ..collection.lexical import query_terms
from ..registry_tools.registry import Registry

DEPTH = 200  # candidates per leg before fusion
# A query stem found in more router rows than this is left out of the lexical leg (unless all
# are): its IDF is small, and its postings (every collection's content has "year") would make
# BM25 score most of 100,000 rows per query. 2% of the rows, never fewer than 1,000.
COMMON_ROWS = 1_000
COMMON_SHARE = 0.02
DF_CACHE = 100_000  # stems whose row count is remembered


def lexical_leg(
    reg: Registry, query: str, mask: np.ndarray, total: int, content: bool = True
) -> list[int]:
    """Positions under `mask` whose words match the query, best first, at most DEPTH.

    `content=False` matches names and descriptions only (the `lex` column)."""
    stems = telling_stems(reg, query)
    if not stems:
        return []
    # Stems hold only \w characters, so a double-quoted string is always a literal term.
    match = " OR ".join(f'"{t}"' for t in stems)
    if not content:
        match = f"{{lex}} : ({match})"
    everything = total == len(reg.entries)
    # With a prefix, BM25 still ranks over the whole registry (its IDF is the library's); read
    # deeper so DEPTH candidates survive the filter.
    limit = DEPTH if everything else max(DEPTH, min(20 * DEPTH, len(reg.entries)))
    out = []
    for pos in reg.search(match, limit):
        if mask[pos]:
            out.append(pos)
            if len(out) >= DEPTH:
                break
    return out


def telling_stems(reg: Registry, query: str) -> list[str]:
    """The query's stems minus those too common in the router index (see COMMON_ROWS)."""
    stems = query_terms(query)
    if not stems:
        return []
    cap = max(COMMON_ROWS, int(COMMON_SHARE * len(reg.entries)))
    if len(reg.entries) <= cap:
        return stems
    # fts5vocab walks the stem's postings (~0.6 ms for a common one at 100,000 rows), so the
    # registry keeps the counts until it is read again.
    df = reg.row_counts(stems, DF_CACHE)
    found = [t for t in stems if df[t]]
    keep = [t for t in found if df[t] <= cap]
    return keep or sorted(found, key=lambda t: df[t])[:2]
