"""Filesystem events -> work keys. An event is a trigger, never the truth: the hash decides.

A key names what to look at again once its burst of events has been quiet: ("file", path) a
note; ("dir", path) a folder created, deleted or moved; ("meta", folder) a `_meta.yaml`;
("reconcile",) a full (path, mtime, size) scan of the library, also when a file rules are read
from changes (excluded.py). Ignored: hidden paths, names starting with `~`, anything that is not
a note (editors' and tools' temporary files), folder "modified" events (a child's own event says
which) and opens and read-only closes. Examples of each: docs/design.md, "watch/events.py".
"""

from __future__ import annotations

import os

from ..library import file_kind

Key = tuple[str, ...]
RECONCILE: Key = ("reconcile",)

# watchdog event types that can change what a path holds
_CHANGES = {"created", "deleted", "modified", "moved", "closed", "attrib"}
_TREE_CHANGES = {"created", "deleted", "moved"}


def classify(root: str, path: str, is_dir: bool, event_type: str) -> Key | None:
    """The key one side of an event maps to, or None when memo does not care."""
    if not path:
        return None
    rel = os.path.relpath(path, root)
    if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
        return None  # the root itself (the supervisor watches it) or outside it
    parts = rel.split(os.sep)
    kind = None if is_dir else file_kind(parts)
    if kind == "rules":
        return RECONCILE
    if any(p.startswith((".", "~")) for p in parts):
        return None
    if is_dir:
        return ("dir", path) if event_type in _TREE_CHANGES else None
    if kind == "meta":
        return ("meta", os.path.dirname(path))
    if kind == "note":
        return ("file", path)
    return None


def keys_for(root: str, event_type: str, src: str, dest: str, is_dir: bool) -> list[Key]:
    """Every key a watchdog event touches (a move touches both of its paths)."""
    if event_type not in _CHANGES:
        return []
    out = []
    for p in (src, dest) if event_type == "moved" else (src,):
        key = classify(root, p, is_dir, event_type)
        if key is not None and key not in out:
            out.append(key)
    return out
