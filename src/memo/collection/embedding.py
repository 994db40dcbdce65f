"""Stage two of a sync: every chunk still without a vector gets one (stage one is sync.py).

It runs under the collection's lease (lease.py: one process embeds an index at a time, a crash
frees it), in slices sized from the model's measured speed so that one call into it takes about
SLICE_SECONDS, each slice committed on its own: a stop request or Ctrl-C, which Python can only
deliver between two calls into native code, is seen within a second, and every vector made
before it stays. A budget (seconds) bounds it for a search's catch-up.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..embed.base import Embedder
from ..errors import EmbedderUnavailableError
from . import lease, windows
from .chunker import passage_text
from .progress import SyncProgress, SyncStopped
from .site import Site
from .store import IndexStore, store_vectors, unpack_text
from .sync import SyncReport, SyncState
from .vectors import quantize

SLICE_SECONDS = 0.4  # one call into the model takes about this long (sized from its speed)
SLICE_MAX = 32
PACE_SECONDS = 20.0  # the pace is the plain average over this long, then smoothed over it
# The pace told falls only when the measured one is this much below it: a time left that rose
# and fell with every slice (78 s, 86 s, 59 s: issue 50) says nothing; a drop this large is the
# machine's load changing, and the progress line says so (cli/progress.py)
SLOWER = 0.2


@dataclass(slots=True)
class Pace:
    """How fast a pass gives chunks their vectors, in chunks per second of wall time (the
    model, the writes, and the time other work took the cores: what the time left depends
    on), measured from the end of its first slice (loading the model is no pace). The plain
    average over the first PACE_SECONDS, then an average whose weights fade over that long:
    one rate for the progress line and for the searches told the time left (the lease), that
    neither jumps with one slice nor lags a changed load by minutes.

    The rate told (`rate`) never falls with the noise of the measure: it follows the measured
    pace up at once, and down only once that is SLOWER below it, then all the way down with it
    until it stops falling (`falling`: one slowdown, said once). The time left, work / rate,
    so only shrinks while the work does, unless the load changed."""

    rate: float | None = None  # the pace told
    measured: float | None = None  # the pace measured (rate follows it as said above)
    falling: bool = False  # the rate told is coming down with a slower measured pace
    last: float | None = None  # when the last slice ended (monotonic)
    chunks: int = 0  # counted so far, and over how long
    seconds: float = 0.0

    def add(self, chunks: int, now: float | None = None) -> float | None:
        """A slice of `chunks` ended `now`; returns the pace (None until one is measured)."""
        now = time.monotonic() if now is None else now
        if self.last is None:
            self.last = now
            return self.rate
        spent, self.last = max(now - self.last, 1e-6), now
        if self.measured is None or self.seconds < PACE_SECONDS:
            self.chunks, self.seconds = self.chunks + chunks, self.seconds + spent
            self.measured = self.chunks / self.seconds
        else:
            weight = 1.0 - math.exp(-spent / PACE_SECONDS)
            self.measured += weight * (chunks / spent - self.measured)
        if self.rate is None or self.measured >= self.rate:
            self.rate, self.falling = self.measured, False
        elif self.falling or self.measured < (1.0 - SLOWER) * self.rate:
            self.rate, self.falling = self.measured, True  # down with it until it settles
        return self.rate

    def paused(self) -> None:
        """Time not spent embedding follows (a wait for another process): not counted."""
        self.last = None


def embed_pending(
    site: Site,
    store: IndexStore,
    state: SyncState,
    report: SyncReport,
    progress: SyncProgress,
    budget: float | None = None,
    wait: bool = False,
    held: lease.Lease | None = None,
    pace: Pace | None = None,
) -> None:
    """Give chunks without a vector one, under the index's lease, until none is left, the
    `budget` (seconds, None: no bound) is spent or a stop is asked for. Another process holding
    the lease: leave them to it (`report.embedding_by` says who), or `wait` for it first.
    Newest chunks first under a budget: a search's catch-up embeds the note just edited.
    `held`: the lease, taken already by the caller (it is released here either way); `pace`:
    the pass's, measured over every collection it embeds (a new one when None)."""
    report.chunks_pending = store.pending()
    report.chunks = store.chunk_count()
    embedder = site.embedder
    if not report.chunks_pending or embedder is None or not state.vectors_ok:
        if held is not None:
            held.release()
        return
    pace = pace if pace is not None else Pace()
    held = held or _lease(site, report, progress, wait, pace)
    if held is None:
        return
    t0 = time.perf_counter()
    with held:
        report.chunks_pending = store.pending()  # the holder before us may have done them
        if report.chunks_pending:
            progress.vectors(site.rel, report.chunks_pending)
        while report.chunks_pending:
            if progress.stop_requested():
                raise SyncStopped(f"{site.rel}: stopped; the vectors made so far are kept")
            if budget is not None and time.perf_counter() - t0 >= budget:
                break
            if progress.yield_requested():
                report.paused = True
                break
            done = _slice(store, state, report, budget is not None, embedder)
            if not done:
                break
            report.chunks_pending = store.pending()
            if (rate := pace.add(done)) is not None:
                held.tell(rate)
                progress.pace(rate)
            progress.chunks_done(done)
    report.chunks = store.chunk_count()


