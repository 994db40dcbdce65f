"""The watcher's heartbeat: one small JSON file per library, read by `memo status`.

The watcher (a driver) writes it every few seconds; the core reads it. Like every memo file it is
a cache: deleting it loses nothing (status then says no watcher has been seen). One file per
*library*, never per collection: a library may hold 10^5 collections. It lies where caches.py
puts a library's files (`<root>/.memo/watcher.json` unless moved; docs/design.md):

    {"pid": 1234, "host": "box", "root": "/abs/root", "mode": "inotify" | "polling",
     "started": <unix time>, "last_seen": <unix time>, "running": true,
     "last_reconcile": <unix time> | null, "last_reconcile_seconds": 0.12 | null}
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

from .caches import library_files
from .config import Settings

HEARTBEAT_EVERY = 5.0  # seconds between two writes by a running watcher
STALE_AFTER = 4 * HEARTBEAT_EVERY  # a heartbeat older than this means no watcher is running


def candidates(root: Path, settings: Settings) -> list[Path]:
    """Where the heartbeat may live, preferred first (the reader checks each)."""
    return library_files(root, settings, "watcher")


def write(root: Path, settings: Settings, state: dict[str, Any]) -> Path | None:
    """Write the heartbeat atomically to the first place that accepts it; None if none did."""
    data = json.dumps(state, sort_keys=True).encode()
    for path in candidates(root, settings):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
            return path
        except OSError:
            continue
    return None


def _alive(state: dict[str, Any]) -> bool:
    if not state.get("running"):
        return False
    if time.time() - float(state.get("last_seen") or 0) > STALE_AFTER:
        return False
    pid = state.get("pid")
    if state.get("host") == socket.gethostname() and isinstance(pid, int):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass  # alive, owned by someone else
    return True


def read(root: Path, settings: Settings) -> dict[str, Any] | None:
    """The newest heartbeat for this library, with `alive` added; None if there is none."""
    best: dict[str, Any] | None = None
    for path in candidates(root, settings):
        with contextlib.suppress(OSError, ValueError):
            state = json.loads(path.read_bytes())
            if isinstance(state, dict) and (
                best is None or (state.get("last_seen") or 0) > (best.get("last_seen") or 0)
            ):
                best = state
    if best is not None:
        best["alive"] = _alive(best)
    return best


def summary(root: Path, settings: Settings) -> dict[str, Any]:
    """What `memo status` shows: watcher_last_seen (null unless one runs) and last_reconcile."""
    state = read(root, settings)
    if state is None:
        return {"watcher_last_seen": None, "last_reconcile": None}
    return {
        "watcher_last_seen": state.get("last_seen") if state["alive"] else None,
        "last_reconcile": state.get("last_reconcile"),
    }
