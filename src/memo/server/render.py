"""The text of memo's answers, one rendering for the MCP tools and the CLI: `path:line` first,
then why it matched.

A model reads the MCP text (`MCP`); a person reads the CLI's (`CLI`): the same blocks from the
same dicts, with the differences a terminal asks for, each a field of `Face` (the CLI adds its
colour and its split of stdout and stderr). memo's tools return this text alone by default, so
every host shows the model the same thing (docs/agents.md), and `max_tokens` bounds it: a
rendering given `limit` (characters as a host's JSON carries them) keeps its head and tail and as
many blocks (hits, collections, lines) as fit, the last cut at a sentence border.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..printable import shown
from ..search import results
from ..skill import named_languages

SNIPPET_CHARS = 300
CHARS_PER_TOKEN = 4  # what max_tokens allows a model to read, in characters (issue 23)
MIN_CUT = 80  # a block cut shorter than this is left out instead
_BORDER = re.compile(r"(?<=[.!?…;:])\s+|\n")


@dataclass(frozen=True, slots=True)
class Face:
    """What one driver says its own way of what every driver says alike."""

    numbered: bool  # blocks numbered `1.` (a model cites them), else indented for a person
    cited: bool  # a hit's line span, focus and cite after its `path:line`
    snippet: Callable[[dict[str, Any]], str]  # a hit's text in one line
    quote: Callable[[str], str]  # a question, quoted
    bold: Callable[[str], str] = str  # the `path:line` a block leads with
    indent: str = ""  # before a line under a head
    json_note: str = ""  # after a count of items left out that `--json` has
    # status and index say more of each index to a person: its name, model, size, languages
    # and unindexed lines, the watcher, broken collections (a model reads their errors), the
    # embedding cache and each collection's warnings; a model is told how long ago each index
    # was made. Both are told the chunks still waiting for their vectors.
    index_detail: bool = False


def ago(ts: float | None) -> str:
    if ts is None:
        return "never"
    s = max(0.0, time.time() - ts)
    if s < 90:
        return f"{s:.0f} s ago"
    if s < 5400:
        return f"{s / 60:.0f} min ago"
    if s < 172800:
        return f"{s / 3600:.0f} h ago"
    return f"{s / 86400:.0f} days ago"


def limit_for(max_tokens: int | None) -> int | None:
    """The characters a rendering may take for a `max_tokens` (None: no bound)."""
    return None if max_tokens is None else max_tokens * CHARS_PER_TOKEN


def wire_len(text: str) -> int:
    """Characters `text` takes inside a JSON string (what a host hands the model)."""
    return len(text) + text.count("\n") + text.count('"') + text.count("\\") + text.count("\t")


def _cut(text: str, room: int) -> str | None:
    """The longest prefix of `text` ending at a sentence (else word) border within `room`."""
    ends = [m.start() for m in _BORDER.finditer(text)]
    best = next((e for e in reversed(ends) if wire_len(text[:e]) + 2 <= room), None)
    if best is None:
        words = text.split(" ")
        while words and wire_len(" ".join(words)) + 2 > room:
            words.pop()
        best = len(" ".join(words)) if words else None
    return text[:best].rstrip() + " …" if best else None


def bounded(head: list[str], blocks: list[str], tail: list[str], limit: int | None) -> str:
    """head, blocks, tail joined by newlines; within `limit` when one is given."""
    if limit is None:
        return "\n".join(head + blocks + tail)
    out = list(head)
    used = wire_len("\n".join(head + tail)) + 2
    for i, block in enumerate(blocks):
        cost = wire_len(block) + 2
        if used + cost <= limit:
            out.append(block)
            used += cost
            continue
        note = f"({len(blocks) - i} more left out to stay within max_tokens)"
        room = limit - used - wire_len(note) - 2
        piece = _cut(block, room) if room >= MIN_CUT else None
        if piece is not None:
            out.append(piece)
            note = f"({len(blocks) - i - 1} more left out to stay within max_tokens)"
        if len(blocks) - i - (piece is not None):
            out.append(note)
        break
    text = "\n".join(out + tail)
    while wire_len(text) > limit and len(text) > 1:  # the head and tail alone were too long
        text = text[: max(1, len(text) - (wire_len(text) - limit) - 2)].rstrip() + " …"
    return text


def _root_of(hit: dict[str, Any]) -> str:
    abs_path, path = hit.get("abs_path", ""), hit["path"]
    return abs_path[: -len(path)].rstrip("/") if path and abs_path.endswith(path) else ""


def focused(h: dict[str, Any]) -> str:
    """`(best 74-78)` when the lines that match best (search/focus.py) are fewer than the
    hit's."""
    best = results.best_lines(
        h["line"], h.get("end_line", 0), h.get("focus_line", 0), h.get("focus_end_line", 0)
    )
    if best is None:
        return ""
    return f" (best {best[0]}-{best[1]})" if best[1] > best[0] else f" (best {best[0]})"


