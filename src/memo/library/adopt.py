"""`memo init`: an existing tree of notes proposed as collections, each described by its notes.

Each top-level folder holding notes is a collection (one past SPLIT_ABOVE notes is split by its
sub-folders instead and keeps its loose notes as a collection of its own); notes loose at the
top make the root a collection holding only them; folders that are collections stay as they are.
Each description is drafted from the folder's own content, in its notes' language, and marked
`drafted: true` until a person deletes the line. What the library leaves out
(collection/excluded.py) is left out of the plan, which lists each rule with the notes it leaves
out (`left_out`). A plan writes only `_meta.yaml` files (never over an existing one) and the
root's marker; never a note. How a draft is made: docs/design.md, "library/adopt.py".
"""

from __future__ import annotations

import math
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import roots
from ..collection import excluded
from ..collection.chunker import chunk_note, decode
from ..collection.files import NOT_INDEXED, is_note_name, names_below, skip_folder
from ..collection.lexical import dominant, letters, stem
from ..collection.markdown import prose
from ..collection.meta import META_FILE, write_meta
from ..collection.stopwords import ALL as STOPWORDS
from ..config import Settings

SPLIT_ABOVE = 600  # notes: a folder this big is split by its sub-folders (design: 10-300 each)
LINE = 200  # characters of a drafted description (one line)
TERMS = 6  # distinctive words added after the titles, at most
READ_BYTES = 256 * 1024  # of each note, for titles and words (the plan must stay fast)
_WORD = re.compile(r"[^\W\d_]{4,}", re.UNICODE)


@dataclass(slots=True)
class Proposal:
    """One collection of the plan."""

    path: str  # relative to the root, posix; '.' is the root (its loose notes)
    notes: int
    description: str
    kept: bool = False  # already a collection: nothing is written for it
    loose: bool = False  # only the folder's own notes (its sub-folders are collections)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "notes": self.notes,
            "description": self.description,
            "kept": self.kept,
            "loose": self.loose,
        }


@dataclass(slots=True)
class Plan:
    root: Path
    proposals: list[Proposal]
    notes: int  # every note found
    declare: bool  # the root is not a library yet: its marker will be written
    seconds: float = 0.0
    written: list[str] = field(default_factory=list)  # files written by `write`
    # every rule read (excluded.py), with the notes it leaves out: kind, source, pattern, notes
    left_out: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # rule files or entries memo cannot use

    @property
    def new(self) -> list[Proposal]:
        return [p for p in self.proposals if not p.kept]

    @property
    def nothing_to_do(self) -> bool:
        return not self.new and not self.declare

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "notes": self.notes,
            "declare": self.declare,
            "collections": [p.to_dict() for p in self.proposals],
            "nothing_to_do": self.nothing_to_do,
            "written": self.written,
            "left_out": self.left_out,
            "problems": self.problems,
            "seconds": round(self.seconds, 3),
        }

    def write(self, settings: Settings) -> list[str]:
        """Write each new collection's `_meta.yaml` (never over one written meanwhile) and the
        root's marker; returns the files written (relative to the root)."""
        for p in self.new:
            folder = self.root if p.path == "." else self.root / p.path
            try:
                write_meta(folder, p.description, drafted=True)
            except FileExistsError:
                continue  # someone made it a collection meanwhile: theirs stands
            self.written.append(f"{p.path}/{META_FILE}" if p.path != "." else META_FILE)
        if self.declare:
            marker = roots.declare(self.root, settings)
            if marker is not None:
                self.written.append(os.path.relpath(marker, self.root))
        return self.written


@dataclass(slots=True)
class _Folder:
    notes: list[str] = field(default_factory=list)  # note file names directly here
    subs: list[str] = field(default_factory=list)  # child folder names (walked ones)
    meta: bool = False  # holds a _meta.yaml


def plan(root: Path, settings: Settings) -> Plan:
    """The collections `memo init` proposes for the tree at `root` (nothing is written)."""
    t0 = time.perf_counter()
    left = _LeftOut(root)
    tree = _walk(root, left)
    proposals: list[Proposal] = []
    for rel in _top(tree):
        proposals += _propose(tree, rel)
    top = tree[""]
    if top.meta:
        proposals.insert(0, Proposal(".", _count(tree, "", own_only=True), "", kept=True))
    elif any(n.lower() not in NOT_INDEXED for n in top.notes):
        proposals.insert(0, Proposal(".", _count(tree, "", own_only=True), "", loose=True))
    _describe(root, tree, proposals)
    total = sum(len(f.notes) for f in tree.values())
    declared = roots.is_declared(root, settings)
    out = Plan(root, proposals, total, not declared, time.perf_counter() - t0)
    out.left_out, out.problems = left.listed()
    return out


