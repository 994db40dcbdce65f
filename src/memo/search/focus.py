"""Which lines of a hit answer the question: its focus, and the text a hit shows from there.

The focus is the hit's sentence window (collection/windows.py) nearest the question, as lines
within the hit's `line..end_line`: by the windows' stored vectors against each phrasing's, or,
without vectors, by the IDF-weighted share of the question's stems a window holds (none: the
whole chunk); a chunk of three sentences or fewer is its own focus. A hit's `text` is the
chunk cut at results.TEXT_LIMIT characters, starting at the focus after "… " when the focus
lies past the cut. The ranking is untouched. Pure: no I/O. Figures: docs/design.md, "Chunks".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..collection import windows
from ..collection.lexical import terms as stems
from ..collection.vectors import as_indexed, dequantize_rows
from .results import LEAD, TEXT_LIMIT, cut_text


def by_vectors(codes: Sequence[bytes] | np.ndarray, queries: Sequence[np.ndarray]) -> int | None:
    """The window (index into the chunk's windows) nearest any of the query vectors, by the
    vector leg's cosine; None without windows or queries. The windows as their stored int8
    codes, or as the unit rows collection/matrix.py holds them."""
    if not len(codes) or not queries:
        return None
    mat = codes if isinstance(codes, np.ndarray) else dequantize_rows(list(codes))
    sims = np.max(np.stack([mat @ as_indexed(q) for q in queries]), axis=0)
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
