"""The commands that read: `search`, `show`, `route`, `status`."""

from __future__ import annotations

import sys

import click

from ..config import Settings
from ..errors import MemoError
from ..requests import (
    DEFAULT_K,
    DEFAULT_ROUTE_K,
    MAX_BUDGET,
    MAX_K,
    MAX_LINES,
    MAX_ROUTE_K,
    MODES,
    STRATEGIES,
    ReadRequest,
    RouteRequest,
    SearchRequest,
    StatusRequest,
)
from . import delegate, text
from .common import emit, fail, find_root, json_option, library_at, no_server_option, root_option


@click.command()
@click.argument("path")
@click.argument("query")
@root_option
@click.option(
    "--k",
    "-k",
    default=DEFAULT_K,
    show_default=True,
    type=click.IntRange(1, MAX_K),
    help="How many hits.",
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default="hybrid",
    show_default=True,
    help="hybrid fuses both legs; lex and vec run one alone.",
)
@click.option(
    "--route",
    "route_k",
    type=click.IntRange(1, MAX_ROUTE_K),
    default=None,
    help="Search only the K collections the router ranks best for QUERY (within PATH).",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(1, MAX_BUDGET),
    default=None,
    help="Fit the hits into this many tokens (hits cut at a sentence border, the rest dropped).",
)
@click.option("--tags", default=None, help="Only notes whose frontmatter has all these tags (a,b).")
@click.option("--since", default=None, help="Only notes updated since: YYYY-MM-DD, or 7d, 2w, 3m.")
@click.option("--until", default=None, help="Only notes updated until: YYYY-MM-DD, or 7d, 2w.")
@click.option(
    "--diverse/--no-diverse",
    default=None,
    help="Cap hits per note while other notes match (default: on for k >= 5).",
)
@json_option
@no_server_option
def search(
    path: str,
    query: str,
    root: str | None,
    k: int,
    mode: str,
    route_k: int | None,
    max_tokens: int | None,
    tags: str | None,
    since: str | None,
    until: str | None,
    diverse: bool | None,
    as_json: bool,
    no_server: bool,
) -> None:
    """Search PATH (a note, a collection, or any folder above collections) for QUERY.

    PATH `*` (or `.`) is the whole library: every collection, fused into one list.
    """
    options = dict(k=k, mode=mode, route=route_k, max_tokens=max_tokens, tags=tags)
    options.update(since=since, until=until, diverse=diverse)
    try:
        settings = Settings.from_env()
        lib_root, target = find_root(path, root, settings)
        req = SearchRequest.make(target, query, **options)
        result = (
            None
            if no_server
            else delegate.ask(lib_root, settings, "POST", "/search", body=req.to_dict())
        )
        if result is not None:  # the server saw the query already cut: say so here too
            result["warnings"] = req.warnings() + result["warnings"]
        else:
            result = library_at(lib_root, settings).search(req).to_dict()
    except MemoError as e:
        fail(e)
    emit(result) if as_json else text.search(result)


@click.command()
@click.argument("location", metavar="PATH[:LINE]")
@root_option
@click.option(
    "--lines", "-n", type=click.IntRange(1, MAX_LINES), default=None, help="How many lines."
)
@json_option
@no_server_option
def show(
    location: str, root: str | None, lines: int | None, as_json: bool, no_server: bool
) -> None:
    """Print a note, or LINES lines of it from LINE (a search hit's path:line).

    With --json the output carries `cite`, the citation hash of the lines shown: equal to a
    hit's `cite` when those lines still read as they did when searched.
    """
    path, line = location, None
    head, sep, tail = location.rpartition(":")
    if sep and tail.isdigit():
        path, line = head, int(tail)
    try:
        settings = Settings.from_env()
        lib_root, target = find_root(path, root, settings)
        req = ReadRequest.make(target, line, lines)
        ex = (
            None
            if no_server
            else delegate.ask(
                lib_root,
                settings,
                "GET",
                "/note",
                query=dict(path=req.path, line=line, lines=lines),
            )
        )
        if ex is None:
            ex = library_at(lib_root, settings).read(req).to_dict()
    except MemoError as e:
        fail(e)
    emit(ex) if as_json else text.excerpt(ex)


@click.command()
@click.argument("path", required=False)
@root_option
@json_option
@no_server_option
def status(path: str | None, root: str | None, as_json: bool, no_server: bool) -> None:
    """Show each collection's index: files, chunks, staleness, embedder, size."""
    try:
        settings = Settings.from_env()
        lib_root, target = find_root(path, root, settings)
        req = StatusRequest.make(target)
        st = (
            None
            if no_server
            else delegate.ask(lib_root, settings, "GET", "/status", query=dict(path=req.path))
        )
        if st is None:
            st = library_at(lib_root, settings).status(req).to_dict()
    except MemoError as e:
        fail(e)
    emit(st) if as_json else text.status(st)
    if st["broken"]:
        sys.exit(1)


@click.command()
@click.argument("query")
@root_option
@click.option(
    "--k",
    "-k",
    default=DEFAULT_ROUTE_K,
    show_default=True,
    type=click.IntRange(1, MAX_ROUTE_K),
    help="How many collections (the flat strategy lists them all).",
)
@click.option("--prefix", default=None, help="Only collections under this folder: work or work/*.")
@click.option(
    "--strategy",
    type=click.Choice(STRATEGIES),
    default="auto",
    show_default=True,
    help="auto picks by size: flat <= 50 collections, tree <= 5,000, hybrid beyond.",
)
@json_option
@no_server_option
def route(
    query: str,
    root: str | None,
    k: int,
    prefix: str | None,
    strategy: str,
    as_json: bool,
    no_server: bool,
) -> None:
    """Which collections to search for QUERY: ranked by their best hits, shown with them."""
    try:
        settings = Settings.from_env()
        lib_root, _ = find_root(None, root, settings)
        req = RouteRequest.make(query, k=k, prefix=prefix, strategy=strategy)
        res = (
            None
            if no_server
            else delegate.ask(lib_root, settings, "POST", "/route", body=req.to_dict())
        )
        if res is None:
            res = library_at(lib_root, settings).route(req).to_dict()
    except MemoError as e:
        fail(e)
    emit(res) if as_json else text.route(res)
