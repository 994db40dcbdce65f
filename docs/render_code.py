"""The docs' lists that the code holds, rendered from it: the README's commands (the click
group), its MCP tools (the tool declarations) and docs/design.md's map (the package tree).

A doc shows each between two comments, and this module writes what goes between them:

    <!-- code commands -->  ...  <!-- /code -->

    python docs/render_code.py          # rewrite every block of README.md and docs/*.md
    python docs/render_code.py --check  # exit 1 naming each stale block (tests/test_docs.py)

A new command, tool or module changes its block: render again, and write its prose if it needs
more than its help line or docstring's first line.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import re
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "memo"
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"^<!-- code ([\w-]+) -->\n(.*?)^<!-- /code -->$", re.M | re.S)
RENDERERS: dict[str, Callable[[], str]] = {}


def renders(name: str) -> Callable[[Callable[[], str]], Callable[[], str]]:
    def register(fn: Callable[[], str]) -> Callable[[], str]:
        RENDERERS[name] = fn
        return fn

    return register


def cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def lead(text: str, stops: str = ".") -> str:
    """`text` up to the first of `stops` outside brackets and backticks that ends a word."""
    text, depth, code = " ".join(text.split()), 0, False
    for i, ch in enumerate(text):
        code ^= ch == "`"
        depth += (ch in "([") - (ch in ")]")
        if ch in stops and not depth and not code and text[i + 1 : i + 2] in ("", " "):
            return text[:i]
    return text


# ---------------------------------------------------------------------- commands
def commands(group=None, prefix: tuple[str, ...] = ("memo",)) -> list[tuple[str, object]]:
    """(`memo model build`, its click command) for every command the group runs, in order."""
    import click

    from memo.cli import cli

    group = group or cli
    ctx = click.Context(group)
    out: list[tuple[str, object]] = []
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            out += commands(cmd, (*prefix, name))
        elif cmd is not None and not cmd.hidden:
            out.append((" ".join((*prefix, name)), cmd))
    return out


def synopsis(path: str, cmd) -> str:
    """`memo search [PATH] [QUERY] [--k N] [--mode hybrid|lex|vec] …` from the command's params."""
    import click

    words = [path]
    for p in cmd.params:
        if isinstance(p, click.Argument):
            name = "ROOT" if p.name == "root_arg" else (p.name or "").upper()
            words.append(name if p.required else f"[{name}]")
            continue
        if not isinstance(p, click.Option) or p.hidden:
            continue
        flag = next(o for o in p.opts if o.startswith("--"))
        if p.is_flag:
            shown = f"{flag}/{p.secondary_opts[0]}" if p.secondary_opts else flag
        elif isinstance(p.type, click.Choice):
            shown = f"{flag} {'|'.join(map(str, p.type.choices))}"
        elif isinstance(p.type, click.types.IntParamType | click.types.FloatParamType):
            shown = f"{flag} N"
        else:
            shown = f"{flag} {(p.name or '').upper()}"
        shown += " …" if p.multiple else ""
        words.append(shown if p.required else f"[{shown}]")
    return " ".join(words)


@renders("commands")
def command_table() -> str:
    rows = ["| command | what it does |", "|---|---|"]
    for path, cmd in commands():
        rows.append(f"| `{cell(synopsis(path, cmd))}` | {cell(cmd.get_short_help_str(1000))} |")
    return "\n".join(rows) + "\n"


# ---------------------------------------------------------------------- MCP tools
def tools() -> list[tuple[str, str, str, str]]:
    """(name, what it does, its CLI command, its HTTP endpoints) of every tool `memo mcp`
    serves: memo's own (mcp_tools.TOOLS) and the hosts' shapes (mcp_hosts.host_tools)."""
    from memo.server.mcp_hosts import host_tools
    from memo.server.mcp_tools import TOOLS

    out = []
    for t in TOOLS:
        op = t.request.OPERATION
        out.append((t.name, t.title, f"memo {op.command}", ", ".join(op.http)))
    for h in host_tools(None, False):  # type: ignore[arg-type]  (names only: nothing runs)
        out.append((h.name, lead(h.title or h.description, ".:"), "", ""))
    return out


@renders("tools")
def tool_table() -> str:
    rows = ["| MCP tool | what it does | command | HTTP |", "|---|---|---|---|"]
    for name, what, command, http in tools():
        shown = [f"`{name}`", cell(what), f"`{command}`" if command else "–"]
        shown.append(", ".join(f"`{h}`" for h in http.split(", ")) if http else "–")
        rows.append("| " + " | ".join(shown) + " |")
    return "\n".join(rows) + "\n"


# ---------------------------------------------------------------------- the map
def package_tree() -> dict[str, list[Path]]:
    """`memo/collection/` (or `memo/` for the top) -> its modules, in order."""
    out: dict[str, list[Path]] = {}
    for path in sorted(SRC.rglob("*.py")):
        folder = path.parent.relative_to(SRC.parent).as_posix() + "/"
        out.setdefault(folder, []).append(path)
    return dict(sorted(out.items(), key=lambda kv: (kv[0] != "memo/", kv[0])))


def summary(path: Path) -> str:
    """The first sentence of a module's docstring."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return lead(doc.split("\n\n")[0]).rstrip(".:") or "(no docstring)"


@renders("map")
def module_map() -> str:
    out = []
    for folder, paths in package_tree().items():
        out.append(f"- `{folder.removeprefix('memo/') or 'memo/'}`")
        for p in paths:
            out.append(f"  - `{p.name}`: {summary(p)}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------- blocks
def rewrite(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        return f"<!-- code {m.group(1)} -->\n{RENDERERS[m.group(1)]()}<!-- /code -->"

    return BLOCK.sub(one, text)


def stale(text: str) -> list[str]:
    """Each block whose text is not what the code renders, with the difference."""
    out = []
    for m in BLOCK.finditer(text):
        want = RENDERERS[m.group(1)]()
        if m.group(2) != want:
            line = text[: m.start()].count("\n") + 1
            diff = difflib.unified_diff(
                m.group(2).splitlines(), want.splitlines(), "doc", "code", n=0, lineterm=""
            )
            out.append(f"line {line}, {m.group(1)}:\n" + "\n".join(diff))
    return out


def main() -> int:
    sys.path.insert(0, str(REPO / "src"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a block is stale")
    a = ap.parse_args()
    bad = 0
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        if a.check:
            for why in stale(text):
                print(f"{doc.relative_to(REPO)}: {why}")
                bad += 1
        elif (new := rewrite(text)) != text:
            doc.write_text(new, encoding="utf-8")
            print(f"rendered {doc.relative_to(REPO)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
