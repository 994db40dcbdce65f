"""The MCP SDK's tools and results as memo makes them, for both sets of tools: memo's own
(mcp_tools.py) and the shapes hosts ask for (mcp_hosts.py). Both import this module, which
imports neither, so the two never import each other.

- a tool's arguments reach it as sent (`unchecked`): the request's `make` checks them once;
  a number, a flag or a list sent as JSON inside a string is read as meant (`as_meant`);
- its input schema is `lean` and its output schema inlined;
- a MemoError is a tool error carrying the message and its hint (`refused`).
"""

from __future__ import annotations

import json
from typing import Any

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


def lean(schema: dict[str, Any]) -> dict[str, Any]:
    """An input schema as short as it can be and say the same to a model: no `title` (the
    name again, "Max Tokens"), and an optional field without a value published as its type
    alone rather than `anyOf [T, null]` with `default: null` (left out, it is not given; a
    null sent is still read as not given). Every host shows the tool list every turn: this
    took memo's from 4,809 to 4,157 tokens (tools/list as JSON, the model's tokenizer)."""
    props = {}
    for name, prop in schema.get("properties", {}).items():
        prop = {k: v for k, v in prop.items() if k != "title"}
        kinds = prop.get("anyOf", [])
        if len(kinds) == 2 and {"type": "null"} in kinds and prop.get("default", 0) is None:
            (kind,) = [k for k in kinds if k != {"type": "null"}]
            prop = {k: v for k, v in prop.items() if k not in ("anyOf", "default")} | kind
        props[name] = prop
    return {k: v for k, v in schema.items() if k != "title"} | {"properties": props}


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
