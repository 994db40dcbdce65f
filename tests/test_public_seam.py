"""Tests and benchmarks reach memo through its public names only (issue 42 item 1).

A test that reaches `lib._resolve` or imports `_call` pins what memo does inside, and breaks
when the inside is rearranged though nothing a caller sees changed. This file reads tests/ and
bench/ with `ast` and fails on:

- an import of a private name from memo (`from memo.x import _y`, `import memo._x`);
- `<expr>._x` where `_x` is a private name memo defines (a function, class, attribute or
  module-level name in src/memo), unless `<expr>` starts at `self`/`cls` (a helper class's
  own state) or at a name imported from outside memo (`os._exit`, mutmut's `state()._stats`);
- `getattr`/`setattr`/`monkeypatch.setattr(obj, "_x", ...)` and dotted targets such as
  `"memo.embed.cache._now"` naming one;
- the same `name._x` inside code handed to a child process (a string with a newline or `;`).

Where a test needs a seam, memo gets a small public name that says who uses it
(`Library.scope`, `EmbeddingCache(clock=...)`, `delegate.call`, `queries.row_lengths`).

    python tests/test_public_seam.py      # every place that reaches a private name
"""

from __future__ import annotations

import ast
import re
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("tests", "bench")
OWN = {"self", "cls"}
ATTR_CALLS = {"getattr", "setattr", "hasattr", "delattr"}
IN_CODE = re.compile(r"\b([A-Za-z_]\w*)\.(_[A-Za-z]\w*)\b")


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@cache
def memo_privates() -> frozenset[str]:
    """Every private name memo defines: defs, classes, assigned names and attributes."""
    out: set[str] = set()
    for path in sorted((ROOT / "src" / "memo").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                out.add(node.attr)
            elif isinstance(node, ast.alias) and node.asname:
                out.add(node.asname)
    return frozenset(n for n in out if private(n))


def _is_memo(module: str | None, level: int) -> bool:
    return level == 0 and module is not None and module.split(".")[0] == "memo"


def _foreign(tree: ast.AST) -> set[str]:
    """Names this file binds by importing from outside memo (stdlib, mutmut, its own helpers)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] != "memo":
                    out.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and not _is_memo(node.module, node.level):
            out.update(a.asname or a.name for a in node.names)
    return out


def _root(node: ast.expr) -> str | None:
    """The name an expression such as `a.b().c[0]` starts at."""
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _strings(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [s for v in node.values for s in _strings(v)]
    return []


def _docstrings(tree: ast.AST) -> set[int]:
    """The docstrings' nodes (prose may name a private name; it reaches nothing)."""
    kinds = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
    return {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, kinds) and n.body and isinstance(n.body[0], ast.Expr)
    }


def _dotted_memo_private(text: str) -> bool:
    parts = text.split(".")
    return parts[0] == "memo" and any(private(p) for p in parts[1:])


def reaches(path: Path) -> list[str]:
    """Each place in one file that reaches a private name of memo, as 'path:line: what', in
    the order of the file's lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names, foreign, prose = memo_privates(), _foreign(tree), _docstrings(tree)
    found: list[tuple[int, str]] = []

    def say(node: ast.AST, what: str) -> None:
        found.append((getattr(node, "lineno", 0), what))

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _is_memo(node.module, node.level):
            for a in node.names:
                if private(a.name) or _dotted_memo_private(f"{node.module}.{a.name}"):
                    say(node, f"from {node.module} import {a.name}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if _dotted_memo_private(a.name):
                    say(node, f"import {a.name}")
        elif isinstance(node, ast.Attribute) and node.attr in names:
            start = _root(node.value)
            if start not in OWN and start not in foreign:
                say(node, f"{ast.unparse(node.value)}.{node.attr}")
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            args = [s for arg in node.args[:2] for s in _strings(arg)]
            if called in ATTR_CALLS:
                for s in args:
                    if s in names or _dotted_memo_private(s):
                        say(node, f"{called}(..., {s!r})")
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
        ):
            if "\n" in node.value or ";" in node.value:  # code for a child process
                for start, attr in IN_CODE.findall(node.value):
                    if attr in names and start not in OWN | sys.stdlib_module_names:
                        say(node, f"{start}.{attr} in code run by a child")
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    return [f"{shown}:{line}: {what}" for line, what in sorted(found)]


def everywhere() -> list[str]:
    return [
        hit
        for folder in CHECKED
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != Path(__file__).resolve()  # its probe does each forbidden thing on purpose
        for hit in reaches(path)
    ]


def test_tests_and_bench_reach_no_private_name_of_memo() -> None:
    hits = everywhere()
    assert not hits, "reach memo through a public name instead:\n" + "\n".join(hits)


def test_the_check_sees_each_way_of_reaching_in(tmp_path: Path) -> None:
    """The check itself, on a file that does each thing it forbids and each it allows."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from memo.cli.delegate import HEALTH_TIMEOUT, _notice\n"
        "import os, sys\n"
        "from mutmut.state import state\n"
        "from memo.embed import cache as cache_module\n"
        "def test(lib, monkeypatch):\n"
        '    """Once `lib._colls` was reached here;\n    no more."""\n'  # prose: allowed
        "    lib._colls.pool\n"  # a memo object's private attribute
        "    cache_module._checksum\n"
        "    monkeypatch.setattr(cache_module, '_checksum', lambda: 0)\n"
        "    monkeypatch.setattr('memo.embed.cache._checksum', lambda: 0)\n"
        "    code = 'from memo.server import stdio\\nstdio._leave = print\\n'\n"
        "    os._exit, sys._getframe, state()._stats, lib.scope\n"  # not memo's private names
        "class Helper:\n"
        "    def go(self):\n"
        "        return self._colls\n",  # a helper's own state
        encoding="utf-8",
    )
    assert [h.split(": ", 1)[1] for h in reaches(probe)] == [
        "from memo.cli.delegate import _notice",
        "lib._colls",
        "cache_module._checksum",
        "setattr(..., '_checksum')",
        "setattr(..., 'memo.embed.cache._checksum')",
        "stdio._leave in code run by a child",
    ]


if __name__ == "__main__":
    print("\n".join(everywhere()) or "no private name of memo is reached from tests/ or bench/")
