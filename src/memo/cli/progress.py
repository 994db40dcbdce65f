"""Progress of `memo index` on stderr, whatever stdout is.

On a terminal one line is redrawn in place; anywhere else (an agent's shell, a pipe, CI) a
plain line is printed every EVERY seconds, so a long first index never looks hung. Both say the
collections begun, notes and chunks done, the rate and the time left.

The work is counted before it starts (`plan`: the notes each collection will reindex and their
bytes, library/plan.py), so the time left is known from the first seconds: embedding time
follows the text's length, so the pace is measured in bytes of notes per second, and the note
being embedded gets credit for the chunks done so far (bytes per chunk as measured on the notes
finished, BYTES_PER_CHUNK until then). A note that alone would take more than LONG seconds says
so, on a line of its own, once it starts. Without a plan (a pass over more collections than
library/plan.py counts) notes are counted per collection as it begins, and the time left is
shown once every collection has begun.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TextIO

from ..collection.progress import SyncProgress

EVERY = 5.0  # seconds between two lines when stderr is not a terminal
REDRAW = 0.2  # seconds between two redraws on a terminal
LONG = 60.0  # seconds: a note that takes longer says so when it starts
BYTES_PER_CHUNK = 2500  # before any note is done: ~400-token chunks with overlap (measured)
WARM = 1.0  # seconds of embedding before a pace is trusted


class IndexProgress(SyncProgress):
    wants_plan = True

    def __init__(
        self,
        stream: TextIO,
        every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.every = every if every is not None else (REDRAW if self.tty else EVERY)
        self.clock = clock
        self.total = self.files = self.chunks = 0
        self.colls = self.begun = 0  # collections in the pass, collections begun
        self.label = ""
        self.t0 = clock()
        self.last = self.t0
        self.drawn = False
        self.started = False
        # the plan: notes (path, bytes) per label in the order the pass takes them
        self.planned: dict[str, list[tuple[str, int]]] | None = None
        self.total_bytes = 0
        self.queue: list[tuple[str, int]] = []  # the current part's notes not finished yet
        self.done_bytes = 0  # of notes finished
        self.chunks_at_done = 0  # chunks embedded when the last note finished
        self.first_work: float | None = None  # when the first chunk or note was done
        self.first_position = 0.0  # and how many bytes were done then
        self.learned_bytes = 0  # bytes and chunks of notes finished while chunks were counted
        self.learned_chunks = 0
        self.announced: set[str] = set()

    # ------------------------------------------------------------------ what the sync says
    def collections(self, n: int) -> None:
        self.colls += n

    def plan(self, parts: list[Any]) -> None:
        self.planned = {}
        for part in parts:
            self.planned.setdefault(part.label, []).extend(part.files)
        self.total += sum(len(p.files) for p in parts)
        self.total_bytes += sum(p.bytes for p in parts)

    def begin(self, label: str, files: int) -> None:
        self.label = label
        self.begun += 1
        if self.planned is None:
            self.total += files
        else:
            self.queue = list(self.planned.get(label, []))
        self._maybe_show(force=not self.started)  # say at once that work has begun
        self.started = True

    def files_done(self, n: int) -> None:
        for _ in range(n):
            if self.queue:
                path, size = self.queue.pop(0)
                self.done_bytes += size
                if self.chunks > self.chunks_at_done:
                    self.learned_bytes += size
                    self.learned_chunks += self.chunks - self.chunks_at_done
        self.chunks_at_done = self.chunks
        self.files += n
        self._work_began()
        self._maybe_show()

    def chunks_done(self, n: int) -> None:
        self.chunks += n
        self._work_began()
        self._announce_long()
        self._maybe_show()

    def _work_began(self) -> None:
        """The first report of work done: the pace is measured from here (the work before it,
        a model loading or being built, is not a pace)."""
        if self.first_work is None:
            self.first_work = self.clock()
            self.first_position = self.position()

    # ------------------------------------------------------------------ estimates
    def bytes_per_chunk(self) -> float:
        if self.learned_chunks >= 8:
            return self.learned_bytes / self.learned_chunks
        return BYTES_PER_CHUNK

    def position(self) -> float:
        """Bytes of notes done: notes finished, plus the chunks of the ones in flight."""
        flying = (self.chunks - self.chunks_at_done) * self.bytes_per_chunk()
        return self.done_bytes + min(flying, sum(n for _, n in self.queue))

    def pace(self) -> float | None:
        """Bytes of notes per second since the work began (None until it has run WARM s)."""
        if self.first_work is None:
            return None
        spent = self.clock() - self.first_work
        done = self.position() - self.first_position
        return done / spent if spent >= WARM and done > 0 else None

    def seconds_left(self) -> float | None:
        if self.planned is None:
            spent = max(self.clock() - self.t0, 1e-9)
            rate = self.files / spent
            counted = self.begun >= self.colls
            if rate > 0 and self.files and counted:
                return (self.total - self.files) / rate
            return None
        pace = self.pace()
        return None if pace is None else max(0.0, self.total_bytes - self.position()) / pace

    def _current(self) -> tuple[str, int] | None:
        """The note being embedded: where the position falls in the current part's queue."""
        flying = (self.chunks - self.chunks_at_done) * self.bytes_per_chunk()
        for path, size in self.queue:
            if flying < size:
                return path, size
            flying -= size
        return None

    def _announce_long(self) -> None:
        note = self._current() if self.planned is not None else None
        pace = self.pace()
        if note is None or pace is None or note[0] in self.announced:
            return
        path, size = note
        self.announced.add(path)
        seconds = size / pace
        if seconds < LONG:
            return
        chunks = size / self.bytes_per_chunk()
        where = f"{self.label}/{path}" if self.label not in ("", ".") else path
        self._say(
            f"{where}: {size / 1e6:.1f} MB, about {chunks:,.0f} chunks: "
            f"~{_duration(seconds)} at this pace"
        )

    # ------------------------------------------------------------------ output
    def line(self) -> str:
        spent = max(self.clock() - self.t0, 1e-9)
        left = self.seconds_left()
        eta = f", {_duration(left)} left" if left is not None else ""
        counted = self.planned is not None or self.begun >= self.colls
        notes = f"{self.files}/{self.total}" if counted else f"{self.files}/{self.total}+"
        size = f" ({self.total_bytes / 1e6:.1f} MB)" if self.planned is not None else ""
        colls = f"collection {min(self.begun, self.colls)}/{self.colls}, " if self.colls > 1 else ""
        return (
            f"indexing {colls}{notes} notes{size}, {self.chunks} chunks embedded "
            f"({self.chunks / spent:.1f} chunks/s{eta}) {self.label}"
        )

    def _say(self, text: str) -> None:
        """A line of its own (the redrawn line, if any, is drawn again below it)."""
        if self.tty and self.drawn:
            self.stream.write("\r\x1b[2K")
        self.stream.write(text + "\n")
        self.stream.flush()
        if self.tty and self.drawn:
            self._maybe_show(force=True)

    def _maybe_show(self, force: bool = False) -> None:
        now = self.clock()
        if now - self.last < self.every and not force:
            return
        self.last = now
        if self.tty:
            self.stream.write("\r\x1b[2K" + self.line()[:200])
            self.drawn = True
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the redrawn line (the command's own summary follows on stdout)."""
        if self.drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
