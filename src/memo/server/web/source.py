"""A note's lines as written, each decorated for reading: the note page's view of a note.

The page shows the file, not the index's reading of it: every character of every line is on the
page, in order, as `memo show` prints it, and `path:line` lands on that line. Markup is kept and
marked up, never removed (links open their notes, embeds are labelled, callouts boxed, comments
dimmed; a line the index reads as nothing says why in its tooltip). Decoration only wraps text in
elements, so a line's element text is exactly the file's line (tests/test_web.py checks it in
Chromium); syntax is decorated only where Obsidian interprets it, never in code or math, and
every piece is escaped (`Markup`). Each construct: docs/design.md, "server/web/source.py".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import unquote

from markupsafe import Markup

from ...collection.markdown import (
    BLOCK_ID,
    HTML_COMMENTS,
    MARKDOWN_LINK,
    MATH_BLOCK,
    SCHEME,
    WIKILINK,
    comment_spans,
    fence_lines,
    fenced,
    frontmatter_end,
    heading_marker,
    literal_spans,
    read_lines,
    wikilink_parts,
)
from ...library import ATTACHMENTS, link_key
from .highlight import marked

_QUOTE = re.compile(r"[ \t]*(?:>[ \t]?)+")
_CALLOUT = re.compile(r"\[!([\w-]+)\][+-]?")
_TABLE = re.compile(r"[ \t]*\|")
_FM_KEY = re.compile(r"[ \t]*[^\s:#][^:]*:(?=\s|$)")
_URL = re.compile(r"https?://", re.IGNORECASE)

# What an embedded file is, by its extension (links.ATTACHMENTS holds them all)
_MEDIA = {
    "image": "avif bmp gif heic ico jpeg jpg png svg tif tiff webp",
    "audio": "aac flac m4a mp3 oga ogg opus wav",
    "video": "3gp avi m4v mkv mov mp4 ogv webm",
}
MEDIA = {ext: kind for kind, exts in _MEDIA.items() for ext in exts.split()}

# Obsidian's callout types and their aliases, by the colour they share (memo.css: .co-*)
_CALLOUTS = {
    "note": "note info todo",
    "tip": "tip hint important abstract summary tldr",
    "success": "success check done",
    "question": "question help faq",
    "warning": "warning caution attention",
    "danger": "danger error failure fail missing bug",
    "example": "example",
    "quote": "quote cite",
}
CALLOUT_COLOUR = {alias: kind for kind, names in _CALLOUTS.items() for alias in names.split()}


@dataclass(frozen=True, slots=True)
class Targets:
    """Where this note's links open, as `memo related` resolved them: (target folded, `.md`
    dropped; heading or ^block folded) -> the page's link there; and the links it found
    opening no note."""

    opens: dict[tuple[str, str], str] = field(default_factory=dict)
    lost: frozenset[tuple[str, str]] = frozenset()

    @staticmethod
    def key(target: str, sub: str) -> tuple[str, str]:
        return link_key(target, sub)

    def href(self, target: str, sub: str) -> tuple[str, bool]:
        """The link to the note a link opens (at its heading's line), else ''; and whether
        the link is known to open no note."""
        key = self.key(target, sub)
        return self.opens.get(key, ""), key in self.lost


@dataclass(frozen=True, slots=True)
class SourceLine:
    text: Markup  # the line, every character of it, decorated
    kind: str = ""  # CSS classes of the line: fm, code, fence, math, h h2, quote, co co-tip, tbl
    why: str = ""  # why the index reads it as nothing (markdown.HIDDEN_*), '' when it reads it


@dataclass(slots=True)
class _State:
    """What runs over lines: a %% or <!-- --> comment (its opening mark), block math, a
    callout (its colour)."""

    comment: str = ""
    math: bool = False
    callout: str = ""


def source_lines(
    lines: list[str], first: int, stems: frozenset[str], targets: Targets | None = None
) -> list[SourceLine]:
    """Lines `first`.. (1-based) of `lines`, a note's lines from its first, decorated; the
    lines before `first` are read only for what runs into them (frontmatter, fences,
    comments, math, callouts)."""
    targets = targets or Targets()
    if not lines:
        return []
    fm_end = frontmatter_end(lines)
    body = fm_end + 1 if fm_end else 0
    code = fenced(lines, body)  # a fence opens after the frontmatter
    fences = fence_lines(lines, body)
    hidden = read_lines(lines[body:], code[body:]).hidden
    state = _State()
    out: list[SourceLine] = []
    for k, line in enumerate(lines):
        if k < first - 1:  # before a long note's window: only its state carries over
            _line(line, k, fm_end, (code, fences), state, frozenset(), targets)
            continue
        why = hidden.get(k - body, "") if k >= body else ""
        text, kind = _line(line, k, fm_end, (code, fences), state, stems, targets)
        out.append(SourceLine(text, kind, why))
    return _ends(out)


def _ends(lines: list[SourceLine]) -> list[SourceLine]:
    """Each callout's last line marked (`co-last`), so that its box closes there."""
    out = []
    for i, x in enumerate(lines):
        nxt = lines[i + 1].kind if i + 1 < len(lines) else ""
        if x.kind.startswith("co ") and (not nxt.startswith("co ") or "co-first" in nxt):
            x = SourceLine(x.text, x.kind + " co-last", x.why)
        out.append(x)
    return out


def _line(
    line: str,
    k: int,
    fm_end: int,
    blocks: tuple[list[bool], list[bool]],
    state: _State,
    stems: frozenset[str],
    targets: Targets,
) -> tuple[Markup, str]:
    """One line decorated, and its classes; `state` carried to the next line. `blocks`:
    whether each line is fenced code, and whether it is a fence."""
    code, fences = blocks
    if fm_end and k <= fm_end:
        if k in (0, fm_end):
            return _span("mk", line, stems), "fm"
        key = _FM_KEY.match(line)
        if key:
            # no %% comment in YAML: a throwaway state, the body's is left as it was
            value = _inline(line[key.end() :], _State(), stems, targets)
            return _span("key", key.group(), stems) + value, "fm"
        return _inline(line, _State(), stems, targets), "fm"
    if code[k]:
        state.callout = ""
        return marked(line, stems), "code fence" if fences[k] else "code"
    if state.math or (not state.comment and MATH_BLOCK.match(line)):
        state.math = "$$" not in line.strip()[2:] if not state.math else "$$" not in line
        return marked(line, stems), "math"
    quote = _QUOTE.match(line) if not state.comment else None
    if quote:
        rest = line[quote.end() :]
        head = _span("mk", quote.group(), stems)
        callout = _CALLOUT.match(rest)
        if callout:
            name = callout.group(1).lower()
            state.callout = CALLOUT_COLOUR.get(name, "note")
            fold = {"-": ", folded in Obsidian until opened", "+": ", foldable"}
            said = f"a callout: {name}{fold.get(callout.group()[-1], '')}"
            badge = _span("co-mark", callout.group(), stems, said)
            tail = _inline(rest[callout.end() :], state, stems, targets)
            return head + badge + tail, f"co co-{state.callout} co-first"
        body = _inline(rest, state, stems, targets)
        return head + body, f"co co-{state.callout}" if state.callout else "quote"
    state.callout = ""
    if _TABLE.match(line):
        return _inline(line, state, stems, targets), "tbl"
    marker = heading_marker(line) if not state.comment else ""
    if marker:
        title = _inline(line[len(marker) :], state, stems, targets)
        return _span("mk", marker, stems) + title, f"h h{marker.count('#')}"
    return _inline(line, state, stems, targets), ""


def _span(
    cls: str, text: str, stems: frozenset[str], title: str = "", body: Markup | None = None
) -> Markup:
    """`text` (or `body`, already decorated) in a span of class `cls`."""
    inner = marked(text, stems) if body is None else body
    if not inner:
        return Markup("")
    if title:
        return Markup('<span class="%s" title="%s">%s</span>') % (cls, title, inner)
    return Markup('<span class="%s">%s</span>') % (cls, inner)


# ---------------------------------------------------------------------- within a line
def _inline(line: str, state: _State, stems: frozenset[str], targets: Targets) -> Markup:
    """A line's text with its comments, code spans, links, embeds and block id marked up."""
    if not line:
        return Markup("")
    literals = literal_spans(line)
    comments = _comments(line, state)
    literals = [(a, b) for a, b in literals if not _inside(a, comments)]
    parts: list[tuple[int, int, Markup]] = []
    for a, b in comments:
        parts.append((a, b, _span("cmt", line[a:b], stems, "a comment: Obsidian does not show it")))
    for a, b in literals:
        parts.append((a, b, _span("ic", line[a:b], stems)))
    text = _blanked(line, [*comments, *literals])  # where syntax is read, same length
    if "[" in text:
        for m in WIKILINK.finditer(text):
            parts.append((m.start(), m.end(), _wikilink(line, m, stems, targets)))
        text = _blanked(text, [(m.start(), m.end()) for m in WIKILINK.finditer(text)])
        if "](" in text:
            for m in MARKDOWN_LINK.finditer(text):
                parts.append((m.start(), m.end(), _mdlink(line, m, stems, targets)))
            text = _blanked(text, [(m.start(), m.end()) for m in MARKDOWN_LINK.finditer(text)])
    if "^" in text:
        block = BLOCK_ID.search(text)
        if block:
            parts.append((block.start(), block.end(), _span("bid", block.group(), stems)))
    parts.sort(key=lambda p: p[0])
    out: list[Markup] = []
    at = 0
    for a, b, html in parts:
        out += [marked(line[at:a], stems), html]
        at = b
    out.append(marked(line[at:], stems))
    return Markup("").join(out)


def _inside(at: int, spans: Iterable[tuple[int, int]]) -> bool:
    return any(a <= at < b for a, b in spans)


def _blanked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def _comments(line: str, state: _State) -> list[tuple[int, int]]:
    """(start, end) of the `%%…%%` and `<!--…-->` comments of a line, a comment open from an
    earlier line first (markdown.comment_spans); `state` says which is still open after it."""
    spans, state.comment = comment_spans(line, state.comment, HTML_COMMENTS)
    return [(a, b) for a, b in spans if a < b]


def _wikilink(line: str, m: re.Match[str], stems: frozenset[str], targets: Targets) -> Markup:
    """`[[target#sub|shown]]` or `![[…]]`, every character kept: its marks and target
    dimmed, linked to the note it opens; an embedded file labelled by its kind."""
    embed = bool(m.group(1))
    inner = line[m.start(2) : m.end(2)]
    bar, shown_at = _alias_bar(inner)
    target_part = inner[:bar] if bar >= 0 else inner
    path, sub, _ = wikilink_parts(inner)
    path = path.strip()
    opener = Markup('<span class="mk">%s</span>') % ("![[" if embed else "[[")
    closer = Markup('<span class="mk">]]</span>')
    if bar >= 0:
        shown = _span("tg", target_part, stems) + _span("mk", inner[bar:shown_at], stems)
        shown += marked(inner[shown_at:], stems)
    else:
        shown = marked(inner, stems)
    body = opener + shown + closer
    ext = path.rsplit("/", 1)[-1].rsplit(".", 1)[-1].lower() if "." in path else ""
    if embed and ext in ATTACHMENTS:
        return _embed(body, MEDIA.get(ext, "file"), path)
    href, lost = targets.href(path, sub.strip()) if (path or sub.strip()) else ("", False)
    cls = "wl embed em-note" if embed else "wl"
    return _link(cls, href, lost, body, f"embeds the note {path}" if embed else "")


def _alias_bar(inner: str) -> tuple[int, int]:
    """Where a wikilink's `|` (in a table `\\|`) starts and its shown words start; -1: none."""
    at = inner.find("|")
    if at < 0 or not inner[at + 1 :].strip():
        return -1, -1
    return (at - 1 if at > 0 and inner[at - 1] == "\\" else at), at + 1


def _mdlink(line: str, m: re.Match[str], stems: frozenset[str], targets: Targets) -> Markup:
    """`[shown](dest)` or `![alt](dest)`, every character kept: an image labelled, a link to
    a note or an http(s) address linked."""
    whole = line[m.start() : m.end()]
    dest = m.group(3)
    dest = dest[1:-1].strip() if dest.startswith("<") else dest
    body = marked(whole, stems)
    if m.group(1):
        ext = dest.split("#", 1)[0].rsplit(".", 1)[-1].lower() if "." in dest else ""
        if not SCHEME.match(dest) and ext not in ATTACHMENTS:
            path, _, sub = unquote(dest).partition("#")
            return _link("wl embed em-note", *targets.href(path, sub), body)
        return _embed(body, MEDIA.get(ext, "file"), dest)
    if _URL.match(dest):
        return Markup('<a class="ext" href="%s" rel="noopener noreferrer">%s</a>') % (dest, body)
    if not dest or SCHEME.match(dest):
        return body
    path, _, sub = unquote(dest).partition("#")
    return _link("wl", *targets.href(path.strip(), sub.strip()), body)


def _embed(body: Markup, kind: str, name: str) -> Markup:
    title = f"an embedded {kind} ({name}): the page shows its source, not the {kind}"
    return Markup('<span class="embed em-%s" title="%s">%s</span>') % (kind, title, body)


def _link(cls: str, href: str, lost: bool, body: Markup, title: str = "") -> Markup:
    """A link's decorated source text: a link to `href`, else a span (marked when the link
    is known to open no note)."""
    if not href:
        if lost:
            cls, title = f"{cls} lost", "opens no note in the library"
        return _span(cls, "", frozenset(), title, body)
    if title:
        return Markup('<a class="%s" href="%s" title="%s">%s</a>') % (cls, href, title, body)
    return Markup('<a class="%s" href="%s">%s</a>') % (cls, href, body)
