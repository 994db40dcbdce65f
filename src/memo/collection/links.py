"""A note's links as Obsidian reads them, and where an index keeps them (issue 45).

Extraction is pure and runs in the text stage: every wikilink, embed, markdown link and wikilink
in a frontmatter value, with its line, kind, target as written and subpath, seen only where
Obsidian interprets syntax (markdown.py) and never inside a `%%` comment. An attachment, a URL or
a destination with a literal space is no link to a note. The index keeps the links raw (`links`,
`aliases`), never resolved: library/linkgraph.py resolves them at read time. They are written in
the transaction that writes the note's chunks (`store_links`) and a trigger on `files` deletes
them with the note's row, so they are never older or newer than the chunks (docs/design.md).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, cast
from urllib.parse import unquote

from .markdown import MARKDOWN_LINK, SCHEME, WIKILINK, interpreted, wikilink_parts

LinkKind = Literal["wikilink", "embed", "markdown", "property"]
# Obsidian's accepted formats that are not notes, and files people link that are not notes:
# a target with one of these extensions is an attachment, not a link between notes
ATTACHMENTS = frozenset(
    (
        "avif bmp gif heic ico jpeg jpg png svg tif tiff webp "
        "3gp aac flac m4a mp3 oga ogg opus wav webm "
        "avi m4v mkv mov mp4 ogv "
        "pdf canvas base excalidraw csv json txt zip docx xlsx pptx odt ods html htm"
    ).split()
)


def link_key(target: str, sub: str) -> tuple[str, str]:
    """What a link is known by: its note's name without the extension, and its heading or
    ^block, both folded as resolution folds them."""
    return fold(stem(target)), fold(" ".join(sub.split()))


def fold(text: str) -> str:
    """A name as Obsidian compares names: NFC, casefolded (`[[log]]` opens `Log.md`)."""
    return unicodedata.normalize("NFC", text).casefold()


def stem(target: str) -> str:
    """A link target without its `.md` (any case): `Folder/Note.md` -> `Folder/Note`."""
    target = target.strip()
    return target[:-3] if target.lower().endswith(".md") else target


def name_of(target: str) -> str:
    """What a target could name: its last segment, `.md` dropped, folded (backlinks' key)."""
    return fold(stem(target).rsplit("/", 1)[-1].strip())


@dataclass(frozen=True, slots=True)
class Link:
    """One link as written in a note."""

    line: int  # 1-based line it sits on
    kind: LinkKind
    target: str  # the link path as written (a markdown link's decoded), no subpath
    sub: str = ""  # the heading path (`A#B`) or block (`^id`) after the first `#`

    @property
    def name(self) -> str:
        return name_of(self.target)


@dataclass(frozen=True, slots=True)
class NoteLinks:
    """Everything a note says about the link graph: its links, in order, and its aliases."""

    links: tuple[Link, ...] = ()
    aliases: tuple[str, ...] = ()


def _attachment(target: str) -> bool:
    last = target.rsplit("/", 1)[-1]
    return "." in last and last.rsplit(".", 1)[-1].lower() in ATTACHMENTS


def _wiki(line: int, embed: str, inner: str, kind: LinkKind | None = None) -> Link | None:
    """A wikilink's inner text as a Link (None: no link to a note)."""
    path, sub, _ = wikilink_parts(inner)
    path, sub = path.strip(), sub.strip()
    if not (path or sub) or _attachment(path):
        return None  # an image, a PDF: no note (`[[#Heading]]`: this note's own heading)
    return Link(line, kind or ("embed" if embed else "wikilink"), path, sub)


def _markdown(line: int, embed: str, dest: str) -> Link | None:
    """A markdown link as a Link to a note (None: a URL, an attachment)."""
    dest = dest[1:-1].strip() if dest.startswith("<") else dest
    if not dest or SCHEME.match(dest):
        return None
    path, _, sub = unquote(dest).partition("#")
    path, sub = path.strip(), sub.strip()
    if not (path or sub) or _attachment(path):
        return None
    return Link(line, "embed" if embed else "markdown", path, sub)


def links_in(text: str, line: int) -> list[Link]:
    """The links of one line's interpreted text (code spans and math already blanked), in
    the order they stand."""
    if "[" not in text:
        return []
    found: list[tuple[int, Link | None]] = []
    spans = []
    for m in WIKILINK.finditer(text):
        found.append((m.start(), _wiki(line, m.group(1), m.group(2))))
        spans.append(m.span())
    if "](" in text:
        for a, b in spans:  # a wikilink's brackets are no markdown link's
            text = text[:a] + " " * (b - a) + text[b:]
        for m in MARKDOWN_LINK.finditer(text):
            found.append((m.start(), _markdown(line, m.group(1), m.group(3))))
    return [x for _, x in sorted(found, key=lambda f: f[0]) if x is not None]


def aliases_of(meta: dict[str, Any]) -> tuple[str, ...]:
    """The note's frontmatter aliases (`aliases`, a list or one string; the old `alias`)."""
    out: dict[str, None] = {}
    for key in ("aliases", "alias"):
        given = meta.get(key)
        items = [given] if isinstance(given, str) else given if isinstance(given, list) else []
        for a in items:
            a = " ".join(str(a).split()) if a is not None else ""
            if a:
                out.setdefault(a, None)
    return tuple(out)


def extract(lines: list[str], code: list[bool], start: int, meta: dict[str, Any]) -> NoteLinks:
    """A note's links and aliases: `lines` as in the file, `code` its fenced-code flags,
    `start` its first body line (after the frontmatter), `meta` the parsed frontmatter."""
    found: list[Link] = []
    for k in range(1, start - 1):  # frontmatter values: wikilinks only (property links)
        if "[[" in lines[k]:
            for m in WIKILINK.finditer(lines[k]):
                link = _wiki(k + 1, "", m.group(2), "property")
                if link is not None:
                    found.append(link)
    for k, text in interpreted(lines, code, start):
        found.extend(links_in(text, k + 1))
    return NoteLinks(tuple(found), aliases_of(meta))


# ---------------------------------------------------------------------- in the index
SCHEMA = """
CREATE TABLE IF NOT EXISTS links(
    path TEXT NOT NULL,     -- the linking note, relative to the collection
    line INTEGER NOT NULL,  -- 1-based line the link sits on
    kind TEXT NOT NULL,     -- wikilink | embed | markdown | property
    target TEXT NOT NULL,   -- as written (decoded), without the subpath
    sub TEXT NOT NULL,      -- heading path or ^block
    name TEXT NOT NULL      -- name_of(target): what a backlink is looked up by
);
CREATE INDEX IF NOT EXISTS links_path ON links(path);
CREATE INDEX IF NOT EXISTS links_name ON links(name);
CREATE TABLE IF NOT EXISTS aliases(path TEXT NOT NULL, alias TEXT NOT NULL, name TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS aliases_path ON aliases(path);
-- a note's links go with its row in `files`: rewritten, skipped or removed alike
CREATE TRIGGER IF NOT EXISTS files_links AFTER DELETE ON files BEGIN
    DELETE FROM links WHERE path = old.path;
    DELETE FROM aliases WHERE path = old.path;
END;
"""


def store_links(conn: Any, path: str, note: NoteLinks) -> None:
    """Write a note's links and aliases (inside the caller's transaction, after its `files`
    row was deleted and written again: the trigger removed the old ones)."""
    conn.executemany(
        "INSERT INTO links(path, line, kind, target, sub, name) VALUES (?,?,?,?,?,?)",
        [(path, x.line, x.kind, x.target, x.sub, x.name) for x in note.links],
    )
    conn.executemany(
        "INSERT INTO aliases(path, alias, name) VALUES (?,?,?)",
        [(path, a, name_of(a)) for a in note.aliases],
    )


def _row(r: tuple[Any, ...]) -> Link:
    return Link(int(r[0]), cast(LinkKind, str(r[1])), str(r[2]), str(r[3]))


def of_note(conn: Any, path: str) -> list[Link]:
    """A note's links, in the order they sit in it."""
    rows = conn.execute(
        "SELECT line, kind, target, sub FROM links WHERE path = ? ORDER BY rowid", (path,)
    ).fetchall()
    return [_row(r) for r in rows]


def naming(conn: Any, names: Iterable[str]) -> list[tuple[str, Link]]:
    """(linking note, link) of every link whose target could name one of `names`."""
    want = sorted(set(names))
    if not want:
        return []
    marks = ",".join("?" * len(want))
    rows = conn.execute(
        f"SELECT path, line, kind, target, sub FROM links WHERE name IN ({marks})"
        " ORDER BY path, rowid",
        want,
    ).fetchall()
    return [(str(r[0]), _row(r[1:])) for r in rows]


@dataclass(frozen=True, slots=True)
class Names:
    """What a link can open in one index: every note and every (note, alias)."""

    notes: list[str]
    aliases: list[tuple[str, str]]


def notes_and_aliases(conn: Any) -> tuple[list[str], list[tuple[str, str]]]:
    """Every note the index knows (a skipped one too: it exists, a link opens it) and every
    (note, alias)."""
    notes = [str(p) for (p,) in conn.execute("SELECT path FROM files")]
    aliases = [(str(p), str(a)) for p, a in conn.execute("SELECT path, alias FROM aliases")]
    return notes, aliases


def why_unknown(conn: Any, path: str) -> str:
    """Why the index holds no links of a note ('' when it holds them): skipped, and why, or
    left out."""
    row = conn.execute("SELECT status, note FROM files WHERE path = ?", (path,)).fetchone()
    if row is None:
        return "is not indexed (left out on purpose: `memo status` names the rule)"
    return f"was skipped ({row[1]})" if row[0] != "ok" else ""
