"""How a sync reports its progress and learns to stop: what a driver implements.

Standard library only, so a driver (the CLI's progress line) imports it without loading the
index code.
"""

from __future__ import annotations

from ..errors import MemoError


class SyncProgress:
    """What a driver hears while a sync runs, and how it asks it to stop.

    Every method is a no-op here; a driver overrides what it needs (the CLI's progress line,
    the watcher's stop flag). `stop_requested` is asked between files and between embedding
    slices: True ends the sync with SyncStopped, keeping every file written so far.
    """

    wants_plan = False  # True: the pass counts its work first and calls `plan` (library/plan.py)

    def collections(self, n: int) -> None:
        """A pass over n collections starts (each then calls `begin`)."""

    def plan(self, parts: list) -> None:
        """The work counted before the pass (when `wants_plan`): one PlannedPart per
        (collection, sub-path), with the notes it will (re)index and their sizes."""

    def begin(self, label: str, files: int) -> None:
        """A collection (or part of one, `label`) starts: `files` notes to (re)index."""

    def files_done(self, n: int) -> None:
        """n more notes finished (indexed, skipped, or found identical)."""

    def read_elsewhere(self, n: int) -> None:
        """n notes the pass counted were read meanwhile by another process (a search, the
        watcher): they are read, not by this one."""

    def pace(self, rate: float) -> None:
        """The vector stage's pace, chunks per second of wall time, measured and smoothed
        (embedding.Pace): the one rate the time left is told from, here and to other
        processes (the lease)."""

    def pending(self, chunks: int) -> None:
        """The pass's vector stage starts: `chunks` chunks without a vector in its collections
        (the notes are all read: the whole scope is searchable lexically from here)."""

    def vectors(self, label: str, chunks: int) -> None:
        """A collection's vector stage starts: `chunks` chunks without a vector yet."""

    def waiting(self, label: str, pid: int | None) -> None:
        """Another process (`pid`, when known) computes this collection's vectors: waiting
        for it to finish before looking for what is left."""

    def chunks_done(self, n: int) -> None:
        """n more chunks embedded."""

    def stop_requested(self) -> bool:
        return False

    def yield_requested(self) -> bool:
        """True: the driver has more urgent work (new edits to read). The vector stage pauses
        between two slices, keeping every vector made; the driver asks for it again later."""
        return False


class SyncStopped(MemoError):
    """A sync ended early because its driver asked it to stop."""

    hint = "Run `memo index` again: it goes on where it stopped."
