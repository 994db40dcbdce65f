"""The one way indexes are brought in line with the notes, whoever asks.

Three callers, one rule set: `memo index` (re-scan the registry, sync the target thoroughly), the
catch-up before each search (sync the searched scope) and the watcher (re-scan, then sync what
its events named, or everything to reconcile). Every pass runs in two stages
(collection/sync.py): the text of every changed note of every collection first, then the
vectors, collection by collection, each under its lease; how much of the second stage a caller
does is its `Vectors` policy (`memo index` all, the watcher all it can, a search's catch-up a
budget of MEMO_SEARCH_EMBED_SECONDS). Every sync that changed an index tells the registry; one
collection failing never stops the others. Each caller's part: docs/design.md.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..collection import lease
from ..collection.collection import Collection
from ..collection.embedding import Pace
from ..collection.meta import META_FILE, problem_of
from ..collection.progress import SyncProgress, SyncStopped
from ..collection.sync import SYNC_COUNTERS, SyncReport
from ..config import Settings
from ..errors import MemoError
from ..outputs import Published, doc
from ..printable import duration
from .collections import Collections
from .plan import PLAN_MAX, plan

BULK = 16  # more changed paths than this in one collection: one sync of the whole collection
LEASES_AHEAD = 256  # collections whose leases a pass takes up front (a file descriptor each)


@dataclass(frozen=True, slots=True)
class Vectors:
    """How much of the vector stage a pass does: `budget` seconds in all (None: no bound);
    `wait` for an index whose lease another process holds (else that one is left to it)."""

    budget: float | None
    wait: bool = False


ALL = Vectors(None, wait=True)  # memo index: every vector made when it returns
BACKGROUND = Vectors(None)  # the watcher: every vector nobody else is making


def catch_up(settings: Settings) -> Vectors:
    """A search's share of the vector stage: what fits in MEMO_SEARCH_EMBED_SECONDS (0.5 s by
    default, ~6 chunks on two cores: the note just edited gets its vectors, a backlog does not
    hold the answer)."""
    return Vectors(settings.search_embed_seconds)


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

    def done(self) -> IndexDone:
        """The pass as `memo index` answers it."""
        return IndexDone(
            **self._sums(),
            collections_detail=[r.to_dict() for r in self.reports],
            errors=self.errors,
            broken=self.broken,
        )

    def totals(self) -> dict[str, Any]:
        """The pass's sums as its answer gives them, without each collection's report and the
        errors: none of those is built for it (the watcher asks at every reconcile)."""
        out = IndexDone(**self._sums()).to_dict()
        return {k: v for k, v in out.items() if k not in IndexDone.LISTS}

    def _sums(self) -> dict[str, Any]:
        """The pass's figures over its collections: every field of IndexDone but its lists."""
        sums: dict[str, Any] = {k: sum(getattr(r, k) for r in self.reports) for k in SYNC_COUNTERS}
        return sums | {
            "chunks_cached": self.chunks_cached,
            "collections": len(self.reports),
            "rebuilt": sum(1 for r in self.reports if r.rebuilt),
            "seconds": self.seconds,
            "embed_seconds": sum(r.embed_seconds for r in self.reports),
            # a pass that only computed vectors, or found notes read meanwhile, did something
            "nothing_to_do": not any(
                r.did_work or r.chunks_embedded or r.read_elsewhere for r in self.reports
            ),
        }

    def to_dict(self) -> dict[str, Any]:
        return self.done().to_dict()


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexDone(Published):
    """What `memo index` answers: the pass's sums over its collections (the counters of
    collection/sync.py SYNC_COUNTERS first), each one's report, and what kept notes out."""

    new: int = doc("Notes indexed for the first time.")
    changed: int = doc("Notes re-indexed: their text changed.")
    removed: int = doc("Notes gone from disk, taken out of the index.")
    unchanged: int = doc("Notes already up to date.")
    touched: int = doc("Notes whose time moved, their text the same: nothing re-embedded.")
    skipped: int = doc("Notes not indexed (too large, binary...): `memo status` says why.")
    chunks_embedded: int = doc("Vectors made (the embedding cache's included).")
    chunks_reused: int = doc("Vectors kept from the index's own rows (text unchanged).")
    chunks_pending: int = doc("Chunks still without a vector: computed in the background.")
    read_elsewhere: int = doc("Notes another process indexed meanwhile (a search, the watcher).")
    chunks_cached: int = doc("Of chunks_embedded, served by the embedding cache.")
    collections: int = doc("Collections indexed.")
    rebuilt: int = doc("Of them, rebuilt from scratch.")
    seconds: float = doc("Seconds the pass took.", digits=3)
    embed_seconds: float = doc("Of them, seconds spent computing vectors.", digits=3)
    nothing_to_do: bool = doc("Every index was up to date: the pass changed nothing.")
    collections_detail: list[dict[str, Any]] = doc(
        "Each collection's counts, by the same names.", factory=list
    )
    errors: list[str] = doc(
        "What kept notes out of the index: broken _meta.yaml, failures.", factory=list
    )
    broken: list[dict[str, str]] = doc(
        "Collections whose _meta.yaml is broken: path, error.", factory=list
    )

    # what `totals` leaves out
    LISTS: ClassVar[tuple[str, ...]] = ("collections_detail", "errors", "broken")


