"""One request, one set of bounds: every driver publishes the bounds requests.py defines."""

from __future__ import annotations

import dataclasses
import json

import anyio
import pytest

from memo import requests as rq
from memo.cli import cli
from memo.config import Settings
from memo.errors import MemoError
from memo.library import Library
from memo.params import GROUP, ungrouped
from memo.requests import ReadRequest, RequestError, RouteRequest, SearchRequest
from memo.server import endpoints, mcp_tools
from memo.server.mcp_tools import build_mcp
from memo.server.service import Service


def _http_models(kind: str) -> dict[str, type]:
    """method -> the model of each endpoint the operation declares."""
    return {m: endpoints.MODELS[kind, m] for m, _ in rq.REQUESTS[kind].OPERATION.endpoints}


INTERNAL = {"said", "cut_from"}  # what a request says itself; no client sets it


def _fields(request) -> set[str]:
    """The request's fields, a group's (the agent's words) by its members."""
    out = set()
    for f in dataclasses.fields(request):
        out |= set(f.metadata.get(GROUP, {f.name: f}))
    return out - INTERNAL


class _NoService(Service):  # schemas only: no library is opened
    def __init__(self) -> None:
        self.settings = Settings()


def _mcp_schemas() -> dict:
    async def schemas() -> dict:
        from mcp import Client

        async with Client(build_mcp(_NoService())) as client:
            return {t.name: t.input_schema for t in (await client.list_tools()).tools}

    return anyio.run(schemas)


BOUNDS = ("minimum", "maximum", "minLength", "maxLength", "pattern", "maxItems")


def _json_bounds(prop: dict) -> dict:
    """The bounds of a property (through `anyOf [T, null]`), its items' too."""
    out = {}
    for part in [prop, *prop.get("anyOf", [])]:
        out |= {key: part[key] for key in BOUNDS if key in part}
        if isinstance(part.get("items"), dict) and (items := _json_bounds(part["items"])):
            out["items"] = items
    return out


def _published(p: rq.Param) -> dict:
    """The bounds every schema must publish for a Param: each one `check` applies."""
    pattern = rq.pattern_of(p)
    if pattern and p.kind not in ("query", "phrasings", "keywords", "answer"):
        pattern = f"^(?:{pattern})$"  # JSON Schema searches: a whole form is anchored
    anchored = {"pattern": pattern} if pattern else {}
    if p.kind == "int":
        out = {"minimum": p.low, "maximum": p.high}
    elif p.kind in ("tags", "phrasings", "keywords", "locations"):
        out = {"maxItems": p.high}
        if p.kind != "tags":
            out["items"] = {"maxLength": p.longest, **anchored}
        if p.kind == "locations":
            out["items"]["minLength"] = 1
    elif p.kind in ("bool", "choice"):
        out = {}
    else:
        out = {"maxLength": p.longest if p.kind == "answer" else p.high, **anchored}
        out["minLength"] = 1 if p.kind == "location" else None
    return {k: v for k, v in out.items() if v is not None}


@pytest.mark.parametrize("kind", sorted(rq.REQUESTS))
def test_every_field_of_every_request_reaches_every_driver(kind):
    """One declaration per request (issue 21): the CLI options, the HTTP bodies and query
    models, the MCP tool and the alias table are all read off `PARAMS`, field by field."""
    request = rq.REQUESTS[kind]
    params = {p.name: p for p in request.PARAMS}
    assert set(params) == _fields(request)
    # CLI
    op = request.OPERATION
    command = cli.get_command(None, op.command)
    opts = {p.name: p for p in command.params}
    for p in params.values():
        if not p.cli:
            continue
        o = opts[p.name]
        if p.kind == "int":
            assert (o.type.min, o.type.max) == (p.low, p.high), p.name
        if p.kind == "choice":
            assert list(o.type.choices) == list(p.accepted)
        if p.flag is not None:
            assert p.flag in o.opts and o.help == p.help
    # HTTP: every model of the request
    for name, http_model in _http_models(kind).items():
        fields = http_model.model_fields
        assert set(fields) == set(params), name
        props = http_model.model_json_schema()["properties"]
        for p in params.values():
            assert _json_bounds(props[p.name]) == _published(p), (name, p.name)
            f = fields[p.name]
            assert f.description == p.help
            if not p.required:
                assert f.default == (None if p.default == () else p.default)
    # HTTP: what it reads (a JSON body, a query string), an alias filling its field
    for p in params.values():
        for alias in p.aliases:
            probe = {q.name: "x.md" for q in params.values() if q.required and q.name != p.name}
            value = {
                "int": p.low or 1,
                "bool": True,
                "tags": ["a"],
                "phrasings": ["a"],
                "keywords": ["a"],
                "locations": ["a.md"],
            }.get(p.kind, "v.md")
            if p.kind == "choice":
                value = p.choices[-1]
            body = endpoints.body_arguments(
                json.dumps({**probe, alias: value}).encode(), "application/json"
            )
            given = value if isinstance(value, list) else [json.dumps(value).strip('"')]
            text = [*probe.items(), *((alias, v) for v in given)]
            for arguments in (body, endpoints.query_arguments(request, text)):
                got = request.make_exact(arguments)
                want = tuple(value) if isinstance(value, list) else value
                assert ungrouped(got)[p.name] == want, (alias, arguments)
    # MCP
    schema = _MCP[op.tool]
    assert set(schema["properties"]) == set(params)
    assert set(schema.get("required", [])) == {p.name for p in params.values() if p.required}
    for p in params.values():
        prop = schema["properties"][p.name]
        # every turn a host sends the model these: the bounds it can act on (a list's length,
        # the choices), the rest `make` checks and explains (mcp_sdk.py LEFT_OUT)
        assert _json_bounds(prop) == _mcp_bounds(_published(p)), p.name
        assert prop.get("description") == p.tool_help
    assert mcp_tools.ALIASES[op.tool] == {a: p.name for p in params.values() for a in p.aliases}


