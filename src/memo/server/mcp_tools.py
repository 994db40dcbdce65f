"""memo as an MCP server (official `mcp` SDK, v2 `MCPServer`): four read-only tools and
`memo_reindex`, which writes memo's own index cache (never a note).

Each tool's name is its request's `Operation.tool` and its parameters the request's declaration
(requests.py, via server/schemas.py); the names models send instead of ours (`q`, `limit`,
`collection`…) come from the same table.

Every tool returns a text rendering that leads with `path:line` (render.py); with
MEMO_MCP_STRUCTURED=1 also the structured result, validated against a published output schema.
Failures the agent can fix come back as tool errors (`isError`) carrying the message and a hint
in a sentence (an argument outside its bounds included), never as a crash of the session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ContentBlock, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import __version__
from ..errors import MemoError
from ..requests import (
    IndexRequest,
    ReadRequest,
    RequestError,
    RouteRequest,
    SearchRequest,
    StatusRequest,
    _Request,
)
from ..skill import skill_text
from . import render
from .render import limit_for
from .schemas import aliases, explain, model, tool_signature
from .service import Service

# Codex announces a server by the first line of its instructions alone: a whole sentence.
INSTRUCTIONS = """\
memo searches the user's markdown notes: memo_route finds where, memo_search what, memo_get reads.
The library is folders of notes, each topic folder a "collection" described by its _meta.yaml.
1. If you don't know which collection holds the answer, call memo_route(query) first: each
   collection comes with its best hits, which may already answer.
2. Otherwise call memo_search(path, query) on the best collection's path ('.' searches
   everything).
3. Read the hit yourself: open the note (paths are under the library root the results name) at
   its line with your file tools, or memo_get(path:line-end). Hits are pointers; the note is
   the truth.
4. If a result warns that the notes are in another language than your question, ask again in
   theirs, or pass your translation as also=["..."]: memo fuses every phrasing into one ranking.
memo never writes notes: write them with your own file tools; the index follows by itself."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")  # later versions may add keys; keep them


class HitOut(_Open):
    collection: str
    path: str = Field(description="Note path relative to the library root.")
    abs_path: str = Field(description="Absolute path, for your file-reading tool.")
    line: int = Field(description="1-based line where the matching section's text starts.")
    end_line: int = Field(description="Last line of the cited range.")
    heading: str
    score: float
    text: str
    cite: str = Field(description="Hash of lines line..end_line; memo_get returns it again.")
    focus_line: int = Field(
        0, description="First line of the sentences that match best, within line..end_line."
    )
    focus_end_line: int = Field(0, description="Last line of those sentences.")


class FreshnessOut(_Open):
    collection: str
    caught_up: int = Field(description="Files re-indexed or removed by this call first.")
    current: bool = Field(description="The index matched the notes before this call.")
    last_write: float | None = Field(description="Unix time of the last index write.")


class SearchOut(_Open):
    query: str
    mode: str
    target: str
    took_ms: float
    confidence: Literal["high", "low", "none"] = Field(
        description="none: no good match in the searched notes; low: read before trusting."
    )
    collections: list[str]
    results: list[HitOut]
    freshness: list[FreshnessOut]
    warnings: list[str]
    budget: dict[str, int] | None = Field(
        None, description="With max_tokens: max_tokens, used, dropped, cut."
    )


class GetOut(_Open):
    path: str
    abs_path: str
    line: int
    end_line: int
    total_lines: int
    text: str
    cite: str = Field(description="Hash of the lines returned; compare with a hit's cite.")
    truncated: bool


class EvidenceOut(_Open):
    path: str = Field(description="Note path relative to the library root.")
    line: int
    heading: str
    text: str = Field(description="A short excerpt of the hit.")


class RouteHitOut(_Open):
    name: str
    path: str = Field(description="Pass this as memo_search's path.")
    description: str
    score: float
    evidence: list[EvidenceOut] = Field(description="The collection's best hits, best first.")


class RouteOut(_Open):
    query: str
    strategy: str
    collections: list[RouteHitOut]


