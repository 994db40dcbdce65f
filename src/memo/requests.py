"""What a client may ask memo: the seven requests, every field declared once, and who answers.

Each request (search, route, why, status, index here; read and related in note_requests.py; the
fields they share in fields.py) is a frozen dataclass whose client-settable fields are declared
once with `param()` (params.py), beside its `Operation`: what each driver calls it, and `sent_to`,
the one method of whoever answers it (`Answers`). `make()` checks any client's arguments,
`make_exact()` the HTTP API's as its schemas state them: the one check of each (RequestError).
The CLI, HTTP, MCP and web drivers are built from `PARAMS` and `OPERATION`; every bound is
published in their schemas. The bounds, one table: docs/design.md, "requests.py".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Self

from .fields import (
    DEFAULT_K,
    DEFAULT_RELATED_K,
    DEFAULT_ROUTE_K,
    MAX_BUDGET,
    MAX_DATE_CHARS,
    MAX_K,
    MAX_LINES,
    MAX_PATH_CHARS,
    MAX_PATHS,
    MAX_QUERY_CHARS,
    MAX_ROUTE_K,
    MODES,
    PATH_ALIASES,
    PATH_HELP,
    QUERY_HELP,
    RENAMED_STRATEGIES,
    STRATEGIES,
    asked,
    budget_field,
    cut_warning,
    date_field,
    k_field,
    path_field,
    query_field,
    words_field,
)
from .note_requests import NoteAnswers, ReadRequest, RelatedRequest, located
from .operations import Answer, Operation, _Request, declared
from .params import (
    DATE_FORM,
    DATE_HINT,
    DATE_PATTERN,
    LOCATION,
    MAX_NAME_CHARS,
    PATH_PATTERN,
    QUERY_PATTERN,
    TEXT_PATTERN,
    URI_SCHEME,
    WORD_PATTERN,
    Param,
    RequestError,
    check,
    note_uri,
    param,
    pattern_of,
    uri_location,
)
from .words import (
    AS_SEARCH,
    MAX_ALSO,
    MAX_ANSWER_CHARS,
    MAX_KEYWORD_CHARS,
    MAX_KEYWORDS,
    AgentWords,
)

__all__ = [  # what the drivers read here of the modules the requests are made with
    "MODES",
    "STRATEGIES",
    "RENAMED_STRATEGIES",
    "MAX_K",
    "DEFAULT_K",
    "MAX_ROUTE_K",
    "DEFAULT_ROUTE_K",
    "DEFAULT_RELATED_K",
    "MAX_QUERY_CHARS",
    "MAX_PATH_CHARS",
    "MAX_BUDGET",
    "MAX_LINES",
    "MAX_PATHS",
    "MAX_DATE_CHARS",
    "PATH_HELP",
    "PATH_ALIASES",
    "QUERY_HELP",
    "cut_warning",
    "ReadRequest",
    "RelatedRequest",
    "DATE_FORM",
    "DATE_HINT",
    "DATE_PATTERN",
    "LOCATION",
    "MAX_ALSO",
    "MAX_ANSWER_CHARS",
    "MAX_KEYWORDS",
    "MAX_KEYWORD_CHARS",
    "MAX_NAME_CHARS",
    "PATH_PATTERN",
    "QUERY_PATTERN",
    "TEXT_PATTERN",
    "URI_SCHEME",
    "WORD_PATTERN",
    "Answer",
    "Answers",
    "Operation",
    "Param",
    "RequestError",
    "check",
    "note_uri",
    "pattern_of",
    "uri_location",
]


class Answers(NoteAnswers, Protocol):
    """Whoever answers requests, one method per operation: `Library`, the servers' `Service`.
    Declared here, beside the requests it names (operations.py names none: no import circle)."""

    def search(self, req: SearchRequest, /) -> Answer: ...
    def route(self, req: RouteRequest, /) -> Answer: ...
    def status(self, req: StatusRequest, /) -> Answer: ...
    def index(self, req: IndexRequest, /) -> Answer: ...
    def why(self, req: WhyRequest, /) -> Answer: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class _Question(_Request):
    """A request that asks a question: before it is built, its query is cut to its bound and
    the words that repeat it are dropped, each said to its reader (`asked`)."""

    @classmethod
    def _built(cls, checked: dict[str, Any], said: list[str]) -> Self:
        asked(checked, said)
        return cls._of(checked, said=tuple(said))


# ---------------------------------------------------------------------- the requests
@declared(
    Operation(
        "search",
        command="search",
        tool="memo_search",
        http=("POST /search", "GET /search"),
        summary="Hybrid search in a collection, folder or note; hits carry `path` and `line`.",
        page="/",
    )
)
class SearchRequest(_Question):
    """A search: where, what, and how."""

    path: str = path_field()
    query: str = query_field()
    k: int = k_field(DEFAULT_K, MAX_K, "How many hits.")
    mode: str = param(
        "hybrid",
        kind="choice",
        help="hybrid fuses keyword and meaning search; lex and vec run one leg alone (lex for "
        "exact names, numbers and codes).",
        brief="hybrid, or one leg: lex (exact names, codes) or vec.",
        choices=MODES,
        flag="--mode",
    )
    route: int | None = param(
        None,
        kind="int",
        help="Search only the N collections the router ranks best for the query (within path).",
        brief="Only the router's N best collections.",
        low=1,
        high=MAX_ROUTE_K,
        flag="--route",
    )
    max_tokens: int | None = budget_field(
        "the hits (the last one cut at a sentence border, the rest dropped)"
    )
    tags: tuple[str, ...] = param(
        (),
        kind="tags",
        help="Only notes whose frontmatter has all these tags (a,b).",
        brief="Only notes with all these tags.",
        flag="--tags",
    )
    since: str | None = date_field(since=True)
    until: str | None = date_field(since=False)
    diverse: bool | None = param(
        None,
        kind="bool",
        help="Cap hits per note while other notes match (default: on for k >= 5).",
        brief="Cap hits per note (default: on for k >= 5).",
        flag="--diverse",
    )
    words: AgentWords = words_field()  # also, keywords, answer: the agent's own (words.py)
    explain: bool = param(
        False,
        kind="bool",
        help="Give each hit an `explain`: each leg's rank and score per phrasing, which of "
        "the words won it, the sentence window that scored, its note's share, what diversity "
        "did.",
        brief="Say why each hit ranks.",
        flag="--explain",
    )

    def sent_to(self, to: Answers) -> Answer:
        return to.search(self)


@declared(
    Operation(
        "route",
        command="route",
        tool="memo_route",
        http=("POST /route", "GET /route"),
        summary="Rank the collections whose notes answer the question, each with its best hits.",
    )
)
class RouteRequest(_Question):
    """A route: which collections hold the answer."""

    query: str = query_field()
    k: int = k_field(
        DEFAULT_ROUTE_K, MAX_ROUTE_K, "How many collections (flat lists them all).", "How many."
    )
    prefix: str | None = param(
        None,
        kind="text",
        help="Only collections under this folder: 'work' or 'work/*'.",
        brief="Only collections under this folder.",
        high=MAX_PATH_CHARS,
        flag="--prefix",
    )
    strategy: str = param(
        "auto",
        kind="choice",
        help="auto picks by size: flat up to 50 collections (all of them), tree up to 5,000 "
        "(top k and the sub-folders), summary beyond (the summary router's top k; its old "
        "name hybrid is still read).",
        brief="auto: by the library's size.",
        choices=STRATEGIES,
        renamed=RENAMED_STRATEGIES,
        flag="--strategy",
    )
    max_tokens: int | None = budget_field(
        "the collections and their best hits (the ones that do not fit left out)"
    )
    words: AgentWords = words_field(AS_SEARCH)

    def sent_to(self, to: Answers) -> Answer:
        return to.route(self)


@declared(
    Operation(
        "status",
        command="status",
        tool="memo_status",
        http=("GET /status",),
        summary="Per collection: files, chunks, staleness, skipped files and why.",
        page="/library",
        tag="index",
    )
)
class StatusRequest(_Request):
    """A status: the indexes at or below a path."""

    path: str = path_field()

    def sent_to(self, to: Answers) -> Answer:
        return to.status(self)


@declared(
    Operation(
        "index",
        command="index",
        tool="memo_reindex",
        http=("POST /reindex",),
        summary="Bring a path's index up to date now (full=true rebuilds it). Notes are never "
        "written.",
        writes=True,
        tag="index",
    )
)
class IndexRequest(_Request):
    """An index: bring the indexes at or below a path up to date (`full`: drop and rebuild
    them)."""

    path: str = path_field()
    full: bool = param(
        False, kind="bool", help="Drop the indexes and rebuild them from the notes.", flag="--full"
    )

    def sent_to(self, to: Answers) -> Answer:
        return to.index(self)


@declared(
    Operation(
        "why",
        command="why",
        tool="memo_why",
        http=("POST /why", "GET /why"),
        summary="Where a note ranks for a question in each leg and what stood above it, or why "
        "it is not found (left out, not indexed, not routed...).",
    )
)
class WhyRequest(_Question):
    """Why a note ranks where it does for a question, or is not found."""

    path: str = param(
        kind="location",
        help="The note (relative to the library root, or `path:line` as a hit gives it).",
        brief="The note, as a hit gives it.",
        high=MAX_PATH_CHARS,
        aliases=("note", "file"),
        metavar="NOTE",
        hint="Give a note's path, e.g. a search hit's `path:line`.",
    )
    query: str = query_field()
    within: str = param(
        ".",
        kind="path",
        help="The path searched (as memo_search's `path`): '.' is the whole library.",
        brief="As memo_search's path.",
        high=MAX_PATH_CHARS,
        aliases=("scope", "collection", "folder"),
        flag="--within",
    )
    route: int | None = param(
        None,
        kind="int",
        help="As memo_search's `route`: whether the router would choose the note's collection.",
        brief="As memo_search's.",
        low=1,
        high=MAX_ROUTE_K,
        flag="--route",
    )
    words: AgentWords = words_field(AS_SEARCH)

    def sent_to(self, to: Answers) -> Answer:
        return to.why(self)

    @classmethod
    def _built(cls, checked: dict[str, Any], said: list[str]) -> Self:
        checked["path"], _, _ = located(cls.param("path"), checked["path"], None)
        # named: a bare super() fails in a slots dataclass (the class is made anew)
        return super(WhyRequest, cls)._built(checked, said)  # noqa: UP008


# operation name -> its request: every driver's table is read off this one
REQUESTS: dict[str, type[_Request]] = {
    r.OPERATION.name: r
    for r in (
        SearchRequest,
        RouteRequest,
        ReadRequest,
        RelatedRequest,
        StatusRequest,
        IndexRequest,
        WhyRequest,
    )
}
