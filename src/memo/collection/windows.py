"""Sentence windows: the vectors a chunk adds so that the sentences answering a question are
found even when the rest of the chunk is about something else (schema 9).

A chunk of more than SIZE sentences gets a vector for runs of SIZE consecutive sentences, read
under its heading path; a run may start every STRIDE sentences and is kept when it starts at
least SPACING characters after the last one kept (the first and the last always), so windows
are spaced by the text they cover. The vector leg scores a chunk by the best of its own vector
and its windows' (matrix.py); a hit is still the chunk. Pure: no I/O. The rule's
figures and the rules tried: docs/design.md, "Sentence windows".
"""

from __future__ import annotations

import re

from .chunker import passage_text
from .lexical import WORD

SIZE = 3  # sentences per window
STRIDE = 2  # a window may start every STRIDE sentences...
SPACING = 200  # ...and does SPACING characters or more after the start of the last one kept
# The spacing of the windows each schema made, where it is not SPACING: a rebuild hands an old
# index's window vectors to the embedding cache under the texts that rule gave them
# (collection.Collection._salvage). Schemas 7 and 8 kept every run.
SPACING_OF = {7: 0, 8: 0}
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
    return [text[a:b] for a, b in sentence_spans(text)]


def windows(heading: str, text: str, spacing: int | None = None) -> list[str]:
    """The passages (as the embedder reads them, without its prefix) of a chunk's windows;
    none when the chunk has at most SIZE sentences: its own vector is its one window.
    `spacing`: another rule's (SPACING_OF), for the windows an older index holds."""
    sents = sentence_spans(text)
    return [
        passage_text(heading, " ".join(text[a:b] for a, b in sents[i : i + SIZE]))
        for i in _starts(sents, SPACING if spacing is None else spacing)
    ]


def spans(text: str) -> list[tuple[int, int]]:
    """Where each of `windows(…, text)`'s windows lies in the chunk's text: (start, end)
    offsets, from its first sentence's first character to its last one's end."""
    sents = sentence_spans(text)
    return [(sents[i][0], sents[i + SIZE - 1][1]) for i in _starts(sents, SPACING)]


def spacing_of(schema: int) -> int:
    """The spacing of the windows an index of this schema holds (7 on: older ones have none)."""
    return SPACING_OF.get(schema, SPACING)


def lines_of(text: str, first: int, span: tuple[int, int]) -> tuple[int, int]:
    """The note lines (1-based, inclusive) a span of a chunk's text covers, the text starting
    at line `first`: a chunk's text is its lines as they are (chunker.py)."""
    start, end = span
    return first + text[:start].count("\n"), first + text[: max(start, end - 1)].count("\n")


def _starts(sents: list[tuple[int, int]], spacing: int) -> list[int]:
    """The first sentence of each window of a chunk whose sentences lie at `sents` (none:
    SIZE or fewer): every STRIDE-th that starts `spacing` characters or more after the last
    one kept, the first and the last (which ends with the chunk); at most MAX of them."""
    count = len(sents)
    if count <= SIZE:
        return []
    kept = [0]
    for i in range(STRIDE, count - SIZE, STRIDE):
        if sents[i][0] - sents[kept[-1]][0] >= spacing:
            kept.append(i)
    kept.append(count - SIZE)  # the loop stops short of it: the last window, always
    return kept[:MAX]


def sentence_spans(text: str) -> list[tuple[int, int]]:
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