class StatusOut(_Open):
    root: str
    collections: list[dict[str, Any]]
    errors: list[str]


class ReindexOut(_Open):
    collections: int
    new: int
    changed: int
    removed: int
    unchanged: int
    skipped: int
    seconds: float
    errors: list[str]


def _answer(
    text_of: Callable[..., str],
    produce: Callable[[], Any],
    limit: int | None,
    structured: bool,
) -> CallToolResult:
    """Run one tool: its text rendering (within `limit` characters), plus the structured data
    when the server was asked for it; or a tool error with the hint."""
    try:
        data = produce()
    except MemoError as e:
        raise ToolError(f"{e}\nhint: {e.hint}" if e.hint else str(e)) from e
    content: list[ContentBlock] = [TextContent(type="text", text=text_of(data, limit))]
    if structured:
        return CallToolResult(content=content, structured_content=data)
    return CallToolResult(content=content)


def build_mcp(service: Service, structured: bool | None = None) -> MCPServer:
    """memo's MCP server. Tools answer with text a model reads (render.py); `structured`
    (default: MEMO_MCP_STRUCTURED) adds the JSON result and each tool's output schema, for
    clients that read data rather than hand it to a model."""
    if structured is None:
        structured = service.settings.mcp_structured
    mcp = MCPServer(
        name="memo",
        version=__version__,
        instructions=INSTRUCTIONS,
        middleware=[_accept_aliases],
    )
    _add_tools(mcp, service, structured)
    if structured:
        _inline_output_schemas(mcp)
    _add_skill(mcp, service)
    return mcp


READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
# memo_reindex writes memo's index cache (full=true drops and rebuilds it), never a note
WRITES_CACHE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


@dataclass(frozen=True, slots=True)
class Tool:
    """An operation as an MCP tool: its name and method come from the request's Operation;
    what a model reads of it (title, description, the text rendering) is the tool's own."""

    request: type[_Request]
    title: str
    description: str
    text_of: Callable[[dict[str, Any]], str]
    output: type[BaseModel]

    @property
    def name(self) -> str:
        return self.request.OPERATION.tool

    @property
    def operation(self) -> str:
        """The Service method that answers it."""
        return self.request.OPERATION.name

    @property
    def annotations(self) -> ToolAnnotations:
        return WRITES_CACHE if self.request.OPERATION.writes else READ_ONLY


TOOLS = (
    Tool(
        RouteRequest,
        "Route a question to collections",
        "Find which collections of the notes library answer a question: memo searches them "
        "and ranks each by its best hit, shown with the collection (path:line, heading, an "
        "excerpt), which often answers already. Call this first when you don't know where "
        "to search; then memo_search with the returned `path`.",
        render.route_text,
        RouteOut,
    ),
    Tool(
        SearchRequest,
        "Search notes",
        "Hybrid (keyword + meaning) search in a collection, a folder or a note of the "
        "library. Returns hits as `path:line` with the section heading and text; read the "
        "note at that line with your own file tools for the full context. Use mode='lex' "
        "for exact names, numbers and codes. Edits made just before the call are indexed "
        "first, so results are never stale.",
        render.search_text,
        SearchOut,
    ),
    Tool(
        ReadRequest,
        "Read lines of a note",
        "Read a note, or `lines` lines of it from `line` (a search hit's path and line; "
        "`path:line` and `path:line-end` work as the path too). Returns the text and `cite`, "
        "the hash of those lines: if it differs from the hit's `cite`, the note changed "
        "after the search; don't quote the old hit text.",
        render.get_text,
        GetOut,
    ),
    Tool(
        StatusRequest,
        "Index status",
        "Per collection: files and chunks indexed, files changed since indexing, skipped "
        "files and why, last index time. Omit path for the whole library.",
        render.status_text,
        StatusOut,
    ),
    Tool(
        IndexRequest,
        "Re-index notes",
        "Bring the index of a path up to date now (full=true drops and rebuilds it). Rarely "
        "needed: search already catches up on changed files. Only memo's own index cache is "
        "written; notes are never modified.",
        render.reindex_text,
        ReindexOut,
    ),
)
ALIASES = {t.name: aliases(t.request) for t in TOOLS}  # per tool: alias -> parameter
BY_NAME = {t.name: t for t in TOOLS}


