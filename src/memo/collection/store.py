"""One collection's index database: its schema, its profile, and an open handle on it.

The profile (schema, chunker, chunk budget, lexical analyser, model and dimension) is stored
in the database itself, in the same file as the data, so the two can never disagree. An index
whose profile differs from what this process would build is dropped and built again: the
notes are the truth, the database a cache.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from .. import sqlite
from ..errors import IndexError_
from . import links, windows
from .files import file_identity
from .lexical import FTS_TOKENIZE

# 2: files.skip, the kind of a skipped note (collection/skips.py); 3: VEC_CHUNK; 4: int8 vectors
# (collection/vectors.py: 384 bytes a vector, not 1,536; the rebuild salvages the float32 ones);
# 5: PAGE_SIZE, incremental vacuum, chunk text deflated (pack_text); 6: two stages (chunks.vec:
# a chunk is searchable lexically before its vector exists) and files.dropped (the coverage);
# 7: sentence windows (collection/windows.py: windows_vec, chunks.wins); 8: the link graph
# (collection/links.py: links, aliases, written with a note's chunks); 9: fewer windows (one only
# SPACING characters after the last: issue 44), the rebuild embedding none anew; 10: every
# language (chunks.lang, collection/langid.py; the stems by it, FTS5 folding no diacritic)
SCHEMA_VERSION = 10
# Slots per vec0 chunk. vec0 allocates a chunk whole: its default 1,024 slots of 384 float32 made
# every index >= 1.6 MB, 37 chunks or 1,000. At 64 a 37-chunk index is 0.13 MB; a KNN is 8x
# faster there, 1.6x faster at 500 chunks and 1.5x slower (+2 ms) at 5,000, where the query's
# embedding costs more anyway (git show lab-2026-12:bench/vec_chunks.py). Divisible by 8.
# Measured again for int8 (schema 4): a 64-slot chunk is 24.6 KB, a 37-chunk vec0 table 0.06 MB;
# its KNN is slower than float32's by 0.03 ms at 37 chunks, 0.1-0.2 ms at 500, even at 5,000.
VEC_CHUNK = 64
# Pages of 2 KiB, not SQLite's 4 KiB: an index has ~15 tables and indexes of one page each (vec0's
# and FTS5's shadow tables, meta, files...), so a small collection's file is mostly empty pages.
# (git show lab-2026-12:bench/index_layout.py): an empty index 100 -> 66 KB, 37 chunks 160 -> 126 KB
# (text deflated both), equal from 500 chunks on, search cost within noise at 37, 500 and 5,000;
# 1 KiB pages are smaller only below a few dozen chunks. With the text deflated, the Obsidian
# Help vault's 17 indexes take 3.06 MB instead of 4.54.
PAGE_SIZE = 2048
# Free pages a build leaves (FTS5's segment merges, notes reindexed) are given back when they are
# over an eighth of the file; below that the next writes reuse them.
FREE_SHARE = 8
# A damaged database file: drop it and rebuild from the notes. A damaged page can also hold text
# that is not UTF-8 (SQLite never checks it): apsw then fails to decode a value it reads.
CORRUPT = (apsw.CorruptError, apsw.NotADBError, UnicodeDecodeError)


def pack_text(text: str) -> str | bytes:
    """A chunk's text as stored: raw DEFLATE when that is shorter (about half, for prose in
    either alphabet), else the text itself. Only memo reads the column (FTS5 is contentless and
    indexes its own stemmed copy), through `unpack_text`."""
    raw = text.encode("utf-8")
    packed = zlib.compress(raw, 9, wbits=-15)
    return packed if len(packed) < len(raw) else text


def unpack_text(value: str | bytes) -> str:
    """The text `pack_text` stored; an older index's plain text as it is."""
    if isinstance(value, bytes):
        return zlib.decompress(value, wbits=-15).decode("utf-8")
    return value


def create_schema(conn: apsw.Connection, dim: int | None, profile: dict[str, Any]) -> None:
    """Create every table of an empty index and record the profile it was built with."""
    with sqlite.write_transaction(conn):
        _create_tables(conn, dim, profile)