def snippet_of(h: dict[str, Any]) -> str:
    """A hit's text in one line of at most SNIPPET_CHARS, from its focus when it has one."""
    at = h.get("focus_line", 0), h.get("focus_end_line", 0)
    snippet = " ".join(results.snippet(h["text"], h["line"], *at, SNIPPET_CHARS).split())
    if len(snippet) > SNIPPET_CHARS:
        snippet = snippet[:SNIPPET_CHARS].rsplit(" ", 1)[0] + " …"
    return snippet


CLI_SNIPPET_CHARS = 240  # a terminal's line or two


def cli_snippet_of(h: dict[str, Any]) -> str:
    """A hit's text in one line of at most CLI_SNIPPET_CHARS (a terminal's), from its focus."""
    at = h.get("focus_line", 0), h.get("focus_end_line", 0)
    snippet = " ".join(results.snippet(h["text"], h["line"], *at, CLI_SNIPPET_CHARS).split())
    cut = "…" if len(snippet) > CLI_SNIPPET_CHARS else ""
    return snippet[:CLI_SNIPPET_CHARS] + cut


MCP = Face(numbered=True, cited=True, snippet=snippet_of, quote=lambda q: f'"{q}"')


def hit_blocks(r: dict[str, Any], face: Face = MCP) -> list[str]:
    """A search's hits, one block each: `path:line`, heading and score, then the text, then
    (with `explain`) why it ranks."""
    blocks = []
    pad = "   " if face.numbered else "    "
    for i, h in enumerate(r["results"], 1):
        if face.numbered:
            heading = f"  [{h['heading']}]" if h["heading"] else ""
        else:
            heading = f"  {h['heading']}" if h["heading"] else ""
        if face.cited:
            end = h.get("end_line", 0)
            span = f"{h['line']}-{end}" if end > h["line"] else h["line"]
            where = face.bold(f"{shown(h['path'])}:{span}") + focused(h)
            line = f"{i}. {where}{heading}  score {h['score']:.4f}  cite {h['cite']}"
        else:
            line = face.bold(f"{shown(h['path'])}:{h['line']}") + f"{heading}  ({h['score']:.4f})"
        why = f"\n{pad}{results.explain_line(h['explain'])}" if h.get("explain") else ""
        blocks.append(f"{line}\n{pad}{face.snippet(h)}{why}")
    return blocks


