"""One request, one set of bounds: every driver publishes the bounds requests.py defines."""

from __future__ import annotations

import anyio
import click
import pytest

from memo import requests as rq
from memo.cli import cli
from memo.errors import MemoError
from memo.requests import RequestError, RouteRequest, SearchRequest
from memo.server.mcp_tools import build_mcp
from memo.server.routes import RouteBody, SearchBody


def _bounds(field) -> dict:
    out = {}
    for m in field.metadata:
        for name in ("ge", "le", "min_length", "max_length"):
            if getattr(m, name, None) is not None:
                out[name] = getattr(m, name)
    return out


def test_http_bodies_publish_the_request_fields_and_bounds():
    fields = SearchBody.model_fields
    search_fields = {f for f in SearchRequest.__dataclass_fields__ if f != "cut_from"}
    assert set(fields) == search_fields
    assert _bounds(fields["k"]) == {"ge": 1, "le": rq.MAX_K}
    assert _bounds(fields["route"]) == {"ge": 1, "le": rq.MAX_ROUTE_K}
    assert _bounds(fields["max_tokens"]) == {"ge": 1, "le": rq.MAX_BUDGET}
    assert _bounds(fields["query"])["max_length"] == rq.MAX_QUERY_CHARS
    assert _bounds(fields["path"])["max_length"] == rq.MAX_PATH_CHARS
    assert fields["k"].default == rq.DEFAULT_K
    route_fields = {f for f in RouteRequest.__dataclass_fields__ if f != "cut_from"}
    assert set(RouteBody.model_fields) == route_fields
    assert _bounds(RouteBody.model_fields["k"]) == {"ge": 1, "le": rq.MAX_ROUTE_K}


def test_mcp_tools_publish_the_same_bounds():
    async def schemas() -> dict:
        from mcp import Client

        from memo.server.service import Service

        class _NoService(Service):  # schemas only: no library is opened
            def __init__(self) -> None:
                pass

        async with Client(build_mcp(_NoService())) as client:
            return {t.name: t.input_schema for t in (await client.list_tools()).tools}

    tools = anyio.run(schemas)
    search = tools["memo_search"]["properties"]
    search_fields = {f for f in SearchRequest.__dataclass_fields__ if f != "cut_from"}
    assert set(search) == search_fields
    assert search["k"]["maximum"] == rq.MAX_K and search["k"]["default"] == rq.DEFAULT_K
    assert search["query"]["maxLength"] == rq.MAX_QUERY_CHARS
    assert search["path"]["maxLength"] == rq.MAX_PATH_CHARS
    route_k = search["route"]["anyOf"][0]
    assert route_k["maximum"] == rq.MAX_ROUTE_K
    route = tools["memo_route"]["properties"]
    assert route["k"]["maximum"] == rq.MAX_ROUTE_K
    assert set(route) == {f for f in RouteRequest.__dataclass_fields__ if f != "cut_from"}
    lines = tools["memo_get"]["properties"]["lines"]["anyOf"][0]
    assert lines["maximum"] == rq.MAX_LINES


def test_cli_options_use_the_same_bounds():
    search = cli.get_command(None, "search")
    opts = {p.name: p for p in search.params}
    assert isinstance(opts["k"].type, click.IntRange) and opts["k"].type.max == rq.MAX_K
    assert opts["route_k"].type.max == rq.MAX_ROUTE_K
    assert opts["max_tokens"].type.max == rq.MAX_BUDGET
    assert list(opts["mode"].type.choices) == list(rq.MODES)
    route = {p.name: p for p in cli.get_command(None, "route").params}
    assert route["k"].type.max == rq.MAX_ROUTE_K
    assert list(route["strategy"].type.choices) == list(rq.STRATEGIES)
    show = {p.name: p for p in cli.get_command(None, "show").params}
    assert show["lines"].type.max == rq.MAX_LINES


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
    assert len(req.query) == rq.MAX_QUERY_CHARS and req.cut_from == 6000
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
