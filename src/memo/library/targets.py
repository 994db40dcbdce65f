"""What a path names: confined to the library root, then resolved to the collections it covers.

A target is a note, a folder inside a collection (a prefix filter), a collection, or any folder
above collections (every collection below it, nested ones included); `.`, `*` and '' are the
whole library. Every path is resolved (symlinks included) and must stay inside the root.
"""

from __future__ import annotations

import os
import re
import shlex
import unicodedata
from pathlib import Path

from ..collection.collection import Collection
from ..collection.excluded import for_collection, is_rule_file
from ..collection.files import is_note_name
from ..collection.meta import META_FILE
from ..collection.summary import MIXED
from ..errors import (
    ConflictError,
    MemoError,
    NotFoundError,
    OutsideLibraryError,
    TargetError,
)
from ..printable import readings
from ..roots import WHOLE
from ..search.legs import Scope
from .collections import Collections


def file_kind(parts: list[str]) -> str | None:
    """What a file is to a library, by its path's parts below the root: "rules" (a file that
    rules are read from: excluded.py), "meta" (a collection's `_meta.yaml`), "note", or None."""
    if is_rule_file(parts):
        return "rules"
    if parts and parts[-1] == META_FILE:
        return "meta"
    if parts and is_note_name(parts[-1]):
        return "note"
    return None


def confine(root: Path, target: str | os.PathLike[str] | None) -> Path:
    """A user's path -> an absolute path inside the root (keeping the root's spelling), or
    TargetError."""
    if target is None or str(target) in WHOLE:
        return root
    raw = str(target)
    if "\x00" in raw:
        raise TargetError("path contains a NUL byte")
    raw = _spelled(root, raw)  # `a\nb.md` as memo prints a name holding a newline: that name
    if "\\" in raw or re.match(r"^[A-Za-z]:([\\/]|$)", raw):
        raise TargetError(
            f"{raw} looks like a Windows path",
            "Use forward slashes and a path relative to the library root, e.g. work/jira.",
        )
    full = _full(root, raw)
    try:
        if not full.exists():  # typed in NFC, written by macOS in NFD (or the other way round)
            full = _same_text(full)
        real = Path(os.path.realpath(full))
        root_real = Path(os.path.realpath(root))
        if real != root_real and root_real not in real.parents:
            raise OutsideLibraryError(f"{raw} is outside the library root {root}")
        if not real.exists():
            raise NotFoundError(f"{raw} does not exist under {root}")
    except OSError as e:  # a name longer than the file system takes (ENAMETOOLONG), a loop…
        shown = raw if len(raw) <= 80 else f"{raw[:80]}… ({len(raw)} characters)"
        raise NotFoundError(f"{shown} cannot name a file here: {e.strerror or e}") from None
    # Keep the root's spelling (not the resolved one) so relative paths stay readable.
    return root / real.relative_to(root_real)


def _full(root: Path, text: str) -> Path:
    """A path as typed, absolute: `~` expanded, a relative one read from the root."""
    try:
        p = Path(text).expanduser()
    except RuntimeError:  # `~name` where no user has that name: a file name like any other
        p = Path(text)
    return p if p.is_absolute() else root / p


def _spelled(root: Path, raw: str) -> str:
    """The first of the forms memo prints a path in (printable.readings: as given, without a
    shell's quotes, without `shown`'s escapes) that names something here; `raw` when none
    does."""
    for text in readings(raw):
        try:
            full = _full(root, text)
            if full.exists() or _same_text(full).exists():
                return text
        except (OSError, ValueError):  # too long a name; a character no file name holds
            continue
    return raw


def _same_text(path: Path) -> Path:
    """`path` with each missing component replaced by the entry of its folder that reads the
    same once both are NFC-normalised; `path` itself when there is none."""
    parts = path.parts
    here = Path(parts[0])
    for i, part in enumerate(parts[1:], start=1):
        nxt = here / part
        if not nxt.exists():
            want = unicodedata.normalize("NFC", part)
            try:
                names = os.listdir(here)
            except OSError:
                return path
            found = next((n for n in names if unicodedata.normalize("NFC", n) == want), None)
            if found is None:
                return path
            nxt = here / found
        here = nxt
        if i == len(parts) - 1:
            return here
    return here


def label(root: Path, path: Path) -> str:
    """A path inside the root as results show it: relative, posix, '.' for the root."""
    return "." if path == root else str(path.relative_to(root)).replace(os.sep, "/")


def resolve(colls: Collections, target: str | os.PathLike[str] | None) -> Scope:
    """The collections (and sub-paths) a target covers; TargetError when there is none."""
    root = colls.root
    path = confine(root, target)
    shown = label(root, path)
    owner = _owner(colls, path)
    if path.is_file():
        if owner is None:
            raise NotFoundError(f"{shown} is not inside a collection (no _meta.yaml above it)")
        return _scope(colls, shown, [(owner, _rel(path, owner.folder))])
    parts: list[tuple[Collection, str]] = []
    if owner is not None and owner.folder != path:
        parts.append((owner, _rel(path, owner.folder)))
    parts.extend((c, "") for c in colls.under(path))
    if not parts:
        rule = for_collection(root, root).within(shown) if shown != "." else None
        if rule is not None:
            raise OutsideLibraryError(
                f"{shown} is left out of the library on purpose: {rule.why}",
                "Nothing there is indexed or searched while that rule stands; remove it to "
                "bring the folder back.",
            )
        broken = [f"{e.path}/{META_FILE}: {e.error}" for e in colls.entries_under(path) if e.error]
        raise no_collection(path, shown, "; ".join(broken))
    return _scope(colls, shown, parts)


def _scope(colls: Collections, shown: str, parts: list[tuple[Collection, str]]) -> Scope:
    """A scope, with the languages the registry says its collections are written in."""
    return Scope(shown, parts, languages(colls, [c for c, _ in parts]))


def languages(colls: Collections, searched: list[Collection]) -> tuple[str, ...]:
    """The languages of these collections' notes, by the registry's shares, most first."""
    reg = colls.scanned()
    per: dict[str, float] = {}
    for c in searched:
        e = reg.entry(c.rel)
        if e is None:
            continue
        for lang, share in e.language_shares().items():
            per[lang] = per.get(lang, 0.0) + share * (e.chunks or 1)
    return tuple(lang for lang, _ in sorted(per.items(), key=lambda x: -x[1]) if lang != MIXED)


def no_collection(path: Path, shown: str | Path, why: str = "") -> NotFoundError:
    """A folder of notes without a collection: the error names the command that makes some."""
    arg = shlex.quote(str(path))
    return NotFoundError(
        f"no collection at or below {shown}{f' ({why})' if why else ''}",
        f"A collection is a folder with a _meta.yaml: `memo init {arg}` proposes them from the "
        "folders you have, `memo new FOLDER -d DESCRIPTION` adds one.",
    )


def _owner(colls: Collections, path: Path) -> Collection | None:
    """The collection holding `path` (its nearest `_meta.yaml` at or above it)."""
    folder = colls.owner(path)
    if folder is None:
        return None
    try:
        return colls.at(folder)
    except MemoError as e:
        meta = folder / META_FILE
        why = str(e) if str(meta) in str(e) else f"{meta}: {e}"
        raise ConflictError(
            f"the collection {folder.name!r} cannot be read: its {META_FILE} is broken: {why}",
            f"Fix {meta}: YAML with at least `description: ...` (`memo status` lists every "
            f"broken {META_FILE}); the path is right, the collection's description is not.",
        ) from e


def _rel(path: Path, folder: Path) -> str:
    return os.path.relpath(path, folder).replace(os.sep, "/")
