"""What every host sends its model on every turn, and what it may cache (issue 50, item 7): the
tools as a host lists them within 2,500 tokens, every field kept and described; the listings
with the freshness of what changes them; and the vector leg, when it is lost, said so by
memo_status and by every search, in a real `memo mcp` process."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memo.requests import REQUESTS
from memo.server import stdio
from memo.server.mcp_sdk import PROCESS_LIFETIME_MS

from .test_stdio import Mcp, envelope

BUDGET = 2_500  # tokens of memo's tools, as a host lists them (names, descriptions, schemas)


def _listed(tools: list[dict[str, Any]]) -> str:
    """The tools as docs/agents.md counts them: what a host hands its model of each."""
    keys = ("name", "description", "inputSchema")
    return json.dumps([{k: t[k] for k in keys} for t in tools], ensure_ascii=False)


def test_the_tools_a_host_lists_cost_at_most_2500_tokens_every_field_described(real_embedder):
    static = stdio.load_static()
    assert static is not None, "mcp_static.json is stale: python -m memo.server.stdio --write"
    listings = [*static["tools"].values(), *(m["tools"] for m in static["modern"].values())]
    empty = real_embedder.count_tokens("")
    for listing in listings:
        tools = listing["tools"]
        assert real_embedder.count_tokens(_listed(tools)) - empty <= BUDGET
        by_name = {t["name"]: t for t in tools}
        for request in REQUESTS.values():  # every field of every request, each described
            props = by_name[request.OPERATION.tool]["inputSchema"]["properties"]
            assert set(props) == {p.name for p in request.PARAMS}
            assert all(prop.get("description") for prop in props.values()), request
        for tool in tools:
            assert tool["description"], tool["name"]
            assert all(p.get("description") for p in tool["inputSchema"]["properties"].values())


def test_the_listings_say_how_long_a_host_may_keep_them(notes: Path) -> None:
    """2026-07-28 listings carry `ttlMs` and `cacheScope`: what is fixed for the process (the
    tools, the prompt, the template, the server's description) fresh for a day, answered by
    the front and by the SDK alike; the notes' listing and a note's text stale at once."""
    m = Mcp(notes)
    got = {}
    for method in ("server/discover", "tools/list", "resources/list", "tools/list"):
        m.send(method, envelope())
        got.setdefault(method, []).append(m.reply()["result"])
    m.send("resources/read", {"uri": "memo://work/jira/jql.md", **envelope()})
    read = m.reply()["result"]
    for method in ("prompts/list", "resources/templates/list"):
        m.send(method, envelope())
        got[method] = [m.reply()["result"]]
    assert m.close() == 0
    fixed = {"ttlMs": PROCESS_LIFETIME_MS, "cacheScope": "private"}
    for method in ("server/discover", "tools/list", "prompts/list", "resources/templates/list"):
        for result in got[method]:  # tools/list: the front's answer, then the SDK's
            assert {k: result.get(k) for k in fixed} == fixed, method
    for result in (got["resources/list"][0], read):
        assert (result["ttlMs"], result["cacheScope"]) == (0, "private")
    assert read["contents"][0]["text"].startswith("---") or read["contents"][0]["text"]


def _said(m: Mcp, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    m.send("tools/call", {"name": tool, "arguments": arguments})
    result = m.reply()["result"]
    return bool(result.get("isError")), result["content"][0]["text"]


def test_without_a_model_status_and_every_search_say_the_vector_leg_is_unavailable(notes):
    m = Mcp(notes, {"MEMO_EMBEDDER": "none"})
    m.send("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}})
    m.reply()
    m.send("notifications/initialized", notify=True)
    status = _said(m, "memo_status", {})
    search = _said(m, "memo_search", {"query": "JQL"})
    route = _said(m, "memo_route", {"query": "JQL"})
    assert m.close() == 0
    assert not status[0] and "vector leg unavailable: no embedding model configured" in status[1]
    assert not search[0] and "vector leg" in search[1] and "work/jira/jql.md" in search[1]
    assert not route[0] and "vector leg" in route[1]


def test_without_sqlite_vec_status_and_search_say_so(notes: Path, tmp_path: Path) -> None:
    """sqlite-vec removed (a `sqlite_vec` whose library is not there shadows the installed
    one): memo_status says the vector leg is unavailable and why; a search says the same in
    its refusal, rather than an opaque error."""
    shim = tmp_path / "shim" / "sqlite_vec"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(
        f"def loadable_path():\n    return {str(tmp_path / 'no-such' / 'vec0')!r}\n"
    )
    path = os.pathsep.join([str(shim.parent), os.environ.get("PYTHONPATH", "")])
    m = Mcp(notes, {"MEMO_EMBEDDER": "none", "PYTHONPATH": path})
    m.send("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}})
    m.reply()
    m.send("notifications/initialized", notify=True)
    status = _said(m, "memo_status", {})
    search = _said(m, "memo_search", {"query": "JQL"})
    assert m.close() == 0
    assert "vector leg unavailable" in status[1] and "sqlite-vec" in status[1]
    assert search[0] and "sqlite-vec extension is not loaded" in search[1]
    assert "vector leg is unavailable" in search[1]