def search_text(r: dict[str, Any], limit: int | None = None) -> str:
    hits = r["results"]
    where = f"in {r['target']} ({r['mode']}, {r['took_ms']} ms)"
    head = [f'{len(hits)} hits for "{r["query"]}" {where}; confidence {r["confidence"]}']
    if hits and r["confidence"] == "none":
        head.append("No good match: only the nearest notes; the answer is likely not here.")
    blocks = hit_blocks(r)
    tail = []
    if not hits:
        tail.append("No match. Try other words, mode=lex for exact names, or memo_route first.")
    fresh = r.get("freshness") or []
    caught = sum(f["caught_up"] for f in fresh)
    if fresh:
        note = f"{caught} changed files re-indexed first" if caught else "index was current"
        tail.append(f"freshness: {len(fresh)} collections searched, {note}.")
    b = r.get("budget")
    if b:
        tail.append(
            f"budget: {b['used']} of {b['max_tokens']} tokens; {b['cut']} hit cut, "
            f"{b['dropped']} dropped."
        )
    tail += [f"warning: {w}" for w in r.get("warnings") or []]
    if hits:
        root = _root_of(hits[0])
        where = f" (paths are under {root})" if root else ""
        tail.append(
            f"Read a hit with your file tool at the line shown{where}, or with "
            "memo_get(path:line-end); a different `cite` from memo_get means the note changed."
        )
    return bounded(head, blocks, tail, limit)


def get_text(r: dict[str, Any], limit: int | None = None) -> str:
    """A read: its `path:line-end` and cite, then its lines; a read of several (`more`) gives
    each excerpt its own head, in order."""
    more = r.get("more") or []
    if not more:
        return bounded([_excerpt_head(r)], r["text"].split("\n"), [], limit)
    blocks = []
    for ex in (r, *more):
        blocks.append(_excerpt_head(ex))
        blocks += ex["text"].split("\n") if ex["end_line"] >= ex["line"] else []
    return bounded([f"{1 + len(more)} excerpts"], blocks, [], limit)


def _excerpt_head(r: dict[str, Any]) -> str:
    if r["end_line"] < r["line"] and r["more_lines"]:  # of several: no max_tokens was left
        return f"{shown(r['path'])}:{r['line']}: not read, max_tokens was spent (read it from here)"
    more = f", {r['more_lines']} more lines from {r['next_line']}" if r["more_lines"] else ""
    where = f"{shown(r['path'])}:{r['line']}-{r['end_line']}"
    return f"{where} of {r['total_lines']}{more}; cite {r['cite']}"


def route_blocks(r: dict[str, Any], face: Face = MCP) -> list[str]:
    """A route's collections, one block each: path, description, the notes' language and
    score, then its best hits."""
    blocks = []
    for i, c in enumerate(r["collections"], 1):
        lang = named_languages(c.get("languages") or {})
        if face.numbered:
            said = f"notes in {lang}; " if lang else ""
            head = f"{i}. {shown(c['path'])}  — {c['description']}  ({said}score {c['score']:.4f})"
            lines = [head]
        else:
            said = f"notes in {lang}, " if lang else ""
            name = f"  [{shown(c['name'])}]  ({said}{c['score']:.4f})"
            lines = [face.bold(shown(c["path"])) + name, f"    {c['description']}"]
        for h in c.get("evidence") or []:
            where = f"{shown(h['path'])}:{h['line']}"
            if face.numbered:
                heading = f"  [{h['heading']}]" if h["heading"] else ""
                lines.append(f"   best hit: {where}{heading}  {h['text'][:SNIPPET_CHARS]}")
            else:
                heading = f"  {h['heading']}" if h["heading"] else ""
                lines += [f"    > {where}{heading}", f"      {h['text'][:CLI_SNIPPET_CHARS]}"]
        blocks.append("\n".join(lines))
    return blocks


def route_text(r: dict[str, Any], limit: int | None = None) -> str:
    cols = r["collections"]
    head = [f'{len(cols)} collections for "{r["query"]}" (strategy {r["strategy"]})']
    blocks = route_blocks(r)
    if cols:
        tail = [
            "The best hits above may already answer; read one at its line. Otherwise call "
            "memo_search with path set to the best collection's path."
        ]
    else:
        tail = ["No collection matched; search path '.' to look everywhere."]
    tail += [f"warning: {w}" for w in r.get("warnings") or []]
    return bounded(head, blocks, tail, limit)


