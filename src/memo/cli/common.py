"""What every `memo` command shares: its options, how it finds the library, how it fails.

stdout carries results only (JSON with --json); progress, warnings and errors go to stderr.
Nothing heavy is imported at module level: `memo --version` loads click and little else.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ..caches import registry_dir
from ..config import Settings
from ..errors import MemoError, TargetError

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
    root: str | None, target: str | None, purpose: str = "query"
) -> tuple[Library, str | None]:
    """The library for this call, and the target as the library should read it. `purpose`
    picks the model's engine (embed.PURPOSES): a one-shot query loads the fast-starting one."""
    settings = Settings.from_env()
    lib_root, target = find_root(target, root, settings)
    return library_at(lib_root, settings, purpose), target


def library_at(lib_root: Path, settings: Settings, purpose: str = "query") -> Library:
    """The library at a root found already (`find_root`), with the engine `purpose` needs."""
    import logging

    from ..collection.pool import raise_open_files_limit
    from ..embed import embedder_for
    from ..library import Library

    # The report printed by the command already says what the index log would: one stderr.
    logging.getLogger("memo.index").addHandler(logging.NullHandler())
    raise_open_files_limit()
    return Library(lib_root, embedder_for(settings, purpose), settings)


MARKERS = ("_registry.yaml", ".memo/registry.db")  # what memo leaves at a library's root


def find_root(
    path: str | None, root: str | None, settings: Settings, cwd: Path | None = None
) -> tuple[Path, str | None]:
    """Which library a command works on, and its PATH as that library reads it.

    One rule for every command (README, "Which library"):

    1. `--root` when given: PATH is read from that root (or from here, when only here has it);
    2. else the library a PATH names, when it exists from here (`memo search ~/notes/work q`);
    3. else the library the current folder lies in (`cd ~/notes/work && memo status`);
    4. else MEMO_ROOT, else ~/notes/memo.

    A library's root is the nearest folder at or above a path holding memo's registry, else
    the folder above the outermost collection, else the folder itself when collections lie
    below it; a folder with none of these is no library (`memo search / q` never indexes the
    disk). An absolute PATH that does not exist is an error that names it.
    """
    here = cwd or Path.cwd()
    given = Path(path).expanduser() if path and path != "*" else None
    if given is not None and given.is_absolute() and not given.exists():
        raise TargetError(
            f"{path} does not exist",
            "Give a note, a collection or a folder of your library, or '*' for all of it.",
        )
    if root:
        lib_root = Path(os.path.abspath(Path(root).expanduser()))
        if given is not None and not given.is_absolute() and (here / given).exists():
            if not (lib_root / given).exists():
                return lib_root, str((here / given).resolve())
        return lib_root, path
    if given is not None and (here / given).exists():
        full = (here / given).resolve()
        named = library_around(full, settings)
        if named is not None:
            return named, str(full)
    inside = library_around(here, settings)
    if inside is not None:
        return inside, path
    return Path(os.path.abspath(settings.library_root)), path


def _marked(folder: Path, settings: Settings) -> bool:
    """memo's registry for `folder` exists: beside it, or where MEMO_INDEX_DIR or the user
    cache keeps it for a library whose folder cannot hold it."""
    if any((folder / m).exists() for m in MARKERS):
        return True
    return (registry_dir(folder, settings) / "registry.db").is_file()


def library_of(path: Path, settings: Settings) -> Path:
    """The root of the library `path` lies in (see `find_root`)."""
    start = path if path.is_dir() else path.parent
    chain = [start, *start.parents]
    for folder in chain:
        if _marked(folder, settings):
            return folder
    collections = [f for f in chain if (f / "_meta.yaml").is_file()]
    return collections[-1].parent if collections else start


def library_around(path: Path, settings: Settings) -> Path | None:
    """The library a path lies in: one marked by memo's registry, one that holds the path in
    a collection, or the folder itself when collections lie below it; None for no library."""
    folder = path if path.is_dir() else path.parent
    for f in (folder, *folder.parents):
        if _marked(f, settings) or (f / "_meta.yaml").is_file():
            return library_of(folder, settings)
    if _collections_below(folder):
        return folder
    return None


def _collections_below(folder: Path, look: int = 200) -> bool:
    """A collection one or two levels down (where a root keeps them), looking at no more than
    `look` folders: the CLI must not crawl a home folder to learn it is not a library."""
    todo, seen = [(folder, 2)], 0
    while todo and seen < look:
        here, depth = todo.pop()
        try:
            subs = [e for e in os.scandir(here) if e.is_dir() and not e.name.startswith(".")]
        except OSError:
            continue
        seen += len(subs)
        if any(os.path.isfile(os.path.join(e.path, "_meta.yaml")) for e in subs):
            return True
        if depth > 1:
            todo += [(Path(e.path), depth - 1) for e in subs]
    return False


def root_folder(root_arg: str | None, root: str | None) -> Path:
    """The root a server or watcher serves: ROOT, else --root, the library the current folder
    lies in, MEMO_ROOT, or the default (`find_root`)."""
    if root_arg:  # named as the root: taken as it is
        lib_root = Path(root_arg).expanduser()
    else:
        lib_root, _ = find_root(None, root, Settings.from_env())
    if not lib_root.is_dir():
        fail(
            MemoError(
                f"library root {lib_root} is not a folder",
                "Pass ROOT or --root, or set MEMO_ROOT, to the folder that holds your collections.",
            )
        )
    return lib_root
