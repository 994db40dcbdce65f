"""Paths as one printable line: what every output of memo prints a path with.

Standard library only: the CLI prints paths on its fast path (delegating to a server).
"""

from __future__ import annotations


def shown(path: str) -> str:
    """A path as one printable line: newlines, control characters and undecodable bytes escaped."""
    raw = path.encode("utf-8", "surrogateescape")
    text = raw.decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
