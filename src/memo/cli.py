"""`memo` on the command line: parse arguments, call the library, print the result.

stdout carries results only (JSON with --json); progress, warnings and errors go to stderr.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from . import __version__
from .collection.files import shown
from .config import Settings, default_root
from .embed import make_embedder
from .errors import MemoError
from .library import Library
from .router import STRATEGIES
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
@click.option(
    "--route",
    "route_k",
    type=click.IntRange(1, 1000),
    default=None,
    help="Search only the K collections the router ranks best for QUERY (within PATH).",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(1, 1_000_000),
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
) -> None:
    """Search PATH (a note, a collection, or any folder above collections) for QUERY.

    PATH `*` (or `.`) is the whole library: every collection, fused into one list.
    """
    try:
        lib, path = _library(root, path)
        result = lib.search(
            path,
            query,
            k=k,
            mode=mode,
            route=route_k,
            max_tokens=max_tokens,
            tags=tags,
            since=since,
            until=until,
            diverse=diverse,
        )
    except MemoError as e:
        _fail(e)
        return
    if as_json:
        _emit(result.to_dict())
        return
    for w in result.warnings:
        click.echo(f"warning: {w}", err=True)
    if result.routed is not None:
        click.echo(f"routed to: {', '.join(result.routed)}", err=True)
    _print_hits(result)


def _print_hits(result: SearchResult) -> None:
    if not result.hits:
        click.echo("no results")
        return
    if result.confidence != "high":
        hint = (
            "no good match: these are the nearest notes"
            if result.confidence == "none"
            else ("weak match: read before trusting")
        )
        click.echo(f"confidence {result.confidence} ({hint})", err=True)
    for h in result.hits:
        heading = f"  {h.heading}" if h.heading else ""
        # A file name may hold a newline: print it escaped so `path:line` stays one line.
        where = f"{shown(h.path)}:{h.line}"
        click.echo(click.style(where, bold=True) + heading + f"  ({h.score:.4f})")
        snippet = " ".join(h.text.split())
        click.echo(f"    {snippet[:240]}{'…' if len(snippet) > 240 else ''}")


@cli.command()
@click.argument("location", metavar="PATH[:LINE]")
@root_option
@click.option("--lines", "-n", type=click.IntRange(1, 2000), default=None, help="How many lines.")
@json_option
def show(location: str, root: str | None, lines: int | None, as_json: bool) -> None:
    """Print a note, or LINES lines of it from LINE (a search hit's path:line).

    With --json the output carries `cite`, the citation hash of the lines shown: equal to a
    hit's `cite` when those lines still read as they did when searched.
    """
    path, line = location, None
    head, sep, tail = location.rpartition(":")
    if sep and tail.isdigit():
        path, line = head, int(tail)
    try:
        lib, path = _library(root, path)
        ex = lib.read(path, line, lines)
    except MemoError as e:
        _fail(e)
        return
    if as_json:
        _emit(ex.to_dict())
        return
    click.echo(ex.text)
    more = f", {ex.total_lines - ex.end_line} more" if ex.truncated else ""
    click.echo(
        f"-- {ex.path}:{ex.line}-{ex.end_line} of {ex.total_lines}{more} (cite {ex.cite})", err=True
    )


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
    if st["collections"]:
        first = st["collections"][0]
        seen, scan = first.get("watcher_last_seen"), first.get("last_reconcile")
        now = time.time()
        click.echo(
            "watcher: "
            + (f"running (seen {now - seen:.0f} s ago)" if seen else "not running (memo watch)")
            + (f", last full scan {now - scan:.0f} s ago" if scan else "")
        )
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
        for f in c.get("failed", []):
            click.echo(f"    failed {f['path']}: {f['error']}")
    for w in st.get("warnings", []):
        click.echo(f"warning: {w}", err=True)
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


@cli.command()
@click.argument("path", required=False)
@root_option
@click.option(
    "--polling",
    is_flag=True,
    help="Poll the folders instead of inotify (FUSE, sshfs, SMB mounts, where events are blind).",
)
@click.option(
    "--debounce",
    type=click.FloatRange(0.0, 60.0),
    default=0.5,
    show_default=True,
    help="Seconds of quiet after a file's last event before it is indexed.",
)
@click.option(
    "--reconcile-every",
    type=click.FloatRange(1.0),
    default=600.0,
    show_default=True,
    help="Seconds between full scans that heal lost events (also run on start and overflow).",
)
@click.option("--quiet", "-q", is_flag=True, help="Log only warnings and errors.")
@click.option("--verbose", "-v", is_flag=True, help="Log every event and every no-op sync too.")
def watch(
    path: str | None,
    root: str | None,
    polling: bool,
    debounce: float,
    reconcile_every: float,
    quiet: bool,
    verbose: bool,
) -> None:
    """Keep the indexes of the library at PATH (default: the root) in line with its notes.

    Runs until SIGTERM or Ctrl-C; logs one line per action to stderr.
    """
    import logging

    from .watch import Watcher

    settings = Settings.from_env()
    try:
        embedder = (
            None
            if settings.embedder == "none"
            else make_embedder(settings.embedder, settings.model_dir)
        )
        where = Path(path).expanduser() if path else Path(root or default_root()).expanduser()
        watcher = Watcher(
            where,
            embedder,
            settings,
            polling=polling,
            debounce=debounce,
            reconcile_every=reconcile_every,
            log=lambda line: click.echo(line, err=True),
            level=logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO,
        )
    except MemoError as e:
        _fail(e)
        return
    watcher.run()
    # Leave at once: the indexes are closed (or, if a sync was still embedding, its file's rows
    # were not written and the next start redoes it); interpreter teardown of a model runtime
    # took seconds (measured 5.5 s with fastembed) and SIGTERM must stop within a second.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@cli.command()
@click.argument("query")
@root_option
@click.option(
    "--k",
    "-k",
    default=5,
    show_default=True,
    type=click.IntRange(1, 1000),
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
def route(
    query: str, root: str | None, k: int, prefix: str | None, strategy: str, as_json: bool
) -> None:
    """Which collections to search for QUERY: ranked, with their descriptions."""
    try:
        lib, _ = _library(root, None)
        res = lib.route(query, k=k, prefix=prefix, strategy=strategy)
    except MemoError as e:
        _fail(e)
        return
    if as_json:
        _emit(res.to_dict())
        return
    for w in res.warnings:
        click.echo(f"warning: {w}", err=True)
    click.echo(
        f"{res.strategy}: {len(res.collections)} of {res.total} collections ({res.took_ms:.1f} ms)",
        err=True,
    )
    for c in res.collections:
        click.echo(click.style(c.path, bold=True) + f"  [{c.name}]  ({c.score:.4f})")
        click.echo(f"    {c.description}")
    for t in res.tree[:30]:
        click.echo(f"  {t['prefix']}  ({t['collections']} collections)")


@cli.group()
def registry() -> None:
    """The registry of collections (_registry.yaml) and the router index beside it."""


@registry.command("rebuild")
@click.argument("root_arg", metavar="[ROOT]", required=False)
@root_option
@click.option(
    "--no-vectors", is_flag=True, help="Skip embedding descriptions (lexical routing only)."
)
@json_option
def registry_rebuild(
    root_arg: str | None, root: str | None, no_vectors: bool, as_json: bool
) -> None:
    """Scan ROOT for collections; write _registry.yaml and update the router index."""
    try:
        lib, _ = _library(root_arg or root, None)
        show = sys.stderr.isatty() and not as_json

        def progress(what: str, done: int, total: int) -> None:
            if show:
                click.echo(f"\r{what}: {done}/{total}", nl=done >= total, err=True)

        rep = lib.rebuild_registry(embed=not no_vectors, progress=progress)
    except MemoError as e:
        _fail(e)
        return
    if as_json:
        _emit({**rep.to_dict(), "registry": str(lib.registry.yaml_path)})
        return
    for err in rep.errors:
        click.echo(f"error: {err}", err=True)
    click.echo(
        f"{rep.collections} collections: {len(rep.added)} added, {len(rep.changed)} changed, "
        f"{len(rep.removed)} removed; {rep.embedded} descriptions embedded"
        f"{f', {rep.not_embedded} left' if rep.not_embedded else ''} in {rep.seconds:.1f} s"
        f" -> {lib.registry.yaml_path}"
    )


@cli.command()
@click.argument("path")
@root_option
@click.option("--description", "-d", required=True, help="One line: what this collection holds.")
@click.option("--tags", default="", help="Comma-separated tags.")
@click.option("--name", default=None, help="Display name (default: the folder name).")
@json_option
def new(
    path: str, root: str | None, description: str, tags: str, name: str | None, as_json: bool
) -> None:
    """Create a collection: the folder PATH (relative to the root) and its _meta.yaml."""
    from .collection.meta import create_collection

    try:
        lib_root = Path(root).expanduser() if root else default_root()
        if not lib_root.is_dir():
            raise MemoError(
                f"library root {lib_root} is not a folder",
                "Pass --root or set MEMO_ROOT to the folder that holds your collections.",
            )
        rel = path
        if Path(path).is_absolute():
            rel = os.path.relpath(os.path.abspath(path), os.path.abspath(lib_root))
        folder = create_collection(
            lib_root, rel, description, [t for t in tags.split(",") if t.strip()], name
        )
    except MemoError as e:
        _fail(e)
        return
    meta = folder / "_meta.yaml"
    if as_json:
        _emit({"path": os.path.relpath(folder, lib_root), "meta": str(meta)})
    else:
        click.echo(f"created {meta}")


@cli.command()
@root_option
@click.option("--hermes", is_flag=True, help="With the frontmatter of a Hermes Agent skill file.")
def skill(root: str | None, hermes: bool) -> None:
    """Print a ready-to-paste skill for agents: topic → collection map and how to use memo."""
    from .skill import skill_text

    try:
        lib, _ = _library(root, None)
        click.echo(skill_text(lib, hermes=hermes))
    except MemoError as e:
        _fail(e)


def main() -> None:
    cli()
