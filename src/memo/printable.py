"""Paths as one printable line: what every output of memo prints a path with, and every
spelling of it memo reads back; and a duration as people read it (the progress line's time
left, a warning's "about 2 min").

Every surface prints a note's place as `shown(path):line` or `shown(path):line-end`, without
quotes, whatever the name holds (README, "Paths in, paths out"); `quoted` is for a path inside a
command a person pastes into a shell. Every command that takes a path reads every form memo
prints or printed (`readings`): plain, shell-quoted, and with `shown`'s escapes (examples:
docs/design.md). Standard library only: the CLI prints paths on its fast path.
"""

from __future__ import annotations

import re
import shlex


def shown(path: str) -> str:
    """A path as one printable line: newlines, control characters and undecodable bytes escaped."""
    raw = path.encode("utf-8", "surrogateescape")
    text = raw.decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_")


def quoted(path: str) -> str:
    """`shown(path)`, in single quotes when a shell would split or expand it (a space, `*`,
    `$`…): for a path inside a command meant for a shell (`memo init '/my notes' --yes`), never
    for a `path:line` people and agents read. Letters of any script need no quotes."""
    text = shown(path)
    if text and all(c in _PLAIN or (c.isalnum() and ord(c) > 127) for c in text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


# The escapes `shown` writes: a character's repr escape, or an undecodable byte's `\xNN`.
_ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|([ntr]))")
_NAMED = {"n": "\n", "t": "\t", "r": "\r"}


def _unshown(text: str, bytes_first: bool) -> str:
    """`text` with `shown`'s escapes undone; `\x80`-`\xff` read as undecodable bytes (the
    file system's surrogate escapes) or, not `bytes_first`, as the characters of that code."""

    def one(m: re.Match[str]) -> str:
        byte, small, big, named = m.groups()
        if named:
            return _NAMED[named]
        code = int(byte or small or big, 16)
        if byte and code >= 0x80 and bytes_first:
            return chr(0xDC00 + code)  # os.fsdecode's spelling of an undecodable byte
        return chr(code) if code <= 0x10FFFF else m[0]

    return _ESCAPE.sub(one, text)


def readings(text: str) -> list[str]:
    """Every path `text` may spell, as memo prints paths: the text itself first, then the word
    a shell reads from it when it starts with a quote (`'My notes/A b.md':4`, as the CLI once
    printed it, or a person types it), then each with `shown`'s escapes undone (`a\\nb.md` for
    a name holding a newline). A caller takes the first that names something."""
    out = [text]
    if text[:1] in ("'", '"'):
        try:
            words = shlex.split(text)
        except ValueError:  # an apostrophe that opens no quote: `'s-Hertogenbosch.md`
            words = []
        if len(words) == 1:
            out.append(words[0])
    for t in list(out):
        if "\\" in t:
            out += [_unshown(t, True), _unshown(t, False)]
    return list(dict.fromkeys(out))


def duration(seconds: float) -> str:
    """`42 s`, `7 min`, `1.5 h`: seconds up to a minute and a half, minutes up to an hour and a
    half, hours beyond."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
