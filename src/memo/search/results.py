"""What a search returns: hits that point at `path:line`, and the result set around them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..collection.markdown import is_table_row, table_rows
from ..outputs import NONE, Published, doc

TEXT_LIMIT = 1200  # characters of chunk text in a hit
LEAD = "… "  # before a hit's text that starts at its focus, not at its chunk's start
Confidence = Literal["high", "low", "none"]  # is there a good match at all? (confidence.py)


@dataclass(frozen=True, slots=True)
class Hit(Published):
    """One hit: a section of a note, at `path:line`."""

    collection: str = doc("The collection the note belongs to.")
    path: str = doc("Note path relative to the library root.")
    abs_path: str = doc("Absolute path, for your file-reading tool.")
    line: int = doc("1-based line where the matching section's text starts.")
    heading: str = doc("The section's heading path ('A > B').")
    score: float = doc("The fused score: higher ranks first.")
    text: str = doc("The section's text, cut to a snippet.")
    lex_rank: int | None = doc("Its rank in the lexical leg (null: not found there).", default=None)
    vec_rank: int | None = doc("Its rank in the vector leg (null: not found there).", default=None)
    end_line: int = doc("Last line of the cited range.", default=0)
    # citation hash when searched (see excerpt.py)
    cite: str = doc("Hash of lines line..end_line; memo_get returns it again.", default="")
    # the lines within line..end_line that answer best (search/focus.py); 0: not computed
    focus_line: int = doc(
        "First line of the sentences that match best, within line..end_line.", default=0
    )
    focus_end_line: int = doc("Last line of those sentences.", default=0)
    explain: dict[str, Any] | None = doc(  # search/explain.py
        "With explain: why it ranks where it does.", default=None, omit=NONE
    )


@dataclass(frozen=True, slots=True)
class Freshness(Published):
    """How current one searched collection's index was, and what this call did about it."""

    collection: str = doc("The collection searched.")
    caught_up: int = doc("Files re-indexed or removed by this call first.")
    current: bool = doc("The index matched the notes before this call.")
    last_write: float | None = doc("Unix time of the last index write.")
    rebuilt: str = doc("Why this call rebuilt the index from scratch ('': it did not).", default="")
    chunks: int = doc("Chunks the index holds.", default=0)
    pending: int = doc("Of them, still without a vector: found by the lexical leg only.", default=0)
    embedding_by: int | None = doc("The process id computing those vectors, if any.", default=None)


@dataclass(frozen=True, slots=True)
class Budget(Published):
    """How a result set was fitted into `max_tokens` (budget.py fits it)."""

    max_tokens: int = doc("The token budget asked for.")
    used: int = doc("Tokens the answer takes.")
    dropped: int = doc("Items left out.")
    cut: int = doc("1 when the last item kept was cut at a sentence border.")


BUDGET = "With max_tokens: max_tokens, used, dropped, cut."


@dataclass(slots=True, kw_only=True)
class SearchResult(Published):
    """A search's answer: its hits, best first, and how current each index was."""

    query: str = doc("The question as searched.")
    mode: str = doc("hybrid, lex or vec.")
    target: str = doc("The path searched.")
    took_ms: float = doc("Milliseconds the search took.", digits=2)
    confidence: Confidence = doc(
        "none: no good match in the searched notes; low: read before trusting.", default="none"
    )
    collections: list[str] = doc("The collections searched.")
    hits: list[Hit] = doc("The hits, best first.", name="results")
    freshness: list[Freshness] = doc("Each searched collection's index.", factory=list)
    warnings: list[str] = doc(factory=list)
    budget: Budget | None = doc(BUDGET, default=None)
    routed: list[str] | None = doc(
        "With route: the collection paths the router chose.", default=None, omit=NONE
    )


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
