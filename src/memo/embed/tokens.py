"""Counting tokens: the model's own tokenizer when there is one, a safe estimate otherwise.

Chunk sizes (the model reads at most 512 tokens) and token budgets (`max_tokens`) are both
counted here, so the two never disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import EmbedderUnavailableError

if TYPE_CHECKING:
    from .base import Embedder


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


# The longest piece of multilingual-e5-small's vocabulary is 16 characters: a text with more
# than twice that many non-space characters per token of a limit holds more tokens than the
# limit, whatever they are.
MAX_PIECE_CHARS = 16


def counter_within(count: Callable[[str], int], limit: int) -> Callable[[str], int]:
    """`count`, except for texts certainly longer than `limit` tokens: those get their length
    in characters (also more than `limit`) without being tokenized.

    The chunker only needs to know that such a text does not fit; tokenizing a 5 MB section
    to learn it took minutes inside the tokenizer, where Ctrl-C cannot reach (issue 15).
    """
    too_long = 2 * MAX_PIECE_CHARS * limit

    def count_within(text: str) -> int:
        if len(text) > too_long and len(text) - text.count(" ") > too_long:
            return len(text)
        return count(text)

    return count_within
