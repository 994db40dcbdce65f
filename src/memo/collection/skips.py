"""Why a note is not indexed: a kind a program reads, and the reason a person reads.

The walk (`files.py`) and the sync (`sync.py`) decline a note by naming its kind and the facts
they know (a size, an OS error); this module alone words each kind. The index stores the kind
beside the reason (`files.skip`, `files.note`), and `memo status` tells a failure (memo could
not read what should have been a note) from a choice (too large, binary, a FIFO) by the kind,
never by the reason's words.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

# Choices: memo will not index this file as it is.
TOO_LARGE = "too_large"
GREW = "grew"  # passed the size limit while being read
BINARY = "binary"
NOT_REGULAR = "not_regular"  # a FIFO, socket or device named *.md
BAD_NAME = "bad_name"  # a file name that is not UTF-8
BROKEN_LINK = "broken_link"
LINK_OUTSIDE = "link_outside"  # a symlink leading out of the library root
# Failures: the file or folder should have been read and could not be.
UNREADABLE = "unreadable"
UNSTATABLE = "unstatable"
FOLDER_UNREADABLE = "folder_unreadable"

UNKNOWN = ""  # a row of an index built before kinds were stored (rebuilt on its next use)

BINARY_SNIFF = 8192  # bytes read for NUL bytes: a text note has none
# Characters no text note is made of: bytes that are not UTF-8 (read as surrogate escapes),
# control characters but tab, newline, vertical tab, form feed and carriage return, and C1.
_NOT_TEXT = re.compile("[\x01-\x08\x0e-\x1f\x7f-\x9f\udc80-\udcff]")
NOT_TEXT_SHARE = 1 / 3  # random bytes: about 55%; a Latin-1 note in French: about 5%
NOT_TEXT_LEAST = 8  # fewer such characters never make a note binary (a short Latin-1 note)


def binary_why(data: bytes) -> str | None:
    """Why a `.md` is no text, None when it is text: NUL bytes at its start, or more than a
    third of its start not UTF-8 text (random bytes without a NUL were indexed as 148 chunks
    of noise, one decoding warning saying so). The index skips such a file and `memo show`
    refuses it, with this reason. A note with a few bytes of another encoding (Latin-1 é) is
    text: it is read with replacement characters and a warning."""
    head = data[:BINARY_SNIFF]
    if b"\x00" in head:
        return "NUL bytes in a .md file"
    reader = codecs.getincrementaldecoder("utf-8")("surrogateescape")
    text = reader.decode(head, final=len(data) <= BINARY_SNIFF)  # a cut character: not counted
    found = _NOT_TEXT.findall(text)
    bad = sum(len(c.encode("utf-8", "surrogateescape")) for c in found)  # in bytes
    if len(found) < NOT_TEXT_LEAST or bad <= len(head) * NOT_TEXT_SHARE:
        return None
    return (
        f"{bad * 100 // len(head)}% of its first {len(head):,} bytes are not UTF-8 text "
        "(save it as UTF-8 if it is a note)"
    )


def is_binary(data: bytes) -> bool:
    """The one rule for a `.md` that is no text (`binary_why`)."""
    return binary_why(data) is not None


MESSAGES = {
    TOO_LARGE: "too large: {size} bytes > limit {limit} (MEMO_MAX_FILE_BYTES)",
    GREW: "too large: grew past the limit {limit} bytes while being read (MEMO_MAX_FILE_BYTES)",
    BINARY: "binary: {why}",
    NOT_REGULAR: "not a regular file (FIFO, socket or device)",
    BAD_NAME: "file name is not valid UTF-8: rename the file",
    BROKEN_LINK: "broken symlink or symlink loop",
    LINK_OUTSIDE: "symlink leads out of the library root",
    UNREADABLE: "unreadable: {error}",
    UNSTATABLE: "cannot stat: {error}",
    FOLDER_UNREADABLE: "folder cannot be read: {error}",
}
FAILURES = frozenset({UNREADABLE, UNSTATABLE, FOLDER_UNREADABLE})


@dataclass(frozen=True, slots=True)
class Skip:
    """One note memo does not index: its kind and the reason shown to people."""

    kind: str
    why: str

    @classmethod
    def of(cls, kind: str, **facts: object) -> Skip:
        """The skip of this kind, worded from its facts (`size`, `limit`, `error`)."""
        return cls(kind, MESSAGES[kind].format(**facts))

    @property
    def failed(self) -> bool:
        """True when memo could not read the note; False when it chose not to index it."""
        return self.kind in FAILURES
