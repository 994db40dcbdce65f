"""Paths as one printable line: what every output of memo prints a path with; and a
duration as people read it (the progress line's time left, a warning's "about 2 min").

Standard library only: the CLI prints paths on its fast path (delegating to a server).
"""

from __future__ import annotations


def shown(path: str) -> str:
    """A path as one printable line: newlines, control characters and undecodable bytes escaped."""
    raw = path.encode("utf-8", "surrogateescape")
    text = raw.decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_")


def quoted(path: str) -> str:
    """`shown(path)`, in single quotes when a shell would split or expand it (a space, `*`,
    `$`…), so a person can paste it back: `'Obsidian Sync/Note.md':12` reads as one word.
    Letters of any script need no quotes."""
    text = shown(path)
    if text and all(c in _PLAIN or (c.isalnum() and ord(c) > 127) for c in text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


def duration(seconds: float) -> str:
    """`42 s`, `7 min`, `1.5 h`: seconds up to a minute and a half, minutes up to an hour and a
    half, hours beyond."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
