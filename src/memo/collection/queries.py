"""The SQL a search runs against one index: each leg's candidates and the chunks they name.

Pure reads on an open `IndexStore`; healing a damaged index is the caller's business
(`Collection.read`). A sub-path (`prefix`) and frontmatter filters narrow both legs inside
their SQL, never by dropping hits afterwards (which would starve k).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .filters import Filter
from .store import IndexStore

VEC_SCAN_MAX = 32  # up to this many chunks, score vectors in numpy instead of a vec0 KNN


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: int
    path: str  # relative to the collection folder
    heading: str
    line: int
    text: str
    mtime_ns: int


def lex_candidates(
    store: IndexStore, match: str, n: int, prefix: str = "", flt: Filter | None = None
) -> list[tuple[int, float]]:
    """(chunk id, BM25 score, higher is better), best first."""
    # FTS5 bm25() is lower-is-better (negative); negate so every leg sorts descending.
    where, params = narrowing(prefix, flt)
    if where:
        rows = store.conn.execute(
            "SELECT chunks_fts.rowid, -bm25(chunks_fts) AS s FROM chunks_fts JOIN chunks c"
            " ON c.id = chunks_fts.rowid JOIN files f ON f.path = c.path"
            f" WHERE chunks_fts MATCH ? AND {where} ORDER BY s DESC LIMIT ?",
            (match, *params, n),
        ).fetchall()
    else:
        # `ORDER BY s`, not `ORDER BY rank`: FTS5's own rank sorter prepares a statement on
        # every query (~0.3 ms, most of a small collection's lexical leg); SQLite's top-N
        # sort gives the same order.
        rows = store.conn.execute(
            "SELECT rowid, -bm25(chunks_fts) AS s FROM chunks_fts WHERE chunks_fts MATCH ?"
            " ORDER BY s DESC LIMIT ?",
            (match, n),
        ).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def vec_candidates(
    store: IndexStore, qvec: np.ndarray, n: int, prefix: str = "", flt: Filter | None = None
) -> list[tuple[int, float]]:
    """(chunk id, cosine similarity), best first; [] if this index holds no vectors."""
    if not store.has_vec:
        return []
    conn = store.conn
    q = np.asarray(qvec, dtype=np.float32)
    where, params = narrowing(prefix, flt)
    if where:
        # vec0 cannot filter by path or frontmatter: score the chunks that qualify directly.
        rows = conn.execute(
            "SELECT v.rowid, v.embedding FROM chunks_vec v JOIN chunks c ON c.id = v.rowid"
            f" JOIN files f ON f.path = c.path WHERE {where}",
            tuple(params),
        ).fetchall()
        return nearest(rows, q, n)
    if store.chunk_count() <= VEC_SCAN_MAX:
        # A vec0 KNN reads its whole 1,024-slot chunk (1.5 MB at 384 dims): ~0.45 ms even
        # for 4 vectors. Reading them row by row costs ~8 us each (bench/scope_star.py).
        rows = conn.execute("SELECT rowid, embedding FROM chunks_vec").fetchall()
        return nearest(rows, q, n)
    rows = conn.execute(
        "SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?",
        (q.tobytes(), n),
    ).fetchall()
    return [(int(r[0]), 1.0 - float(r[1])) for r in rows]


def chunk_rows(store: IndexStore, ids: Sequence[int]) -> dict[int, ChunkRow]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = store.conn.execute(
        "SELECT c.id, c.path, c.heading, c.line, c.text, f.mtime_ns FROM chunks c"
        f" JOIN files f ON f.path = c.path WHERE c.id IN ({marks})",
        tuple(ids),
    ).fetchall()
    return {int(r[0]): ChunkRow(int(r[0]), r[1], r[2], int(r[3]), r[4], int(r[5])) for r in rows}


def known_terms(store: IndexStore, wanted: set[str]) -> set[str]:
    """Which of these stems occur in this index."""
    if not wanted:
        return set()
    marks = ",".join("?" * len(wanted))
    rows = store.conn.execute(
        f"SELECT term FROM chunks_vocab WHERE term IN ({marks})", tuple(wanted)
    )
    return {r[0] for r in rows}


def nearest(rows: list[Any], q: np.ndarray, n: int) -> list[tuple[int, float]]:
    """The n (rowid, embedding blob) rows most similar to q, as (rowid, cosine), best first."""
    if not rows:
        return []
    mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    sims = mat @ q
    order = np.argsort(-sims, kind="stable")[:n]
    return [(int(rows[i][0]), float(sims[i])) for i in order]


def narrowing(prefix: str, flt: Filter | None) -> tuple[str, list[object]]:
    """A WHERE condition over `chunks c JOIN files f` for a sub-path and/or a filter."""
    conds: list[str] = []
    params: list[object] = []
    if prefix:
        conds.append("(c.path = ? OR c.path LIKE ? ESCAPE '\\')")
        params += [prefix, _like_prefix(prefix)]
    if flt is not None:
        where, more = flt.sql()
        conds.append(where)
        params += more
    return " AND ".join(conds), params


def _like_prefix(prefix: str) -> str:
    esc = prefix.rstrip("/").replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return esc + "/%"
