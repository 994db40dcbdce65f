"""The chunker: split a markdown note into heading-scoped chunks sized for the embedder.

Pure: no I/O. Borders are ATX headings `#`..`###` (`SECTION_LEVELS`; deeper ones stay in their
section) outside fenced code, as markdown.py reads both; a section longer than the
budget is split at paragraphs, then sentences/lines, then words, and only as a last resort at
character positions, with ~15% overlap between consecutive pieces (splitter.py). Token counts
come from the caller (`count_tokens`); every piece is verified exactly. Every body line with
words is in a chunk or accounted for (`coverage`).
"""

from __future__ import annotations

import bisect
import codecs
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from .links import NoteLinks, extract
from .markdown import (
    fenced,
    frontmatter_end,
    frontmatter_tags,
    heading,
    note_title,
    read_lines,
    readable_lines,
)
from .meta import MAX_META_BYTES, SafeLoader, yaml_too_big
from .splitter import Splitter
from .splitter import passage_text as passage_text  # what the model reads of a chunk

# v2: markdown read as a person reads it (markdown.py), the note's title heads every path
# v3: nothing interpreted inside code or math; a heading with nothing under it is a chunk
# v4: a `%%` comment closed and reopened on one line is no comment left open (markdown.py)
# v5: a wikilink with a single `]` inside (`[[Sq]uare]]`) reads as its words, as links.py and
#     Obsidian read it (markdown.WIKILINK, the one rule); before, the reading left it as written
CHUNKER_VERSION = "headings-v5"

SECTION_LEVELS = 3  # headings `#`..`###` start a section: a chunking choice, not markdown's


@dataclass(frozen=True, slots=True)
class Chunk:
    heading: str  # heading path "H1 > H2 > H3" ('' for text before any heading)
    line: int  # 1-based line in the original file where this chunk starts
    ord: int  # 0-based order of the chunk within the file
    text: str  # body without the heading line, stripped of leading/trailing blank lines


# Why lines with words in the file are in no chunk, on purpose (besides markdown.HIDDEN_*)
EMPTY_HEADING = "a heading with no text under it"
CUT = "past the chunks a note may have (MEMO_MAX_CHUNKS_PER_FILE)"
LOST = "in no chunk (a bug of memo's: please report it)"


@dataclass(frozen=True, slots=True)
class Note:
    meta: dict[str, Any]
    chunks: list[Chunk]
    warnings: list[str]
    tags: list[str] = field(default_factory=list)  # frontmatter tags, then inline #tags
    title: str = ""  # markdown.note_title: what heads every chunk's heading path
    # Lines of the body that hold words in the file and are in no chunk, as 1-based inclusive
    # (first, last, why) runs: every line is indexed or accounted for (`coverage`). A run whose
    # why is LOST is text memo dropped without meaning to.
    dropped: list[tuple[int, int, str]] = field(default_factory=list)
    links: NoteLinks = field(default_factory=NoteLinks)  # its links and aliases (links.py)

    @property
    def lost(self) -> int:
        """Lines with words that no chunk holds and no rule dropped."""
        return sum(b - a + 1 for a, b, why in self.dropped if why == LOST)


def decode(data: bytes) -> tuple[str, list[str]]:
    """Bytes -> text with LF newlines; never raises. Problems are returned as warnings."""
    warnings: list[str] = []
    skip = 3 if data.startswith(codecs.BOM_UTF8) else 0
    try:
        text = data[skip:].decode("utf-8")
    except UnicodeDecodeError as e:
        text = data[skip:].decode("utf-8", errors="replace")
        warnings.append(f"invalid UTF-8 at byte {e.start + skip}: decoded with replacement")
    if "\x00" in text:
        # NUL truncates strings in C APIs down the line; mark it visibly instead of dropping text.
        where = data.find(b"\x00")
        warnings.append(
            f"NUL bytes ({text.count(chr(0))}, first at byte {where}): replaced with U+FFFD"
        )
        text = text.replace("\x00", "\ufffd")
    # Splitting on \n alone afterwards (not str.splitlines) keeps the line numbers of the file.
    return text.replace("\r\n", "\n").replace("\r", "\n"), warnings


