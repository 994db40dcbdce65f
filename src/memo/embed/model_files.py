"""Model files' sha256, remembered between processes while a file's stat is unchanged.

An engine's build (base.Embedder.build_id) names the sha256 of every file it loads, and a
model export is hundreds of MB (about a second to hash): `known_sha256` hashes a file once and
keeps the hash in `$XDG_CACHE_HOME/memo/models/hashes.json` under its path and (size, mtime,
inode). A cache like any other (DESIGN, rule one): lost, damaged or raced by another process,
it costs one more hash, never a wrong one (a changed file has another stat).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from pathlib import Path

from ..caches import user_cache

FILE = "hashes.json"
_lock = threading.Lock()


def hashes_path() -> Path:
    return user_cache("models") / FILE


def known_sha256(path: Path) -> str:
    """The sha256 of a model file, hashed only when its stat changed since it last was."""
    from .e5image import file_sha256

    st = path.stat()
    key, stat = str(path), f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
    with _lock:
        row = _read().get(key)
    if isinstance(row, dict) and row.get("stat") == stat and isinstance(row.get("sha256"), str):
        return str(row["sha256"])
    sha = file_sha256(path)
    with _lock:
        known = _read()
        known[key] = {"stat": stat, "sha256": sha}
        _write(known)
    return sha


def _read() -> dict[str, object]:
    try:
        data = json.loads(hashes_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(known: dict[str, object]) -> None:
    """Replace the file at once (a reader sees the old one or the new one); best effort."""
    folder = hashes_path().parent
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".hashes-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(known, f)
            os.replace(tmp, hashes_path())
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
