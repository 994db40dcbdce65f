"""Counting the work of a sync before it starts, so progress can say how long it will take.

`plan(parts, full)` lists, per part, the notes a sync will (re)index and their sizes: those whose
(mtime, size) differ from what the index holds (collection/staleness.py, the one rule), found by
the same stat walk and one read-only look at each index's `files` table, without reading a note.
An estimate for people (a note touched but unchanged counts as work): nothing decides anything by
it, and it never writes (a damaged index counts as empty; the sync heals it). Only `memo index`
asks (`SyncProgress.wants_plan`), and only up to PLAN_MAX collections: past that, counting would
cost more than it tells.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..collection.collection import Collection
from ..collection.files import note_files
from ..collection.staleness import behind
from ..errors import MemoError

PLAN_MAX = 1_000  # collections: counting more would cost seconds before any work began


@dataclass(slots=True)
class PlannedPart:
    """One (collection, sub-path) a sync pass will visit: the label its progress will show
    (`SyncProgress.begin`) and the notes it will (re)index, in the order it takes them."""

    label: str
    files: list[tuple[str, int]] = field(default_factory=list)  # (note, bytes), sorted

    @property
    def bytes(self) -> int:
        return sum(n for _, n in self.files)


def plan(parts: list[tuple[Collection, str]], full: bool = False) -> list[PlannedPart]:
    out = []
    for coll, prefix in parts:
        label = coll.root_path(prefix.strip("/")) if prefix else coll.rel
        try:
            on_disk = note_files(coll.folder, coll.root, prefix, [])
            stored = {} if full else coll.stored()
        except (MemoError, OSError):  # the sync itself will say what is wrong
            out.append(PlannedPart(label))
            continue
        todo = [(p, on_disk[p].size) for p in behind(on_disk, stored).todo]
        out.append(PlannedPart(label, todo))
    return out
