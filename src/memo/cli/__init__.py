"""`memo` on the command line: parse arguments, build a request, print the answer.

common.py    options, finding the library, errors     text.py      what a person reads
queries.py   search, show, route, status               options.py   a request's fields as options
indexing.py  init, index, registry rebuild, new, skill
servers.py   mcp, serve, watch                         progress.py  index progress on stderr
model.py     model build, model status                 delegate.py  asking a running memo serve

Each command's module is imported only when that command runs (`LazyGroup`): a shell agent
pays for every import on every call, and `memo search` handed to a running server should not
load the code of `index` or `serve` (bench/cli.py).
"""

from __future__ import annotations

import importlib

import click

from .. import __version__
from ..requests import REQUESTS

# command name -> the module that defines it (as a function of the same name): each operation's
# command (requests.py) in queries.py, or in indexing.py when it writes memo's caches
WHERE = {
    **{
        r.OPERATION.command: "indexing" if r.OPERATION.writes else "queries"
        for r in REQUESTS.values()
    },
    "init": "indexing",
    "registry": "indexing",
    "new": "indexing",
    "skill": "indexing",
    "mcp": "servers",
    "serve": "servers",
    "watch": "servers",
    "model": "model",
}


class LazyGroup(click.Group):
    """A group whose commands are imported on first use (click's documented lazy-loading
    pattern): `list_commands` knows every name, `get_command` imports one module."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(WHERE)

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        module = WHERE.get(cmd_name)
        if module is None:
            return None
        command = getattr(importlib.import_module(f"{__name__}.{module}"), cmd_name)
        assert isinstance(command, click.Command), f"memo.cli.{module}.{cmd_name}"
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memo")
def cli() -> None:
    """memo: a local library of markdown notes with hybrid search for agents."""


def main() -> None:
    cli()
