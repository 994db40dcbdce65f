"""The registry: every collection of a library, its `_meta.yaml` and the router index over them.

Two caches, both rebuilt from the `_meta.yaml` files whenever they are missing:

- `_registry.yaml` at the library root: the human-readable list (name, path, description, tags,
  embedder, files, chunks, last indexed), sorted by path so it diffs well. Written by
  `memo registry rebuild`; kept current by later refreshes once it exists (memo does not drop
  files into a notes tree unasked).
- `.memo/registry.db` (SQLite): one row per collection with the meta file's (mtime, size, hash),
  an FTS5 index over the stems of name, path, description and tags, and one e5 vector per
  description. The router reads it (router/).

A refresh walks the tree (folders only, no notes), stats every `_meta.yaml`, and parses only
those whose (mtime, size) moved and whose bytes differ: 100,000 unchanged collections cost one
walk and 100,000 stats, no YAML. Description vectors are computed for new or changed
descriptions only; `embed_limit` bounds that work inside a search call (the rest waits for an
explicit rebuild, and the router says so).
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from ..collection import db as dbm
from ..collection.collection import index_dir_for
from ..collection.files import find_collections
from ..collection.lexical import LEXICAL_VERSION, _stem, lex_text
from ..collection.meta import META_FILE, CollectionMeta, load_meta
from ..collection.stopwords import ALL as STOPWORDS
from ..config import Settings, cache_home
from ..embed import Embedder
from ..errors import EmbedderUnavailableError, IndexError_, MemoError

REGISTRY_FILE = "_registry.yaml"
REGISTRY_DB = "registry.db"
REGISTRY_SCHEMA = 4
EMBED_BATCH = 64
BUSY_TIMEOUT_MS = 10_000


@dataclass(slots=True)
class Entry:
    """One collection as the registry knows it."""

    path: str  # relative to the root, posix; '.' for a collection at the root itself
    name: str
    description: str
    tags: tuple[str, ...]
    embedder: str | None
    chunker: str | None
    mtime_ns: int
    size: int
    hash: str
    error: str = ""  # a broken _meta.yaml: listed with the reason, never routed to
    files: int | None = None
    chunks: int | None = None
    last_indexed: float | None = None
    headings: str = ""  # the notes' headings, from the collection's index: routing vocabulary
    content: str = ""  # the collection's most frequent content stems (see content_summary)
    content_sig: str = ""  # the index files' (mtime, size) when `content` was read
    id: int = 0

    def meta(self) -> CollectionMeta:
        return CollectionMeta(self.name, self.description, self.tags, self.embedder, self.chunker)

    def doc_text(self) -> str:
        """What the router indexes for this collection: name, path words, description, tags."""
        words = self.path.replace("/", " ").replace("-", " ").replace("_", " ")
        text = f"{self.name}. {words}. {self.description} {' '.join(self.tags)}"
        return f"{text}\n{self.headings}".strip()

    def embed_text(self) -> str:
        return f"{self.name}: {self.description} {', '.join(self.tags)}".strip()

    def text_hash(self) -> str:
        return _hash(self.embed_text().encode("utf-8"))

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "name": self.name}
        if self.error:
            out["error"] = self.error
            return out
        out["description"] = self.description
        out["tags"] = list(self.tags)
        if self.embedder:
            out["embedder"] = self.embedder
        out["files"] = self.files
        out["chunks"] = self.chunks
        out["last_indexed"] = (
            time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.last_indexed))
            if self.last_indexed
            else None
        )
        return out


@dataclass(slots=True)
class RefreshReport:
    collections: int = 0
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    embedded: int = 0
    not_embedded: int = 0  # descriptions still waiting for a vector
    seconds: float = 0.0
    walk_seconds: float = 0.0
    embed_seconds: float = 0.0
    wrote_yaml: bool = False

    @property
    def changed_any(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "collections": self.collections,
            "added": self.added,
            "changed": self.changed,
            "removed": self.removed,
            "errors": self.errors,
            "embedded": self.embedded,
            "not_embedded": self.not_embedded,
            "seconds": round(self.seconds, 3),
            "walk_seconds": round(self.walk_seconds, 3),
            "embed_seconds": round(self.embed_seconds, 3),
            "wrote_yaml": self.wrote_yaml,
        }


def _hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class Registry:
    """The collections of one library root, loaded in memory, sorted by path."""

    def __init__(self, root: Path, embedder: Embedder | None, settings: Settings | None = None):
        self.root = root
        self.embedder = embedder
        self.settings = settings or Settings()
        self.entries: list[Entry] = []  # sorted by path
        self._paths: list[str] = []
        self._by_id: dict[int, int] = {}  # row id -> position in entries
        self._conn: apsw.Connection | None = None
        self._generation = -1
        self.scanned_at = 0.0
        self._vectors: np.ndarray | None = None  # (n, dim) aligned with entries; zero = none
        self._has_vec: np.ndarray | None = None  # bool (n,)
        # content centroids, like _vectors: (n, dim) aligned with entries, and a has-mask
        self._content_vectors: tuple[np.ndarray, np.ndarray] | None = None
        self._pending_cvec: dict[str, bytes | None] = {}  # path -> centroid to write
        self._ok: np.ndarray | None = None  # bool (n,): entries without a broken meta
        # What readers derive from the loaded rows and vectors (the router's merged vectors,
        # stem row counts): dropped whenever those change.
        self.derived: dict[str, Any] = {}
        # Positions changed in place since the last full read (a reader of `derived` that kept
        # per-position data updates those rows; see router._merged).
        self.patched: list[int] = []

    # ------------------------------------------------------------------ where
    @property
    def folder(self) -> Path:
        """Where registry.db lives: <root>/.memo, MEMO_INDEX_DIR, or the user cache."""
        base = self.settings.index_dir
        if base is None and os.access(self.root, os.W_OK):
            return self.root / ".memo"
        base = base or cache_home() / "memo" / "indexes"
        real = os.path.realpath(self.root)
        slug = "".join(c if c.isalnum() else "-" for c in self.root.name)[:40]
        return base / f"_registry-{slug}-{_hash(real.encode())[:12]}"

    @property
    def db_path(self) -> Path:
        return self.folder / REGISTRY_DB

    @property
    def yaml_path(self) -> Path:
        """<root>/_registry.yaml, beside the notes; elsewhere only when the root is read-only."""
        if os.access(self.root, os.W_OK):
            return self.root / REGISTRY_FILE
        return self.folder / REGISTRY_FILE

    def profile(self) -> dict[str, Any]:
        e = self.embedder
        return {
            "schema": REGISTRY_SCHEMA,
            "lexical": LEXICAL_VERSION,
            "model": e.model_id if e is not None else None,
        }

    # ------------------------------------------------------------------ database
    def _db(self) -> apsw.Connection:
        if self._conn is not None:
            return self._conn
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            conn = self._connect()
            want = json.dumps(self.profile(), sort_keys=True)
            have = None
            with contextlib.suppress(apsw.SQLError):
                row = conn.execute("SELECT value FROM meta WHERE key='profile'").fetchone()
                have = row[0] if row else None
            if have != want:  # another schema, stemmer or model: this cache is void
                conn.close()
                for suffix in ("", "-wal", "-shm"):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(f"{self.db_path}{suffix}")
                conn = self._connect()
                self._create(conn, want)
        except (OSError, apsw.Error) as e:
            raise IndexError_(
                f"cannot open the router index {self.db_path}: {e}",
                "Delete it (memo rebuilds it), or set MEMO_INDEX_DIR to a writable folder.",
            ) from e
        self._conn = conn
        return conn

    def _connect(self) -> apsw.Connection:
        conn = apsw.Connection(str(self.db_path))
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    @staticmethod
    def _create(conn: apsw.Connection, profile: str) -> None:
        with conn:
            conn.execute(
                """
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
                    gen INTEGER NOT NULL DEFAULT 0         -- generation of its last change
                );
                CREATE INDEX IF NOT EXISTS colls_gen ON colls(gen);
                -- rows deleted, with the generation that deleted them (readers catch up by gen)
                CREATE TABLE IF NOT EXISTS colls_gone(id INTEGER PRIMARY KEY, gen INTEGER NOT NULL);
                -- lex: name, path words, description, tags, headings; body: content stems.
                CREATE VIRTUAL TABLE IF NOT EXISTS colls_fts USING fts5(
                    lex, body, content='', contentless_delete=1,
                    tokenize='unicode61 remove_diacritics 2'
                );
                CREATE TABLE IF NOT EXISTS colls_vec(
                    id INTEGER PRIMARY KEY, hash TEXT NOT NULL, v BLOB NOT NULL
                );
                -- the centroid of a collection's chunk vectors (float16), by content_sig
                CREATE TABLE IF NOT EXISTS colls_cvec(
                    id INTEGER PRIMARY KEY, sig TEXT NOT NULL, v BLOB NOT NULL
                );
                """
            )
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('profile', ?), "
                "('generation', '0'), ('scanned_at', '0')",
                (profile,),
            )

    def _meta_value(self, key: str) -> str | None:
        row = self._db().execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # ------------------------------------------------------------------ loading
    def load(self) -> None:
        """(Re)read the registry from its database if another process (or a refresh) changed it.

        A change that only updated existing rows (a collection's stats after a sync, an edited
        description) is applied in place: at 100,000 collections re-reading every row, vector
        and centroid took seconds after each watcher sync. Added, removed or moved collections
        shift positions: then everything is read again.
        """
        gen = int(self._meta_value("generation") or 0)
        self.scanned_at = float(self._meta_value("scanned_at") or 0)
        if gen == self._generation:
            return
        # Patch only forward, and not forever: a generation that went back means a new database
        # (deleted and rebuilt), and a long patch log means a full read is due anyway.
        patchable = 0 <= self._generation < gen and len(self.patched) < PATCH_LOG_MAX
        if patchable and self._patch(self._generation):
            self.derived.pop("df", None)  # stem row counts; the router patches what else it keeps
        else:
            rows = self._db().execute(f"SELECT {_COLUMNS} FROM colls ORDER BY path")
            self.entries = [_row_entry(r) for r in rows]
            self._paths = [e.path for e in self.entries]
            self._by_id = {e.id: i for i, e in enumerate(self.entries)}
            self._ok = np.array([not e.error for e in self.entries], dtype=bool)
            self._vectors = self._has_vec = None
            self._content_vectors = None
            self.patched = []
            self.derived.clear()
        self._generation = gen

    def _patch(self, since: int) -> bool:
        """Apply the rows changed after generation `since` in place; False if positions move."""
        conn = self._db()
        if conn.execute("SELECT 1 FROM colls_gone WHERE gen > ? LIMIT 1", (since,)).fetchone():
            return False
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM colls WHERE gen > ? LIMIT ?", (since, PATCH_MAX + 1)
        ).fetchall()
        if len(rows) > PATCH_MAX:
            return False
        changed = [(self._by_id.get(r[0]), _row_entry(r)) for r in rows]
        if any(pos is None or self.entries[pos].path != e.path for pos, e in changed):
            return False
        for pos, e in changed:
            assert pos is not None
            self.entries[pos] = e
            self.ok_mask()[pos] = not e.error
            self.patched.append(pos)
        ids = [e.id for _, e in changed]
        if self._vectors is not None and self._has_vec is not None:
            self._patch_matrix("colls_vec", ids, self._vectors, self._has_vec)
        if self._content_vectors is not None:
            mat, has = self._content_vectors
            self._patch_matrix("colls_cvec", ids, mat, has)
        return True

    def _patch_matrix(self, table: str, ids: list[int], mat: np.ndarray, has: np.ndarray) -> None:
        """Re-read these rows' vectors from `table` into the loaded matrix (zero: none)."""
        pos = [self._by_id[rid] for rid in ids]
        mat[pos], has[pos] = self._matrix(table, ids)

    @property
    def loaded(self) -> bool:
        return self._generation >= 0

    def ok_entries(self) -> list[Entry]:
        return [e for e in self.entries if not e.error]

    def ok_mask(self) -> np.ndarray:
        """bool (n,) aligned with entries: True where the meta is valid (routable)."""
        if self._ok is None or len(self._ok) != len(self.entries):
            self._ok = np.array([not e.error for e in self.entries], dtype=bool)
        return self._ok

    def select(self, prefix: str | None) -> list[range]:
        """Positions of the entries a prefix covers, as ranges of the path-sorted list.

        `work` or `work/` or `work/*`: the collection `work` and everything below `work/` (never
        `work-old`); `work/j*`: every path starting with `work/j`; ''/'.'/'*'/None: all.
        """
        p = (prefix or "").strip()
        if p in ("", ".", "*", "/", "/*"):
            return [range(len(self.entries))]
        if p.endswith("/*"):
            p = p[:-2]
        elif p.endswith("*"):
            start = p.rstrip("*").lstrip("/")
            return [range(*self._between(start, start + "\U0010ffff"))]
        p = p.strip("/")
        out = []
        lo, hi = self._between(p, p + "\x00")
        if hi > lo:
            out.append(range(lo, hi))
        out.append(range(*self._between(p + "/", p + "/\U0010ffff")))
        return out

    def _between(self, a: str, b: str) -> tuple[int, int]:
        return bisect.bisect_left(self._paths, a), bisect.bisect_left(self._paths, b)

    def position(self, row_id: int) -> int | None:
        return self._by_id.get(row_id)

    # ------------------------------------------------------------------ vectors
    def vectors(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(matrix aligned with entries, has-vector mask), or None without a model."""
        if self.embedder is None:
            return None
        if self._vectors is None:
            self._vectors, self._has_vec = self._matrix("colls_vec")
        assert self._has_vec is not None
        return self._vectors, self._has_vec

    def content_vectors(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(matrix aligned with entries, has-centroid mask): each indexed collection's chunk
        centroid, zero rows elsewhere; None without a model."""
        if self.embedder is None:
            return None
        if self._content_vectors is None:
            self._content_vectors = self._matrix("colls_cvec")
        return self._content_vectors

    def vectors_at(
        self, positions: list[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(description rows, has, centroid rows, has) of these positions, read from the
        database (zero rows where none): what a reader needs to patch what it derived."""
        ids = [self.entries[p].id for p in positions]
        return (*self._matrix("colls_vec", ids), *self._matrix("colls_cvec", ids))

    def _matrix(self, table: str, ids: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(float32 matrix, has mask) of the vectors stored in `table` (_VECTOR_TABLES): rows
        aligned with the entries, or with `ids` when given; zero rows where none is stored."""
        assert self.embedder is not None
        dtype = _VECTOR_TABLES[table]
        dim = self.embedder.dim
        if ids is None:
            where, params, row_of = "", (), self._by_id
        else:
            where = f" WHERE id IN ({','.join('?' * len(ids))})"
            params, row_of = tuple(ids), {rid: i for i, rid in enumerate(ids)}
        n = len(self.entries) if ids is None else len(ids)
        mat = np.zeros((n, dim), dtype=np.float32)
        has = np.zeros(n, dtype=bool)
        for rid, blob in self._db().execute(f"SELECT id, v FROM {table}{where}", params):
            i = row_of.get(rid)
            if i is not None and len(blob) == np.dtype(dtype).itemsize * dim:
                mat[i] = np.frombuffer(blob, dtype=dtype)
                has[i] = True
        return mat, has

    def release_vectors(self) -> None:
        """Forget the loaded matrices (a reader derived what it needs); reloaded on demand."""
        self._vectors = self._has_vec = self._content_vectors = None

    # ------------------------------------------------------------------ refresh
    def refresh(
        self,
        embed_limit: int | None = None,
        stats: bool = False,
        write_yaml: bool | None = None,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> RefreshReport:
        """Bring the registry in line with the `_meta.yaml` files under the root.

        `embed_limit`: embed at most this many new descriptions now (None = all).
        `stats`: also read files/chunks/last-indexed from every collection's index.
        `write_yaml`: write _registry.yaml (default: only if it exists already).
        """
        t0 = time.perf_counter()
        self.load()
        rep = RefreshReport()
        folders = find_collections(self.root)
        rep.walk_seconds = time.perf_counter() - t0
        known = {e.path: e for e in self.entries}
        seen: set[str] = set()
        upserts: list[Entry] = []
        for folder in folders:
            rel = self._rel(folder)
            seen.add(rel)
            old = known.get(rel)
            try:
                st = os.stat(folder / META_FILE)
            except OSError:
                continue  # vanished since the walk
            if old is not None and (old.mtime_ns, old.size) == (st.st_mtime_ns, st.st_size):
                continue
            try:
                raw = (folder / META_FILE).read_bytes()
            except OSError:
                continue
            digest = _hash(raw)
            if old is not None and old.hash == digest:
                old.mtime_ns, old.size = st.st_mtime_ns, st.st_size
                upserts.append(old)  # same bytes, new stat: remember the stat only
                continue
            entry = _entry(folder, rel, st, digest, raw)
            entry.id = old.id if old is not None else 0
            if old is not None:
                entry.files, entry.chunks, entry.last_indexed, entry.headings = (
                    old.files,
                    old.chunks,
                    old.last_indexed,
                    old.headings,
                )
                entry.content, entry.content_sig = old.content, old.content_sig
            (rep.changed if old is not None else rep.added).append(rel)
            upserts.append(entry)
        gone = [known[p] for p in known if p not in seen]
        rep.removed = sorted(e.path for e in gone)
        if stats:
            upserts.extend(self._read_stats(folders, known, upserts))
        if upserts or gone:
            self._write(upserts, gone, rep)
        self._db().execute("UPDATE meta SET value=? WHERE key='scanned_at'", (repr(time.time()),))
        self.load()
        rep.errors = [f"{e.path}/{META_FILE}: {e.error}" for e in self.entries if e.error]
        rep.collections = len(self.entries) - len(rep.errors)
        self._embed_missing(rep, embed_limit, progress)
        if write_yaml or (write_yaml is None and rep.changed_any and self.yaml_path.exists()):
            self.write_yaml()
            rep.wrote_yaml = True
        rep.seconds = time.perf_counter() - t0
        return rep

    def update_stats(self, folders: Iterable[Path]) -> RefreshReport:
        """Re-read the index facts and content summary of these collections (after a sync).

        Cheap for an index that has not moved (one stat); the rest of the registry is untouched.
        """
        t0 = time.perf_counter()
        self.load()
        rep = RefreshReport()
        upserts = self._read_stats(folders, {e.path: e for e in self.entries}, [])
        if upserts:
            self._write(upserts, [], rep)
            self.load()
        rep.collections = len(self.entries)
        rep.seconds = time.perf_counter() - t0
        return rep

    def _read_stats(
        self, folders: Iterable[Path], known: dict[str, Entry], upserts: list[Entry]
    ) -> list[Entry]:
        """files/chunks/last_indexed from each collection's index (read-only, no model)."""
        pending = {e.path: e for e in upserts}
        out = []
        # The walk never follows a symlinked folder, so a collection's real path is the root's
        # real path + its relative path: one realpath() for all of them.
        root_real = os.path.realpath(self.root)
        for folder in folders:
            rel = self._rel(folder)
            e = pending.get(rel) or known.get(rel)
            if e is None or e.error:
                continue
            local = os.path.join(folder, ".memo", "index.db")
            if self.settings.index_dir is None and os.path.exists(local):
                path = Path(local)
            else:  # MEMO_INDEX_DIR or a read-only folder
                real = root_real if rel == "." else os.path.join(root_real, rel)
                path = index_dir_for(folder, self.settings, real) / "index.db"
            sig = _index_sig(path)
            if not sig:
                new: tuple[Any, ...] = (0, 0, None, "", "", "")
            elif sig == e.content_sig:  # the index has not moved since the last read
                continue
            else:
                try:
                    conn = dbm.connect(path, readonly=True)
                    try:
                        (files,) = conn.execute(
                            "SELECT count(*) FROM files WHERE status='ok'"
                        ).fetchone()
                        (chunks,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
                        (last,) = conn.execute("SELECT max(indexed_at) FROM files").fetchone()
                        heads = _headings(conn)
                        stems, centroid = content_summary(conn)
                    finally:
                        conn.close()
                    new = (int(files), int(chunks), last, heads, stems, sig)
                    self._pending_cvec[rel] = centroid
                except (apsw.Error, MemoError):
                    new = (None, None, None, "", "", "")
            old = (e.files, e.chunks, e.last_indexed, e.headings, e.content, e.content_sig)
            if old != new:
                if not new[5] and e.content_sig:  # the index is gone: so is its centroid
                    self._pending_cvec[rel] = None
                (e.files, e.chunks, e.last_indexed, e.headings, e.content, e.content_sig) = new
                if rel not in pending:
                    out.append(e)
            elif rel not in pending:
                self._pending_cvec.pop(rel, None)
        return out

    def _rel(self, folder: Path) -> str:
        f, r = str(folder), str(self.root)
        if f == r:
            return "."
        return f[len(r) + 1 :].replace(os.sep, "/") if f.startswith(r + os.sep) else f

    def _write(self, upserts: list[Entry], gone: list[Entry], rep: RefreshReport) -> None:
        # The callers changed the loaded entries already (stats, stamps): if this write fails,
        # the next load must read everything again, not patch over those edits.
        try:
            self._write_rows(upserts, gone)
        except BaseException:
            self._generation = -1
            raise

    def _write_rows(self, upserts: list[Entry], gone: list[Entry]) -> None:
        conn = self._db()
        with conn:
            gen = _next_generation(conn)
            for e in gone:
                conn.execute(
                    "INSERT OR REPLACE INTO colls_gone(id, gen) VALUES (?, ?)", (e.id, gen)
                )
                conn.execute("DELETE FROM colls WHERE id=?", (e.id,))
                conn.execute("DELETE FROM colls_fts WHERE rowid=?", (e.id,))
                conn.execute("DELETE FROM colls_vec WHERE id=?", (e.id,))
                conn.execute("DELETE FROM colls_cvec WHERE id=?", (e.id,))
            for e in upserts:
                values = (*_row_values(e), gen)
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
                if e.path in self._pending_cvec:
                    blob = self._pending_cvec.pop(e.path)
                    conn.execute("DELETE FROM colls_cvec WHERE id=?", (e.id,))
                    if blob is not None:
                        conn.execute(
                            "INSERT INTO colls_cvec(id, sig, v) VALUES (?, ?, ?)",
                            (e.id, e.content_sig, blob),
                        )

    @staticmethod
    def _bump(conn: apsw.Connection, ids: list[int]) -> None:
        """Mark these rows changed in a new generation (inside the caller's transaction)."""
        gen = _next_generation(conn)
        conn.executemany("UPDATE colls SET gen=? WHERE id=?", [(gen, i) for i in ids])

    def _embed_missing(
        self,
        rep: RefreshReport,
        limit: int | None,
        progress: Callable[[str, int, int], None] | None,
    ) -> None:
        if self.embedder is None:
            return
        conn = self._db()
        have = {rid: h for rid, h in conn.execute("SELECT id, hash FROM colls_vec")}
        todo = [e for e in self.entries if not e.error and have.get(e.id) != e.text_hash()]
        now = todo if limit is None else todo[:limit]
        t0 = time.perf_counter()
        done = 0
        try:
            for i in range(0, len(now), EMBED_BATCH):
                batch = now[i : i + EMBED_BATCH]
                vecs = self.embedder.embed_passages([e.embed_text() for e in batch])
                with conn:
                    conn.executemany(
                        "INSERT OR REPLACE INTO colls_vec(id, hash, v) VALUES (?, ?, ?)",
                        [
                            (e.id, e.text_hash(), np.asarray(v, dtype=np.float32).tobytes())
                            for e, v in zip(batch, vecs, strict=True)
                        ],
                    )
                    self._bump(conn, [e.id for e in batch])  # other readers pick them up
                done += len(batch)
                if progress:
                    progress("embedding descriptions", done, len(now))
        except EmbedderUnavailableError as e:
            rep.errors.append(f"descriptions not embedded: {e}")
        rep.embedded = done
        rep.not_embedded = len(todo) - done
        rep.embed_seconds = time.perf_counter() - t0
        if done:
            self._vectors = None
            self.derived.clear()

    # ------------------------------------------------------------------ yaml
    def write_yaml(self) -> Path:
        """Write _registry.yaml: one block per collection, sorted by path.

        Emitted by hand (strings as JSON, which YAML reads as double-quoted scalars): PyYAML's
        dumper took 40 s for 100,000 collections, this takes about one.
        """
        count = sum(1 for e in self.entries if not e.error)
        lines = [
            "# generated by `memo registry rebuild`: a cache, delete it and memo writes it again",
            f"root: {_q(str(self.root))}",
            f"count: {count}",
            "collections:",
        ]
        for e in self.entries:
            lines.append(f"  - path: {_q(e.path)}")
            for key, value in e.to_yaml().items():
                if key != "path":
                    lines.append(f"    {key}: {_q(value)}")
        text = "\n".join(lines) + "\n"
        path = self.yaml_path
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)  # readers see the old file or the new one
        return path


def _next_generation(conn: apsw.Connection) -> int:
    """Bump the registry's generation and return it (inside the caller's transaction).

    A write comes first on purpose: a transaction that starts with a read cannot wait for the
    write lock in WAL mode (it fails at once with SQLITE_BUSY if another writer holds it), one
    that starts with a write waits up to the busy timeout."""
    conn.execute("UPDATE meta SET value=CAST(value AS INTEGER)+1 WHERE key='generation'")
    (gen,) = conn.execute(
        "SELECT CAST(value AS INTEGER) FROM meta WHERE key='generation'"
    ).fetchone()
    return int(gen)


# A collection's row in `colls`, besides id and gen: Entry's fields, in this order.
_FIELDS = (
    "path",
    "name",
    "description",
    "tags",  # JSON list
    "embedder",
    "chunker",
    "mtime_ns",
    "size",
    "hash",
    "error",
    "files",
    "chunks",
    "last_indexed",
    "headings",
    "content",
    "content_sig",
)
_COLUMNS = "id, " + ", ".join(_FIELDS)
_UPDATE_ROW = f"UPDATE colls SET {', '.join(f + '=?' for f in _FIELDS)}, gen=? WHERE id=?"
_INSERT_ROW = (
    f"INSERT INTO colls({', '.join(_FIELDS)}, gen) VALUES ({','.join('?' * (len(_FIELDS) + 1))})"
)
# Stored vectors: description vectors (float32) and content centroids (float16, half the bytes).
_VECTOR_TABLES = {"colls_vec": np.float32, "colls_cvec": np.float16}
PATCH_MAX = 1_000  # rows changed since the last load that are applied in place
PATCH_LOG_MAX = 100_000  # positions patched since the last full read before one is forced


def _row_entry(r: Any) -> Entry:
    """An Entry from a `colls` row read with _COLUMNS."""
    fields = dict(zip(_FIELDS, r[1:], strict=True))
    fields["tags"] = tuple(json.loads(fields["tags"]))
    return Entry(id=r[0], **fields)


def _row_values(e: Entry) -> tuple[Any, ...]:
    """An Entry's _FIELDS as stored."""
    return tuple(
        json.dumps(list(e.tags), ensure_ascii=False) if f == "tags" else getattr(e, f)
        for f in _FIELDS
    )


HEADINGS_CHARS = 4000
CONTENT_TERMS = 256  # content stems per collection in the router's FTS row
_STOP_STEMS = frozenset(_stem(w) for w in STOPWORDS)


def _index_sig(path: Path) -> str:
    """(mtime, size) of an index and its WAL: changes whenever a sync writes; '' if absent."""
    parts = []
    for suffix in ("", "-wal"):
        try:
            st = os.stat(f"{path}{suffix}")
        except OSError:
            if not suffix:
                return ""
            continue
        parts.append(f"{st.st_mtime_ns}:{st.st_size}")
    return "/".join(parts)


def content_summary(conn: apsw.Connection, terms: int = CONTENT_TERMS) -> tuple[str, bytes | None]:
    """What a collection holds, for the router: its top content stems and its chunk centroid.

    Stems: the `terms` most frequent stems of its chunks (fts5vocab over the collection's own
    FTS, no text re-read), function words dropped; the router's BM25 weighs them across
    collections. Centroid: the normalised mean of its chunk vectors, float16 (None without
    vectors).
    """
    rows = conn.execute("SELECT term, cnt FROM chunks_vocab")
    counts = [(int(c), t) for t, c in rows if len(t) > 1 and t not in _STOP_STEMS]
    counts.sort(key=lambda x: (-x[0], x[1]))
    stems = " ".join(t for _, t in counts[:terms])
    centroid = None
    if dbm.has_vectors(conn):
        acc: np.ndarray | None = None
        for (blob,) in conn.execute("SELECT embedding FROM chunks_vec"):
            v = np.frombuffer(blob, dtype=np.float32)
            acc = v.astype(np.float64) if acc is None else acc + v
        if acc is not None:
            norm = float(np.linalg.norm(acc))
            if norm > 0:
                centroid = (acc / norm).astype(np.float16).tobytes()
    return stems, centroid


def _headings(conn: apsw.Connection) -> str:
    """The distinct headings of a collection's notes, in file order, cut at HEADINGS_CHARS.

    A description is one line a person wrote; the headings are what the notes actually cover.
    The router's lexical leg reads both (the vector leg embeds the description only).
    """
    out: list[str] = []
    seen: set[str] = set()
    size = 0
    for (h,) in conn.execute("SELECT heading FROM chunks ORDER BY path, ord"):
        for part in str(h).split(" > "):
            if part and part not in seen:
                seen.add(part)
                out.append(part)
                size += len(part) + 1
        if size >= HEADINGS_CHARS:
            break
    return "\n".join(out)[:HEADINGS_CHARS]


def _q(value: Any) -> str:
    """A YAML scalar or flow list; JSON is valid YAML for strings, numbers, null and lists."""
    return json.dumps(value, ensure_ascii=False)


def _entry(folder: Path, rel: str, st: os.stat_result, digest: str, raw: bytes) -> Entry:
    try:
        m = load_meta(folder, raw)
    except MemoError as e:
        stamp = (st.st_mtime_ns, st.st_size, digest)
        return Entry(rel, folder.name, "", (), None, None, *stamp, error=str(e))
    stamp = (st.st_mtime_ns, st.st_size, digest)
    return Entry(rel, m.name, m.description, m.tags, m.embedder, m.chunker, *stamp)
