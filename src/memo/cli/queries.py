"""The commands that read: `search`, `show`, `related`, `route`, `status`.

Each is its request's declaration as click options (options.py) and one shared body
(`answer`): find the library, build the request, hand it to a running `memo serve` or answer
in-process, print it.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..config import Settings
from ..errors import MemoError
from ..requests import (
    ReadRequest,
    RelatedRequest,
    RouteRequest,
    SearchRequest,
    StatusRequest,
    WhyRequest,
    _Request,
)
from . import delegate, text
from .common import emit, fail, find_root, json_option, library_at, no_server_option, root_option
from .options import request_options


def answer(
    request: type[_Request], fields: dict[str, Any], root: str | None, no_server: bool
) -> dict[str, Any]:
    """One one-shot command: the library, the checked request, the answer as a dict (the
    server's when one runs for this library, else this process's); errors exit 1."""
    method, endpoint = request.OPERATION.endpoints[0]  # the server's endpoint it delegates to
    try:
        settings = Settings.from_env()
        req = request.make(**fields)
        path = req.to_dict().get("path")
        lib_root, target = find_root(path, root, settings)
        if path is not None and target is not None and target != path:
            req = req.at(target)
        body, query = (req.to_dict(), None) if method == "POST" else (None, req.to_dict())
        out = None if no_server else delegate.ask(lib_root, settings, method, endpoint, query, body)
        if out is None:
            return req.sent_to(library_at(lib_root, settings)).to_dict()
        if said := req.warnings():  # what the request said (a cut query): said here too
            out["warnings"] = said + out.get("warnings", [])
        return out
    except MemoError as e:
        fail(_swapped(e, request, fields))


def _swapped(e: MemoError, request: type[_Request], fields: dict[str, Any]) -> MemoError:
    """`memo search QUERY PATH`: the arguments the wrong way round are read as a PATH nobody
    has and a query naming a folder; the error then says which order the command takes."""
    path, query = fields.get("path"), fields.get("query")
    if not (isinstance(path, str) and isinstance(query, str) and query.strip()):
        return e
    try:
        if Path(path).expanduser().exists() or not Path(query).expanduser().exists():
            return e
    except (OSError, ValueError):  # a query no file system could name
        return e
    command = request.OPERATION.command
    again = f"memo {command} {shlex.quote(query)} {shlex.quote(path)}"
    return type(e)(str(e), f"PATH comes before QUERY: `{again}`. {e.hint}".strip())


def _command(
    request: type[_Request], show: Callable[[dict[str, Any]], None]
) -> Callable[[Callable[..., None]], click.Command]:
    """A one-shot command, named as its operation declares: the request's options, --root,
    --json, --no-server."""

    def make(f: Callable[..., None]) -> click.Command:
        def run(root: str | None, as_json: bool, no_server: bool, **fields: Any) -> None:
            out = answer(request, fields, root, no_server)
            emit(out) if as_json else show(out)
            f(out)

        run.__doc__ = f.__doc__
        run.__name__ = f.__name__
        for deco in (no_server_option, json_option, root_option, request_options(request)):
            run = deco(run)
        return click.command(request.OPERATION.command)(run)

    return make


@_command(SearchRequest, text.search)
def search(out: dict[str, Any]) -> None:
    """Search PATH (a note, a collection, or any folder above collections) for QUERY.

    PATH `*` (or `.`) is the whole library: every collection, fused into one list.
    """


@_command(ReadRequest, text.excerpt)
def show(out: dict[str, Any]) -> None:
    """Print a note, or LINES lines of it from LINE (a search hit's path:line or
    path:line-end).

    With --json the output carries `cite`, the citation hash of the lines shown: equal to a
    hit's `cite` when those lines still read as they did when searched.
    """


@_command(RelatedRequest, text.related)
def related(out: dict[str, Any]) -> None:
    """A note's neighbours: the notes it links to, the notes linking to it, the notes nearest
    it in meaning, and its links that open nothing; every item PATH:LINE.

    PATH:LINE (a search hit's) narrows links and similar notes to the section at that line.
    """


@_command(StatusRequest, text.status)
def status(out: dict[str, Any]) -> None:
    """Show each collection's index: files, chunks, staleness, embedder, size."""
    if out["broken"]:
        sys.exit(1)


@_command(RouteRequest, text.route)
def route(out: dict[str, Any]) -> None:
    """Which collections to search for QUERY: ranked by their best hits, shown with them."""


@_command(WhyRequest, text.why)
def why(out: dict[str, Any]) -> None:
    """Where NOTE ranks for QUERY in each leg and what stood above it, or why it is not found
    (left out by a rule, not indexed, vectors pending, not routed...).

    --within PATH searches where a search of PATH would (default: the whole library).
    """