_MCP = _mcp_schemas()


def _mcp_bounds(published: dict) -> dict:
    """The bounds of `_published` an MCP tool's schema keeps: a list's `maxItems`."""
    return {k: v for k, v in published.items() if k == "maxItems"}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"k": 0},
        {"k": rq.MAX_K + 1},
        {"k": "5"},
        {"k": True},
        {"mode": "fuzzy"},
        {"route": rq.MAX_ROUTE_K + 1},
        {"max_tokens": 0},
        {"tags": [1, 2]},
        {"diverse": "yes"},
        {"bogus": 1},
    ],
)
def test_search_request_refuses_what_is_out_of_bounds(kwargs):
    with pytest.raises(RequestError) as e:
        SearchRequest.make(".", "x", **kwargs)
    assert str(e.value) and e.value.hint and isinstance(e.value, MemoError)


def test_a_long_query_is_cut_and_says_so():
    req = SearchRequest.make(".", "слово " * 1000)
    assert len(req.query) == rq.MAX_QUERY_CHARS
    assert "6000 characters" in req.warnings()[0]
    assert SearchRequest.make(".", "short").warnings() == []


def test_requests_normalise_their_input():
    req = SearchRequest.make(None, "q", tags="a, b", k=3)
    assert req.path == "." and req.tags == ("a", "b") and req.k == 3
    assert req.to_dict() == {
        "path": ".",
        "query": "q",
        "k": 3,
        "mode": "hybrid",
        "tags": ["a", "b"],
        "explain": False,
    }
    assert RouteRequest.make("q").k == rq.DEFAULT_ROUTE_K
    with pytest.raises(RequestError):
        RouteRequest.make("q", strategy="bogus")
    with pytest.raises(RequestError):
        RouteRequest.make("q", prefix="a\x00b")


def test_the_requests_module_loads_nothing_heavy():
    import subprocess
    import sys

    code = (
        "import sys, memo, memo.requests; "
        "bad = [m for m in ('numpy', 'apsw', 'memo.library', 'memo.embed') if m in sys.modules];"
        " print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (("work/networking/pbr.md:12",), ("work/networking/pbr.md", 12, None)),
        (("work/networking/pbr.md:12-20",), ("work/networking/pbr.md", 12, 9)),
        (("a b/Заметка.MD:3-3",), ("a b/Заметка.MD", 3, 1)),
        (("/abs/x.md:7", None, 2), ("/abs/x.md", 7, 2)),
        (("x.md", 5), ("x.md", 5, None)),
        (("odd:name.md",), ("odd:name.md", None, None)),
    ],
)
def test_a_read_takes_back_every_path_form_memo_prints(given, expected):
    req = ReadRequest.make(*given)
    assert (req.path, req.line, req.lines) == expected


@pytest.mark.parametrize("bad", [("x.md:5", 6), ("x.md:9-3",), ("x.md:0",), ("",)])
def test_a_read_refuses_a_location_that_says_two_things(bad):
    with pytest.raises(RequestError):
        ReadRequest.make(*bad)


# ---------------------------------------------------------------------- each operation, once
class _NoLibrary:
    """A Service's methods by name only: the routers are built, nothing is answered."""

    def __getattr__(self, name: str):
        return lambda *a, **k: None


def test_every_driver_names_each_operation_as_declared():
    """Issue 29: an operation's name per driver is declared once, beside its request; the CLI,
    the MCP tools, the HTTP endpoints and the pages are built from it."""
    from memo.server.web import auth, pages

    ops = [r.OPERATION for r in rq.REQUESTS.values()]
    assert list(rq.REQUESTS) == [op.name for op in ops]
    for op in ops:
        assert cli.get_command(None, op.command) is not None, op.command
    tools = {t.name: t for t in mcp_tools.TOOLS}
    assert set(tools) == {op.tool for op in ops}
    for op in ops:
        assert tools[op.tool].annotations.read_only_hint is (not op.writes)
    http = {(m, r.path) for r in endpoints.api_router(_NoLibrary()).routes for m in r.methods} - {
        ("GET", "/health")
    }
    assert http == {e for op in ops for e in op.endpoints}
    served = {r.path for r in pages.pages_router(_NoLibrary(), None, []).routes}
    assert served == {op.page for op in ops if op.page}
    assert served <= auth.PAGE_PATHS


