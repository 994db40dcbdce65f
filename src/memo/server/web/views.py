"""What the templates show, made from the typed results every driver gets from the Service.

The page holds no logic of its own about notes: a search is `SearchRequest.make` +
`service.search`, the note view is `service.read` (its neighbours `service.related`), the
library is `service.status`. These
functions only shape those results for reading: links, marked words, relative times.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup

from ...library import Entry, StatusReport
from ...library.related import RelatedResult
from ...requests import MAX_LINES
from ...router.route import RouteResult
from ...search.excerpt import Excerpt
from ...search.results import Hit, SearchResult, best_lines, snippet
from ..render import ago, coverage_lines
from .highlight import marked
from .source import Targets, source_lines

SNIPPET_CHARS = 700  # of a hit's ~1,200: enough to judge it, short enough to scan on a phone
MAX_SCOPE_OPTIONS = 300  # beyond this many folders the scope is a text field, not a list


def search_href(query: str, scope: str = ".", mode: str = "hybrid") -> str:
    params = {"q": query}
    if scope not in (".", ""):
        params["scope"] = scope
    if mode != "hybrid":
        params["mode"] = mode
    return "/?" + urlencode(params)


def read_href(
    path: str,
    line: int | None = None,
    end: int | None = None,
    cite: str = "",
    query: str = "",
    best: tuple[int, int] | None = None,
) -> str:
    """The note page at the cited lines; with `best` (a hit's focus fewer than them:
    results.best_lines), those lines marked too and the page opened at them."""
    params: dict[str, Any] = {"path": path}
    at = line
    if line:
        params["line"] = line
        if end and end > line:
            params["end"] = end
        if cite:
            params["cite"] = cite
        if best:
            params["best"], params["best_end"] = best
            at = best[0]
    if query:
        params["q"] = query
    return "/read?" + urlencode(params) + (f"#L{at}" if at else "")


def scope_options(entries: list[Entry]) -> list[str] | None:
    """Every collection and every folder above collections (what a search path may name);
    None when there are too many to list."""
    if len(entries) > MAX_SCOPE_OPTIONS:  # before walking them: a page search stays cheap
        return None
    paths: set[str] = set()
    for e in entries:
        if e.error or e.path == ".":
            continue
        parts = e.path.split("/")
        paths.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    if len(paths) > MAX_SCOPE_OPTIONS:
        return None
    return sorted(paths)


@dataclass(frozen=True, slots=True)
class HitView:
    n: int
    hit: Hit
    where: str  # path:line or path:line-end
    heading: Markup
    text: Markup
    href: str
    best: str = ""  # the lines of its focus, when fewer than its own ("104–107")


def hit_views(res: SearchResult, stems: frozenset[str]) -> list[HitView]:
    out = []
    for i, h in enumerate(res.hits, 1):
        end = h.end_line if h.end_line > h.line else 0
        where = f"{h.path}:{h.line}" + (f"-{end}" if end else "")
        best = best_lines(h.line, h.end_line, h.focus_line, h.focus_end_line)
        said = ""
        if best:
            said = f"{best[0]}–{best[1]}" if best[1] > best[0] else str(best[0])
        out.append(
            HitView(
                n=i,
                hit=h,
                where=where,
                heading=marked(h.heading, stems),
                text=marked(
                    snippet(h.text, h.line, h.focus_line, h.focus_end_line, SNIPPET_CHARS), stems
                ),
                href=read_href(h.path, h.line, end, h.cite, res.query, best),
                best=said,
            )
        )
    return out


def freshness_view(res: SearchResult) -> dict[str, Any]:
    """The receipt: which collections were searched and what this search caught up first."""
    caught = [f for f in res.freshness if f.caught_up]
    return {
        "collections": [f.collection for f in res.freshness] or res.collections,
        "caught_up": sum(f.caught_up for f in res.freshness),
        "by_collection": [(f.collection, f.caught_up) for f in caught],
        "rebuilt": [(f.collection, f.rebuilt) for f in res.freshness if f.rebuilt],
        "all_current": all(f.current for f in res.freshness),
    }


def root_name(root: Path) -> str:
    """What a person calls the library's root folder (a collection at the root is "."): its
    name."""
    return root.name or str(root)


def route_views(
    routed: RouteResult | None, query: str, mode: str, root: str = "."
) -> list[dict[str, Any]]:
    """The router's collections as links that search there, each named as a person knows it
    (the root collection by the library folder's name, `root`, not ".")."""
    if routed is None:
        return []
    return [
        {
            "path": c.path,
            "label": root if c.path == "." else c.path,
            "description": c.description,
            "href": search_href(query, c.path, mode),
        }
        for c in routed.collections
    ]


@dataclass(frozen=True, slots=True)
class LineView:
    n: int
    text: Markup
    cited: bool
    best: bool = False  # among the lines of the search hit's focus
    kind: str = ""  # what the line is (source.SourceLine.kind: code, fm, co co-tip, h h2...)
    why: str = ""  # why the index reads it as nothing ('' when it reads it)


def note_lines(
    note: Excerpt,
    first: int | None,
    last: int | None,
    stems: frozenset[str],
    best: tuple[int, int] | None = None,
    before: list[str] | None = None,
    targets: Targets | None = None,
) -> list[LineView]:
    """The note's lines as written, every one of them (source.py: decorated, nothing left
    out), numbered from where the excerpt starts, the cited range flagged, and within it the
    hit's focus (`best`, first and last). `before`: the note's lines above the excerpt, read
    for what runs into it (frontmatter, a fence, a comment); `targets`: where its links open."""
    lines = note.text.split("\n") if note.total_lines else []
    above = before or []
    shown = source_lines(above + lines, len(above) + 1, stems, targets)
    out = []
    for i, line in enumerate(shown, note.line):
        cited = first is not None and first <= i <= (last or first)
        focused = cited and best is not None and best[0] <= i <= best[1]
        out.append(LineView(i, line.text, cited, focused, line.kind, line.why))
    return out


def link_targets(res: RelatedResult) -> Targets:
    """Where the note's links open (`memo related`'s resolution), for its page's links."""
    opens = {}
    for x in res.links:
        key = Targets.key(x.target, x.heading)
        if key not in opens:
            opens[key] = f"#L{x.line}" if x.path == res.path else read_href(x.path, _at(x.line))
    lost = frozenset(Targets.key(x.target, x.heading) for x in res.unresolved)
    return Targets(opens, lost)


def _at(line: int) -> int | None:
    return line if line > 1 else None  # a note opened at its top needs no anchor


def window_start(line: int | None, total_hint: int) -> int | None:
    """Where to start reading a note too long to show whole so that `line` is on the page."""
    if line is None or line <= MAX_LINES:
        return None
    return max(1, min(line - MAX_LINES // 4, total_hint - MAX_LINES + 1))


# ---------------------------------------------------------------------- the library
def _when(ts: float | None) -> dict[str, str] | None:
    if ts is None:
        return None
    return {"ago": ago(ts), "iso": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(ts))}


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def library_view(report: StatusReport, entries: list[Entry]) -> dict[str, Any]:
    """Every collection of the status report, with its tags from the registry."""
    tags = {e.path: e.tags for e in entries}
    rows: list[dict[str, Any]] = []
    watcher = last_reconcile = None
    for c in report.collections:
        watcher = watcher or c.watcher_last_seen
        last_reconcile = last_reconcile or c.last_reconcile
        rows.append(
            {
                "c": c,
                "tags": tags.get(c.path, ()),
                "last_indexed": _when(c.last_indexed),
                "size": _size(c.size_bytes),
                "search_href": "/?" + urlencode({"scope": c.path}),
                "problems": len(c.skipped) + len(c.failed) + bool(c.damaged) + bool(c.lost),
                "coverage": coverage_lines(c.indexed_files),
            }
        )
    return {
        "root": report.root,
        "rows": rows,
        "errors": report.errors,
        "warnings": report.warnings,
        "fusion": report.fusion,
        "watcher": _when(watcher),
        "last_reconcile": _when(last_reconcile),
        "totals": {
            "collections": len(rows),
            "files": sum(r["c"].files for r in rows),
            "chunks": sum(r["c"].chunks for r in rows),
            "stale": sum(r["c"].stale for r in rows),
            "pending": sum(r["c"].pending for r in rows),
        },
    }


RELATED_SHOWN = 10  # items of each list the note page shows


def related_view(res: RelatedResult) -> dict[str, Any]:
    """The note page's neighbours (library/related.py): each list's first items, each a link
    to that note at its line, named by its file name (its path in the tooltip), with what it
    says there; and how many there are in all."""

    def item(path: str, line: int, what: str, here: int | None = None) -> dict[str, Any]:
        name = path.rsplit("/", 1)[-1].removesuffix(".md")
        return {
            "href": read_href(path, line),
            "name": f"{name}:{line}",
            "where": f"{path}:{line}",
            "what": what,
            "here": here,
        }

    lists = {
        "links": [
            item(x.path, x.line, f"#{x.heading}" if x.heading else "", x.from_line)
            for x in res.links
        ],
        "backlinks": [item(x.path, x.line, x.text) for x in res.backlinks],
        "similar": [item(x.path, x.line, f"{x.score:.3f} · {x.heading}") for x in res.similar],
        "unresolved": [
            {
                "href": "",
                "name": f"[[{x.target}{'#' + x.heading if x.heading else ''}]]",
                "where": f"{x.path}:{x.line}",
                "what": "",
                "here": x.line,
            }
            for x in res.unresolved
        ],
    }
    return {
        name: {"shown": items[:RELATED_SHOWN], "all": len(items)} for name, items in lists.items()
    }
