"""Progress of `memo index` on stderr, whatever stdout is.

On a terminal one line is redrawn in place; anywhere else (an agent's shell, a pipe, CI) a plain
line is printed every EVERY seconds, so a long first index never looks hung. Both say the pass's
two stages (collection/sync.py): the notes read, counted before it starts (`plan`, library/plan.py),
then the chunks given their vectors (`pending`), with the rate and the time left; a note whose
vectors alone take more than LONG seconds says so once read. The time left only shrinks while the
chunks do (collection/embedding.py Pace), unless the machine got slower by a fifth or more, which
a line of its own says, with the load average before and after (examples: docs/design.md).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from typing import Any, TextIO

from ..library import SyncProgress
from ..printable import duration

EVERY = 5.0  # seconds between two lines when stderr is not a terminal
REDRAW = 0.2  # seconds between two redraws on a terminal
LONG = 60.0  # seconds: a note whose vectors take longer says so once read
BYTES_PER_CHUNK = 2500  # ~400-token chunks with overlap (measured)
RATE = 12.0  # chunks/s before one is measured: fp32 e5-small on two cores (docs/embedders.md)
WARM = 1.0  # seconds of embedding before a pace is trusted
# How much lower than a search the vector stage of `memo index` runs: once every note is read
# the library answers, and the model would otherwise take both cores from the searches made
# meanwhile (measured: bench/no_wait.py). Idle cores still go to it in full.
VECTORS_NICE = 10


class Background(SyncProgress):
    """`memo index` without progress lines: its vector stage still gives way to searches."""

    def pending(self, chunks: int) -> None:
        lower_priority()


def lower_priority() -> None:
    """This process runs at VECTORS_NICE from now on (never back up: Unix does not let an
    unprivileged process raise its priority again); a no-op where there is no `nice`."""
    if hasattr(os, "nice") and not getattr(lower_priority, "done", False):
        with contextlib.suppress(OSError):
            os.nice(VECTORS_NICE)
        lower_priority.done = True  # type: ignore[attr-defined]  # once per process


def load_average() -> float | None:
    """The machine's load average over the last minute (None where there is none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - Windows
        return None


