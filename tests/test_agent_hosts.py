"""Hosts as they are (issue 45, item 5), in process: several `path:line` read in one call
within one budget, over HTTP and MCP.

A real library (the examples, copied), a real Service and the MCP SDK's own client; lexical
search only (no model), which is all these shapes need.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client

from memo.config import Settings
from memo.embed.tokens import estimate_tokens
from memo.requests import MAX_PATHS
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
