"""Why a hit ranks where it does: each part of its score, from the ranking that made it.

A hybrid score is built in three steps (search/fusion.py): each phrasing of the question (the
question, the agent's `also`, its likely `answer`: search/legs.py Words) scores a chunk by its
legs' z-scores, exp(vec z + weight * lex z); the phrasings' log-scores are averaged (a chunk
below a phrasing's candidates counts at that phrasing's least); then the chunk's note adds a
quarter of its z among the candidates' notes. `explain` gives each of those numbers for one
hit, which phrasing gave it most (`won_by`), the row of the vector leg that scored (the chunk's
own vector or one of its sentence windows, as lines of the note), and what diversity did to
its place. Nothing here changes a score: it reads the ranking's legs again for the k hits.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

from ..collection import windows
from ..collection.reads import ChunkRow
from ..collection.vectors import as_indexed
from .fusion import Legs, parts
from .legs import Reader

Key = tuple[int, int]


class Ranking(Protocol):
    """What an explanation reads of a ranking (ranking.py `Ranking`, which calls `explain`:
    named here by what it holds, so neither module imports the other both ways)."""

    reader: Reader
    scores: dict[Key, float]
    ranked: list[Key]
    phrasings: list[Legs]
    mode: str
    fused: dict[Key, float]
    note_of: dict[Key, tuple[int, str]]
    note_z: dict[tuple[int, str], float]
    before: dict[Key, int]

    def place(self, key: Key) -> int | None: ...


SHOWN = 80  # characters of a phrasing's text an explanation repeats


def explain(r: Ranking, key: Key, row: ChunkRow, shown: int) -> dict[str, Any]:
    """Why this candidate has its score and its place (`shown`, 1-based, among the hits)."""
    words = [_phrasing(r, legs, key, row) for legs in r.phrasings]
    logs = [w["log"] for w in words if w["log"] is not None]
    best = max(range(len(words)), key=lambda i: words[i]["log"] if words[i]["log"] else -1e9)
    out: dict[str, Any] = {
        "score": round(r.scores[key], 6),
        "fused_rank": r.place(key),
        "shown_rank": shown,
        "phrasings": words,
        "won_by": _name(r.phrasings[best], best) if logs else None,
        "note": None,
        "diversity": None,
    }
    if key in r.fused and r.fused[key] > 0 and r.scores[key] > 0:
        factor = r.scores[key] / r.fused[key]
        note = r.note_of.get(key)
        out["note"] = {
            "path": note[1] if note else None,
            "z": round(r.note_z.get(note, 0.0), 4) if note else 0.0,
            "factor": round(factor, 4),
        }
    before = r.before.get(key)
    if before is not None and before != shown:
        out["diversity"] = (
            f"held back from place {before} to {shown}: other notes matched comparably"
            if before < shown
            else f"moved up from place {before} to {shown}: hits of one note above it were "
            "held back"
        )
    return out


def _name(legs: Legs, at: int) -> str:
    return legs.kind if legs.kind != "also" else f"also {at}"


def _phrasing(r: Ranking, legs: Legs, key: Key, row: ChunkRow) -> dict[str, Any]:
    """One phrasing's part: its legs' ranks, raw scores and z-scores for the chunk."""
    lex = dict(legs.lex)
    vec = dict(legs.vec)
    out: dict[str, Any] = {
        "kind": legs.kind,
        "text": legs.text if len(legs.text) <= SHOWN else legs.text[: SHOWN - 1] + "…",
        "lex": None,
        "vec": None,
        "log": None,
    }
    if key in lex:
        out["lex"] = {"rank": legs.lex_ranked.index(key) + 1, "bm25": round(lex[key], 4)}
    if key in vec:
        out["vec"] = {"rank": legs.vec_ranked.index(key) + 1, "cosine": round(vec[key], 4)}
        out["vec"]["from"] = _row_that_scored(r, legs, key, row)
    if r.mode == "hybrid" and legs.vec:
        z = parts(legs)
        if key in z.vec:
            log = z.vec[key] + z.weight * z.lex[key]
            out["log"] = round(log, 4)
            if out["vec"] is not None:
                out["vec"]["z"] = round(z.vec[key], 4)
            if out["lex"] is not None:
                out["lex"]["z"] = round(z.lex[key], 4)
                out["lex"]["weight"] = round(z.weight, 4)
        else:  # below this phrasing's candidates: its least counts
            least = min(v + z.weight * z.lex[k] for k, v in z.vec.items()) if z.vec else 0.0
            out["log"] = round(least, 4)
            out["below"] = True
    elif r.mode != "hybrid" and key in (lex if r.mode == "lex" else vec):
        out["log"] = round(math.log(max(r.scores[key], 1e-12)), 4)
    return out


def _row_that_scored(r: Ranking, legs: Legs, key: Key, row: ChunkRow) -> str:
    """'chunk' when the chunk's own vector gave its cosine, else 'window K: lines A-B'."""
    held = r.reader.matrices.get(key[0])
    wins = held.windows(key[1], row.wins) if held is not None and row.wins else None
    if wins is None or legs.qvec is None:
        return "chunk"
    q = as_indexed(legs.qvec)
    best = int(np.argmax(wins @ q))
    cosine = float(wins[best] @ q)
    if cosine + 1e-6 < dict(legs.vec).get(key, 1.0):
        return "chunk"
    spans = windows.spans(row.text)
    if best >= len(spans):
        return f"window {best + 1}"
    first, last = windows.lines_of(row.text, row.line, spans[best])
    return f"window {best + 1}: lines {first}-{last}"
