"""Counting tokens: the model's own tokenizer when there is one, a safe estimate otherwise.

Chunk sizes (the model reads at most 512 tokens) and token budgets (`max_tokens`) are both
counted here, so the two never disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import EmbedderUnavailableError

if TYPE_CHECKING:
    from . import Embedder


def estimate_tokens(text: str) -> int:
    """An over-estimate when no tokenizer can be loaded: XLM-R averages 3-4 characters per
    token in English and more bytes per token in Cyrillic; this errs on the long side."""
    return 3 + len(text.encode("utf-8")) // 3


def token_counter(embedder: Embedder | None) -> Callable[[str], int]:
    """A counter of the tokens the model sees for a passage (prefix and special tokens
    included): the embedder's, falling back to the estimate if its model cannot load."""
    if embedder is None:
        return estimate_tokens

    def count(text: str) -> int:
        try:
            return embedder.count_tokens(text)
        except EmbedderUnavailableError:
            return estimate_tokens(text)

    return count
