"""What the CLI prints for a person, rendered from the same dicts `--json` prints.

Rendering from the JSON form (never from live objects) keeps the text the same whichever way
the answer came: computed in this process, or by a running `memo serve`. A search's hits, a
route's collections, `why` and `related` are the one rendering the MCP tools use too
(server/render.py), in the CLI's `Face`; this module adds the colour and says what goes to
stderr.
"""

from __future__ import annotations

import time
from typing import Any

import click

from ..printable import quoted, shown
from ..roots import MARKER
from ..server import render

# the terminal's way of saying what the MCP text says (server/render.py `Face`)
CLI = render.Face(
    numbered=False,
    cited=False,
    snippet=render.cli_snippet_of,
    quote=repr,
    bold=lambda s: click.style(s, bold=True),
    indent="  ",
    json_note=" (--json)",
)
CONFIDENCE_WORDS = {
    "high": "a good match",
    "low": "weak match: read before trusting",
    "none": "no good match: these are the nearest notes",
}


def search(r: dict[str, Any]) -> None:
    for w in r.get("warnings") or []:
        click.echo(f"warning: {w}", err=True)
    if r.get("routed") is not None:
        click.echo(f"routed to: {', '.join(r['routed'])}", err=True)
    hits = r["results"]
    if not hits:
        click.echo("no results")
        return
    # Always said, on stderr with the warnings: stdout stays one `path:line` block per hit.
    click.echo(f"confidence {r['confidence']} ({CONFIDENCE_WORDS[r['confidence']]})", err=True)
    for block in render.hit_blocks(r, CLI):
        click.echo(block)


def why(r: dict[str, Any]) -> None:
    """`memo why`: the note's place, each candidate section's ranks, what stood above it, or
    why it is not found."""
    for w in r.get("warnings") or []:
        click.echo(f"warning: {w}", err=True)
    head, blocks, tail = render.why_lines(r, CLI)
    for line in head + blocks + tail:
        click.echo(line)


def excerpt(r: dict[str, Any]) -> None:
    click.echo(r["text"])
    more = f", {r['more_lines']} more" if r["more_lines"] else ""
    span = f"{shown(r['path'])}:{r['line']}-{r['end_line']} of {r['total_lines']}{more}"
    click.echo(f"-- {span} (cite {r['cite']})", err=True)


def related(r: dict[str, Any]) -> None:
    head, blocks, tail = render.related_lines(r)
    for line in head + blocks:
        click.echo(line)
    for line in tail:
        click.echo(line, err=True)


def route(r: dict[str, Any]) -> None:
    for w in r.get("warnings") or []:
        click.echo(f"warning: {w}", err=True)
    cols = r["collections"]
    click.echo(
        f"{r['strategy']}: {len(cols)} of {r['total']} collections ({r['took_ms']:.1f} ms)",
        err=True,
    )
    for block in render.route_blocks(r, CLI):
        click.echo(block)
    for t in (r.get("tree") or [])[:30]:
        click.echo(f"  {t['prefix']}  ({t['collections']} collections)")


def status(r: dict[str, Any]) -> None:
    click.echo(f"root: {r['root']}")
    colls = r["collections"]
    if colls:
        seen, scan = colls[0].get("watcher_last_seen"), colls[0].get("last_reconcile")
        now = time.time()
        click.echo(
            "watcher: "
            + (f"running (seen {now - seen:.0f} s ago)" if seen else "not running (memo watch)")
            + (f", last full scan {now - scan:.0f} s ago" if scan else "")
        )
    for c in colls:
        state = (
            "not indexed"
            if not c["indexed"]
            else (
                f"{c['files']} files, {c['chunks']} chunks, {c['stale']} changed since indexing, "
                + vectors_state(c)
                + f"embedder {c['embedder'] or 'none (lexical only)'}, "
                + f"{c['size_bytes'] / 1e6:.1f} MB"
                + (f", languages {c['languages']}" if c.get("languages") else "")
            )
        )
        if c.get("drafted"):
            state += ", description drafted by memo: review it"
        if c.get("damaged"):
            state = c["damaged"]
        click.echo(f"{shown(c['path'])}  [{shown(c['collection'])}]  {state}")
        for s in c.get("skipped", []):
            click.echo(f"    skipped {s['path']}: {s['why']}")
        for x in c.get("excluded", []):
            n, why = x["notes"], shown(x["why"])
            click.echo(f"    left out on purpose: {n} note{'s' if n != 1 else ''}, {why}")
        for f in c.get("failed", []):
            click.echo(f"    failed {f['path']}: {f['error']}")
        for line in render.coverage_lines(c.get("indexed_files", [])):
            click.echo(f"    {line}")
    for b in r.get("broken", []):
        click.echo(f"{b['path']}  [broken: not indexed]  {b['error']}")
    if r.get("embed_cache"):
        click.echo(embed_cache(r["embed_cache"]))
    for w in r.get("warnings", []):
        click.echo(f"warning: {w}", err=True)
    for err in r["errors"]:
        click.echo(f"error: {err}", err=True)


