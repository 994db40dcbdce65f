"""The commands that write memo's caches (never a note): `index`, `registry rebuild`, and `new`
(which writes a `_meta.yaml`, the only file memo writes among the notes, and only when asked;
its caches beside them are `.memo/`, `_library.yaml` and `_registry.yaml`); and `skill`,
printed from the registry."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

import click

from ..config import Settings
from ..errors import MemoError
from ..requests import IndexRequest
from ..roots import declare, declared_root, not_a_library
from . import text
from .common import emit, fail, find_root, json_option, open_library, root_option
from .options import request_options
from .progress import Background, IndexProgress


@click.command(IndexRequest.OPERATION.command)
@request_options(IndexRequest)
@root_option
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
@json_option
def index(path: str | None, root: str | None, full: bool, quiet: bool, as_json: bool) -> None:
    """Index the collections at or below PATH (default: the whole library)."""
    progress = Background() if quiet else IndexProgress(sys.stderr)
    stopped_by = _stop_on_sigterm()
    try:
        IndexRequest.make(path, full)  # the bounds, checked before any work
        lib, target = open_library(root, path, purpose="index", declaring=True)
        report = lib.index(target, full=full, progress=progress)
    except MemoError as e:
        fail(e)
    except KeyboardInterrupt:
        if isinstance(progress, IndexProgress):
            progress.close()
        done = f" ({progress.files} notes written)" if isinstance(progress, IndexProgress) else ""
        cached = (
            ", and every chunk embedded is in the embedding cache"
            if Settings.from_env().embed_cache_mb > 0
            else ""
        )
        click.echo(
            f"interrupted{done}: every note written so far is kept{cached}; `memo index` "
            "goes on from there",
            err=True,
        )
        # Leave at once: each file's rows and each cached vector are committed or rolled back
        # already, and tearing down a model runtime can take seconds (Ctrl-C must stop memo
        # within one).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(143 if stopped_by else 130)
    if isinstance(progress, IndexProgress):
        progress.close()
    out = report.to_dict()
    emit(out) if as_json else text.index(out)
    if report.errors:  # a broken _meta.yaml or a collection that failed: the rest is indexed
        sys.exit(1)


def _stop_on_sigterm() -> list[int]:
    """SIGTERM (systemd, `kill`, a container stopping) ends `memo index` as Ctrl-C does: what
    was written and embedded is kept and the process says so. Returns a list that holds the
    signal once it came."""
    came: list[int] = []

    def stop(signum: int, frame: object) -> None:
        came.append(signum)
        raise KeyboardInterrupt

    with contextlib.suppress(ValueError):  # not the main thread (a test runner): leave it
        signal.signal(signal.SIGTERM, stop)
    return came


@click.group()
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
        lib, _ = open_library(root_arg or root, None, purpose="index", declaring=True)
        show = sys.stderr.isatty() and not as_json

        def progress(what: str, done: int, total: int) -> None:
            if show:
                click.echo(f"\r{what}: {done}/{total}", nl=done >= total, err=True)

        rep = lib.rebuild_registry(embed=not no_vectors, progress=progress)
    except MemoError as e:
        fail(e)
    if as_json:
        emit({**rep.to_dict(), "registry": str(lib.registry.yaml_path)})
        return
    for err in rep.errors:
        click.echo(f"error: {err}", err=True)
    click.echo(
        f"{rep.collections} collections: {len(rep.added)} added, {len(rep.changed)} changed, "
        f"{len(rep.removed)} removed; {rep.embedded} descriptions embedded"
        f"{f', {rep.not_embedded} left' if rep.not_embedded else ''} in {rep.seconds:.1f} s"
        f" -> {lib.registry.yaml_path}"
    )


@click.command()
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
    from ..library import create_collection
    from ..library.naming import read as read_naming

    try:
        settings = Settings.from_env()
        given = Path(path).expanduser()
        if not root and given.is_dir():  # a folder you have: its library, whatever its name
            full = Path(os.path.abspath(given))
            lib_root = declared_root(full.parent, settings) or _no_library(full)
            rel = os.path.relpath(full, lib_root)
        else:
            lib_root, _ = find_root(None, root, settings, declaring=True)
            if not lib_root.is_dir():
                raise MemoError(
                    f"library root {lib_root} is not a folder",
                    "Pass --root or set MEMO_ROOT to the folder that holds your collections.",
                )
            rel = path
            if given.is_absolute():
                rel = os.path.relpath(os.path.abspath(given), os.path.abspath(lib_root))
        naming = read_naming(lib_root)  # an adopted vault's own names: "Home Lab", "Заметки"
        folder = create_collection(
            lib_root,
            rel,
            description,
            [t for t in tags.split(",") if t.strip()],
            name,
            allows=naming.allows,
            hint=naming.hint(),
        )
        declare(lib_root, settings)
    except MemoError as e:
        fail(e)
    meta = folder / "_meta.yaml"
    if as_json:
        emit({"path": os.path.relpath(folder, lib_root), "meta": str(meta)})
    else:
        click.echo(f"created {meta}")


def _no_library(folder: Path) -> Path:
    raise not_a_library(folder)


@click.command()
@root_option
@click.option("--hermes", is_flag=True, help="With the frontmatter of a Hermes Agent skill file.")
@click.option(
    "--server",
    default="memo",
    show_default=True,
    help="The name of memo's entry in the host's MCP config (Hermes names tools after it).",
)
def skill(root: str | None, hermes: bool, server: str) -> None:
    """Print a ready-to-paste skill for agents: topic → collection map and how to use memo."""
    from ..skill import skill_text

    try:
        lib, _ = open_library(root, None)
        click.echo(skill_text(lib, hermes=hermes, server=server))
    except MemoError as e:
        fail(e)


@click.command()
@click.argument("path", required=False)
@click.option(
    "--yes", "-y", is_flag=True, help="Write the plan (without it: a dry run, or a question)."
)
@click.option("--index", "then_index", is_flag=True, help="Index the library right after.")
@json_option
def init(path: str | None, yes: bool, then_index: bool, as_json: bool) -> None:
    """Make the folder PATH (default: here) a library: propose its folders as collections.

    Prints the plan: each folder of notes, its note count and a one-line description drafted
    from its notes. --yes writes it (only `_meta.yaml` files, marked drafted, and the root's
    marker; never a note, never over an existing file); on a terminal without --yes memo asks,
    elsewhere it is a dry run. A second init writes nothing.
    """
    from ..library.adopt import plan

    settings = Settings.from_env()
    folder = Path(os.path.abspath(Path(path or ".").expanduser()))
    try:
        if not folder.is_dir():
            raise MemoError(f"{folder} is not a folder", "Give the folder that holds your notes.")
        root = declared_root(folder, settings) or folder
        the_plan = plan(root, settings)
        if not the_plan.proposals:
            raise MemoError(
                f"no notes (.md files) at or below {root}",
                "memo indexes markdown notes: give the folder that holds them.",
            )
    except MemoError as e:
        fail(e)
    if not as_json:
        text.init_plan(the_plan.to_dict())
    asked = False
    if not yes and not the_plan.nothing_to_do and sys.stdin.isatty() and not as_json:
        yes = asked = click.confirm("Write these files?", default=False, err=True)
    if yes:
        the_plan.write(settings)
    if as_json:
        emit(the_plan.to_dict())
    else:
        text.init_done(the_plan.to_dict(), wrote=yes, asked=asked, indexing=then_index)
    if then_index and (yes or the_plan.nothing_to_do):
        ctx = click.get_current_context()
        ctx.invoke(index, path=str(root), root=None, full=False, quiet=as_json, as_json=as_json)
