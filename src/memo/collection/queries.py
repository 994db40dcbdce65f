"""The SQL a search runs against one index: each leg's candidates and the chunks they name.

The lexical leg reads statistics and postings, not FTS5's own `bm25()`: scores must be computed
with the statistics of every collection searched (search/bm25.py).

Pure reads on an open `IndexStore`; healing a damaged index is the caller's business
(`Collection.read`). A sub-path (`prefix`) and frontmatter filters narrow both legs inside
their SQL, never by dropping hits afterwards (which would starve k).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import windows
from .filters import Filter
from .store import IndexStore, has_windows, unpack_text, window_rows
from .vectors import dequantize, dequantize_rows, quantize


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: int
    path: str  # relative to the collection folder
    heading: str
    line: int
    text: str
    mtime_ns: int
    wins: int = 0  # its sentence windows with a vector (collection/windows.py)


@dataclass(slots=True)
class Postings:
    """One collection's rows holding any query term: one entry per (row, term).

    Plain sequences, made into arrays once for all collections (`Corpus.best`): most
    collections of a wide scope hold a handful, and numpy's cost per call (a few µs) was most
    of what reading a small collection's share cost."""

    docs: Sequence[int]  # chunk ids
    terms: Sequence[int]  # the term's position in the query's term list
    tf: Sequence[float]  # how often the term occurs in the row
    length: Sequence[float]  # the row's length in tokens

    @classmethod
    def empty(cls) -> Postings:
        return cls([], [], [], [])


def lex_share(
    store: IndexStore, terms: list[str], prefix: str = "", flt: Filter | None = None
) -> tuple[int, int, dict[str, int], Postings]:
    """What the lexical leg needs from this index: (rows, tokens, rows holding each term,
    postings), read from FTS5's own tables in one statement.

    FTS5 keeps them exact in the same transactions as the rows: the "averages" record (row
    count, then the column's token count), the docsize table (each row's length), and the
    term instances (fts5vocab, a per-connection view). The postings give each term's row
    count too, unless a sub-path or filter narrowed them: a narrowed search still uses the
    statistics of the whole collection (docs/design.md), counted by fts5vocab then.
    """
    marks = ",".join("?" * len(terms))
    where, params = narrowing(prefix, flt)
    join = " JOIN chunks c ON c.id = i.doc JOIN files f ON f.path = c.path" if where else ""
    rows = store.conn.execute(
        "SELECT NULL, NULL, NULL, block FROM chunks_fts_data WHERE id = 1 UNION ALL"
        " SELECT i.doc, i.term, count(*), d.sz FROM temp.chunks_inst i"
        f" JOIN chunks_fts_docsize d ON d.id = i.doc{join}"
        f" WHERE i.term IN ({marks}){' AND ' + where if where else ''}"
        " GROUP BY i.term, i.doc",
        (*terms, *params),
    ).fetchall()
    n, tokens = (0, 0)
    if rows and rows[0][0] is None:
        n, tokens = _varints(rows[0][3], 2)
        rows = rows[1:]
    postings = _postings(rows, terms)
    if where:
        found = store.conn.execute(
            f"SELECT term, doc FROM chunks_vocab WHERE term IN ({marks})", terms
        )
        df = {t: int(c) for t, c in found}
    else:
        counts = Counter(postings.terms)
        df = {t: counts[i] for i, t in enumerate(terms) if counts[i]}
    return n, tokens, df, postings


def lex_stats(store: IndexStore, terms: list[str]) -> tuple[int, int, dict[str, int]]:
    """(rows, tokens, rows holding each term) of this index."""
    rows, tokens, df, _ = lex_share(store, terms)
    return rows, tokens, df


def _postings(rows: list[tuple[int, str, int, bytes]], terms: list[str]) -> Postings:
    if not rows:
        return Postings.empty()
    docs, names, tf, sizes = zip(*rows, strict=True)
    at = {t: i for i, t in enumerate(terms)}
    return Postings(docs, [at[t] for t in names], tf, _lengths(sizes))


