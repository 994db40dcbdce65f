"""The library: a root folder of collections, and the operations on any path inside it.

A target path may be a note, a folder inside a collection, a collection, or any folder above
collections (which fans out to every collection below it). Paths are confined to the root.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import budget, heartbeat
from .collection.collection import SYNC_COUNTERS, Collection, ConnectionPool, SyncReport
from .collection.filters import Filter
from .collection.lexical import fts_query, query_terms, script
from .collection.meta import META_FILE, load_meta
from .config import Settings
from .embed import Embedder
from .errors import EmbedderUnavailableError, LibraryNotFoundError, MemoError, TargetError
from .excerpt import Excerpt, cite_range, read_excerpt
from .registry_tools.registry import Entry, RefreshReport, Registry
from .router import RouteResult
from .router import route as route_in
from .search import (
    CANDIDATES,
    DIVERSITY_MIN_K,
    DIVERSITY_POOL,
    DIVERSITY_RATIO,
    FUSION_VERSION,
    MODES,
    Freshness,
    Hit,
    Legs,
    SearchResult,
    cap_per_note,
    confidence,
    cut_text,
    fuse,
    notes_cap,
    signals,
)

MAX_QUERY_CHARS = 10_000
MAX_K = 200
MAX_OPEN = 2048  # collections with an open connection at once (3 descriptors each under WAL)
FD_RESERVE = 256  # descriptors left for everything else (sockets, notes being read, the model)
MAX_OBJECTS = 4096  # Collection objects kept (cheap: a meta and a path; no file open)
QUERY_CACHE = 256  # recent query embeddings kept: route then search embeds a question once
SMALL_LIBRARY = 200  # up to this many collections the registry is re-checked on every call
REGISTRY_TTL = 60.0  # beyond, it is re-checked when older than this (seconds)
INLINE_EMBED = 256  # descriptions embedded inside a search/route call; the rest: registry rebuild


@dataclass(frozen=True, slots=True)
class Scope:
    """Which collections a target covers, and the sub-path inside each (''=all of it)."""

    target: str
    parts: list[tuple[Collection, str]]


@dataclass(slots=True)
class IndexReport:
    reports: list[SyncReport] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # broken _meta.yaml and the like
    seconds: float = 0.0

    def totals(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: sum(getattr(r, k) for r in self.reports) for k in SYNC_COUNTERS}
        out["collections"] = len(self.reports)
        out["rebuilt"] = sum(1 for r in self.reports if r.rebuilt)
        out["seconds"] = round(self.seconds, 3)
        out["embed_seconds"] = round(sum(r.embed_seconds for r in self.reports), 3)
        out["nothing_to_do"] = not any(r.did_work for r in self.reports)
        return out


class Library:
    def __init__(
        self, root: Path, embedder: Embedder | None, settings: Settings | None = None
    ) -> None:
        self.root = Path(os.path.abspath(Path(root).expanduser()))
        if not self.root.is_dir():
            raise LibraryNotFoundError(f"library root {self.root} is not a folder")
        self.embedder = embedder
        self.settings = settings or Settings()
        self._collections: dict[Path, Collection] = {}  # bounded, least recently used first
        self.pool = ConnectionPool(self.settings.max_open or default_max_open())
        self.errors: list[str] = []
        self._registry: Registry | None = None
        self._qvecs: dict[tuple[str, str], np.ndarray] = {}

    # ------------------------------------------------------------------ discovery
    @property
    def registry(self) -> Registry:
        """The registry, current enough for this call (see `fresh_registry`)."""
        return self.fresh_registry()

    def fresh_registry(self, force: bool = False) -> Registry:
        """Load the registry; re-scan the tree when it is missing or due.

        Small libraries (<= SMALL_LIBRARY collections) are re-scanned on every call: a walk over
        their folders costs a few milliseconds, and a folder that just got its _meta.yaml is
        searchable at once. Bigger ones are re-scanned when the last scan is older than
        MEMO_REGISTRY_TTL (default REGISTRY_TTL s), and by `memo registry rebuild` (or a watcher).
        """
        reg = self._registry
        if reg is None:
            reg = self._registry = Registry(self.root, self.embedder, self.settings)
        reg.load()
        ttl = self.settings.registry_ttl
        if ttl is None:
            ttl = 0.0 if len(reg.entries) <= SMALL_LIBRARY else REGISTRY_TTL
        if force or reg.scanned_at == 0 or time.time() - reg.scanned_at >= ttl:
            self._refreshed(reg.refresh(embed_limit=INLINE_EMBED))
        return reg

    def rebuild_registry(
        self,
        write_yaml: bool = True,
        embed: bool = True,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> RefreshReport:
        """`memo registry rebuild`: full scan, index stats, every description embedded, yaml."""
        reg = self._registry or Registry(self.root, self.embedder, self.settings)
        self._registry = reg
        rep = reg.refresh(
            embed_limit=None if embed else 0, stats=True, write_yaml=write_yaml, progress=progress
        )
        self._refreshed(rep)
        return rep

    def _refreshed(self, rep: RefreshReport) -> None:
        self.errors = list(rep.errors)
        for rel in rep.changed + rep.removed:  # a changed meta: rebuild that Collection object
            coll = self._collections.pop(self._folder(rel), None)
            if coll is not None:
                coll.close()

    def _folder(self, rel: str) -> Path:
        return self.root if rel == "." else self.root / rel

    def collections(self, under: Path | None = None) -> list[Collection]:
        """Collections at or below `under` (default: the root), from the registry.

        Broken metas are in .errors and never listed.
        """
        reg = self.registry
        prefix = ""
        if under is not None and Path(under) != self.root:
            prefix = os.path.relpath(under, self.root).replace(os.sep, "/")
        found = []
        for r in reg.select(prefix):
            for i in r:
                e = reg.entries[i]
                if not e.error:
                    found.append(self._from_entry(e))
        return found

    def _from_entry(self, e: Entry) -> Collection:
        folder = self._folder(e.path)
        coll = self._collections.pop(folder, None)
        if coll is None:
            coll = Collection(folder, self.root, e.meta(), self.embedder, self.settings)
            coll.pool = self.pool
        self._collections[folder] = coll  # most recent last
        if len(self._collections) > MAX_OBJECTS:
            self._collections.pop(next(iter(self._collections)))
        return coll

    def _collection(self, folder: Path) -> Collection | None:
        if folder in self._collections:
            return self._collections[folder]
        try:
            meta = load_meta(folder)
        except MemoError as e:
            self.errors.append(str(e))
            return None
        coll = Collection(folder, self.root, meta, self.embedder, self.settings)
        coll.pool = self.pool
        self._collections[folder] = coll
        return coll

    def collection_at(self, folder: Path) -> Collection | None:
        """The collection whose folder is `folder` (None if it has no valid _meta.yaml)."""
        if not (folder / META_FILE).is_file():
            return None
        return self._collection(folder)

    def forget(self, folder: Path) -> None:
        """Drop the cached collection at `folder` (its meta changed or it vanished)."""
        coll = self._collections.pop(folder, None)
        if coll is not None:
            coll.close()

    def known_folders(self) -> list[Path]:
        """Folders of the collections loaded so far."""
        return list(self._collections)

    def close(self) -> None:
        self.pool.close_all()
        for c in self._collections.values():
            c.close()
        if self._registry is not None:
            self._registry.close()

    def confine(self, target: str | os.PathLike[str] | None) -> Path:
        """A user's path -> an absolute path inside the root, or TargetError."""
        if target is None or str(target) in ("", ".", "*"):
            return self.root
        raw = str(target)
        if "\x00" in raw:
            raise TargetError("path contains a NUL byte")
        if "\\" in raw or re.match(r"^[A-Za-z]:([\\/]|$)", raw):
            raise TargetError(
                f"{raw} looks like a Windows path",
                "Use forward slashes and a path relative to the library root, e.g. work/jira.",
            )
        p = Path(raw).expanduser()
        full = p if p.is_absolute() else self.root / p
        real = Path(os.path.realpath(full))
        root_real = Path(os.path.realpath(self.root))
        if real != root_real and root_real not in real.parents:
            raise TargetError(f"{raw} is outside the library root {self.root}")
        if not real.exists():
            raise TargetError(f"{raw} does not exist under {self.root}")
        # Keep the root's spelling (not the resolved one) so relative paths stay readable.
        return self.root / real.relative_to(root_real)

    def resolve(self, target: str | os.PathLike[str] | None) -> Scope:
        path = self.confine(target)
        # The collection that owns `path`: the nearest ancestor folder with _meta.yaml.
        owner: Collection | None = None
        for folder in [path, *path.parents] if path.is_dir() else list(path.parents):
            if folder != self.root and self.root not in folder.parents:
                break
            if (folder / META_FILE).is_file():
                owner = self._collection(folder)
                if owner is None:
                    raise TargetError(f"{folder / META_FILE} is broken: {self.errors[-1]}")
                break
        label = str(path.relative_to(self.root)).replace(os.sep, "/") if path != self.root else "."
        if path.is_file():
            if owner is None:
                raise TargetError(f"{label} is not inside a collection (no _meta.yaml above it)")
            return Scope(label, [(owner, os.path.relpath(path, owner.folder).replace(os.sep, "/"))])
        parts: list[tuple[Collection, str]] = []
        if owner is not None and owner.folder != path:
            parts.append((owner, os.path.relpath(path, owner.folder).replace(os.sep, "/")))
        parts.extend((c, "") for c in self.collections(path))
        if not parts:
            hint = f" ({'; '.join(self.errors)})" if self.errors else ""
            raise TargetError(f"no collection at or below {label}{hint}")
        return Scope(label, parts)

    # ------------------------------------------------------------------ index
    def index(
        self,
        target: str | None = None,
        full: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> IndexReport:
        t0 = time.perf_counter()
        self.fresh_registry(force=True)  # an explicit index run looks at the whole tree
        scope = self.resolve(target)
        report = IndexReport()
        synced = []
        for coll, prefix in scope.parts:
            try:
                report.reports.append(
                    coll.sync(prefix, full=full, progress=progress, thorough=True)
                )
                synced.append(coll.folder)
            except MemoError as e:  # one collection failing never stops the others
                hint = f" — {e.hint}" if e.hint else ""
                report.errors.append(f"{coll.rel}: {e}{hint}")
        if synced and self._registry is not None:  # the router's view of what they hold
            self._registry.update_stats(synced)
        report.errors = self.errors + report.errors
        report.seconds = time.perf_counter() - t0
        return report

    def count_pending(self, target: str | None = None) -> int:
        """How many notes lie under the target: the length of a progress bar."""
        from .collection.files import note_files

        return sum(len(note_files(c.folder, self.root, p)) for c, p in self.resolve(target).parts)

    # ------------------------------------------------------------------ route
    def route(
        self,
        query: str,
        k: int = 5,
        prefix: str | None = None,
        strategy: str | None = None,
    ) -> RouteResult:
        """Ranked candidate collections for a question (router/ says how, by scale)."""
        t0 = time.perf_counter()
        query = (query or "")[:MAX_QUERY_CHARS]
        if prefix and "\x00" in prefix:
            raise TargetError("prefix contains a NUL byte")
        reg = self.registry
        warnings: list[str] = []
        res = route_in(
            reg,
            query,
            k=k,
            prefix=prefix,
            strategy=strategy,
            query_vector=lambda q: self.query_vector(q, warnings),
        )
        res.warnings = list(self.errors) + res.warnings + warnings
        res.took_ms = (time.perf_counter() - t0) * 1000
        return res

    def query_vector(self, query: str, warnings: list[str] | None = None) -> np.ndarray | None:
        """The query's embedding, computed once per process for a recent question."""
        if self.embedder is None:
            if warnings is not None:
                warnings.append("no embedder configured: vector leg skipped")
            return None
        key = (self.embedder.model_id, query)
        vec = self._qvecs.pop(key, None)
        if vec is None:
            try:
                vec = self.embedder.embed_query(query)
            except EmbedderUnavailableError as e:
                if warnings is not None:
                    warnings.append(f"{e} — lexical results only. {e.hint}")
                return None
        self._qvecs[key] = vec  # most recent last
        if len(self._qvecs) > QUERY_CACHE:
            self._qvecs.pop(next(iter(self._qvecs)))
        return vec

    # ------------------------------------------------------------------ search
    def search(
        self,
        target: str | None,
        query: str,
        k: int = 8,
        mode: str = "hybrid",
        route: int | None = None,
        *,
        max_tokens: int | None = None,
        diverse: bool | None = None,
        tags: list[str] | str | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> SearchResult:
        """Search a target: a note, a folder, a collection, or `*`/`.`/None for all of them
        (federated: one query embedding, each leg ranked across every collection, fused once).

        `route=K` keeps only the K collections the router ranks best in the target;
        `max_tokens` fits the hits into a token budget; `diverse` (default: on for k ≥ 5) caps
        how many hits one note may take while other notes match too; `tags`, `since` and
        `until` filter notes by frontmatter inside each leg's query (collection/filters.py).
        """
        t0 = time.perf_counter()
        if mode not in MODES:
            raise MemoError(f"unknown mode {mode!r}", f"Use one of: {', '.join(MODES)}.")
        k = max(1, min(int(k), MAX_K))
        query = (query or "")[:MAX_QUERY_CHARS]
        flt = Filter.make(tags, since, until)  # bad dates fail before any work
        scope = self.resolve(target)
        warnings = list(self.errors)
        routed: list[str] | None = None
        if route is not None:
            scope, routed = self._routed(scope, query, int(route), warnings)
        freshness = []
        for coll, prefix in scope.parts:
            try:
                rep = coll.sync(prefix)  # catch-up: an edit made just before this call is found
            except MemoError as e:  # disk full, index locked for too long: serve what is there
                warnings.append(f"{e} — searched the index as it was. {e.hint}")
                freshness.append(Freshness(coll.name, 0, False, _last_write(coll), ""))
                continue
            warnings.extend(rep.warnings)
            caught = rep.new + rep.changed + rep.removed + rep.skipped
            freshness.append(
                Freshness(
                    coll.name,
                    caught,
                    caught == 0 and not rep.rebuilt,
                    _last_write(coll),
                    rep.rebuilt,
                )
            )
        legs = self.legs(scope, query, mode, max(CANDIDATES, 2 * k), warnings, flt)
        scores = fuse(legs, mode)
        if diverse is None:
            diverse = k >= DIVERSITY_MIN_K
        per_note = notes_cap(k) if diverse else None
        hits = self._hits(scope, scores, legs.lex_ranked, legs.vec_ranked, k, per_note)
        for coll, _ in scope.parts:  # indexes found damaged (and rebuilt) while searching
            warnings.extend(coll.healed)
            coll.healed.clear()
        budget_report = None
        if max_tokens is not None:
            hits, budget_report = budget.fit(hits, max(1, int(max_tokens)), self._count_tokens)
        res = SearchResult(
            query=query,
            mode=mode,
            target=scope.target,
            hits=hits,
            took_ms=(time.perf_counter() - t0) * 1000,
            collections=[c.name for c, _ in scope.parts],
            freshness=freshness,
            warnings=warnings,
            budget=budget_report,
            confidence=confidence(signals(legs)) if hits else "none",
        )
        res.routed = routed
        return res

    def _count_tokens(self, text: str) -> int:
        if self.embedder is not None:
            try:
                return self.embedder.count_tokens(text)
            except EmbedderUnavailableError:
                pass
        return budget.estimate_tokens(text)

    def _routed(
        self, scope: Scope, query: str, k: int, warnings: list[str]
    ) -> tuple[Scope, list[str]]:
        """The scope cut to the top-k routed collections (whole collections only)."""
        whole = {c.rel: (c, p) for c, p in scope.parts if not p}
        if len(scope.parts) == 1 and scope.parts[0][1]:
            return scope, [scope.parts[0][0].rel]  # one note or sub-folder: nothing to route
        prefix = None if scope.target in (".", "*") else scope.target
        res = self.route(query, k=max(1, k), prefix=prefix, strategy="hybrid")
        warnings.extend(w for w in res.warnings if w not in warnings)
        keep = [whole[c.path] for c in res.collections if c.path in whole][:k]
        if not keep:
            raise TargetError(
                f"the router found no collection for this query under {scope.target}",
                "Search without --route, or give the collection's path.",
            )
        return Scope(scope.target, keep), [c.rel for c, _ in keep]

    def legs(
        self,
        scope: Scope,
        query: str,
        mode: str,
        depth: int,
        warnings: list[str],
        flt: Filter | None = None,
    ) -> Legs:
        """Each leg's candidates across every collection of the scope, best first.

        One pass over the collections runs both legs (and the term-coverage lookup) on each, so
        a collection's index is opened once per search even when the scope holds more
        collections than the connection pool keeps open. The query is embedded once, when the
        first collection with vectors comes up.
        """
        legs = Legs()
        match = fts_query(query) if mode in ("hybrid", "lex") else None
        want_vec = mode in ("hybrid", "vec") and bool(query.strip())
        wanted = set(query_terms(query)) if mode == "hybrid" and match else set()
        found: set[str] = set()
        qvec: np.ndarray | None = None
        vec_failed = any_vectors = False
        for i, (coll, prefix) in enumerate(scope.parts):
            if match:
                legs.lex += [
                    ((i, cid), s) for cid, s in coll.lex_candidates(match, depth, prefix, flt)
                ]
                if wanted - found:
                    found |= coll.known_terms(wanted - found)
            if want_vec and not vec_failed and coll.has_vectors():
                any_vectors = True
                if qvec is None:
                    qvec = self.query_vector(query, warnings)
                    vec_failed = qvec is None
                if qvec is not None:
                    legs.vec += [
                        ((i, cid), s)
                        for cid, s in coll.vec_candidates(qvec, depth, prefix, flt)
                    ]
        if want_vec and not any_vectors:
            warnings.append(
                "no embedder configured: vector leg skipped"
                if self.embedder is None
                else "these indexes hold no vectors (built without a model): lexical only"
            )
        if wanted:
            legs.coverage = len(found) / len(wanted)
        # Cosine similarities are comparable across collections (one model); BM25 nearly so.
        legs.lex.sort(key=lambda x: -x[1])
        legs.vec.sort(key=lambda x: -x[1])
        del legs.lex[depth:], legs.vec[depth:]
        if legs.lex and legs.vec:
            legs.query_script = script(query, query=True)
            legs.answer_script = script(" ".join(self._texts(scope, legs.vec_ranked[:1])))
        return legs

    def _texts(self, scope: Scope, keys: list[tuple[int, int]]) -> list[str]:
        out = []
        for ci, cid in keys:
            row = scope.parts[ci][0].chunk_rows([cid]).get(cid)
            if row is not None:
                out.append(row.text)
        return out

    def _hits(
        self,
        scope: Scope,
        scores: dict[Any, float],
        lex_ranked: list[tuple[int, int]],
        vec_ranked: list[tuple[int, int]],
        k: int,
        per_note: int | None = None,
    ) -> list[Hit]:
        # Read rows only for the best k and whatever ties with the k-th (the tie-break needs
        # their mtime): reading all ~100 fused candidates cost more than both legs' SQL. With a
        # per-note cap, read DIVERSITY_POOL times more: the cap needs other notes to choose.
        ranked = sorted(scores, key=lambda key: -scores[key])
        pool = k * DIVERSITY_POOL if per_note else k
        if len(ranked) > pool:
            floor = scores[ranked[pool - 1]]
            ranked = [key for key in ranked if scores[key] >= floor]
        by_coll: dict[int, list[int]] = {}
        for ci, cid in ranked:
            by_coll.setdefault(ci, []).append(cid)
        rows = {}
        for ci, ids in by_coll.items():
            for cid, row in scope.parts[ci][0].chunk_rows(ids).items():
                rows[(ci, cid)] = row
        lex_pos = {key: r for r, key in enumerate(lex_ranked, start=1)}
        vec_pos = {key: r for r, key in enumerate(vec_ranked, start=1)}
        # Equal scores: the newer file first.
        order = sorted(
            (key for key in ranked if key in rows),
            key=lambda key: (-scores[key], -rows[key].mtime_ns),
        )
        if per_note:
            # A chunk either leg ranks in its top 3 is never held back: that much agreement
            # outweighs variety (measured: otherwise cross-lingual answers got pushed out).
            sure = set(lex_ranked[:3]) | set(vec_ranked[:3])
            order = cap_per_note(
                order,
                k,
                per_note,
                lambda key: key if key in sure else (key[0], rows[key].path),
                scores.__getitem__,
                DIVERSITY_RATIO,
            )
        hits = []
        read: dict[Path, list[str] | None] = {}  # each cited note read once per search
        for key in order[:k]:
            coll = scope.parts[key[0]][0]
            row = rows[key]
            end_line = row.line + row.text.count("\n")
            hits.append(
                Hit(
                    collection=coll.name,
                    path=coll.root_path(row.path),
                    abs_path=str(coll.folder / row.path),
                    line=row.line,
                    heading=row.heading,
                    score=round(scores[key], 6),
                    text=cut_text(row.text),
                    lex_rank=lex_pos.get(key),
                    vec_rank=vec_pos.get(key),
                    end_line=end_line,
                    cite=cite_range(coll.folder / row.path, row.line, end_line, read),
                )
            )
        return hits

    # ------------------------------------------------------------------ read
    def read(
        self, target: str | os.PathLike[str], line: int | None = None, lines: int | None = None
    ) -> Excerpt:
        """Lines of one note (from `line`, `lines` of them), with their citation hash."""
        path = self.confine(target)
        rel = str(path.relative_to(self.root)).replace(os.sep, "/") if path != self.root else "."
        if path.is_dir():
            raise TargetError(
                f"{rel} is a folder", "Give a note's path, e.g. one from a search hit's `path`."
            )
        if not path.name.lower().endswith(".md") or any(p.startswith(".") for p in Path(rel).parts):
            raise TargetError(
                f"{rel} is not a note", "memo reads markdown notes (.md) outside hidden folders."
            )
        if line is not None and line < 1 or lines is not None and lines < 1:
            raise TargetError("line and lines start at 1", "Pass a hit's `line`, e.g. 12.")
        try:
            return read_excerpt(path, rel, line, lines)
        except OSError as e:
            raise TargetError(f"cannot read {rel}: {e.strerror or e}") from e

    # ------------------------------------------------------------------ status
    def status(self, target: str | None = None) -> dict[str, Any]:
        scope = self.resolve(target)
        colls = [c.status() for c, _ in scope.parts]
        warnings = [
            f"{c['path']}: empty description in _meta.yaml; the router cannot route to it"
            for c in colls
            if not c["description"].strip()
        ]
        # One library-level heartbeat (a watcher reconciles every collection at once).
        watcher = heartbeat.summary(self.root, self.settings)
        return {
            "root": str(self.root),
            "collections": [{**c, **watcher} for c in colls],
            "errors": list(self.errors),
            "warnings": warnings,
            "fusion": FUSION_VERSION,  # the search rule results come from (search.py)
        }


def default_max_open() -> int:
    """How many indexes may stay open: MAX_OPEN, or fewer if the descriptor limit says so.

    Reopening an index costs ~1 ms (connect, pragmas, sqlite-vec, profile check); a search over
    1,000 collections with 64 kept open reopened every one twice (2.5 s of a 2.8 s search). So
    raise the soft limit on open files towards the hard one, and keep as many open as fit.
    """
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = MAX_OPEN * 3 + FD_RESERVE
        if soft != resource.RLIM_INFINITY and soft < want:
            new = want if hard == resource.RLIM_INFINITY else min(want, hard)
            if new > soft:
                resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
                soft = new
        if soft == resource.RLIM_INFINITY:
            return MAX_OPEN
        return max(16, min(MAX_OPEN, (soft - FD_RESERVE) // 3))
    except (ImportError, ValueError, OSError):  # no `resource` (Windows) or not allowed
        return 64


def _last_write(coll: Collection) -> float | None:
    times = []
    for suffix in ("", "-wal"):
        try:
            times.append(os.path.getmtime(f"{coll.index_path}{suffix}"))
        except OSError:
            pass
    return max(times) if times else None
