"""Obsidian and Logseq markdown read the way a person reads it.

What a reader sees, not the syntax: the index (both legs) and the note page read the same
lines, and every rewrite keeps the file's line count, so `path:line` stays the file's line.

- `[[Note]]`, `[[Note|shown words]]`, `[[Note#Heading]]`, `[[#Heading]]` read as `Note`,
  `shown words`, `Note Heading`, `Heading` (block references `#^id` dropped);
- `![[Other note]]` (a note embedded) reads as its name, as a link does; `![[image.png]]`,
  `![[icon.svg#icon]]` read as nothing, `![alt](pic.png)` as its alt text;
- `> [!tip]- Title` reads as `Title`, and quoted lines lose their `> ` marker;
- `%%a comment%%` (over several lines too), Obsidian block ids (`… ^block-id`) and Logseq's
  `id::`/`collapsed::` properties read as nothing;
- `#tag`, `#nested/tag` in the text stay text, and are collected as the note's tags.

Fenced code is left as it is (a `[[` in code is code). A note without an H1 is titled by its
frontmatter `title`, else its file name (`note_title`); its `aliases` follow the title.
"""

from __future__ import annotations

import re
from typing import Any

_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)")
_CALLOUT = re.compile(r"^(\s*(?:>\s*)+)\[!([\w-]+)\][+-]?[ \t]*(.*)$")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_BLOCK_ID = re.compile(r"(?:^|\s)\^[A-Za-z0-9][\w-]*\s*$")
_LOGSEQ_PROP = re.compile(r"^\s*(?:-\s+)?(?:id|collapsed)::\s.*$")
_TAG = re.compile(r"(?:^|(?<=[\s(,]))#([^\s#.,;:!?()\[\]{}\"'`*|<>=]+)")
_NOTE_EXT = ("", ".md")
ALIASES_SHOWN = 3  # aliases added to a title, at most
ALIASES_CHARS = 60


def _target_words(inner: str) -> str:
    """The words a wikilink shows: its alias, else `note heading` (block refs dropped)."""
    inner = inner.replace("\\|", "|")
    target, bar, alias = inner.partition("|")
    if bar and alias.strip():
        return alias.strip()
    note, _, anchor = target.partition("#")
    note = note.strip().rsplit("/", 1)[-1]
    if note.lower().endswith(".md"):
        note = note[:-3]
    parts = [note] + [a.strip() for a in anchor.split("#") if a.strip() and not a.startswith("^")]
    return " ".join(p for p in parts if p)


def _link(m: re.Match[str]) -> str:
    embed, inner = m.group(1), m.group(2)
    if embed:
        name = inner.replace("\\|", "|").split("|", 1)[0].split("#", 1)[0].strip()
        ext = name.rsplit(".", 1)[-1].lower() if "." in name.rsplit("/", 1)[-1] else ""
        if f".{ext}" not in _NOTE_EXT and ext:
            return ""  # an image, a PDF, a sound: nothing to read
    return _target_words(inner)


def readable_lines(lines: list[str], code: list[bool]) -> tuple[list[str], list[str]]:
    """The lines as a person reads them (same count, code untouched), and the inline #tags."""
    out: list[str] = []
    tags: dict[str, None] = {}
    in_comment = False
    for line, is_code in zip(lines, code, strict=True):
        if is_code:
            out.append(line)
            continue
        # each rewrite runs only where its mark is: most prose lines have none (1 MB: 0.1 s)
        if in_comment or "%%" in line:
            line, in_comment = _strip_comments(line, in_comment)
        if line.lstrip().startswith(">"):
            m = _CALLOUT.match(line)
            line = m.group(3) if m else _QUOTE.sub("", line)
        if "::" in line and _LOGSEQ_PROP.match(line):
            line = ""
        if "[" in line:
            if "![" in line:
                line = _IMAGE.sub(lambda i: i.group(1), line)
            if "[[" in line:
                line = _WIKILINK.sub(_link, line)
        if "^" in line:
            line = _BLOCK_ID.sub("", line)
        if "#" in line and not line.lstrip().startswith("# "):
            for t in _TAG.findall(line):
                if any(c.isalpha() for c in t):
                    tags.setdefault(t.lower().rstrip("/"), None)
        out.append(line)
    return out, list(tags)


def _strip_comments(line: str, inside: bool) -> tuple[str, bool]:
    """`line` without its `%%…%%` parts; whether a comment is still open after it."""
    out, pos = [], 0
    while True:
        mark = line.find("%%", pos)
        if inside:
            if mark < 0:
                return "".join(out), True
            inside, pos = False, mark + 2
            continue
        if mark < 0:
            out.append(line[pos:])
            return "".join(out), False
        out.append(line[pos:mark])
        inside, pos = True, mark + 2


def note_title(file_stem: str, meta: dict[str, Any], h1: str | None = None) -> str:
    """A note's title as a person reads it: its H1, else frontmatter `title`, else its file
    name; followed by its `aliases` in parentheses (a Russian note's English name finds it)."""
    title = h1
    if not title:
        given = meta.get("title")
        title = " ".join(given.split()) if isinstance(given, str) and given.strip() else ""
    title = title or file_stem
    aliases = meta.get("aliases")
    if isinstance(aliases, str):
        aliases = [aliases]
    if isinstance(aliases, list):
        shown: list[str] = []
        for a in aliases:
            a = " ".join(str(a).split())
            if not a or a.casefold() == title.casefold() or a in shown:
                continue
            if len(shown) >= ALIASES_SHOWN or len(", ".join([*shown, a])) > ALIASES_CHARS:
                break
            shown.append(a)
        if shown:
            title = f"{title} ({', '.join(shown)})"
    return title


def frontmatter_tags(meta: dict[str, Any]) -> list[str]:
    """Frontmatter `tags` (a list, or one comma/space separated string), without `#`."""
    tags = meta.get("tags")
    if isinstance(tags, str):
        tags = re.split(r"[,\s]+", tags)
    if not isinstance(tags, list):
        return []
    return [str(t).strip().lstrip("#") for t in tags if str(t).strip().lstrip("#")]