def sync_parts(
    colls: Collections,
    parts: Parts,
    report: IndexReport,
    *,
    full: bool = False,
    thorough: bool = False,
    progress: SyncProgress | None = None,
    vectors: Vectors = ALL,
) -> dict[str, SyncReport | MemoError]:
    """Sync each (collection, sub-path): the text of all of them, then their vectors as far as
    `vectors` says, in the order of `parts`. Returns the outcome per collection folder (rel).

    Reports and errors also go into `report`; a stop request ends the pass (SyncStopped is
    recorded, not raised). The router hears about every collection whose index changed.
    """
    t0, since = time.perf_counter(), time.time()
    by = "memo index" if thorough else "a search" if vectors.budget is not None else "the watcher"
    # memo index says first what it will do: a search meanwhile leaves it that work
    claims = (
        Claims.take(parts, by, vectors.budget is None, colls.registry_dir) if thorough else Claims()
    )
    outcome: dict[str, SyncReport | MemoError] = {}
    try:
        if progress is not None:
            progress.collections(len(parts))
            if progress.wants_plan and len(parts) <= PLAN_MAX:
                progress.plan(plan(parts, full))
        reading = {"full": full, "progress": progress, "thorough": thorough, "by": by}
        synced = _read_notes(parts, report, outcome, claims, since=since, **reading)
        colls.update_summaries([c.folder for c, rep in synced if rep.did_work])
        if not report.stopped:
            if vectors.budget is None:  # the descriptions its re-scan left, before the chunks
                colls.describe()
            embedded = _embed(synced, report, outcome, progress, vectors, claims.vectors)
            colls.update_summaries([c.folder for c in embedded])
    finally:
        claims.release()
        colls.describe_later = False  # a stopped pass leaves them to the next search
    report.seconds += time.perf_counter() - t0
    return outcome


def _read_notes(
    parts: Parts,
    report: IndexReport,
    outcome: dict[str, SyncReport | MemoError],
    claims: Claims,
    **reading: Any,
) -> list[tuple[Collection, SyncReport]]:
    """The text stage of a pass: each part read in turn (with its claimed lease, if any);
    returns what was synced. A stop request ends it, recorded in `report`."""
    synced: list[tuple[Collection, SyncReport]] = []
    for coll, prefix in parts:
        held = claims.text.pop(coll.rel, None)
        try:
            rep = coll.sync(prefix, held=held, **reading)
        except SyncStopped:
            report.stopped = True
            break
        except MemoError as e:  # one collection failing never stops the others
            _failed(report, outcome, coll, e)
            continue
        finally:
            if held is not None:  # however the sync ended: never left to the collector
                held.release()
        report.reports.append(rep)
        outcome[coll.rel] = rep
        synced.append((coll, rep))
    return synced


