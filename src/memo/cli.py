"""`memo` on the command line: parse arguments, call the library, print the result.

stdout carries results only (JSON with --json); progress, warnings and errors go to stderr.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import click

from . import __version__
from .collection.files import shown
from .config import Settings, default_root
from .embed import make_embedder
from .errors import MemoError
from .library import Library
from .search import MODES, SearchResult


def _library(root: str | None, target: str | None) -> tuple[Library, str | None]:
    """The library for this call, and the target as the library should read it."""
    # The report printed below already says what the index log would: keep stderr single.
    logging.getLogger("memo.index").addHandler(logging.NullHandler())
    settings = Settings.from_env()
    embedder = (
        None
        if settings.embedder == "none"
        else make_embedder(settings.embedder, settings.model_dir)
    )
    lib = Library(infer_root(root, target), embedder, settings)
    # A relative PATH means "from here" when it exists from here, else "from the root";
    # `.` and `*` always mean the whole library.
    if target and target not in (".", "*") and not Path(target).is_absolute():
        here = Path(target).expanduser()
        if here.exists():
            target = os.path.abspath(here)
    return lib, target


def infer_root(root: str | None, target: str | None) -> Path:
    """--root / MEMO_ROOT when given; else a target path outside the default root names its own.

    Without an explicit root, `memo search ~/other/notes "q"` treats the folder above the
    outermost collection holding the target (or the target folder itself) as the root, so
    `path` in results stays relative to something meaningful.
    """
    if root:
        return Path(root).expanduser()
    default = default_root()
    if not target or target in (".", "*"):
        return default
    p = Path(target).expanduser()
    if not p.is_absolute():
        if (default / p).exists() or not p.exists():
            return default
    p = Path(os.path.abspath(p))
    if not p.exists():
        return default
    d = p if p.is_dir() else p.parent
    top = None
    for folder in [d, *d.parents]:
        if (folder / "_meta.yaml").is_file():
            top = folder
    return top.parent if top is not None else d


def _fail(e: MemoError) -> None:
    click.echo(f"error: {e}", err=True)
    if e.hint:
        click.echo(f"hint: {e.hint}", err=True)
    sys.exit(1)


def _emit(obj: Any) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False, indent=2))


root_option = click.option(
    "--root",
    envvar="MEMO_ROOT",
    default=None,
    help="Library root (env MEMO_ROOT; default ~/notes/memo, or the folder a PATH names).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memo")
def cli() -> None:
    """memo: a local library of markdown notes with hybrid search for agents."""


@cli.command()
@click.argument("path", required=False)
@root_option
@click.option("--full", is_flag=True, help="Drop the index and rebuild it from the notes.")
@json_option
def index(path: str | None, root: str | None, full: bool, as_json: bool) -> None:
    """Index the collections at or below PATH (default: the whole library)."""
    try:
        lib, path = _library(root, path)
        show_bar = sys.stderr.isatty() and not as_json
        if show_bar:
            with click.progressbar(
                length=lib.count_pending(path), label="indexing", file=sys.stderr
            ) as bar:
                report = lib.index(path, full=full, progress=bar.update)
        else:
            report = lib.index(path, full=full)
    except MemoError as e:
        _fail(e)
        return
    totals = report.totals()
    if as_json:
        _emit(
            {
                **totals,
                "collections_detail": [r.to_dict() for r in report.reports],
                "errors": report.errors,
            }
        )
    else:
        for r in report.reports:
            for w in r.warnings:
                click.echo(f"warning: {w}", err=True)
        for err in report.errors:
            click.echo(f"error: {err}", err=True)
        if totals["nothing_to_do"]:
            click.echo(
                f"nothing to do: {totals['collections']} collections, "
                f"{totals['unchanged']} files up to date ({totals['seconds']:.2f} s)"
            )
        else:
            click.echo(
                f"{totals['collections']} collections: {totals['new']} new, "
                f"{totals['changed']} changed, {totals['removed']} removed, "
                f"{totals['unchanged']} unchanged, {totals['skipped']} skipped; "
                f"{totals['chunks_embedded']} chunks embedded in {totals['seconds']:.1f} s"
            )
    if report.errors and not report.reports:
        sys.exit(1)


@cli.command()
@click.argument("path")
@click.argument("query")
@root_option
@click.option(
    "--k", "-k", default=8, show_default=True, type=click.IntRange(1, 200), help="How many hits."
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default="hybrid",
    show_default=True,
    help="hybrid fuses both legs; lex and vec run one alone.",
)
@json_option
def search(path: str, query: str, root: str | None, k: int, mode: str, as_json: bool) -> None:
    """Search PATH (a note, a collection, or any folder above collections) for QUERY."""
    try:
        lib, path = _library(root, path)
        result = lib.search(path, query, k=k, mode=mode)
    except MemoError as e:
        _fail(e)
        return
    if as_json:
        _emit(result.to_dict())
        return
    for w in result.warnings:
        click.echo(f"warning: {w}", err=True)
    _print_hits(result)


def _print_hits(result: SearchResult) -> None:
    if not result.hits:
        click.echo("no results")
        return
    for h in result.hits:
        heading = f"  {h.heading}" if h.heading else ""
        # A file name may hold a newline: print it escaped so `path:line` stays one line.
        where = f"{shown(h.path)}:{h.line}"
        click.echo(click.style(where, bold=True) + heading + f"  ({h.score:.4f})")
        snippet = " ".join(h.text.split())
        click.echo(f"    {snippet[:240]}{'…' if len(snippet) > 240 else ''}")


@cli.command()
@click.argument("path", required=False)
@root_option
@json_option
def status(path: str | None, root: str | None, as_json: bool) -> None:
    """Show each collection's index: files, chunks, staleness, embedder, size."""
    try:
        lib, path = _library(root, path)
        st = lib.status(path)
    except MemoError as e:
        _fail(e)
        return
    if as_json:
        _emit(st)
        return
    click.echo(f"root: {st['root']}")
    for c in st["collections"]:
        state = (
            "not indexed"
            if not c["indexed"]
            else (
                f"{c['files']} files, {c['chunks']} chunks, {c['stale']} changed since indexing, "
                f"embedder {c['embedder'] or 'none (lexical only)'}, {c['size_bytes'] / 1e6:.1f} MB"
            )
        )
        if c.get("damaged"):
            state = c["damaged"]
        click.echo(f"{c['path']}  [{c['collection']}]  {state}")
        for s in c.get("skipped", []):
            click.echo(f"    skipped {s['path']}: {s['why']}")
    for err in st["errors"]:
        click.echo(f"error: {err}", err=True)


