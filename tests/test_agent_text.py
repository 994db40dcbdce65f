"""What a model reads from memo's MCP tools by default (issue 23, items 2-3): text only, the
same in every host; `max_tokens` bounds it; every path form memo prints is taken back."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client

from memo.config import Settings
from memo.server.mcp_tools import build_mcp
from memo.server.render import CHARS_PER_TOKEN, wire_len
from memo.server.service import Service

HIT = re.compile(r"^\d+\. (?P<path>\S+\.md):(?P<span>\d+(?:-\d+)?)\b.*cite (?P<cite>[0-9a-f]+)$")


@pytest.fixture
def service(notes, real_embedder) -> Iterator[Service]:
    svc = Service(notes, Settings(), embedder=real_embedder)
    yield svc
    svc.close()


def calls(service: Service, *todo: tuple[str, dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    async def go() -> tuple[list[Any], list[Any]]:
        async with Client(build_mcp(service)) as c:
            tools = (await c.list_tools()).tools
            return tools, [await c.call_tool(name, args) for name, args in todo]

    return anyio.run(go)


def text(result: Any) -> str:
    assert not result.is_error, result.content
    assert result.structured_content is None  # what every host shows: the text alone
    (block,) = result.content
    return block.text


def test_tools_answer_with_text_alone_and_publish_no_output_schema(service):
    tools, (routed,) = calls(service, ("memo_route", {"query": "JQL open bugs"}))
    assert all(t.output_schema is None for t in tools)
    first = text(routed).splitlines()[1]
    assert first.startswith("1. work/jira  — ")


def test_the_route_search_get_flow_reads_back_what_the_text_printed(service, notes):
    _, (found,) = calls(service, ("memo_search", {"path": "work", "query": "802.1Q trunk"}))
    hits = [m for line in text(found).splitlines() if (m := HIT.match(line))]
    top = hits[0]
    assert top["path"] == "work/networking/vlan.md"
    assert f"paths are under {notes}" in text(found)
    location = f"{top['path']}:{top['span']}"
    _, (got, absolute, note_search, outside) = calls(
        service,
        ("memo_get", {"path": location}),
        ("memo_get", {"path": f"{notes / top['path']}:{top['span']}"}),
        ("memo_search", {"path": location, "query": "MTU", "k": 3}),
        ("memo_get", {"path": f"{notes.parent / 'elsewhere.md'}:1"}),
    )
    header = text(got).splitlines()[0]
    assert header.startswith(f"{location} of ") and header.endswith(f"cite {top['cite']}")
    assert text(absolute).splitlines()[0] == header
    assert all(
        m["path"] == top["path"] for m in map(HIT.match, text(note_search).splitlines()) if m
    )
    assert outside.is_error and "outside the library root" in outside.content[0].text


@pytest.mark.parametrize("max_tokens", [60, 150, 400, 1000])
def test_max_tokens_bounds_what_the_model_reads(service, max_tokens):
    limit = max_tokens * CHARS_PER_TOKEN
    _, results = calls(
        service,
        ("memo_route", {"query": "хлеб на закваске и VLAN", "k": 3, "max_tokens": max_tokens}),
        ("memo_search", {"path": ".", "query": "закваска", "k": 8, "max_tokens": max_tokens}),
        ("memo_get", {"path": "home/cooking/sourdough.md", "max_tokens": max_tokens}),
    )
    for r in results:
        assert wire_len(text(r)) <= limit, (max_tokens, text(r))
    bigger = calls(service, ("memo_get", {"path": "home/cooking/sourdough.md"}))[1][0]
    if wire_len(text(bigger)) > limit:  # cut: it says so, and kept the head
        assert "more left out" in text(results[2]) or "more lines" in text(results[2])


def test_every_place_an_agent_learns_memo_asks_for_its_words_on_every_search(service, notes):
    """Issue 43: the MCP instructions, memo_search's and memo_route's descriptions, `memo skill`
    and the Hermes skill ask for phrasings, a likely answer and keywords on every search, not
    only after a language warning, with one example; the route map names each collection's
    language to write them in."""
    from memo.server.mcp_tools import INSTRUCTIONS
    from memo.skill import skill_text

    with service.library() as lib:
        lib.index()
        skills = {"memo skill": skill_text(lib), "hermes": skill_text(lib, hermes=True)}
    tools, (routed,) = calls(service, ("memo_route", {"query": "sourdough bread"}))
    texts = {
        "instructions": INSTRUCTIONS,
        **{t.name: t.description for t in tools if t.name in ("memo_search", "memo_route")},
        **skills,
    }
    for where, said in texts.items():
        flat = " ".join(said.split())
        assert re.search(r"[Ee]very (time|search|call)", flat), where
        for word in ("also", "answer", "keywords"):
            assert word in flat, (where, word)
        if where != "memo_route":  # its description asks "as for memo_search", said once
            assert "как закрепить вкладку" in flat, where  # the one short example
    assert "`mcp__memo__memo_search(path=" in skills["hermes"]
    assert "1. home/cooking  — " in text(routed) and "(notes in ru; score" in text(routed)
    assert "(notes in ru: Russian)" in skills["memo skill"]
    assert "(notes in en: English)" in skills["memo skill"]
