"""A request's declaration (requests.py) as pydantic: the HTTP bodies and query models and the
MCP tools' parameters. Neither driver spells a field, a bound, a help text or an alias."""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, create_model

from ..requests import MAX_ALSO, REQUESTS, Param, RequestError, _Request, check, pattern_of


def annotation(p: Param) -> Any:
    """The Python type a schema publishes for one Param."""
    if p.kind == "int":
        base: Any = int
    elif p.kind == "bool":
        base = bool
    elif p.kind == "choice":
        base = Literal[p.choices]
    elif p.kind in ("tags", "phrasings"):
        base = list[str]
    else:
        base = str
    optional = p.default is None and not p.required
    return base | None if optional else base


def field(p: Param, *, alias: bool = True, with_default: bool = True) -> Any:
    """The pydantic Field of one Param: default, every bound `check` applies (the JSON Schema
    publishes them: a schema-valid request is never refused for its form), help, and (for HTTP)
    its aliases."""
    kw: dict[str, Any] = {"description": p.help}
    if with_default:
        kw["default"] = default(p)
    if p.kind == "int":
        kw.update(ge=p.low, le=p.high)
    elif p.kind in ("path", "location", "query", "text"):
        kw.update(max_length=p.high, min_length=p.schema_min_length)
        if (pattern := pattern_of(p)) is not None:
            kw["pattern"] = f"^(?:{pattern})$"
    elif p.kind == "phrasings":
        kw.update(max_length=MAX_ALSO)
    if alias and p.aliases:
        kw["validation_alias"] = AliasChoices(p.name, *p.aliases)
    return Field(**{k: v for k, v in kw.items() if v is not None or k == "default"})


def default(p: Param) -> Any:
    return ... if p.required else p.default if p.kind not in ("tags", "phrasings") else None


def model(request: type[_Request], name: str) -> type[BaseModel]:
    """The request as an HTTP body or query model: unknown names refused, aliases accepted."""
    fields = {}
    for p in request.PARAMS:
        fields[p.name] = (annotation(p), field(p))
    config = ConfigDict(extra="forbid", populate_by_name=True)
    return create_model(name, __config__=config, **fields)  # type: ignore[call-overload]  # fields built at run time


def tool_signature(request: type[_Request], returns: Any) -> inspect.Signature:
    """The request as an MCP tool's parameters (the SDK reads a function's signature); the
    aliases are renamed by the server's middleware, from the same declaration."""
    params = []
    for p in request.PARAMS:
        params.append(
            inspect.Parameter(
                p.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=inspect.Parameter.empty if p.required else default(p),
                annotation=Annotated[annotation(p), field(p, alias=False, with_default=False)],
            )
        )
    return inspect.Signature(params, return_annotation=returns)


def aliases(request: type[_Request]) -> dict[str, str]:
    """alias -> the field it names."""
    return {a: p.name for p in request.PARAMS for a in p.aliases}


# every field of every request, by name (a name means one thing in every request that has it)
PARAMS: dict[str, Param] = {p.name: p for r in REQUESTS.values() for p in r.PARAMS}


def explain(err: Any, where: str) -> str:
    """One pydantic error about an argument as a sentence: the declaration's own (`check`) when
    it refuses the value too, else pydantic's message with the argument's name."""
    if err["type"] == "string_too_short" and not str(err.get("input", "")).strip():
        ask = {"query": "ask with the question or a few keywords", "path": "give a note's path"}
        return f"{where} is empty: {ask.get(where, 'give it a value')}"
    if err["type"] == "extra_forbidden":
        return f"unknown argument {where!r}"
    if where in PARAMS:
        try:
            check(PARAMS[where], err.get("input"))
        except RequestError as refused:
            return str(refused)
    msg = str(err.get("msg", "not valid"))
    return f"{where}: {msg[:1].lower()}{msg[1:]}"
