"""The SQL a search runs against one index: what each leg reads and the chunks it names.

The lexical leg reads statistics and postings, not FTS5's own `bm25()`: scores must be computed
with the statistics of every collection searched (search/bm25.py). The vector leg reads every
stored vector once and scores them in memory while the index does not change (matrix.py): vec0
stores them, its KNN is not used. Beside them, a note's chunks as `memo why` and `memo related`
read them. Pure reads on an open `IndexStore`; healing a damaged index is the caller's business
(`Collection.read`). A sub-path (`prefix`) and frontmatter filters narrow both legs inside their
SQL, never by dropping hits afterwards (which would starve k).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import windows
from .filters import Filter
from .store import IndexStore, has_windows, unpack_text


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: int
    path: str  # relative to the collection folder
    heading: str
    line: int
    text: str
    mtime_ns: int
    wins: int = 0  # its sentence windows with a vector (collection/windows.py)
    lang: str | None = None  # its language (collection/langid.py)


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


def _postings(rows: list[tuple[int, str, int, bytes]], terms: list[str]) -> Postings:
    if not rows:
        return Postings.empty()
    docs, names, tf, sizes = zip(*rows, strict=True)
    at = {t: i for i, t in enumerate(terms)}
    return Postings(docs, [at[t] for t in names], tf, row_lengths(sizes))


def row_lengths(blobs: tuple[bytes, ...]) -> list[int]:
    """Each docsize record's first varint (the row's token count), decoded for all at once
    (in Python for a few: numpy's per-call overhead is most of a small collection's cost).
    Public so tests/test_ranking.py pins that both paths decode 1-3 byte varints alike."""
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


def vector_rows(store: IndexStore) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, str]]:
    """Every stored vector of this index, chunks' and windows', in no particular order: the
    chunk id of each (int64), its slot (0: the chunk's own, k + 1: its window k), their int8
    codes (n, dim); and the note of every chunk (with a vector or still without)."""
    ids: list[int] = []
    slots: list[int] = []
    blobs: list[bytes] = []
    for rowid, blob in store.conn.execute("SELECT rowid, embedding FROM chunks_vec"):
        ids.append(rowid)
        slots.append(0)
        blobs.append(blob)
    if has_windows(store.conn):
        for rowid, blob in store.conn.execute("SELECT rowid, embedding FROM windows_vec"):
            ids.append(windows.chunk_of(rowid))
            slots.append(rowid - windows.chunk_of(rowid) * windows.SLOTS + 1)
            blobs.append(blob)
    dim = len(blobs[0]) if blobs else 0
    codes = np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), dim)
    paths = dict(store.conn.execute("SELECT id, path FROM chunks"))
    return np.asarray(ids, dtype=np.int64), np.asarray(slots, dtype=np.int64), codes, paths


def qualifying(store: IndexStore, where: str, params: Sequence[object]) -> np.ndarray:
    """The ids of the chunks a `narrowing` condition keeps."""
    rows = store.conn.execute(
        f"SELECT c.id FROM chunks c JOIN files f ON f.path = c.path WHERE {where}", tuple(params)
    ).fetchall()
    return np.asarray([r[0] for r in rows], dtype=np.int64)


def pending_ids(store: IndexStore) -> set[int]:
    """The chunks with no vector yet (the vector stage's queue: few, but while indexing)."""
    return {r[0] for r in store.conn.execute("SELECT id FROM chunks WHERE vec = 0")}


def chunk_langs(store: IndexStore, ids: Sequence[int]) -> dict[int, str | None]:
    """The language of these chunks (langid.py; None where its words did not say)."""
    marks = ",".join("?" * len(ids))
    rows = store.conn.execute(f"SELECT id, lang FROM chunks WHERE id IN ({marks})", tuple(ids))
    return {int(r[0]): r[1] for r in rows}


def vector_debt(store: IndexStore) -> tuple[int, int]:
    """(chunks, of them without a vector yet)."""
    return store.chunk_count(), store.pending()


def chunk_rows(store: IndexStore, ids: Sequence[int]) -> dict[int, ChunkRow]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = store.conn.execute(
        "SELECT c.id, c.path, c.heading, c.line, c.text, f.mtime_ns, c.wins, c.lang FROM chunks c"
        f" JOIN files f ON f.path = c.path WHERE c.id IN ({marks})",
        tuple(ids),
    ).fetchall()
    return {
        int(r[0]): ChunkRow(
            int(r[0]), r[1], r[2], int(r[3]), unpack_text(r[4]), int(r[5]), int(r[6]), r[7]
        )
        for r in rows
    }


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


def note_chunks(store: IndexStore, path: str) -> list[tuple[int, int, str, int]]:
    """A note's chunks in order: (id, line, heading, 1 when its vector is still to come)."""
    rows = store.conn.execute(
        "SELECT id, line, heading, vec = 0 AND ? FROM chunks WHERE path = ? ORDER BY ord",
        (1 if store.has_vec else 0, path),
    ).fetchall()
    return [(int(r[0]), int(r[1]), r[2], int(r[3])) for r in rows]


def note_texts(store: IndexStore, path: str) -> list[str]:
    """The text of each of a note's chunks."""
    rows = store.conn.execute("SELECT text FROM chunks WHERE path = ?", (path,)).fetchall()
    return [unpack_text(r[0]) for r in rows]


def chunk_at(store: IndexStore, path: str, line: int) -> int | None:
    """The id of the note's chunk holding `line` (the last one starting at or before it)."""
    row = store.conn.execute(
        "SELECT id FROM chunks WHERE path = ? AND line <= ? ORDER BY line DESC LIMIT 1",
        (path, line),
    ).fetchone()
    return int(row[0]) if row else None


def chunk_place(store: IndexStore, cid: int) -> tuple[int, str] | None:
    """The chunk's (line, heading path); None when the index holds no such chunk."""
    row = store.conn.execute("SELECT line, heading FROM chunks WHERE id = ?", (cid,)).fetchone()
    return (int(row[0]), str(row[1])) if row else None
