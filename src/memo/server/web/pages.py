"""The three pages: search (`/`), a note at the cited lines and its neighbours (`/read`), the
library (`/library`).

Each page makes the same request every other driver makes (SearchRequest, ReadRequest,
StatusRequest, RouteRequest through the Service) and renders the typed result with a Jinja2
template. Autoescape is on: a note is text, whatever it holds (`<script>` included). The pages
send a Content-Security-Policy without any script source as a second wall, and they need no
JavaScript: forms are plain GET forms, the cited line is reached with a `#L<n>` anchor.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from fastapi.templating import Jinja2Templates

from ... import __version__
from ...errors import MemoError
from ...library import terms_of
from ...library.related import RelatedResult
from ...requests import (
    MAX_LINES,
    ReadRequest,
    RelatedRequest,
    RouteRequest,
    SearchRequest,
    StatusRequest,
    _Request,
)
from ...router.route import RouteResult
from ..service import Service
from . import views

ROUTE_K = 5  # collections suggested for a query
# The form's bounds, choices and defaults are the request's declaration; its names `q` and
# `scope` are aliases the declaration lists for query and path (tests/test_requests.py,
# test_the_page_form_speaks_the_declaration).
QUERY, SCOPE = SearchRequest.param("query"), SearchRequest.param("path")
MODE, K = SearchRequest.param("mode"), SearchRequest.param("k")
ALSO, KEYWORDS = SearchRequest.param("also"), SearchRequest.param("keywords")
ANSWER = SearchRequest.param("answer")
DEFAULT_K = K.default
HEADERS = {
    # No script may run on these pages, whatever a note holds; forms post only here.
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",  # pages hold note text: keep it out of the disk cache
}


class Timer:
    """Server-Timing entries: what each step of a page cost, readable in the browser's tools
    and by bench/screenshots.py, which compares the page with the API's /search."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, float]] = []

    @contextmanager
    def span(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.spans.append((name, (time.perf_counter() - t0) * 1000))

    def header(self) -> str:
        return ", ".join(f"{n};dur={ms:.2f}" for n, ms in self.spans)


def render(
    templates: Jinja2Templates,
    request: Request,
    name: str,
    ctx: dict[str, Any],
    status: int = 200,
    timer: Timer | None = None,
) -> Response:
    timer = timer or Timer()
    with timer.span("render"):
        resp = templates.TemplateResponse(request, name, ctx, status_code=status)
    resp.headers.update(HEADERS)
    resp.headers["Server-Timing"] = timer.header()
    return resp


def _error(e: MemoError) -> dict[str, str]:
    return {"message": str(e), "hint": e.hint}


def _page(request: type[_Request]) -> str:
    """The page a request declares (`Operation.page`)."""
    assert request.OPERATION.page is not None, request
    return request.OPERATION.page


def pages_router(
    service: Service, templates: Jinja2Templates, guards: list[Callable[..., Any]]
) -> APIRouter:
    """The pages, bound to one service; `guards` run before each (the loopback Host check)."""
    router = APIRouter(include_in_schema=False, dependencies=[Depends(g) for g in guards])

    @router.get(_page(SearchRequest))
    def search_page(
        request: Request,
        q: str = "",
        scope: str = ".",
        mode: str = MODE.default,
        k: int = DEFAULT_K,
        also: str = "",
        keywords: str = "",
        answer: str = "",
    ) -> Response:
        """The search form and, with a query, its hits."""
        timer = Timer()
        words = Words(also, keywords, answer)
        ctx = _search(service, timer, q, scope or ".", mode, k, words)
        return render(templates, request, "search.html", ctx, 400 if ctx["error"] else 200, timer)

    @router.get(_page(ReadRequest))
    def read_page(
        request: Request,
        path: str = "",
        line: int | None = None,
        end: int | None = None,
        cite: str = "",
        q: str = "",
        best: int | None = None,
        best_end: int | None = None,
    ) -> Response:
        """A note's lines, the cited range marked (and its best lines: the hit's focus); a
        bad path is a 404 with the reason."""
        try:
            focus = (best, best_end or best) if best else None
            ctx = _read(service, path, line, end, cite, q, focus)
        except MemoError as e:
            ctx = {"title": "Not found", "error": _error(e), "path": path}
            return render(templates, request, "error.html", ctx, 404)
        return render(templates, request, "note.html", ctx)

    @router.get(_page(StatusRequest))
    def library_page(request: Request, path: str = ".") -> Response:
        """Every collection and its health: what an admin opens after `memo registry rebuild`."""
        try:
            report = service.status(StatusRequest.make(path))
            with service.library() as lib:
                entries = list(lib.registry.entries)
        except MemoError as e:
            ctx = {"title": "Library", "error": _error(e), "path": path}
            return render(templates, request, "error.html", ctx, 400)
        ctx = views.library_view(report, entries)
        ctx.update(title="Library", path=path, health=service.health())
        return render(templates, request, "library.html", ctx)

    return router


@dataclass(frozen=True, slots=True)
class Words:
    """The form's "other words" as typed: phrasings one per line, keywords split at commas
    (by `make`), a likely answer."""

    also: str = ""
    keywords: str = ""
    answer: str = ""

    def fields(self) -> dict[str, Any]:
        """What SearchRequest.make takes of them (a blank line between phrasings is none)."""
        also = [p for p in self.also.splitlines() if p.strip()]
        return {"also": also, "keywords": self.keywords, "answer": self.answer}

    def given(self) -> bool:
        return any(x.strip() for x in (self.also, self.keywords, self.answer))


def _search(
    service: Service, timer: Timer, q: str, scope: str, mode: str, k: int, words: Words
) -> dict[str, Any]:
    """Everything the search page shows: the form, the hits, the receipt, the router's advice."""
    with timer.span("scopes"), service.library() as lib:
        options = views.scope_options(list(lib.registry.entries))
    ctx: dict[str, Any] = {
        "title": f"{q} — search" if q.strip() else "Search",
        "q": q,
        "scope": scope,
        "mode": mode,
        "k": k,
        "default_k": K.default,
        "modes": MODE.choices,
        "scopes": options,
        "max_query": QUERY.high,
        "words": words,
        "helps": {"also": ALSO.help, "keywords": KEYWORDS.help, "answer": ANSWER.help},
        "max_answer": ANSWER.longest,
        "root_name": views.root_name(service.root),
        "error": None,
        "result": None,
        "routes": [],
    }
    if not q.strip():
        return ctx
    try:
        with timer.span("search"):
            req = SearchRequest.make(scope, q, k=k, mode=mode, **words.fields())
            res = service.search(req)
    except MemoError as e:
        ctx["error"] = _error(e)
        return ctx
    routed: RouteResult | None = None
    try:
        with timer.span("route"):  # after the search: its query vector is cached by then
            routed = service.route(RouteRequest.make(q, k=ROUTE_K, **words.fields()))
    except MemoError:
        routed = None  # advice only: the hits stand without it
    stems = terms_of(res.query)
    ctx.update(
        result=res,
        hits=views.hit_views(res, stems),
        fresh=views.freshness_view(res),
        routes=views.route_views(routed, q, mode, ctx["root_name"]),
    )
    return ctx


def _read(
    service: Service,
    path: str,
    line: int | None,
    end: int | None,
    cite: str,
    q: str,
    best: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """The whole note (or, past MAX_LINES, the part around `line`) and the cited range's hash."""
    note = service.read(ReadRequest.make(path))
    start = views.window_start(line, note.total_lines) if note.more_lines else None
    if start is not None:
        note = service.read(ReadRequest.make(path, start, MAX_LINES))
    span = None
    last = max(line, end or line) if line else None
    if line and last:
        span = service.read(ReadRequest.make(path, line, min(MAX_LINES, last - line + 1)))
    stems = terms_of(q) if q else frozenset()
    related = _neighbours(service, note.path)
    targets = views.link_targets(related) if related else None
    before = _before(service, path, note.line)
    return {
        "title": note.path,
        "note": note,
        "lines": views.note_lines(note, line, last, stems, best, before, targets),
        "best": best if best and line and last and line <= best[0] <= last else None,
        "line": line,
        "last": span.end_line if span else None,
        "span": span,
        "cite_given": cite,
        "changed": bool(cite and span and span.cite != cite),
        "q": q,
        "back": views.search_href(q) if q else "",
        "related": views.related_view(related) if related else None,
    }


def _neighbours(service: Service, path: str) -> RelatedResult | None:
    """The note's neighbours for its page (and where its links open), or None when they
    cannot be had (the note is shown all the same, its links unlinked)."""
    try:
        return service.related(RelatedRequest.make(path))
    except MemoError:
        return None


def _before(service: Service, path: str, first: int) -> list[str]:
    """The note's lines above `first` (a long note's window): what runs into the window from
    above (frontmatter, a fence, a comment, a callout) is read from them."""
    out: list[str] = []
    while len(out) < first - 1:
        want = min(MAX_LINES, first - 1 - len(out))
        part = service.read(ReadRequest.make(path, len(out) + 1, want))
        if part.end_line < part.line:
            break
        out += part.text.split("\n")
    return out


def template_globals(token_set: bool) -> dict[str, Any]:
    return {"token_set": token_set, "version": __version__}
