"""`memo related`: a note's neighbours, in the link graph and in meaning (issue 45).

For one note (`path`, or `path:line` for its section), after the catch-up a search makes:
`links` (what it links to, resolved as Obsidian resolves them: linkgraph.py), `backlinks` (each
note linking to it, confirmed by the resolver), `similar` (the notes nearest it in meaning,
from the stored vectors only: no model) and `unresolved` (its links that open nothing); every
item at a line. `max_tokens` keeps the first items of every list, taken in turn, while they
fit.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..collection import links
from ..collection.chunker import SECTION_LEVELS, decode
from ..collection.collection import Collection
from ..collection.links import LinkKind
from ..collection.markdown import around_link, heading_key, locate, section
from ..collection.matrix import Matrix
from ..errors import NotFoundError
from ..outputs import Published, doc
from ..requests import RelatedRequest
from ..search.results import BUDGET, Budget
from .collections import Collections
from .freshness import Caught
from .linkgraph import LinkGraph, Resolver
from .targets import confine, label, resolve

TEXT_CHARS = 300  # a backlink's line, cut around its link


@dataclass(frozen=True, slots=True)
class Outgoing(Published):
    path: str = doc("The note the link opens, relative to the library root.")
    line: int = doc("The line it opens at: its heading's or block's, else 1.")
    from_line: int = doc("The line of this note the (first such) link sits on.")
    kind: LinkKind = doc("wikilink, embed, markdown or property.")
    target: str = doc("The link's target as written.")
    heading: str = doc("The heading path or ^block it names ('' : the note).")
    by: str = doc(  # linkgraph.py
        "How it resolved: path, name, relative, alias (Obsidian resolves none by an alias), "
        "or self (a heading of this note)."
    )
    times: int = doc("Links of this note to that note and heading.", default=1)


@dataclass(frozen=True, slots=True)
class Backlink(Published):
    path: str = doc("A note linking to this one.")
    line: int = doc("The line of its first link here.")
    text: str = doc("That line (cut around the link when long).")  # stripped
    kind: LinkKind = doc("wikilink, embed, markdown or property.")
    heading: str = doc("The heading or ^block of this note it names.")
    times: int = doc("Its links to this note and heading.", default=1)


@dataclass(frozen=True, slots=True)
class Similar(Published):
    path: str = doc("A note near this one in meaning.")
    line: int = doc("Its section nearest this note.")  # or this section
    heading: str = doc("That section's heading path.")
    # or the section's vector
    score: float = doc("Cosine of the two notes' mean vectors.")


@dataclass(frozen=True, slots=True)
class Unresolved(Published):
    path: str = doc("This note.")
    line: int = doc("The line the link sits on.")
    target: str = doc("The link's target as written.")
    kind: LinkKind = doc("wikilink, embed, markdown or property.")
    heading: str = doc("The heading or ^block it names.")


@dataclass(slots=True)
class RelatedResult(Published):
    path: str = doc("The note, relative to the library root.")
    abs_path: str = doc("Absolute path, for your file-reading tool.")
    line: int | None = doc("The line asked for, if any.")
    section: tuple[int, int] | None = doc("With a line: the lines of its section.")
    links: list[Outgoing] = doc("The notes this note links to, in its order.", factory=list)
    backlinks: list[Backlink] = doc("The notes linking to it.", factory=list)
    similar: list[Similar] = doc("The notes nearest it in meaning.", factory=list)
    unresolved: list[Unresolved] = doc("Its links that open no note.", factory=list)
    took_ms: float = doc("Milliseconds the call took.", default=0.0, digits=2)
    warnings: list[str] = doc(factory=list)
    budget: Budget | None = doc(BUDGET, default=None)


LISTS = ("links", "backlinks", "similar", "unresolved")
CatchUp = Callable[[list[tuple[Collection, str]]], Caught]


def related(
    colls: Collections,
    graph: LinkGraph,
    req: RelatedRequest,
    catch_up: CatchUp,
    count: Callable[[str], int],
) -> RelatedResult:
    """The answer to `memo related` (see the module's docstring)."""
    t0 = time.perf_counter()
    coll, inner, full = _note(colls, req.path)
    rel = coll.root_path(inner)
    everyone = colls.under()
    if not any(c.rel == coll.rel for c in everyone):
        everyone.append(coll)
    warnings = catch_up([(c, "") for c in everyone]).warnings
    resolver, said = graph.resolver(everyone)
    warnings += said
    section = _section(_lines(full), req.line) if req.line is not None else None
    mine, _ = coll.links_of(inner)
    unknown, _ = coll.links_unknown(inner)
    if section is not None:
        mine = [x for x in mine if section[0] <= x.line <= section[1]]
    res = RelatedResult(rel, str(full), req.line, section)
    res.links, res.unresolved = _outgoing(mine, rel, resolver, colls.root)
    res.backlinks = _backlinks(everyone, rel, resolver, colls.root)
    if not unknown:
        res.similar, more = _similar(coll, inner, everyone, req.k, req.line)
        warnings += more
    else:
        warnings.append(f"{rel} {unknown}: its own links and similar notes are not known")
    res.warnings = warnings
    if req.max_tokens is not None:
        res.budget = _fit(res, req.max_tokens, count)
    res.took_ms = (time.perf_counter() - t0) * 1000
    return res


def _note(colls: Collections, path: str) -> tuple[Collection, str, Path]:
    """The collection holding the note at `path`, its path there, and its absolute path."""
    full = confine(colls.root, path)
    shown = label(colls.root, full)
    if full.is_dir() or not full.name.lower().endswith(".md"):
        raise NotFoundError(
            f"{shown} is not a note",
            "memo related takes one note's path (a search hit's `path` or `path:line`).",
        )
    coll, inner = resolve(colls, path).parts[0]
    return coll, inner, full


def _lines(full: Path) -> list[str]:
    try:
        return decode(full.read_bytes())[0].split("\n")
    except OSError as e:
        raise NotFoundError(f"cannot read {full}: {e.strerror or e}") from e


def _section(lines: list[str], line: int) -> tuple[int, int]:
    """The 1-based lines of the section holding `line` (markdown.section, the chunker's
    borders: SECTION_LEVELS); NotFoundError past the note's end."""
    if line > len(lines):
        raise NotFoundError(
            f"line {line} is past the note's end (it has {len(lines)} lines)",
            f"Give a line from 1 to {len(lines)} (a hit's `line`), or the note's path alone.",
        )
    return section(lines, line, SECTION_LEVELS)


def _outgoing(
    mine: list[links.Link], rel: str, resolver: Resolver, root: Path
) -> tuple[list[Outgoing], list[Unresolved]]:
    """This note's links: resolved, one per note and heading; and those that open nothing."""
    out: dict[tuple[str, str], Outgoing] = {}
    lost: dict[tuple[str, str], Unresolved] = {}
    texts: dict[str, list[str] | None] = {}
    for x in mine:
        t = resolver.resolve(x.target, rel)
        if t is None:
            key = (links.fold(links.stem(x.target)), links.fold(x.sub))
            lost.setdefault(key, Unresolved(rel, x.line, x.target, x.kind, x.sub))
            continue
        key = (t.path, heading_key(x.sub))
        if key in out:
            out[key] = _times(out[key], out[key].times + 1)
            continue
        at = 1
        if x.sub:
            if t.path not in texts:
                texts[t.path] = _maybe_lines(root / t.path)
            got = texts[t.path]
            at = (locate(got, x.sub) or 1) if got is not None else 1
        out[key] = Outgoing(t.path, at, x.line, x.kind, x.target, x.sub, t.by)
    return list(out.values()), list(lost.values())


def _times(o: Any, n: int) -> Any:
    return replace(o, times=n)


def _maybe_lines(path: Path) -> list[str] | None:
    try:
        return decode(path.read_bytes())[0].split("\n")
    except OSError:
        return None


def _backlinks(colls: list[Collection], rel: str, resolver: Resolver, root: Path) -> list[Backlink]:
    """Every note linking to `rel`, at its first such link, with that line's text."""
    names = resolver.names(rel)
    found: dict[str, tuple[Backlink, str]] = {}  # linking note -> (backlink, target written)
    for c in colls:
        rows, _ = c.links_naming(names)
        for path, x in rows:
            source = c.root_path(path)
            if source == rel:
                continue  # a note is not its own backlink
            t = resolver.resolve(x.target, source)
            if t is None or t.path != rel:
                continue
            if source in found:
                b, target = found[source]
                found[source] = (_times(b, b.times + 1), target)
                continue
            found[source] = (Backlink(source, x.line, "", x.kind, x.sub), x.target)
    out = []
    for source, (b, target) in sorted(found.items()):
        got = _maybe_lines(root / source)
        text = got[b.line - 1].strip() if got is not None and b.line <= len(got) else ""
        cut = around_link(text, target, TEXT_CHARS)
        out.append(Backlink(b.path, b.line, cut, b.kind, b.heading, b.times))
    return out


def _similar(
    coll: Collection, inner: str, colls: list[Collection], k: int, line: int | None
) -> tuple[list[Similar], list[str]]:
    """The k notes of the library nearest this note (or its section at `line`) in meaning."""
    q, warning = _anchor(coll, inner, line)
    if q is None:
        return [], [warning] if warning else []
    scored: list[tuple[float, Collection, Matrix, int]] = []
    for c in colls:
        m, _ = c.vectors()
        if m is None:
            continue
        skip = inner if c.rel == coll.rel else None
        scored += [(score, c, m, j) for score, j in m.nearest_notes(q, k, skip)]
    scored.sort(key=lambda s: (-s[0], s[1].root_path(s[2].notes[s[3]])))
    return [_nearest_chunk(c, m, j, q, score) for score, c, m, j in scored[:k]], []


def _anchor(coll: Collection, inner: str, line: int | None) -> tuple[np.ndarray | None, str]:
    """The vector `similar` starts from: the note's mean, or its chunk holding `line`."""
    m, _ = coll.vectors()
    mean = m.mean_of(inner) if m is not None else None
    if m is None or mean is None:
        return None, "similar: this note has no vectors yet (memo index computes them)"
    if line is None:
        return mean, ""
    cid, _ = coll.chunk_at(inner, line)
    own = m.own_vector(cid) if cid is not None else None
    return (mean if own is None else own), ""


def _nearest_chunk(c: Collection, m: Matrix, j: int, q: np.ndarray, score: float) -> Similar:
    """The similar note `j` of matrix `m`, at its chunk nearest `q`."""
    best = m.nearest_chunk(j, q)
    place = c.chunk_place(best)[0] if best is not None else None
    line, heading = place if place is not None else (1, "")
    return Similar(c.root_path(m.notes[j]), line, heading, round(score, 4))


def _cost_text(name: str, x: Any) -> str:
    if name == "links":
        return f"{x.path}:{x.line} {x.heading} (line {x.from_line})"
    if name == "backlinks":
        return f"{x.path}:{x.line} {x.text}"
    if name == "similar":
        return f"{x.path}:{x.line} {x.heading} {x.score}"
    return f"{x.path}:{x.line} {x.target}#{x.heading}"


def _fit(res: RelatedResult, max_tokens: int, count: Callable[[str], int]) -> Budget:
    """Keep the first items of every list, taken in turn, while they fit in max_tokens."""
    kept: dict[str, list[Any]] = {name: [] for name in LISTS}
    used = 0
    full = False
    depth = max((len(getattr(res, n)) for n in LISTS), default=0)
    for i in range(depth):
        for name in LISTS:
            items = getattr(res, name)
            if full or i >= len(items):
                continue
            cost = count(_cost_text(name, items[i]))
            if used + cost > max_tokens:
                full = True
                continue
            kept[name].append(items[i])
            used += cost
    total = sum(len(getattr(res, n)) for n in LISTS)
    for name in LISTS:
        setattr(res, name, kept[name])
    dropped = total - sum(len(v) for v in kept.values())
    return Budget(max_tokens, used, dropped, 0)