def _empty(conn: apsw.Connection) -> bool:
    """No table at all: a file just created (by this process or another one)."""
    return conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0


def _create_tables(conn: apsw.Connection, dim: int | None, profile: dict[str, Any]) -> None:
    """Every table of an index, inside the caller's transaction, and its profile."""
    conn.execute(
        f"""
        CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS files(
            path TEXT PRIMARY KEY,      -- relative to the collection folder
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            hash TEXT NOT NULL,
            indexed_at REAL NOT NULL,
            status TEXT NOT NULL DEFAULT 'ok',   -- ok | skipped
            skip TEXT NOT NULL DEFAULT '',       -- skipped: its kind (collection/skips.py)
            note TEXT NOT NULL DEFAULT '',       -- why skipped, or decode warnings
            updated TEXT,                        -- frontmatter `updated`, if any
            tags TEXT NOT NULL DEFAULT '',       -- frontmatter tags, space-separated
            dropped TEXT NOT NULL DEFAULT ''     -- JSON [[first, last, why]]: lines with
                                                 -- words in no chunk (chunker.coverage)
        );
        CREATE TABLE IF NOT EXISTS chunks(
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL,
            heading TEXT NOT NULL,
            line INTEGER NOT NULL,
            ord INTEGER NOT NULL,
            text NOT NULL,              -- pack_text: deflated BLOB, or TEXT when shorter
            hash TEXT NOT NULL,
            vec INTEGER NOT NULL DEFAULT 0, -- 1 once its vector (and its windows') are stored
            wins INTEGER NOT NULL DEFAULT 0, -- its window vectors in windows_vec (windows.py)
            lang TEXT                   -- its language (langid.py), NULL when its words do not say
        );
        CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
        -- the vector stage's queue: chunks searchable lexically, their vectors to come
        CREATE INDEX IF NOT EXISTS chunks_novec ON chunks(id) WHERE vec = 0;
        -- contentless: the text lives in `chunks`; FTS5 keeps only the stem index.
        CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
            lex, content='', contentless_delete=1, tokenize="{FTS_TOKENIZE}"
        );
        CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks_fts, 'row');
        """
    )
    conn.execute(links.SCHEMA)
    if dim:
        create_vec_table(conn, "chunks_vec", dim)
    sqlite.write_profile(conn, profile)


def create_vec_table(conn: apsw.Connection, name: str, dim: int) -> None:
    """A vec0 table of int8 codes, one scale per vector (collection/vectors.py), in chunks of
    VEC_CHUNK slots: `chunks_vec`, or `windows_vec` with the first window stored."""
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {name} USING vec0("
        f"embedding int8[{int(dim)}] distance_metric=cosine, chunk_size={VEC_CHUNK})"
    )


def has_vector_table(conn: apsw.Connection, name: str = "chunks_vec") -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,))
    return row.fetchone() is not None


def has_windows(conn: apsw.Connection) -> bool:
    """The index holds sentence windows' vectors (schema 7 on): `windows_vec` is made with the
    first window stored, so a collection of short notes pays nothing for it (a vec0 table
    takes ~40 KB before its first row: one 64-slot chunk and its shadow tables)."""
    return has_vector_table(conn, "windows_vec")


LAYOUT = (f"PRAGMA page_size={PAGE_SIZE}", "PRAGMA auto_vacuum=INCREMENTAL")


def connect(path: Path, readonly: bool = False) -> apsw.Connection:
    """A collection index with sqlite-vec loaded (its vec0 table needs it even to be read); a new
    file gets memo's page size and incremental vacuum (`LAYOUT`), an existing one keeps its own."""
    return sqlite.connect(path, readonly=readonly, vectors=True, layout=LAYOUT)


MODEL_KEYS = ("model", "dim")


