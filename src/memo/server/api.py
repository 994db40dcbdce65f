"""memo over HTTP: a FastAPI app with the REST endpoints and the MCP endpoint at `/mcp`.

One process, one model: the REST endpoints and the streamable-HTTP MCP transport share a
`Service` (and so the embedder). Every failure, whatever raised it, answers with one JSON shape,
`{"error": {"code": "target_error", "message": "...", "hint": "..."}}`. With a token configured
every request, `/mcp` and `/health` included, needs `Authorization: Bearer <token>`; without it
the server refuses to listen beyond loopback. The web page's paths (web/auth.py) also take the
session cookie its login form sets, and nothing else does.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import logging
import re
from collections.abc import AsyncIterator, Callable

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Receive, Scope, Send

from .. import __version__
from ..errors import (
    ConflictError,
    EmbedderUnavailableError,
    IndexError_,
    LibraryNotFoundError,
    MemoError,
    MetaInvalidError,
    NotFoundError,
    OutsideLibraryError,
)
from ..params import ArgumentError
from .endpoints import api_router, openapi
from .mcp_tools import build_mcp
from .service import Service
from .web import PageGate, mount_web

log = logging.getLogger("memo.server")

LOOPBACK_NAMES = ("localhost", "localhost.localdomain")


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _code(e: Exception) -> str:
    name = type(e).__name__.rstrip("_")
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# The kind of refusal (errors.py) as its status, the first class an error is an instance of;
# any other MemoError is a value memo cannot take: a request's argument (RequestError), a
# path's form, a date range or tag (FilterError). Never 400: a schema-valid request that names
# what the library does not hold is well-formed, and says so by its status.
STATUSES: tuple[tuple[tuple[type[MemoError], ...], int], ...] = (
    ((OutsideLibraryError,), 403),
    ((NotFoundError,), 404),
    ((ConflictError, MetaInvalidError), 409),
    ((EmbedderUnavailableError,), 503),
    ((LibraryNotFoundError, IndexError_), 500),  # the server's own root, an index it cannot open
)


def status_of(e: MemoError) -> int:
    """The HTTP status of a MemoError: 403, 404, 409 or 422 for what the library refuses."""
    return next((status for kind, status in STATUSES if isinstance(e, kind)), 422)


def refusal(
    status: int, code: str, message: str, hint: str = "", headers: dict[str, str] | None = None
) -> JSONResponse:
    """An error answer in the one JSON shape, whoever refuses: a JSONResponse is itself an ASGI
    app, so the middlewares send it as the exception handlers return it."""
    error = {"code": code, "message": message, "hint": hint}
    return JSONResponse({"error": error}, status_code=status, headers=headers)


# ---------------------------------------------------------------------- auth
class BearerToken:
    """Pure ASGI middleware: every HTTP request must carry the token (constant-time check).

    The web page's paths (`pages.owns`) also accept its session cookie; without either they
    redirect a browser to the login form. No other path looks at the cookie.
    """

    def __init__(self, app: ASGIApp, token: str, pages: PageGate | None = None) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.pages = pages

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            got = dict(scope.get("headers") or []).get(b"authorization", b"")
            bearer = hmac.compare_digest(got, self.expected)
            if not bearer and self.pages is not None and self.pages.owns(scope["path"]):
                if self.pages.allows(scope):
                    await self.app(scope, receive, send)
                else:
                    await self.pages.to_login(scope, receive, send)
                return
            if not bearer:
                refused = refusal(
                    401,
                    "unauthorized",
                    "missing or wrong bearer token",
                    "Send the header `Authorization: Bearer <token>` (the server's "
                    "--token / MEMO_TOKEN).",
                    headers={"WWW-Authenticate": 'Bearer realm="memo"'},
                )
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


class LoopbackHost:
    """Pure ASGI middleware for a server without a token (so on loopback): every request must
    name a loopback host. A web page elsewhere could otherwise rebind its own name to
    127.0.0.1 and read the notes through the browser (DNS rebinding); it cannot send a Host
    header that names loopback."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if not is_loopback(name.strip("[]")):
                refused = refusal(
                    403,
                    "forbidden_host",
                    f"requests must name a loopback host, not {host!r}",
                    "Use http://127.0.0.1:<port>/ (or set a token to serve beyond loopback).",
                )
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


