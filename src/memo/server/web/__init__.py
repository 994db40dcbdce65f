"""The web page of `memo serve`, for people: search, a note at the cited line, library health.

Server-rendered (Jinja2 through FastAPI), no JavaScript, no asset from outside: it works with
scripts off and without the network. `mount_web` adds the pages, their CSS, the login form
(servers with a token) and offline `/docs` to the API's app; `auth.PageGate` is what
`api.BearerToken` consults for the pages' paths.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import jinja2
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from ..service import Service
from .auth import PageGate, host_guard, login_router
from .docs import mount_docs
from .pages import pages_router, template_globals

HERE = Path(__file__).parent

__all__ = ["PageGate", "mount_web", "templates"]


def templates(token_set: bool) -> Jinja2Templates:
    """The page templates; autoescape on for every template, whatever its name."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(template_globals(token_set))
    return Jinja2Templates(env=env)


def mount_web(
    app: FastAPI,
    service: Service,
    token: str | None,
    host_ok: Callable[[str], bool] | None,
) -> None:
    """Add the pages to `app`. Without a token, `host_ok` checks each page's Host header
    (loopback names only); with one, api.BearerToken asks PageGate for the session cookie."""
    tpl = templates(bool(token))
    guards = [host_guard(host_ok)] if host_ok is not None and not token else []
    app.mount("/assets/web", StaticFiles(directory=HERE / "static"), name="web-assets")
    app.include_router(login_router(tpl, token))
    app.include_router(pages_router(service, tpl, guards))
    mount_docs(app)
