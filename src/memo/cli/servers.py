"""The long-running commands: `mcp` (stdio), `serve` (HTTP API + MCP), `watch`."""

from __future__ import annotations

import logging
import os
import sys

import click

from ..config import Settings
from ..errors import MemoError
from .common import fail, root_folder, root_option


@click.command()
@click.argument("root_arg", metavar="[ROOT]", required=False)
@root_option
def mcp(root_arg: str | None, root: str | None) -> None:
    """Serve the library to an MCP client over stdio (for Claude, Codex, Hermes, Cursor)."""
    from ..server.run import serve_stdio  # the server stack loads only for the servers

    try:
        serve_stdio(root_folder(root_arg, root))
    except MemoError as e:
        fail(e)


@click.command()
@click.argument("root_arg", metavar="[ROOT]", required=False)
@root_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--token",
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
    from ..server.run import serve_http

    try:
        serve_http(
            root_folder(root_arg, root),
            host=host,
            port=port,
            token=token or Settings.from_env().token,
            watch=watch,
            polling=polling,
            log_level=log_level,
        )
    except MemoError as e:
        fail(e)


@click.command()
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
    from ..embed import embedder_for
    from ..library import raise_open_files_limit
    from ..watch import Watcher
    from .progress import lower_priority

    settings = Settings.from_env()
    raise_open_files_limit()
    try:
        watcher = Watcher(
            root_folder(path, root),
            embedder_for(settings, "serve"),
            settings,
            polling=polling,
            debounce=debounce,
            reconcile_every=reconcile_every,
            log=lambda line: click.echo(line, err=True),
            level=logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO,
        )
    except MemoError as e:
        fail(e)
    # Background work: a search does its own catch-up, so the watcher (its vector stage most of
    # all) runs below the searches made meanwhile.
    lower_priority()
    watcher.run()
    # Leave at once: the indexes are closed (or, if a sync was still embedding, its file's rows
    # were not written and the next start redoes it); interpreter teardown of a model runtime
    # took seconds (measured 5.5 s) and SIGTERM must stop within a second.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
