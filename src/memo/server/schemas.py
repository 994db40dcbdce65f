"""What the servers publish: each request's declaration (requests.py) as pydantic, for the HTTP
bodies and query models and the MCP tools' parameters, and what each operation answers
(`OUTPUTS`), for the OpenAPI document and the MCP tools' output schemas. Neither driver spells
a field, a bound, a help text or an alias, and HTTP reads nothing of MCP's.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, create_model

from ..params import LISTS, WORDS, published
from ..requests import (
    REQUESTS,
    IndexRequest,
    Param,
    ReadRequest,
    RelatedRequest,
    RequestError,
    RouteRequest,
    SearchRequest,
    StatusRequest,
    WhyRequest,
    _Request,
    check,
)


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
    optional = p.default in (None, ()) and not p.required
    return base | None if optional else base


def _item(p: Param) -> Any:
    """One item of a list Param: its longest and its form (the agent's words, locations)."""
    if p.kind == "locations":
        return Annotated[str, Field(min_length=1, max_length=p.longest, pattern=published(p))]
    if p.kind not in WORDS:
        return str
    return Annotated[str, Field(max_length=p.longest, pattern=published(p))]


def field(p: Param, *, alias: bool = True, with_default: bool = True, brief: bool = False) -> Any:
    """The pydantic Field of one Param: default, every bound `check` applies (the JSON Schema
    publishes them: a schema-valid request is never refused for its form), help (`brief`: the
    MCP tool list's, read every turn), and (for HTTP) its aliases."""
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
    if alias and p.aliases:
        kw["validation_alias"] = AliasChoices(p.name, *p.aliases)
    return Field(**{k: v for k, v in kw.items() if v is not None or k == "default"})


def default(p: Param) -> Any:
    return ... if p.required else None if p.kind in LISTS else p.default


def model(request: type[_Request], name: str) -> type[BaseModel]:
    """The request as an HTTP body or query model: unknown names refused, aliases accepted."""
    fields = {}
    for p in request.PARAMS:
        fields[p.name] = (annotation(p), field(p))
    config = ConfigDict(extra="forbid", populate_by_name=True)
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
                annotation=Annotated[kind, field(p, alias=False, with_default=False, brief=True)],
            )
        )
    return inspect.Signature(params, return_annotation=returns)


# every field of every request, by name (a name means one thing in every request that has it)
PARAMS: dict[str, Param] = {p.name: p for r in REQUESTS.values() for p in r.PARAMS}


def explain(err: Any, where: str) -> str:
    """One pydantic error about an argument as a sentence: the declaration's own (`check`) when
    it refuses the value too, else pydantic's message with the argument's name."""
    if err["type"] == "extra_forbidden":
        return f"unknown argument {where!r}"
    name, _, index = where.partition(".")
    if name in PARAMS:
        p = PARAMS[name]
        try:
            check(
                p, [err.get("input")] if index.isdigit() and p.kind in LISTS else err.get("input")
            )
        except RequestError as refused:
            return str(refused).replace(f"{name}[0]", f"{name}[{index}]")
    msg = str(err.get("msg", "not valid"))
    return f"{where}: {msg[:1].lower()}{msg[1:]}"


# ---------------------------------------------------------------------- what each one answers
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


class ExcerptOut(_Open):
    path: str
    abs_path: str
    line: int
    end_line: int
    total_lines: int
    text: str
    cite: str = Field(description="Hash of the lines returned; compare with a hit's cite.")
    more_lines: int = Field(description="Lines of the note after end_line, not returned.")
    next_line: int | None = Field(
        description="The line to read next (end_line + 1), or null at the note's end."
    )


class GetOut(ExcerptOut):
    more: list[ExcerptOut] = Field(
        default_factory=list,
        description="With `paths`: each of them read, in order, within the one max_tokens "
        "(none of its lines when nothing was left: read it from next_line).",
    )


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
    languages: dict[str, float] = Field(
        default_factory=dict,
        description="The share of the collection's chunks in each language ('ru': 0.93): "
        "write phrasings and a likely answer in its main one.",
    )


class RouteOut(_Open):
    query: str
    strategy: str
    collections: list[RouteHitOut]


class LinkOut(_Open):
    path: str = Field(description="The note the link opens, relative to the library root.")
    line: int = Field(description="The line it opens at: its heading's or block's, else 1.")
    from_line: int = Field(description="The line of this note the (first such) link sits on.")
    kind: Literal["wikilink", "embed", "markdown", "property"]
    target: str = Field(description="The link's target as written.")
    heading: str = Field(description="The heading path or ^block it names ('' : the note).")
    by: str = Field(
        description="How it resolved: path, name, relative, alias (Obsidian resolves none "
        "by an alias), or self (a heading of this note)."
    )
    times: int = Field(description="Links of this note to that note and heading.")


class BacklinkOut(_Open):
    path: str = Field(description="A note linking to this one.")
    line: int = Field(description="The line of its first link here.")
    text: str = Field(description="That line (cut around the link when long).")
    kind: str
    heading: str = Field(description="The heading or ^block of this note it names.")
    times: int


class SimilarOut(_Open):
    path: str
    line: int = Field(description="Its section nearest this note.")
    heading: str
    score: float = Field(description="Cosine of the two notes' mean vectors.")


class UnresolvedOut(_Open):
    path: str = Field(description="This note.")
    line: int = Field(description="The line the link sits on.")
    target: str
    kind: str
    heading: str


class RelatedOut(_Open):
    path: str
    abs_path: str
    line: int | None
    section: list[int] | None = Field(description="With a line: the lines of its section.")
    links: list[LinkOut] = Field(description="The notes this note links to, in its order.")
    backlinks: list[BacklinkOut] = Field(description="The notes linking to it.")
    similar: list[SimilarOut] = Field(description="The notes nearest it in meaning.")
    unresolved: list[UnresolvedOut] = Field(description="Its links that open no note.")
    took_ms: float
    warnings: list[str]
    budget: dict[str, int] | None = Field(
        None, description="With max_tokens: max_tokens, used, dropped, cut."
    )


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


class WhyOut(_Open):
    path: str
    query: str
    within: str
    collection: str | None
    found: bool
    rank: int | None
    chunks: list[dict[str, Any]]
    above: list[dict[str, Any]]
    reasons: list[str]
    warnings: list[str]


# each request's answer, as OpenAPI and the MCP output schemas publish it
OUTPUTS: dict[type[_Request], type[BaseModel]] = {
    SearchRequest: SearchOut,
    RouteRequest: RouteOut,
    ReadRequest: GetOut,
    RelatedRequest: RelatedOut,
    StatusRequest: StatusOut,
    IndexRequest: ReindexOut,
    WhyRequest: WhyOut,
}
