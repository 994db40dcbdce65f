"""One SQLite database per collection: connection, schema, profile.

apsw, not the stdlib sqlite3: it ships a current SQLite with FTS5 on every platform and can
load extensions (sqlite-vec) even where the Python build disabled that for sqlite3.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import apsw
import sqlite_vec

from ..errors import IndexError_

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 10_000


def connect(path: Path, readonly: bool = False) -> apsw.Connection:
    """Open (creating if needed) a collection index with WAL, busy timeout and sqlite-vec."""
    flags = (
        apsw.SQLITE_OPEN_READONLY
        if readonly
        else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    )
    try:
        conn = apsw.Connection(str(path), flags=flags)
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        if not readonly:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
    except apsw.FullError as e:
        raise IndexError_(
            f"cannot open index {path}: the disk is full ({e})",
            "Free some space (or set MEMO_INDEX_DIR to another disk) and run `memo index` again.",
        ) from e
    except apsw.Error as e:
        raise IndexError_(f"cannot open index {path}: {e}") from e
    return conn


def create_schema(conn: apsw.Connection, dim: int | None, profile: dict[str, Any]) -> None:
    """Create every table of an empty index and record the profile it was built with."""
    with conn:
        conn.execute(
            """
            CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS files(
                path TEXT PRIMARY KEY,      -- relative to the collection folder
                mtime_ns INTEGER NOT NULL,
                size INTEGER NOT NULL,
                hash TEXT NOT NULL,
                indexed_at REAL NOT NULL,
                status TEXT NOT NULL DEFAULT 'ok',   -- ok | skipped
                note TEXT NOT NULL DEFAULT '',       -- why skipped, or decode warnings
                updated TEXT,                        -- frontmatter `updated`, if any
                tags TEXT NOT NULL DEFAULT ''        -- frontmatter tags, space-separated
            );
            CREATE TABLE IF NOT EXISTS chunks(
                id INTEGER PRIMARY KEY,
                path TEXT NOT NULL,
                heading TEXT NOT NULL,
                line INTEGER NOT NULL,
                ord INTEGER NOT NULL,
                text TEXT NOT NULL,
                hash TEXT NOT NULL
            );
            CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
            -- contentless: the text lives in `chunks`; FTS5 keeps only the stem index.
            CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
                lex, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2'
            );
            CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks_fts, 'row');
            """
        )
        if dim:
            conn.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vec USING vec0("
                f"embedding float[{int(dim)}] distance_metric=cosine)"
            )
        conn.executemany(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
            [("profile", json.dumps(profile, sort_keys=True))],
        )


def read_profile(conn: apsw.Connection) -> dict[str, Any] | None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='profile'").fetchone()
    except apsw.SQLError:
        return None
    return json.loads(row[0]) if row else None


def has_vectors(conn: apsw.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='chunks_vec'"
    ).fetchone()
    return row is not None
