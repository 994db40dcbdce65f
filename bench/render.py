"""docs/benchmarks.md's figures, rendered from the results files the benchmarks write.

A benchmark writes each part it measured into bench/results/<script>.json on every real run
(judged.record: the data, the date, the commit, the load average, the command). A doc shows
a part between two comments, and this module writes what goes between them:

    <!-- render core.search -->
    (part "search" of bench/results/core.json, as tables.py's core_search() renders it)
    <!-- /render -->

    python bench/render.py           # rewrite every block of docs/*.md from bench/results/
    python bench/render.py --check   # exit 1 naming each block that differs (tests/test_docs.py)

A figure edited by hand, or left behind by a new run, fails the docs test. A new table: a
function `@renders("script.part")` in bench/tables.py or tables_ops.py, and a block in a doc.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from pathlib import Path
from typing import Any

import tables_ops  # noqa: F401  (registers its tables)
from tables import RENDERERS  # bench/tables.py: one function a table

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
DOCS = BENCH.parent / "docs"
BLOCK = re.compile(r"^<!-- render (\w+)\.([\w-]+) -->\n(.*?)^<!-- /render -->$", re.M | re.S)


def render(script: str, part: str, got: dict[str, Any]) -> str:
    """A part as a doc shows it: its table(s), then where the figures come from."""
    show = RENDERERS.get(f"{script}.{part}") or RENDERERS[f"{script}.*"]
    body = show(got["data"]).rstrip("\n")
    where = f"`{got['command']}` · {got['date']} · {got['commit']} · load {got['load']}"
    return f"{body}\n\n{where}\n"


def rewrite(text: str, results: Path = RESULTS) -> str:
    """The doc with every block rendered again from the results files."""

    def one(m: re.Match[str]) -> str:
        script, part = m.group(1), m.group(2)
        got = json.loads((results / f"{script}.json").read_text(encoding="utf-8"))[part]
        return f"<!-- render {script}.{part} -->\n{render(script, part, got)}<!-- /render -->"

    return BLOCK.sub(one, text)


def stale(text: str, results: Path = RESULTS) -> list[str]:
    """Each block whose text is not its results file's rendering, with the difference."""
    new = rewrite(text, results)
    out = []
    for old_m, new_m in zip(BLOCK.finditer(text), BLOCK.finditer(new), strict=True):
        if old_m.group(0) != new_m.group(0):
            line = text[: old_m.start()].count("\n") + 1
            diff = difflib.unified_diff(
                old_m.group(3).splitlines(), new_m.group(3).splitlines(), "doc", "results", n=0
            )
            out.append(f"line {line}, {old_m.group(1)}.{old_m.group(2)}:\n" + "\n".join(diff))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a block is stale")
    ap.add_argument("docs", nargs="*", type=Path, help="default: docs/*.md")
    a = ap.parse_args()
    bad = 0
    for doc in a.docs or sorted(DOCS.glob("*.md")):
        text = doc.read_text(encoding="utf-8")
        if a.check:
            for why in stale(text):
                print(f"{doc}: {why}")
                bad += 1
        elif (new := rewrite(text)) != text:
            doc.write_text(new, encoding="utf-8")
            print(f"rendered {doc}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
