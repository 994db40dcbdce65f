"""Markdown's syntax, read once for memo: blocks, links, comments, and a note as a person reads it.

One rule each (the chunker, links, `memo related` and the note page use these, none its own):
frontmatter (`frontmatter_end`), fenced code (`fenced`), ATX headings `#`..`######`
(`heading`), block ids (`BLOCK_ID`), `%%` comments (`comment_spans`), the wikilink (`WIKILINK`:
a single `]` inside does not end it, a `[` or a line end does, as Obsidian 1.13.7 reads
`[[Sq]uare]]`), the markdown link and where a link points (`locate`). `read_lines` reads a note
as Obsidian shows it, line for line, interpreting syntax only where Obsidian does: never in
fenced code, block math, inline code or inline math (`literal_spans`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

# ---------------------------------------------------------------------- blocks
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
_HEADING = re.compile(r"( {0,3}(#{1,6}))(?:[ \t](.*))?")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t])#+$")
MATH_BLOCK = re.compile(r"^\s*\$\$")  # a line opening (or closing) block math


def frontmatter_end(lines: list[str]) -> int:
    """The 0-based line closing the frontmatter (`---` on line 1 up to `---` or `...`); 0
    when the note has none (or it never closes)."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    return next((k for k in range(1, len(lines)) if lines[k].rstrip() in ("---", "...")), 0)


def _fences(lines: list[str], start: int) -> list[int]:
    """Each line's place in fenced code from `start` on: 0 outside, 1 inside, 2 a fence line
    (opening or closing). A fence closes at a run of its own character at least as long; an
    unclosed one runs to the end; ```x``` on one line is inline code."""
    where = [0] * len(lines)
    fence = ""  # the opening fence while inside one
    for k in range(start, len(lines)):
        line = lines[k]
        if fence:
            close = _FENCE_CLOSE.fullmatch(line)
            if close and close[1][0] == fence[0] and len(close[1]) >= len(fence):
                fence, where[k] = "", 2
            else:
                where[k] = 1
            continue
        f = _FENCE.fullmatch(line)
        if f and not (f[1][0] == "`" and "`" in f[2]):
            fence, where[k] = f[1], 2
    return where


def fenced(lines: list[str], start: int = 0) -> list[bool]:
    """Whether each line lies in fenced code, its fences included (lines before `start`, the
    frontmatter, never do): a `#` line there is no heading, a `[[` no link."""
    return [w > 0 for w in _fences(lines, start)]


def fence_lines(lines: list[str], start: int = 0) -> list[bool]:
    """Whether each line is a fence opening or closing fenced code (as `fenced` reads them)."""
    return [w == 2 for w in _fences(lines, start)]


def heading(line: str) -> tuple[int, str] | None:
    """(level 1-6, text) of an ATX heading line (`## Text ##`: its closing hashes dropped;
    `#` alone is an empty heading), else None. Setext headings are text. The caller knows
    whether the line is in fenced code."""
    h = _HEADING.fullmatch(line)
    if h is None:
        return None
    return len(h[2]), _CLOSING_HASHES.sub("", (h[3] or "").strip()).strip()


def heading_marker(line: str) -> str:
    """The `#`s (and up to 3 spaces before them) opening an ATX heading line; '' for none."""
    h = _HEADING.fullmatch(line)
    return h[1] if h else ""


# An Obsidian block id: `^id` (letters, digits, `_`, `-`) ending a line, after a space or alone
BLOCK_ID = re.compile(r"(?:(?<=\s)|^)\^([A-Za-z0-9][\w-]*)(?=\s*$)")


def block_id(line: str) -> str:
    """The id of the block id ending `line` (`text ^abc` -> 'abc'); '' for none."""
    m = BLOCK_ID.search(line) if "^" in line else None
    return m[1] if m else ""


# ---------------------------------------------------------------------- links
# `[[target]]` and `![[target]]`: a single `]` does not end it, a `[` or a line end does
# (Obsidian 1.13.7 reads `[[Sq]uare]]` as a link to `Sq]uare` and `[[a [[b]] c]]` as `b`)
WIKILINK = re.compile(r"(!?)\[\[([^\[\n]+?)\]\]")
# `[shown](destination "title")`, `![alt](dest)`: one level of brackets in the shown words;
# the destination in <angle brackets> may hold spaces, a bare one may not
MARKDOWN_LINK = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
    r"\(\s*(<[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:|^//")  # a destination that is a URL


