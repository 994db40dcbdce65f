"""Hosts as they are (issue 45, item 5), in process: several `path:line` read in one call
within one budget, over HTTP and MCP; ChatGPT's `search` and `fetch`; each note as a
`memo://` resource.

A real library (the examples, copied), a real Service and the MCP SDK's own client; lexical
search only (no model), which is all these shapes need.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from memo.config import Settings
from memo.embed.tokens import estimate_tokens
from memo.requests import MAX_PATHS, note_uri
from memo.server.mcp_hosts import LIST_PAGE, MIME
from memo.server.mcp_tools import build_mcp
from memo.server.service import Service

from .conftest import EXAMPLES

JQL = "work/jira/jql.md"
BREAD = "home/cooking/sourdough.md"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    base = tmp_path_factory.mktemp("hosts")
    root = base / "notes"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memo"))
    svc = Service(root, Settings(embedder="none", index_dir=base / "idx"), embedder=None)
    yield svc
    svc.close()


@pytest.fixture(scope="module")
def api(service: Service) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from memo.server.api import build_app

    with TestClient(build_app(service), base_url="http://127.0.0.1:8765") as c:
        yield c


def mcp_calls(service: Service, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    async def go() -> list[Any]:
        async with Client(build_mcp(service)) as c:
            return [await c.call_tool(name, args) for name, args in calls]

    return anyio.run(go)


# ---------------------------------------------------------------------- several at once
def test_a_read_of_several_answers_each_in_order_with_its_own_cite(api: Any) -> None:
    alone = [
        api.get("/note", params={"path": where}).json()
        for where in (f"{JQL}:5-6", f"{BREAD}:15", f"{JQL}:1-2")
    ]
    r = api.get("/note", params={"path": f"{JQL}:5-6", "paths": [f"{BREAD}:15", f"{JQL}:1-2"]})
    assert r.status_code == 200, r.text
    got = r.json()
    first = {k: v for k, v in got.items() if k != "more"}
    assert [first, *got["more"]] == alone
    assert [(x["path"], x["line"], x["end_line"]) for x in got["more"]] == [
        (BREAD, 15, 15),
        (JQL, 1, 2),
    ]
    one = api.get("/note", params={"path": f"{JQL}:5-6"}).json()
    assert "more" not in one  # a read of one answers as it always did


def test_several_reads_share_one_max_tokens(api: Any) -> None:
    """The first excerpt takes what it needs, the next what is left (cut at a line), the
    last nothing at all: its `next_line` says where to read it from."""
    whole = api.get("/note", params={"path": f"{JQL}:1-9"}).json()
    heading = "# Хлеб на закваске\n"  # the note's first line and the blank one after it
    budget = estimate_tokens(whole["text"]) + estimate_tokens(heading)
    r = api.get(
        "/note",
        params={
            "path": f"{JQL}:1-9",
            "paths": [f"{BREAD}:1-15", f"{JQL}:11-14"],
            "max_tokens": budget,
        },
    )
    got = r.json()
    second, third = got["more"]
    assert (got["line"], got["end_line"]) == (1, 9)
    assert (second["line"], second["end_line"], second["next_line"]) == (1, 2, 3)
    assert (third["line"], third["end_line"], third["text"], third["next_line"]) == (
        11,
        10,
        "",
        11,
    )
    used = sum(estimate_tokens(x["text"]) for x in (got, second) if x["text"])
    assert used <= budget


def test_mcp_reads_several_locations_in_one_call(service: Service) -> None:
    listed, as_path, too_many, bad = mcp_calls(
        service,
        ("memo_get", {"path": f"{JQL}:5", "paths": [f"{BREAD}:15"], "lines": 1}),
        ("memo_get", {"path": [f"{JQL}:5-5", f"{BREAD}:15"]}),
        ("memo_get", {"path": JQL, "paths": [BREAD] * (MAX_PATHS + 1)}),
        ("memo_get", {"path": JQL, "paths": [f"{BREAD}:0"]}),
    )
    text = listed.content[0].text.splitlines()
    assert text[0] == "2 excerpts"
    assert text[1].startswith(f"{JQL}:5-5 of 14") and "; cite " in text[1]
    assert text[2].startswith("`project = OPS")
    assert text[3].startswith(f"{BREAD}:15-15 of 15; cite 0e0c447e1134")
    assert as_path.content[0].text == listed.content[0].text  # a list as the path: the same
    assert too_many.is_error and f"at most {MAX_PATHS}" in too_many.content[0].text
    assert bad.is_error and f"{BREAD}:0 is not a line range" in bad.content[0].text


# ---------------------------------------------------------------------- ChatGPT's two tools
def test_search_and_fetch_have_chatgpts_shapes_and_their_ids_round_trip(service: Service) -> None:
    """`search(query)` answers one text block, JSON {"results": [{id, title, url, text}]};
    `fetch(id)` of each id answers one text block, JSON {id, title, text, url, metadata}: the
    lines that hit cited, with the same cite and heading; its url reads the whole note."""
    from memo.requests import SearchRequest

    hits = service.search(SearchRequest.make("work", "JQL open bugs")).to_dict()["results"]
    (found,) = mcp_calls(service, ("search", {"query": "JQL open bugs"}))
    assert len(found.content) == 1 and found.content[0].type == "text"
    results = json.loads(found.content[0].text)["results"]
    assert [set(r) for r in results] == [{"id", "title", "url", "text"}] * len(results)
    by_id = {f"{h['path']}:{h['line']}-{h['end_line']}": h for h in hits}
    mine = [r for r in results if r["id"] in by_id]
    assert mine, (results, list(by_id))
    fetched = mcp_calls(service, *(("fetch", {"id": r["id"]}) for r in mine))
    for r, got in zip(mine, fetched, strict=True):
        hit, doc = by_id[r["id"]], json.loads(got.content[0].text)
        assert set(doc) == {"id", "title", "text", "url", "metadata"} and doc["id"] == r["id"]
        assert doc["metadata"]["cite"] == hit["cite"] and doc["title"] == hit["heading"]
        assert (doc["metadata"]["line"], doc["metadata"]["end_line"]) == (
            hit["line"],
            hit["end_line"],
        )
        assert doc["url"] == r["url"] == f"memo://{hit['path']}"
    (whole,) = mcp_calls(service, ("fetch", {"id": f"memo://{JQL}"}))
    note = (service.root / JQL).read_text(encoding="utf-8").rstrip("\n")
    doc = json.loads(whole.content[0].text)
    assert doc["text"] == note and doc["title"] == "JQL cheatsheet"


def test_fetch_of_what_is_no_note_is_a_tool_error_that_says_what_to_send(service: Service) -> None:
    missing, outside, blank = mcp_calls(
        service,
        ("fetch", {"id": "work/jira/nothing.md:3-4"}),
        ("fetch", {"id": "../../etc/passwd"}),
        ("search", {"query": "  "}),
    )
    for r in (missing, outside, blank):
        assert r.is_error and "\nhint: " in r.content[0].text
    assert "outside the library root" in outside.content[0].text


# ---------------------------------------------------------------------- notes as resources
def test_each_note_reads_as_a_memo_resource(service: Service) -> None:
    odd = "home/cooking/Хлеб и соль #2.md"
    (service.root / odd).write_text("# Хлеб и соль\n\nСоль — 2 %.\n", encoding="utf-8")

    async def go() -> tuple[Any, ...]:
        async with Client(build_mcp(service)) as c:
            templates = (await c.list_resource_templates()).resource_templates
            plain = await c.read_resource(f"memo://{JQL}")
            named = await c.read_resource(note_uri(odd))
            try:
                await c.read_resource("memo://work/jira/nothing.md")
                missing = None
            except MCPError as e:
                missing = e
            return c.session.protocol_version, templates, plain, named, missing

    try:
        version, templates, plain, named, missing = anyio.run(go)
    finally:
        (service.root / odd).unlink()
    assert version == "2026-07-28"  # the SDK's in-process client speaks the newest protocol
    assert [(t.uri_template, t.mime_type) for t in templates] == [("memo://{+path}", MIME)]
    assert plain.contents[0].text == (service.root / JQL).read_text().rstrip("\n")
    assert plain.contents[0].mime_type == MIME
    assert (
        note_uri(odd)
        == "memo://home/cooking/%D0%A5%D0%BB%D0%B5%D0%B1%20%D0%B8%20%D1%81%D0%BE%D0%BB%D1%8C%20%232.md"
    )
    assert named.contents[0].text == "# Хлеб и соль\n\nСоль — 2 %."
    assert missing is not None and "nothing.md" in str(missing)


def test_resources_list_every_note_a_page_at_a_time(tmp_path: Path) -> None:
    """A library of more notes than a page: the pages, cursor to cursor, list every note once,
    in order, and the last says there is no more."""
    root = tmp_path / "notes"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memo"))
    many = root / "work" / "many"
    many.mkdir()
    (many / "_meta.yaml").write_text("description: many small notes\n")
    for i in range(2 * LIST_PAGE + 5):
        (many / f"n{i:04d}.md").write_text(f"# Note {i}\n")
    svc = Service(root, Settings(embedder="none", index_dir=tmp_path / "idx"), embedder=None)

    async def go() -> list[Any]:
        pages, cursor = [], None
        async with Client(build_mcp(svc)) as c:
            while True:
                page = await c.list_resources(cursor=cursor)
                pages.append(page)
                if page.next_cursor is None:
                    return pages
                cursor = page.next_cursor

    pages = anyio.run(go)
    svc.close()
    listed = [r.uri for p in pages for r in p.resources]
    want = sorted(
        [f"work/many/n{i:04d}.md" for i in range(2 * LIST_PAGE + 5)]
        + [
            JQL,
            BREAD,
            "work/jira/automation.md",
            "work/networking/pbr.md",
            "work/networking/vlan.md",
        ]
    )
    assert [len(p.resources) for p in pages] == [LIST_PAGE, LIST_PAGE, 10]
    assert listed == [note_uri(p) for p in want]
