"""What the CLI prints for a person, rendered from the same dicts `--json` prints.

Rendering from the JSON form (never from live objects) keeps the text the same whichever way
the answer came: computed in this process, or by a running `memo serve`. A search's hits, a
route's collections, `why`, `related`, `status` and `index` are the one rendering the MCP tools
use too (server/render.py), in the CLI's `Face`; this module adds the colour and says what goes
to stderr.
"""

from __future__ import annotations

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
    index_detail=True,
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
    head, blocks, tail = render.status_lines(r, CLI)
    for line in head + blocks:
        click.echo(line)
    for line in tail:
        click.echo(line, err=True)


def index(r: dict[str, Any]) -> None:
    head, blocks, tail = render.index_lines(r, CLI)
    for line in tail:
        click.echo(line, err=True)
    for line in head + blocks:
        click.echo(line)


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
