"""The package's layout, read from the source with `ast`: import cycles, and the core's drivers.

An import counts wherever it is written, inside a function too (a lazy import still ties two
modules together; lazy imports were hiding the cycles); the tests check every package twice,
once as it runs and once as a type checker reads it, `if TYPE_CHECKING:` imports included.
`from pkg import name` is an edge to `pkg.name` when that is a module, else to `pkg`; the
parent packages Python initialises on the way are not counted as edges.

    python tests/test_layout.py                   # every cycle in memo, with its imports
    python tests/test_layout.py --type-checking   # the same, TYPE_CHECKING imports counted
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
CORE = ("memo.collection", "memo.library", "memo.search", "memo.router", "memo.registry_tools")
CORE += ("memo.embed",)
DRIVERS = ("memo.cli", "memo.server", "memo.watch")
ENTRY_POINTS = ("memo.__main__",)  # `python -m memo` is the CLI


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    lazy: bool  # written inside a function

    def __str__(self) -> str:
        where = ", inside a function" if self.lazy else ""
        return f"{self.source} -> {self.target} (line {self.line}{where})"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((SRC / "memo").rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _package_of(name: str) -> str:
    """The package relative imports in module `name` start from."""
    is_package = modules()[name].name == "__init__.py"
    return name if is_package else name.rpartition(".")[0]


def _known(name: str) -> str | None:
    """The longest prefix of dotted `name` that is one of memo's modules."""
    known = modules()
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


