"""What MCP hosts ask of a server in their own shapes, beside memo's tools (issue 45):

- `search(query)` and `fetch(id)`, the two tools ChatGPT's deep research and connectors call:
  each answers one text block holding a JSON object. A result's `id` is its hit's
  `path:line-end`, which `fetch` reads back (the ids round-trip), and its `url` the note's
  `memo://` URI, which `resources/read` answers;
- each note as a resource, `memo://{+path}` (text/markdown), `resources/list` a page of 200
  notes at a time (`nextCursor`), walked from the disk as sync walks it.

The shapes in full, and where they come from: docs/design.md, "server/mcp_hosts.py".
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.server.mcpserver.tools import Tool as SdkTool
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    ContentBlock,
    ListResourcesResult,
    PaginatedRequestParams,
    Resource,
    TextContent,
)
from pydantic import BaseModel, Field

from ..errors import MemoError
from ..requests import MAX_LINES, ReadRequest, SearchRequest, note_uri
from .mcp_sdk import READ_ONLY, as_meant, refused, unchecked
from .render import snippet_of
from .service import Service

LIST_PAGE = 200  # notes per resources/list answer
MIME = "text/markdown"


class FoundOut(BaseModel):
    id: str = Field(description="The hit's path:line-end: fetch reads those lines.")
    title: str
    url: str = Field(description="The note's memo:// URI (an MCP resource).")
    text: str = Field(description="The hit's best lines, shortened.")


class FoundListOut(BaseModel):
    results: list[FoundOut]


class DocumentOut(BaseModel):
    id: str
    title: str
    text: str
    url: str
    metadata: dict[str, Any]


def found(data: dict[str, Any]) -> dict[str, Any]:
    """A search's result as ChatGPT's `search` answers it: each id the lines its hit cites
    (`path:5-5` for one: `path:5` would read 40 lines from there)."""
    out = []
    for h in data["results"]:
        end = max(h.get("end_line", h["line"]), h["line"])
        out.append(
            {
                "id": f"{h['path']}:{h['line']}-{end}",
                "title": h["heading"] or Path(h["path"]).stem,
                "url": note_uri(h["path"]),
                "text": snippet_of(h),
            }
        )
    return {"results": out}


def document(asked: str, ex: dict[str, Any], title: str) -> dict[str, Any]:
    """A read as ChatGPT's `fetch` answers it, titled as a search titles its hit there: the
    heading path of the section it starts in, else the note's title (`Library.title`)."""
    keys = ("path", "line", "end_line", "total_lines", "cite", "next_line")
    return {
        "id": asked,
        "title": title,
        "text": ex["text"],
        "url": note_uri(ex["path"]),
        "metadata": {k: ex[k] for k in keys},
    }


def _search(service: Service, arguments: dict[str, Any]) -> dict[str, Any]:
    return found(
        SearchRequest.make(**as_meant(SearchRequest, arguments)).sent_to(service).to_dict()
    )


def _fetch(service: Service, arguments: dict[str, Any]) -> dict[str, Any]:
    """`id` is the read's path (a `path` too is one given twice, refused as such)."""
    given = dict(arguments)
    asked = given.get("id", given.get("path"))
    req = ReadRequest.make(*([given.pop("id")] if "id" in given else []), **given)
    ex = req.sent_to(service).to_dict()
    with service.library() as lib:
        title = lib.title(ex["path"], ex["line"])
    return document(str(asked), ex, title)


def host_tools(service: Service, structured: bool) -> list[SdkTool]:
    """`search` and `fetch`, as the SDK lists and calls them."""
    query = Annotated[str, Field(description="What to look for.")]
    ident = Annotated[str, Field(description="A result's id, a note's path or url.")]
    return [
        _tool(
            "search",
            "ChatGPT's search: JSON results (id, title, url, text).",
            inspect.Parameter("query", inspect.Parameter.KEYWORD_ONLY, annotation=query),
            lambda arguments: _search(service, arguments),
            FoundListOut,
            structured,
        ),
        _tool(
            "fetch",
            "ChatGPT's fetch of a result: JSON id, title, text, url, metadata.",
            inspect.Parameter("id", inspect.Parameter.KEYWORD_ONLY, annotation=ident),
            lambda arguments: _fetch(service, arguments),
            DocumentOut,
            structured,
        ),
    ]


def _tool(
    name: str,
    description: str,
    argument: inspect.Parameter,
    answer: Callable[[dict[str, Any]], dict[str, Any]],
    output: type[BaseModel],
    structured: bool,
) -> SdkTool:
    """One tool whose answer is one text block of JSON (and, `structured`, the same object as
    structured content, with its output schema); a MemoError is a tool error with its hint."""

    def run(**arguments: Any) -> CallToolResult:
        try:
            data = answer(arguments)
        except MemoError as e:
            return refused(e)
        text: list[ContentBlock] = [
            TextContent(type="text", text=json.dumps(data, ensure_ascii=False))
        ]
        return CallToolResult(content=text, structured_content=data if structured else None)

    run.__name__ = name
    returns = Annotated[CallToolResult, output] if structured else CallToolResult
    run.__signature__ = inspect.Signature([argument], return_annotation=returns)  # type: ignore[attr-defined]  # inspect reads it
    made = SdkTool.from_function(
        run, name=name, description=description, annotations=READ_ONLY, structured_output=structured
    )
    return unchecked(made)


# ---------------------------------------------------------------------- notes as resources
def add_notes(mcp: MCPServer, service: Service) -> None:
    """Every note as `memo://{+path}`; `resources/list` in pages of LIST_PAGE."""

    @mcp.resource(
        "memo://{+path}",
        name="note",
        title="A note",
        description="A note of the library by its path, as hits give it: memo://work/jira/jql.md",
        mime_type=MIME,
    )
    def note(path: str) -> str:
        try:
            return whole_note(service, path)
        except MemoError as e:
            raise ResourceNotFoundError(f"{e} ({e.hint})" if e.hint else str(e)) from e

    async def listing(ctx: Any, params: PaginatedRequestParams) -> ListResourcesResult:
        cursor = params.cursor or "0"
        if not cursor.isdigit():
            raise MCPError(code=INVALID_PARAMS, message=f"not a cursor memo gave: {cursor!r}")
        start = int(cursor)
        paths = await anyio.to_thread.run_sync(note_paths, service)
        page = [
            Resource(uri=note_uri(p), name=p, title=Path(p).stem, mime_type=MIME)
            for p in paths[start : start + LIST_PAGE]
        ]
        more = start + LIST_PAGE < len(paths)
        return ListResourcesResult(
            resources=page, next_cursor=str(start + LIST_PAGE) if more else None
        )

    mcp._lowlevel_server.add_request_handler("resources/list", PaginatedRequestParams, listing)


def whole_note(service: Service, path: str) -> str:
    """A note's text, all of it (a read answers at most MAX_LINES lines at a time)."""
    parts, line = [], 1
    while True:
        ex = service.read(ReadRequest.make(path, line, MAX_LINES))
        parts.append(ex.text)
        if ex.next_line is None:
            return "\n".join(parts)
        line = ex.next_line


def note_paths(service: Service) -> list[str]:
    """Every note of every collection, relative to the library root, sorted (`Library.notes`)."""
    with service.library() as lib:
        return lib.notes()
