"""What a library or a vault leaves out on purpose: the rules, read where people wrote them.

memo never indexes (never reads) a note a rule excludes, and a sync drops the note from the index
once a rule starts to exclude it; it comes back when the rule goes. The walk that lists a
collection's notes (`files.note_files`) is the one place that asks, so `memo index`, the catch-up
and the watcher follow the same rules. Sources: `.memoignore` (gitignore syntax) at the root and
in a collection folder, and the nearest vault's `.obsidian/` (excluded files, attachments and
templates folders; each read as Obsidian reads it: docs/design.md). A folder excluded is excluded
whole, as in git. A source is parsed again only when its (mtime, size) changes; one that cannot
be read or parsed excludes nothing (memo says so in `problems`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pathspec

IGNORE_FILE = ".memoignore"
OBSIDIAN = ".obsidian"
APP_JSON = "app.json"
TEMPLATES_JSON = "templates.json"
TEMPLATER_JSON = "plugins/templater-obsidian/data.json"

# The kind a program reads; KINDS words it for people.
IGNORED = "ignore_file"
OBSIDIAN_EXCLUDED = "obsidian_excluded"
TEMPLATES = "templates"
ATTACHMENTS = "attachments"
KINDS = {
    IGNORED: "ignore file",
    OBSIDIAN_EXCLUDED: "Obsidian's excluded files",
    TEMPLATES: "templates folder",
    ATTACHMENTS: "attachments folder",
}


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule that leaves notes out: what it is, the file that says so, as written there."""

    kind: str
    source: str  # the file, relative to the library root (posix)
    pattern: str

    @property
    def why(self) -> str:
        return f"{KINDS[self.kind]} `{self.pattern}` ({self.source})"

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "source": self.source, "pattern": self.pattern}


# A matcher answers for one path relative to its base (a vault, the root, a collection):
# note(path) -> the rule excluding that note, folder(path) -> the rule excluding that folder.
NoteTest = Callable[[str], Rule | None]


@dataclass(slots=True)
class _Group:
    """The rules of one base folder, seen from one collection: `lead` is the collection
    folder relative to the base ('' when they are the same)."""

    lead: str
    notes: list[NoteTest] = field(default_factory=list)
    folders: list[NoteTest] = field(default_factory=list)

    def full(self, rel: str) -> str:
        return f"{self.lead}/{rel}" if self.lead and rel else (self.lead or rel)


@dataclass(slots=True)
class Rules:
    """The rules one collection's notes are listed by. Paths are relative to the collection."""

    groups: list[_Group] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)  # every rule read, for people
    problems: list[str] = field(default_factory=list)  # sources or entries memo could not use
    whole: Rule | None = None  # a rule excluding the collection's own folder

    def __bool__(self) -> bool:
        return bool(self.rules)

    def folder(self, rel: str) -> Rule | None:
        """The rule excluding the folder at `rel` (and all below it), if any."""
        return self._first(rel, folders=True)

    def note_here(self, rel: str) -> Rule | None:
        """The rule excluding the note at `rel`, its folders not asked (the walk asked)."""
        return self._first(rel, folders=False)

    def _first(self, rel: str, folders: bool) -> Rule | None:
        """The first rule of any group whose folder (or note) tests match `rel`."""
        for g in self.groups:
            path = g.full(rel)
            for test in g.folders if folders else g.notes:
                if (r := test(path)) is not None:
                    return r
        return None

    def within(self, rel: str) -> Rule | None:
        """The rule excluding the folder at `rel` or one of the folders above it (up to the
        collection's own, which `whole` answers for)."""
        if self.whole is not None:
            return self.whole
        parts = rel.split("/") if rel else []
        for i in range(1, len(parts) + 1):
            if (r := self.folder("/".join(parts[:i]))) is not None:
                return r
        return None

    def note(self, rel: str) -> Rule | None:
        """The rule excluding the note at `rel`, its folders included: one note alone (the
        watcher's, a search of one note) is judged as the walk would judge it."""
        return self.within(rel.rpartition("/")[0]) or self.note_here(rel)


def for_collection(folder: Path, root: Path) -> Rules:
    """The rules the collection at `folder` (inside the library at `root`) is listed by.

    Built once per collection and again only when a file they could come from appears,
    changes or goes: a no-op sync pays a few stats for them (docs/design.md)."""
    f, r = os.fspath(folder), os.fspath(root)
    sig, vault = _signature(f, r)
    hit = _built.get((f, r))
    if hit is not None and hit[0] == sig:
        return hit[1]
    rules = _build(Path(f), Path(r), None if vault is None else Path(vault))
    if len(_built) >= _BUILT_MAX:
        _built.clear()
    _built[(f, r)] = (sig, rules)
    return rules


