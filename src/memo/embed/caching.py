"""An Embedder in front of the embedding cache (cache.py): what any memo process of this user
embedded with the same build is looked up, never recomputed."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .base import Embedder
from .cache import GROUP, EmbeddingCache, counts_here, passage_key


class CachingEmbedder(Embedder):
    """An Embedder that reuses what any memo process of this user embedded with the same build.

    embed_passages looks every text up, embeds only the misses (each distinct text once), in
    groups of GROUP, storing each group before the next: what an interrupt finds stored is
    reused by the next run. Every engine names its build (base.Embedder.build_id).
    """

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache
        self._build: str | None = None

    # what the Embedder protocol reads, from the engine underneath
    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def backend(self) -> str:
        return self.inner.backend

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def max_tokens(self) -> int:
        return self.inner.max_tokens

    def build_id(self) -> str:
        """The engine's build (loads it: what it is decides the vectors)."""
        if self._build is None:
            self._build = self.inner.build_id()
        return self._build

    def count_tokens(self, passage: str) -> int:
        return self.inner.count_tokens(passage)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)

    def embed_queries(self, texts: Sequence[str], passages: Sequence[str] = ()) -> np.ndarray:
        # a search's own words: one-off, never stored (an agent's likely answers included)
        return self.inner.embed_queries(texts, passages)

    def remember(self, texts: Sequence[str], vectors: Sequence[bytes]) -> None:
        """Store vectors this process's model made for these passages elsewhere (an index
        being rebuilt for a new schema: collection.Collection._salvage). Counted as neither
        hits nor misses; a vector of the wrong size is skipped."""
        build = self.build_id()
        size = self.dim * 4
        items = [
            (passage_key(build, t), np.frombuffer(v, dtype=np.float32))
            for t, v in zip(texts, vectors, strict=True)
            if len(v) == size
        ]
        for a in range(0, len(items), GROUP * 32):
            self.cache.put(items[a : a + GROUP * 32], 0, 0, replace=False)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        build = self.build_id()
        keys = [passage_key(build, t) for t in texts]
        found = self.cache.get(list(dict.fromkeys(keys)), self.dim)
        todo = list(dict.fromkeys(k for k in keys if k not in found))
        hits = len(texts) - sum(1 for k in keys if k not in found)
        text_of = dict(zip(keys, texts, strict=True))
        if (counts := counts_here()) is not None:
            counts.hits += hits
            counts.misses += len(texts) - hits
        if not todo:
            self.cache.put([], hits, 0)
        for a in range(0, len(todo), GROUP):
            group = todo[a : a + GROUP]
            vecs = np.asarray(self.inner.embed_passages([text_of[k] for k in group]), np.float32)
            new = list(zip(group, vecs, strict=True))
            found.update(new)
            first = a == 0
            self.cache.put(
                new,
                hits if first else 0,
                (len(texts) - hits) if first else 0,
            )
        return np.vstack([found[k] for k in keys]).astype(np.float32, copy=False)