def chunk_note(
    text: str,
    count_tokens: Callable[[str], int],
    budget: int = 400,
    max_tokens: int = 512,
    name: str = "",
    max_chunks: int | None = None,
) -> Note:
    """Parse frontmatter and split `text` (as returned by `decode`) into chunks.

    The text is read as a person reads it (markdown.py: wikilinks, embeds, callouts, comments,
    block ids), line for line. A note without an H1 is titled by its frontmatter `title`, else
    its file `name`: that title (with the note's `aliases`) heads every chunk's heading path.

    Args:
        count_tokens: tokens the model sees for a passage, prefix and special tokens included.
        budget: target size of every piece of a split section (clamped to `max_tokens`).
        max_tokens: hard limit of the model; no chunk's passage ever exceeds it.
        name: the note's file name without `.md` (its title when it has no H1 or `title`).
        max_chunks: keep at most this many chunks (the rest is reported in `dropped`).
    """
    # Idempotent, so raw text that skipped `decode` is handled the same way.
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    raw = text.split("\n")
    meta, start, warnings = _frontmatter(raw)
    code = fenced(raw, start)
    links = extract(raw, code, start, meta)
    reading = read_lines(raw, code)
    lines, inline_tags = reading.lines, reading.tags
    warnings += reading.warnings
    lines[:start] = raw[:start]
    splitter = Splitter(count_tokens, min(budget, max_tokens), warnings)
    sections, code = _sections(lines, start)
    h1 = next((s.title for s in sections if s.level == 1 and s.title), None)
    title = note_title(name, meta, h1)
    sections = _titled(sections, title, h1)
    found = [piece for pieces in _pieces(splitter, sections, lines, code) for piece in pieces]
    chunks = [Chunk(h, line, i, t) for i, (h, line, t) in enumerate(found)]
    cut: list[Chunk] = []
    if max_chunks is not None and len(chunks) > max_chunks:
        warnings.append(
            f"{len(chunks)} chunks; only the first {max_chunks} are indexed "
            "(MEMO_MAX_CHUNKS_PER_FILE)"
        )
        chunks, cut = chunks[:max_chunks], chunks[max_chunks:]
    tags = list(dict.fromkeys(frontmatter_tags(meta) + inline_tags))
    dropped = coverage(raw, lines, start, sections, chunks, cut, reading.hidden)
    lost = sum(b - a + 1 for a, b, why in dropped if why == LOST)
    if lost:
        warnings.append(f"{lost} lines are in no chunk: {line_runs(dropped, LOST)}")
    return Note(meta, chunks, warnings, tags, title, dropped, links)


def title_at(text: str, line: int, count_tokens: Callable[[str], int], name: str = "") -> str:
    """What titles line `line` of a note: the heading path of the last chunk starting at or
    before it, else the note's title, else its file `name` (a search titles a hit so)."""
    note = chunk_note(text, count_tokens, name=name)
    above = [c.heading for c in note.chunks if c.line <= line and c.heading]
    return above[-1] if above else note.title or name


def _pieces(
    splitter: Splitter, sections: list[_Section], lines: list[str], code: list[bool]
) -> list[list[tuple[str, int, str]]]:
    """Each section's (heading, line, text) pieces, in file order."""
    per = [
        splitter.section(sec.parts, lines[sec.lo : sec.hi], sec.lo + 1, code[sec.lo : sec.hi])
        for sec in sections
    ]
    if not any(per):
        # Headings but no body anywhere: the headings themselves are what can be found.
        return [
            splitter.section(sec.parts, [sec.title], sec.lo, [False]) if sec.title else []
            for sec in sections
        ]
    # A heading with nothing under it (nor under the headings below it) is still words a
    # reader sees, a note's H1 after a first paragraph among them: it is its own chunk,
    # read as its heading path, as in a note of headings only.
    for i, sec in enumerate(sections):
        leaf = i + 1 == len(sections) or sections[i + 1].level <= sec.level
        if sec.title and sec.level and leaf and not per[i]:
            per[i] = splitter.section(sec.parts, [sec.title], sec.lo, [False])
    return per


def coverage(
    raw: list[str],
    lines: list[str],
    start: int,
    sections: list[_Section],
    chunks: list[Chunk],
    cut: list[Chunk],
    hidden: dict[int, str],
) -> list[tuple[int, int, str]]:
    """Every body line that holds words in the file (`raw`) and lies in no chunk, with why:
    what reading dropped (`hidden`: a comment, an embed...), a heading with nothing under it,
    chunks cut by the cap, else LOST. 1-based inclusive runs of one reason, in file order."""
    held = [False] * len(raw)
    for c in chunks:
        for k in range(c.line - 1, min(len(raw), c.line + c.text.count("\n"))):
            held[k] = True
    past = [False] * len(raw)
    for c in cut:
        for k in range(c.line - 1, min(len(raw), c.line + c.text.count("\n"))):
            past[k] = True
    # A heading line is read as the heading path of the chunks of its section and of the
    # sections below it: held when one of those has a chunk.
    heading_at = {s.lo - 1: i for i, s in enumerate(sections) if s.level and s.lo - 1 >= start}
    firsts = sorted(c.line - 1 for c in chunks)
    why: list[str | None] = [None] * len(raw)
    for k in range(start, len(raw)):
        if held[k] or not raw[k].strip():
            continue
        if k in heading_at:
            s = sections[heading_at[k]]
            end = next(
                (t.lo - 1 for t in sections[heading_at[k] + 1 :] if t.level and t.level <= s.level),
                len(raw),
            )
            j = bisect.bisect_left(firsts, k)
            if j < len(firsts) and firsts[j] < end:
                continue
            why[k] = CUT if any(past[k:end]) else EMPTY_HEADING
        elif k in hidden:
            why[k] = hidden[k]
        elif past[k]:
            why[k] = CUT
        elif not lines[k].strip():
            why[k] = hidden.get(k, "markup only")
        else:
            why[k] = LOST
    runs: list[tuple[int, int, str]] = []
    for k, w in enumerate(why):
        if w is None:
            continue
        last = runs[-1] if runs else None
        if last and last[2] == w and all(not raw[j].strip() for j in range(last[1], k)):
            runs[-1] = (last[0], k + 1, w)  # one run across the blank lines between
        else:
            runs.append((k + 1, k + 1, w))
    return runs


