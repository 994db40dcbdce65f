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
    lines = [f'{len(hits)} hits for "{r["query"]}" {where}; confidence {r["confidence"]}']
    if hits and r["confidence"] == "none":
        lines.append("No good match: only the nearest notes; the answer is likely not here.")
    for i, h in enumerate(hits, 1):
        head = f"  [{h['heading']}]" if h["heading"] else ""
        span = f"{h['line']}-{h['end_line']}" if h.get("end_line", 0) > h["line"] else h["line"]
        lines.append(f"{i}. {h['path']}:{span}{head}  score {h['score']:.4f}  cite {h['cite']}")
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
    b = r.get("budget")
    if b:
        lines.append(
            f"budget: {b['used']} of {b['max_tokens']} tokens; {b['cut']} hit cut, "
            f"{b['dropped']} dropped."
        )
    for w in r.get("warnings") or []:
        lines.append(f"warning: {w}")
    if hits:
        lines.append(
            "Read a hit with your file tool (abs_path in the structured result, at the line "
            "shown) or with memo_get(path, line); a different `cite` from memo_get means the "
            "note changed since this search."
        )
    return "\n".join(lines)


def get_text(r: dict[str, Any]) -> str:
    more = f", {r['total_lines'] - r['end_line']} more lines" if r["truncated"] else ""
    return (
        f"{r['path']}:{r['line']}-{r['end_line']} of {r['total_lines']}{more}; cite {r['cite']}\n"
        f"{r['text']}"
    )


def route_text(r: dict[str, Any]) -> str:
    cols = r["collections"]
    lines = [f'{len(cols)} collections for "{r["query"]}" (strategy {r["strategy"]})']
    for i, c in enumerate(cols, 1):
        lines.append(f"{i}. {c['path']}  — {c['description']}  (score {c['score']:.4f})")
        for h in c.get("evidence") or []:
            head = f"  [{h['heading']}]" if h["heading"] else ""
            lines.append(f"   best hit: {h['path']}:{h['line']}{head}  {h['text'][:SNIPPET_CHARS]}")
    if cols:
        lines.append(
            "The best hits above may already answer; read one at its line. Otherwise call "
            "memo_search with path set to the best collection's path."
        )
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
        for f in c.get("failed", []):
            lines.append(f"    failed {f['path']}: {f['error']}")
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
