"""What a person is told of a note's coverage report (chunker.coverage, stored per note):
standard library only, so the CLI's text output imports it without loading the index code."""

from __future__ import annotations

from typing import Any

# A note with more lines than this in no chunk (on purpose or not) is named by `memo status`
COVERAGE_SHOWN = 3


def coverage_lines(files: list[dict[str, Any]]) -> list[str]:
    """One line per note with lines memo lost, or more than COVERAGE_SHOWN lines not indexed."""
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
            out.append(f"not indexed: {n} lines of {f['path']} (lines {whys})")
    return out
