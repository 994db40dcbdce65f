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

Syntax is interpreted only where Obsidian interprets it: never inside fenced code, block math
(`$$` lines), inline code or inline math (`literal_spans`), so a `%%` or `[[` there is text. A
`%%` comment that never closes hides the rest of the note, as in Obsidian, and says so. What
reads as nothing is returned with why (`Reading.hidden`): the chunker's coverage report lists
it. A note without an H1 is titled by its frontmatter `title`, else its file name
(`note_title`); its `aliases` follow the title.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
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


# Why a line with words in the file reads as nothing (the coverage report: chunker.py)
HIDDEN_COMMENT = "inside a %% comment"
HIDDEN_UNCLOSED = "inside a %% comment that never closes (Obsidian hides the rest of the note too)"
HIDDEN_EMBED = "an embedded image or file"
HIDDEN_PROPERTY = "a Logseq property (id::, collapsed::)"
HIDDEN_BLOCK_ID = "a block id"
HIDDEN_MARKUP = "markup only (a quote or callout marker)"

# Spans where Obsidian interprets no syntax: inline code (a run of n backticks up to the next
# run of exactly n, CommonMark's rule; an unmatched run is literal) and inline math ($…$ with
# no space inside either dollar, the closing one not followed by a digit, as Pandoc and
# Obsidian's MathJax read it; $$…$$ on one line). Block math ($$ lines) is handled like fences.
_CODE_RUN = re.compile(r"(?<!\\)`+")
_INLINE_MATH = re.compile(
    r"(?<![\\$])\$\$(?!\$).+?(?<!\\)\$\$"  # $$…$$ within a line
    r"|(?<![\\$])\$(?=[^\s$])(?:[^$\n\\]|\\.)*?(?<=[^\s\\])\$(?![\d$])"  # $…$
)
_MATH_BLOCK = re.compile(r"^\s*\$\$")