@dataclass(slots=True)
class _LeftOut:
    """The rules the plan's walk follows: those of the collection each top-level folder (or
    the root, for its loose notes) would be, and the notes each rule left out."""

    root: Path
    rules: dict[str, excluded.Rules] = field(default_factory=dict)  # by top-level folder
    notes: Counter[excluded.Rule] = field(default_factory=Counter)

    def _of(self, rel: str) -> tuple[excluded.Rules, str]:
        """The rules a path (relative to the root) is judged by, and the path they read."""
        top, sep, below = rel.partition("/")
        if not sep:  # a loose note at the root
            return self.rules[""], rel
        if top not in self.rules:
            self.rules[top] = excluded.for_collection(self.root / top, self.root)
        return self.rules[top], below

    def folder(self, rel: str) -> bool:
        """Whether the folder at `rel` is left out (its notes counted, not walked)."""
        if "/" not in rel:  # a top-level folder: the collection it would be
            self.rules[rel] = excluded.for_collection(self.root / rel, self.root)
            rules, rule = self.rules[rel], self.rules[rel].whole
        else:
            rules, below = self._of(rel)
            rule = rules.folder(below) if rules else None
        if rule is not None:
            self.notes[rule] += len(names_below(self.root / rel, rel))
        return rule is not None

    def note(self, rel: str) -> bool:
        rules, below = self._of(rel)
        rule = rules.note_here(below) if rules else None
        if rule is not None:
            self.notes[rule] += 1
        return rule is not None

    def listed(self) -> tuple[list[dict[str, Any]], list[str]]:
        seen: dict[excluded.Rule, None] = {}
        problems: dict[str, None] = {}
        for rules in self.rules.values():
            seen.update(dict.fromkeys(rules.rules))
            problems.update(dict.fromkeys(rules.problems))
        return [{**r.to_dict(), "why": r.why, "notes": self.notes[r]} for r in seen], list(problems)


def _walk(root: Path, left: _LeftOut) -> dict[str, _Folder]:
    """Every folder memo would read (hidden and tooling folders skipped, and what a rule
    leaves out: counted in `left`), by relative path."""
    left.rules[""] = excluded.for_collection(root, root)
    tree: dict[str, _Folder] = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        here = _Folder()
        tree[rel] = here
        try:
            with os.scandir(root / rel if rel else root) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            if e.name.startswith((".", "~")):
                continue
            try:
                path = f"{rel}/{e.name}" if rel else e.name
                if e.is_dir(follow_symlinks=False):
                    if not skip_folder(rel or str(root), e.name) and not left.folder(path):
                        here.subs.append(e.name)
                        stack.append(path)
                elif e.name == META_FILE:
                    here.meta = True
                elif is_note_name(e.name) and e.is_file() and not left.note(path):
                    here.notes.append(e.name)
            except OSError:
                continue
    return tree


def _top(tree: dict[str, _Folder]) -> list[str]:
    return [s for s in tree[""].subs]


def _count(tree: dict[str, _Folder], rel: str, own_only: bool = False) -> int:
    """Notes a collection at `rel` would own: its own and its sub-folders' (unless those are
    collections), or only its own."""
    f = tree[rel]
    n = len([x for x in f.notes if x.lower() not in NOT_INDEXED] if rel == "" else f.notes)
    if own_only:
        return n
    for s in f.subs:
        sub = f"{rel}/{s}" if rel else s
        if not tree[sub].meta:
            n += _count(tree, sub)
    return n


def _propose(tree: dict[str, _Folder], rel: str) -> list[Proposal]:
    """The collections for one top-level folder (and its sub-folders when it is split)."""
    f = tree[rel]
    out: list[Proposal] = []
    kids = [f"{rel}/{s}" for s in f.subs]
    if f.meta:
        out.append(Proposal(rel, _count(tree, rel), "", kept=True))
        return out + [p for k in kids for p in _kept_below(tree, k)]
    total = _count(tree, rel)
    if total == 0:
        return [p for k in kids for p in _kept_below(tree, k)]
    if total <= SPLIT_ABOVE or not kids:
        return [Proposal(rel, total, "")] + [p for k in kids for p in _kept_below(tree, k)]
    if f.notes:
        out.append(Proposal(rel, len(f.notes), "", loose=True))
    for k in kids:
        if tree[k].meta:
            out += _kept_below(tree, k)
        elif _count(tree, k):
            out.append(Proposal(k, _count(tree, k), ""))
            out += [p for s in tree[k].subs for p in _kept_below(tree, f"{k}/{s}")]
    return out


