"""BM25 over many indexes as if they were one: the "DFS" step of distributed search.

A search sums every searched collection's FTS5 statistics (rows, rows holding each stem,
tokens) and scores each collection's postings with the sums, with FTS5's own formula (k1 1.2,
b 0.75, IDF floored at 1e-6): over one collection the scores equal FTS5's `bm25()`, over
several what one index of all their notes would give. Statistics and postings come from
FTS5's own tables (collection/reads.py `Postings`): nothing extra is stored. Why:
docs/design.md, "Many indexes score like one".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from ..collection.reads import Postings

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6  # FTS5: a term in more than half the rows still counts a little


def _joined(parts: Iterable[Sequence[float]], dtype: type) -> np.ndarray:
    return np.array(list(chain.from_iterable(parts)), dtype=dtype)


@dataclass(slots=True)
class Corpus:
    """The statistics of everything searched: rows, tokens and per-term row counts, summed."""

    terms: list[str]
    rows: int = 0
    tokens: int = 0
    df: list[int] = field(default_factory=list)  # rows holding each term, in `terms` order

    def __post_init__(self) -> None:
        self.df = [0] * len(self.terms)

    def add(self, rows: int, tokens: int, df: dict[str, int]) -> None:
        """Add one collection's share."""
        self.rows += rows
        self.tokens += tokens
        if df:
            self.df = [n + df.get(t, 0) for t, n in zip(self.terms, self.df, strict=True)]

    @property
    def known(self) -> set[str]:
        """The query terms some searched row holds."""
        return {t for t, n in zip(self.terms, self.df, strict=True) if n > 0}

    def idf(self) -> np.ndarray:
        n = np.array(self.df, dtype=np.float64)
        return np.maximum(np.log((self.rows - n + 0.5) / (n + 0.5)), IDF_FLOOR)

    def best(self, shares: list[Postings], depth: int) -> list[tuple[tuple[int, int], float]]:
        """The `depth` best rows of every collection's postings under these statistics:
        ((collection's place in `shares`, chunk id), score), best first; ties by place, then
        id. All of them scored in one pass: scope `*` over 1,000 small collections spent
        ~0.2 ms per collection in numpy's per-call overhead when each was scored apart."""
        sizes = np.array([len(p.docs) for p in shares], dtype=np.int64)
        if not sizes.sum() or not self.rows or depth <= 0:
            return []
        full = [p for p in shares if len(p.docs)]
        docs = _joined((p.docs for p in full), np.int64)
        tf = _joined((p.tf for p in full), np.float64)
        length = _joined((p.length for p in full), np.float64)
        terms = _joined((p.terms for p in full), np.int64)
        owner = np.repeat(np.arange(len(shares), dtype=np.int64), sizes)
        part = self.idf()[terms] * tf * (K1 + 1)
        part /= tf + K1 * (1 - B + B * length / (self.tokens / self.rows))
        span = int(docs.max()) + 1
        keys, where = np.unique(owner * span + docs, return_inverse=True)
        scores = np.bincount(where, weights=part, minlength=len(keys))
        order = np.argsort(-scores, kind="stable")[:depth]
        return [
            ((int(k // span), int(k % span)), float(x))
            for k, x in zip(keys[order].tolist(), scores[order].tolist(), strict=True)
        ]
