"""Counting the work of a sync before it starts, so progress can say how long it will take.

    plan(parts, full) -> list[PlannedPart]   per part: the notes a sync will (re)index, sizes

A sync reindexes the notes whose (mtime, size) differ from what its index holds (and those
indexed while the model was down); this says which, with their sizes, by the same stat walk
and one read of each index's `files` table, without reading a note. It is an estimate for
people (a note touched but unchanged is counted as work): nothing decides anything by it.
Only `memo index` asks (a driver sets `SyncProgress.wants_plan`), and only up to PLAN_MAX
collections: past that, counting would cost more than it tells.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..collection.collection import Collection
from ..collection.files import note_files
from ..collection.sync import NOVEC  # a note indexed without vectors: redone when it can be
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
            stored = {} if full else _stored(coll)
        except (MemoError, OSError):  # the sync itself will say what is wrong
            out.append(PlannedPart(label))
            continue
        todo = [
            (p, st.size)
            for p, st in sorted(on_disk.items())
            if p not in stored
            or stored[p][:2] != (st.mtime_ns, st.size)
            or (stored[p][2].startswith(NOVEC) and coll.embedder is not None)
        ]
        out.append(PlannedPart(label, todo))
    return out


def _stored(coll: Collection) -> dict[str, tuple[int, int, str]]:
    if not coll.index_path.exists():
        return {}
    rows, _ = coll.read(
        lambda s: s.conn.execute("SELECT path, mtime_ns, size, hash FROM files").fetchall()
    )
    return {r[0]: (r[1], r[2], r[3] or "") for r in rows}