def wikilink_parts(inner: str) -> tuple[str, str, str]:
    """A wikilink's inner text as (target, subpath, shown words), each as written (not
    stripped): `Note#Heading|shown`; `\\|` (a table's escaped bar) is a bar."""
    inner = inner.replace("\\|", "|")
    target, _, shown = inner.partition("|")
    path, _, sub = target.partition("#")
    return path, sub, shown


_IMAGE = re.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)")
_CALLOUT = re.compile(r"^(\s*(?:>\s*)+)\[!([\w-]+)\][+-]?[ \t]*(.*)$")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_LOGSEQ_PROP = re.compile(r"^\s*(?:-\s+)?(?:id|collapsed)::\s.*$")
_TAG = re.compile(r"(?:^|(?<=[\s(,]))#([^\s#.,;:!?()\[\]{}\"'`*|<>=]+)")
_NOTE_EXT = ("", ".md")
ALIASES_SHOWN = 3  # aliases added to a title, at most
ALIASES_CHARS = 60


def _target_words(inner: str) -> str:
    """The words a wikilink shows: its alias, else `note heading` (block refs dropped)."""
    note, anchor, alias = wikilink_parts(inner)
    if alias.strip():
        return alias.strip()
    note = note.strip().rsplit("/", 1)[-1]
    if note.lower().endswith(".md"):
        note = note[:-3]
    parts = [note] + [a.strip() for a in anchor.split("#") if a.strip() and not a.startswith("^")]
    return " ".join(p for p in parts if p)


def _link(m: re.Match[str]) -> str:
    embed, inner = m.group(1), m.group(2)
    if embed:
        name = wikilink_parts(inner)[0].strip()
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


# A comment's opening mark -> its closing mark: `%%` is what the index reads as a comment
COMMENTS = {"%%": "%%"}
HTML_COMMENTS = {**COMMENTS, "<!--": "-->"}  # the note page dims `<!-- -->` too


def comment_spans(
    line: str, open_mark: str = "", marks: dict[str, str] = COMMENTS
) -> tuple[list[tuple[int, int]], str]:
    """(start, end) of the comments of `line`, in order, a comment still open from an earlier
    line (`open_mark`: its opening mark) first; and the opening mark of the comment still
    open after the line ('' for none). A mark inside inline code or math opens nothing;
    inside a comment only its own closing mark counts."""
    out: list[tuple[int, int]] = []
    pos = start = 0
    literals: list[tuple[int, int]] | None = None
    while True:
        if open_mark:
            end_mark = marks[open_mark]
            at = line.find(end_mark, pos)
            if at < 0:
                out.append((start, len(line)))
                return out, open_mark
            pos = at + len(end_mark)
            out.append((start, pos))
            open_mark = ""
            continue
        found = [(at, m) for m in marks if (at := line.find(m, pos)) >= 0]
        if not found:
            return out, ""
        if literals is None:
            literals = literal_spans(line)
        at, mark = min(found)
        inside = next(((a, b) for a, b in literals if a <= at < b), None)
        if inside is not None:  # a mark in code or math: look again after that span
            pos = inside[1]
            continue
        open_mark, start, pos = mark, at, at + len(mark)


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


def _uncommented(lines: list[str], code: list[bool], start: int) -> Iterator[tuple[int, str, int]]:
    """(0-based line, its text without its `%%` comments, the line where the comment still
    open after it began or -1) for every line from `start` outside fenced code and block
    math (`$$` lines; a `$$` inside a comment opens none)."""
    in_comment = -1  # the line where the open comment began (-1: none)
    in_math = False
    for k in range(start, len(lines)):
        line = lines[k]
        if code[k]:
            continue
        if in_math:  # $$ … $$ over several lines: math, read as written
            in_math = "$$" not in line
            continue
        if in_comment < 0 and MATH_BLOCK.match(line):
            in_math = "$$" not in line.strip()[2:]  # opened here, closed on a later line
            continue
        if in_comment >= 0 or "%%" in line:
            line, still, began = strip_comments(line, in_comment >= 0)
            # a comment closed and opened again on this line is a new one, begun here
            in_comment = k if began else in_comment if still else -1
        yield k, line, in_comment


