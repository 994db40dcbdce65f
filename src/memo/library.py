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

from .collection.collection import SYNC_COUNTERS, Collection, SyncReport
from .collection.files import find_collections
from .collection.lexical import fts_query, query_terms, script
from .collection.meta import META_FILE, load_meta
from .config import Settings
from .embed import Embedder
from .errors import EmbedderUnavailableError, LibraryNotFoundError, MemoError, TargetError
from .search import (
    CANDIDATES,
    MODES,
    Freshness,
    Hit,
    Legs,
    SearchResult,
    cut_text,
    fuse,
)

MAX_QUERY_CHARS = 10_000
MAX_K = 200


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
        self._collections: dict[Path, Collection] = {}
        self.errors: list[str] = []

    # ------------------------------------------------------------------ discovery
    def collections(self, under: Path | None = None) -> list[Collection]:
        """Collections at or below `under` (default: the root); broken metas go to .errors."""
        found = []
        for folder in find_collections(under or self.root):
            coll = self._collection(folder)
            if coll is not None:
                found.append(coll)
        return found

    def _collection(self, folder: Path) -> Collection | None:
        if folder in self._collections:
            return self._collections[folder]
        try:
            meta = load_meta(folder)
        except MemoError as e:
            self.errors.append(str(e))
            return None
        coll = Collection(folder, self.root, meta, self.embedder, self.settings)
        self._collections[folder] = coll
        return coll

    def close(self) -> None:
        for c in self._collections.values():
            c.close()

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
        scope = self.resolve(target)
        report = IndexReport()
        for coll, prefix in scope.parts:
            try:
                report.reports.append(
                    coll.sync(prefix, full=full, progress=progress, thorough=True)
                )
            except MemoError as e:  # one collection failing never stops the others
                hint = f" — {e.hint}" if e.hint else ""
                report.errors.append(f"{coll.rel}: {e}{hint}")
        report.errors = self.errors + report.errors
        report.seconds = time.perf_counter() - t0
        return report

    def count_pending(self, target: str | None = None) -> int:
        """How many notes lie under the target: the length of a progress bar."""
        from .collection.files import note_files

        return sum(len(note_files(c.folder, self.root, p)) for c, p in self.resolve(target).parts)

    # ------------------------------------------------------------------ search
    def search(
        self, target: str | None, query: str, k: int = 8, mode: str = "hybrid"
    ) -> SearchResult:
        t0 = time.perf_counter()
        if mode not in MODES:
            raise MemoError(f"unknown mode {mode!r}", f"Use one of: {', '.join(MODES)}.")
        k = max(1, min(int(k), MAX_K))
        query = (query or "")[:MAX_QUERY_CHARS]
        scope = self.resolve(target)
        warnings = list(self.errors)
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
        legs = self.legs(scope, query, mode, max(CANDIDATES, 2 * k), warnings)
        scores = fuse(legs, mode)
        hits = self._hits(scope, scores, legs.lex_ranked, legs.vec_ranked, k)
        for coll, _ in scope.parts:  # indexes found damaged (and rebuilt) while searching
            warnings.extend(coll.healed)
            coll.healed.clear()
        return SearchResult(
            query=query,
            mode=mode,
            target=scope.target,
            hits=hits,
            took_ms=(time.perf_counter() - t0) * 1000,
            collections=[c.name for c, _ in scope.parts],
            freshness=freshness,
            warnings=warnings,
        )

    def legs(self, scope: Scope, query: str, mode: str, depth: int, warnings: list[str]) -> Legs:
        """Each leg's candidates across every collection of the scope, best first."""
        legs = Legs()
        match = fts_query(query)
        if mode in ("hybrid", "lex") and match:
            for i, (coll, prefix) in enumerate(scope.parts):
                legs.lex += [((i, cid), s) for cid, s in coll.lex_candidates(match, depth, prefix)]
            if mode == "hybrid":  # only fusion weighs the lexical leg by its coverage
                legs.coverage = self._term_coverage(scope, query)
        if mode in ("hybrid", "vec") and query.strip():
            qvec = self._embed_query(query, scope, warnings)
            if qvec is not None:
                for i, (coll, prefix) in enumerate(scope.parts):
                    legs.vec += [
                        ((i, cid), s) for cid, s in coll.vec_candidates(qvec, depth, prefix)
                    ]
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

    def _term_coverage(self, scope: Scope, query: str) -> float:
        """Share of the query's distinct stems that occur anywhere in the searched indexes."""
        wanted = set(query_terms(query))
        if not wanted:
            return 0.0
        found: set[str] = set()
        for coll, _ in scope.parts:
            found |= coll.known_terms(wanted - found)
            if found == wanted:
                break
        return len(found) / len(wanted)

    def _embed_query(self, query: str, scope: Scope, warnings: list[str]) -> np.ndarray | None:
        if self.embedder is None:
            warnings.append("no embedder configured: vector leg skipped")
            return None
        if not any(c.has_vectors() for c, _ in scope.parts):
            warnings.append("these indexes hold no vectors (built without a model): lexical only")
            return None
        try:
            return self.embedder.embed_query(query)
        except EmbedderUnavailableError as e:
            warnings.append(f"{e} — lexical results only. {e.hint}")
            return None

    def _hits(
        self,
        scope: Scope,
        scores: dict[Any, float],
        lex_ranked: list[tuple[int, int]],
        vec_ranked: list[tuple[int, int]],
        k: int,
    ) -> list[Hit]:
        # Read rows only for the best k and whatever ties with the k-th (the tie-break needs
        # their mtime): reading all ~100 fused candidates cost more than both legs' SQL.
        ranked = sorted(scores, key=lambda key: -scores[key])
        if len(ranked) > k:
            floor = scores[ranked[k - 1]]
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
        hits = []
        for key in order[:k]:
            coll = scope.parts[key[0]][0]
            row = rows[key]
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
                )
            )
        return hits

    # ------------------------------------------------------------------ status
    def status(self, target: str | None = None) -> dict[str, Any]:
        scope = self.resolve(target)
        return {
            "root": str(self.root),
            "collections": [c.status() for c, _ in scope.parts],
            "errors": list(self.errors),
        }


def _last_write(coll: Collection) -> float | None:
    times = []
    for suffix in ("", "-wal"):
        try:
            times.append(os.path.getmtime(f"{coll.index_path}{suffix}"))
        except OSError:
            pass
    return max(times) if times else None