def _lengths(blobs: tuple[bytes, ...]) -> list[int]:
    """Each docsize record's first varint (the row's token count), decoded for all at once
    (in Python for a few: numpy's per-call overhead is most of a small collection's cost)."""
    if len(blobs) <= 32:
        return [_row_length(b) for b in blobs]
    sizes = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
    data = np.frombuffer(b"".join(blobs), dtype=np.uint8).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    value = np.zeros(len(blobs), dtype=np.int64)
    going = np.ones(len(blobs), dtype=bool)
    for j in range(3):  # a chunk holds far fewer than 2**21 tokens: three bytes suffice
        take = going & (sizes > j)
        byte = data[np.minimum(starts + j, len(data) - 1)]
        value = np.where(take, (value << 7) | (byte & 0x7F), value)
        going = take & (byte >= 0x80)
    return value.tolist()


def _row_length(blob: bytes) -> int:
    """A docsize record's first varint: one byte under 128 tokens, two under 16,384 (any chunk);
    read inline, as a scope of 1,000 small collections decodes ~9,000 a search."""
    if blob and blob[0] < 0x80:
        return blob[0]
    if len(blob) > 1 and blob[1] < 0x80:
        return ((blob[0] & 0x7F) << 7) | blob[1]
    return _varints(blob, 1)[0]


def _varints(blob: bytes, n: int) -> list[int]:
    """The first n SQLite varints of an FTS5 record (big-endian, 7 bits a byte, at most 9)."""
    out: list[int] = []
    i = 0
    while len(out) < n and i < len(blob):
        v = 0
        for j in range(9):
            c = blob[i]
            i += 1
            if j == 8:
                v = (v << 8) | c
                break
            v = (v << 7) | (c & 0x7F)
            if not c & 0x80:
                break
        out.append(v)
    return out + [0] * (n - len(out))


def vec_candidates(
    store: IndexStore, qvec: np.ndarray, n: int, prefix: str = "", flt: Filter | None = None
) -> list[tuple[int, float]]:
    """(chunk id, cosine similarity), best first; [] if this index holds no vectors. A chunk
    scores the best of its own vector and its sentence windows' (collection/windows.py)."""
    if not store.has_vec:
        return []
    conn = store.conn
    q = np.asarray(qvec, dtype=np.float32)
    where, params = narrowing(prefix, flt)
    if where:
        # vec0 cannot filter by path or frontmatter: score the chunks that qualify directly.
        rows = conn.execute(
            "SELECT c.id, c.wins, v.embedding FROM chunks_vec v JOIN chunks c ON c.id = v.rowid"
            f" JOIN files f ON f.path = c.path WHERE {where}",
            tuple(params),
        ).fetchall()
        wins = window_rows(conn, [w for cid, n, _ in rows for w in windows.rowids(cid, n)])
        own = nearest([(cid, blob) for cid, _, blob in rows], q, len(rows))
        return best_per_chunk(own, nearest(wins, q, len(wins)), n)
    # vec0 chunks of 64 slots (store.VEC_CHUNK): a KNN beats reading the rows into numpy at
    # every size (0.04 against 0.08 ms at 32 vectors), so small collections need no path of
    # their own any more (git show lab-2026-12:bench/vec_chunks.py).
    code = quantize(q).tobytes()
    knn = "SELECT rowid, distance FROM {} WHERE embedding MATCH vec_int8(?) AND k = ?"
    own = conn.execute(knn.format("chunks_vec"), (code, n)).fetchall()
    wins = (
        conn.execute(knn.format("windows_vec"), (code, WINDOW_DEPTH * n)).fetchall()
        if has_windows(conn)
        else []
    )
    return best_per_chunk(
        [(int(r[0]), 1.0 - float(r[1])) for r in own],
        [(int(r[0]), 1.0 - float(r[1])) for r in wins],
        n,
    )


