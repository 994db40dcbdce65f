"""Sentence windows: the vectors a chunk adds so that the sentences answering a question are
found even when the rest of the chunk is about something else (schema 7).

A chunk's own vector is the meaning of its whole passage; a question usually asks what one
sentence or two of it say. So a chunk of more than SIZE sentences gets a vector for every run
of SIZE consecutive sentences as well (a new run every STRIDE sentences: consecutive windows
share one, and the last window ends with the chunk), each read under the chunk's heading path
as the chunk itself is. The vector leg scores a chunk by the best of its own vector and its
windows' (collection/queries.py): a hit is still the chunk, with its lines, only its score is
its best evidence. Pure: no I/O.

Measured on the vault benchmark's tune half and on xquad-dev-distract (docs/design.md,
"Sentence windows"): windows of 1 to 4 sentences all lifted every tune set; 3 sentences with a
stride of 2 makes 2.5 windows a chunk on the Obsidian Help vault, against 5 for windows of 2
with a stride of 1, for the same gain.
"""

from __future__ import annotations

import re

from .chunker import passage_text
from .lexical import WORD

SIZE = 3  # sentences per window
STRIDE = 2  # a window starts every STRIDE sentences
# A window's vector is stored at rowid `chunk id * SLOTS + k` (k from 0), so the chunk of a
# window found by a KNN is `rowid // SLOTS`, with no table between; a chunk of the model's 512
# tokens has far fewer windows than that, and any beyond MAX are not made.
SLOTS = 256
MAX = SLOTS - 1

# A sentence ends at . ! ? … followed by whitespace, or at a line's end (a list item, a table row
# or a line of code is a sentence of its own).
_END = re.compile(r"(?<=[.!?…])\s+|\n+")


def sentences(text: str) -> list[str]:
    """The chunk's sentences; one of fewer than two words (a bare list item, a lone `}`, a
    table's `|---|---|` line) joins no window unless the chunk has nothing else."""
    return [text[a:b] for a, b in _sentence_spans(text)]


def windows(heading: str, text: str) -> list[str]:
    """The passages (as the embedder reads them, without its prefix) of a chunk's windows;
    none when the chunk has at most SIZE sentences: its own vector is its one window."""
    sents = sentences(text)
    return [passage_text(heading, " ".join(sents[i : i + SIZE])) for i in _starts(len(sents))]


def spans(text: str) -> list[tuple[int, int]]:
    """Where each of `windows(…, text)`'s windows lies in the chunk's text: (start, end)
    offsets, from its first sentence's first character to its last one's end."""
    sents = _sentence_spans(text)
    return [(sents[i][0], sents[i + SIZE - 1][1]) for i in _starts(len(sents))]


def lines_of(text: str, first: int, span: tuple[int, int]) -> tuple[int, int]:
    """The note lines (1-based, inclusive) a span of a chunk's text covers, the text starting
    at line `first`: a chunk's text is its lines as they are (chunker.py)."""
    start, end = span
    return first + text[:start].count("\n"), first + text[: max(start, end - 1)].count("\n")


def _starts(count: int) -> list[int]:
    """The first sentence of each window of a chunk of `count` sentences (none: SIZE or
    fewer), at most MAX of them."""
    if count <= SIZE:
        return []
    starts = list(range(0, count - SIZE + 1, STRIDE))
    if starts[-1] != count - SIZE:
        starts.append(count - SIZE)
    return starts[:MAX]


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence `sentences` keeps, whitespace around it left out."""
    parts: list[tuple[int, int]] = []
    at = 0
    # a break is whitespace, so a piece may start with the one before it: it is stripped
    for end in [*(m.start() for m in _END.finditer(text)), len(text)]:
        piece = text[at:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            parts.append((at + lead, at + len(piece.rstrip())))
        at = end
    kept = [(a, b) for a, b in parts if len(WORD.findall(text[a:b])) >= 2]
    return kept if kept else parts


def rowid(chunk: int, k: int) -> int:
    """Where a chunk's k-th window vector is stored."""
    return chunk * SLOTS + k


def chunk_of(row: int) -> int:
    """The chunk a stored window vector belongs to."""
    return row // SLOTS


def rowids(chunk: int, count: int) -> list[int]:
    """Every window rowid of a chunk that has `count` windows."""
    return [rowid(chunk, k) for k in range(count)]
