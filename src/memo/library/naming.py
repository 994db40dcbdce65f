"""How a library names its notes, read from the names it has: the rule `memo skill` states and
the folder names `memo new` accepts.

A library memo starts gets memo's rule, lowercase ASCII slugs (`kafka-consumer-lag.md`); an
adopted vault keeps its own (Obsidian titles a note by its file name: `Sync your notes.md`,
`Home Lab/`), which `read(root) -> Naming` finds in up to SAMPLE note names. The rule stated is
what most names do (MOST: their separator, case, alphabet); a name `memo new` makes may do what
some of them do (SOME: spaces, capitals, other alphabets), and a slug is always accepted. Never a
name a shell, Windows or a wikilink breaks on. Why: docs/design.md, "library/naming.py".
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field, replace

from ..collection.files import is_note_name, skip_folder

SAMPLE = 2_000  # note names read at most, nearest the root first
MOST = 0.5  # a trait of more than this share of the names is the library's rule
SOME = 0.2  # a trait of this share of the names is one a new name may have
SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")  # memo's own names
SLUG_RULE = "lowercase ASCII file names (`kafka-consumer-lag.md`)"  # memo's own rule, stated
MAX_NAME = 100  # characters of a folder name memo creates
# never in a name memo creates: path separators, what Windows forbids, what breaks a wikilink
FORBIDDEN = set('/\\:*?"<>|#^[]')


@dataclass(frozen=True, slots=True)
class Naming:
    """What the note names of a library have in common (`read`)."""

    names: int = 0  # note names read
    spaced: int = 0  # of them holding a space
    capitals: int = 0  # holding a capital letter
    other_alphabets: int = 0  # holding a letter outside ASCII
    separator: str = "-"  # what most names of several words put between them
    case: str = "lowercase"  # "lowercase", "Title Case" or "Sentence case"
    examples: tuple[str, ...] = field(default_factory=tuple)  # names written by the rule

    @property
    def slugs(self) -> bool:
        """The library names its notes as memo does (or has no notes yet)."""
        return (
            self.case == "lowercase"
            and self.separator != " "
            and not self._most(self.other_alphabets)
        )

    def _most(self, n: int) -> bool:
        return self.names > 0 and n / self.names > MOST

    def _some(self, n: int) -> bool:
        return self.names > 0 and n / self.names >= SOME

    def rule(self) -> str:
        """The rule as the skill states it (memo's own for a library of slugs)."""
        if self.slugs:
            return SLUG_RULE
        words = {" ": "separated by spaces", "-": "joined by '-'", "_": "joined by '_'"}
        alphabet = ", in any alphabet" if self._some(self.other_alphabets) else ""
        shown = ", ".join(f"`{e}`" for e in self.examples)
        return (
            f"file and folder names as this library writes them: {self.case} words "
            f'{words[self.separator]}{alphabet} ({shown}), no `/ \\ : * ? " < > | # ^ [ ]`'
        )

    def allows(self, name: str) -> bool:
        """Whether `memo new` may create a folder of this name here: a slug always; else a
        name of letters, digits and punctuation no shell, Windows or wikilink breaks on, with
        spaces, capitals and other alphabets where the library's names have them."""
        if SLUG.match(name):
            return True
        if not name or len(name) > MAX_NAME or name != name.strip() or name[0] in ".~":
            return False
        if any(c in FORBIDDEN or not c.isprintable() for c in name) or "  " in name:
            return False
        if " " in name and not self._some(self.spaced):
            return False
        if name != name.lower() and not self._some(self.capitals):
            return False
        return name.isascii() or self._some(self.other_alphabets)

    def hint(self) -> str:
        """What `memo new` says when it refuses a name."""
        if self.slugs:
            return (
                "Use lowercase ASCII slugs: letters, digits, '-', '_' or '.', e.g. work/kafka-ops "
                "(an existing folder may have any name)."
            )
        return f"Name it as this library names its notes: {self.rule()}."


def read(root: str | os.PathLike[str]) -> Naming:
    """What the note names below `root` have in common: up to SAMPLE of them, nearest the
    root first, hidden folders and other tools' copies left out (as the index leaves them)."""
    stems = _stems(os.fspath(root))
    if not stems:
        return Naming()
    n = len(stems)
    several = [s for s in stems if _separator(s) is not None]
    seps = Counter(_separator(s) for s in several)
    separator = max(("-", "_", " "), key=lambda c: (seps[c], c == "-"))
    cases = Counter(_case(s) for s in stems if any(c.isalpha() for c in s))
    lower = cases["lowercase"] > MOST * max(1, sum(cases.values()))
    # one capitalised word is both Title and Sentence case: names of several words decide
    capped = Counter(_case(s) for s in several)
    titled = capped["Title Case"] >= capped["Sentence case"]
    case = "lowercase" if lower else "Title Case" if titled else "Sentence case"
    naming = Naming(
        names=n,
        spaced=sum(" " in s for s in stems),
        capitals=sum(s != s.lower() for s in stems),
        other_alphabets=sum(any(c.isalpha() and not c.isascii() for c in s) for s in stems),
        separator=separator,
        case=case,
    )
    fits = [s for s in several if _separator(s) == separator and _case(s) == case]
    return replace(naming, examples=tuple(f"{s}.md" for s in (fits or stems)[:2]))


def _stems(root: str) -> list[str]:
    """Up to SAMPLE note names (without `.md`) below `root`, breadth first."""
    out: list[str] = []
    queue = [root]
    while queue and len(out) < SAMPLE:
        folder = queue.pop(0)
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            try:
                if e.is_dir(follow_symlinks=False):
                    if not skip_folder(folder, e.name):
                        queue.append(e.path)
                elif is_note_name(e.name) and len(out) < SAMPLE:
                    out.append(e.name[: -len(".md")])
            except OSError:
                continue
    return out


def _separator(stem: str) -> str | None:
    """What a name of several words puts between them (None: one word)."""
    for sep in (" ", "-", "_"):
        if len([w for w in stem.split(sep) if w]) > 1:
            return sep
    return None


def _case(stem: str) -> str:
    """lowercase, Title Case (the first word and every word of more than three letters start
    with a capital: `How to Use Bases`) or Sentence case (the first word alone does)."""
    words = [w for w in re.split(r"[\s_-]+", stem) if w[:1].isalpha()]
    if not words or not words[0][0].isupper():
        return "lowercase" if all(w[0].islower() for w in words) else "Sentence case"
    rest = [w for w in words[1:] if len(w) > 3]
    return "Title Case" if all(w[0].isupper() for w in rest) else "Sentence case"