COVERAGE_SHOWN = 3  # a note with more lines than this in no chunk is named by `memo status`


def coverage_lines(files: list[dict[str, Any]]) -> list[str]:
    """One line per note with lines memo lost, or more than COVERAGE_SHOWN lines not indexed
    (a note's coverage report, chunker.coverage, as its index stores it)."""
    out = []
    for f in files:
        runs = f.get("dropped") or []
        n = sum(d["last"] - d["first"] + 1 for d in runs)
        if n > COVERAGE_SHOWN or any(d["lost"] for d in runs):
            whys = "; ".join(
                f"{d['first']}-{d['last']} {d['why']}"
                if d["last"] > d["first"]
                else f"{d['first']} {d['why']}"
                for d in runs[:3]
            ) + ("; …" if len(runs) > 3 else "")
            noun = "line" if n == 1 else "lines"
            out.append(f"not indexed: {n} {noun} of {f['path']} (lines {whys})")
    return out


def status_lines(r: dict[str, Any], face: Face = MCP) -> tuple[list[str], list[str], list[str]]:
    """`status`: the root (head); each collection's line, then what it skipped, left out or
    failed (blocks, one line each); the warnings and errors (tail)."""
    head, blocks, colls = [f"root: {r['root']}"], [], r["collections"]
    if face.index_detail and colls:
        head.append(_watcher(colls[0]))
    for c in colls:
        name = f"  [{shown(c['collection'])}]" if face.index_detail else ""
        blocks.append(f"{shown(c['path'])}{name}  {_index_state(c, face)}")
        blocks += [f"    skipped {s['path']}: {s['why']}" for s in c.get("skipped", [])]
        for x in c.get("excluded", []):
            n, why = x["notes"], shown(x["why"])
            blocks.append(f"    left out on purpose: {n} note{'s' if n != 1 else ''}, {why}")
        blocks += [f"    failed {f['path']}: {f['error']}" for f in c.get("failed", [])]
        if face.index_detail:
            blocks += [f"    {line}" for line in coverage_lines(c.get("indexed_files", []))]
    if face.index_detail:
        blocks += [f"{b['path']}  [broken: not indexed]  {b['error']}" for b in r.get("broken", [])]
        blocks += [_embed_cache(r["embed_cache"])] if r.get("embed_cache") else []
    tail = [f"warning: {w}" for w in r.get("warnings") or []]
    return head, blocks, tail + [f"error: {e}" for e in r.get("errors") or []]


def _watcher(c: dict[str, Any]) -> str:
    seen, scan, now = c.get("watcher_last_seen"), c.get("last_reconcile"), time.time()
    return (
        "watcher: "
        + (f"running (seen {now - seen:.0f} s ago)" if seen else "not running (memo watch)")
        + (f", last full scan {now - scan:.0f} s ago" if scan else "")
    )


def _index_state(c: dict[str, Any], face: Face) -> str:
    """What one collection's index is: damaged, not made yet, or its counts."""
    if c.get("damaged"):
        return c["damaged"]
    if not c["indexed"]:
        n = c["files_on_disk"]
        said = [f"not indexed yet ({n} note{'s' if n != 1 else ''})"]
    else:
        said = [f"{c['files']} files", f"{c['chunks']} chunks"]
        said.append(f"{c['stale']} changed since indexing")
        said += [_vectors(c)] if c.get("pending") and c.get("embedder") else []
        if not face.index_detail:
            return ", ".join([*said, f"last indexed {ago(c['last_indexed'])}"])
        said += [f"embedder {c['embedder'] or 'none (lexical only)'}"]
        said += [f"{c['size_bytes'] / 1e6:.1f} MB"]
        said += [f"languages {c['languages']}"] if c.get("languages") else []
    if face.index_detail and c.get("drafted"):
        said.append("description drafted by memo: review it")
    return ", ".join(said)


