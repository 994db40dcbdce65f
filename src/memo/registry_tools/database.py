"""The router index on disk (`.memo/registry.db`): one row per collection, FTS, vectors.

Tables: `colls` (each collection's `_meta.yaml` fields, file stamp, index summary and the
generation of its last change; `colls_gone` the rows deleted, with theirs, so readers in other
processes catch up by generation), `colls_fts` (stems of name, path words, description, tags and
headings as `lex`, the collection's top content stems as `body`), `colls_vec` (one e5 vector per
description, float32) and `colls_cvec` (one centroid of the chunk vectors, float16, by the index
signature it came from). A database of another schema or stemmer is void: deleted and rebuilt
whole. Its vectors belong to one model (`meta.vectors_model`): a process with another model
clears them alone, one without a model leaves them; the content summaries are never thrown away.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from .. import sqlite
from ..collection.lexical import FTS_TOKENIZE, lex_text
from ..errors import IndexError_
from .entry import COLUMNS, FIELDS, Entry, from_row, to_row

REGISTRY_DB = "registry.db"
REGISTRY_SCHEMA = 7  # 6: languages; 7: FTS5 folds no diacritic (lexical.FTS_TOKENIZE)
# Stored vectors: description vectors (float32) and content centroids (float16, half the bytes).
VECTOR_TABLES = {"colls_vec": np.float32, "colls_cvec": np.float16}
_UPDATE_ROW = f"UPDATE colls SET {', '.join(f + '=?' for f in FIELDS)}, gen=? WHERE id=?"
_INSERT_ROW = (
    f"INSERT INTO colls({', '.join(FIELDS)}, gen) VALUES ({','.join('?' * (len(FIELDS) + 1))})"
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS colls(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    tags TEXT NOT NULL,          -- JSON list
    embedder TEXT,
    chunker TEXT,
    mtime_ns INTEGER NOT NULL,   -- of _meta.yaml
    size INTEGER NOT NULL,
    hash TEXT NOT NULL,
    error TEXT NOT NULL DEFAULT '',
    files INTEGER,
    chunks INTEGER,
    last_indexed REAL,
    headings TEXT NOT NULL DEFAULT '',
    content TEXT NOT NULL DEFAULT '',      -- top content stems
    content_sig TEXT NOT NULL DEFAULT '',  -- index (mtime, size) they came from
    languages TEXT NOT NULL DEFAULT '',    -- share of the chunks per language
    gen INTEGER NOT NULL DEFAULT 0         -- generation of its last change
);
CREATE INDEX IF NOT EXISTS colls_gen ON colls(gen);
-- rows deleted, with the generation that deleted them (readers catch up by gen)
CREATE TABLE IF NOT EXISTS colls_gone(id INTEGER PRIMARY KEY, gen INTEGER NOT NULL);
-- lex: name, path words, description, tags, headings; body: content stems.
CREATE VIRTUAL TABLE IF NOT EXISTS colls_fts USING fts5(
    lex, body, content='', contentless_delete=1,
    tokenize="{FTS_TOKENIZE}"
);
CREATE TABLE IF NOT EXISTS colls_vec(id INTEGER PRIMARY KEY, hash TEXT NOT NULL, v BLOB NOT NULL);
-- the centroid of a collection's chunk vectors (float16), by content_sig
CREATE TABLE IF NOT EXISTS colls_cvec(id INTEGER PRIMARY KEY, sig TEXT NOT NULL, v BLOB NOT NULL);
"""
_SCHEMA = _SCHEMA.replace("{FTS_TOKENIZE}", FTS_TOKENIZE)