def vectors_state(c: dict[str, Any]) -> str:
    """The second stage of one collection's index: '' when every chunk has its vector."""
    pending = c.get("pending") or 0
    if not pending or not c.get("embedder"):
        return ""
    done = f"vectors {c['chunks'] - pending:,}/{c['chunks']:,} chunks"
    by = c.get("embedding_by")
    return done + (f" (being computed by memo pid {by}), " if by else " (run `memo index`), ")


def embed_cache(c: dict[str, Any]) -> str:
    """`memo status`'s line about the embedding cache (embed/cache.py)."""
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


def _cached(r: dict[str, Any]) -> str:
    n = r.get("chunks_cached") or 0
    return f" ({n} from the cache)" if n else ""


def index(r: dict[str, Any]) -> None:
    for c in r["collections_detail"]:
        for w in c["warnings"]:
            click.echo(f"warning: {w}", err=True)
    for err in r["errors"]:
        click.echo(f"error: {err}", err=True)
    broken = f"; {len(r['broken'])} broken, not indexed" if r.get("broken") else ""
    if r["nothing_to_do"]:
        skipped = f", {r['skipped']} skipped (above)" if r["skipped"] else ""
        click.echo(
            f"nothing to do: {r['collections']} collections, "
            f"{r['unchanged']} files up to date{skipped}{broken} ({r['seconds']:.2f} s)"
        )
    else:
        meanwhile = r.get("read_elsewhere", 0)
        who = sorted({c["read_by"] for c in r["collections_detail"] if c.get("read_by")})
        who = who if len(who) == 1 else ["other memo processes"]
        by = f" (and {meanwhile} read meanwhile by {who[0]})" if meanwhile else ""
        click.echo(
            f"{r['collections']} collections: {r['new']} new{by}, {r['changed']} changed, "
            f"{r['removed']} removed, {r['unchanged']} unchanged, {r['skipped']} skipped; "
            f"{r['chunks_embedded']} chunks embedded{_cached(r)} in {r['seconds']:.1f} s{broken}"
        )
    for b in r.get("broken", []):
        click.echo(f"broken: {b['path']}: {b['error']}")


def init_plan(p: dict[str, Any]) -> None:
    """`memo init`'s plan: one line per collection, new ones with their drafted description."""
    new = [c for c in p["collections"] if not c["kept"]]
    kept = len(p["collections"]) - len(new)
    more = f", {kept} kept as they are" if kept else ""
    click.echo(
        f"{shown(p['root'])}: {len(new)} new collections for {p['notes']} notes{more}"
        f" ({p['seconds']:.2f} s)"
    )
    width = max((len(shown(c["path"])) for c in p["collections"]), default=1)
    for c in p["collections"]:
        what = "kept" if c["kept"] else "new "
        notes = f"{c['notes']:>4} note{'s' if c['notes'] != 1 else ' '}"
        own = " (its own notes)" if c["loose"] else ""
        desc = "a collection already" if c["kept"] else c["description"]
        click.echo(f"  {what} {shown(c['path']):<{width}} {notes}{own}  {shown(desc)}")
    left = p.get("left_out") or []
    if left:
        n = sum(x["notes"] for x in left)
        click.echo(f"left out on purpose: {n} note{'s' if n != 1 else ''}, by {len(left)} rules")
    for x in left:
        notes = f"{x['notes']:>4} note{'s' if x['notes'] != 1 else ' '}"
        click.echo(f"  skip {notes}  {shown(x['why'])}")
    for problem in p.get("problems") or []:
        click.echo(f"warning: {shown(problem)}", err=True)


def init_done(p: dict[str, Any], wrote: bool, asked: bool, indexing: bool = False) -> None:
    new = [c for c in p["collections"] if not c["kept"]]
    root = quoted(p["root"])
    if p["nothing_to_do"]:
        click.echo("nothing to do: every folder of notes is a collection of this library")
    elif wrote:
        click.echo(
            f"wrote {len(p['written'])} files: {len(new)} _meta.yaml (marked drafted: review "
            f"each description){', and the library marker' if p['declare'] else ''}. "
            + ("Indexing it now." if indexing else f"Next: memo index {root}")
        )
    else:
        marker = f" and {MARKER}" if p["declare"] else ""
        click.echo(
            f"{'nothing written' if asked else 'dry run: nothing written'}. "
            f"`memo init {root} --yes` writes {len(new)} _meta.yaml files{marker} "
            f"(add --index to index right after)."
        )