def literal_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of the parts of `line` where no markdown syntax is interpreted: inline
    code spans (backticks included) and inline math, in order, not overlapping."""
    if "`" not in line and "$" not in line:
        return []
    spans: list[tuple[int, int]] = []
    pos = 0
    while "`" in line[pos:]:
        m = _CODE_RUN.search(line, pos)
        if m is None:
            break
        run = m.group(0)
        close = re.compile(rf"(?<!`){run}(?!`)").search(line, m.end())
        if close is None:
            pos = m.end()  # an unmatched run is literal backticks
            continue
        spans.append((m.start(), close.end()))
        pos = close.end()
    if "$" in line:
        gaps, last = [], 0
        for a, b in spans:
            gaps.append((last, a))
            last = b
        gaps.append((last, len(line)))
        for a, b in gaps:
            spans += [m.span() for m in _INLINE_MATH.finditer(line, a, b)]
        spans.sort()
    return spans


def _open_comment(line: str, pos: int) -> int:
    """Where the first `%%` at or after `pos` that is not inside code or math starts; -1."""
    while True:
        mark = line.find("%%", pos)
        if mark < 0:
            return -1
        inside = next(((a, b) for a, b in literal_spans(line) if a <= mark < b), None)
        if inside is None:
            return mark
        pos = inside[1]


def _outside_literals(line: str, rewrite: Callable[[str], str]) -> str:
    """`line` with `rewrite` applied to its text between code spans and inline math only."""
    spans = literal_spans(line)
    if not spans:
        return rewrite(line)
    out, last = [], 0
    for a, b in spans:
        out += [rewrite(line[last:a]), line[a:b]]
        last = b
    out.append(rewrite(line[last:]))
    return "".join(out)


@dataclass(slots=True)
class Reading:
    """A note's lines as a person reads them (same count), its inline #tags, why the lines
    that hold words in the file read as nothing (0-based line -> HIDDEN_*), and warnings."""

    lines: list[str]
    tags: list[str]
    hidden: dict[int, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def read_lines(lines: list[str], code: list[bool]) -> Reading:
    """Read `lines` as Obsidian shows them: syntax is interpreted outside fenced code, block
    math, inline code and inline math only, and a `%%` comment that never closes runs to the
    end of the note, as in Obsidian (the coverage report and a warning say so)."""
    out: list[str] = []
    tags: dict[str, None] = {}
    hidden: dict[int, str] = {}
    in_comment = -1  # the line where the open comment began (-1: none)
    in_math = False
    for k, (line, is_code) in enumerate(zip(lines, code, strict=True)):
        if is_code:
            out.append(line)
            continue
        if in_math:  # $$ … $$ over several lines: math, read as written
            out.append(line)
            in_math = "$$" not in line
            continue
        if in_comment < 0 and _MATH_BLOCK.match(line):
            out.append(line)
            in_math = "$$" not in line.strip()[2:]  # opened here, closed on a later line
            continue
        raw = line
        # each rewrite runs only where its mark is: most prose lines have none (1 MB: 0.1 s)
        if in_comment >= 0 or "%%" in line:
            line, still, began = _strip_comments(line, in_comment >= 0)
            # a comment closed and opened again on this line is a new one, begun here
            in_comment = k if began else in_comment if still else -1
            if not line.strip() and raw.strip():
                hidden[k] = HIDDEN_COMMENT
        line = _read_prose(line, k, hidden, tags)
        if raw.strip() and not line.strip():
            hidden.setdefault(k, HIDDEN_MARKUP)
        out.append(line)
    warnings = []
    if in_comment >= 0:
        for k in range(in_comment, len(lines)):
            if k in hidden and hidden[k] == HIDDEN_COMMENT:
                hidden[k] = HIDDEN_UNCLOSED
        warnings.append(
            f"line {in_comment + 1}: a %% comment never closes: lines {in_comment + 1}-"
            f"{len(lines)} are hidden, as in Obsidian (close it with %%)"
        )
    return Reading(out, list(tags), hidden, warnings)


def _read_prose(line: str, k: int, hidden: dict[int, str], tags: dict[str, None]) -> str:
    """One prose line (comments already out) as a reader sees it: quote and callout markers,
    Logseq properties, images, links and block ids rewritten; why it reads as nothing goes
    into `hidden` (by its 0-based number `k`), its inline #tags into `tags`."""
    if line.lstrip().startswith(">"):
        m = _CALLOUT.match(line)
        line = m.group(3) if m else _QUOTE.sub("", line)
    if "::" in line and _LOGSEQ_PROP.match(line):
        line = ""
        hidden.setdefault(k, HIDDEN_PROPERTY)
    if "[" in line:
        before = line
        if "![" in line:
            line = _outside_literals(line, lambda t: _IMAGE.sub(lambda i: i.group(1), t))
        if "[[" in line:
            line = _outside_literals(line, lambda t: _WIKILINK.sub(_link, t))
        if before.strip() and not line.strip():
            hidden.setdefault(k, HIDDEN_EMBED)
    if "^" in line:
        before = line
        line = _outside_literals(line, _drop_block_id)
        if before.strip() and not line.strip():
            hidden.setdefault(k, HIDDEN_BLOCK_ID)
    if "#" in line:  # a heading's own `#`s are no tag (_TAG wants a word after `#`)
        for t in _TAG.findall(_without_literals(line)):
            if any(c.isalpha() for c in t):
                tags.setdefault(t.lower().rstrip("/"), None)
    return line


def readable_lines(lines: list[str], code: list[bool]) -> tuple[list[str], list[str]]:
    """The lines as a person reads them (same count, code untouched), and the inline #tags."""
    reading = read_lines(lines, code)
    return reading.lines, reading.tags


def _drop_block_id(text: str) -> str:
    return _BLOCK_ID.sub("", text)


def _without_literals(line: str) -> str:
    """`line` with its code spans and inline math blanked (same length)."""
    out = list(line)
    for a, b in literal_spans(line):
        out[a:b] = " " * (b - a)
    return "".join(out)


def _strip_comments(line: str, inside: bool) -> tuple[str, bool, bool]:
    """`line` without its `%%…%%` parts; whether a comment is still open after it, and whether
    that comment opened on this line. A `%%` inside inline code or math opens nothing; inside
    a comment the next `%%` closes it."""
    out: list[str] = []
    pos = 0
    began = False
    while True:
        if inside:
            mark = line.find("%%", pos)
            if mark < 0:
                return "".join(out), True, began
            inside, pos = False, mark + 2
            continue
        mark = _open_comment(line, pos)
        if mark < 0:
            out.append(line[pos:])
            return "".join(out), False, False
        out.append(line[pos:mark])
        inside, pos, began = True, mark + 2, True


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