def _root_arg(root_arg: str | None, root: str | None) -> Path:
    lib_root = Path(root_arg or root or default_root()).expanduser()
    if not lib_root.is_dir():
        _fail(
            MemoError(
                f"library root {lib_root} is not a folder",
                "Pass ROOT or --root, or set MEMO_ROOT, to the folder that holds your collections.",
            )
        )
    return lib_root


@cli.command()
@click.argument("root_arg", metavar="[ROOT]", required=False)
@root_option
def mcp(root_arg: str | None, root: str | None) -> None:
    """Serve the library to an MCP client over stdio (for Claude, Codex, Hermes, Cursor)."""
    from .server.run import serve_stdio  # the server stack loads only for the servers

    try:
        serve_stdio(_root_arg(root_arg, root))
    except MemoError as e:
        _fail(e)


@cli.command()
@click.argument("root_arg", metavar="[ROOT]", required=False)
@root_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--token",
    envvar="MEMO_TOKEN",
    default=None,
    help="Bearer token every request must carry (env MEMO_TOKEN); required beyond loopback.",
)
@click.option("--watch", is_flag=True, help="Also run the watcher in this process.")
@click.option("--polling", is_flag=True, help="With --watch: poll instead of inotify (NFS, sshfs).")
@click.option(
    "--log-level",
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
    default="info",
    show_default=True,
)
def serve(
    root_arg: str | None,
    root: str | None,
    host: str,
    port: int,
    token: str | None,
    watch: bool,
    polling: bool,
    log_level: str,
) -> None:
    """Serve the HTTP API (docs at /docs) and MCP over streamable HTTP at /mcp."""
    from .server.run import serve_http

    try:
        serve_http(
            _root_arg(root_arg, root),
            host=host,
            port=port,
            token=token or None,
            watch=watch,
            polling=polling,
            log_level=log_level,
        )
    except MemoError as e:
        _fail(e)


def main() -> None:
    cli()
