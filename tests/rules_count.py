"""Issue 29's rules counted in a source tree, with `ast` and plain text: how many places each
decision is made in. Run on two checkouts to compare:

    python tests/rules_count.py [TREE]     # TREE: a checkout (default: this one)
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path


def _functions(tree: Path, name: str) -> int:
    return sum(
        isinstance(n, ast.FunctionDef) and n.name == name
        for p in (tree / "src").rglob("*.py")
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
    )


def _assigned(tree: Path, name: str) -> int:
    """Module-level constants called `name`."""
    count = 0
    for p in (tree / "src").rglob("*.py"):
        for n in ast.parse(p.read_text(encoding="utf-8")).body:
            if isinstance(n, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in n.targets
            ):
                count += 1
    return count


def _lines(tree: Path, folder: str, pattern: str) -> int:
    """Matches of `pattern` (multi-line) in the folder's files; bench's vault.py and
    mutation.py (other branches) and judged.py (the one hook) left out."""
    rx = re.compile(pattern, re.M)
    skip = ("vault.py", "mutation.py", "judged.py")
    return sum(
        len(rx.findall(p.read_text(encoding="utf-8")))
        for p in (tree / folder).rglob("*.py")
        if p.name not in skip
    )


def counts(tree: Path) -> dict[str, int]:
    src = "src"
    return {
        "note_title rules (functions)": _functions(tree, "note_title"),
        "alphabet counters (a regex of Cyrillic letters)": _lines(tree, src, r"\[а-яё"),
        "_meta.yaml writers (open(..., 'x') of a meta)": _lines(tree, src, r'open\([^)]*"x"'),
        "strategy decided (strategy_for calls)": _lines(tree, src, r"[^_]strategy_for\(")
        - _functions(tree, "strategy_for"),
        "registry masks worked out (.mask( calls)": _lines(tree, src, r"reg\.mask\("),
        "RouteRequest built without make()": _lines(tree, src, r"(?<!class )\bRouteRequest\("),
        "constants named RRF_K": _assigned(tree, "RRF_K"),
        "getattr in embed/": _lines(tree, "src/memo/embed", r"\bgetattr\("),
        "'.inner' hunts (counts_of)": _functions(tree, "counts_of"),
        "type: ignore": _lines(tree, src, r"# type: ignore"),
        "type: ignore without a reason": _lines(tree, src, r"# type: ignore(\[[^\]]*\])?\s*$"),
        "bench reach-ins to lib._*": _lines(tree, "bench", r"\blib\._[a-z]"),
        "bench scripts without --smoke": sum(
            "smoke_args(" not in p.read_text(encoding="utf-8")
            for p in (tree / "bench").glob("*.py")
            if p.name not in ("judged.py", "vault.py", "mutation.py")
        ),
    }


if __name__ == "__main__":
    here = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    for name, n in counts(here).items():
        print(f"{n:4d}  {name}")
