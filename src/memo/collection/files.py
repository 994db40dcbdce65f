"""Which folders are collections and which files are their notes.

A collection is a folder holding `_meta.yaml`. Its notes are the `.md` files below it, except:
hidden files and folders (`.memo/`, `.git/`, `.obsidian/`…), `inbox.md` (drafts), anything inside
a nested collection (that one owns its files), symlinks that lead out of the library root or
to folders (loops), and what the library or its vault leaves out on purpose (`excluded.py`:
`.memoignore`, Obsidian's excluded files, templates and attachments folders): `note_files` is
the one place every sync, catch-up and the watcher ask.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..printable import shown
from . import excluded as rules_of
from . import skips
from .excluded import Rule, Rules
from .meta import META_FILE
from .skips import Skip

NOT_INDEXED = frozenset({"inbox.md"})


@dataclass(frozen=True, slots=True)
class FileStat:
    mtime_ns: int
    size: int


def _skip_name(name: str) -> bool:
    return name.startswith((".", "~"))


# Folders of other tools' copies of notes, never notes of their own: Logseq keeps backups of
# every page it rewrote in logseq/bak/ and logseq/version-files/ (Obsidian's .trash/ and
# Logseq's .recycle/ are hidden already).
NOT_NOTE_FOLDERS = frozenset({("logseq", "bak"), ("logseq", "version-files")})


def skip_folder(parent: str, name: str) -> bool:
    """A folder no note is read from: hidden, or another tool's copies (NOT_NOTE_FOLDERS)."""
    return _skip_name(name) or (os.path.basename(parent), name) in NOT_NOTE_FOLDERS


def _entries(folder: Path | str) -> list[os.DirEntry[str]]:
    """A folder's entries; [] when it vanished or cannot be read (a walk goes on without it)."""
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return []


