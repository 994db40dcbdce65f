"""Which lines of a hit answer the question: its focus, and the text a hit shows from there.

A hit is a chunk (up to 400 model tokens: a whole section, or a piece of a long one), and a
question usually asks what one or two of its sentences say. The chunk's sentence windows
(collection/windows.py: three sentences, a new run every two) already told the vector leg how
near those sentences are; the focus is the window nearest the question, as lines of the note
(`focus_line..focus_end_line`, within the hit's `line..end_line`), so an agent reads those
lines first and a person sees where to look.

- *By vector*: the window whose stored vector is nearest one of the question's phrasings
  (the same int8 cosine as the vector leg's).
- *By words*, when the question has no vector or the chunk's windows have none yet (the
  vector stage has not reached it, collection/sync.py): the window holding the most of the
  question's stems, each counted once and weighted by its IDF as the lexical leg weighs it;
  none holding any leaves the whole chunk.
- A chunk of three sentences or fewer has no windows: its focus is all of it.

A hit's `text` is the chunk's text cut at results.TEXT_LIMIT characters; when the focus lies
past that cut, the text starts at the focus instead (with "… " before it), so what a model
reads of a long chunk holds the sentences that answer. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..collection import windows
from ..collection.lexical import terms as stems
from ..collection.vectors import dequantize, dequantize_rows, quantize
from .results import LEAD, TEXT_LIMIT, cut_text


def by_vectors(codes: Sequence[bytes] | np.ndarray, queries: Sequence[np.ndarray]) -> int | None:
    """The window (index into the chunk's windows) nearest any of the query vectors, by the
    vector leg's cosine; None without windows or queries. The windows as their stored int8
    codes, or as the unit rows search/nearest.py holds them."""
    if not len(codes) or not queries:
        return None
    mat = codes if isinstance(codes, np.ndarray) else dequantize_rows(list(codes))
    sims = np.max(np.stack([mat @ dequantize(quantize(q)) for q in queries]), axis=0)
    return int(np.argmax(sims))  # the first of equals


def by_words(text: str, terms: Sequence[str], idf: Sequence[float]) -> int | None:
    """The window holding the largest IDF-weighted share of the query's stems (the first
    of equals); None when no window holds any, or the chunk has no windows."""
    weight = dict(zip(terms, idf, strict=True))
    best, at = 0.0, None
    for k, (a, b) in enumerate(windows.spans(text)):
        got = sum(weight.get(s, 0.0) for s in set(stems(text[a:b])))
        if got > best:
            best, at = got, k
    return at


def lines(text: str, first: int, window: int | None) -> tuple[int, int]:
    """The note lines of a chunk's window `window` (None: the whole chunk), the chunk's text
    starting at line `first`."""
    whole = (0, len(text))
    spans = windows.spans(text)
    span = spans[window] if window is not None and window < len(spans) else whole
    return windows.lines_of(text, first, span)


def shown(text: str, window: int | None, limit: int = TEXT_LIMIT) -> str:
    """The chunk's text as a hit shows it: cut at `limit`, from its start when the focus
    ends within that, else from the focus's first sentence."""
    spans, head = windows.spans(text), cut_text(text, limit)
    if window is None or window >= len(spans):
        return head
    start, end = spans[window]
    if len(head.removesuffix(" …").removesuffix("…")) >= end:
        return head  # the focus ends within the cut (so does all of a short text)
    return LEAD + cut_text(text[start:], limit - len(LEAD))
