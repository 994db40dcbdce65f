"""The library: a root folder of collections, and what can be done with any path inside it.

This is the public face of memo's core. Each operation takes a request (requests.py) or the
same arguments as keywords, and returns a typed result whose `to_dict()` is what the CLI's
`--json`, the HTTP API and the MCP tools print (an example: memo/__init__.py). The work is done
in targets.py (what a path names), upkeep.py (indexes follow notes), collections.py (the
registry and the Collection objects) and evidence.py (a route's evidence); the ranking itself
is search/. Warnings travel in the results, never in shared state.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any

from .. import roots
from ..collection.chunker import title_at
from ..collection.collection import Collection
from ..collection.files import find_collections, note_files
from ..collection.filters import Filter
from ..collection.progress import SyncProgress
from ..config import Settings
from ..embed import Embedder, embedder_for
from ..embed.cache import counting
from ..embed.tokens import estimate_tokens, token_counter
from ..errors import ConflictError, LibraryNotFoundError, NotFoundError
from ..registry_tools.entry import RefreshReport
from ..registry_tools.registry import Registry
from ..requests import (
    IndexRequest,
    ReadRequest,
    RouteRequest,
    SearchRequest,
    StatusRequest,
    WhyRequest,
)
from ..router.route import RouteResult
from ..search import budget
from ..search.diversity import DIVERSITY_MIN_K, notes_cap
from ..search.excerpt import Excerpt, read_excerpts, text_lines
from ..search.fusion import CANDIDATES
from ..search.languages import translate_warning
from ..search.legs import QueryVectors, Scope, Words
from ..search.ranking import Ranking, rank
from ..search.results import SearchResult
from . import related, targets, upkeep
from .collections import Collections
from .evidence import ROUTED_BREADTH, SHORTLIST, route_by_evidence
from .freshness import Caught, caught_up
from .linkgraph import LinkGraph
from .status import StatusReport, library_status
from .targets import confine, label, resolve
from .upkeep import IndexReport
from .why import WHY_DEPTH, WhyResult, left_out, placed, searched_at
from .why import outside as why_outside


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
        self._vectors = QueryVectors(embedder)
        self._graph = LinkGraph(self.root)  # the library's link resolver, kept while valid

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
        it is one already. A folder without any collection is refused, and so is a folder
        holding another library (`memo index /tmp` made one library of every library below
        it); nothing is written then."""
        if self.declared:
            return None
        found = find_collections(self.root)
        if not found:
            raise targets.no_collection(self.root, self.root)
        inner = roots.libraries_between(self.root, found, self.settings)
        if inner:
            more = f" and {len(inner) - 1} more" if len(inner) > 1 else ""
            raise ConflictError(
                f"{self.root} holds the library {inner[0]}{more}: memo makes no library of "
                "libraries",
                f"Index that library: `memo index {shlex.quote(str(inner[0]))}`; to make "
                f"{self.root} one library instead, delete the {roots.MARKER} of each first.",
            )
        return roots.declare(self.root, self.settings)

    def index(
        self,
        target: str | os.PathLike[str] | IndexRequest | None = None,
        *,
        full: bool = False,
        progress: SyncProgress | None = None,
        vectors_now: bool = True,
    ) -> IndexReport:
        """Bring the indexes at or below `target` in line with the notes (`full`: rebuild).

        Takes an IndexRequest, or its fields. Re-scans the registry first; checks each database
        (quick_check) and reports every note that cannot be indexed. Broken `_meta.yaml` files
        are listed in `broken`. Declares the root a library (`declare`) when it is not one.
        Returns with every vector made (waiting for another process computing some), unless
        `vectors_now` is False: then only what fits a search's budget, the rest is the
        caller's to have computed (`sync`, in the background), and `chunks_pending` says how
        many are left.
        """
        if isinstance(target, IndexRequest):
            full, target = target.full, target.path
        t0 = time.perf_counter()
        report = IndexReport()
        self.declare()
        self._colls.registry(force=True)
        scope = self.scope(target)
        upkeep.note_broken(self._colls, confine(self.root, target), report)
        with counting() as served:  # this call's own: another sync may run meanwhile
            upkeep.sync_parts(
                self._colls,
                scope.parts,
                report,
                full=full,
                thorough=True,
                progress=progress,
                vectors=upkeep.ALL if vectors_now else upkeep.catch_up(self.settings),
            )
        report.chunks_cached = served.hits
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
            upkeep.note_discoveries(self._colls, report)
        if paths is None:
            parts: upkeep.Parts = [(c, "") for c in self._colls.under()]
            upkeep.note_broken(self._colls, None, report)
        else:
            parts = upkeep.parts_for_paths(
                self._colls, (Path(os.path.abspath(p)) for p in paths), report
            )
        upkeep.sync_parts(self._colls, parts, report, progress=progress, vectors=upkeep.BACKGROUND)
        report.seconds = time.perf_counter() - t0
        return report

    def _catch_up(self, parts: upkeep.Parts, target: str = ".") -> Caught:
        """Sync these collections before searching them (freshness.py: an edit made just
        before the call is found; a search never turns into indexing)."""
        return caught_up(self._colls, parts, self.settings, self.embedder is not None, target)

    # ------------------------------------------------------------------ search
    def search(
        self, path: str | SearchRequest = ".", query: str = "", **options: Any
    ) -> SearchResult:
        """Search a note, a folder, a collection, or `.`/`*` for all of them.

        Takes a SearchRequest, or its fields: `search("work", "vlan tagging", k=5, mode="lex")`
        (k, mode, route, max_tokens, tags, since, until, diverse; requests.py has the bounds).
        Changed notes are caught up first; both legs are ranked across every collection of the
        scope and fused once (ranking.py); `route=K` ranks the routed collections once and
        keeps the hits of the K best.
        """
        req = (
            path if isinstance(path, SearchRequest) else SearchRequest.make(path, query, **options)
        )
        t0 = time.perf_counter()
        flt = Filter.make(req.tags, req.since, req.until)  # bad dates fail before any work
        scope = self.scope(req.path)
        warnings = req.warnings() + self._broken_warnings(scope.target)
        ranking, (fresh, caught, failed), routed, more = self._ranked(scope, req, flt)
        # a broken _meta.yaml under the target, an index left as it was: never `high`
        skipped = bool(failed or self._broken_warnings(scope.target))
        warnings += [w for w in more + caught + ranking.warnings if w not in warnings]
        if said := self._language_warning(Words.of(req), [c for c, _ in ranking.parts()]):
            warnings.append(said)
        diverse = req.k >= DIVERSITY_MIN_K if req.diverse is None else req.diverse
        hits = ranking.hits(req.k, notes_cap(req.k) if diverse else None, req.explain)
        spent = None
        if req.max_tokens is not None:
            hits, spent = budget.fit(hits, req.max_tokens, token_counter(self.embedder))
            if req.explain and spent.cut and hits:
                why = {**(hits[-1].explain or {}), "budget": "cut to fit max_tokens"}
                hits[-1] = replace(hits[-1], explain=why)
        if not req.query.strip():
            warnings.append("the query is empty: nothing to search for")
        return SearchResult(
            query=req.query,
            mode=req.mode,
            target=scope.target,
            hits=hits,
            took_ms=(time.perf_counter() - t0) * 1000,
            collections=[c.name for c, _ in ranking.parts()],
            freshness=[fresh[c.rel] for c, _ in ranking.parts() if c.rel in fresh],
            warnings=warnings,
            budget=spent,
            confidence=ranking.verdict(bool(hits), skipped),
            routed=routed,
        )

    def rank(
        self,
        path: str | SearchRequest = ".",
        query: str = "",
        depth: int | None = None,
        **options: Any,
    ) -> Ranking:
        """The ranking a search reads its hits from, for whoever asks why a hit ranks where it
        does: each leg's candidates (`legs`, one per phrasing in `phrasings`), the fused
        `scores` best first (`ranked`), the rows and `hits`. Takes what `search` takes (the
        target is caught up first, as a search does; `route` is not applied) and `depth`, the
        candidates per leg (default: the search's)."""
        req = (
            path if isinstance(path, SearchRequest) else SearchRequest.make(path, query, **options)
        )
        flt = Filter.make(req.tags, req.since, req.until)
        scope = self.scope(req.path)
        caught = self._catch_up(scope.parts, scope.target).warnings
        ranking = self._rank(scope, req, depth or max(CANDIDATES, 2 * req.k), flt)
        for warning in caught:
            ranking.reader.note(warning)
        return ranking

    def _ranked(
        self, scope: Scope, req: SearchRequest, flt: Filter | None
    ) -> tuple[Ranking, Caught, list[str] | None, list[str]]:
        """The ranking a search reads its hits from, and `memo why` its places: the scope
        caught up and ranked once, or with `route` the routed collections (`_routed`). One
        path for both, so a note's place in `why` is its hit's in `search --explain`.
        Returns (ranking, its catch-up, routed collections, route warnings)."""
        depth = max(CANDIDATES, 2 * req.k)
        if req.route is not None and len(scope.parts) == 1 and scope.parts[0][1]:
            routed = [scope.parts[0][0].rel]  # one note or sub-folder: nothing to route
        elif req.route is not None:
            return self._routed(scope, req, depth, flt)
        else:
            routed = None
        caught = self._catch_up(scope.parts, scope.target)
        return self._rank(scope, req, depth, flt), caught, routed, []

    def _rank(self, scope: Scope, req: SearchRequest, depth: int, flt: Filter | None) -> Ranking:
        return rank(scope, Words.of(req), req.mode, self._vectors, depth, flt)

    def _routed(
        self, scope: Scope, req: SearchRequest, depth: int, flt: Filter | None
    ) -> tuple[Ranking, Caught, list[str], list[str]]:
        """`search(route=K)`: the summary router's best ROUTED_BREADTH·K collections of the
        scope, caught up and ranked once; the hits of the K best of them by their best chunk.
        Returns (ranking, its catch-up, routed collections, route warnings)."""
        assert req.route is not None
        whole = {c.rel for c, p in scope.parts if not p}
        prefix = None if scope.target == "." else scope.target
        ask = RouteRequest.make(
            req.query, k=req.route, prefix=prefix, strategy="summary", also=req.words.also
        )
        caught: list[Caught] = []

        def ready(colls: list[Collection]) -> None:
            colls[:] = [c for c in colls if c.rel in whole]
            caught.append(self._catch_up([(c, "") for c in colls], scope.target))

        routed = route_by_evidence(
            self._colls,
            self._vectors,
            ask,
            breadth=min(SHORTLIST, ROUTED_BREADTH * req.route),
            mode=req.mode,
            depth=depth,
            flt=flt,
            ready=ready,
        )
        keep = [rel for rel in routed.order if rel in whole][: req.route]
        if not keep or routed.ranking is None:
            raise NotFoundError(
                f"the router found no collection for this query under {scope.target}",
                "Search without --route, or give the collection's path.",
            )
        parts = routed.ranking.scope.parts
        chosen = {i for i, (c, _) in enumerate(parts) if c.rel in keep}
        return routed.ranking.within(chosen), caught[0], keep, routed.result.warnings

    # ------------------------------------------------------------------ route
    def route(self, query: str | RouteRequest, **options: Any) -> RouteResult:
        """Ranked candidate collections for a question (router/ says how, by scale).

        Takes a RouteRequest, or its fields: `route("vlan tagging", k=3, prefix="work")`.
        """
        req = query if isinstance(query, RouteRequest) else RouteRequest.make(query, **options)
        t0 = time.perf_counter()
        routed = route_by_evidence(self._colls, self._vectors, req)
        res = routed.result
        res.warnings = req.warnings() + self._broken_warnings(req.prefix) + res.warnings
        if routed.ranking is not None:
            searched = [c for c, _ in routed.ranking.parts()]
            if said := self._language_warning(Words.of(req), searched):
                res.warnings.append(said)
        if req.max_tokens is not None:
            counter = token_counter(self.embedder)
            res.collections, res.budget = budget.fit_route(res.collections, req.max_tokens, counter)
        res.took_ms = (time.perf_counter() - t0) * 1000
        return res

    # ------------------------------------------------------------------ why
    def why(self, path: str | WhyRequest, query: str = "", **options: Any) -> WhyResult:
        """Where a note ranks for a question in each leg, and what stood above it; or why it
        is not a candidate at all (why.py). Takes a WhyRequest, or its fields."""
        req = path if isinstance(path, WhyRequest) else WhyRequest.make(path, query, **options)
        full = confine(self.root, req.path)
        rel = label(self.root, full)
        if not full.is_file() or not full.name.lower().endswith(".md"):
            raise NotFoundError(
                f"{rel} is not a note", "Give a note's path, e.g. one from a search hit's `path`."
            )
        scope = self.scope(req.within)
        out = WhyResult(rel, req.query, scope.target, warnings=req.warnings())
        owner = self._colls.owner(full)
        coll = self._colls.at(owner) if owner is not None else None
        if searched_at(scope, coll, full) is None:
            out.reasons.append(why_outside(self.root, coll, full, None))
            return out
        assert coll is not None
        if rule := left_out(self.root, coll, full):
            out.reasons.append(rule)
            return out
        out.collection = coll.name
        # the search's own request and ranking (its depth, route, catch-up), not one of why's
        ask = SearchRequest.make(
            req.within,
            req.query,
            route=req.route,
            also=req.words.also,
            keywords=req.words.keywords,
            answer=req.words.answer,
        )
        ranking, caught, routed, more = self._ranked(scope, ask, None)
        said = more + caught.warnings + ranking.warnings
        out.warnings += [w for w in said if w not in out.warnings]
        at = searched_at(ranking.scope, coll, full)
        if at is None or (ranking.only is not None and at not in ranking.only):
            out.reasons.append(why_outside(self.root, coll, full, routed))
            return out

        def deeper() -> Ranking:  # each leg read deeper, for a note that is no candidate
            deep = self._rank(ranking.scope, ask, WHY_DEPTH, None)
            return deep if ranking.only is None else deep.within(ranking.only)

        placed(ranking, at, label(coll.folder, full), out, deeper)
        return out

    # ------------------------------------------------------------------ read
    def read(
        self, path: str | ReadRequest, line: int | None = None, lines: int | None = None
    ) -> Excerpt:
        """Lines of one note (from `line`, `lines` of them), with their citation hash; a
        request's `paths` too, in order, in the first one's `more`, all within `max_tokens`."""
        req = path if isinstance(path, ReadRequest) else ReadRequest.make(path, line, lines)
        notes = [(*self._note(at), first, n) for at, first, n in req.reads()]
        return read_excerpts(notes, req.max_tokens, token_counter(self.embedder))

    def title(self, path: str, line: int = 1) -> str:
        """What titles a note's line (the note's first by default): the heading path of the
        section it lies in, as a hit there is titled, else the note's title, else its name."""
        full, rel = self._note(path)
        try:
            lines = text_lines(full, rel)
        except OSError as e:
            raise NotFoundError(f"cannot read {rel}: {e.strerror or e}") from e
        if lines and lines[-1] == "":
            lines.pop()  # the newline that ends the last line does not start another
        return title_at("\n".join(lines), line, estimate_tokens, name=Path(rel).stem)

    def notes(self, under: str | os.PathLike[str] | None = None) -> list[str]:
        """Every note of the collections at or below `under` (default: the whole library),
        relative to the root, sorted: walked as a sync walks them (what the library leaves out
        stays out); nothing is read or indexed."""
        paths = [
            c.root_path(rel)
            for c in self.collections(under)
            for rel in note_files(c.folder, self.root)
        ]
        return sorted(paths)

    def _note(self, path: str) -> tuple[Path, str]:
        """A note's file and its path in the library; NotFoundError for anything else."""
        full = confine(self.root, path)
        rel = label(self.root, full)
        if full.is_dir():
            raise NotFoundError(
                f"{rel} is a folder", "Give a note's path, e.g. one from a search hit's `path`."
            )
        if not full.name.lower().endswith(".md") or any(p.startswith(".") for p in Path(rel).parts):
            raise NotFoundError(
                f"{rel} is not a note", "memo reads markdown notes (.md) outside hidden folders."
            )
        return full, rel

    def related(
        self, path: str | related.RelatedRequest, line: int | None = None, **options: Any
    ) -> related.RelatedResult:
        """A note's neighbours (library/related.py): the notes it links to and that link to
        it, the notes nearest it in meaning, its unresolved links. Takes a RelatedRequest, or
        its fields: `related("work/vlan.md", k=5)`."""
        req = path if isinstance(path, related.RelatedRequest) else None
        req = req or related.RelatedRequest.make(path, line, **options)
        count = token_counter(self.embedder)
        return related.related(self._colls, self._graph, req, self._catch_up, count)

    # ------------------------------------------------------------------ status
    def status(self, path: str | StatusRequest | None = None) -> StatusReport:
        """Every collection at or below `path`: files, chunks, staleness, skipped and failed
        notes, the watcher's heartbeat (status.py)."""
        req = path if isinstance(path, StatusRequest) else StatusRequest.make(path)
        scope = self.scope(req.path)
        under = confine(self.root, req.path)
        return library_status(self._colls, scope, under, self.settings, self.embedder)

    # ------------------------------------------------------------------ helpers
    def scope(self, target: str | os.PathLike[str] | None = ".") -> Scope:
        """The collections a target covers and the sub-path inside each (targets.py), as every
        operation resolves it; TargetError when there is none. Public for whoever ranks a scope
        directly (`search.ranking.rank`, the ranking tests and bench/) without a search."""
        return resolve(self._colls, target)

    def _language_warning(self, words: Words, searched: list[Collection]) -> str | None:
        """Say when the question is not in the language of most of what it searched."""
        reg = self._colls.scanned()
        entries = [reg.entry(c.rel) for c in searched]
        parts = [(e.chunks or 0, e.language_shares()) for e in entries if e is not None]
        return translate_warning(words.query, words.also, parts, words.answer)

    def _broken_warnings(self, target: str | None) -> list[str]:
        """One warning per broken `_meta.yaml` under the target: those notes are not searched.
        Called after the target was resolved, which scanned the registry already."""
        lines = self._colls.scanned().broken_warnings(target)
        return [f"{line}; its notes are not searched until it is fixed" for line in lines]
