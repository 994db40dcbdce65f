"""Which notes an index is behind on: the one rule that sync, plan and status ask.

A note is behind when the index has no row for it or its stored (mtime, size) differ from the
file's: the first stage (read, chunk, write the text) is owed. A note the index holds that is
gone from disk is owed a removal. That is all of it: vectors are the second stage and are
counted per chunk (`store.pending_count`), never by re-reading a note. Reading the stored
stats never writes, whoever asks (an estimate, status, a sync).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import apsw

from .files import FileStat

Stored = dict[str, tuple[int, int, str]]  # note -> (mtime_ns, size, hash) as the index has it


@dataclass(slots=True)
class Behind:
    """What a sync of one (part of a) collection owes: notes to read, notes to remove."""

    todo: list[str] = field(default_factory=list)  # new or changed since indexed, sorted
    removed: list[str] = field(default_factory=list)  # indexed, gone from disk, sorted

    @property
    def count(self) -> int:
        return len(self.todo) + len(self.removed)


def stored_stats(conn: apsw.Connection, prefix: str = "") -> Stored:
    """Each note the index holds (at or under `prefix`), with the stat and hash it stored."""
    pre = prefix.strip("/")
    return {
        path: (mtime, size, digest or "")
        for path, mtime, size, digest in conn.execute(
            "SELECT path, mtime_ns, size, hash FROM files"
        )
        if not pre or path == pre or path.startswith(pre + "/")
    }


def behind(on_disk: dict[str, FileStat], stored: Stored) -> Behind:
    """The notes whose index rows are missing or out of date, and the rows of notes gone."""
    todo = sorted(
        p for p, st in on_disk.items() if p not in stored or stored[p][:2] != (st.mtime_ns, st.size)
    )
    return Behind(todo, sorted(set(stored) - set(on_disk)))