class RegistryStore:
    """The registry database of one library; opened lazily, rebuilt when its profile differs."""

    def __init__(self, folder: Path, profile: dict[str, Any]) -> None:
        self.folder = folder
        self.path = folder / REGISTRY_DB
        self.profile = profile
        self._conn: apsw.Connection | None = None
        self.created = False  # this process created the database (it must be filled whole)

    @property
    def conn(self) -> apsw.Connection:
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def _open(self) -> apsw.Connection:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            conn = sqlite.connect(self.path)
            if sqlite.read_profile(conn) != self.profile:  # another schema or stemmer
                conn.close()
                sqlite.delete(self.path)
                conn = sqlite.connect(self.path)
                with conn:
                    conn.execute(_SCHEMA)
                    sqlite.write_profile(conn, self.profile)
                    conn.execute(
                        "INSERT OR REPLACE INTO meta(key, value) VALUES ('generation', '0'),"
                        " ('scanned_at', '0')"
                    )
                self.created = True
        except (OSError, apsw.Error, IndexError_) as e:
            raise IndexError_(
                f"cannot open the router index {self.path}: {e}",
                "Delete it (memo rebuilds it), or set MEMO_INDEX_DIR to a writable folder.",
            ) from e
        return conn

    def claim_vectors(self, model: str) -> bool:
        """Make the stored vectors `model`'s: those of another model are deleted (the
        descriptions are embedded again, the centroids read again from the indexes). True
        when vectors were cleared."""
        have = self.value("vectors_model")
        if have == model:
            return False
        with sqlite.write_transaction(self.conn):
            self.conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('vectors_model', ?)", (model,)
            )
            if have is None:  # no model wrote here yet: the centroids came from the indexes
                return False
            gen = _next_generation(self.conn)
            self.conn.execute("DELETE FROM colls_vec")
            self.conn.execute("DELETE FROM colls_cvec")
            self.conn.execute("UPDATE colls SET content_sig = '', gen = ?", (gen,))
        return True

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # ------------------------------------------------------------------ reading
    def value(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def generation(self) -> int:
        return int(self.value("generation") or 0)

    def rows(self, since: int | None = None, limit: int | None = None) -> list[Entry]:
        """Every row sorted by path, or the rows changed after generation `since` (at most
        `limit`)."""

        if since is None:
            cur = self.conn.execute(f"SELECT {COLUMNS} FROM colls ORDER BY path")
        else:
            cur = self.conn.execute(
                f"SELECT {COLUMNS} FROM colls WHERE gen > ? LIMIT ?", (since, limit or -1)
            )
        return [from_row(r) for r in cur]

    def deleted_since(self, gen: int) -> bool:
        return bool(
            self.conn.execute("SELECT 1 FROM colls_gone WHERE gen > ? LIMIT 1", (gen,)).fetchone()
        )

    def vectors(
        self, table: str, dim: int, row_of: dict[int, int], n: int, ids: list[int] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(float32 matrix, has mask) of the vectors in `table` (VECTOR_TABLES), row i for the
        id `row_of` maps to i; zero rows where none is stored. `ids`: read only those."""
        dtype = VECTOR_TABLES[table]
        where = ""
        params: tuple[int, ...] = ()
        if ids is not None:
            where, params = f" WHERE id IN ({','.join('?' * len(ids))})", tuple(ids)
        mat = np.zeros((n, dim), dtype=np.float32)
        has = np.zeros(n, dtype=bool)
        for rid, blob in self.conn.execute(f"SELECT id, v FROM {table}{where}", params):
            i = row_of.get(rid)
            if i is not None and len(blob) == np.dtype(dtype).itemsize * dim:
                mat[i] = np.frombuffer(blob, dtype=dtype)
                has[i] = True
        return mat, has

    def description_hashes(self) -> dict[int, str]:
        """Row id -> text hash of the description its stored vector was made from."""
        return dict(self.conn.execute("SELECT id, hash FROM colls_vec"))

    def search(self, match: str, limit: int) -> list[int]:
        """Row ids matching an FTS5 expression, best BM25 first."""
        # ORDER BY bm25(), not rank: FTS5's rank sorter prepares a statement on every query.
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT rowid FROM colls_fts WHERE colls_fts MATCH ? ORDER BY bm25(colls_fts)"
                " LIMIT ?",
                (match, limit),
            )
        ]

    def row_counts(self, stems: list[str]) -> dict[str, int]:
        """How many rows hold each stem (fts5vocab walks the stem's postings)."""
        self.conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.colls_vocab"
            " USING fts5vocab(main, colls_fts, row)"
        )
        marks = ",".join("?" * len(stems))
        out = {t: 0 for t in stems}
        out.update(
            self.conn.execute(
                f"SELECT term, doc FROM temp.colls_vocab WHERE term IN ({marks})", stems
            )
        )
        return out

    # ------------------------------------------------------------------ writing
    def set_scanned(self, when: float) -> None:
        self.conn.execute("UPDATE meta SET value=? WHERE key='scanned_at'", (repr(when),))

    def write(
        self, upserts: list[Entry], gone: list[Entry], centroids: dict[str, bytes | None]
    ) -> None:
        """Rows in, rows out, in one transaction of a new generation. New rows get their id.

        `centroids` (path -> blob, None: delete) is consumed for the rows written."""
        conn = self.conn
        with sqlite.write_transaction(conn):
            gen = _next_generation(conn)
            for e in gone:
                conn.execute(
                    "INSERT OR REPLACE INTO colls_gone(id, gen) VALUES (?, ?)", (e.id, gen)
                )
                for table in ("colls", "colls_vec", "colls_cvec"):
                    conn.execute(f"DELETE FROM {table} WHERE id=?", (e.id,))
                conn.execute("DELETE FROM colls_fts WHERE rowid=?", (e.id,))
            for e in upserts:
                values = (*to_row(e), gen)
                # Another process (a search's catch-up beside `memo index`) may have written
                # this path since our scan: its row is updated, never inserted twice.
                e.id = _row_id(conn, e) or 0
                if e.id:
                    conn.execute(_UPDATE_ROW, (*values, e.id))
                    conn.execute("DELETE FROM colls_fts WHERE rowid=?", (e.id,))
                else:
                    conn.execute(_INSERT_ROW, values)
                    e.id = conn.last_insert_rowid()
                if not e.error:
                    conn.execute(
                        "INSERT INTO colls_fts(rowid, lex, body) VALUES (?, ?, ?)",
                        (e.id, lex_text(e.doc_text()), e.content),
                    )
                if e.path in centroids:
                    blob = centroids.pop(e.path)
                    conn.execute("DELETE FROM colls_cvec WHERE id=?", (e.id,))
                    if blob is not None:
                        conn.execute(
                            "INSERT INTO colls_cvec(id, sig, v) VALUES (?, ?, ?)",
                            (e.id, e.content_sig, blob),
                        )

    def write_vectors(self, rows: Iterable[tuple[int, str, bytes]]) -> None:
        """Description vectors (id, text hash, float32 blob), and a new generation for their
        rows so other readers pick them up."""
        rows = list(rows)
        with sqlite.write_transaction(self.conn):
            self.conn.executemany(
                "INSERT OR REPLACE INTO colls_vec(id, hash, v) VALUES (?, ?, ?)", rows
            )
            gen = _next_generation(self.conn)
            self.conn.executemany("UPDATE colls SET gen=? WHERE id=?", [(gen, r[0]) for r in rows])


def _row_id(conn: apsw.Connection, e: Entry) -> int | None:
    """The row of `e`'s path as it stands inside this transaction (its id when it still holds
    it, else whatever row another writer gave that path, else none)."""
    row = conn.execute("SELECT id FROM colls WHERE path=?", (e.path,)).fetchone()
    return row[0] if row else None


def _next_generation(conn: apsw.Connection) -> int:
    """Bump the registry's generation and return it (inside the caller's transaction)."""
    conn.execute("UPDATE meta SET value=CAST(value AS INTEGER)+1 WHERE key='generation'")
    (gen,) = conn.execute(
        "SELECT CAST(value AS INTEGER) FROM meta WHERE key='generation'"
    ).fetchone()
    return int(gen)
