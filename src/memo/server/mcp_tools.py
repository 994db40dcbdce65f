"""memo as an MCP server (official `mcp` SDK, v2 `MCPServer`): five read-only tools.

Every tool returns both a structured result (validated against a published output schema) and a
text rendering that leads with `path:line`. Failures the agent can fix come back as tool errors
(`isError`) carrying the message and a hint, never as a crash of the session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Annotated, Any, Literal

from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from .. import __version__
from .. import requests as rq
from ..errors import MemoError
from ..requests import IndexRequest, ReadRequest, RouteRequest, SearchRequest, StatusRequest
from ..skill import skill_text
from . import render
from .service import Service

INSTRUCTIONS = """\
memo searches the user's library of markdown notes (folders of notes, each topic folder a
"collection" described by its _meta.yaml). To answer from the notes:
1. If you don't know which collection holds the answer, call memo_route(query) first: each
   collection comes with its best hits, which may already answer.
2. Otherwise call memo_search(path, query) on the best collection's path ('.' searches
   everything).
3. Read the hit yourself: open `abs_path` (or <root>/`path`) at `line` with your file tools,
   and read only that part. Hits are pointers; the note is the truth.
memo never writes notes: write them with your own file tools; the index follows by itself."""

# Names models often send instead of ours, per tool: alias -> parameter.
ALIASES: dict[str, dict[str, str]] = {
    "memo_search": {
        "q": "query",
        "question": "query",
        "text": "query",
        "limit": "k",
        "top_k": "k",
        "n": "k",
        "collection": "path",
        "scope": "path",
        "folder": "path",
        "target": "path",
    },
    "memo_route": {"q": "query", "question": "query", "limit": "k", "top_k": "k", "n": "k"},
    "memo_get": {"file": "path", "start_line": "line", "offset": "line", "count": "lines"},
    "memo_status": {"collection": "path", "folder": "path", "target": "path"},
    "memo_reindex": {"collection": "path", "folder": "path", "target": "path"},
}


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


def _answer(text_of: Callable[[dict[str, Any]], str], produce: Callable[[], Any]) -> CallToolResult:
    """Run one tool: structured data plus its text rendering, or a tool error with the hint."""
    try:
        data = produce()
    except MemoError as e:
        raise ToolError(f"{e}\nhint: {e.hint}" if e.hint else str(e)) from e
    return CallToolResult(
        content=[TextContent(type="text", text=text_of(data))], structured_content=data
    )


Path_ = Annotated[
    str,
    Field(
        description="A collection path from memo_route, a sub-folder or note inside it, or '.' "
        "for the whole library; relative to the library root.",
        max_length=rq.MAX_PATH_CHARS,
    ),
]
Query = Annotated[
    str,
    Field(
        description="The question or keywords, in any language (Russian and English both work).",
        min_length=1,
        max_length=rq.MAX_QUERY_CHARS,
    ),
]


def build_mcp(service: Service) -> MCPServer:
    mcp = MCPServer(
        name="memo",
        version=__version__,
        instructions=INSTRUCTIONS,
        middleware=[_accept_aliases],
    )
    _add_finding(mcp, service)
    _add_reading(mcp, service)
    _inline_output_schemas(mcp)
    _add_skill(mcp, service)
    return mcp


READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def _add_finding(mcp: MCPServer, service: Service) -> None:
    """memo_route and memo_search."""
    read_only = READ_ONLY

    @mcp.tool(
        title="Route a question to collections",
        annotations=read_only,
        description=(
            "Find which collections of the notes library answer a question: memo searches them "
            "and ranks each by its best hit, shown with the collection (path:line, heading, an "
            "excerpt), which often answers already. Call this first when you don't know where "
            "to search; then memo_search with the returned `path`."
        ),
    )
    def memo_route(
        query: Query,
        k: Annotated[
            int, Field(ge=1, le=rq.MAX_ROUTE_K, description="How many collections.")
        ] = rq.DEFAULT_ROUTE_K,
        prefix: Annotated[
            str | None, Field(description="Only collections under this path, e.g. 'work/'.")
        ] = None,
        strategy: Annotated[
            Literal["auto", "flat", "tree", "hybrid"],
            Field(description="auto picks by size: flat up to 50 collections, tree, hybrid."),
        ] = "auto",
    ) -> Annotated[CallToolResult, RouteOut]:
        return _answer(
            render.route_text,
            lambda: service.route(
                RouteRequest.make(query, k=k, prefix=prefix, strategy=strategy)
            ).to_dict(),
        )

    @mcp.tool(
        title="Search notes",
        annotations=read_only,
        description=(
            "Hybrid (keyword + meaning) search in a collection, a folder or a note of the "
            "library. Returns hits as `path:line` with the section heading and text; read the "
            "note at that line with your own file tools for the full context. Use mode='lex' "
            "for exact names, numbers and codes. Edits made just before the call are indexed "
            "first, so results are never stale."
        ),
    )
    def memo_search(
        path: Path_,
        query: Query,
        k: Annotated[int, Field(ge=1, le=rq.MAX_K, description="How many hits.")] = rq.DEFAULT_K,
        mode: Annotated[
            Literal["hybrid", "lex", "vec"],
            Field(description="hybrid fuses keyword and meaning; lex or vec run one alone."),
        ] = "hybrid",
        max_tokens: Annotated[
            int | None,
            Field(ge=1, le=rq.MAX_BUDGET, description="Fit the hits into this many tokens."),
        ] = None,
        tags: Annotated[
            list[str] | None, Field(description="Only notes whose frontmatter has all these tags.")
        ] = None,
        since: Annotated[
            str | None,
            Field(description="Only notes updated since YYYY-MM-DD, or 7d / 2w / 3m ago."),
        ] = None,
        until: Annotated[str | None, Field(description="Only notes updated until.")] = None,
        diverse: Annotated[
            bool | None,
            Field(description="Cap hits per note while others match (default: on for k >= 5)."),
        ] = None,
        route: Annotated[
            int | None,
            Field(ge=1, le=rq.MAX_ROUTE_K, description="Search only the top N routed collections."),
        ] = None,
    ) -> Annotated[CallToolResult, SearchOut]:
        options = dict(k=k, mode=mode, route=route, max_tokens=max_tokens, tags=tags)
        options.update(since=since, until=until, diverse=diverse)
        return _answer(
            render.search_text,
            lambda: service.search(SearchRequest.make(path, query, **options)).to_dict(),
        )


def _add_reading(mcp: MCPServer, service: Service) -> None:
    """memo_get, memo_status and memo_reindex."""
    read_only = READ_ONLY

    @mcp.tool(
        title="Read lines of a note",
        annotations=read_only,
        description=(
            "Read a note, or `lines` lines of it from `line` (a search hit's path and line). "
            "Returns the text and `cite`, the hash of those lines: if it differs from the hit's "
            "`cite`, the note changed after the search; don't quote the old hit text."
        ),
    )
    def memo_get(
        path: Annotated[
            str, Field(description="A note path from a hit.", max_length=rq.MAX_PATH_CHARS)
        ],
        line: Annotated[int | None, Field(ge=1, description="First line (1-based).")] = None,
        lines: Annotated[
            int | None, Field(ge=1, le=rq.MAX_LINES, description="How many lines (default 40).")
        ] = None,
    ) -> Annotated[CallToolResult, GetOut]:
        return _answer(
            render.get_text, lambda: service.get(ReadRequest.make(path, line, lines)).to_dict()
        )

    @mcp.tool(
        title="Index status",
        annotations=read_only,
        description=(
            "Per collection: files and chunks indexed, files changed since indexing, skipped "
            "files and why, last index time. Omit path for the whole library."
        ),
    )
    def memo_status(path: Path_ = ".") -> Annotated[CallToolResult, StatusOut]:
        return _answer(
            render.status_text, lambda: service.status(StatusRequest.make(path)).to_dict()
        )

    @mcp.tool(
        title="Re-index notes",
        annotations=read_only,
        description=(
            "Bring the index of a path up to date now (full=true drops and rebuilds it). Rarely "
            "needed: search already catches up on changed files. Only memo's own index cache is "
            "written; notes are never modified."
        ),
    )
    def memo_reindex(
        path: Path_,
        full: Annotated[bool, Field(description="Drop the index and rebuild it.")] = False,
    ) -> Annotated[CallToolResult, ReindexOut]:
        return _answer(
            render.reindex_text, lambda: service.reindex(IndexRequest.make(path, full)).to_dict()
        )


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
    """Rename argument names models commonly send (`q`, `limit`, `top_k`, `collection`)."""
    params = ctx.params
    if ctx.method == "tools/call" and isinstance(params, Mapping):
        names = ALIASES.get(str(params.get("name")), {})
        args = params.get("arguments")
        if names and isinstance(args, dict) and any(a in args for a in names):
            fixed = dict(args)
            for alias, canonical in names.items():
                if alias in fixed:
                    value = fixed.pop(alias)
                    fixed.setdefault(canonical, value)
            ctx = replace(ctx, params={**params, "arguments": fixed})
    return await call_next(ctx)
