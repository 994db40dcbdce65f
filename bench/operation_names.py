"""How many places type each operation's driver names (issue 29, item 2): a count, not a timing.

For every operation (search, route, read, status, index) the names its drivers know it by are
the CLI command, the MCP tool, the HTTP paths and the web page (declared once in
src/memo/requests.py, `Operation`). This counts the string literals of Python code, docstrings
left out, that spell one of those names exactly (or "METHOD /path"), in the files that map
operations to drivers (`TABLES`: the declaration, the drivers' dispatch tables, the
request-walk test): one literal per name is the declaration; every other one typed the mapping
again. Tests and pages that merely call an endpoint are uses, not mappings, and are not read.

    .venv/bin/python bench/operation_names.py             # this checkout
    .venv/bin/python bench/operation_names.py --root /work/main
    .venv/bin/python bench/operation_names.py --smoke     # the same, with its exit code checked
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from pathlib import Path

from judged import smoke_args  # bench/ is on sys.path when run as a script

# What each operation is called per driver, as main had them before the declaration (the names
# never changed; only where they are typed did).
NAMES = {
    "search": ("search", "memo_search", "/search", "/"),
    "route": ("route", "memo_route", "/route"),
    "read": ("show", "memo_get", "/note", "/read"),
    "status": ("status", "memo_status", "/status", "/library"),
    "index": ("index", "memo_reindex", "/reindex"),
}
# where issue 29 found the request -> operation mapping typed (and the declaration itself)
TABLES = (
    "src/memo/requests.py",
    "src/memo/cli/__init__.py",
    "src/memo/cli/queries.py",
    "src/memo/cli/indexing.py",
    "src/memo/server/mcp_tools.py",
    "src/memo/server/routes.py",
    "src/memo/server/service.py",
    "src/memo/server/web/pages.py",
    "src/memo/server/web/auth.py",
    "tests/test_requests.py",
)


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def count(root: Path) -> dict[str, Counter[str]]:
    """operation -> file -> how many literals there spell one of its driver names."""
    out: dict[str, Counter[str]] = {op: Counter() for op in NAMES}
    for rel in TABLES:
        path = root / rel
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
                continue
            if id(node) in skip:
                continue
            text = node.value
            for op, names in NAMES.items():
                spelled = {*names, *(f"{m} {n}" for m in ("GET", "POST") for n in names)}
                if text in spelled:
                    out[op][rel] += 1
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    smoke_args(ap)  # counts this checkout: the same code paths, exit 0 if it ran
    ap.add_argument("--files", action="store_true", help="List the files per operation.")
    args = ap.parse_args()
    counts = count(args.root)
    total = 0
    for op, files in counts.items():
        n = sum(files.values())
        total += n
        print(f"{op:7} {n:3} literals in {len(files):2} files")
        if args.files:
            for rel, k in sorted(files.items()):
                print(f"          {k:2} {rel}")
    lines = sum(
        len(p.read_text(encoding="utf-8").splitlines())
        for p in (args.root / "src" / "memo").rglob("*.py")
    )
    print(f"total   {total:3} literals; src/ {lines} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