# A KNN over windows reads this many windows per chunk wanted: a chunk has 2.5 windows on
# average, and a chunk's windows near the question tend to come together.
WINDOW_DEPTH = 2


def best_per_chunk(
    own: list[tuple[int, float]], wins: list[tuple[int, float]], n: int
) -> list[tuple[int, float]]:
    """The n best chunks, each at the best of its own cosine and its windows' (window rowids
    in `wins`), best first; a tie keeps the chunks' own order first."""
    best: dict[int, float] = {}
    for cid, sim in [*own, *((windows.chunk_of(r), s) for r, s in wins)]:
        if sim > best.get(cid, -2.0):
            best[cid] = sim
    return sorted(best.items(), key=lambda kv: -kv[1])[:n]


def pending_among(store: IndexStore, ids: Sequence[int]) -> set[int]:
    """Which of these chunks have no vector yet (the vector stage has not reached them)."""
    if not store.has_vec or not ids:
        return set()
    marks = ",".join("?" * len(ids))
    rows = store.conn.execute(f"SELECT id FROM chunks WHERE vec = 0 AND id IN ({marks})", ids)
    return {r[0] for r in rows}


def note_means(
    store: IndexStore, ids: Sequence[int]
) -> tuple[dict[int, str], dict[str, np.ndarray]]:
    """Each of these chunks' note, and each such note's mean vector: the unit mean of every
    chunk of it that has a vector (a note none of whose chunks has one yet is left out)."""
    if not ids:
        return {}, {}
    marks = ",".join("?" * len(ids))
    notes = dict(store.conn.execute(f"SELECT id, path FROM chunks WHERE id IN ({marks})", ids))
    if not store.has_vec or not notes:
        return notes, {}
    paths = sorted(set(notes.values()))
    rows = store.conn.execute(
        "SELECT c.path, v.embedding FROM chunks c JOIN chunks_vec v ON v.rowid = c.id"
        f" WHERE c.vec = 1 AND c.path IN ({','.join('?' * len(paths))}) ORDER BY c.path",
        paths,
    ).fetchall()
    if not rows:
        return notes, {}
    # one dequantize for every row, then each note's rows summed (they come path by path)
    vecs = dequantize_rows([bytes(r[1]) for r in rows]).astype(np.float64)
    starts = [i for i in range(len(rows)) if i == 0 or rows[i][0] != rows[i - 1][0]]
    sums = np.add.reduceat(vecs, starts, axis=0)
    norms = np.linalg.norm(sums, axis=1)
    means = {rows[i][0]: sums[j] / norms[j] for j, i in enumerate(starts) if norms[j] > 0}
    return notes, means


def vector_debt(store: IndexStore) -> tuple[int, int]:
    """(chunks, of them without a vector yet)."""
    return store.chunk_count(), store.pending()


def chunk_rows(store: IndexStore, ids: Sequence[int]) -> dict[int, ChunkRow]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = store.conn.execute(
        "SELECT c.id, c.path, c.heading, c.line, c.text, f.mtime_ns, c.wins FROM chunks c"
        f" JOIN files f ON f.path = c.path WHERE c.id IN ({marks})",
        tuple(ids),
    ).fetchall()
    return {
        int(r[0]): ChunkRow(
            int(r[0]), r[1], r[2], int(r[3]), unpack_text(r[4]), int(r[5]), int(r[6])
        )
        for r in rows
    }


def nearest(rows: list[Any], q: np.ndarray, n: int) -> list[tuple[int, float]]:
    """The n (rowid, embedding blob) rows most similar to q, as (rowid, cosine), best first.

    Both sides int8 as vec0's KNN compares them (the query quantized too, collection/vectors.py),
    so a filtered search scores a chunk exactly as an unfiltered one does."""
    if not rows:
        return []
    mat = dequantize_rows([r[1] for r in rows])
    sims = mat @ dequantize(quantize(q))
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