def _add_tools(mcp: MCPServer, service: Service, structured: bool) -> None:
    for tool in TOOLS:
        mcp.tool(
            name=tool.name,
            title=tool.title,
            description=tool.description,
            annotations=tool.annotations,
            structured_output=structured,
        )(_function(tool, getattr(service, tool.operation), structured))


ARGUMENTS = {t.name: model(t.request, f"{t.name}_arguments") for t in TOOLS}


def refusal(tool: str, arguments: dict[str, Any]) -> str | None:
    """Why the tool's parameters refuse these arguments, in sentences with the hint (None: they
    take them). Asked before the SDK's own check, the same schema, whose pydantic report (error
    types, input values, a URL) is no reading for a model."""
    try:
        ARGUMENTS[tool].model_validate(arguments)
    except ValidationError as e:
        said = [explain(err, ".".join(map(str, err["loc"])) or "arguments") for err in e.errors()]
        return "; ".join(said) + f"\nhint: {RequestError.hint}"
    return None


def _function(
    tool: Tool, call: Callable[[Any], Any], structured: bool
) -> Callable[..., CallToolResult]:
    """The tool as the SDK wants it: a function whose signature is the request's fields."""

    def run(**arguments: Any) -> CallToolResult:
        limit = limit_for(arguments.get("max_tokens"))
        return _answer(
            tool.text_of,
            lambda: call(tool.request.make(**arguments)).to_dict(),
            limit,
            structured,
        )

    run.__name__ = tool.name
    returns = Annotated[CallToolResult, tool.output] if structured else CallToolResult
    run.__signature__ = tool_signature(tool.request, returns)  # type: ignore[attr-defined]  # inspect reads it
    return run


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


def _inline(schema: Any, defs: dict[str, Any]) -> Any:
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _inline(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
        return {k: _inline(v, defs) for k, v in schema.items() if k != "$defs"}
    if isinstance(schema, list):
        return [_inline(v, defs) for v in schema]
    return schema


def _inline_output_schemas(mcp: MCPServer) -> None:
    """Publish output schemas without `$defs`/`$ref` (our models nest without recursion).

    Clients validate every structured result against the tool's output schema; the Python SDK's
    client (jsonschema) took ~16 ms per search result with references and ~4.5 ms inlined
    (measured in bench/server.py's setting), most of a tool call's overhead. The SDK has no
    public setter, so this reaches into its tool manager; tests check the published schema.
    """
    for tool in mcp._tool_manager.list_tools():
        meta = tool.fn_metadata
        if meta.output_schema and "$defs" in meta.output_schema:
            meta.output_schema = _inline(meta.output_schema, meta.output_schema["$defs"])


async def _accept_aliases(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
    """Rename argument names models commonly send (`q`, `limit`, `top_k`, `collection`), then
    refuse what the declaration refuses with its own sentence (`refusal`)."""
    params = ctx.params
    if ctx.method == "tools/call" and isinstance(params, Mapping):
        tool = BY_NAME.get(str(params.get("name")))
        names = ALIASES.get(str(params.get("name")), {})
        args = params.get("arguments")
        if names and isinstance(args, dict) and any(a in args for a in names):
            fixed = dict(args)
            for alias, canonical in names.items():
                if alias in fixed:
                    value = fixed.pop(alias)
                    fixed.setdefault(canonical, value)
            ctx = replace(ctx, params={**params, "arguments": fixed})
            args = fixed
        if tool is not None and isinstance(args, dict | None):
            said = refusal(tool.name, args or {})
            if said is not None:
                return CallToolResult(content=[TextContent(type="text", text=said)], is_error=True)
    return await call_next(ctx)
