"""Docs that cannot drift (issue 21, item 5): every code name a doc puts in backticks names
something in src/, and every documented `memo` command and flag exists.

What counts as a code name: a path ending in `.py`; a `Dotted.name` whose head is a class or
module of memo; a CamelCase word; a snake_case word with an underscore. Everything else in
backticks (shell lines, JSON, values) is prose to this test.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import shutil
import subprocess
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
# the agent hosts' own tools, Elasticsearch's search types
EXTERNAL = frozenset(
    {"integrity_check", "quick_check", "ExecStart", "reduce_range"}
    | {"ToolSearch", "WaitForMcpServers", "tool_search", "dfs_query_then_fetch"}
)
# `config.yaml`, `model.onnx`: file names, not a module's attribute
FILE_ENDINGS = frozenset({"py", "yaml", "yml", "json", "onnx", "db", "md", "toml", "txt", "lock"})
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


@cache
def modules() -> dict[str, frozenset[str]]:
    """A module's stem (`routes`, `requests`) -> the names it defines at its top level or
    imports there, over every src file of that stem (with its submodules, for a package)."""
    out: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        stem = path.parent.name if path.name == "__init__.py" else path.stem
        got = out.setdefault(stem, set())
        if path.name == "__init__.py":
            got.update(p.stem for p in path.parent.glob("*.py"))
            got.update(p.name for p in path.parent.iterdir() if p.is_dir())
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                got.add(node.name)
            elif isinstance(node, ast.Assign):
                got.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                got.add(node.target.id)
            elif isinstance(node, ast.ImportFrom | ast.Import):
                got.update((a.asname or a.name).split(".")[0] for a in node.names)
    return {k: frozenset(v) for k, v in out.items()}


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
        tops = modules()
        if head in tops and rest[0] not in FILE_ENDINGS:  # `endpoints.MODELS`: in that module
            return None if rest[0] in tops[head] else f"module {head} has no {rest[0]}"
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
    # issue 29: a name is looked up on the module the text names, not anywhere in src/
    assert unknown("endpoints.MODELS") is None and unknown("requests.DATE_PATTERN") is None
    assert unknown("requests.MODELS") == "module requests has no MODELS"


# ---------------------------------------------------------------------- settings (issue 29)
SETTING = re.compile(r"\bMEMO_[A-Z0-9_]*[A-Z0-9]\b")


def test_every_memo_setting_named_in_the_docs_exists_and_every_one_is_documented():
    """A `MEMO_*` name in a doc is read somewhere (config.py for memo's settings, the tests or
    the benchmarks for theirs); every setting `Settings.from_env` reads is a row of the README's
    "Settings" table, and every row is one it reads."""
    _, _, text = names()
    read = set(SETTING.findall(text))
    bad = [
        f"{doc.name}:{n}: {name}: read nowhere"
        for doc in DOCS
        for n, line, _ in doc_lines(doc)
        for name in SETTING.findall(line)
        if name not in read
    ]
    assert not bad, "\n".join(bad)
    tree = ast.parse((SRC / "config.py").read_text(encoding="utf-8"))
    section = (REPO / "README.md").read_text("utf-8").split("\n## Settings\n", 1)[1]
    rows = section.split("\n## ", 1)[0].splitlines()
    table = {
        m for row in rows if row.startswith("| `MEMO_") for m in SETTING.findall(row.split("|")[1])
    }
    code = {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and SETTING.fullmatch(n.value)
    }
    assert code == table, f"the README's settings and config.py's differ: {code ^ table}"
    documented = {name for doc in DOCS for name in SETTING.findall(doc.read_text("utf-8"))}
    assert not code - documented, f"settings no doc names: {sorted(code - documented)}"


# ---------------------------------------------------------------------- the operations table
TOOL_ROW = re.compile(r"^\| `(memo_\w+)\((.*?)\)` \| (.*?) \| (.*?) \|")


def tool_table() -> dict[str, tuple[list[tuple[str, str]], set[str], str]]:
    """docs/servers.md's table of tools: tool -> ([(param, default or '?' or '')], its HTTP
    endpoints, its CLI command)."""
    out = {}
    for _, line, fence in doc_lines(REPO / "docs" / "servers.md"):
        m = TOOL_ROW.match(line.replace("\\|", "¦"))
        if fence or m is None:
            continue
        params = []
        for part in filter(None, (p.strip() for p in m.group(2).split(","))):
            name, _, default = part.partition("=")
            params.append(
                (name.rstrip("?"), default.replace("¦", "|") or part[-1:] * (part[-1:] == "?"))
            )
        http = set(TICKS.findall(m.group(3)))
        cli_cell = TICKS.findall(m.group(4))
        out[m.group(1)] = (params, http, cli_cell[0] if cli_cell else "")
    return out


def test_the_tool_and_endpoint_table_is_the_declaration():
    """Every operation's row in docs/servers.md names its MCP tool, every parameter in the
    declared order with its default, its HTTP endpoints and its CLI command (requests.py)."""
    from memo.requests import REQUESTS

    table = tool_table()
    assert set(table) == {r.OPERATION.tool for r in REQUESTS.values()}
    for request in REQUESTS.values():
        op = request.OPERATION
        params, http, command = table[op.tool]
        assert [n for n, _ in params] == [p.name for p in request.PARAMS], op.tool
        for (name, shown), p in zip(params, request.PARAMS, strict=True):
            if p.choices:
                want = "|".join(p.choices)
            elif p.required or p.default is None or p.default == ():
                want = "" if p.required else "?"
            else:
                want = str(p.default).lower()
            if not (p.required and not shown):
                assert shown == want, (op.tool, name, shown, want)
        assert http == set(op.http), op.tool
        assert command == f"memo {op.command}", op.tool


def test_the_readme_test_commands_say_how_long_and_name_the_inner_loop():
    """Issue 29: the README's test command gave no idea of its minutes. Every pytest line of the
    README's code blocks says how long it takes, and the quick start's names the inner loop."""
    readme = REPO / "README.md"
    lines = [line for _, line, fence in doc_lines(readme) if fence and "-m pytest" in line]
    assert lines, "the README shows no pytest command"
    for line in lines:
        assert re.search(r"~\s?\d+(?:[-–]\d+)?\s?(?:s|min)\b", line), line
    assert '-m "not slow"' in lines[0], lines[0]


# ---------------------------------------------------------------------- lists the code holds
def _code_render():
    """docs/render_code.py: the README's commands and tools, docs/design.md's map, from code."""
    import importlib.util
    import sys

    if "render_code" not in sys.modules:
        path = REPO / "docs" / "render_code.py"
        spec = importlib.util.spec_from_file_location("render_code", path)
        assert spec is not None and spec.loader is not None
        sys.modules["render_code"] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules["render_code"]


def _block(doc: Path, name: str) -> str:
    blocks = {m.group(1): m.group(2) for m in _code_render().BLOCK.finditer(doc.read_text("utf-8"))}
    assert name in blocks, f"{doc.name} has no `<!-- code {name} -->` block"
    return blocks[name]


def test_the_lists_the_code_holds_are_rendered_from_it():
    """docs → code: every `<!-- code … -->` block is what docs/render_code.py makes of the code
    now (the click group, the tool declarations, the package tree)."""
    code_render = _code_render()
    stale = [f"{d.name}: {why}" for d in DOCS for why in code_render.stale(d.read_text("utf-8"))]
    assert not stale, "\n".join(stale) + "\n(python docs/render_code.py renders them again)"


def test_every_command_tool_and_module_is_in_the_docs():
    """code → docs: each command the click group runs is a row of the README's table, each
    tool `memo mcp` serves a row of its tool list, each module of src/memo a line of
    docs/design.md's map."""
    code_render = _code_render()
    table = _block(REPO / "README.md", "commands")
    for path, _ in code_render.commands():
        assert f"| `{path} " in table or f"| `{path}`" in table, f"README lacks `{path}`"
    listed = _block(REPO / "README.md", "tools")
    served = [name for name, *_ in code_render.tools()]
    assert {"memo_search", "memo_related", "memo_why", "search", "fetch"} <= set(served)
    for name in served:
        assert f"| `{name}` |" in listed, f"README's tool list lacks {name}"
    mapped: set[str] = set()
    folder = ""
    for line in _block(REPO / "docs" / "design.md", "map").splitlines():
        name = line.strip().removeprefix("- `").split("`")[0]
        if line.startswith("  "):
            mapped.add(folder + name)
        else:
            folder = "" if name == "memo/" else name
    modules = {p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py")}
    assert len(modules) >= 100 and not modules - mapped, f"not in the map: {modules - mapped}"


def test_a_command_or_module_left_out_fails_the_check():
    """The check is not a formality: a row or a map line taken out is a stale block."""
    code_render = _code_render()
    readme = (REPO / "README.md").read_text("utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| `memo related "))
    assert code_render.stale(readme.replace(row + "\n", "")), "a command's row dropped"
    design = (REPO / "docs" / "design.md").read_text("utf-8")
    line = next(x for x in design.splitlines() if x.startswith("  - `why.py`:"))
    assert code_render.stale(design.replace(line + "\n", "")), "a module's line dropped"


