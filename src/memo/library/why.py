"""`memo why NOTE QUERY`: where a note ranks for a question, and what stood above it; or why it
is not there at all.

The question is ranked by the very ranking a search of the same path, question, words and route
reads its hits from (Library.why and Library.search share it: search/ranking.py), and a chunk's
place is the one `search --explain` gives it (`Ranking.place`): each of the note's chunks gets
its rank in each leg and in the fused list, and the hits above its best chunk are named. A note
that is no candidate at all gets the reasons memo can name, each checked, not guessed (the list,
and why no deeper ranking of its own: docs/design.md, "library/why.py").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..collection.collection import Collection
from ..collection.excluded import for_collection
from ..collection.lexical import query_terms, terms
from ..outputs import Published, doc
from ..search.fusion import CANDIDATES
from ..search.legs import Scope
from ..search.ranking import Ranking

WHY_DEPTH = 1000  # candidates a leg read to place a note beyond a search's (CANDIDATES)
ABOVE = 5  # the hits above the note's best chunk that are named


@dataclass(frozen=True, slots=True)
class Placed(Published):
    """One chunk of the note among the candidates: its place in each leg and in the fused list."""

    line: int = doc("1-based line where the chunk's section starts.")
    heading: str = doc("The section's heading path.")
    fused_rank: int = doc("Its place in the fused list, as a search shows it (1-based).")
    score: float = doc("Its fused score.")
    lex_rank: int | None = doc("Its rank in the lexical leg (null: not a candidate there).")
    bm25: float | None = doc("Its BM25 score there.")
    vec_rank: int | None = doc("Its rank in the vector leg (null: not a candidate there).")
    cosine: float | None = doc("Its cosine to the question there.")
    pending: bool = doc("Its vector is still being computed.")


@dataclass(frozen=True, slots=True)
class Above(Published):
    """A hit ranked above the note's best chunk."""

    path: str = doc("Note path relative to the library root.")
    line: int = doc("1-based line where the hit's section starts.")
    heading: str = doc("The section's heading path.")
    score: float = doc("Its fused score.")


@dataclass(slots=True)
class WhyResult(Published):
    """Where a note ranks for a question (`memo why`), or why it is not a candidate."""

    path: str = doc("The note, relative to the library root.")
    query: str = doc("The question as searched.")
    within: str = doc("The path searched.")
    collection: str | None = doc("The note's collection (null: none).", default=None)
    found: bool = doc("Some chunk of it is a candidate.", default=False)
    rank: int | None = doc("Its best chunk's place in the fused list (1-based).", default=None)
    chunks: list[Placed] = doc("Its chunks among the candidates, best first.", factory=list)
    above: list[Above] = doc(f"The hits above its best chunk (at most {ABOVE}).", factory=list)
    reasons: list[str] = doc("Why it is not found, or what keeps it low.", factory=list)
    warnings: list[str] = doc(factory=list)


def placed(
    ranking: Ranking,
    owner: int,
    note: str,
    out: WhyResult,
    deeper: Callable[[], Ranking] | None = None,
) -> None:
    """The note's chunks among the ranking's candidates (`owner`: its collection's place in
    the scope; `note`: its path in the collection), and the hits above the best of them;
    `deeper`: the same question's legs read deeper, asked only to place a note that is no
    candidate."""
    rows = ranking.reader.read(owner, lambda c: c.note_chunks(note))
    legs = ranking.legs
    lex = {key: (i, s) for i, (key, s) in enumerate(legs.lex, start=1)}
    vec = {key: (i, s) for i, (key, s) in enumerate(legs.vec, start=1)}
    for cid, line, heading, pending in rows:
        key = (owner, cid)
        at = ranking.place(key)
        if at is None:
            continue
        out.chunks.append(
            Placed(
                line=line,
                heading=heading,
                fused_rank=at,
                score=round(ranking.scores[key], 6),
                lex_rank=lex[key][0] if key in lex else None,
                bm25=round(lex[key][1], 4) if key in lex else None,
                vec_rank=vec[key][0] if key in vec else None,
                cosine=round(vec[key][1], 4) if key in vec else None,
                pending=bool(pending),
            )
        )
    out.chunks.sort(key=lambda c: c.fused_rank)
    out.found = bool(out.chunks)
    if out.found and not any(c.lex_rank for c in out.chunks):
        out.reasons += [r for r in absent(ranking, owner, note, rows) if "no word" in r]
    if out.found:
        out.rank = out.chunks[0].fused_rank
        shown = min(out.rank - 1, ABOVE)
        above, got = ranking.ordered(shown) if shown else ([], {})
        out.above = [
            Above(
                ranking.scope.parts[key[0]][0].root_path(got[key].path),
                got[key].line,
                got[key].heading,
                round(ranking.scores[key], 6),
            )
            for key in above[:shown]
        ]
    else:
        out.reasons += absent(ranking, owner, note, rows, deeper)