@dataclass(slots=True)
class Claims:
    """The leases `memo index` takes before it reads a note: the text lease of every
    collection it will do (`ahead`: a search meanwhile neither reads those notes itself nor
    waits for them) and, when it computes every vector, the vector lease too (a search says
    who computes them from the first second, not "run memo index"). Each is released as its
    collection's stage ends, the rest when the pass does."""

    text: dict[str, lease.Lease] = field(default_factory=dict)
    vectors: dict[str, lease.Lease] = field(default_factory=dict)
    whole: lease.Lease | None = None  # the library's: new descriptions are this pass's too

    @classmethod
    def take(cls, parts: Parts, by: str, vectors: bool, registry: Path | None = None) -> Claims:
        out = cls()
        if registry is not None:
            out.whole = lease.acquire_pass(registry, by)
        for coll, _ in parts[:LEASES_AHEAD]:
            if coll.rel in out.text:
                continue
            with contextlib.suppress(OSError):  # a new collection's index folder, made now
                coll.index_path.parent.mkdir(parents=True, exist_ok=True)
            if (held := lease.acquire_text(coll.index_path, by, ahead=True)) is not None:
                out.text[coll.rel] = held
            if vectors and coll.embedder is not None:
                if (got := lease.acquire(coll.index_path)) is not None:
                    out.vectors[coll.rel] = got
        return out

    def release(self) -> None:
        for held in (*self.text.values(), *self.vectors.values()):
            held.release()
        if self.whole is not None:
            self.whole.release()


def _embed(
    synced: list[tuple[Collection, SyncReport]],
    report: IndexReport,
    outcome: dict[str, SyncReport | MemoError],
    progress: SyncProgress | None,
    vectors: Vectors,
    ahead: dict[str, lease.Lease],
) -> list[Collection]:
    """The vector stage of a pass (`_VectorPass`), with the leases taken `ahead` of the
    text stage; returns the collections that got vectors."""
    for c, rep in synced:  # nothing to compute there after all: free it now
        if not rep.chunks_pending and c.rel in ahead:
            ahead.pop(c.rel).release()
    run = _VectorPass(synced, report, outcome, progress, vectors, ahead=ahead)
    owed = sum(rep.chunks_pending for c, rep in synced if c.embedder is not None)
    if progress is not None and owed and vectors.budget is None:
        progress.pending(owed)
    if vectors.budget is None:
        run.lease_ahead()
    try:
        run.each()
    finally:
        for held in run.ahead.values():
            held.release()
    if vectors.budget is not None:  # a search: what it could not finish is asked for first
        _wanted(synced)
    return run.done


@dataclass
class _VectorPass:
    """Each collection's vectors in turn, within the pass's budget; with `wait`, the
    collections another process was embedding are visited again, waiting for it."""

    synced: list[tuple[Collection, SyncReport]]
    report: IndexReport
    outcome: dict[str, SyncReport | MemoError]
    progress: SyncProgress | None
    vectors: Vectors
    done: list[Collection] = field(default_factory=list)
    later: list[tuple[Collection, SyncReport]] = field(default_factory=list)
    ahead: dict[str, lease.Lease] = field(default_factory=dict)
    pace: Pace = field(default_factory=Pace)  # one measured speed for the whole pass
    t0: float = field(default_factory=time.perf_counter)
    # when each collection was last wanted as the pass began: one wanted since goes first
    asked: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.asked = {c.rel: lease.wanted(c.index_path) for c, r in self.synced if r.chunks_pending}

    def lease_ahead(self) -> None:
        """A pass over the library takes the leases of what it will do up front: a search
        meanwhile sees every queued collection as being computed (and by whom), and leaves it
        alone."""
        for c, r in self.synced:
            if (
                r.chunks_pending
                and c.embedder is not None
                and c.rel not in self.ahead
                and len(self.ahead) < LEASES_AHEAD
            ):
                got = lease.acquire(c.index_path)
                if got is not None:
                    self.ahead[c.rel] = got

    def each(self) -> None:
        budget = self.vectors.budget
        for attempt in ("now", "after waiting"):
            now = attempt == "now"
            todo = [x for x in self.synced if x[1].chunks_pending] if now else self.later
            while todo:
                # a search takes its own scope in order; a pass over the library, what a search
                # asked for most recently first
                coll, rep = todo.pop(0 if budget is not None else _next(todo, self.asked))
                left = None if budget is None else budget - (time.perf_counter() - self.t0)
                if left is not None and left <= 0:
                    break
                before = rep.chunks_embedded
                try:
                    held = self.ahead.get(coll.rel)  # released by the embed (again: a no-op)
                    coll.embed(
                        rep, self.progress, left, attempt != "now", held=held, pace=self.pace
                    )
                except SyncStopped:
                    self.report.stopped = True
                    return
                except MemoError as e:
                    _failed(self.report, self.outcome, coll, e)
                    continue
                if rep.chunks_embedded > before:
                    self.done.append(coll)
                if rep.embedding_by is not None and attempt == "now":
                    self.later.append((coll, rep))
            if not self.vectors.wait or not self.later:
                break
            for _, rep in self.later:
                rep.embedding_by = None


