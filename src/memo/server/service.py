"""What every server offers (search, route, read, status, reindex, health), over a pool of
libraries.

MCP tools and HTTP endpoints are thin shells around `Service`, whose methods are named for the
operations (`Operation.name`, as `Library`'s are): each builds the request
(requests.py checks its bounds, the same for every driver) and passes it on; the service shares
one embedder (the model loads once per process). A `Library` holds SQLite connections that
must not be shared between threads (a reader could see half of another thread's write
transaction), so the service keeps a small pool of libraries and lends one to each call.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .. import __version__
from ..config import Settings
from ..embed import Embedder, embedder_for
from ..errors import EmbedderUnavailableError
from ..library import IndexReport, Library, StatusReport
from ..requests import IndexRequest, ReadRequest, RouteRequest, SearchRequest, StatusRequest
from ..router.route import RouteResult
from ..search.excerpt import Excerpt
from ..search.results import SearchResult

POOL_SIZE = 4  # libraries lent to concurrent calls; the model serialises embedding anyway


class Service:
    def __init__(
        self,
        root: Path,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        pool_size: int = POOL_SIZE,
    ) -> None:
        self.settings = settings or Settings.from_env()
        self.embedder = embedder or embedder_for(self.settings)
        self.root = Library(root, embedder, self.settings).root  # checks the root exists
        self.started = time.time()
        self._pool: queue.LifoQueue[Library] = queue.LifoQueue()
        self._made = 0
        self._pool_size = max(1, pool_size)
        self._made_lock = threading.Lock()
        self.model_ready = threading.Event()
        self.model_error: str | None = None

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
        while True:
            try:
                self._pool.get_nowait().close()
            except queue.Empty:
                return

    @contextmanager
    def library(self) -> Iterator[Library]:
        lib = self._borrow()
        try:
            yield lib
        finally:
            self._pool.put(lib)

    def _borrow(self) -> Library:
        try:
            return self._pool.get_nowait()
        except queue.Empty:
            pass
        with self._made_lock:
            if self._made < self._pool_size:
                self._made += 1
                return Library(self.root, self.embedder, self.settings)
        return self._pool.get()  # every library is busy: wait for one

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
            return lib.search(req)

    def read(self, req: ReadRequest) -> Excerpt:
        with self.library() as lib:
            return lib.read(req)

    def route(self, req: RouteRequest) -> RouteResult:
        with self.library() as lib:
            return lib.route(req)

    def status(self, req: StatusRequest) -> StatusReport:
        with self.library() as lib:
            return lib.status(req)

    def index(self, req: IndexRequest) -> IndexReport:
        with self.library() as lib:
            return lib.index(req)