def _kept_below(tree: dict[str, _Folder], rel: str) -> list[Proposal]:
    """Collections that exist already at or below `rel` (listed as kept)."""
    f = tree[rel]
    here = [Proposal(rel, _count(tree, rel), "", kept=True)] if f.meta else []
    return here + [p for s in f.subs for p in _kept_below(tree, f"{rel}/{s}")]


# ---------------------------------------------------------------------- descriptions
@dataclass(slots=True)
class _Read:
    titles: list[tuple[int, str]] = field(default_factory=list)  # (size, title)
    words: Counter[str] = field(default_factory=Counter)  # stem -> count
    surface: dict[str, Counter[str]] = field(default_factory=dict)  # stem -> spellings
    cyrillic: int = 0
    latin: int = 0


def _describe(root: Path, tree: dict[str, _Folder], proposals: list[Proposal]) -> None:
    """Draft every new proposal's description from its folder's notes."""
    todo = [p for p in proposals if not p.kept]
    reads = {p.path: _read(root, tree, p) for p in todo}
    df: Counter[str] = Counter()
    for r in reads.values():
        df.update(set(r.words))
    n = max(len(reads), 1)
    for p in todo:
        p.description = _draft(root, p, reads[p.path], df, n)


def _owned(tree: dict[str, _Folder], p: Proposal) -> list[str]:
    """The note paths (relative to the root) a proposal's collection would own."""
    rel = "" if p.path == "." else p.path
    out = []
    stack = [rel]
    while stack:
        here = stack.pop()
        f = tree[here]
        out += [f"{here}/{n}" if here else n for n in f.notes]
        if not p.loose:
            stack += [s for s in (f"{here}/{x}" if here else x for x in f.subs) if not tree[s].meta]
    if rel == "":
        out = [x for x in out if "/" in x or x.lower() not in NOT_INDEXED]
    return out


def _read(root: Path, tree: dict[str, _Folder], p: Proposal) -> _Read:
    r = _Read()
    for rel in _owned(tree, p):
        path = root / rel
        try:
            with open(path, "rb") as f:
                data = f.read(READ_BYTES)
            size = os.path.getsize(path)
        except OSError:
            continue
        text, _ = decode(data)
        note = chunk_note(text, lambda s: len(s) // 4, budget=512, name=Path(rel).stem)
        r.titles.append((size, note.title))
        body = prose(" ".join(f"{c.heading}\n{c.text}" for c in note.chunks))
        cyr, lat = letters(body[:20_000])
        r.cyrillic, r.latin = r.cyrillic + cyr, r.latin + lat
        for low, count in Counter(w.lower() for w in _WORD.findall(body)).items():
            if low in STOPWORDS:
                continue
            s = stem(low)
            r.words[s] += count
            spellings = r.surface.get(s)
            if spellings is None:
                spellings = r.surface[s] = Counter()
            spellings[low] += count
    return r


def _draft(root: Path, p: Proposal, r: _Read, df: Counter[str], n: int) -> str:
    """One line: the folder's name, its notes' titles (larger first), then its words."""
    name = root.name if p.path == "." else p.path.rsplit("/", 1)[-1]
    russian = dominant(r.cyrillic, r.latin) == "cyrl"
    if p.path == ".":
        lead = f"{name}: заметки в корне" if russian else f"{name}: notes at the top"
    else:
        lead = name
    by_size = sorted(r.titles, key=lambda x: -x[0])
    titles = [t for _, t in by_size if t.casefold() != name.casefold()]
    line = lead
    sep = ": " if p.path != "." else " — "
    shown: list[str] = []
    for t in dict.fromkeys(titles):
        if len(line) + len(sep) + len(", ".join([*shown, t])) > LINE * 3 // 4:
            break
        shown.append(t)
    if shown:
        line += sep + ", ".join(shown)
    if len(shown) < len(set(titles)):
        line += " …"
    in_titles = {stem(w.lower()) for t in [name, *shown] for w in _WORD.findall(t)}
    ranked = sorted(
        (s for s in r.words if s not in in_titles and r.words[s] >= 2 and df[s] < n),
        key=lambda s: -r.words[s] * math.log(n / df[s]),
    )
    words = [r.surface[s].most_common(1)[0][0] for s in ranked[:TERMS]]
    for i in range(len(words), 0, -1):
        tail = ("; " if shown or p.path == "." else ": ") + ", ".join(words[:i])
        if len(line) + len(tail) <= LINE:
            line += tail
            break
    return line