class _Imports(ast.NodeVisitor):
    def __init__(self, name: str, type_checking: bool) -> None:
        self.name = name
        self.type_checking = type_checking  # count imports under `if TYPE_CHECKING:` too
        self.depth = 0  # functions around the current node
        self.edges: dict[Edge, None] = {}  # ordered, one edge per statement and target

    def _add(self, target: str | None, node: ast.stmt) -> None:
        if target and target != self.name:
            self.edges[Edge(self.name, target, node.lineno, self.depth > 0)] = None

    def visit_If(self, node: ast.If) -> None:
        if self.type_checking or not _is_type_checking(node.test):
            self.generic_visit(node)
            return
        for child in node.orelse:  # `else:` of TYPE_CHECKING runs
            self.visit(child)

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] == "memo":
                self._add(_known(alias.name), node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = _package_of(self.name)
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            base = f"{base}.{node.module}" if node.module else base
        elif node.module and node.module.split(".")[0] == "memo":
            base = node.module
        else:
            return
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            self._add(sub if sub in modules() else _known(base), node)


@cache
def edges(type_checking: bool = False) -> tuple[Edge, ...]:
    out: list[Edge] = []
    for name, path in modules().items():
        visitor = _Imports(name, type_checking)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        out += visitor.edges
    return tuple(out)


def cycles(within: str = "memo", type_checking: bool = False) -> list[list[str]]:
    """Strongly connected components (more than one module) of the import graph restricted to
    `within` and the modules below it: each is one or more cycles. Tarjan's algorithm."""

    def inside(m: str) -> bool:
        return m == within or m.startswith(within + ".")

    graph: dict[str, set[str]] = {m: set() for m in modules() if inside(m)}
    for e in edges(type_checking):
        if inside(e.source) and inside(e.target):
            graph[e.source].add(e.target)
    return _components(graph)


def package_of(module: str) -> str:
    """The folder of memo a module belongs to (`memo.collection`), or the module itself when it
    lies at the top (`memo.config`)."""
    parts = module.split(".")
    inside = len(parts) > 2 or modules()[module].name == "__init__.py"
    return ".".join(parts[:2]) if inside else module


def package_cycles(type_checking: bool = False) -> list[list[str]]:
    """Cycles between memo's folders (and top-level modules): `collection/` importing `search/`
    while `search/` imports `collection/` is one, whichever modules the edges join."""
    graph: dict[str, set[str]] = {package_of(m): set() for m in modules()}
    for e in edges(type_checking):
        a, b = package_of(e.source), package_of(e.target)
        if a != b and b != "memo":  # `memo` is the public face, loaded lazily by name
            graph[a].add(b)
    return _components(graph)


def _components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def describe(component: list[str], type_checking: bool = False) -> str:
    members = set(component)
    inner = [e for e in edges(type_checking) if e.source in members and e.target in members]
    return "\n".join([f"cycle: {', '.join(component)}", *(f"  {e}" for e in inner)])


def _says(within: str, type_checking: bool = False) -> str:
    return "\n".join(describe(c, type_checking) for c in cycles(within, type_checking))


def test_the_graph_sees_lazy_imports_and_skips_type_checking() -> None:
    """The reader itself: a lazy import is an edge, a TYPE_CHECKING-only one is not (unless
    asked for)."""
    found = {(e.source, e.target): e for e in edges()}
    assert not found[("memo.cli.model", "memo.config")].lazy  # module level
    assert found[("memo.cli.model", "memo.embed.choose")].lazy  # inside a command
    assert found[("memo.server.stdio", "memo.server.mcp_tools")].lazy  # server/ is read too
    # memo.embed.tokens names the Embedder protocol for type checkers only
    typed = {(e.source, e.target) for e in edges(type_checking=True)}
    assert ("memo.embed.tokens", "memo.embed.base") in typed - set(found)


def packages() -> list[str]:
    """memo itself and every folder of it (a package: `memo.server`, `memo.cli.…`), read off
    the source, so a new folder is checked without being named here."""
    return sorted(m for m, path in modules().items() if path.name == "__init__.py")


def test_every_folder_is_checked() -> None:
    assert {"memo", "memo.server", "memo.cli", "memo.search", "memo.collection"} <= set(packages())


@pytest.mark.parametrize("type_checking", [False, True], ids=["run time", "type checking"])
@pytest.mark.parametrize("package", packages())
def test_no_import_cycle_in(package: str, type_checking: bool) -> None:
    """No two modules of a package import each other, however far round: counting imports
    inside functions (they run, later) and, for type checkers, under TYPE_CHECKING (mypy
    reads them). `memo` is every module at once."""
    assert not cycles(package, type_checking), _says(package, type_checking)


@pytest.mark.parametrize("type_checking", [False, True], ids=["run time", "type checking"])
def test_no_import_cycle_between_packages(type_checking: bool) -> None:
    """Folders stand on each other one way: `search/` reads `collection/`, never the reverse
    (bm25, which both use, lives in collection/, beside the FTS5 tables it reads)."""
    found = package_cycles(type_checking)
    assert not found, "\n".join(", ".join(c) for c in found)


def test_a_request_is_built_only_through_make() -> None:
    """`XRequest(...)` skips the checks `make` runs (bounds: a route asked for every collection
    past MAX_ROUTE_K this way): outside requests.py a request is built by `make` only."""
    import memo.requests as requests

    names = {n for n in vars(requests) if n.endswith("Request") and n != "_Request"}
    root = SRC.parent
    bad = []
    for path in sorted([*(SRC / "memo").rglob("*.py"), *(root / "bench").rglob("*.py")]):
        if path.name == "requests.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id in names:
                    bad.append(f"{path.relative_to(root)}:{node.lineno} {node.func.id}(...)")
    assert not bad, "\n".join(bad)


def _in(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def test_core_never_imports_a_driver() -> None:
    """The core (the library, its folders, embed and the top-level modules) works without the
    CLI, the servers and the watcher; the drivers import the core, never the reverse."""

    def core(m: str) -> bool:
        top_level = m.count(".") <= 1 and not _in(m, DRIVERS) and m not in ENTRY_POINTS
        return _in(m, CORE) or top_level

    assert {m for m in modules() if core(m)} >= {"memo", "memo.config", "memo.embed.tokens"}
    bad = [str(e) for e in edges() if core(e.source) and _in(e.target, DRIVERS)]
    assert not bad, "\n".join(bad)


# What a driver may import of the floors: `memo.library`'s door (Library and the few names its
# __init__ lists), the library's own operations, the modules that declare the results a driver
# renders, and the one markdown module (the page reads a note as the chunker does). The model
# (embed/) is no floor.
DRIVER_DOOR = ("memo.library",)
LIBRARY_OPERATIONS = ("memo.library.adopt", "memo.library.naming")
RESULTS = (
    "memo.search.results",
    "memo.search.excerpt",
    "memo.router.route",
    "memo.library.related",
    "memo.library.why",
)
MARKDOWN = ("memo.collection.markdown",)


def test_drivers_reach_the_floors_through_the_library_door() -> None:
    """A driver never reaches into collection/, search/, router/ or the registry for a piece
    of behaviour: what it needs besides Library is exported by `memo.library`, so the rooms
    behind the door can be rearranged without a driver knowing."""
    floors = (
        "memo.collection",
        "memo.library",
        "memo.search",
        "memo.router",
        "memo.registry_tools",
    )
    allowed = {*DRIVER_DOOR, *LIBRARY_OPERATIONS, *RESULTS, *MARKDOWN}
    bad = [
        str(e)
        for e in edges(type_checking=True)
        if _in(e.source, DRIVERS) and _in(e.target, floors) and e.target not in allowed
    ]
    assert not bad, "\n".join(bad)
    assert all(m in modules() for m in allowed), "a module the rule names is gone"


def test_the_door_opens_only_what_is_asked_for() -> None:
    """A delegated `memo search` renders a server's answer and must not load SQLite or numpy
    for it, whatever the CLI takes from the door (SyncProgress): `memo.library` imports a
    name's module when a driver first asks for that name."""
    import subprocess

    code = (
        "import sys, memo.cli, memo.cli.text, memo.cli.delegate, memo.cli.queries, "
        "memo.cli.progress; from memo.library import SyncProgress; "
        "print([m for m in ('numpy', 'apsw', 'memo.library.library') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr
    import memo.library as door

    assert all(getattr(door, name) for name in door.__all__), "a name exported but not placed"


# The floors above collection/: they read an index only through what a Collection hands up
ABOVE_THE_INDEX = ("memo.library", "memo.search", "memo.router", *DRIVERS)


def _reaches_the_store(tree: ast.AST) -> list[tuple[int, str]]:
    """Where a module touches an index's open handle: imports apsw or collection/store.py,
    names IndexStore, reads a `.conn`, calls `.execute(`, `.executemany(` or a Collection's
    `.store()`, or hands a Collection's `.read` a function of the store (a lambda or a
    `partial`: the one way a store handle goes out)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if a.name == "apsw"]
        elif isinstance(node, ast.ImportFrom):
            names = {a.name for a in node.names}
            if node.module in ("apsw", "memo.collection.store") or (
                node.module and node.module.endswith("collection.store")
            ):
                found.append((node.lineno, f"from {node.module} import ..."))
            elif node.module == "collection" and "store" in names:
                found.append((node.lineno, "from ..collection import store"))
            found += [(node.lineno, f"imports {n}") for n in names & {"IndexStore"}]
        elif isinstance(node, ast.Name) and node.id == "IndexStore":
            found.append((node.lineno, "IndexStore"))
        elif isinstance(node, ast.Attribute) and node.attr in ("conn", "IndexStore"):
            found.append((node.lineno, f".{node.attr}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr = node.func.attr
            if attr in ("execute", "executemany") or (attr == "store" and not node.args):
                found.append((node.lineno, f".{attr}(...)"))
            elif attr == "read" and len(node.args) == 1 and not node.keywords:
                arg = node.args[0]
                by_partial = (
                    isinstance(arg, ast.Call)
                    and isinstance(arg.func, ast.Name)
                    and arg.func.id == "partial"
                )
                if isinstance(arg, ast.Lambda) or by_partial:
                    found.append((node.lineno, ".read(a function of the store)"))
    return found


def test_the_store_handle_never_leaves_collection() -> None:
    """collection/ owns every SQL statement, every cache of an index's content and the vectors
    in memory; it hands up plain data (a share of each leg, rows, a note's chunks and links).
    search/ ranks that data, library/ and the drivers ask a Collection (or `Library`): none of
    them holds an index's handle, imports apsw, or runs SQL."""
    bad = []
    for name, path in modules().items():
        if _in(name, ABOVE_THE_INDEX):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            rel = path.relative_to(SRC)
            bad += [f"{rel}:{line} {what}" for line, what in _reaches_the_store(tree)]
    assert not bad, "\n".join(bad)


def test_the_store_rule_sees_each_way_out() -> None:
    """The reader of that rule itself: each way a store handle could be used is seen."""
    said = """
import apsw
from ..collection.store import IndexStore
from ..collection import store
rows = c.read(lambda s: s.conn.execute("SELECT 1"))
more = c.read(partial(queries.chunk_rows, ids=[1]))
handle = coll.store()
"""
    found = {what for _, what in _reaches_the_store(ast.parse(said))}
    assert found >= {
        "import apsw",
        "from collection.store import ...",
        "imports IndexStore",
        "from ..collection import store",
        ".read(a function of the store)",
        ".conn",
        ".execute(...)",
        ".store(...)",
    }, found
    fine = "rows = reader.read(0, partial(Collection.rows, ids=[1]))\nx = lib.read('a.md')\n"
    assert not _reaches_the_store(ast.parse(fine))


def main(args: list[str]) -> int:
    """`--type-checking` also counts imports written for type checkers only."""
    type_checking = "--type-checking" in args
    found = cycles(type_checking=type_checking)
    for component in found:
        print(describe(component, type_checking))
    also = ", TYPE_CHECKING imports included" if type_checking else ""
    print(f"{len(found)} cycle(s) (strongly connected groups) among {len(modules())} modules{also}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