def file_identity(path: Path | str) -> tuple[int, int] | None:
    """(device, inode) of a path, None if it is gone: tells a file replaced under the same name."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def find_collections(top: Path, rules: Rules | None = None) -> list[Path]:
    """Every collection folder at or below `top`, sorted; symlinked folders are not followed.
    With `rules` (the library root's, `top` being the root), a folder they exclude is not
    entered: a collection there is left out whole, as its notes are."""
    found: list[Path] = []
    stack = [(top, "")]
    while stack:
        folder, rel = stack.pop()
        for e in _entries(folder):
            if e.name == META_FILE and e.is_file():
                found.append(folder)
            elif e.is_dir(follow_symlinks=False) and not skip_folder(str(folder), e.name):
                sub = f"{rel}/{e.name}" if rel else e.name
                if not rules or rules.folder(sub) is None:
                    stack.append((Path(e.path), sub))
    return sorted(found)


def is_note_name(name: str) -> bool:
    return name.lower().endswith(".md") and not _skip_name(name) and name.lower() not in NOT_INDEXED


Rejected = list[tuple[str, Skip]]  # (path shown on one line, why) of notes memo cannot index
Excluded = list[tuple[str, Rule]]  # (path, the rule) of notes left out on purpose


def _valid_name(relpath: str) -> bool:
    try:
        relpath.encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8 (surrogate-escaped by os.scandir)
        return False
    return True


def _in_nested_collection(folder: Path, start: Path) -> bool:
    """Whether `start` (a sub-path of `folder`) lies in a collection nested inside `folder`."""
    probe = start if start.is_dir() else start.parent
    while probe != folder and folder in probe.parents:
        if (probe / META_FILE).is_file():
            return True
        probe = probe.parent
    return False


def note_files(
    folder: Path,
    root: Path,
    prefix: str = "",
    rejected: Rejected | None = None,
    excluded: Excluded | None = None,
) -> dict[str, FileStat]:
    """Notes owned by the collection at `folder`: path relative to it (posix) -> stat.

    `prefix` limits the walk to one sub-folder or one note (relative, posix). Only regular
    files are notes: a FIFO named `x.md` would block a reader forever, a device never ends.
    Notes that look like notes but cannot be indexed (a symlink loop or one leading out of the
    root, a FIFO, a name that is not UTF-8, an unreadable folder) are appended to `rejected`.
    Notes a rule leaves out (`excluded.py`) are never stat'ed nor read; with `excluded` given
    they are appended to it (the walk then lists excluded folders' names to count them),
    without it an excluded folder is not entered at all.
    """
    prefix = prefix.strip("/")  # as stored_stats reads it: "/sub/" is "sub", not the disk's root
    start = folder / prefix if prefix else folder
    if prefix and _in_nested_collection(folder, start):
        return {}  # that collection owns these notes, not this one
    rules = rules_of.for_collection(folder, root)
    one_note = bool(prefix) and not start.is_dir()
    if rules and _left_out(rules, start, prefix, one_note, excluded):
        return {}
    if one_note:
        return _one_note(start, prefix)
    walk = _Walk(root, rules, rejected, excluded)
    walk.run(start, prefix)
    return walk.found


def _left_out(
    rules: rules_of.Rules, start: Path, rel: str, one_note: bool, excluded: Excluded | None
) -> bool:
    """Whether a rule leaves out the whole prefix asked for (a folder, or one note); its
    notes go into `excluded` when given."""
    rule = rules.note(rel) if one_note else rules.within(rel)
    if rule is None:
        return False
    if excluded is not None and not one_note:
        excluded += [(p, rule) for p in names_below(start, rel)]
    elif excluded is not None and is_note_name(start.name):
        excluded.append((rel, rule))
    return True


def _one_note(path: Path, rel: str) -> dict[str, FileStat]:
    """One note asked alone (the watcher's): its stat, when it is a note that exists."""
    try:
        st = path.stat()
    except OSError:
        return {}
    if stat.S_ISREG(st.st_mode) and is_note_name(path.name) and _valid_name(rel):
        return {rel: FileStat(st.st_mtime_ns, st.st_size)}
    return {}


class _Walk:
    """One walk of a collection's folders: the notes `found`, and those rejected or excluded."""

    def __init__(
        self,
        root: Path,
        rules: rules_of.Rules,
        rejected: Rejected | None,
        excluded: Excluded | None,
    ) -> None:
        self.root, self.rules, self.excluded = root, rules, excluded
        self.reject = rejected.append if rejected is not None else (lambda _: None)
        self.root_real = ""  # resolved at the first symlink: most trees have none
        self.found: dict[str, FileStat] = {}
        self.stack: list[tuple[Path, str]] = []

    def run(self, start: Path, rel: str) -> None:
        self.stack.append((start, rel))
        while self.stack:
            d, rel = self.stack.pop()
            try:
                with os.scandir(d) as it:
                    entries = list(it)
            except FileNotFoundError:
                continue
            except OSError as why:
                error = why.strerror or why
                self.reject((shown(rel or "."), Skip.of(skips.FOLDER_UNREADABLE, error=error)))
                continue
            for e in entries:
                if not _skip_name(e.name):
                    self._entry(d, f"{rel}/{e.name}" if rel else e.name, e)

    def _entry(self, d: Path, relpath: str, e: os.DirEntry[str]) -> None:
        """One entry of a folder: a folder to walk, a note found, or one left out and why."""
        rules = self.rules
        try:
            if e.is_dir(follow_symlinks=False):
                self._folder(d, relpath, e)
                return
            if not is_note_name(e.name):
                return
            if rules and (rule := rules.note_here(relpath)) is not None:
                if self.excluded is not None:
                    self.excluded.append((relpath, rule))
                return
            if not _valid_name(relpath):
                self.reject((shown(relpath), Skip.of(skips.BAD_NAME)))
                return
            if e.is_symlink() and (why := self._bad_link(e)) is not None:
                self.reject((shown(relpath), Skip.of(why)))
                return
            st = e.stat()
        except OSError as err:
            if not isinstance(err, FileNotFoundError):  # vanished since listing: fine
                self.reject((shown(relpath), Skip.of(skips.UNSTATABLE, error=err.strerror or err)))
            return
        if not stat.S_ISREG(st.st_mode):
            self.reject((shown(relpath), Skip.of(skips.NOT_REGULAR)))
            return
        self.found[relpath] = FileStat(st.st_mtime_ns, st.st_size)

    def _folder(self, d: Path, relpath: str, e: os.DirEntry[str]) -> None:
        """A sub-folder: walked, unless it is hidden, another collection or left out."""
        if skip_folder(str(d), e.name) or os.path.exists(os.path.join(e.path, META_FILE)):
            return
        if self.rules and (rule := self.rules.folder(relpath)) is not None:
            if self.excluded is not None:
                self.excluded += [(p, rule) for p in names_below(e.path, relpath)]
        else:
            self.stack.append((Path(e.path), relpath))

    def _bad_link(self, e: os.DirEntry[str]) -> str | None:
        """Why a symlinked note cannot be a note (broken, or out of the library), or None."""
        if not os.path.exists(e.path):
            return skips.BROKEN_LINK
        self.root_real = self.root_real or os.path.realpath(self.root)
        if not os.path.realpath(e.path).startswith(self.root_real + os.sep):
            return skips.LINK_OUTSIDE
        return None


def names_below(top: Path | str, rel: str) -> list[str]:
    """The note names below a folder a rule excludes, read as names only (never opened nor
    stat'ed): what `memo status` counts as left out. Nested collections own their notes."""
    found: list[str] = []
    stack = [(str(top), rel)]
    while stack:
        d, r = stack.pop()
        for e in _entries(d):
            path = f"{r}/{e.name}" if r else e.name
            try:
                if e.is_dir(follow_symlinks=False):
                    if not skip_folder(d, e.name) and not os.path.exists(
                        os.path.join(e.path, META_FILE)
                    ):
                        stack.append((e.path, path))
                elif is_note_name(e.name) and _valid_name(path):
                    found.append(path)
            except OSError:
                continue
    return sorted(found)
