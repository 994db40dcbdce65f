"""What a search returns: hits that point at `path:line`, and the result set around them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..collection.markdown import is_table_row, table_rows

TEXT_LIMIT = 1200  # characters of chunk text in a hit
LEAD = "… "  # before a hit's text that starts at its focus, not at its chunk's start


@dataclass(frozen=True, slots=True)
class Hit:
    collection: str
    path: str  # relative to the library root
    abs_path: str
    line: int
    heading: str
    score: float
    text: str
    lex_rank: int | None = None
    vec_rank: int | None = None
    end_line: int = 0  # last line of the cited range
    cite: str = ""  # citation hash of lines line..end_line when searched (see excerpt.py)
    # the lines within line..end_line that answer best (search/focus.py); 0: not computed
    focus_line: int = 0
    focus_end_line: int = 0
    explain: dict[str, Any] | None = None  # why it ranks where it does (search/explain.py)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if self.explain is None:
            del out["explain"]
        return out


@dataclass(frozen=True, slots=True)
class Freshness:
    """How current one searched collection's index was, and what this call did about it."""

    collection: str
    caught_up: int  # files (re)indexed or removed by this call before searching
    current: bool  # True when the index matched the notes before this call
    last_write: float | None  # unix time of the last index write
    rebuilt: str = ""
    chunks: int = 0  # chunks the index holds
    pending: int = 0  # of them, still without a vector: found by the lexical leg only
    embedding_by: int | None = None  # pid of the process computing those vectors, if any


@dataclass(frozen=True, slots=True)
class Budget:
    """How a result set was fitted into `max_tokens` (budget.py fits it)."""

    max_tokens: int
    used: int  # tokens the hits take
    dropped: int  # hits left out
    cut: int  # 1 when the last hit kept was cut at a sentence border

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class SearchResult:
    query: str
    mode: str
    target: str
    hits: list[Hit]
    took_ms: float
    collections: list[str]
    freshness: list[Freshness] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    budget: Budget | None = None  # how the hits were fitted into max_tokens, if asked
    confidence: str = "none"  # high | low | none: is there a good match at all?
    routed: list[str] | None = None  # search(route=K): the collection paths the router chose

    def to_dict(self) -> dict[str, Any]:
        out = {
            "query": self.query,
            "mode": self.mode,
            "target": self.target,
            "took_ms": round(self.took_ms, 2),
            "confidence": self.confidence,
            "collections": self.collections,
            "results": [h.to_dict() for h in self.hits],
            "freshness": [asdict(f) for f in self.freshness],
            "warnings": self.warnings,
            "budget": self.budget.to_dict() if self.budget else None,
        }
        if self.routed is not None:
            out["routed"] = self.routed
        return out


def cut_text(text: str, limit: int = TEXT_LIMIT) -> str:
    """At most `limit` characters, cut at a sentence or word border when there is one."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    for sep in ("\n\n", ". ", "! ", "? ", "\n", " "):
        at = head.rfind(sep)
        if at > limit // 2:
            return head[: at + len(sep)].rstrip() + " …"
    return head + "…"


def explain_line(why: dict[str, Any]) -> str:
    """A hit's `explain` (search/explain.py) in one line a person or a model reads: each
    phrasing's ranks in both legs (the window that scored), the note's factor, diversity and
    the budget."""
    said = []
    for w in why.get("phrasings") or []:
        legs = []
        if w.get("lex"):
            legs.append(f"lex #{w['lex']['rank']}")
        if w.get("vec"):
            row = w["vec"].get("from", "chunk")
            legs.append(f"vec #{w['vec']['rank']}" + ("" if row == "chunk" else f" ({row})"))
        said.append(f"{w['kind']}: {', '.join(legs) or 'below its candidates'}")
    if why.get("won_by"):
        said.append(f"won by {why['won_by']}")
    note = why.get("note")
    if note and note.get("factor") is not None:
        said.append(f"note ×{note['factor']:.2f}")
    said += [why[k] for k in ("diversity", "budget") if why.get(k)]
    return "why: " + "; ".join(said)


def best_lines(
    line: int, end_line: int, focus_line: int, focus_end_line: int
) -> tuple[int, int] | None:
    """A hit's focus (search/focus.py) when it is fewer lines than the hit's own; None when it
    is all of them, or was not computed (an answer of an older memo)."""
    if not focus_line or (focus_line, focus_end_line) == (line, max(line, end_line)):
        return None
    return focus_line, focus_end_line


def snippet(text: str, line: int, focus_line: int, focus_end_line: int, limit: int) -> str:
    """A hit's text cut shorter (a terminal's or a page's snippet), from where its focus
    (search/focus.py) begins when the cut from the top would leave the focus out. A hit's
    text is its lines as they are, from `line` (from `focus_line` when it starts with LEAD).
    A focus in a table shows its rows under the table's header, cells without their padding
    (`table_rows`): an aligned table's header alone filled a terminal's snippet."""
    lines = text.removeprefix(LEAD).split("\n")
    start = line if not text.startswith(LEAD) else focus_line
    first, last = max(focus_line, start) - start, max(focus_end_line, focus_line) - start
    if focus_line and 0 <= first < len(lines) and is_table_row(lines[first]):
        return cut_text(table_rows(lines, first, last), limit)
    if text.startswith(LEAD) or focus_line <= line:
        return cut_text(text, limit)
    skip = focus_line - line
    if skip >= len(lines) or len("\n".join(lines[: focus_end_line - line + 1])) <= limit:
        return cut_text(text, limit)
    return LEAD + cut_text("\n".join(lines[skip:]), limit - len(LEAD))
