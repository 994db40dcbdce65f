"""Who may see the page: a login form for servers with a token, loopback hosts for the rest.

With a token (`memo serve --token T`) the API and /mcp accept only `Authorization: Bearer T`
(api.BearerToken); a browser cannot send it from a link or a form, so the page asks for the token
once and sets a cookie that opens the page and nothing else: an HMAC of the token, HttpOnly and
SameSite=Strict. Pages are GET-only; the one POST (the login) compares the token in constant
time. Without a token the server listens on loopback only (run.py refuses otherwise), and the
pages also check that the `Host` header is a loopback name. Why each: docs/design.md.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from collections.abc import Callable
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, quote, urlsplit

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.types import Receive, Scope, Send

from ...requests import REQUESTS

COOKIE = "memo_session"
COOKIE_DAYS = 30
LOGIN = "/login"
LOGOUT = "/logout"
ASSETS = "/assets/"
# Paths a browser opens: they take the session cookie as well as the bearer header.
PAGE_PATHS = frozenset(
    {r.OPERATION.page for r in REQUESTS.values() if r.OPERATION.page}
    | {LOGIN, LOGOUT, "/docs", "/redoc", "/openapi.json"}
)
OPEN_PATHS = frozenset({LOGIN})  # the form itself (and ASSETS: CSS and the Swagger UI files)
WRONG_TOKEN_DELAY = 0.5  # seconds: slows guessing; a long random token is the real defence


def session_value(token: str) -> str:
    """What the cookie holds: an HMAC of the token, useless as a bearer token."""
    return hmac.new(token.encode(), b"memo web page session v1", hashlib.sha256).hexdigest()


def _cookie(scope: Scope) -> str:
    raw = dict(scope.get("headers") or []).get(b"cookie", b"")
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw.decode("latin-1"))
    except Exception:  # a malformed Cookie header is no session
        return ""
    morsel = jar.get(COOKIE)
    return morsel.value if morsel else ""


def safe_next(target: str | None) -> str:
    """A local path to return to after the login, never another site (`//evil`, `/\\evil`)."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")):
        return "/"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return "/"
    return target


class PageGate:
    """The page side of the token check, called by api.BearerToken for the page's paths."""

    def __init__(self, token: str) -> None:
        self.expected = session_value(token).encode()

    @staticmethod
    def owns(path: str) -> bool:
        return path in PAGE_PATHS or path.startswith(ASSETS)

    def allows(self, scope: Scope) -> bool:
        """An open path (the login form, static files) or a request with the session cookie."""
        path = scope["path"]
        if path in OPEN_PATHS or path.startswith(ASSETS):
            return True
        return hmac.compare_digest(_cookie(scope).encode(), self.expected)

    async def to_login(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Send the browser to the form, remembering where it was going."""
        target = scope["path"]
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode("latin-1")
        if target == "/":
            where = LOGIN
        else:
            where = f"{LOGIN}?next={quote(safe_next(target), safe='')}"
        await RedirectResponse(where, status_code=303)(scope, receive, send)


def login_router(templates: Jinja2Templates, token: str | None) -> APIRouter:
    """GET/POST /login and POST /logout (without a token there is nothing to log in to)."""
    router = APIRouter(include_in_schema=False)

    @router.get(LOGIN)
    def login_form(request: Request, next: str = "/") -> Response:
        if not token:
            return RedirectResponse("/", status_code=303)
        ctx = {"next": safe_next(next), "wrong": False, "token_set": True}
        return templates.TemplateResponse(request, "login.html", ctx)

    @router.post(LOGIN)
    async def login(request: Request) -> Response:
        if not token:
            return RedirectResponse("/", status_code=303)
        _same_origin(request)
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        given = (form.get("token") or [""])[0]
        target = safe_next((form.get("next") or ["/"])[0])
        if not hmac.compare_digest(given.encode(), token.encode()):
            await asyncio.sleep(WRONG_TOKEN_DELAY)
            ctx = {"next": target, "wrong": True, "token_set": True}
            return templates.TemplateResponse(request, "login.html", ctx, status_code=401)
        resp = RedirectResponse(target, status_code=303)
        resp.set_cookie(
            COOKIE,
            session_value(token),
            max_age=COOKIE_DAYS * 86400,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return resp

    @router.post(LOGOUT)
    def logout() -> Response:
        resp = RedirectResponse(LOGIN, status_code=303)
        resp.delete_cookie(COOKIE, httponly=True, samesite="strict")
        return resp

    return router


def _same_origin(request: Request) -> None:
    """A form posted from another site is refused (browsers send Origin on every POST)."""
    origin = request.headers.get("origin")
    if origin and origin != "null" and urlsplit(origin).netloc != request.headers.get("host"):
        raise HTTPException(403, "the login form was posted from another site")


def host_guard(host_ok: Callable[[str], bool]) -> Callable[[Request], None]:
    """A dependency refusing pages asked for under a name that is not loopback (DNS rebinding)."""

    def check(request: Request) -> None:
        host = request.headers.get("host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if not host_ok(name.strip("[]")):
            raise HTTPException(
                403,
                f"this page answers only to a loopback address, not {host!r}: open it as "
                "http://127.0.0.1:<port>/ (or run memo serve with --token)",
            )

    return check