class IndexProgress(Background):
    wants_plan = True

    def __init__(
        self,
        stream: TextIO,
        every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        load: Callable[[], float | None] = load_average,
    ) -> None:
        self.stream = stream
        self.load = load
        self.load_then: float | None = None  # the load when the pace told was set
        self.slowing = False  # the pace told is falling (a slowdown said already)
        self.tty = stream.isatty()
        self.every = every if every is not None else (REDRAW if self.tty else EVERY)
        self.clock = clock
        self.total = self.files = 0  # notes to read, read
        self.to_embed: int | None = None  # chunks the vector stage has to do (None: not begun)
        self.chunks = 0  # chunks embedded
        self.colls = self.begun = 0  # collections in the pass, collections begun
        self.label = ""
        self.t0 = clock()
        self.last = self.t0
        self.drawn = False
        self.started = False
        # the plan: notes (path, bytes) per label in the order the pass takes them
        self.planned: dict[str, list[tuple[str, int]]] | None = None
        self.total_bytes = 0
        self.queue: list[tuple[str, int]] = []  # the current part's notes not read yet
        self.first_chunk: float | None = None  # when the first chunks were embedded
        self.chunks_then = 0
        self.paced: float | None = None  # the vector stage's pace, as the pass measures it
        self.elsewhere = 0  # notes of the plan another process read meanwhile

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
                self._announce_long(*self.queue.pop(0))
        self.files += n
        self._maybe_show()

    def read_elsewhere(self, n: int) -> None:
        self.files += n
        self.elsewhere += n
        self._maybe_show()

    def pending(self, chunks: int) -> None:
        super().pending(chunks)
        # every note is read now, by this pass or meanwhile by another process
        self.files = max(self.files, self.total)
        self.to_embed = (self.to_embed or 0) + chunks
        self._maybe_show(force=True)  # the library is searchable now: say so at once

    def pace(self, rate: float) -> None:
        before, was = self.seconds_left(), self.paced
        if was is None or rate > was:
            self.load_then = self.load()
        self.paced = rate
        # the pace told falls only when the load changed (embedding.Pace): said once a slowdown
        fell = was is not None and rate < was
        if was is not None and fell and not self.slowing and self._worth_saying():
            self._slower(was, rate, before)
        self.slowing = fell

    def _worth_saying(self) -> bool:
        """A slowdown is said where the time left is a progress line's business: at least
        EVERY seconds of work left (a pass of a few seconds, the README's example library
        on a busy machine, has nothing to explain)."""
        left = self.seconds_left()
        return left is not None and left >= EVERY

    def vectors(self, label: str, chunks: int) -> None:
        self.label = label
        if self.to_embed is None:  # a driver that did not announce the stage
            self.to_embed = chunks
        self._maybe_show()

    def waiting(self, label: str, pid: int | None) -> None:
        who = f"memo pid {pid}" if pid else "another memo"
        self._say(f"{label}: its vectors are being computed by {who}: waiting for it")

    def chunks_done(self, n: int) -> None:
        if self.first_chunk is None:
            # the pace is measured from the first slice on (loading the model is no pace)
            self.first_chunk, self.chunks_then = self.clock(), self.chunks + n
        self.chunks += n
        self._maybe_show()

    # ------------------------------------------------------------------ estimates
    def rate(self) -> float | None:
        """Chunks per second: the pass's pace (what the searches are told too), else the
        average since the first slice (None until it has run WARM s)."""
        if self.paced is not None:
            return self.paced
        if self.first_chunk is None:
            return None
        spent = self.clock() - self.first_chunk
        done = self.chunks - self.chunks_then
        return done / spent if spent >= WARM and done > 0 else None

    def seconds_left(self) -> float | None:
        rate = self.rate()
        if rate is None or self.to_embed is None:
            return None
        return max(0, self.to_embed - self.chunks) / rate

    def _slower(self, was: float, rate: float, before: float | None) -> None:
        """Say why the time left grows: the vectors come slower than they did."""
        now, then = self.load(), self.load_then
        busier = (
            f": the machine is busier (load {then:.1f} → {now:.1f})"
            if now is not None and then is not None and now > then
            else ""
        )
        left = self.seconds_left()
        grows = (
            f"; the time left grows from {duration(before)} to {duration(left)}"
            if before is not None and left is not None and left > before
            else ""
        )
        self._say(f"vectors: slower now, {rate:.1f} chunks/s from {was:.1f}{busier}{grows}")
        self.load_then = now

    def _announce_long(self, path: str, size: int) -> None:
        chunks = size / BYTES_PER_CHUNK
        seconds = chunks / (self.rate() or RATE)
        if seconds < LONG:
            return
        where = f"{self.label}/{path}" if self.label not in ("", ".") else path
        self._say(
            f"{where}: {size / 1e6:.1f} MB, about {chunks:,.0f} chunks: searchable by its "
            f"words now, its vectors take ~{duration(seconds)}"
        )

    # ------------------------------------------------------------------ output
    def line(self) -> str:
        counted = self.planned is not None or self.begun >= self.colls
        notes = f"{self.files}/{self.total}" if counted else f"{self.files}/{self.total}+"
        size = f" ({self.total_bytes / 1e6:.1f} MB)" if self.planned is not None else ""
        if self.elsewhere:
            size += f", {self.elsewhere:,} of them read by other memo processes"
        colls = f"collection {min(self.begun, self.colls)}/{self.colls}, " if self.colls > 1 else ""
        out = f"indexing {colls}read {notes} notes{size}"
        if self.to_embed is not None:
            rate, left = self.rate(), self.seconds_left()
            pace = f"{rate:.1f} chunks/s" if rate is not None else "starting"
            eta = f", {duration(left)} left" if left is not None else ""
            out += f", vectors {self.chunks:,}/{self.to_embed:,} chunks ({pace}{eta})"
        return f"{out} {self.label}"

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
