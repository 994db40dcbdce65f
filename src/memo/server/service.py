"""What every server offers (search, route, read, related, status, reindex, health), over a pool of
libraries.

MCP tools and HTTP endpoints are thin shells around `Service`, whose methods are named for the
operations (`Operation.name`): each builds the request and passes it on, with one embedder per
process. A `Library`'s SQLite connections must not be shared between threads, so the service
lends each call one from a small pool of libraries. A delegated one-shot call (cli/delegate.py)
borrows from a second pool, built as that process builds its own (`one_shot`: its engine, token
counter and catch-up), so it prints what the CLI would have printed (docs/design.md).
"""

from __future__ import annotations

import copy
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .. import __version__
from ..config import Settings
from ..embed import Embedder, embedder_for
from ..errors import EmbedderUnavailableError
from ..library import IndexReport, Library, StatusReport, SyncProgress
from ..library.related import RelatedResult
from ..library.why import WhyResult
from ..requests import (
    IndexRequest,
    ReadRequest,
    RelatedRequest,
    RouteRequest,
    SearchRequest,
    StatusRequest,
    WhyRequest,
)
from ..router.route import RouteResult
from ..search.excerpt import Excerpt
from ..search.results import SearchResult

POOL_SIZE = 4  # libraries lent to concurrent calls; the model serialises embedding anyway
log = logging.getLogger("memo.serve")


class _Stop(SyncProgress):
    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop

    def stop_requested(self) -> bool:
        return self.stop.is_set()


class BackgroundVectors:
    """The vectors nobody computes, computed by this server in a thread of its own: a search
    that met chunks without vectors (and nobody computing them) or a reindex wakes it, and it
    syncs the library with the watcher's policy (upkeep.BACKGROUND: every collection whose
    lease it can take). So an agent's MCP server, or `memo serve` without `--watch`, fills its
    indexes in by itself while every answer is served from what is there."""

    def __init__(self, root: Path, embedder: Embedder | None, settings: Settings) -> None:
        self.root, self.embedder, self.settings = root, embedder, settings
        self._wake = threading.Event()
        self._stop = threading.Event()
        self.idle = threading.Event()  # set while it is not computing
        self.idle.set()
        self.passes = 0  # passes done (tests wait for one)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def want(self) -> None:
        if self.embedder is None or self._stop.is_set():
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="memo-vectors", daemon=True)
                self._thread.start()
        self.idle.clear()
        self._wake.set()

    def _run(self) -> None:
        lib = Library(self.root, self.embedder, self.settings)
        try:
            while not self._stop.is_set():
                self._wake.wait()
                self._wake.clear()
                if self._stop.is_set():
                    break
                try:
                    lib.sync(progress=_Stop(self._stop))
                except Exception as e:  # the thread never dies; the next wake tries again
                    log.warning("computing vectors in the background: %s", e)
                self.passes += 1
                if not self._wake.is_set():
                    self.idle.set()
        finally:
            lib.close()
            self.idle.set()

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


class _Pool:
    """Libraries lent one per call, made on demand up to `size`, then waited for."""

    def __init__(self, make: Callable[[], Library], size: int) -> None:
        self.make = make
        self.size = max(1, size)
        self.free: queue.LifoQueue[Library] = queue.LifoQueue()
        self.made = 0
        self.lock = threading.Lock()

    def borrow(self) -> Library:
        try:
            return self.free.get_nowait()
        except queue.Empty:
            pass
        with self.lock:
            if self.made < self.size:
                self.made += 1
                return self.make()
        return self.free.get()  # every library is busy: wait for one

    def close(self) -> None:
        while True:
            try:
                self.free.get_nowait().close()
            except queue.Empty:
                return


class Service:
    def __init__(
        self,
        root: Path,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        pool_size: int = POOL_SIZE,
    ) -> None:
        self.settings = settings or Settings.from_env()
        given = embedder is not None
        self.embedder = embedder or embedder_for(self.settings)
        self.root = Library(root, embedder, self.settings).root  # checks the root exists
        self.started = time.time()
        self.model_ready = threading.Event()
        self.model_error: str | None = None
        self.vectors = BackgroundVectors(self.root, self.embedder, self.settings)

        def one_shot() -> Library:
            # what cli/common.py library_at builds: a given embedder is the only one known
            engine = self.embedder if given else embedder_for(self.settings, "query")
            return Library(self.root, engine, self.settings)

        self._pools = {
            "serve": _Pool(lambda: Library(self.root, self.embedder, self.settings), pool_size),
            "query": _Pool(one_shot, pool_size),
        }
        self._lends = "serve"  # which pool this service's calls borrow from (`one_shot`)

    def one_shot(self) -> Service:
        """This service answering as a one-shot `memo` process would answer in-process (the
        module docstring): the same pools, libraries lent from the one whose engine is that
        process's. What a delegated CLI call is answered by (server/endpoints.py)."""
        view = copy.copy(self)
        view._lends = "query"
        return view

    # ------------------------------------------------------------------ lifecycle
    def warm_up(self) -> None:
        """Load the model now, so the first search does not pay for it (call in a thread)."""
        try:
            if self.embedder is not None:
                self.embedder.embed_query("warm up")
        except EmbedderUnavailableError as e:
            self.model_error = str(e)
        finally:
            self.model_ready.set()

    def warm_up_in_background(self) -> threading.Thread:
        t = threading.Thread(target=self.warm_up, name="memo-warm-up", daemon=True)
        t.start()
        return t

    def close(self) -> None:
        self.vectors.close()
        for pool in self._pools.values():
            pool.close()

    @contextmanager
    def library(self) -> Iterator[Library]:
        pool = self._pools[self._lends]
        lib = pool.borrow()
        try:
            yield lib
        finally:
            pool.free.put(lib)

    # ------------------------------------------------------------------ operations
    def health(self) -> dict[str, Any]:
        e = self.embedder
        return {
            "status": "ok",
            "version": __version__,
            "root": str(self.root),
            "embedder": None if e is None else f"{e.model_id} ({e.backend})",
            "model_loaded": self.model_ready.is_set() and self.model_error is None,
            "model_error": self.model_error,
            "uptime_s": round(time.time() - self.started, 1),
        }

    def search(self, req: SearchRequest) -> SearchResult:
        with self.library() as lib:
            res = lib.search(req)
        if any(f.pending and f.embedding_by is None for f in res.freshness):
            self.vectors.want()  # vectors nobody computes: this server does, meanwhile
        return res

    def read(self, req: ReadRequest) -> Excerpt:
        with self.library() as lib:
            return lib.read(req)

    def related(self, req: RelatedRequest) -> RelatedResult:
        with self.library() as lib:
            return lib.related(req)

    def route(self, req: RouteRequest) -> RouteResult:
        with self.library() as lib:
            return lib.route(req)

    def status(self, req: StatusRequest) -> StatusReport:
        with self.library() as lib:
            return lib.status(req)

    def why(self, req: WhyRequest) -> WhyResult:
        with self.library() as lib:
            return lib.why(req)

    def index(self, req: IndexRequest) -> IndexReport:
        """The text of every changed note at once; the vectors in the background (a client
        waits seconds, not the minutes a library's vectors take)."""
        with self.library() as lib:
            report = lib.index(req, vectors_now=False)
        if report.totals()["chunks_pending"]:
            self.vectors.want()
        return report
