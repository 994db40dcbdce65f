"""Which folder is a library: declared by its user, found by walking up, never guessed.

A library's root is a folder where `memo init`, `memo index PATH` or `memo new` wrote its marker,
`_library.yaml` (or `library.yaml` beside the registry, when nothing may be written beside the
notes), or where an older memo's registry lies. Commands walk up to the nearest declared root;
nothing is inferred from `_meta.yaml` files above or below a path, and a read never declares: a
path outside every library is a NotALibraryError that names `memo init` (docs/design.md).
Standard library only: the CLI finds its root before it decides whether to load anything heavy.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from .caches import HIDDEN, registry_dir
from .config import Settings
from .errors import LibraryNotFoundError, OutsideLibraryError

WHOLE = ("", ".", "*")  # the whole library, as a target
MARKER = "_library.yaml"  # the declaration beside the notes
CACHED_MARKER = "library.yaml"  # the same, beside the registry when the notes stay untouched
LEGACY = ("_registry.yaml", f"{HIDDEN}/registry.db")  # registries count as declarations

MARKER_TEXT = """\
# This folder is a memo library (written by `memo init` or `memo index`). memo works only
# inside declared libraries: a command run at or below this folder uses it as its root.
# Keep it with your notes; delete it to make the folder plain notes again.
memo: 1
"""


class NotALibraryError(LibraryNotFoundError):
    """A path lies in no declared library (the hint names the command that declares one)."""


def is_declared(folder: Path, settings: Settings) -> bool:
    """`folder` is a library's root: its marker or memo's registry is there (or, for a folder
    memo keeps apart from the notes, in the index folder)."""
    if (folder / MARKER).is_file() or any((folder / m).exists() for m in LEGACY):
        return True
    kept = registry_dir(folder, settings)
    return (kept / CACHED_MARKER).is_file() or (kept / "registry.db").is_file()


def declared_root(path: Path, settings: Settings) -> Path | None:
    """The nearest declared root at or above `path` (a file or folder), else None."""
    start = Path(os.path.abspath(path))
    folder = start if start.is_dir() else start.parent
    for f in (folder, *folder.parents):
        if is_declared(f, settings):
            return f
    return None


def libraries_between(root: Path, folders: list[Path], settings: Settings) -> list[Path]:
    """The declared libraries strictly below `root` that hold any of these folders (each
    collection's folder and the folders between it and the root are asked), sorted."""
    seen: set[Path] = set()
    found: set[Path] = set()
    for folder in folders:
        for f in (folder, *folder.parents):
            if f == root or root not in f.parents or f in seen:
                break
            seen.add(f)
            if is_declared(f, settings):
                found.add(f)
    return sorted(found)


def marker_path(root: Path, settings: Settings) -> Path:
    """Where `declare` writes the marker: beside the notes, unless MEMO_INDEX_DIR is set or the
    root cannot be written (then beside the library's registry)."""
    if settings.index_dir is None and os.access(root, os.W_OK):
        return root / MARKER
    return registry_dir(root, settings) / CACHED_MARKER


def declare(root: Path, settings: Settings) -> Path | None:
    """Make `root` a library (the marker, written atomically); None when it is one already."""
    if is_declared(root, settings):
        return None
    if not root.is_dir():
        raise LibraryNotFoundError(
            f"{root} is not a folder", "Give the folder that holds your notes."
        )
    path = marker_path(root, settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(MARKER_TEXT, encoding="utf-8")
    os.replace(tmp, path)
    return path


def not_a_library(
    path: Path, shown: str | None = None, inside: Path | None = None, named: Path | None = None
) -> NotALibraryError | OutsideLibraryError:
    """The error for a path outside every library, naming the command that declares one; or,
    named from `inside` a library (the current folder lies in it), `outside_library`."""
    if inside is not None:
        return outside_library(shown or str(path), path, inside, named or path)
    folder = path if path.is_dir() or not path.exists() else path.parent
    arg = shlex.quote(str(folder))
    return NotALibraryError(
        f"{shown or path} is not inside a memo library",
        f"Make the folder that holds your notes a library: `memo init {arg}` proposes "
        f"collections from its folders (or `memo index {arg}` when it has them already).",
    )


def outside_library(shown: str, full: Path, library: Path, named: Path) -> OutsideLibraryError:
    """The error for a path named from inside `library` (the current folder lies in it) that
    lies outside it and every other library: it names that library, as `--root` does, and not
    `memo init` of a folder like /etc or /tmp. `named` is the path as typed, made absolute;
    `full` where it leads (another place: a symlink on the way, said so)."""
    via = "" if Path(os.path.abspath(named)) == full else f" (it leads to {full})"
    return OutsideLibraryError(f"{shown}{via} is outside the library {library}")