def interpreted(lines: list[str], code: list[bool], start: int) -> Iterator[tuple[int, str]]:
    """(0-based line, its text where Obsidian interprets syntax) for the lines from `start`
    that hold a `[`: fenced code and block math left out, `%%` comments removed, inline code
    and math blanked (the same states as read_lines: what links.py reads links from)."""
    for k, line, _ in _uncommented(lines, code, start):
        if "[" in line:
            yield k, without_literals(line) if "`" in line or "$" in line else line


def read_lines(lines: list[str], code: list[bool]) -> Reading:
    """Read `lines` as Obsidian shows them, line for line:

    - `[[Note]]`, `[[Note|shown words]]`, `[[Note#Heading]]`, `[[#Heading]]` read as `Note`,
      `shown words`, `Note Heading`, `Heading` (block references `#^id` dropped);
    - `![[Other note]]` reads as its name, `![[image.png]]` as nothing, `![alt](pic.png)` as
      its alt text; `> [!tip]- Title` as `Title`, and quoted lines lose their `> ` marker;
    - `%%a comment%%` (over several lines too), block ids (`… ^block-id`) and Logseq's
      `id::`/`collapsed::` properties read as nothing; `#tag`s stay text and are collected.

    Syntax is interpreted outside fenced code, block math, inline code and inline math only,
    and a `%%` comment that never closes runs to the end of the note, as in Obsidian (the
    coverage report and a warning say so). What reads as nothing says why (`hidden`)."""
    out = list(lines)
    tags: dict[str, None] = {}
    hidden: dict[int, str] = {}
    if len(code) != len(lines):
        raise ValueError(f"{len(lines)} lines but {len(code)} code flags")
    in_comment = -1  # the line where the comment still open began (-1: none)
    for k, line, open_since in _uncommented(lines, code, 0):
        raw, in_comment = lines[k], open_since
        if not line.strip() and raw.strip():
            hidden[k] = HIDDEN_COMMENT
        line = _read_prose(line, k, hidden, tags)
        if raw.strip() and not line.strip():
            hidden.setdefault(k, HIDDEN_MARKUP)
        out[k] = line
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
            line = _outside_literals(line, lambda t: WIKILINK.sub(_link, t))
        if before.strip() and not line.strip():
            hidden.setdefault(k, HIDDEN_EMBED)
    if "^" in line:
        before = line
        line = _outside_literals(line, _drop_block_id)
        if before.strip() and not line.strip():
            hidden.setdefault(k, HIDDEN_BLOCK_ID)
    if "#" in line:  # a heading's own `#`s are no tag (_TAG wants a word after `#`)
        for t in _TAG.findall(without_literals(line)):
            if any(c.isalpha() for c in t):
                tags.setdefault(t.lower().rstrip("/"), None)
    return line


def readable_lines(lines: list[str], code: list[bool]) -> tuple[list[str], list[str]]:
    """The lines as a person reads them (same count, code untouched), and the inline #tags."""
    reading = read_lines(lines, code)
    return reading.lines, reading.tags


def _drop_block_id(text: str) -> str:
    """`text` without the block id ending it, and the space before it."""
    m = BLOCK_ID.search(text)
    return text if m is None else text[: max(0, m.start() - 1)]


def without_literals(line: str) -> str:
    """`line` with its code spans and inline math blanked (same length)."""
    out = list(line)
    for a, b in literal_spans(line):
        out[a:b] = " " * (b - a)
    return "".join(out)


def strip_comments(line: str, inside: bool) -> tuple[str, bool, bool]:
    """`line` without its `%%…%%` parts (`inside`: a comment is open at its start); whether a
    comment is still open after it, and whether that comment opened on this line."""
    spans, still = comment_spans(line, "%%" if inside else "")
    text, last = [], 0
    for a, b in spans:
        text.append(line[last:a])
        last = b
    text.append(line[last:])
    began = bool(still) and not (inside and len(spans) == 1)
    return "".join(text), bool(still), began


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


# ---------------------------------------------------------------------- where a link points
_DROP = re.compile(r"[\[\]#^|:%*`]")
_ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)])\s")


