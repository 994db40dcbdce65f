"""`memo` on the command line: parse arguments, build a request, print the answer.

Its modules, one line each: docs/design.md's map. Each command's module is imported only when
that command runs (`LazyGroup`): a shell agent pays for every import on every call, and a
delegated `memo search` should not load `index` or `serve` (bench/cli.py). Every error reads
alike, click's own included: `error: …` and `hint: …` on stderr, exit code 1 (`common.fail`;
`UsageFailure` for what click would print under its usage text with exit code 2: an unknown
option or command, a missing argument, a value out of its bounds).
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from .. import __version__
from ..errors import MemoError
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


class UsageFailure(click.ClickException):
    """A usage error said as every memo error is: `error: …` and `hint: …`, exit code 1."""

    exit_code = 1

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.message}", err=True)
        if self.hint:
            click.echo(f"hint: {self.hint}", err=True)


def usage_failure(e: click.ClickException) -> UsageFailure:
    """click's error as memo says errors. A value its declaration refuses (options.py) keeps
    the declaration's sentence and hint, the ones HTTP and MCP give; click's own sentence is
    said in memo's voice, and its hint names the command's usage and `--help`."""
    if isinstance(e.__cause__, MemoError):
        return UsageFailure(str(e.__cause__), e.__cause__.hint)
    message = e.format_message().strip()
    if message[1:2].islower():  # "Missing argument", not "QUERY"
        message = message[:1].lower() + message[1:]
    message = message.removesuffix(".")
    ctx = e.ctx if isinstance(e, click.UsageError) else None
    if ctx is None:
        return UsageFailure(message, "`memo --help` lists the commands and their options.")
    usage = ctx.get_usage().removeprefix("Usage: ").strip()
    more = f"`{ctx.command_path} --help` lists its arguments and options"
    return UsageFailure(message, f"Use it as `{usage}`; {more}.")


class LazyGroup(click.Group):
    """A group whose commands are imported on first use (click's documented lazy-loading
    pattern): `list_commands` knows every name, `get_command` imports one module. Its own
    arguments and its commands' (read inside `invoke`) fail as `UsageFailure`."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise  # `memo` alone: the help, not an error
        except click.ClickException as e:
            raise usage_failure(e) from e

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.NoArgsIsHelpError, UsageFailure):
            raise
        except click.ClickException as e:
            raise usage_failure(e) from e

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
