"""Docs that cannot drift (issue 21, item 5): every code name a doc puts in backticks names
something in src/, and every documented `memo` command and flag exists.

What counts as a code name: a path ending in `.py`; a `Dotted.name` whose head is a class or
module of memo; a CamelCase word; a snake_case word with an underscore. Everything else in
backticks (shell lines, JSON, values) is prose to this test.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import click
import pytest

from memo.cli import cli

from .conftest import REPO

SRC = REPO / "src" / "memo"
# where else a doc may point: the tests, the benchmarks, CI (their names count as defined)
ELSEWHERE = [REPO / "tests", REPO / "bench"]
# names of other programs' that docs cite: SQLite pragmas, systemd keys, ONNX Runtime options,
# the agent hosts' own tools
EXTERNAL = frozenset(
    {"integrity_check", "quick_check", "ExecStart", "reduce_range"}
    | {"ToolSearch", "WaitForMcpServers", "tool_search"}
)
DOCS = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]
TICKS = re.compile(r"`([^`\n]+)`")
CAMEL = re.compile(r"^_?[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+_?$")
SNAKE = re.compile(r"^_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
DOTTED = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+(?:\(\))?$")


@cache
def names() -> tuple[frozenset[str], dict[str, frozenset[str]], str]:
    """(every name defined in src, class -> its attributes, all of src's text)."""
    defined: set[str] = set()
    members: dict[str, set[str]] = {}
    text = []
    files = [*SRC.rglob("*.py"), *(p for d in ELSEWHERE for p in d.rglob("*.py"))]
    for path in (f for f in files if f.name != "test_docs.py"):  # its ghosts are on purpose
        source = path.read_text(encoding="utf-8")
        text.append(source)
        defined.add(path.stem)
        defined.update(path.relative_to(REPO).parts)
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                defined.add(node.name)
            if isinstance(node, ast.ClassDef):
                got = members.setdefault(node.name, set())
                for sub in ast.walk(node):
                    if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef):
                        got.add(sub.name)
                    elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name):
                        got.add(sub.target.id)
                    elif isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store):
                        got.add(sub.attr)
                    elif isinstance(sub, ast.Assign):
                        got.update(t.id for t in sub.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.Assign):
                defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                defined.add(node.target.id)
    frozen = {k: frozenset(v) for k, v in members.items()}
    return frozenset(defined), frozen, "\n".join(text)


def doc_lines(doc: Path) -> Iterator[tuple[int, str, bool]]:
    """(line number, line, inside a code block) of every line but the fences themselves."""
    fence = False
    for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("```"):
            fence = not fence
            continue
        yield n, line, fence


def code_names(doc: Path) -> list[tuple[int, str]]:
    return [
        (n, m.group(1).strip())
        for n, line, fence in doc_lines(doc)
        if not fence
        for m in TICKS.finditer(line)
    ]


def unknown(token: str) -> str | None:
    """Why `token` names nothing in src (None: it does, or it is no code name)."""
    defined, members, text = names()
    if token in EXTERNAL:
        return None
    if token.endswith(".py") and " " not in token:
        where = [SRC, *ELSEWHERE]
        candidates = [SRC / token, REPO / token, *(p for d in where for p in d.rglob(token))]
        return None if any(c.exists() for c in candidates) else "no such file"
    bare = token.removesuffix("()")
    if DOTTED.match(token) and not bare.startswith(("memo.", "os.", "sys.")):
        head, *rest = bare.split(".")
        if head in members:
            return None if rest[0] in members[head] else f"{head} has no {rest[0]}"
        return None
    if bare.startswith("memo.") and re.fullmatch(r"[\w.]+", bare):
        mod = SRC.joinpath(*bare.split(".")[1:])
        exists = mod.with_suffix(".py").exists() or mod.is_dir()
        return None if exists or bare.split(".")[-1] in defined else "no such module"
    if CAMEL.match(bare) or SNAKE.match(bare):
        return None if bare in defined or bare in text else "named nowhere in src/"
    return None


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_code_name_in_the_docs_exists(doc):
    bad = [f"{doc.name}:{n}: `{t}`: {why}" for n, t in code_names(doc) if (why := unknown(t))]
    assert not bad, "\n".join(bad)


MEMO_LINE = re.compile(r"^(?:\$ |\.venv/bin/|.*&& )?memo ((?:[a-z][\w-]*)(?: [a-z][\w-]*)?)(.*)$")


def documented_commands(doc: Path) -> list[tuple[int, list[str], list[str]]]:
    """(line, command path, flags) of every `memo …` a doc shows: an inline code span, or a
    line of a code block, that starts with it."""
    out = []
    for n, line, fence in doc_lines(doc):
        spans = [line.strip()] if fence else [m.group(1) for m in TICKS.finditer(line)]
        for span in spans:
            m = MEMO_LINE.match(span)
            if m is None:
                continue
            words = m.group(1).split()
            rest = m.group(2).split("#", 1)[0].split("|", 1)[0]
            try:
                args = shlex.split(rest, posix=True)
            except ValueError:
                args = rest.split()
            flags = [
                a.split("=")[0] for a in args if re.match(r"^--?[a-z][\w-]*$", a.split("=")[0])
            ]
            out.append((n, words, flags))
    return out


def _command(words: list[str]) -> tuple[click.Command | None, int]:
    ctx = click.Context(cli)
    cmd = cli.get_command(ctx, words[0])
    used = 1
    if isinstance(cmd, click.Group) and len(words) > 1:
        sub = cmd.get_command(ctx, words[1])
        if sub is not None:
            cmd, used = sub, 2
    return cmd, used


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_documented_command_and_flag_exists(doc):
    bad = []
    for n, words, flags in documented_commands(doc):
        if words[0] not in cli.list_commands(click.Context(cli)):
            bad.append(f"{doc.name}:{n}: `memo {words[0]}`: no such command")
            continue
        cmd, _ = _command(words)
        assert cmd is not None
        known = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} | {"-h", "--help"}
        bad += [f"{doc.name}:{n}: `memo {' '.join(words)} {f}`" for f in flags if f not in known]
    assert not bad, "\n".join(bad)


def test_the_checker_catches_what_the_issue_found():
    """The names issue 21 found in the docs, that exist nowhere."""
    for ghost in ("ConnectionPool", "Library.fresh_registry", "Collection._open", "batch_hint"):
        assert unknown(ghost), ghost
    for real in ("SearchRequest", "Library.search", "collection/sync.py", "strategy_for"):
        assert unknown(real) is None, real
