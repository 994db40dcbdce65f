"""The one way indexes are brought in line with the notes, whoever asks.

Three callers, one rule set:

- `memo index` (and `memo_reindex`): re-scan the registry, then sync every collection of the
  target, thoroughly (SQLite's quick_check, every unindexable note reported);
- the catch-up before each search: sync the searched scope, so an edit made just before the
  call is found in it;
- the watcher: re-scan the registry, then sync the collections that own the paths its events
  named (a note, a folder, a `_meta.yaml`), or everything for its periodic reconcile.

Every sync that changed an index tells the registry what the collection holds now (the router
reads it). One collection failing never stops the others: its error goes into the report.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..collection.collection import Collection
from ..collection.meta import META_FILE
from ..collection.progress import SyncProgress, SyncStopped
from ..collection.sync import SYNC_COUNTERS, SyncReport
from ..errors import MemoError
from .collections import Collections
from .plan import PLAN_MAX, plan

BULK = 16  # more changed paths than this in one collection: one sync of the whole collection

Parts = list[tuple[Collection, str]]  # (collection, sub-path inside it; '' = all of it)


@dataclass(slots=True)
class IndexReport:
    """What one sync pass over a scope did."""

    reports: list[SyncReport] = field(default_factory=list)  # one per collection synced
    failures: list[str] = field(default_factory=list)  # collections that failed, and why
    broken: list[dict[str, str]] = field(default_factory=list)  # {path, error}: bad _meta.yaml
    found: list[str] = field(default_factory=list)  # collections this process had not seen
    gone: list[str] = field(default_factory=list)  # collections that vanished since
    outside: list[str] = field(default_factory=list)  # paths asked about that no collection owns
    stopped: bool = False  # a stop request ended it early (what was written stays)
    seconds: float = 0.0
    chunks_cached: int = 0  # of chunks_embedded, served by the embedding cache (embed/cache.py)

    @property
    def errors(self) -> list[str]:
        """Everything that kept notes out of the index: broken metas, then failures."""
        return self.broken_lines() + self.failures

    def broken_lines(self) -> list[str]:
        return [f"{_meta_path(b['path'])}: {b['error']}" for b in self.broken]

    def totals(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: sum(getattr(r, k) for r in self.reports) for k in SYNC_COUNTERS}
        out["chunks_cached"] = self.chunks_cached
        out["collections"] = len(self.reports)
        out["rebuilt"] = sum(1 for r in self.reports if r.rebuilt)
        out["seconds"] = round(self.seconds, 3)
        out["embed_seconds"] = round(sum(r.embed_seconds for r in self.reports), 3)
        out["nothing_to_do"] = not any(r.did_work for r in self.reports)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.totals(),
            "collections_detail": [r.to_dict() for r in self.reports],
            "errors": self.errors,
            "broken": self.broken,
        }


def sync_parts(
    colls: Collections,
    parts: Parts,
    report: IndexReport,
    *,
    full: bool = False,
    thorough: bool = False,
    progress: SyncProgress | None = None,
) -> dict[str, SyncReport | MemoError]:
    """Sync each (collection, sub-path); returns the outcome per collection folder (rel).

    Reports and errors also go into `report`; a stop request ends the pass (SyncStopped is
    recorded, not raised). The router hears about every collection whose index changed.
    """
    t0 = time.perf_counter()
    outcome: dict[str, SyncReport | MemoError] = {}
    changed: list[Path] = []
    if progress is not None:
        progress.collections(len(parts))
        if progress.wants_plan and len(parts) <= PLAN_MAX:
            progress.plan(plan(parts, full))
    for coll, prefix in parts:
        try:
            rep = coll.sync(prefix, full=full, progress=progress, thorough=thorough)
        except SyncStopped:
            report.stopped = True
            break
        except MemoError as e:  # one collection failing never stops the others
            hint = f" — {e.hint}" if e.hint else ""
            report.failures.append(f"{coll.rel}: {e}{hint}")
            outcome[coll.rel] = e
            continue
        report.reports.append(rep)
        outcome[coll.rel] = rep
        if rep.did_work:
            changed.append(coll.folder)
    colls.update_summaries(changed)
    report.seconds += time.perf_counter() - t0
    return outcome


def note_broken(colls: Collections, folder: Path | None, report: IndexReport) -> None:
    """List the collections at or below `folder` whose `_meta.yaml` is broken."""
    for e in colls.entries_under(folder):
        if e.error:
            report.broken.append({"path": e.path, "error": e.error})


def note_discoveries(colls: Collections, report: IndexReport) -> None:
    """Collections found or gone since this process last looked (the watcher logs them)."""
    found, gone = colls.discoveries()
    report.found, report.gone = found, gone


def parts_for_paths(colls: Collections, paths: Iterable[Path], report: IndexReport) -> Parts:
    """The (collection, sub-path) pairs to sync after changes at these paths.

    A path is a note, a folder or a collection folder (its `_meta.yaml` changed), existing or
    gone. Its owner (the nearest collection at or above it) syncs that sub-path; a collection
    folder also makes the collection above it give up (or adopt) its notes, and every
    collection inside a changed folder syncs whole. Many paths in one collection: one sync.
    """
    wanted: dict[Path, set[str]] = {}

    def want(folder: Path, sub: str) -> None:
        wanted.setdefault(folder, set()).add(sub)

    for path in paths:
        before = len(wanted)
        owner = colls.owner(path)
        if owner is not None:
            want(owner, "" if owner == path else _rel(path, owner))
        if path.is_dir() or not path.exists():
            for inner in _inside(colls, path):
                want(inner, "")
            above = colls.owner(path.parent) if path != colls.root else None
            if above is not None and above != owner:
                want(above, _rel(path, above))
        if owner is None and len(wanted) == before:
            report.outside.append(colls.rel(path))
    parts: Parts = []
    for folder in sorted(wanted):
        try:
            coll = colls.at(folder)
        except MemoError as e:
            report.broken.append({"path": colls.rel(folder), "error": str(e)})
            continue
        subs = wanted[folder]
        if "" in subs or len(subs) > BULK:
            parts.append((coll, ""))
            continue
        for sub in sorted(subs):
            if not any(sub.startswith(s + "/") for s in subs):  # a parent folder covers it
                parts.append((coll, sub))
    return parts


def _inside(colls: Collections, folder: Path) -> list[Path]:
    """Collection folders strictly inside `folder`, from the registry."""
    if folder == colls.root:
        return [colls.folder(e.path) for e in colls.entries_under(None) if not e.error]
    return [
        colls.folder(e.path)
        for e in colls.entries_under(folder)
        if not e.error and colls.folder(e.path) != folder
    ]


def _meta_path(rel: str) -> str:
    return META_FILE if rel == "." else f"{rel}/{META_FILE}"


def _rel(path: Path, folder: Path) -> str:
    return os.path.relpath(path, folder).replace(os.sep, "/")
