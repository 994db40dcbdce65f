"""Progress of `memo index` on stderr, whatever stdout is.

On a terminal one line is redrawn in place; anywhere else (an agent's shell, a pipe, CI) a
plain line is printed every EVERY seconds, so a long first index never looks hung. Both say the
collections begun, files and chunks done, the rate and, once every collection has counted its
notes and the rate is known, the time left (notes are counted per collection as it begins:
counting a whole library up front would walk it twice).
"""

from __future__ import annotations

import time
from typing import TextIO

from ..collection.progress import SyncProgress

EVERY = 5.0  # seconds between two lines when stderr is not a terminal
REDRAW = 0.2  # seconds between two redraws on a terminal


class IndexProgress(SyncProgress):
    def __init__(self, stream: TextIO, every: float | None = None) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.every = every if every is not None else (REDRAW if self.tty else EVERY)
        self.total = self.files = self.chunks = 0
        self.colls = self.begun = 0  # collections in the pass, collections begun
        self.label = ""
        self.t0 = time.monotonic()
        self.last = self.t0
        self.drawn = False
        self.started = False

    def collections(self, n: int) -> None:
        self.colls += n

    def begin(self, label: str, files: int) -> None:
        self.label = label
        self.begun += 1
        self.total += files
        self._maybe_show(force=not self.started)  # say at once that work has begun
        self.started = True

    def files_done(self, n: int) -> None:
        self.files += n
        self._maybe_show()

    def chunks_done(self, n: int) -> None:
        self.chunks += n
        self._maybe_show()

    def line(self) -> str:
        spent = max(time.monotonic() - self.t0, 1e-9)
        rate = self.files / spent
        counted = self.begun >= self.colls  # every collection has said how many notes it has
        left = (self.total - self.files) / rate if rate > 0 and self.files and counted else None
        eta = f", {_duration(left)} left" if left is not None else ""
        notes = f"{self.files}/{self.total}" if counted else f"{self.files}/{self.total}+"
        colls = f"collection {min(self.begun, self.colls)}/{self.colls}, " if self.colls > 1 else ""
        return (
            f"indexing {colls}{notes} notes, {self.chunks} chunks embedded "
            f"({self.chunks / spent:.1f} chunks/s{eta}) {self.label}"
        )

    def _maybe_show(self, force: bool = False) -> None:
        now = time.monotonic()
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