def _vectors(c: dict[str, Any]) -> str:
    """The second stage of one collection's index, while chunks wait for their vectors."""
    done = f"vectors {c['chunks'] - c['pending']:,}/{c['chunks']:,} chunks"
    by = c.get("embedding_by")
    return done + (f" (being computed by memo pid {by})" if by else " (run `memo index`)")


def _embed_cache(c: dict[str, Any]) -> str:
    """`status`'s line about the embedding cache (embed/cache.py)."""
    if not c.get("enabled"):
        return "embedding cache: off (MEMO_EMBED_CACHE_MB=0)"
    size = f"{c['size_bytes'] / 2**20:.1f} MiB of {c['cap_bytes'] / 2**20:.0f} MiB"
    rate = c.get("hit_rate")
    looked = c["hits"] + c["misses"]
    hits = (
        f"hit rate {rate:.0%} ({c['hits']:,} of {looked:,} passages)"
        if rate is not None
        else "no lookups yet"
    )
    extra = f"; {c['error']}" if c.get("error") else ""
    return f"embedding cache: {size}, {c['vectors']:,} vectors, {hits}{extra}"


def status_text(r: dict[str, Any], limit: int | None = None) -> str:
    head, blocks, tail = status_lines(r)
    return bounded(head, blocks + tail, [], limit)


def index_lines(r: dict[str, Any], face: Face = MCP) -> tuple[list[str], list[str], list[str]]:
    """`index`: what the pass did (head), the collections it could not read (blocks), the
    warnings and errors (tail)."""
    broken = f"; {len(r['broken'])} broken, not indexed" if r.get("broken") else ""
    if r["nothing_to_do"]:
        skipped = f", {r['skipped']} skipped (above)" if r["skipped"] else ""
        head = (
            f"nothing to do: {r['collections']} collections, "
            f"{r['unchanged']} files up to date{skipped}{broken} ({r['seconds']:.2f} s)"
        )
    else:
        meanwhile = r.get("read_elsewhere", 0)
        who = sorted({c["read_by"] for c in r["collections_detail"] if c.get("read_by")})
        who = who if len(who) == 1 else ["other memo processes"]
        by = f" (and {meanwhile} read meanwhile by {who[0]})" if meanwhile else ""
        cached = f" ({r['chunks_cached']} from the cache)" if r.get("chunks_cached") else ""
        head = (
            f"{r['collections']} collections: {r['new']} new{by}, {r['changed']} changed, "
            f"{r['removed']} removed, {r['unchanged']} unchanged, {r['skipped']} skipped; "
            f"{r['chunks_embedded']} chunks embedded{cached} in {r['seconds']:.1f} s{broken}"
        )
    blocks, tail = [], [f"error: {e}" for e in r["errors"]]
    if face.index_detail:
        blocks = [f"broken: {b['path']}: {b['error']}" for b in r.get("broken", [])]
        tail = [f"warning: {w}" for c in r["collections_detail"] for w in c["warnings"]] + tail
    return [head], blocks, tail


def reindex_text(r: dict[str, Any], limit: int | None = None) -> str:
    head, blocks, tail = index_lines(r)
    if r.get("chunks_pending"):
        blocks.insert(
            0,
            f"searchable now by their words; vectors for {r['chunks_pending']:,} chunks are "
            "being computed in the background (search results say how many are left)",
        )
    return bounded(head, blocks + tail, [], limit)


WHY_SHOWN = 5  # a note's candidate sections the text of `why` lists (the JSON has them all)


