"""memo as an MCP server (official `mcp` SDK, v2 `MCPServer`): six read-only tools and
`memo_reindex`, which writes memo's own index cache (never a note); beside them, the shapes
hosts ask for (mcp_hosts.py: ChatGPT's `search` and `fetch`, each note a `memo://` resource).

Each tool's name is its request's `Operation.tool` and its input schema the request's
declaration. A call is checked once, by the request's `make` (aliases included); the SDK does not
check it again (mcp_sdk.py, `unchecked`) but still reads JSON sent inside a string (`as_meant`).
Every tool returns a text rendering that leads with `path:line` (render.py); with
MEMO_MCP_STRUCTURED=1 also the structured result. Failures the agent can fix come back as tool
errors (`isError`) with the message and a hint, never as a crash of the session.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool as SdkTool
from mcp_types import CallToolResult, ContentBlock, TextContent, ToolAnnotations
from pydantic import BaseModel

from .. import __version__
from ..errors import MemoError
from ..requests import (
    IndexRequest,
    ReadRequest,
    RelatedRequest,
    RouteRequest,
    SearchRequest,
    StatusRequest,
    WhyRequest,
    _Request,
)
from ..skill import skill_text
from . import render
from .mcp_hosts import add_notes, host_tools
from .mcp_sdk import CACHE_HINTS, READ_ONLY, WRITES_CACHE, as_meant, refused, unchecked
from .render import limit_for
from .schemas import OUTPUTS, tool_signature
from .service import Service

# Codex announces a server by the first line of its instructions alone: a whole sentence.
INSTRUCTIONS = """\
memo searches the user's markdown notes: memo_route finds where, memo_search what, memo_get reads.
The library is folders of notes, each topic folder a "collection" described by its _meta.yaml.
1. If you don't know which collection holds the answer, call memo_route(query) first: each
   collection comes with its best hits (which may already answer) and its notes' language.
2. Otherwise call memo_search(path, query) on the best collection's path ('.' searches
   everything).
3. On every search and route, add your own words in the notes' language: also (up to 3
   phrasings: a translation, the notes' own terms), answer (one likely answer, 1-3
   sentences) and, when the question names something exact, keywords. E.g. for Russian notes:
   query="how do I pin a tab", also=["как закрепить вкладку"],
   answer="Вкладку закрепляют командой «Закрепить» в её контекстном меню.", keywords=["Pin"].
4. Read the hit yourself: open the note (paths are under the library root the results name) at
   its line with your file tools, or memo_get(path:line-end). Hits are pointers; the note is
   the truth.
