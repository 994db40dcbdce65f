"""`memo related` through every driver (issue 45, item 2): the CLI, `GET /related`, the MCP
tool `memo_related` and the note page's panel, on one real library (tests/test_links.py's)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from mcp import Client

from memo.cli import cli
from memo.config import Settings
from memo.library import Library
from memo.server.api import build_app
from memo.server.mcp_tools import build_mcp
from memo.server.render import wire_len
from memo.server.service import Service

from .conftest import checksums
from .test_links import make_graph


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = make_graph(tmp_path_factory.mktemp("related") / "lib")
    with Library(root, None, Settings()) as lib:
        lib.index()
    before = checksums(root)
    yield root
    assert checksums(root) == before, "memo changed a note"


@pytest.fixture(scope="module")
def service(root: Path) -> Iterator[Service]:
    svc = Service(root, Settings(embedder="none"), embedder=None)
    yield svc
    svc.close()


def test_the_cli_prints_every_item_as_path_line_and_json_on_request(root):
    home = str(root / "notes" / "Home.md")
    runner = CliRunner(env={"MEMO_EMBEDDER": "none"})  # lexical: no vectors, no similar
    out = runner.invoke(cli, ["related", home, "--no-server", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["path"] == "notes/Home.md" and data["line"] is None
    assert [b["path"] for b in data["backlinks"]] == ["notes/Index.md", "notes/Sub/Deep Note.md"]
    text = runner.invoke(cli, ["related", f"{home}:6", "--no-server"])
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0] == "notes/Home.md (lines 4-15): 6 links, 2 backlinks, 0 similar, 1 unresolved"
    assert "- notes/Guide.md:5 #Setup  (line 6)" in lines
    assert "- notes/Index.md:3  - [[Home]]" in lines


def test_http_get_related_answers_the_declared_shape(service):
    with TestClient(build_app(service), base_url="http://127.0.0.1:8765") as c:
        r = c.get("/related", params={"note": "notes/Home.md:14"})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["section"] == [4, 15]
        got = [(x["path"], x["from_line"], x["by"]) for x in body["links"]]
        assert len(got) == 6 and ("notes/Index.md", 2, "name") not in got  # line 2: outside
        assert got[-2:] == [("other/Dog.md", 14, "alias"), ("notes/Home.md", 14, "self")]
        assert [x["target"] for x in body["unresolved"]] == ["Nowhere"]
        spec = c.get("/openapi.json").json()
        assert "/related" in spec["paths"] and "get" in spec["paths"]["/related"]
        folder = c.get("/related", params={"path": "notes"})
        assert folder.status_code == 404 and "not a note" in folder.json()["error"]["message"]
        twice = c.get("/related", params={"path": "notes/Home.md:6", "line": 7})
        assert twice.status_code == 422 and "line given twice" in twice.text


def call(service: Service, arguments: dict[str, Any]) -> str:
    async def go() -> str:
        async with Client(build_mcp(service)) as c:
            names = [t.name for t in (await c.list_tools()).tools]
            assert "memo_related" in names
            result = await c.call_tool("memo_related", arguments)
            assert not result.is_error, result
            return result.content[0].text

    return anyio.run(go)


def test_the_mcp_tool_answers_in_text_within_max_tokens(service):
    whole = call(service, {"path": "notes/Guide.md"})
    assert whole.splitlines()[:3] == [
        "notes/Guide.md: 0 links, 1 backlinks, 0 similar, 0 unresolved",
        "backlinks (the notes linking here, at the line of the link):",
        "- notes/Home.md:6  (3 links)  See [[Guide]], [[guide#Setup|the setup]] and "
        "![[Guide#^step-two]].",
    ]
    small = call(service, {"file": "notes/Home.md", "max_tokens": 30})
    assert wire_len(small) <= 30 * 4
    assert small.startswith("notes/Home.md: ") and "left out to stay within max_tokens" in small


def test_the_note_page_shows_the_neighbours_each_a_link_to_its_line(service):
    with TestClient(build_app(service), base_url="http://127.0.0.1:8765") as c:
        page = c.get("/read", params={"path": "notes/Home.md"})
        assert page.status_code == 200
        html = page.text
    assert 'aria-label="Related notes"' in html
    assert (
        'href="/read?path=notes%2FIndex.md&amp;line=3#L3" title="notes/Index.md:3">Index:3</a>'
        in html
    )
    assert 'href="#L14"' in html and "[[Nowhere]]" in html  # an unresolved link, at its line