def _lease(
    site: Site, report: SyncReport, progress: SyncProgress, wait: bool, pace: Pace
) -> lease.Lease | None:
    """The index's lease, waited for with `wait`; None (and who holds it, in `report`) when
    another process computes these vectors."""
    held = lease.acquire(site.index_path)
    if held is None and wait:
        other = lease.holder(site.index_path)
        progress.waiting(site.rel, other.pid if other else None)
        held = lease.acquire(site.index_path, wait=True)
        pace.paused()
    if held is None:
        other = lease.holder(site.index_path)
        report.embedding_by = other.pid if other else None
        report.rate = other.rate if other else None
    return held


def _slice(
    store: IndexStore,
    state: SyncState,
    report: SyncReport,
    newest: bool,
    embedder: Embedder,
) -> int:
    """Embed and store one slice of chunks without a vector (the newest first when `newest`);
    returns how many chunks it read (0: nothing left to do, or the model failed)."""
    rows = store.conn.execute(
        f"SELECT id, heading, text, hash FROM chunks WHERE vec = 0 ORDER BY id "
        f"{'DESC' if newest else 'ASC'} LIMIT ?",
        (state.slice_size,),
    ).fetchall()
    if not rows:
        return 0
    texts = [(h, unpack_text(t)) for _, h, t, _ in rows]
    passages = [passage_text(h, text) for h, text in texts]
    # each chunk's sentence windows are embedded with it: its vector counts once both are in
    wins = [windows.windows(h, text) for h, text in texts]
    t = time.perf_counter()
    try:
        vecs = embedder.embed_passages(passages + [w for ws in wins for w in ws])
    except EmbedderUnavailableError as e:
        if state.vectors_ok:
            report.warnings.append(f"embedder unavailable, vectors left for later: {e}")
        state.vectors_ok = False
        return 0
    spent = time.perf_counter() - t
    report.embed_seconds += spent
    rate = len(rows) / max(spent, 1e-6)  # chunks per second of the model, this machine
    state.slice_size = max(1, min(SLICE_MAX, int(rate * SLICE_SECONDS)))
    report.rate = rate
    codes = [c.tobytes() for c in quantize(np.asarray(vecs, dtype=np.float32))]
    report.chunks_embedded += _store(store, rows, codes, wins)
    return len(rows)


def _store(store: IndexStore, rows: list[tuple], codes: list[bytes], wins: list[list[str]]) -> int:
    """Write a slice's vectors (each chunk's, then its windows' in `codes`); returns how many
    chunks got theirs (one replaced by a new edit since it was read is skipped)."""
    at = len(rows)
    done = 0
    with store.write():
        conn = store.conn
        for (cid, _, _, h), code, ws in zip(rows, codes[: len(rows)], wins, strict=True):
            mine, at = codes[at : at + len(ws)], at + len(ws)
            conn.execute(
                "UPDATE chunks SET vec = 1, wins = ? WHERE id = ? AND hash = ? AND vec = 0",
                (len(ws), cid, h),
            )
            if conn.changes():
                store_vectors(conn, cid, code, mine)
                done += 1
    return done
