"""What every `memo` command shares: its options, how it finds the library, how it fails.

stdout carries results only (JSON with --json); progress, warnings and errors go to stderr.
Nothing heavy is imported at module level: `memo --version` loads click and little else.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ..config import Settings
from ..errors import MemoError

if TYPE_CHECKING:
    from ..library import Library

root_option = click.option(
    "--root",
    default=None,
    help="Library root (env MEMO_ROOT; default ~/notes/memo, or the folder a PATH names).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


def fail(e: MemoError) -> NoReturn:
    """Print `error: …` and `hint: …` on stderr and exit 1."""
    click.echo(f"error: {e}", err=True)
    if e.hint:
        click.echo(f"hint: {e.hint}", err=True)
    sys.exit(1)


def emit(obj: Any) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False, indent=2))


def warn(lines: list[str]) -> None:
    for w in lines:
        click.echo(f"warning: {w}", err=True)


def open_library(root: str | None, target: str | None) -> tuple[Library, str | None]:
    """The library for this call, and the target as the library should read it."""
    from ..collection.pool import raise_open_files_limit
    from ..embed import embedder_for
    from ..library import Library

    # The report printed by the command already says what the index log would: one stderr.
    logging.getLogger("memo.index").addHandler(logging.NullHandler())
    raise_open_files_limit()
    settings = Settings.from_env()
    lib = Library(infer_root(root, target, settings), embedder_for(settings), settings)
    # A relative PATH means "from here" when it exists from here, else "from the root";
    # `.` and `*` always mean the whole library.
    if target and target not in (".", "*") and not Path(target).is_absolute():
        here = Path(target).expanduser()
        if here.exists():
            target = os.path.abspath(here)
    return lib, target


def infer_root(root: str | None, target: str | None, settings: Settings) -> Path:
    """--root / MEMO_ROOT when given; else a target path outside the default root names its own.

    Without an explicit root, `memo search ~/other/notes "q"` treats the folder above the
    outermost collection holding the target (or the target folder itself) as the root, so
    `path` in results stays relative to something meaningful.
    """
    if root:
        return Path(root).expanduser()
    default = settings.library_root
    if settings.root or not target or target in (".", "*"):
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


def root_folder(root_arg: str | None, root: str | None) -> Path:
    """The root a server or watcher serves: ROOT, --root, MEMO_ROOT, or the default."""
    lib_root = Path(root_arg or root or Settings.from_env().library_root).expanduser()
    if not lib_root.is_dir():
        fail(
            MemoError(
                f"library root {lib_root} is not a folder",
                "Pass ROOT or --root, or set MEMO_ROOT, to the folder that holds your collections.",
            )
        )
    return lib_root
