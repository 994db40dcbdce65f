"""Which note a link opens: Obsidian's resolution, over every collection of a library.

Each index keeps its notes' links as written (collection/links.py); they are resolved here, at
read time, against the notes of every collection, so a note added anywhere resolves the links
written before it without touching the notes that hold them. Names compare as Obsidian compares
them (case-insensitively, NFC, `.md` optional); `./x` is relative to the linking note; otherwise
the exact path from the vault's root, then a note whose path ends with the target in the linking
note's folder, then the shortest such path (ties: most folders shared, then alphabetical), the
linking note's vault (or collection) first. Unlike Obsidian, memo resolves an alias when nothing
else matches, and says so (`by: alias`). The rules in full: docs/design.md, "library/linkgraph.py".
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..collection.collection import Collection
from ..collection.links import Names, fold, name_of, stem

VAULT_MARK = ".obsidian"


@dataclass(frozen=True, slots=True)
class Target:
    """Where a link goes: a note (library-relative), and how it was found."""

    path: str
    by: str  # path: the exact path; name: its name; relative: ./ or ../; alias; self: [[#H]]


def _folder(path: str) -> str:
    return posixpath.dirname(path)


def _shared(a: str, b: str) -> int:
    """How many leading folders two paths share."""
    n = 0
    for x, y in zip(_folder(a).split("/"), _folder(b).split("/"), strict=False):
        if x != y or not x:
            break
        n += 1
    return n


class Resolver:
    """Every note of a library by path, name and alias, resolving links as Obsidian does.

    `notes`: library-relative note paths (`en/Folder/Note.md`); `aliases`: (note, alias);
    `vault_of`: a note's vault folder ('' for the library root); `side_of`: the part of the
    library whose notes its links open first (its vault, else its collection)."""

    def __init__(
        self,
        notes: Iterable[str],
        aliases: Iterable[tuple[str, str]],
        vault_of: Callable[[str], str] = lambda _: "",
        side_of: Callable[[str], str] = lambda _: "",
    ) -> None:
        self.vault_of = vault_of
        self.side_of = side_of
        self.exact: dict[str, str] = {}  # folded path without .md -> note
        self.named: dict[str, list[tuple[str, str]]] = {}  # folded name -> (note, folded stem)
        self.alias: dict[str, list[str]] = {}  # folded alias -> notes
        self.aliases: dict[str, list[str]] = {}  # note -> its aliases
        for p in notes:
            key = fold(stem(p))
            self.exact.setdefault(key, p)
            self.named.setdefault(name_of(p), []).append((p, key))
        for p, a in aliases:
            self.alias.setdefault(fold(a.strip().removesuffix(".md")), []).append(p)
            self.aliases.setdefault(p, []).append(a)

    def __contains__(self, note: str) -> bool:
        return fold(stem(note)) in self.exact

    def resolve(self, target: str, source: str) -> Target | None:
        """The note a link to `target` written in note `source` opens; None: unresolved."""
        t = stem(target).replace("\\", "/").strip()
        if t.startswith(("./", "../")):
            joined = posixpath.normpath(posixpath.join(_folder(source), t))
            found = None if joined.startswith("../") else self.exact.get(fold(joined))
            return Target(found, "relative") if found else None
        t = t.strip("/")
        if not t:  # `[[#Heading]]`: a heading of the linking note itself
            return Target(source, "self")
        vault = self.vault_of(source)
        found = self.exact.get(fold(posixpath.join(vault, t) if vault else t))
        if found is not None:
            return Target(found, "path")
        want = fold(t)
        tail = "/" + want
        named = self.named.get(name_of(t), ())
        cands = [p for p, key in named if key == want or key.endswith(tail)]
        if cands:
            return Target(self._pick(cands, source), "name")
        cands = self.alias.get(want, [])
        return Target(self._pick(cands, source), "alias") if cands else None

    def _pick(self, cands: list[str], source: str) -> str:
        """Obsidian's choice among notes a target could name: the linking note's vault (or
        collection), its own folder, the shortest path; then the most folders shared with it,
        alphabetical."""
        side = self.side_of(source)
        inside = [c for c in cands if self.side_of(c) == side] or cands
        here = [c for c in inside if _folder(c) == _folder(source)]
        return min(here or inside, key=lambda c: (len(c), -_shared(c, source), c))

    def names(self, note: str) -> set[str]:
        """What a link to `note` may have as its `name` (collection/links.py): its file name
        and the last segment of each of its aliases."""
        return {name_of(note), *(name_of(a) for a in self.aliases.get(note, ()))}


# ---------------------------------------------------------------------- kept while valid
Made = tuple[tuple[tuple[str, Names], ...], frozenset[str]]


def _same(a: Made, b: Made) -> bool:
    """The same collections' names, each the very object its index handed (collection.py
    `link_names`: a new one only when the index changed), and the same vault marks."""
    return (
        a[1] == b[1]
        and len(a[0]) == len(b[0])
        and all(x[0] == y[0] and x[1] is y[1] for x, y in zip(a[0], b[0], strict=True))
    )


@dataclass(slots=True)
class LinkGraph:
    """One library's resolver, made again only when one of its indexes changed (each
    collection reads its notes and aliases again only when its own index did) or a folder
    of its notes gained or lost its `.obsidian/` (one stat per folder and call)."""

    root: Path
    _made: tuple[Made, Resolver] | None = None
    _vaults: dict[str, str | None] = field(default_factory=dict)  # folder -> its marked vault
    _colls: set[str] = field(default_factory=set)  # the collections' folders
    _folders: set[str] = field(default_factory=set)  # every folder holding notes, and above

    def resolver(self, colls: list[Collection]) -> tuple[Resolver, list[str]]:
        """The resolver over these collections' notes, and the warnings of reading them."""
        keys: list[tuple[str, Names]] = []
        warnings: list[str] = []
        for c in colls:
            names, said = c.link_names()
            keys.append((c.rel, names))
            if said:
                warnings.append(said)
        marks = frozenset(f for f in self._folders if (self.root / f / VAULT_MARK).is_dir())
        if self._made is not None and _same(self._made[0], (tuple(keys), marks)):
            return self._made[1], warnings
        notes_all: list[str] = []
        aliases_all: list[tuple[str, str]] = []
        for c, (_, names) in zip(colls, keys, strict=True):
            notes_all += [c.root_path(p) for p in names.notes]
            aliases_all += [(c.root_path(p), a) for p, a in names.aliases]
        self._vaults.clear()
        self._colls = {c.rel for c in colls}
        self._folders = {""}
        for p in notes_all:
            at = _folder(p)
            while at not in self._folders:
                self._folders.add(at)
                at = _folder(at)
        marks = frozenset(f for f in self._folders if (self.root / f / VAULT_MARK).is_dir())
        made = Resolver(notes_all, aliases_all, self._vault_of, self._side_of)
        self._made = ((tuple(keys), marks), made)
        return made, warnings

    def _marked(self, note: str) -> str | None:
        """The folder (library-relative, '' for the root) of the nearest `.obsidian/` above
        a note, up to the library root; None when there is none."""
        folder = _folder(note)
        if folder not in self._vaults:
            at: str | None = folder
            while at is not None and not (self.root / at / VAULT_MARK).is_dir():
                at = _folder(at) if at else None
            self._vaults[folder] = at
        return self._vaults[folder]

    def _vault_of(self, note: str) -> str:
        return self._marked(note) or ""

    def _side_of(self, note: str) -> str:
        """Its vault when one is marked, else its collection's folder."""
        marked = self._marked(note)
        if marked is not None:
            return marked
        at = _folder(note)
        while at and at not in self._colls:
            at = _folder(at)
        return at or "."
