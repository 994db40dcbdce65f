"""The four operations every server offers, with the checks a network client needs.

MCP tools and HTTP endpoints are thin shells around `Service`: both validate the same bounds,
confine every path to the library root the same way, and share one embedder (the model loads
once per process). A `Library` holds SQLite connections that must not be shared between
threads (a reader could see half of another thread's write transaction), so the service keeps a
small pool of libraries and lends one to each call.
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
from ..embed import Embedder, get_embedder
from ..errors import EmbedderUnavailableError, MemoError, TargetError
from ..library import Library
from ..search import MODES, SearchResult

MAX_K = 50
MAX_ROUTE_K = 50
MAX_QUERY_CHARS = 2_000  # a longer "query" is a document pasted by mistake: say so
MAX_PATH_CHARS = 4_096
POOL_SIZE = 4  # libraries lent to concurrent calls; the model serialises embedding anyway


class RequestError(MemoError):
    """A client sent arguments outside the documented bounds."""

    hint = "Check the tool's input schema: query 1-2000 characters, k 1-50, mode hybrid|lex|vec."


def check_query(query: Any) -> str:
    if not isinstance(query, str):
        raise RequestError("query must be a string")
    if not query.strip():
        raise RequestError("query is empty", "Ask a question or give keywords.")
    if len(query) > MAX_QUERY_CHARS:
        raise RequestError(
            f"query is {len(query)} characters long; the limit is {MAX_QUERY_CHARS}",
            "Search with the question or a few keywords, not a whole document.",
        )
    return query


def check_path(path: Any) -> str:
    """Refuse what no library path looks like before it reaches the filesystem."""
    if path is None:
        return "."
    if not isinstance(path, str):
        raise RequestError("path must be a string")
    if len(path) > MAX_PATH_CHARS:
        raise TargetError(f"path is {len(path)} characters long; the limit is {MAX_PATH_CHARS}")
    return path.strip() or "."


def check_k(k: Any, limit: int = MAX_K) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= limit:
        raise RequestError(f"k must be an integer from 1 to {limit}, got {k!r}")
    return k


class Service:
    def __init__(
        self,
        root: Path,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        pool_size: int = POOL_SIZE,
    ) -> None:
        self.settings = settings or Settings.from_env()
        if embedder is None and self.settings.embedder != "none":
            embedder = get_embedder(self.settings.embedder, self.settings.model_dir)
        self.embedder = embedder
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
            lib.errors.clear()  # errors are per call; the next borrower starts clean
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

    def search(
        self,
        path: Any,
        query: Any,
        k: Any = 8,
        mode: Any = "hybrid",
        route: Any = None,
        *,
        max_tokens: Any = None,
        tags: Any = None,
        since: Any = None,
        until: Any = None,
        diverse: Any = None,
    ) -> SearchResult:
        path = check_path(path)
        query = check_query(query)
        k = check_k(k)
        if mode not in MODES:
            raise RequestError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if route is not None:
            route = check_k(route, MAX_ROUTE_K)
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
        ):
            raise RequestError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        if isinstance(tags, list) and not all(isinstance(t, str) for t in tags) or not (
            tags is None or isinstance(tags, str | list)
        ):
            raise RequestError("tags must be a list of strings")
        with self.library() as lib:
            return lib.search(
                path,
                query,
                k=k,
                mode=mode,
                route=route,
                max_tokens=max_tokens,
                tags=tags,
                since=since,
                until=until,
                diverse=diverse,
            )

    def get(self, path: Any, line: Any = None, lines: Any = None) -> dict[str, Any]:
        path = check_path(path)
        for name, v in (("line", line), ("lines", lines)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise RequestError(f"{name} must be a positive integer, got {v!r}")
        with self.library() as lib:
            return lib.read(path, line, lines).to_dict()

    def route(self, query: Any, k: Any = 5, prefix: Any = None) -> dict[str, Any]:
        query = check_query(query)
        k = check_k(k, MAX_ROUTE_K)
        if prefix is not None and not isinstance(prefix, str):
            raise RequestError("prefix must be a string such as 'work/' or 'work/jira'")
        with self.library() as lib:
            return lib.route(query, k=k, prefix=prefix or None).to_dict()

    def status(self, path: Any = None) -> dict[str, Any]:
        path = check_path(path)
        with self.library() as lib:
            return lib.status(path)

    def reindex(self, path: Any, full: Any = False) -> dict[str, Any]:
        path = check_path(path)
        if not isinstance(full, bool):
            raise RequestError("full must be true or false")
        with self.library() as lib:
            report = lib.index(path, full=full)
        return {
            **report.totals(),
            "collections_detail": [r.to_dict() for r in report.reports],
            "errors": report.errors,
        }
