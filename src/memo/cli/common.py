"""What every `memo` command shares: its options, how it finds the library, how it fails.

stdout carries results only (JSON with --json); progress, warnings and errors go to stderr.
Nothing heavy is imported at module level: `memo --version` loads click and little else.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ..config import Settings
from ..errors import LibraryNotFoundError, MemoError, NotFoundError
from ..roots import WHOLE, NotALibraryError, declared_root, is_declared, not_a_library

if TYPE_CHECKING:
    from ..library import Library

root_option = click.option(
    "--root",
    default=None,
    help="Library root (env MEMO_ROOT; default ~/notes/memo, or the folder a PATH names).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
no_server_option = click.option(
    "--no-server",
    is_flag=True,
    help="Answer in this process even when a `memo serve` for this library is running.",
)


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


def open_library(
    root: str | None, target: str | None, purpose: str = "query", declaring: bool = False
) -> tuple[Library, str | None]:
    """The library for this call, and the target as the library should read it. `purpose`
    picks the model's engine (embed.PURPOSES): a one-shot query loads the fast-starting one.
    `declaring`: the command may make the folder it names a library (`find_root`)."""
    settings = Settings.from_env()
    lib_root, target = find_root(target, root, settings, declaring=declaring)
    return library_at(lib_root, settings, purpose), target


def library_at(lib_root: Path, settings: Settings, purpose: str = "query") -> Library:
    """The library at a root found already (`find_root`), with the engine `purpose` needs."""
    import logging

    from ..embed import embedder_for
    from ..library import Library, raise_open_files_limit

    # The report printed by the command already says what the index log would: one stderr.
    logging.getLogger("memo.index").addHandler(logging.NullHandler())
    raise_open_files_limit()
    return Library(lib_root, embedder_for(settings, purpose), settings)


def find_root(
    path: str | None,
    root: str | None,
    settings: Settings,
    cwd: Path | None = None,
    declaring: bool = False,
) -> tuple[Path, str | None]:
    """Which library a command works on, and its PATH as that library reads it.

    One rule for every command (README, "Which library"):

    1. `--root` when given: PATH is read from that root (or from here, when only here has it);
    2. else the library a PATH names, when it exists from here (`memo search ~/notes/work q`);
    3. else the library the current folder lies in (`cd ~/notes/work && memo status`);
    4. else MEMO_ROOT, else ~/notes/memo.

    "The library a path lies in" is the nearest declared root at or above it (roots.py): a
    folder is never taken for a library because collections lie below or above it. A command
    that reads raises NotALibraryError (naming `memo init`) where no declared library is found;
    one that `declaring` (index, new, registry rebuild) gets the folder it named, or MEMO_ROOT,
    to declare. An absolute PATH that does not exist is an error that names it.
    """
    here = cwd or Path.cwd()
    given = Path(path).expanduser() if path and path != "*" else None
    if given is not None and given.is_absolute() and not given.exists():
        raise NotFoundError(
            f"{path} does not exist",
            "Give a note, a collection or a folder of your library, or '*' for all of it.",
        )
    if root:
        return _given_root(root, path, given, here, settings, declaring)
    if given is not None and (here / given).exists():
        full = (here / given).resolve()
        named = declared_root(full, settings)
        if named is not None:
            return named, str(full)
        if declaring and full.is_dir():
            return full, None
        if path not in WHOLE:  # from inside a library: outside it (not `memo init /etc`)
            raise not_a_library(full, path, declared_root(here, settings), here / given)
        # '.' where no library is: the whole library the next rules find
    inside = declared_root(here, settings)
    if inside is not None:
        return inside, path
    return _default_root(path, here, settings, declaring), path


def _given_root(
    root: str, path: str | None, given: Path | None, here: Path, settings: Settings, declaring: bool
) -> tuple[Path, str | None]:
    """Rule 1: `--root`, and PATH read from it (or from here, when only here has it)."""
    lib_root = Path(os.path.abspath(Path(root).expanduser()))
    if given is not None and not given.is_absolute() and (here / given).exists():
        if not (lib_root / given).exists():
            path = str((here / given).resolve())
    if not declaring:
        _check_declared(lib_root, settings, "--root")
    return lib_root, path


def _default_root(path: str | None, here: Path, settings: Settings, declaring: bool) -> Path:
    """Rule 4: MEMO_ROOT, else ~/notes/memo; a read command needs it declared."""
    lib_root = Path(os.path.abspath(settings.library_root))
    if declaring:
        return lib_root
    try:
        _check_declared(lib_root, settings, "MEMO_ROOT" if settings.root else "the default root")
    except MemoError:
        if path == "." and not settings.root:
            # `cd plain && memo search . q`: '.' named this folder, not ~/notes/memo
            err = not_a_library(here, path)
            raise NotALibraryError(
                f"{err}, and neither is the default root {lib_root}", err.hint
            ) from None
        raise
    return lib_root


def _check_declared(lib_root: Path, settings: Settings, named_by: str) -> None:
    """A root a read command was told to use must be a declared library."""
    if not lib_root.is_dir():
        raise LibraryNotFoundError(
            f"library root {lib_root} is not a folder",
            "Run `memo init FOLDER` on the folder that holds your notes, pass --root, or set "
            "MEMO_ROOT to a library.",
        )
    if is_declared(lib_root, settings):
        return
    above = declared_root(lib_root.parent, settings)
    if above is None:
        raise not_a_library(lib_root, f"{lib_root} ({named_by})")
    raise NotALibraryError(
        f"{lib_root} ({named_by}) is not a library's root: it lies in the library {above}",
        f"Use --root {shlex.quote(str(above))} (a path inside it narrows the search), or "
        f"`memo init {shlex.quote(str(lib_root))}` to make this folder a library of its own.",
    )


def root_folder(root_arg: str | None, root: str | None) -> Path:
    """The root a server or watcher serves: ROOT, else --root, the library the current folder
    lies in, MEMO_ROOT, or the default (`find_root`); a declared library, or the error says
    how to make one."""
    settings = Settings.from_env()
    try:
        if root_arg:  # named as the root: taken as it is
            lib_root = Path(os.path.abspath(Path(root_arg).expanduser()))
            _check_declared(lib_root, settings, "ROOT")
        else:
            lib_root, _ = find_root(None, root, settings)
    except MemoError as e:
        fail(e)
    return lib_root