memo never writes notes: write them with your own file tools; the index follows by itself."""

# what memo_search and memo_route ask of every call, in the tools' own descriptions
WORDS = (
    "Every call, add in the notes' language `also`, `answer` and, for exact names, "
    '`keywords`: e.g. also=["как закрепить вкладку"], answer="Закрепить в меню вкладки."'
)


def _answer(
    tool: Tool, arguments: dict[str, Any], service: Service, structured: bool
) -> CallToolResult:
    """One call: the request checked once (`make`), sent to the service, its text rendering
    (within the request's `max_tokens`) plus the structured data when the server was asked
    for it; or a tool error with the hint."""
    try:
        req = tool.request.make(**as_meant(tool.request, arguments))
        data = req.sent_to(service).to_dict()
    except MemoError as e:
        return refused(e)
    limit = limit_for(req.to_dict().get("max_tokens"))
    content: list[ContentBlock] = [TextContent(type="text", text=tool.text_of(data, limit))]
    if structured:
        return CallToolResult(content=content, structured_content=data)
    return CallToolResult(content=content)


def build_mcp(service: Service, structured: bool | None = None) -> MCPServer:
    """memo's MCP server. Tools answer with text a model reads (render.py); `structured`
    (default: MEMO_MCP_STRUCTURED) adds the JSON result and each tool's output schema, for
    clients that read data rather than hand it to a model. Beside them, the shapes hosts ask
    for (mcp_hosts.py): `search` and `fetch`, and each note as a `memo://` resource."""
    if structured is None:
        structured = service.settings.mcp_structured
    mcp = MCPServer(
        name="memo",
        version=__version__,
        instructions=INSTRUCTIONS,
        cache_hints=CACHE_HINTS,
        tools=[
            *(_sdk_tool(tool, service, structured) for tool in TOOLS),
            *host_tools(service, structured),
        ],
    )
    _add_skill(mcp, service)
    add_notes(mcp, service)
    return mcp


@dataclass(frozen=True, slots=True)
class Tool:
    """An operation as an MCP tool: its name and request come from the request's Operation;
    what a model reads of it (title, description, the text rendering) is the tool's own."""

    request: type[_Request]
    title: str
    description: str
    text_of: Callable[[dict[str, Any], int | None], str]

    @property
    def name(self) -> str:
        return self.request.OPERATION.tool

    @property
    def output(self) -> type[BaseModel]:
        return OUTPUTS[self.request]

    @property
    def annotations(self) -> ToolAnnotations:
        return WRITES_CACHE if self.request.OPERATION.writes else READ_ONLY


TOOLS = (
    Tool(
        RouteRequest,
        "Route a question to collections",
        "The collections that answer a question, with their best hits and notes' language: call "
        "it first if you don't know where, then memo_search there. Every call, add `also`, "
        "`answer`, `keywords` as for memo_search.",
        render.route_text,
    ),
    Tool(
        SearchRequest,
        "Search notes",
        "Search a collection, folder or note by words and meaning: hits as `path:line`, "
        "heading, text. " + WORDS,
        render.search_text,
    ),
    Tool(
        ReadRequest,
        "Read lines of a note",
        "Read a note's lines; a `cite` unlike the hit's: it changed, don't quote the hit.",
        render.get_text,
    ),
    Tool(
        RelatedRequest,
        "A note's links, backlinks and similar notes",
        "A note's links, backlinks, notes nearest in meaning, links to no note.",
        render.related_text,
    ),
    Tool(
        StatusRequest,
        "Index status",
        "Per collection: notes indexed, changed, skipped; whether the vector leg works.",
        render.status_text,
    ),
    Tool(
        WhyRequest,
        "Why a note ranks where it does",
        "Where a note ranks for a question in each leg, and what is above it; or why not found.",
        render.why_text,
    ),
    Tool(
        IndexRequest,
        "Re-index notes",
        "Update a path's index now (search does it anyway). Writes no note.",
        render.reindex_text,
    ),
)
ALIASES = {t.name: t.request.aliases() for t in TOOLS}  # per tool: alias -> parameter


def _sdk_tool(tool: Tool, service: Service, structured: bool) -> SdkTool:
    """The tool as the SDK lists and calls it: a function whose signature is the request's
    fields (the published input schema), its arguments passed on unchecked (`_Unchecked`)."""

    def run(**arguments: Any) -> CallToolResult:
        return _answer(tool, arguments, service, structured)

    run.__name__ = tool.name
    returns = Annotated[CallToolResult, tool.output] if structured else CallToolResult
    run.__signature__ = tool_signature(tool.request, returns)  # type: ignore[attr-defined]  # inspect reads it
    made = SdkTool.from_function(
        run,
        name=tool.name,
        title=tool.title,
        description=tool.description,
        annotations=tool.annotations,
        structured_output=structured,
    )
    return unchecked(made)


def _add_skill(mcp: MCPServer, service: Service) -> None:
    """The writing-discipline skill as a prompt."""

    @mcp.prompt(
        name="memo_skill",
        title="How to use the notes library",
        description=(
            "Where each topic is filed (topic → collection), how to find and cite notes with "
            "memo, and the writing rules (search before writing, one note in one place, drafts "
            "to inbox.md, new topic = new folder + _meta.yaml)."
        ),
    )
    def memo_skill() -> str:
        with service.library() as lib:
            return skill_text(lib)