def why_lines(r: dict[str, Any], face: Face = MCP) -> tuple[list[str], list[str], list[str]]:
    """`why`: where the note ranks (head), each of its candidate sections (blocks), what stood
    above it and why it is not found (tail); the warnings are each driver's to place."""
    head = f"{shown(r['path'])} for {face.quote(r['query'])} in {r['within']}:"
    head += f" its best section ranks {r['rank']}" if r["found"] else " not among the candidates"
    blocks = [
        f"{face.indent}{c['line']}  {_heading(c['heading'], face, ':')} fused {c['fused_rank']}; "
        + (f"lex #{c['lex_rank']} (bm25 {c['bm25']})" if c["lex_rank"] else "lex -")
        + "; "
        + (f"vec #{c['vec_rank']} (cosine {c['cosine']})" if c["vec_rank"] else "vec -")
        + ("; vector pending" if c["pending"] else "")
        for c in r["chunks"][:WHY_SHOWN]
    ]
    if len(r["chunks"]) > WHY_SHOWN:
        left = len(r["chunks"]) - WHY_SHOWN
        blocks.append(f"{face.indent}… {left} more of its sections further down{face.json_note}")
    tail = [
        f"{face.indent}above it: {shown(a['path'])}:{a['line']}  {_heading(a['heading'], face)}"
        for a in r["above"]
    ]
    tail += [f"{face.indent}why: {x}" for x in r["reasons"]]
    return [head], blocks, tail


def _heading(heading: str, face: Face, after: str = "") -> str:
    """A heading in a line of other things: in brackets for a model, else as it is, `after`
    it (the brackets end it already)."""
    if face.numbered:
        return f"[{heading}]" + (" " if after else "")
    return heading + after


def why_text(r: dict[str, Any], limit: int | None = None) -> str:
    """`memo_why`: where the note ranks, each of its candidate sections, what stood above."""
    head, blocks, tail = why_lines(r)
    tail += [f"warning: {w}" for w in r.get("warnings") or []]
    return bounded(head, blocks, tail, limit)


def related_lines(r: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """`memo related` as text: its head, one block per section title and item, its tail.
    Every item starts with the `path:line` to read next."""
    counts = ", ".join(f"{len(r[n])} {n}" for n in ("links", "backlinks", "similar", "unresolved"))
    section = r.get("section")
    part = f" (lines {section[0]}-{section[1]})" if section else ""
    head = [f"{shown(r['path'])}{part}: {counts}"]
    blocks: list[str] = []
    if r["links"]:
        blocks.append("links (the notes it links to; the line here in parentheses):")
        for x in r["links"]:
            at = f" #{x['heading']}" if x["heading"] else ""
            more = f", {x['times']} links" if x["times"] > 1 else ""
            how = f", {x['kind']}" if x["kind"] != "wikilink" else ""
            how += ", by an alias Obsidian does not resolve" if x["by"] == "alias" else ""
            how += ", this note" if x["by"] == "self" else ""
            blocks.append(
                f"- {shown(x['path'])}:{x['line']}{at}  (line {x['from_line']}{more}{how})"
            )
    if r["backlinks"]:
        blocks.append("backlinks (the notes linking here, at the line of the link):")
        for x in r["backlinks"]:
            more = f"  ({x['times']} links)" if x["times"] > 1 else ""
            blocks.append(f"- {shown(x['path'])}:{x['line']}{more}  {x['text']}")
    if r["similar"]:
        blocks.append("similar (the notes nearest it in meaning, at their nearest section):")
        for x in r["similar"]:
            blocks.append(f"- {shown(x['path'])}:{x['line']}  {x['score']:.3f}  {x['heading']}")
    if r["unresolved"]:
        blocks.append("unresolved (its links that open no note):")
        for x in r["unresolved"]:
            at = f"#{x['heading']}" if x["heading"] else ""
            blocks.append(f"- {shown(x['path'])}:{x['line']}  [[{x['target']}{at}]]")
    tail = []
    b = r.get("budget")
    if b and b["dropped"]:
        tail.append(
            f"budget: {b['used']} of {b['max_tokens']} tokens; {b['dropped']} items left out."
        )
    tail += [f"warning: {w}" for w in r.get("warnings") or []]
    return head, blocks, tail


def related_text(r: dict[str, Any], limit: int | None = None) -> str:
    head, blocks, tail = related_lines(r)
    return bounded(head, blocks, tail, limit)
