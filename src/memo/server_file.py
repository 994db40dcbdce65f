"""How a one-shot `memo` command finds a running `memo serve` for the same library.

`memo serve` writes a small JSON file when it listens and removes it when it stops:

    {"url": "http://127.0.0.1:8765", "pid": 1234, "host": "box", "started": <unix time>,
     "version": "0.1.0", "root": "/abs/library/root", "token": true}

`token` says whether the server wants one, never what it is. The file lies beside the heartbeat
(caches.library_files); a reader trusts it only while its pid is alive on this host and the
server answers `/health` for the same root and version. Standard library only (the CLI's path).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from .caches import library_files
from .config import Settings

# The header a one-shot command's delegated request carries (cli/delegate.py): answer it as
# that process would have answered in-process, with the engine a one-shot job runs
# (server/service.py `Service.one_shot`).
ONE_SHOT_HEADER = "x-memo-one-shot"


def paths(root: Path, settings: Settings) -> list[Path]:
    return library_files(root, settings, "server")


def write(root: Path, settings: Settings, url: str, version: str, token: bool) -> Path | None:
    """Say where this process serves `root`; None if no place would take the file."""
    state = {
        "url": url,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": time.time(),
        "version": version,
        "root": str(root),
        "token": token,
    }
    for path in paths(root, settings):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(state))
            os.replace(tmp, path)
            return path
        except OSError:
            continue
    return None


def remove(root: Path, settings: Settings) -> None:
    """Remove this process's file (another server's is left alone)."""
    for path in paths(root, settings):
        state = _read(path)
        if state is not None and state.get("pid") == os.getpid():
            with contextlib.suppress(OSError):
                path.unlink()


def find(root: Path, settings: Settings) -> dict[str, Any] | None:
    """The file of a server that is alive on this host for `root`, if any."""
    for path in paths(root, settings):
        state = _read(path)
        if state is not None and state.get("root") == str(root) and _alive(state):
            return state
    return None


def _read(path: Path) -> dict[str, Any] | None:
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def _alive(state: dict[str, Any]) -> bool:
    pid = state.get("pid")
    if state.get("host") != socket.gethostname() or not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, another user's
    return True