def _next(todo: list[tuple[Collection, SyncReport]], asked: dict[str, float]) -> int:
    """Which collection's vectors to compute next: the one a search wanted most recently
    since the pass began (in this process or another: lease.want), else the next in order."""
    when, i = max(
        ((lease.wanted(c.index_path), i) for i, (c, _) in enumerate(todo)), default=(0.0, 0)
    )
    return i if when > asked.get(todo[i][0].rel, 0.0) else 0


def _wanted(searched: list[tuple[Collection, SyncReport]]) -> None:
    """A search's budget ran out with vectors still missing that nobody computes: ask for
    them first, to whichever process computes vectors next."""
    for coll, rep in searched:
        if rep.chunks_pending and rep.embedding_by is None:
            lease.want(coll.index_path)


def _failed(
    report: IndexReport, outcome: dict[str, SyncReport | MemoError], coll: Collection, e: MemoError
) -> None:
    hint = f" — {e.hint}" if e.hint else ""
    report.failures.append(f"{coll.rel}: {e}{hint}")
    outcome[coll.rel] = e


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
            report.broken.append({"path": colls.rel(folder), "error": problem_of(e, folder)})
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


def pending_warning(reports: list[SyncReport], has_model: bool, target: str) -> str | None:
    """What a reader of results over these collections must know about what is not in them
    yet: notes another process is reading (their words), vectors still to come (how many,
    whether a process is computing them and about how long it will take at its measured pace,
    or how to have them computed). None when the index holds everything."""
    said = []
    reading = [r for r in reports if r.reading_by is not None and r.unread]
    if reading:
        unread = sum(r.unread for r in reading)
        said.append(
            f"{unread:,} notes are being read by memo pid {reading[0].reading_by} "
            "(memo index): their words are not searchable yet"
        )
    pending = sum(r.chunks_pending for r in reports)
    if pending and has_model:
        said.append(_vectors_warning(reports, pending, target))
    return "; ".join(said) or None


def _vectors_warning(reports: list[SyncReport], pending: int, target: str) -> str:
    head = f"vectors for {pending:,} of {sum(r.chunks for r in reports):,} chunks"
    busy = [r for r in reports if r.chunks_pending and r.embedding_by is not None]
    if busy:
        rate = next((r.rate for r in busy if r.rate), None)  # the holder's pace, once measured
        left = f"about {duration(max(1.0, pending / rate))}, " if rate else ""
        return (
            f"{head} are still being computed ({left}by memo pid {busy[0].embedding_by}): "
            "semantic matches may be missing"
        )
    where = "" if target == "." else f" {target}"
    return (
        f"{head} are not computed yet: semantic matches may be missing; "
        f"run `memo index{where}` to compute them"
    )
