"""`memo` on the command line: parse arguments, build a request, print the answer.

common.py    options, finding the library, errors     text.py      what a person reads
queries.py   search, show, route, status               indexing.py  index, registry, new, skill
servers.py   mcp, serve, watch                         progress.py  index progress on stderr
"""

from __future__ import annotations

import click

from .. import __version__
from . import indexing, model, queries, servers


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memo")
def cli() -> None:
    """memo: a local library of markdown notes with hybrid search for agents."""


for _command in (*indexing.COMMANDS, *queries.COMMANDS, *servers.COMMANDS, *model.COMMANDS):
    cli.add_command(_command)


def main() -> None:
    cli()