def absent(
    ranking: Ranking,
    owner: int,
    note: str,
    rows: list[tuple],
    deeper: Callable[[], Ranking] | None = None,
) -> list[str]:
    """Why none of the note's chunks is a candidate, as far as memo can tell."""
    coll = ranking.scope.parts[owner][0]
    if not rows:
        return [f"it has no chunk in the index of {coll.rel}: " + _unindexed(coll, note)]
    said = []
    pending = sum(1 for r in rows if r[3])
    if pending:
        said.append(
            f"{pending} of its {len(rows)} chunks have no vector yet (being computed): the "
            "vector leg cannot see them"
        )
    texts = ranking.reader.read(owner, lambda c: c.note_texts(note))
    asked = set(query_terms(ranking.legs.text or ""))
    held = {t for text in texts for t in terms(text)}
    if asked and not asked & held:
        said.append("it holds no word of the question: the lexical leg cannot find it")
    best = _best_cosine(ranking, owner, [r[0] for r in rows])
    if best is not None and ranking.legs.vec:
        last = ranking.legs.vec[-1][1]
        said.append(
            f"its nearest chunk's cosine {best:.3f} is below the vector leg's last candidate's "
            f"({last:.3f}, of {len(ranking.legs.vec)}): other notes lie nearer the question"
        )
    if deeper is not None and (beyond := _beyond(deeper(), {(owner, r[0]) for r in rows})):
        said.append(beyond)
    return said or ["none of its chunks ranks among the candidates of either leg"]


def _beyond(deeper: Ranking, mine: set[tuple[int, int]]) -> str | None:
    """Where the note's best chunk stands in each leg read deeper than a search reads it."""
    places = [
        f"{at} in the {name} leg"
        for name, keys in (("lexical", deeper.legs.lex_ranked), ("vector", deeper.legs.vec_ranked))
        if (at := next((i for i, key in enumerate(keys, start=1) if key in mine), None))
    ]
    if not places:
        return None
    return (
        f"a search reads each leg's first {CANDIDATES} chunks; read deeper, its best chunk ranks "
        + " and ".join(places)
    )


def searched_at(scope: Scope, coll: Collection | None, full: Path) -> int | None:
    """The place in the scope of the collection part that searches this note, or None."""
    for i, (c, prefix) in enumerate(scope.parts):
        if c is not coll:
            continue
        inside = str(full.relative_to(c.folder)).replace("\\", "/")
        if not prefix or inside == prefix or inside.startswith(prefix.rstrip("/") + "/"):
            return i
    return None


def outside(lib_root: Path, owner: Collection | None, full: Path, route: list[str] | None) -> str:
    """Why a note is not in the scope searched: no collection, a rule, or not routed."""
    rel = str(full.relative_to(lib_root)).replace("\\", "/")
    if owner is None:
        return f"{rel} is in no collection (no _meta.yaml at or above its folder): never indexed"
    rule = left_out(lib_root, owner, full)
    if rule is not None:
        return rule
    if route is not None:
        return f"its collection {owner.rel} was not routed: the router chose {', '.join(route)}"
    return f"its collection {owner.rel} is outside the path searched"


def left_out(lib_root: Path, owner: Collection, full: Path) -> str | None:
    """The rule that leaves this note out on purpose (collection/excluded.py), said."""
    inside = str(full.relative_to(owner.folder)).replace("\\", "/")
    rule = for_collection(owner.folder, lib_root).note(inside)
    return f"it is left out on purpose: {rule.why}" if rule is not None else None


def _unindexed(coll: Collection, note: str) -> str:
    """Why a note of this collection has no chunk: skipped, failed, or empty of words."""
    st = coll.status()
    for kind in ("skipped", "failed"):
        for f in getattr(st, kind):
            if f.get("path") == note:
                return f"{kind}: {f.get('why') or f.get('error')}"
    for f in st.indexed_files:
        if f.get("path") == note:
            runs = [f"lines {d['first']}-{d['last']}: {d['why']}" for d in f.get("dropped", [])]
            return "no line of it is indexed (" + "; ".join(runs) + ")" if runs else "no text"
    return "not indexed yet (a search catches it up; check `memo status`)"


def _best_cosine(ranking: Ranking, owner: int, ids: list[int]) -> float | None:
    """The best cosine of any of these chunks (and their windows) to the question."""
    held = ranking.reader.matrices.get(owner)
    if held is None or ranking.legs.qvec is None:
        return None
    return held.best(ids, ranking.legs.qvec)
