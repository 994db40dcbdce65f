"""What the servers publish: each request's declaration (requests.py) as pydantic, for the HTTP
bodies and query models and the MCP tools' parameters, and what each operation answers
(`OUTPUTS`: its result's fields as the core declares them, memo/outputs.py), for the OpenAPI
document and the MCP tools' output schemas. Neither driver spells a field, a bound, a help text
or an alias, and HTTP reads nothing of MCP's.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
from functools import reduce
from types import UnionType
from typing import Annotated, Any, Literal, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..library import IndexDone, StatusReport
from ..library.related import RelatedResult
from ..library.why import WhyResult
from ..outputs import Published, default_of, doc_of
from ..params import LISTS, WORDS, published
from ..requests import (
    IndexRequest,
    Param,
    ReadRequest,
    RelatedRequest,
    RouteRequest,
    SearchRequest,
    StatusRequest,
    WhyRequest,
    _Request,
)
from ..router.route import RouteResult
from ..search.excerpt import Excerpt
from ..search.results import SearchResult


# ---------------------------------------------------------------------- what a client sends
def annotation(p: Param) -> Any:
    """The Python type a schema publishes for one Param."""
    if p.kind == "int":
        base: Any = int
    elif p.kind == "bool":
        base = bool
    elif p.kind == "choice":
        base = Literal[p.accepted]
    elif p.kind in LISTS:
        base = list[_item(p)]  # type: ignore[misc]  # an item type built from the declaration
    else:
        base = str
    return base | None if p.nullable else base


def _item(p: Param) -> Any:
    """One item of a list Param: its longest and its form (the agent's words, locations)."""
    if p.kind == "locations":
        return Annotated[str, Field(min_length=1, max_length=p.longest, pattern=published(p))]
    if p.kind not in WORDS:
        return str
    return Annotated[str, Field(max_length=p.longest, pattern=published(p))]


def field(p: Param, *, with_default: bool = True, brief: bool = False) -> Any:
    """The pydantic Field of one Param: default, every bound `check` applies (the JSON Schema
    publishes them: a schema-valid request is never refused for its form), help (`brief`: the
    MCP tool list's, read every turn). The aliases are `make`'s to read, never published."""
    kw: dict[str, Any] = {"description": p.tool_help if brief else p.help}
    if with_default:
        kw["default"] = default(p)
    if p.kind == "int":
        kw.update(ge=p.low, le=p.high)
    elif p.kind in LISTS:
        kw.update(max_length=p.high)
    else:
        high = p.high if p.kind not in WORDS else p.longest
        kw.update(max_length=high, min_length=1 if p.kind == "location" else None)
        kw["pattern"] = published(p)
    return Field(**{k: v for k, v in kw.items() if v is not None or k == "default"})


def default(p: Param) -> Any:
    return ... if p.required else None if p.kind in LISTS else p.default


def model(request: type[_Request], name: str) -> type[BaseModel]:
    """The request as OpenAPI publishes an HTTP body or query model: unknown names refused."""
    fields = {}
    for p in request.PARAMS:
        fields[p.name] = (annotation(p), field(p))
    config = ConfigDict(extra="forbid")
    return create_model(name, __config__=config, **fields)  # type: ignore[call-overload]  # fields built at run time


def tool_signature(request: type[_Request], returns: Any) -> inspect.Signature:
    """The request as an MCP tool's parameters (the SDK publishes a function's signature);
    the aliases are `make`'s to read, from the same declaration."""
    params = []
    for p in request.PARAMS:
        kind, given = annotation(p), inspect.Parameter.empty if p.required else default(p)
        if p.kind in LISTS:  # [] rather than null: the schema a model reads every turn, shorter
            kind, given = list[_item(p)], []  # type: ignore[misc]  # built from the declaration
        elif p.renamed:  # an old name is still read, never offered
            kind = Literal[p.choices]
        params.append(
            inspect.Parameter(
                p.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=given,
                annotation=Annotated[kind, field(p, with_default=False, brief=True)],
            )
        )
    return inspect.Signature(params, return_annotation=returns)


# ---------------------------------------------------------------------- what each one answers
# each request's answer: the result the core declares, its fields described there (`doc()`)
RESULTS: dict[type[_Request], type[Published]] = {
    SearchRequest: SearchResult,
    RouteRequest: RouteResult,
    ReadRequest: Excerpt,
    RelatedRequest: RelatedResult,
    StatusRequest: StatusReport,
    IndexRequest: IndexDone,
    WhyRequest: WhyResult,
}


def output(result: type[Published], nested: bool = False) -> type[BaseModel]:
    """A result as OpenAPI and the MCP output schemas publish it, read off its fields (memo/
    outputs.py): each by its JSON name, type and description; one the JSON leaves out when
    empty is optional; keys a later version adds are allowed. A result holding results of its
    own kind (a read's `more`) holds them `nested`: without that field."""
    if (result, nested) in _MODELS:
        return _MODELS[result, nested]
    hints = get_type_hints(result)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(result):
        if nested and result in _results_in(hints[f.name]):
            continue
        how = doc_of(f)
        fields[how.name or f.name] = (
            _published(hints[f.name], result),
            Field(... if how.omit is None else default_of(f), description=how.text or None),
        )
    name = f"{result.__name__}Nested" if nested else result.__name__
    config = ConfigDict(extra="allow")  # later versions may add keys; keep them
    made = create_model(name, __config__=config, **fields)
    _MODELS[result, nested] = made
    return made


_MODELS: dict[tuple[type[Published], bool], type[BaseModel]] = {}  # each made once: one name


def _published(kind: Any, owner: type) -> Any:
    """A field's type as published: each result in it as its model (`owner`'s own, nested)."""
    if isinstance(kind, type) and issubclass(kind, Published):
        return output(kind, nested=kind is owner)
    args = get_args(kind)
    if not args or get_origin(kind) is Literal:
        return kind
    if get_origin(kind) is tuple and args[-1] is Ellipsis:
        return list[_published(args[0], owner)]  # type: ignore[misc]  # built from the field
    mapped = tuple(_published(a, owner) for a in args)
    if isinstance(kind, UnionType):
        return reduce(operator.or_, mapped)
    return get_origin(kind)[mapped]


def _results_in(kind: Any) -> set[type]:
    if isinstance(kind, type) and issubclass(kind, Published):
        return {kind}
    return {r for a in get_args(kind) for r in _results_in(a)}


# each request's answer, as OpenAPI and the MCP output schemas publish it
OUTPUTS: dict[type[_Request], type[BaseModel]] = {r: output(a) for r, a in RESULTS.items()}