def compatible(have: dict[str, Any] | None, want: dict[str, Any]) -> bool:
    """Whether an index built with profile `have` serves a process that wants `want`.

    Equal profiles do. So does any model's index for a process without a model (lexical only:
    MEMO_EMBEDDER=none, or the model missing): it reads the lexical leg as it is and writes the
    notes it syncs without vectors, marked for the next process with a model to embed. Dropping
    the index instead threw every vector away (and, through the registry, the router's content
    summaries: issue 16).
    """
    if have is None or have == want:
        return have is not None
    if want.get("model") is not None:
        return False
    strip = lambda p: {k: v for k, v in p.items() if k not in MODEL_KEYS}  # noqa: E731
    return strip(have) == strip(want)


def _same_model(have: dict[str, Any], want: dict[str, Any]) -> bool:
    return all(have.get(k) == want.get(k) for k in MODEL_KEYS)


@dataclass(slots=True)
class IndexStore:
    """An open index whose profile matches this process's: the connection and what was learnt
    while opening it."""

    path: Path
    conn: apsw.Connection
    has_vec: bool  # the index has a vec0 table (fixed while it stays open)
    ino: tuple[int, int] | None  # (device, inode) of the file when opened

    @classmethod
    def open(
        cls,
        path: Path,
        want: dict[str, Any],
        folder: Path,
        salvage: Callable[[apsw.Connection], None] | None = None,
    ) -> tuple[IndexStore, str]:
        """Open the index at `path`, or drop and create it; returns it with why it was (re)built
        ('' when an existing index was simply opened). `salvage` reads an index about to be
        dropped whose vectors are this process's model's (same model and dimension: only the
        schema, chunker or analyser changed), so a rebuild need not embed its passages again."""
        reason = ""
        if path.exists():
            conn: apsw.Connection | None = None
            try:
                conn = connect(path)
                have = sqlite.read_profile(conn)
                if have is None and _empty(conn):
                    # Another process may be creating it right now: its schema commits in one
                    # transaction, so wait for the write lock and look again (deleting a file
                    # being created threw away what its creator wrote next).
                    with sqlite.write_transaction(conn):
                        have = sqlite.read_profile(conn)
                        if have is None and _empty(conn):
                            _create_tables(conn, want["dim"], want)
                            return cls._of(path, conn), reason or "new index"
            except (IndexError_, apsw.Error, *CORRUPT) as e:
                have, reason = None, f"index unreadable ({e})"
            if conn is not None and compatible(have, want):
                return cls._of(path, conn), ""
            if conn is not None:
                if salvage and have and want.get("model") and _same_model(have, want):
                    with contextlib.suppress(apsw.Error, *CORRUPT):  # best effort: a cache
                        if has_vector_table(conn):
                            salvage(conn)
                conn.close()
            if not reason:
                diff = sorted(k for k in want if (have or {}).get(k) != want[k])
                reason = (
                    f"index built with other {', '.join(diff)}" if have else "index has no profile"
                )
            sqlite.delete(path)
        if not folder.is_dir():  # deleted under us: never re-create it with mkdir(parents)
            raise IndexError_(
                f"collection folder {folder} does not exist",
                "It was moved or deleted; memo forgets it on the next scan.",
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise IndexError_(
                f"cannot create {path.parent}: {e.strerror or e}",
                "Make the collection folder writable, or set MEMO_INDEX_DIR to a writable folder.",
            ) from e
        conn = connect(path)
        create_schema(conn, want["dim"], want)
        return cls._of(path, conn), reason or "new index"

    @classmethod
    def _of(cls, path: Path, conn: apsw.Connection) -> IndexStore:
        # Each term's occurrences per row, for scoring under a search's own statistics
        # (collection/reads.py): a view over FTS5's index, per connection, nothing stored.
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_inst"
            " USING fts5vocab(main, chunks_fts, instance)"
        )
        return cls(path, conn, has_vector_table(conn), file_identity(path))

    def replaced(self) -> bool:
        """True when the file was deleted or replaced since it was opened (another process
        rebuilt it, or a person deleted `.memo/`): this handle reads a file nobody else sees."""
        return file_identity(self.path) != self.ino

    def changes(self) -> tuple[int, int, int]:
        """What changes when the index changed, the one key every cache of an index's content
        is kept under (its vectors in memory: matrix.py; its notes and aliases: links.py): the
        connection, SQLite's data_version (another connection committed) and the connection's
        own total_changes (it wrote)."""
        (version,) = self.conn.execute("PRAGMA data_version").fetchone()
        return id(self.conn), int(version), int(self.conn.total_changes())

    def write(self) -> contextlib.AbstractContextManager[None]:
        return sqlite.write_transaction(self.conn)

    def close(self) -> None:
        self.conn.close()

    def compact(self) -> None:
        """Give the file's free pages back to the disk when they are over 1/FREE_SHARE of it
        (after a sync that wrote; an index of incremental vacuum only)."""
        conn = self.conn
        ((free,),) = conn.execute("PRAGMA freelist_count").fetchall()
        ((pages,),) = conn.execute("PRAGMA page_count").fetchall()
        if free and free * FREE_SHARE > pages:
            ((mode,),) = conn.execute("PRAGMA auto_vacuum").fetchall()
            if mode == 2:  # INCREMENTAL
                conn.execute("PRAGMA incremental_vacuum").fetchall()

    def chunk_count(self) -> int:
        (n,) = self.conn.execute("SELECT count(*) FROM chunks").fetchone()
        return int(n)

    def pending(self) -> int:
        """Chunks searchable lexically whose vector is still to come (0 without vectors)."""
        return pending_count(self.conn) if self.has_vec else 0