def test_the_hermes_check_counts_every_tool():
    """docs/agents.md's `hermes mcp test` line says how many tools Hermes discovers: all of
    them (it said 8 when there were 9)."""
    agents = (REPO / "docs" / "agents.md").read_text("utf-8")
    (count,) = re.findall(r"Tools discovered: (\d+)", agents)
    assert int(count) == len(_code_render().tools())


# ---------------------------------------------------------------------- module docstrings
DOCSTRING_LINES = 10


def long_docstrings(root: Path) -> list[str]:
    """Each module under `root` whose docstring runs past DOCSTRING_LINES lines, with its count."""
    out = []
    for path in sorted(root.rglob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if len(doc.splitlines()) > DOCSTRING_LINES:
            out.append(f"{path.relative_to(root)}: {len(doc.splitlines())} lines")
    return out


def test_every_module_docstring_says_its_purpose_in_ten_lines_at_most(tmp_path):
    """A module's docstring says what the module is for and its invariants in ≤ 10 lines (issue
    49, item 5); figures, history and long reasoning live in docs/design.md ("Why the modules are
    as they are"). The check is not a formality: it catches an eleventh line."""
    long = long_docstrings(SRC)
    assert not long, "\n".join(long) + "\n(move the rest to docs/design.md)"
    (tmp_path / "eleven.py").write_text('"""One line.\n' + "more\n" * 10 + '"""\n', "utf-8")
    assert long_docstrings(tmp_path) == ["eleven.py: 11 lines"]


# ---------------------------------------------------------------------- benchmark figures
def _render():
    """bench/render.py, the module that renders docs/benchmarks.md's tables from bench/results/."""
    import sys

    sys.path.insert(0, str(REPO / "bench"))
    import render

    return render


BENCHMARKS = REPO / "docs" / "benchmarks.md"


def test_every_benchmark_figure_is_its_results_files():
    """Each table of docs/benchmarks.md is what bench/render.py makes of the results file its
    script wrote: `python bench/render.py` after a run, never a figure typed in."""
    render = _render()
    stale = [f"{d.name}: {why}" for d in DOCS for why in render.stale(d.read_text("utf-8"))]
    assert not stale, "\n".join(stale) + "\n(python bench/render.py renders them again)"
    shown = {m.group(1, 2) for d in DOCS for m in render.BLOCK.finditer(d.read_text("utf-8"))}
    assert len(shown) >= 20, "docs/benchmarks.md shows its figures from bench/results/"
    written = {
        (f.stem, part) for f in render.RESULTS.glob("*.json") for part in json.loads(f.read_text())
    }
    assert written <= shown, f"results no doc shows: {sorted(written - shown)}"


def test_a_figure_changed_by_hand_fails_the_check(tmp_path):
    """The check is not a formality: one digit typed over in a table, or one number changed in
    a results file, is a stale block, named with its line."""
    render = _render()
    text = BENCHMARKS.read_text("utf-8")
    m = next(render.BLOCK.finditer(text))
    digit = m.start(3) + re.search(r"\d", m.group(3)).start()
    typed = text[:digit] + str((int(text[digit]) + 1) % 10) + text[digit + 1 :]
    (why,) = render.stale(typed)
    assert why.startswith(f"line {text[: m.start()].count(chr(10)) + 1}, {m.group(1)}.")
    results = tmp_path / "results"
    shutil.copytree(render.RESULTS, results)
    got = results / f"{m.group(1)}.json"
    data = json.loads(got.read_text("utf-8"))
    data[m.group(2)]["date"] = "1999-01-01"
    got.write_text(json.dumps(data), "utf-8")
    assert len(render.stale(text, results)) == 1


# Studies measured and not kept, and code no user could reach, live in git under a tag; the
# docs name each tag's commit too, which every clone has (a fresh clone may lack the tags)
LAB_TAGS = {"lab-2026-12": "842a098", "lab-2026-12b": "ab284ea"}
LAB = re.compile(r"(lab-2026-12b?):([\w./-]+\.(?:py|md))")


def test_every_study_the_docs_cite_is_under_its_tag():
    """Every `git show lab-2026-12…:PATH` that docs/, the README or bench/ cite names a file
    at that tag's commit, and the docs say which commit each tag is."""
    texts = [d.read_text("utf-8") for d in DOCS]
    texts += [
        p.read_text("utf-8") for p in (REPO / "bench").rglob("*") if p.suffix in (".py", ".md")
    ]
    texts += [p.read_text("utf-8") for p in SRC.rglob("*.py")]
    cited = {hit for text in texts for hit in LAB.findall(text)}
    assert len(cited) >= 10, cited
    assert {tag for tag, _ in cited} == set(LAB_TAGS)
    everything = "\n".join(texts)
    for tag, commit in LAB_TAGS.items():
        assert f"commit {commit}" in everything, f"no doc says which commit {tag} is"
        got = subprocess.run(["git", "cat-file", "-t", commit], cwd=REPO, capture_output=True)
        if got.returncode:
            pytest.skip(f"{commit} is not in this clone (a shallow one?)")
    gone = [
        f"{tag}:{p}"
        for tag, p in sorted(cited)
        if subprocess.run(["git", "cat-file", "-e", f"{LAB_TAGS[tag]}:{p}"], cwd=REPO).returncode
    ]
    assert not gone, f"cited under a lab tag but not at its commit: {gone}"
