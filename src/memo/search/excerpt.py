"""Reading a range of a note, and the citation hash that says whether it still reads the same.

A hit cites lines `line..end_line` of a note and carries `cite`, a short hash of those lines as
they were when the search ran. `memo_get` / `memo show` return the same hash for the same range
read now: if the two differ, the note was edited after the search and the agent should not quote
the old text. Lines are counted the way the chunker counts them (`decode`: LF, CR and CRLF all end
a line), so `line` in a hit and in `memo show` always point at the same place.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..collection import skips
from ..collection.chunker import decode
from ..errors import NotFoundError
from ..outputs import EMPTY, Published, doc
from ..requests import MAX_LINES
from . import budget

DEFAULT_LINES = 40
MAX_READ_BYTES = 20 * 1024 * 1024


class LineError(NotFoundError):
    """A line past the end of a note (the note changed since the search, or a typo)."""


@dataclass(frozen=True, slots=True)
class Excerpt(Published):
    """Lines of a note, read now, and their citation hash."""

    path: str = doc("Note path relative to the library root.")
    abs_path: str = doc("Absolute path, for your file-reading tool.")
    line: int = doc("First line returned, 1-based.")
    end_line: int = doc("Last line returned (line - 1 when none is).")
    total_lines: int = doc("Lines of the note.")
    text: str = doc("The lines returned.")
    cite: str = doc("Hash of the lines returned; compare with a hit's cite.")
    more_lines: int = doc("Lines of the note after end_line, not returned.")  # 0: it ends there
    next_line: int | None = doc(  # set from the two above
        "The line to read next (end_line + 1), or null at the note's end.", init=False
    )
    more: tuple[Excerpt, ...] = doc(
        "With `paths`: each of them read, in order, within the one max_tokens (none of its "
        "lines when nothing was left: read it from next_line).",
        default=(),
        omit=EMPTY,
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "next_line", self.end_line + 1 if self.more_lines else None)


def cite_hash(lines: list[str]) -> str:
    """12 hex digits identifying exactly these lines (LF-joined)."""
    return hashlib.blake2b("\n".join(lines).encode("utf-8"), digest_size=6).hexdigest()


def note_lines(path: Path) -> list[str]:
    data = path.read_bytes()[:MAX_READ_BYTES]
    text, _ = decode(data)
    return text.split("\n")


def text_lines(path: Path, rel: str) -> list[str]:
    """A note's lines to show someone; NotFoundError for a `.md` that is binary (its bytes would
    reach a terminal as they are)."""
    data = path.read_bytes()[:MAX_READ_BYTES]
    if why := skips.binary_why(data):
        raise NotFoundError(
            f"{rel} is {skips.Skip.of(skips.BINARY, why=why).why}: memo does not print it",
            "memo reads text notes; open that file with the program that wrote it.",
        )
    return decode(data)[0].split("\n")


def cite_range(
    path: Path, line: int, end_line: int, read: dict[Path, list[str] | None] | None = None
) -> str:
    """The citation hash of lines line..end_line of the note as it is now ('' if unreadable).

    `read` caches each note's lines for the caller, so hits from one note read it once.
    """
    cache: dict[Path, list[str] | None] = {} if read is None else read
    if path not in cache:
        try:
            cache[path] = note_lines(path)
        except OSError:
            cache[path] = None
    lines = cache[path]
    if lines is None:
        return ""
    return cite_hash(lines[max(0, line - 1) : max(0, end_line)])


def read_excerpt(
    path: Path, rel: str, line: int | None = None, lines: int | None = None
) -> Excerpt:
    """Lines of a note from `line` (default: the whole note, up to MAX_LINES)."""
    all_lines = text_lines(path, rel)
    if all_lines and all_lines[-1] == "":
        all_lines.pop()  # the newline that ends the last line does not start another
    total = len(all_lines)
    start = max(1, line or 1)
    if start > max(total, 1):
        raise LineError(
            f"{rel} has {total} lines; line {start} is past its end",
            f"Ask for a line from 1 to {total}: a hit's `line`, or none for the whole note.",
        )
    count = min(MAX_LINES, lines if lines is not None else (DEFAULT_LINES if line else MAX_LINES))
    chosen = all_lines[start - 1 : start - 1 + count]
    end = start + len(chosen) - 1
    return Excerpt(
        path=rel,
        abs_path=str(path),
        line=start,
        end_line=end,
        total_lines=total,
        text="\n".join(chosen),
        cite=cite_hash(chosen),
        more_lines=total - end,
    )


def read_excerpts(
    notes: list[tuple[Path, str, int | None, int | None]],
    max_tokens: int | None,
    count: Callable[[str], int],
) -> Excerpt:
    """Each (file, path, line, lines) read in order, the first with the others in its `more`,
    all of them within one `max_tokens` (None: no bound): each gets what the ones before left,
    the first at least a line (a read that returns nothing helps no one), a later one no line
    at all when its first does not fit (its `next_line` says where it would have started)."""
    read: list[Excerpt] = []
    left = max_tokens
    for full, rel, line, lines in notes:
        try:
            ex = read_excerpt(full, rel, line, 0 if left == 0 else lines)
            if left and ex.text:
                rows = ex.text.split("\n")
                n = budget.fit_lines(rows, left, count)
                if n == 1 and read and count(rows[0]) > left:
                    n = 0
                if n != len(rows):  # cut: the first n lines, read again for their cite
                    ex = read_excerpt(full, rel, ex.line, n)
        except OSError as e:
            raise NotFoundError(f"cannot read {rel}: {e.strerror or e}") from e
        if left is not None and ex.text:
            left = max(0, left - count(ex.text))
        read.append(ex)
    return replace(read[0], more=tuple(read[1:]))