_built: dict[tuple[str, str], tuple[tuple[Any, ...], Rules]] = {}
_BUILT_MAX = 4096


def _ident(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _signature(folder: str, root: str) -> tuple[tuple[Any, ...], str | None]:
    """What the rules of a collection depend on (each source's identity), and its vault: the
    nearest folder at or above `folder`, up to `root` (never above it), holding `.obsidian/`."""
    inside = folder == root or folder.startswith(root.rstrip(os.sep) + os.sep)
    sig: list[Any] = [_ident(os.path.join(folder, IGNORE_FILE))]
    if folder != root and inside:
        sig.append(_ident(os.path.join(root, IGNORE_FILE)))
    vault, probe = None, folder
    while inside:
        if os.path.isdir(os.path.join(probe, OBSIDIAN)):
            vault = probe
            break
        if probe == root:
            break
        probe = os.path.dirname(probe)
    sig.append(vault)
    if vault is not None:
        conf = os.path.join(vault, OBSIDIAN)
        sig += [_ident(os.path.join(conf, n)) for n in (APP_JSON, TEMPLATES_JSON, TEMPLATER_JSON)]
    return tuple(sig), vault


def _build(folder: Path, root: Path, vault: Path | None) -> Rules:
    out = Rules()
    try:
        lead_root: str | None = folder.relative_to(root).as_posix()
    except ValueError:  # not inside the root: only its own ignore file
        lead_root = None
    lead_root = "" if lead_root == "." else lead_root
    bases: list[tuple[Path, str]] = []  # (base folder, collection relative to it)
    if lead_root is not None:
        bases.append((root, lead_root))
    if lead_root != "":
        bases.append((folder, ""))
    for base, lead in bases:
        group = _Group(lead)
        _ignore_file(base, root, group, out)
        if group.notes:
            out.groups.append(group)
    if vault is not None:
        lead = folder.relative_to(vault).as_posix()
        group = _Group("" if lead == "." else lead)
        _obsidian(vault, root, group, out)
        if group.notes or group.folders:
            out.groups.append(group)
    for g in out.groups:  # the collection's own folder, or one above it, excluded
        parts = g.lead.split("/") if g.lead else []
        for i in range(1, len(parts) + 1):
            for test in g.folders:
                if out.whole is None and (r := test("/".join(parts[:i]))) is not None:
                    out.whole = r
    return out


def is_rule_file(rel_parts: list[str]) -> bool:
    """Whether a path (its parts, relative to the library root) is a file rules are read
    from: the watcher rescans the library when one changes."""
    if not rel_parts:
        return False
    if rel_parts[-1] == IGNORE_FILE:
        return True
    if OBSIDIAN in rel_parts:
        tail = "/".join(rel_parts[rel_parts.index(OBSIDIAN) + 1 :])
        return tail in (APP_JSON, TEMPLATES_JSON, TEMPLATER_JSON)
    return False


# ---------------------------------------------------------------------- sources
_parsed: dict[str, tuple[tuple[int, int], Any]] = {}  # source path -> ((mtime, size), value)
_PARSED_MAX = 4096


def _read(path: Path, parse: Callable[[bytes], Any]) -> Any:
    """The parsed contents of a source file, None when it is absent; reparsed only when its
    (mtime, size) changed. Raises ValueError/OSError when it cannot be read or parsed."""
    key = str(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        _parsed.pop(key, None)
        return None
    except NotADirectoryError:
        return None
    ident = (st.st_mtime_ns, st.st_size)
    hit = _parsed.get(key)
    if hit is not None and hit[0] == ident:
        return hit[1]
    with open(path, "rb") as f:
        value = parse(f.read(1 << 20))
    if len(_parsed) >= _PARSED_MAX:
        _parsed.clear()
    _parsed[key] = (ident, value)
    return value


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _gitignore(data: bytes) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(data.decode("utf-8", "replace").splitlines())


def _ignore_file(base: Path, root: Path, group: _Group, out: Rules) -> None:
    path = base / IGNORE_FILE
    source = _shown(path, root)
    try:
        spec = _read(path, _gitignore)
    except (OSError, ValueError) as e:
        out.problems.append(f"{source}: cannot be read ({e}): it excludes nothing")
        return
    if spec is None or not spec.patterns:
        return
    rules = [Rule(IGNORED, source, p.pattern) for p in spec.patterns]
    out.rules += [r for r, p in zip(rules, spec.patterns, strict=True) if p.include]

    def note(p: str) -> Rule | None:
        r = spec.check_file(p)
        return rules[r.index] if r.include else None

    def folder(p: str) -> Rule | None:
        r = spec.check_file(p + "/")
        return rules[r.index] if r.include else None

    group.notes.append(note)
    group.folders.append(folder)


def _json(data: bytes) -> Any:
    return json.loads(data.decode("utf-8-sig"))


def _obsidian(vault: Path, root: Path, group: _Group, out: Rules) -> None:
    conf = vault / OBSIDIAN
    app = _setting(conf / APP_JSON, root, out)
    source = _shown(conf / APP_JSON, root)
    filters = app.get("userIgnoreFilters")
    for entry in filters if isinstance(filters, list) else []:
        if not isinstance(entry, str) or not entry:
            continue
        rule = Rule(OBSIDIAN_EXCLUDED, source, entry)
        if len(entry) > 2 and entry.startswith("/") and entry.endswith("/"):
            try:
                rx = re.compile(entry[1:-1])
            except re.error as e:
                out.problems.append(
                    f"{source}: excluded files `{entry}` is not a regex memo reads ({e}): "
                    "it excludes nothing"
                )
                continue
            group.notes.append(partial(_by_regex, rx, rule))
        else:
            group.notes.append(partial(_by_prefix, entry, rule, ""))
            group.folders.append(partial(_by_prefix, entry, rule, "/"))
        out.rules.append(rule)
    attach = app.get("attachmentFolderPath")
    if isinstance(attach, str):
        _attachments(attach, source, group, out)
    for name, key in ((TEMPLATES_JSON, "folder"), (TEMPLATER_JSON, "templates_folder")):
        value = _setting(conf / name, root, out).get(key)
        if isinstance(value, str) and value.strip("/ "):
            _under(Rule(TEMPLATES, _shown(conf / name, root), value), value.strip("/ "), group, out)


def _setting(path: Path, root: Path, out: Rules) -> dict[str, Any]:
    try:
        value = _read(path, _json)
    except (OSError, ValueError) as e:
        out.problems.append(f"{_shown(path, root)}: cannot be read ({e}): it excludes nothing")
        return {}
    return value if isinstance(value, dict) else {}


def _attachments(value: str, source: str, group: _Group, out: Rules) -> None:
    rule = Rule(ATTACHMENTS, source, value)
    path = value.strip()
    if path.startswith("./"):  # a sub-folder of each note's own folder
        name = path[2:].strip("/")
        if not name:
            return

        def folder(p: str) -> Rule | None:
            return rule if p == name or p.endswith("/" + name) else None

        def note(p: str) -> Rule | None:
            return rule if f"/{p}".rfind(f"/{name}/") >= 0 else None

        group.folders.append(folder)
        group.notes.append(note)
        out.rules.append(rule)
    elif path.strip("/"):
        _under(rule, path.strip("/"), group, out)


def _under(rule: Rule, name: str, group: _Group, out: Rules) -> None:
    """A folder of the vault excluded whole."""

    def folder(p: str) -> Rule | None:
        return rule if p == name or p.startswith(name + "/") else None

    def note(p: str) -> Rule | None:
        return rule if p.startswith(name + "/") else None

    group.folders.append(folder)
    group.notes.append(note)
    out.rules.append(rule)


def counted(left_out: list[tuple[str, Rule]]) -> list[dict[str, Any]]:
    """Notes left out, counted per rule (in the order the rules were first met)."""
    by_rule: dict[Rule, int] = {}
    for _, rule in left_out:
        by_rule[rule] = by_rule.get(rule, 0) + 1
    return [{**r.to_dict(), "why": r.why, "notes": n} for r, n in by_rule.items()]


def _by_regex(rx: re.Pattern[str], rule: Rule, path: str) -> Rule | None:
    """Obsidian's `/regex/` entry: the rule when it matches anywhere in the path."""
    return rule if rx.search(path) else None


def _by_prefix(entry: str, rule: Rule, tail: str, path: str) -> Rule | None:
    """Obsidian's plain entry: the rule when the path (a folder's with `tail` "/") starts
    with it."""
    return rule if (path + tail).startswith(entry) else None
