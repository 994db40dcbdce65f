"""Plain-text renderings an agent reads well: `path:line` first, then why it matched.

The structured result (JSON) carries everything; this text is what a model sees when its client
shows only text content, so it leads with what to do next.
"""

from __future__ import annotations

import time
from typing import Any

SNIPPET_CHARS = 300


def _ago(ts: float | None) -> str:
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


def search_text(r: dict[str, Any]) -> str:
    hits = r["results"]
    where = f"in {r['target']} ({r['mode']}, {r['took_ms']} ms)"
    lines = [f'{len(hits)} hits for "{r["query"]}" {where}']
    for i, h in enumerate(hits, 1):
        head = f"  [{h['heading']}]" if h["heading"] else ""
        lines.append(f"{i}. {h['path']}:{h['line']}{head}  score {h['score']:.4f}")
        snippet = " ".join(h["text"].split())
        if len(snippet) > SNIPPET_CHARS:
            snippet = snippet[:SNIPPET_CHARS].rsplit(" ", 1)[0] + " …"
        lines.append(f"   {snippet}")
    if not hits:
        lines.append("No match. Try other words, mode=lex for exact names, or memo_route first.")
    fresh = r.get("freshness") or []
    caught = sum(f["caught_up"] for f in fresh)
    if fresh:
        note = f"{caught} changed files re-indexed first" if caught else "index was current"
        lines.append(f"freshness: {len(fresh)} collections searched, {note}.")
    for w in r.get("warnings") or []:
        lines.append(f"warning: {w}")
    if hits:
        lines.append(
            "Read a hit with your file tool: open abs_path (in the structured result) or "
            "<library root>/path at the line shown."
        )
    return "\n".join(lines)


def route_text(r: dict[str, Any]) -> str:
    cols = r["collections"]
    lines = [f'{len(cols)} collections for "{r["query"]}" (strategy {r["strategy"]})']
    for i, c in enumerate(cols, 1):
        lines.append(f"{i}. {c['path']}  — {c['description']}  (score {c['score']:.4f})")
    if cols:
        lines.append("Next: memo_search with path set to the best collection's path.")
    else:
        lines.append("No collection matched; search path '.' to look everywhere.")
    for w in r.get("warnings") or []:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def status_text(r: dict[str, Any]) -> str:
    lines = [f"root: {r['root']}"]
    for c in r["collections"]:
        if not c["indexed"]:
            lines.append(f"{c['path']}  not indexed yet ({c['files_on_disk']} notes)")
            continue
        lines.append(
            f"{c['path']}  {c['files']} files, {c['chunks']} chunks, "
            f"{c['stale']} changed since indexing, last indexed {_ago(c['last_indexed'])}"
        )
        for s in c.get("skipped", []):
            lines.append(f"    skipped {s['path']}: {s['why']}")
    for e in r.get("errors") or []:
        lines.append(f"error: {e}")
    return "\n".join(lines)


def reindex_text(r: dict[str, Any]) -> str:
    lines = [
        f"{r['collections']} collections: {r['new']} new, {r['changed']} changed, "
        f"{r['removed']} removed, {r['unchanged']} unchanged, {r['skipped']} skipped "
        f"({r['seconds']} s)"
    ]
    lines += [f"error: {e}" for e in r["errors"]]
    return "\n".join(lines)
