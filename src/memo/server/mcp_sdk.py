"""The MCP SDK's tools and results as memo makes them, for both sets of tools: memo's own
(mcp_tools.py) and the shapes hosts ask for (mcp_hosts.py). Both import this module, which
imports neither, so the two never import each other.

- a tool's arguments reach it as sent (`unchecked`): the request's `make` checks them once;
  a number, a flag or a list sent as JSON inside a string is read as meant (`as_meant`);
- its input schema is `lean` and its output schema inlined;
- a MemoError is a tool error carrying the message and its hint (`refused`);
- what a host may cache of the listings, and for how long (`CACHE_HINTS`).
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server import CacheHint
from mcp.server.mcpserver.tools import Tool as SdkTool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp_types import CallToolResult, ContentBlock, TextContent, ToolAnnotations

from ..errors import MemoError
from ..params import LISTS
from ..requests import _Request

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
# memo_reindex writes memo's index cache (full=true drops and rebuilds it), never a note
WRITES_CACHE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


# What a host may cache (the 2026-07-28 listings' `ttlMs` and `cacheScope`), set from what
# changes each answer. The tools, the prompt's listing, the resource template and the server's
# own description (discover) are fixed when the process starts and never change while it runs:
# a day fresh. Their scope is `private`: a host keeps them for the connection that asked, as
# it keeps any library's (the instructions may come to name the library's collections). The
# notes' listing and a note's text change whenever a note does, and memo sends no
# list_changed: always stale (0), private to the user they belong to.
PROCESS_LIFETIME_MS = 24 * 60 * 60 * 1000
FIXED = CacheHint(ttl_ms=PROCESS_LIFETIME_MS, scope="private")
WITH_THE_NOTES = CacheHint(ttl_ms=0, scope="private")
CACHE_HINTS: dict[Any, CacheHint] = {
    "tools/list": FIXED,
    "prompts/list": FIXED,
    "resources/templates/list": FIXED,
    "server/discover": FIXED,
    "resources/list": WITH_THE_NOTES,
    "resources/read": WITH_THE_NOTES,
}


def refused(e: MemoError) -> CallToolResult:
    """A MemoError as a tool error the model reads: the message, then the hint."""
    said = f"{e}\nhint: {e.hint}" if e.hint else str(e)
    content: list[ContentBlock] = [TextContent(type="text", text=said)]
    return CallToolResult(content=content, is_error=True)


def as_meant(request: type[_Request], arguments: dict[str, Any]) -> dict[str, Any]:
    """A model's arguments as it meant them: a number, a flag or a list sent as JSON inside a
    string ("5", "true", '["a", "b"]', as Claude Desktop sends lists), and a whole number sent
    as 5.0, read as that value; anything else as sent, for `make` to judge."""
    kinds = {p.name: p.kind for p in request.PARAMS}
    kinds |= {alias: kinds[name] for alias, name in request.aliases().items()}
    out = {}
    for key, value in arguments.items():
        kind = kinds.get(key, "")
        if isinstance(value, str) and kind in ("int", "bool", *LISTS):
            value = _json_of(kind, value)
        if kind == "int" and isinstance(value, float) and value.is_integer():
            value = int(value)
        out[key] = value
    return out


def _json_of(kind: str, text: str) -> Any:
    """`text` read as the JSON value of a Param of `kind`, when it is one; else `text`."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if kind == "int":
        fits = isinstance(value, int | float) and not isinstance(value, bool)
    else:
        fits = isinstance(value, bool if kind == "bool" else list)
    return value if fits else text


class _Unchecked(FuncMetadata):
    """The SDK's handling of a memo tool's arguments without its own check: they reach the
    tool as sent, for `make` to check once (its aliases, its sentences)."""

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        return dict(arguments_to_validate)


def unchecked(made: SdkTool) -> SdkTool:
    """A tool of the SDK's with memo's arguments unchecked (`_Unchecked`: `make` checks them),
    its input schema `lean` and its output schema inlined."""
    meta = made.fn_metadata
    output = meta.output_schema
    if output and "$defs" in output:
        output = _inline(output, output["$defs"])
    made.fn_metadata = _Unchecked.model_construct(**{**dict(meta), "output_schema": output})
    made.parameters = lean(made.parameters)
    return made


# what a model reads in the schema and has no use for: the name again (`title`), a string's
# form (`pattern`: a regular expression) and length (`maxLength`: thousands of characters, a
# path's 4,096), a number's range (`minimum` 1, `maximum` 50 hits or 1,000,000 tokens). `make`
# checks them all and says what to send; a list's length (`maxItems`: 3 phrasings) stays.
LEFT_OUT = ("title", "pattern", "maxLength", "minLength", "minimum", "maximum")


def lean(schema: dict[str, Any]) -> dict[str, Any]:
    """An input schema as short as it can be and say the same to a model, every field kept
    and described: no `title` (the name again, "Max Tokens"); an optional field without a
    value published as its type alone rather than `anyOf [T, null]` with `default: null` (left
    out, it is not given; a null sent is still read as not given); and no `pattern`.

    The patterns are the forms `check` applies (a query not blank, a path without NUL, a real
    day), as regular expressions a model cannot use: they took 1,600 of memo's 5,700 tokens,
    which every host sends the model every turn, and no MCP client checks them (the SDK does
    not: `_Unchecked`). `make` still does, and a model sent outside them gets the sentence
    that says what to send. The HTTP API publishes them (OpenAPI clients validate)."""
    props = {name: _lean_field(prop) for name, prop in schema.get("properties", {}).items()}
    return {k: v for k, v in schema.items() if k != "title"} | {"properties": props}


def _lean_field(prop: dict[str, Any]) -> dict[str, Any]:
    kinds = prop.get("anyOf", [])
    if len(kinds) == 2 and {"type": "null"} in kinds and prop.get("default", 0) is None:
        (kind,) = [k for k in kinds if k != {"type": "null"}]
        prop = {k: v for k, v in prop.items() if k not in ("anyOf", "default")} | kind
    prop = {k: v for k, v in prop.items() if k not in LEFT_OUT}
    if prop.get("default") == [] or prop.get("default") is False:  # what leaving it out means
        del prop["default"]
    if isinstance(prop.get("items"), dict):
        prop["items"] = _lean_field(prop["items"])
    return prop


def _inline(schema: Any, defs: dict[str, Any]) -> Any:
    """An output schema without `$defs`/`$ref` (our models nest without recursion).

    Clients validate every structured result against the tool's output schema; the Python
    SDK's client (jsonschema) took ~16 ms per search result with references and ~4.5 ms
    inlined (measured in bench/server.py's setting), most of a tool call's overhead."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _inline(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
        return {k: _inline(v, defs) for k, v in schema.items() if k != "$defs"}
    if isinstance(schema, list):
        return [_inline(v, defs) for v in schema]
    return schema