def pending_count(conn: apsw.Connection) -> int:
    """Chunks of an index with vectors that have none yet (the vector stage's queue)."""
    (n,) = conn.execute("SELECT count(*) FROM chunks WHERE vec = 0").fetchone()
    return int(n)


@contextlib.contextmanager
def reading(path: Path) -> Iterator[apsw.Connection]:
    """A short read-only look at an index that may belong to another process (status, the
    registry's summary), never creating or changing it."""
    conn = connect(path, readonly=True)
    try:
        yield conn
    finally:
        conn.close()


def store_vectors(conn: Any, cid: int, code: bytes, wins: list[bytes]) -> None:
    """A chunk's int8 vector and its windows' (collection/windows.py), in the index."""
    conn.execute("INSERT INTO chunks_vec(rowid, embedding) VALUES (?, vec_int8(?))", (cid, code))
    if wins:  # one byte a dimension: the codes say the table's width
        create_vec_table(conn, "windows_vec", len(code))
    for k, w in enumerate(wins):
        conn.execute(
            "INSERT INTO windows_vec(rowid, embedding) VALUES (?, vec_int8(?))",
            (windows.rowid(cid, k), w),
        )


def window_codes(conn: Any, cid: int, count: int) -> list[bytes] | None:
    """The int8 codes of a chunk's `count` windows, in order; None if one is missing."""
    return window_codes_of(conn, [(cid, count)]).get(cid)


def window_codes_of(conn: Any, chunks: Sequence[tuple[int, int]]) -> dict[int, list[bytes]]:
    """The same for many (chunk id, window count) pairs, read at once, by chunk id; a chunk one
    of whose windows is missing is left out (one without windows has [])."""
    got = dict(window_rows(conn, [w for cid, n in chunks for w in windows.rowids(cid, n)]))
    out = {}
    for cid, n in chunks:
        ids = windows.rowids(cid, n)
        if all(i in got for i in ids):
            out[cid] = [bytes(got[i]) for i in ids]
    return out


_IN_BATCH = 500  # rowids per `IN (...)`: under SQLite's limit on host parameters


def window_rows(conn: Any, ids: list[int]) -> list[tuple[int, bytes]]:
    """(rowid, int8 codes) of these stored windows, any number of them."""
    out: list[tuple[int, bytes]] = []
    for i in range(0, len(ids), _IN_BATCH):
        part = ids[i : i + _IN_BATCH]
        marks = ",".join("?" * len(part))
        sql = f"SELECT rowid, embedding FROM windows_vec WHERE rowid IN ({marks})"
        out += conn.execute(sql, part).fetchall()
    return out
