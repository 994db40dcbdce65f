"""The library: a root folder of collections, and what can be done with any path inside it.

This is the public face of memo's core. Each operation takes a request (requests.py) or the
same arguments as keywords, and returns a typed result whose `to_dict()` is what the CLI's
`--json`, the HTTP API and the MCP tools print:

    with Library.from_env("~/notes/memo") as lib:
        lib.index()
        for hit in lib.search("work", "policy based routing", k=5).hits:
            print(f"{hit.path}:{hit.line}", hit.heading)

Where the work is done: targets.py (what a path names), syncing.py (indexes follow notes),
federated.py (one search over many collections), collections.py (the registry and the
Collection objects). Warnings travel in the results, never in shared state.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from .. import heartbeat, roots
from ..collection.collection import Collection
from ..collection.files import find_collections
from ..collection.filters import Filter
from ..collection.progress import SyncProgress
from ..collection.status import CollectionStatus
from ..config import Settings
from ..embed import Embedder, embedder_for
from ..embed.tokens import token_counter
from ..errors import LibraryNotFoundError, MemoError, TargetError
from ..registry_tools.entry import RefreshReport
from ..registry_tools.registry import Registry
from ..requests import ReadRequest, RouteRequest, SearchRequest, StatusRequest
from ..router.route import RouteResult
from ..search import budget
from ..search.confidence import confidence, signals
from ..search.diversity import DIVERSITY_MIN_K, notes_cap
from ..search.excerpt import Excerpt, read_excerpt
from ..search.fusion import CANDIDATES, FUSION_VERSION, Legs, fuse
from ..search.results import Freshness, SearchResult
from . import federated, syncing, targets
from .collections import Collections
from .routing import route_by_evidence
from .syncing import IndexReport
from .targets import Scope, confine, label, resolve


@dataclass(slots=True)
class StatusReport:
    """`memo status`: every collection at or below a path, and what is wrong."""

    root: str
    collections: list[CollectionStatus]
    errors: list[str] = field(default_factory=list)  # broken _meta.yaml files, one line each
    broken: list[dict[str, str]] = field(default_factory=list)  # {path, error}: not indexed
    warnings: list[str] = field(default_factory=list)
    fusion: str = FUSION_VERSION  # the rule search results come from

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "collections": [c.to_dict() for c in self.collections],
            "errors": self.errors,
            "broken": self.broken,
            "warnings": self.warnings,
            "fusion": self.fusion,
        }


class Library:
    """A notes library at `root`, searched with `embedder` (None: lexical search only)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        embedder: Embedder | None,
        settings: Settings | None = None,
    ) -> None:
        self.root = Path(os.path.abspath(Path(root).expanduser()))
        if not self.root.is_dir():
            raise LibraryNotFoundError(f"library root {self.root} is not a folder")
        self.embedder = embedder
        self.settings = settings or Settings()
        self._colls = Collections(self.root, embedder, self.settings)
        self._vectors = federated.QueryVectors(embedder)

    @classmethod
    def from_env(cls, root: str | os.PathLike[str] | None = None) -> Library:
        """The library at `root` (default: MEMO_ROOT, else ~/notes/memo), with the embedder and
        settings the MEMO_* environment variables ask for."""
        settings = Settings.from_env()
        return cls(root or settings.library_root, embedder_for(settings), settings)

    def __enter__(self) -> Library:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close every open index (the library can still be used: they reopen on demand)."""
        self._colls.close()

    # ------------------------------------------------------------------ collections
    @property
    def registry(self) -> Registry:
        """The registry of collections, re-scanned when due (see library/collections.py)."""
        return self._colls.registry()

    def collections(self, under: str | os.PathLike[str] | None = None) -> list[Collection]:
        """The valid collections at or below a folder (default: the whole library)."""
        return self._colls.under(confine(self.root, under) if under else None)

    def rebuild_registry(
        self,
        embed: bool = True,
        write_yaml: bool = True,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> RefreshReport:
        """`memo registry rebuild`: scan every `_meta.yaml`, read every index's summary, embed
        every description, write `_registry.yaml` (declaring the root a library)."""
        self.declare()
        return self._colls.rebuild(embed=embed, write_yaml=write_yaml, progress=progress)

    # ------------------------------------------------------------------ indexing
    @property
    def declared(self) -> bool:
        """The root is a declared library (roots.py): reads through the CLI, the servers and
        the watcher work only on those."""
        return roots.is_declared(self.root, self.settings)

    def declare(self) -> Path | None:
        """Make the root a library (`memo index` does it): writes the marker, or nothing when
        it is one already. A folder without any collection is refused, and nothing is written."""
        if self.declared:
            return None
        if not find_collections(self.root):
            raise targets.no_collection(self.root, self.root)
        return roots.declare(self.root, self.settings)

    def index(
        self,
        target: str | os.PathLike[str] | None = None,
        *,
        full: bool = False,
        progress: SyncProgress | None = None,
    ) -> IndexReport:
        """Bring the indexes at or below `target` in line with the notes (`full`: rebuild).

        Re-scans the registry first; checks each database (quick_check) and reports every note
        that cannot be indexed. Broken `_meta.yaml` files are listed in `broken`.
        """
        t0 = time.perf_counter()
        report = IndexReport()
        self.declare()
        self._colls.registry(force=True)
        scope = self._resolve(target)
        syncing.note_broken(self._colls, confine(self.root, target), report)
        syncing.sync_parts(
            self._colls, scope.parts, report, full=full, thorough=True, progress=progress
        )
        report.seconds = time.perf_counter() - t0
        return report

    def sync(
        self,
        paths: Iterable[str | os.PathLike[str]] | None = None,
        *,
        rescan: bool = False,
        progress: SyncProgress | None = None,
    ) -> IndexReport:
        """Re-index what changed at these paths (notes, folders, collection folders), or the
        whole library when `paths` is None: what the watcher calls after file events.

        `rescan` re-scans the registry first, so new, edited and removed `_meta.yaml` files
        count (a folder or meta event); `found` and `gone` then list the collections this
        process had not seen, or saw vanish.
        """
        t0 = time.perf_counter()
        report = IndexReport()
        if rescan:
            self._colls.registry(force=True)
            syncing.note_discoveries(self._colls, report)
        if paths is None:
            parts: syncing.Parts = [(c, "") for c in self._colls.under()]
            syncing.note_broken(self._colls, None, report)
        else:
            parts = syncing.parts_for_paths(
                self._colls, (Path(os.path.abspath(p)) for p in paths), report
            )
        syncing.sync_parts(self._colls, parts, report, progress=progress)
        report.seconds = time.perf_counter() - t0
        return report

    def _catch_up(self, scope: Scope, warnings: list[str]) -> list[Freshness]:
        """Sync the scope before searching it: an edit made just before the call is found."""
        outcome = syncing.sync_parts(self._colls, scope.parts, IndexReport())
        fresh = []
        for coll, _ in scope.parts:
            rep = outcome.get(coll.rel)
            if isinstance(rep, MemoError):  # disk full, locked too long: serve what is there
                warnings.append(f"{rep} — searched the index as it was. {rep.hint}")
                fresh.append(Freshness(coll.name, 0, False, coll.last_write(), ""))
            elif rep is not None:
                warnings.extend(rep.warnings)
                current = rep.caught_up == 0 and not rep.rebuilt
                fresh.append(
                    Freshness(coll.name, rep.caught_up, current, coll.last_write(), rep.rebuilt)
                )
        return fresh

    # ------------------------------------------------------------------ search
    def search(
        self, path: str | SearchRequest = ".", query: str = "", **options: Any
    ) -> SearchResult:
        """Search a note, a folder, a collection, or `.`/`*` for all of them.

        Takes a SearchRequest, or its fields: `search("work", "vlan tagging", k=5, mode="lex")`
        (k, mode, route, max_tokens, tags, since, until, diverse; requests.py has the bounds).
        Changed notes are caught up first; both legs are ranked across every collection of the
        scope and fused once; `route=K` first cuts the scope to the K best-routed collections.
        """
        req = (
            path if isinstance(path, SearchRequest) else SearchRequest.make(path, query, **options)
        )
        t0 = time.perf_counter()
        flt = Filter.make(req.tags, req.since, req.until)  # bad dates fail before any work
        scope = self._resolve(req.path)
        warnings = req.warnings() + self._broken_warnings(scope.target)
        routed = None
        if req.route is not None:
            scope, routed = self._routed(scope, req.query, req.route, warnings)
        freshness = self._catch_up(scope, warnings)
        depth = max(CANDIDATES, 2 * req.k)
        legs = federated.gather_legs(
            scope, req.query, req.mode, depth, self._vectors, warnings, flt
        )
        diverse = req.k >= DIVERSITY_MIN_K if req.diverse is None else req.diverse
        per_note = notes_cap(req.k) if diverse else None
        hits, top_text = federated.assemble_hits(
            scope, fuse(legs, req.mode), legs, req.k, warnings, per_note
        )
        spent = None
        if req.max_tokens is not None:
            hits, spent = budget.fit(hits, req.max_tokens, token_counter(self.embedder))
        if not req.query.strip():
            warnings.append("the query is empty: nothing to search for")
        return SearchResult(
            query=req.query,
            mode=req.mode,
            target=scope.target,
            hits=hits,
            took_ms=(time.perf_counter() - t0) * 1000,
            collections=[c.name for c, _ in scope.parts],
            freshness=freshness,
            warnings=warnings,
            budget=spent,
            confidence=confidence(signals(legs, top_text)) if hits else "none",
            routed=routed,
        )

    def _routed(
        self, scope: Scope, query: str, k: int, warnings: list[str]
    ) -> tuple[Scope, list[str]]:
        """The scope cut to the top-k routed collections (whole collections only)."""
        if len(scope.parts) == 1 and scope.parts[0][1]:
            return scope, [scope.parts[0][0].rel]  # one note or sub-folder: nothing to route
        whole = {c.rel: (c, p) for c, p in scope.parts if not p}
        prefix = None if scope.target == "." else scope.target
        res = self.route(RouteRequest.make(query, k=k, prefix=prefix, strategy="hybrid"))
        warnings.extend(w for w in res.warnings if w not in warnings)
        keep = [whole[c.path] for c in res.collections if c.path in whole][:k]
        if not keep:
            raise TargetError(
                f"the router found no collection for this query under {scope.target}",
                "Search without --route, or give the collection's path.",
            )
        return Scope(scope.target, keep), [c.rel for c, _ in keep]

    # ------------------------------------------------------------------ route
    def route(self, query: str | RouteRequest, **options: Any) -> RouteResult:
        """Ranked candidate collections for a question (router/ says how, by scale).

        Takes a RouteRequest, or its fields: `route("vlan tagging", k=3, prefix="work")`.
        """
        req = query if isinstance(query, RouteRequest) else RouteRequest.make(query, **options)
        t0 = time.perf_counter()
        warnings: list[str] = []
        res = route_by_evidence(self._colls, self._vectors, req, warnings)
        res.warnings = self._broken_warnings(req.prefix) + res.warnings + warnings
        res.took_ms = (time.perf_counter() - t0) * 1000
        return res

    # ------------------------------------------------------------------ read
    def read(
        self, path: str | ReadRequest, line: int | None = None, lines: int | None = None
    ) -> Excerpt:
        """Lines of one note (from `line`, `lines` of them), with their citation hash."""
        req = path if isinstance(path, ReadRequest) else ReadRequest.make(path, line, lines)
        full = confine(self.root, req.path)
        rel = label(self.root, full)
        if full.is_dir():
            raise TargetError(
                f"{rel} is a folder", "Give a note's path, e.g. one from a search hit's `path`."
            )
        if not full.name.lower().endswith(".md") or any(p.startswith(".") for p in Path(rel).parts):
            raise TargetError(
                f"{rel} is not a note", "memo reads markdown notes (.md) outside hidden folders."
            )
        try:
            return read_excerpt(full, rel, req.line, req.lines)
        except OSError as e:
            raise TargetError(f"cannot read {rel}: {e.strerror or e}") from e

    # ------------------------------------------------------------------ status
    def status(self, path: str | StatusRequest | None = None) -> StatusReport:
        """Every collection at or below `path`: files, chunks, staleness, skipped and failed
        notes, the watcher's heartbeat."""
        req = path if isinstance(path, StatusRequest) else StatusRequest.make(path)
        scope = self._resolve(req.path)
        watcher = heartbeat.summary(self.root, self.settings)
        colls = []
        for c, _ in scope.parts:
            st = c.status()
            st.watcher_last_seen = watcher["watcher_last_seen"]
            st.last_reconcile = watcher["last_reconcile"]
            colls.append(st)
        warnings = [
            f"{c.path}: empty description in _meta.yaml; the router cannot route to it"
            for c in colls
            if not c.description.strip()
        ]
        report = IndexReport()
        syncing.note_broken(self._colls, confine(self.root, req.path), report)
        return StatusReport(str(self.root), colls, report.errors, report.broken, warnings)

    # ------------------------------------------------------------------ helpers
    def _legs(self, target: str | None, query: str, mode: str, depth: int) -> tuple[Scope, Legs]:
        """Both legs for a query over a target, unfused (bench/fusion.py and bench/confidence.py
        score rules on them)."""
        scope = self._resolve(target)
        return scope, federated.gather_legs(scope, query, mode, depth, self._vectors, [])

    def _resolve(self, target: str | os.PathLike[str] | None) -> Scope:
        return resolve(self._colls, target)

    def _broken_warnings(self, target: str | None) -> list[str]:
        """One warning per broken `_meta.yaml` under the target: those notes are not searched.
        Called after the target was resolved, which scanned the registry already."""
        lines = self._colls.scanned().broken_warnings(target)
        return [f"{line}; its notes are not searched until it is fixed" for line in lines]