class _Asked:
    """Answers (requests.Answers) that say which of their methods a request called."""

    def search(self, req):
        return "search", req

    def route(self, req):
        return "route", req

    def read(self, req):
        return "read", req

    def status(self, req):
        return "status", req

    def index(self, req):
        return "index", req


@pytest.mark.parametrize(
    "req",
    [
        SearchRequest.make(".", "q"),
        RouteRequest.make("q"),
        ReadRequest.make("a.md"),
        rq.StatusRequest.make(),
        rq.IndexRequest.make(),
    ],
    ids=lambda r: type(r).__name__,
)
def test_each_request_calls_the_method_its_operation_names(req):
    """Issue 42: a request is answered by one method a reader can grep (`sent_to` spells it),
    the one its Operation names; the Library and the Service both have it."""
    assert req.sent_to(_Asked()) == (req.OPERATION.name, req)
    assert req.OPERATION.name in vars(Library) and req.OPERATION.name in vars(Service)


def test_no_driver_looks_an_operation_up_by_its_name():
    """Issue 42: no `getattr(x, op.name)` in the CLI or the servers; the one getattr left is
    click's lazy loading of a command's module (cli/__init__.py) and progress.py's flag."""
    from .conftest import REPO

    src = REPO / "src" / "memo"
    found = [
        f"{path.relative_to(REPO)}:{n}"
        for path in sorted([*(src / "cli").rglob("*.py"), *(src / "server").rglob("*.py")])
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "getattr(" in line
    ]
    assert [where.split(":")[0] for where in found] == [
        "src/memo/cli/__init__.py",
        "src/memo/cli/progress.py",
    ], found


def test_a_name_means_one_thing_in_every_request():
    """A field is spelled and bounded alike wherever it appears (server/schemas.PARAMS)."""
    seen: dict[str, rq.Param] = {}
    for request in rq.REQUESTS.values():
        for p in request.PARAMS:
            first = seen.setdefault(p.name, p)
            same = (first.low, first.high, rq.pattern_of(first))
            assert (p.low, p.high, rq.pattern_of(p)) == same, p.name


def test_the_page_form_speaks_the_declaration():
    """The search page's names (`q`, `scope`...) are the names or aliases of SearchRequest."""
    import inspect

    from memo.server.web import pages

    router = pages.pages_router(_NoLibrary(), None, [])
    page = next(r for r in router.routes if r.path == SearchRequest.OPERATION.page)
    names = {p.name for p in SearchRequest.PARAMS} | {
        a for p in SearchRequest.PARAMS for a in p.aliases
    }
    form = set(inspect.signature(page.endpoint).parameters) - {"request"}
    assert form <= names, form - names


def test_the_date_form_is_the_calendar():
    """DATE_PATTERN (published in the schemas) takes exactly the days that exist."""
    import datetime as dt
    import re

    for year in (1900, 1999, 2000, 2023, 2024, 2100, 2400):
        for month in range(1, 13):
            for day in range(1, 32):
                text = f"{year}-{month:02d}-{day:02d}"
                try:
                    real = dt.date.fromisoformat(text) is not None
                except ValueError:
                    real = False
                assert bool(re.fullmatch(rq.DATE_PATTERN, text)) is real, text
    for ok in ("", "7d", "2W", "9999y", "2024-05-01T10:00"):
        assert SearchRequest.make(".", "q", since=ok).since == (ok or None)
    for bad in ("1" * 40, "soon", "99999y", "2024-5-1", " 7d"):
        with pytest.raises(RequestError, match="YYYY-MM-DD"):
            SearchRequest.make(".", "q", until=bad)


def test_mcp_refuses_bad_arguments_in_a_sentence():
    """An empty query over MCP was answered with pydantic's report (error types, input
    values, a URL); now with the declaration's sentence and its hint."""

    async def calls() -> list:
        from mcp import Client

        async with Client(build_mcp(_NoService())) as client:
            out = []
            for args in ({"query": ""}, {"q": ""}, {"query": "x", "k": 0}, {"query": "x", "z": 1}):
                r = await client.call_tool("memo_search", args)
                out.append((r.is_error, r.content[0].text))
            return out

    said = anyio.run(calls)
    assert all(is_error for is_error, _ in said)
    assert said[0][1].startswith("query is empty: there is nothing to search for\nhint: Send")
    assert said[1][1].startswith("query is empty")  # by its alias too
    assert said[2][1].startswith("k must be an integer from 1 to 50, got 0")
    assert said[3][1].startswith("unknown argument 'z'")
    for _, text in said:
        assert "pydantic" not in text and "type=" not in text
