"""Where memo keeps its caches, and the one way it names them.

Every file memo writes is a cache of the notes (DESIGN, rule number one), kept by one rule in one
of three places: beside the notes, in a hidden `.memo/` folder (`<collection>/.memo/index.db`,
`<root>/.memo/registry.db`, `<root>/.memo/watcher.json`); under `MEMO_INDEX_DIR` when it is set
(read-only notes, shared folders); under the user cache (`$XDG_CACHE_HOME/memo/...`) when the
folder cannot be written. Outside the notes a cache is named after the folder it belongs to: a
readable slug of the folder's name and a hash of its real path (`slug_name`), so two folders
called `notes` never share a file.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .config import Settings, cache_home

HIDDEN = ".memo"  # the cache folder beside the notes


def digest(data: bytes) -> str:
    """The content hash memo uses everywhere (files, chunks, descriptions): 32 hex digits."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def slug_name(folder: Path | str, real: str | None = None) -> str:
    """`<slug of the folder's name>-<12 hex digits of its real path>`: a cache file's name.

    `real` is the folder's real path when the caller knows it already (resolving 100,000
    folders one by one is most of a registry rebuild).
    """
    real = real or os.path.realpath(folder)
    slug = "".join(c if c.isalnum() else "-" for c in Path(real).name)[:40]
    return f"{slug}-{digest(real.encode())[:12]}"


def user_cache(kind: str) -> Path:
    """`$XDG_CACHE_HOME/memo/<kind>` (indexes, watchers, models)."""
    return cache_home() / "memo" / kind


def index_dir(folder: Path, settings: Settings, real: str | None = None) -> Path:
    """Where a collection's index lives: `<folder>/.memo`, MEMO_INDEX_DIR, or the user cache."""
    base = settings.index_dir
    local = folder / HIDDEN
    if base is None and not local.is_dir() and not os.access(folder, os.W_OK):
        base = user_cache("indexes")
    if base is None:
        return local
    return base / slug_name(folder, real)


def registry_dir(root: Path, settings: Settings) -> Path:
    """Where a library's router index (registry.db) lives."""
    base = settings.index_dir
    if base is None and os.access(root, os.W_OK):
        return root / HIDDEN
    base = base or user_cache("indexes")
    return base / f"_registry-{slug_name(root)}"


def library_files(root: Path, settings: Settings, kind: str) -> list[Path]:
    """Where one of a library's small state files (`watcher`: the heartbeat, `server`: a
    running server's address) may live, preferred first (readers check each)."""
    if settings.index_dir is not None:
        return [settings.index_dir / f"{kind}-{slug_name(root)}.json"]
    return [root / HIDDEN / f"{kind}.json", user_cache(f"{kind}s") / f"{slug_name(root)}.json"]