def headings(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    """(0-based line, level, text) of every ATX heading outside frontmatter and fenced code."""
    end = frontmatter_end(lines)
    start = end + 1 if end else 0
    code = fenced(lines, start)
    for k in range(start, len(lines)):
        h = None if code[k] else heading(lines[k])
        if h is not None:
            yield k, *h


def section(lines: list[str], line: int, levels: int) -> tuple[int, int]:
    """The 1-based lines of the section holding `line` (at most the note's last): from its
    heading (of level 1 to `levels`) to the line before the next such heading."""
    first, last = 1, len(lines)
    for k, level, _ in headings(lines):
        if level > levels:
            continue
        if k + 1 <= line:
            first = k + 1
        else:
            last = k
            break
    return first, last


def heading_key(heading: str) -> str:
    """A heading as a link names it: what Obsidian leaves out of a heading link dropped,
    spaces collapsed, case folded."""
    return " ".join(_DROP.sub(" ", unicodedata.normalize("NFC", heading)).split()).casefold()


def locate(lines: list[str], sub: str) -> int | None:
    """The 1-based line a link's subpath names in a note: the first line of the block `^id`
    (an id on a line of its own marks the block above it), or the heading path `A#B` (each
    heading after the one before it; else the last one anywhere)."""
    if sub.startswith("^"):
        wanted = sub[1:].strip()
        at = next((k for k, t in enumerate(lines) if wanted and block_id(t) == wanted), None)
        if at is None:
            return None
        if _ITEM.match(lines[at]):  # a list item's id marks that item
            return at + 1
        if lines[at].strip().startswith("^"):  # a list, quote or table's id, after a blank
            while at > 0 and not lines[at - 1].strip():
                at -= 1
            at -= 1 if at > 0 else 0
        while at > 0 and lines[at - 1].strip() and heading(lines[at - 1]) is None:
            at -= 1  # up to the paragraph's first line (a heading above is no part of it)
        return at + 1
    parts = [heading_key(p) for p in sub.split("#") if p.strip()]
    if not parts:
        return None
    heads = [(k, heading_key(text)) for k, _, text in headings(lines)]
    at = -1
    for part in parts:
        at = next((k for k, h in heads if k > at and h == part), -2)
        if at == -2:
            return next((k + 1 for k, h in heads if h == parts[-1]), None)
    return at + 1


def around_link(text: str, target: str, chars: int) -> str:
    """A long line cut to `chars` around the link to `target` (else its first link)."""
    if len(text) <= chars:
        return text
    at = text.casefold().find(target.casefold())
    if at < 0:
        at = max(0, min((i for i in (text.find("[["), text.find("](")) if i >= 0), default=0))
    lo = max(0, at - chars // 3)
    hi = min(len(text), lo + chars)
    return ("… " if lo else "") + text[lo:hi].strip() + (" …" if hi < len(text) else "")


# what is not prose: code, HTML tags, addresses, link targets (their visible words stay)
_NOT_PROSE = re.compile(r"```.*?```|~~~.*?~~~|`[^`\n]*`|<[^>\n]*>|https?://\S+|\[\[[^\]|]*\|", re.S)


def prose(text: str) -> str:
    """`text` with what a reader does not read as words blanked out: fenced and inline code,
    HTML tags, web addresses and a wikilink's target where it shows another text."""
    return _NOT_PROSE.sub(" ", text)


# ---------------------------------------------------------------------- tables
_CELL = re.compile(r"(?<!\\)\|")  # a cell border: a pipe not escaped (`[[a\|b]]` is text)
_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def is_table_row(text: str) -> bool:
    return text.lstrip().startswith("|")


def table_rows(lines: list[str], first: int, last: int) -> str:
    """The rows `first..last` of the table they are in, under its header (its first row, when
    a `|---|` rule follows it), each row's cells stripped of their padding."""
    top = first
    while top > 0 and is_table_row(lines[top - 1]):
        top -= 1
    header = top if top + 1 < len(lines) and _RULE.match(lines[top + 1]) else None
    rows = [i for i in range(first, min(last, len(lines) - 1) + 1) if is_table_row(lines[i])]
    keep = ([header] if header is not None else []) + [
        i for i in rows if i != header and not _RULE.match(lines[i])
    ]
    if header is not None and header < first - 2:
        keep.insert(1, -1)  # rows left out between the header and the focus
    return "\n".join("…" if i < 0 else _compact(lines[i]) for i in keep)


def _compact(row: str) -> str:
    cells = [c.strip() for c in _CELL.split(row.strip().strip("|"))]
    return "| " + " | ".join(cells) + " |"