def line_runs(dropped: list[tuple[int, int, str]], why: str) -> str:
    """The runs of `dropped` lines held back for `why`, as a warning names them: "lines 3,
    9-12", the first five, then "…". Public for tests/test_chunker_rules.py, which pins the
    wording: LOST lines, the warning it writes, come only from a bug of memo's."""
    spans = [f"{a}" if a == b else f"{a}-{b}" for a, b, w in dropped if w == why]
    return "lines " + ", ".join(spans[:5]) + (" …" if len(spans) > 5 else "")


def readable(text: str) -> list[str]:
    """The lines of a note (or of a part of one) as the index reads them, line for line:
    frontmatter as written, fenced code untouched, the rest through markdown.readable_lines."""
    raw = text.split("\n")
    _, start, _ = _frontmatter(raw)
    code = fenced(raw, start)
    lines, _ = readable_lines(raw, code)
    return raw[:start] + lines[start:]


def _titled(sections: list[_Section], title: str, h1: str | None) -> list[_Section]:
    """Every section's heading path headed by the note's title (markdown.note_title): under
    its H1 when it has one (the aliases added to it), else prepended to every path."""
    if not title:
        return sections
    out = []
    for s in sections:
        if h1 is None:
            parts = (title, *s.parts)
        elif s.parts and s.parts[0] == h1:
            parts = (title, *s.parts[1:])
        else:  # before the H1, or under a heading that came before it: left as written
            parts = s.parts
        out.append(replace(s, parts=parts))
    return out


def _frontmatter(lines: list[str]) -> tuple[dict[str, Any], int, list[str]]:
    """(meta, index of the first body line, warnings)."""
    if lines[0].rstrip() != "---":
        return {}, 0, []
    end = frontmatter_end(lines)
    if not end:
        return {}, 0, ["frontmatter opened on line 1 is never closed: read as text"]
    block = "\n".join(lines[1:end])
    if len(block) > MAX_META_BYTES:
        return {}, end + 1, [f"frontmatter longer than {MAX_META_BYTES} characters: not parsed"]
    try:
        data = yaml.load(block, Loader=SafeLoader)  # libyaml's when built with it: ~10x
    except Exception as e:  # noqa: BLE001 - yaml constructors also raise ValueError etc.
        # Why: a broken block is still the user's words; indexing it as text loses nothing.
        return {}, 0, [f"frontmatter is not valid YAML (read as text): {' '.join(str(e).split())}"]
    if data is None:
        return {}, end + 1, []
    if not isinstance(data, dict):
        return {}, 0, [f"frontmatter is a {type(data).__name__}, not a mapping: read as text"]
    if yaml_too_big(data):
        return {}, end + 1, ["frontmatter expands to too many values (an anchors bomb?): ignored"]
    return data, end + 1, []


@dataclass(frozen=True, slots=True)
class _Section:
    parts: tuple[str, ...]  # heading path, empty headings left out
    title: str  # the heading's own text
    lo: int  # body = lines[lo:hi]; lines[lo - 1] is the heading line (if any)
    hi: int
    level: int = 0  # the heading's level (0: the text before any heading)


def _sections(lines: list[str], start: int) -> tuple[list[_Section], list[bool]]:
    """Sections in file order, plus an `in fenced code` flag for every line."""
    code = fenced(lines, start)
    path = [""] * SECTION_LEVELS
    heads: list[tuple[tuple[str, ...], str, int, int]] = [((), "", start, 0)]
    for k in range(start, len(lines)):
        h = None if code[k] else heading(lines[k])
        if h is not None and h[0] <= SECTION_LEVELS:
            level, title = h
            path[level - 1 :] = [title] + [""] * (SECTION_LEVELS - level)
            heads.append((tuple(p for p in path if p), title, k + 1, level))
    ends = [lo - 1 for _, _, lo, _ in heads[1:]] + [len(lines)]
    sections = [
        _Section(p, t, lo, hi, level) for (p, t, lo, level), hi in zip(heads, ends, strict=True)
    ]
    return sections, code
