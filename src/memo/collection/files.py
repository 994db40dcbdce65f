"""Which folders are collections and which files are their notes.

A collection is a folder holding `_meta.yaml`. Its notes are the `.md` files below it, except:
hidden files and folders (`.memo/`, `.git/`, `.obsidian/`…), `inbox.md` (drafts), anything inside
a nested collection (that one owns its files), and symlinks that lead out of the library root or
to folders (loops).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .meta import META_FILE

NOT_INDEXED = frozenset({"inbox.md"})


@dataclass(frozen=True, slots=True)
class FileStat:
    mtime_ns: int
    size: int


def _skip_name(name: str) -> bool:
    return name.startswith((".", "~"))


def _entries(folder: Path | str) -> list[os.DirEntry[str]]:
    """A folder's entries; [] when it vanished or cannot be read (a walk goes on without it)."""
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return []


def find_collections(top: Path) -> list[Path]:
    """Every collection folder at or below `top`, sorted; symlinked folders are not followed."""
    found: list[Path] = []
    stack = [top]
    while stack:
        folder = stack.pop()
        for e in _entries(folder):
            if e.name == META_FILE and e.is_file():
                found.append(folder)
            elif e.is_dir(follow_symlinks=False) and not _skip_name(e.name):
                stack.append(Path(e.path))
    return sorted(found)


def is_note_name(name: str) -> bool:
    return name.lower().endswith(".md") and not _skip_name(name) and name.lower() not in NOT_INDEXED


def note_files(folder: Path, root: Path, prefix: str = "") -> dict[str, FileStat]:
    """Notes owned by the collection at `folder`: path relative to it (posix) -> stat.

    `prefix` limits the walk to one sub-folder or one note (relative, posix).
    """
    out: dict[str, FileStat] = {}
    root_real = os.path.realpath(root)
    start = folder / prefix if prefix else folder
    if prefix and not start.is_dir():  # one note
        rel = prefix.strip("/")
        try:
            st = start.stat()
        except OSError:
            return out
        if start.is_file() and is_note_name(start.name):
            out[rel] = FileStat(st.st_mtime_ns, st.st_size)
        return out
    stack: list[tuple[Path, str]] = [(start, prefix.strip("/"))]
    while stack:
        d, rel = stack.pop()
        for e in _entries(d):
            if _skip_name(e.name):
                continue
            relpath = f"{rel}/{e.name}" if rel else e.name
            try:
                if e.is_dir(follow_symlinks=False):
                    if not os.path.exists(os.path.join(e.path, META_FILE)):
                        stack.append((Path(e.path), relpath))
                    continue
                if not is_note_name(e.name):
                    continue
                if e.is_symlink():
                    target = os.path.realpath(e.path)
                    if not target.startswith(root_real + os.sep) or not os.path.isfile(target):
                        continue
                st = e.stat()
            except OSError:
                continue  # vanished or unreadable between listing and stat
            out[relpath] = FileStat(st.st_mtime_ns, st.st_size)
    return out