# ---------------------------------------------------------------------- the app
def build_app(
    service: Service,
    *,
    host: str = "127.0.0.1",
    token: str | None = None,
    on_start: Callable[[], None] | None = None,
    on_stop: Callable[[], None] | None = None,
) -> FastAPI:
    mcp = build_mcp(service)
    if is_loopback(host):
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    else:  # exposed beyond loopback only with a token, which a rebinding page cannot send
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    mcp_app = mcp.streamable_http_app(
        streamable_http_path="/mcp", transport_security=security, host=host
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        service.warm_up_in_background()
        if on_start:
            on_start()
        try:
            async with mcp.session_manager.run():
                yield
        finally:
            if on_stop:
                on_stop()
            service.close()

    app = FastAPI(
        title="memo",
        version=__version__,
        summary="Hybrid search over a local library of markdown notes, answering path:line.",
        lifespan=lifespan,
        docs_url=None,  # served from local files by web/docs.py: the defaults load a CDN
        redoc_url=None,
    )
    _add_error_handlers(app)

    app.include_router(api_router(service))
    app.openapi = openapi(app)  # type: ignore[method-assign]  # FastAPI's way to publish another
    mount_web(app, service, token, host_ok=is_loopback)

    # The MCP endpoint: its route joins ours, its session manager runs in our lifespan.
    app.router.routes.extend(mcp_app.routes)
    if token:
        app.add_middleware(BearerToken, token=token, pages=PageGate(token))
    else:
        app.add_middleware(LoopbackHost)
    return app


HTTP_HINTS = {
    404: "See /docs for the endpoints.",
    405: "See /docs for the endpoints; the Allow header names this path's methods.",
}


METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(app: Starlette, scope: Scope) -> list[str]:
    """Every method some route answers at this request's path. GET and POST /search are two
    routes, and the one that refuses a method names only its own in `Allow`; asking each
    route whether it would take the path with each method needs no router internals."""
    return [
        m
        for m in METHODS
        if any(r.matches({**scope, "method": m})[0] == Match.FULL for r in app.router.routes)
    ]


def invalid_request(message: str) -> JSONResponse:
    """422: the arguments do not fit their declaration, or the body is not JSON."""
    hint = "See /docs for each endpoint's parameters and their bounds; bodies are JSON objects."
    return refusal(422, "invalid_request", message, hint)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(MemoError)
    async def memo_error(_: Request, e: MemoError) -> JSONResponse:
        if isinstance(e, ArgumentError):  # what the published schema refuses
            return invalid_request(str(e))
        return refusal(status_of(e), _code(e), str(e), e.hint)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, e: RequestValidationError) -> JSONResponse:
        """A web page's parameter of another type (the API's are checked by `make_exact`)."""
        problems = []
        for err in e.errors():
            where = ".".join(str(x) for x in err.get("loc", ())[1:]) or "request"
            msg = str(err.get("msg", "not valid"))
            problems.append(f"{where}: {msg[:1].lower()}{msg[1:]}")
        return invalid_request("; ".join(problems))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, e: StarletteHTTPException) -> JSONResponse:
        if e.status_code == 400:  # a body that could not be decoded (not UTF-8): as bad JSON
            return invalid_request(f"the body is not JSON in UTF-8 ({e.detail})")
        headers = dict(e.headers or {})
        if e.status_code == 405:  # Starlette names only the first route's methods
            headers["Allow"] = ", ".join(allowed_methods(request.app, request.scope))
        hint = HTTP_HINTS.get(e.status_code, "")
        return refusal(e.status_code, f"http_{e.status_code}", str(e.detail), hint, headers or None)

    @app.exception_handler(Exception)
    async def crash(_: Request, e: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return refusal(
            500,
            "internal_error",
            f"internal error ({type(e).__name__}); details are in the server log",
            "This is a bug in memo: please report it with the server log.",
        )
