"""Filesystem events -> work keys. An event is a trigger, never the truth: the hash decides.

A key names what to look at again once its burst of events has been quiet:

- ("file", path): one note (created, written, renamed to or from, deleted);
- ("dir", path): a folder created, deleted or moved (its subtree, and collections in it);
- ("meta", folder): a `_meta.yaml` created, edited or deleted (a collection appears,
  changes or disappears);
- ("reconcile",): a full (path, mtime, size) scan of the library; also when a file that rules
  are read from changes (`.memoignore`, `.obsidian/app.json`, `templates.json`: excluded.py),
  since a rule may leave out or bring back notes anywhere below it.

Ignored: hidden paths (`.memo/` with the indexes, `.git/`, vim's `.note.md.swp`, editors' dot
temp files), names starting with `~`, anything that is not a note (vim's `4913` probe, `note.md~`
backups, sed's `sedXXXXXX` temp files), folder "modified" events (a child changed: the child's own
event says which), opens and read-only closes.
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
