"""What a client may ask memo: every request declared once, fields, bounds, help and aliases.

Each request (search, route, read, status, index) is a frozen dataclass with a tuple of
`Param`s, its declaration: name, kind, default, bounds, help text, the argument names models
send instead (aliases), and how the CLI spells it. Beside it, its `Operation`: the one name of
the operation (the `Library` and `Service` method) and what each driver calls it: the CLI
command, the MCP tool, the HTTP method and path, the web page. Every driver is derived from
them:

- `make()` checks any client's arguments against it (RequestError, a MemoError with a hint);
- the CLI commands and options (cli/queries.py, cli/options.py), the HTTP endpoints, bodies and
  query models (server/routes.py, server/schemas.py), the MCP tools (server/mcp_tools.py) and
  the web pages and form bounds (server/web/pages.py) are built from the Operations and
  Params; tests/test_requests.py walks every field of every request through each.

| bound | value | beyond it |
|---|---|---|
| hits per search (`k`) | 1..MAX_K = 50 | refused |
| collections per route (`k`, `route`) | 1..MAX_ROUTE_K = 50 | refused |
| query | MAX_QUERY_CHARS = 2,000 characters | cut there, with a warning in the result |
| path | MAX_PATH_CHARS = 4,096 characters | refused |
| token budget (`max_tokens`) | 1..MAX_BUDGET = 1,000,000 | refused |
| lines of a note (`lines`) | 1..MAX_LINES = 2,000 | refused |
| one folder or file name of a path | MAX_NAME_CHARS = 255 characters, no NUL | refused |
| dates (`since`, `until`) | `DATE_PATTERN`: YYYY-MM-DD (a real day), or 7d, 2w, 3m, 1y | refused |

Every bound `check` applies is published in the HTTP and MCP schemas (maximum, maxLength,
pattern: `pattern_of`), so a schema-valid request is never refused for its form; the query
bound is published as maxLength and a longer one is refused up front there.
An empty query is valid for the Python API and the CLI (no hits, with a warning); the HTTP and
MCP schemas refuse it (`minLength` 1), since a network client sending one has a bug.

Pure standard library: the CLI imports this module on its fast path (delegating to a server)
without loading numpy, SQLite or the model.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Self

from .errors import MemoError

MODES = ("hybrid", "lex", "vec")
STRATEGIES = ("auto", "flat", "tree", "hybrid")
MAX_K = 50
DEFAULT_K = 8
MAX_ROUTE_K = 50
DEFAULT_ROUTE_K = 5
MAX_QUERY_CHARS = 2_000  # the model reads 512 tokens (~2,000 characters); the rest is noise
MAX_PATH_CHARS = 4_096
MAX_BUDGET = 1_000_000
MAX_LINES = 2_000
MAX_DATE_CHARS = 40
MAX_NAME_CHARS = 255  # one folder or file name (NAME_MAX is 255 bytes on Linux and macOS)


class RequestError(MemoError):
    """A client sent arguments outside the documented bounds."""

    hint = (
        f"Check the arguments: query up to {MAX_QUERY_CHARS} characters, k 1-{MAX_K}, "
        f"mode {'|'.join(MODES)}, route 1-{MAX_ROUTE_K}."
    )


# ---------------------------------------------------------------------- the declaration
# kinds: path (a path in the library; '' -> default), location (a note path, maybe with
# :LINE or :LINE-END), query (cut at its bound, never refused), text, int, bool, choice, tags
KINDS = ("path", "location", "query", "text", "int", "bool", "choice", "tags", "phrasings")
MAX_ALSO = 3  # extra phrasings of one question (each one costs both legs once more)
# a note's path as memo prints it in a hit: path:line or path:line-end
LOCATION = re.compile(r"^(?P<path>.+?\.md):(?P<line>\d+)(?:-(?P<end>\d+))?$", re.IGNORECASE)

# The forms `check` accepts, as regular expressions both Python and JSON Schema (ECMA-262) read
# the same way: `check` full-matches them, the schemas publish them anchored (`pattern_of`).
_NAME = f"[^/\\x00]{{0,{MAX_NAME_CHARS}}}"
PATH_PATTERN = f"(?:{_NAME}/)*{_NAME}"  # no NUL, no name longer than MAX_NAME_CHARS
TEXT_PATTERN = "[^\\x00]*"  # no NUL
_DAY = (  # YYYY-MM-DD of a day that exists (years 1000-2999: the leap years spelled out)
    "[12][0-9]{3}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))"
    "|[12][0-9](?:0[48]|[2468][048]|[13579][26])-02-29|(?:1[26]|2[048])00-02-29"
)
# a date (a datetime is read as its date), or days, weeks, months (30 days), years ago; or ''
DATE_PATTERN = f"(?:(?:{_DAY})(?:[T ][^\\x00]*)?|[0-9]{{1,4}}[dwmyDWMY])?"
DATE_FORM = "a date, YYYY-MM-DD, or a time ago: 7d, 2w, 3m, 1y"


@dataclass(frozen=True, slots=True)
class Param:
    """One field of a request, as every driver shows it."""

    name: str
    kind: str
    help: str
    default: Any = None
    low: int | None = None  # ints: the least value
    high: int | None = None  # ints: the greatest value; strings: the longest
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # argument names models send instead (HTTP, MCP)
    required: bool = False
    flag: str | None = None  # the CLI option ('--k'); None: a positional argument
    short: str | None = None  # its one-letter form ('-k')
    metavar: str | None = None  # the CLI's name for a positional argument
    schema_min_length: int | None = None  # HTTP/MCP only: refuse shorter strings up front
    cli: bool = True  # shown on the CLI (ReadRequest.line is given there as PATH:LINE)
    pattern: str | None = None  # strings: the form they must have (default: `pattern_of`)
    form: str = ""  # that form in words, for the error

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind


def pattern_of(p: Param) -> str | None:
    """The regular expression a string Param must full-match (None: any string)."""
    if p.pattern is not None:
        return p.pattern
    if p.kind in ("path", "location"):
        return PATH_PATTERN
    if p.kind == "text":
        return TEXT_PATTERN
    return None


def _form(p: Param, value: str) -> None:
    """RequestError when a string is not of its Param's declared form."""
    pattern = pattern_of(p)
    if pattern is None or re.fullmatch(pattern, value):
        return
    if "\x00" in value:
        raise RequestError(f"{p.name} contains a NUL byte")
    if p.kind in ("path", "location"):
        raise RequestError(
            f"{p.name} has a folder or file name longer than {MAX_NAME_CHARS} characters"
        )
    raise RequestError(f"{p.name} must be {p.form or 'of the form ' + pattern}, got {value!r}")


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation, as every driver names it: declared once, beside its request."""

    name: str  # the operation: the Library and Service method, the key of REQUESTS
    command: str  # the CLI command (`memo show`)
    tool: str  # the MCP tool
    http: tuple[str, ...]  # "METHOD /path" of each endpoint; the CLI delegates to the first
    summary: str  # what it does, for the HTTP API's readers
    page: str | None = None  # the web page that makes this request
    writes: bool = False  # writes memo's index cache (never a note): not a read-only tool
    tag: str = "notes"  # what it is about, the notes or memo's "index" (OpenAPI's group)

    @property
    def endpoints(self) -> tuple[tuple[str, str], ...]:
        """(method, path) of each HTTP endpoint."""
        return tuple((m, path) for m, path in (e.split(" ", 1) for e in self.http))


PATH_HELP = (
    "A collection path (from memo_route), a folder or note inside it, or any folder above "
    "collections, relative to the library root; '.' or '*' is the whole library."
)
PATH_ALIASES = ("collection", "scope", "folder", "target")
QUERY = Param(
    "query",
    "query",
    "The question or keywords, in any language (Russian and English both work).",
    required=True,
    high=MAX_QUERY_CHARS,
    aliases=("q", "question", "text"),
    metavar="QUERY",
    schema_min_length=1,
)


def _budget(what: str) -> Param:
    """`max_tokens`: what a model reads of the answer, at most (search, route, read)."""
    return Param(
        "max_tokens",
        "int",
        f"Fit {what} into this many tokens; over MCP the text a model reads stays within "
        "about 4 characters a token.",
        low=1,
        high=MAX_BUDGET,
        flag="--max-tokens",
    )


ALSO = Param(
    "also",
    "phrasings",
    "Other phrasings of the same question (a translation into the notes' language, a synonym, "
    f"an abbreviation spelled out; at most {MAX_ALSO}): each runs through both legs and all are "
    "fused into one ranking.",
    aliases=("phrasings", "alternatives"),
    flag="--also",
)


def _path_param(default: str = ".", required: bool = False) -> Param:
    return Param(
        "path",
        "path",
        PATH_HELP,
        default=default,
        high=MAX_PATH_CHARS,
        aliases=PATH_ALIASES,
        required=required,
        metavar="PATH",
    )


class _Request:
    """What every request shares: checked construction from a client's arguments."""

    PARAMS: ClassVar[tuple[Param, ...]]
    OPERATION: ClassVar[Operation]  # what each driver calls it
    INTERNAL: ClassVar[tuple[str, ...]] = ()  # dataclass fields no client sets

    @classmethod
    def param(cls, name: str) -> Param:
        return next(p for p in cls.PARAMS if p.name == name)

    @classmethod
    def make(cls, *args: Any, **kwargs: Any) -> Self:
        """A checked request from positional arguments (in declaration order) and keywords;
        RequestError names the first bad argument."""
        names = [p.name for p in cls.PARAMS]
        if len(args) > len(names):
            raise RequestError(f"too many arguments ({len(args)})")
        values = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key not in names:
                raise RequestError(f"unknown argument {key!r}")
            if key in values:
                raise RequestError(f"{key} given twice")
            values[key] = value
        checked = {p.name: check(p, values.get(p.name)) for p in cls.PARAMS}
        return cls._built(checked)

    @classmethod
    def _built(cls, checked: dict[str, Any]) -> Self:
        return cls(**checked)

    def to_dict(self) -> dict[str, Any]:
        """The request as the HTTP API reads it (a body or query; the CLI's delegation)."""
        out = asdict(self)  # type: ignore[call-overload]  # every request is a dataclass; _Request is not
        for name in self.INTERNAL:
            out.pop(name, None)
        out = {k: (list(v) or None) if isinstance(v, tuple) else v for k, v in out.items()}
        return {k: v for k, v in out.items() if v is not None}


def check(p: Param, value: Any) -> Any:
    """One argument checked against its declaration (None: the default)."""
    if value is None or (value == "" and p.kind in ("path", "choice", "tags", "phrasings")):
        if p.required and p.kind not in ("query", "location"):
            raise RequestError(f"{p.name} is required")
        value = p.default
        if value is None:
            if p.kind in ("query", "location"):
                raise RequestError(f"{p.name} is required")
            return () if p.kind in ("tags", "phrasings") else None
    kind = p.kind
    if kind in ("path", "location"):
        if not isinstance(value, str):
            raise RequestError(f"{p.name} must be a string, e.g. 'work/jira' or '.'")
        if p.high is not None and len(value) > p.high:
            raise RequestError(f"{p.name} is {len(value)} characters long; the limit is {p.high}")
        _form(p, value)
        value = value.strip()
        if kind == "path" and (m := LOCATION.match(value)):  # a hit's path:line: that note
            value = m["path"]
        return value or (p.default or "")
    if kind == "query":
        if not isinstance(value, str):
            raise RequestError(f"{p.name} must be a string, got {type(value).__name__}")
        return value  # cut to its bound by the request, which says so in the result
    if kind == "text":
        if not isinstance(value, str):
            raise RequestError(f"{p.name} must be a string, got {type(value).__name__}")
        if p.high is not None and len(value) > p.high:
            raise RequestError(f"{p.name} is {len(value)} characters long; the limit is {p.high}")
        _form(p, value)
        return value or None
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise RequestError(f"{p.name} must be an integer, got {value!r}")
        low, high = p.low, p.high
        if (low is not None and value < low) or (high is not None and value > high):
            span = f"from {low} to {high}" if high is not None else f"of at least {low}"
            raise RequestError(f"{p.name} must be an integer {span}, got {value}")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise RequestError(f"{p.name} must be true or false")
        return value
    if kind == "choice":
        if value not in p.choices:
            raise RequestError(f"{p.name} must be one of {', '.join(p.choices)}, got {value!r}")
        return value
    if kind == "phrasings":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple) or not all(isinstance(t, str) for t in value):
            raise RequestError(f"{p.name} must be a list of strings: other phrasings")
        kept = tuple(dict.fromkeys(" ".join(t.split()) for t in value if t.strip()))
        if len(kept) > MAX_ALSO:
            raise RequestError(f"{p.name} holds {len(kept)} phrasings; at most {MAX_ALSO}")
        if any(len(t) > MAX_QUERY_CHARS for t in kept):
            raise RequestError(
                f"a phrasing in {p.name} is longer than {MAX_QUERY_CHARS} characters"
            )
        return kept
    # tags
    if isinstance(value, str):
        value = [t for t in value.replace(",", " ").split() if t]
    if not isinstance(value, list | tuple) or not all(isinstance(t, str) for t in value):
        raise RequestError(f"{p.name} must be a list of strings (or one comma-separated string)")
    return tuple(value)


def _cut(query: str) -> tuple[str, int]:
    """(the query as searched, its original length when it had to be cut, else 0)."""
    if len(query) > MAX_QUERY_CHARS:
        return query[:MAX_QUERY_CHARS], len(query)
    return query, 0


def cut_warning(cut_from: int) -> list[str]:
    if not cut_from:
        return []
    return [
        f"the query was {cut_from} characters long; only its first {MAX_QUERY_CHARS} "
        "were searched (ask with the question or a few keywords)"
    ]


# ---------------------------------------------------------------------- the requests
@dataclass(frozen=True, slots=True)
class SearchRequest(_Request):
    """A search: where, what, and how."""

    OPERATION: ClassVar[Operation] = Operation(
        "search",
        command="search",
        tool="memo_search",
        http=("POST /search", "GET /search"),
        summary="Hybrid search in a collection, folder or note; hits carry `path` and `line`.",
        page="/",
    )

    path: str
    query: str
    k: int = DEFAULT_K
    mode: str = "hybrid"
    route: int | None = None
    max_tokens: int | None = None
    tags: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    diverse: bool | None = None
    also: tuple[str, ...] = ()  # other phrasings of the question, fused into one ranking
    cut_from: int = 0  # the query's length before it was cut to MAX_QUERY_CHARS (0: not cut)

    INTERNAL: ClassVar[tuple[str, ...]] = ("cut_from",)
    PARAMS: ClassVar[tuple[Param, ...]] = (
        _path_param(),
        QUERY,
        Param(
            "k",
            "int",
            "How many hits.",
            default=DEFAULT_K,
            low=1,
            high=MAX_K,
            aliases=("limit", "top_k", "n"),
            flag="--k",
            short="-k",
        ),
        Param(
            "mode",
            "choice",
            "hybrid fuses keyword and meaning search; lex and vec run one leg alone (lex for "
            "exact names, numbers and codes).",
            default="hybrid",
            choices=MODES,
            flag="--mode",
        ),
        Param(
            "route",
            "int",
            "Search only the N collections the router ranks best for the query (within path).",
            low=1,
            high=MAX_ROUTE_K,
            flag="--route",
        ),
        _budget("the hits (the last one cut at a sentence border, the rest dropped)"),
        Param(
            "tags",
            "tags",
            "Only notes whose frontmatter has all these tags (a,b).",
            flag="--tags",
        ),
        Param(
            "since",
            "text",
            "Only notes updated since: YYYY-MM-DD, or 7d, 2w, 3m, 1y ago.",
            high=MAX_DATE_CHARS,
            flag="--since",
            pattern=DATE_PATTERN,
            form=DATE_FORM,
        ),
        Param(
            "until",
            "text",
            "Only notes updated until: YYYY-MM-DD, or 7d, 2w, 3m, 1y ago.",
            high=MAX_DATE_CHARS,
            flag="--until",
            pattern=DATE_PATTERN,
            form=DATE_FORM,
        ),
        Param(
            "diverse",
            "bool",
            "Cap hits per note while other notes match (default: on for k >= 5).",
            flag="--diverse",
        ),
        ALSO,
    )

    @classmethod
    def _built(cls, checked: dict[str, Any]) -> SearchRequest:
        checked["query"], checked["cut_from"] = _cut(checked["query"])
        return cls(**checked)

    def warnings(self) -> list[str]:
        """What the request itself has to say to the reader of the result."""
        return cut_warning(self.cut_from)


@dataclass(frozen=True, slots=True)
class RouteRequest(_Request):
    """A route: which collections hold the answer."""

    OPERATION: ClassVar[Operation] = Operation(
        "route",
        command="route",
        tool="memo_route",
        http=("POST /route", "GET /route"),
        summary="Rank the collections whose notes answer the question, each with its best hits.",
    )

    query: str
    k: int = DEFAULT_ROUTE_K
    prefix: str | None = None
    strategy: str = "auto"
    max_tokens: int | None = None
    also: tuple[str, ...] = ()
    cut_from: int = 0

    INTERNAL: ClassVar[tuple[str, ...]] = ("cut_from",)
    PARAMS: ClassVar[tuple[Param, ...]] = (
        QUERY,
        Param(
            "k",
            "int",
            "How many collections (the flat strategy lists them all).",
            default=DEFAULT_ROUTE_K,
            low=1,
            high=MAX_ROUTE_K,
            aliases=("limit", "top_k", "n"),
            flag="--k",
            short="-k",
        ),
        Param(
            "prefix",
            "text",
            "Only collections under this folder: 'work' or 'work/*'.",
            high=MAX_PATH_CHARS,
            flag="--prefix",
        ),
        Param(
            "strategy",
            "choice",
            "auto picks by size: flat up to 50 collections, tree up to 5,000, hybrid beyond.",
            default="auto",
            choices=STRATEGIES,
            flag="--strategy",
        ),
        _budget("the collections and their best hits (the ones that do not fit left out)"),
        ALSO,
    )

    @classmethod
    def _built(cls, checked: dict[str, Any]) -> RouteRequest:
        checked["query"], checked["cut_from"] = _cut(checked["query"])
        return cls(**checked)

    def warnings(self) -> list[str]:
        return cut_warning(self.cut_from)


@dataclass(frozen=True, slots=True)
class ReadRequest(_Request):
    """A read: lines of one note."""

    OPERATION: ClassVar[Operation] = Operation(
        "read",
        command="show",
        tool="memo_get",
        http=("GET /note",),
        summary="Lines of a note from `line` (a hit's path and line, or `path:line`), with "
        "their citation hash.",
        page="/read",
    )

    path: str
    line: int | None = None
    lines: int | None = None
    max_tokens: int | None = None

    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param(
            "path",
            "location",
            "A note's path as a hit gives it (relative to the library root, or absolute inside "
            "it); `path:line` and `path:line-end` are read as line and lines.",
            high=MAX_PATH_CHARS,
            aliases=("file",),
            required=True,
            metavar="PATH[:LINE]",
            schema_min_length=1,
        ),
        Param(
            "line",
            "int",
            "First line, 1-based (a hit's `line`).",
            low=1,
            aliases=("start_line", "offset"),
            cli=False,
        ),
        Param(
            "lines",
            "int",
            "How many lines (default: 40 from `line`, else the whole note).",
            low=1,
            high=MAX_LINES,
            aliases=("n", "count"),  # `n`: the CLI's -n
            flag="--lines",
            short="-n",
        ),
        _budget("the lines (the ones that do not fit left out)"),
    )

    @classmethod
    def _built(cls, checked: dict[str, Any]) -> ReadRequest:
        path, line, lines = checked["path"], checked["line"], checked["lines"]
        if not path:
            raise RequestError("path is required: a note's path, e.g. from a search hit")
        m = LOCATION.match(path)
        if m is not None:  # every form memo prints is read back: path:line, path:line-end
            path, start = m["path"], int(m["line"])
            if line is not None and line != start:
                raise RequestError(f"line given twice: {path}:{start} and line={line}")
            end = int(m["end"]) if m["end"] else None
            if start < 1 or (end is not None and end < start):
                raise RequestError(f"{checked['path']} is not a line range of a note")
            line = start
            if lines is None and end is not None:
                lines = check(cls.param("lines"), end - start + 1)
        return cls(path, line, lines, checked["max_tokens"])


@dataclass(frozen=True, slots=True)
class StatusRequest(_Request):
    """A status: the indexes at or below a path."""

    OPERATION: ClassVar[Operation] = Operation(
        "status",
        command="status",
        tool="memo_status",
        http=("GET /status",),
        summary="Per collection: files, chunks, staleness, skipped files and why.",
        page="/library",
        tag="index",
    )

    path: str = "."

    PARAMS: ClassVar[tuple[Param, ...]] = (_path_param(),)


@dataclass(frozen=True, slots=True)
class IndexRequest(_Request):
    """An index: bring the indexes at or below a path up to date (`full`: drop and rebuild
    them)."""

    OPERATION: ClassVar[Operation] = Operation(
        "index",
        command="index",
        tool="memo_reindex",
        http=("POST /reindex",),
        summary="Bring a path's index up to date now (full=true rebuilds it). Notes are never "
        "written.",
        writes=True,
        tag="index",
    )

    path: str = "."
    full: bool = False

    PARAMS: ClassVar[tuple[Param, ...]] = (
        _path_param(),
        Param(
            "full",
            "bool",
            "Drop the indexes and rebuild them from the notes.",
            default=False,
            flag="--full",
        ),
    )


# operation name -> its request: every driver's table is read off this one
REQUESTS: dict[str, type[_Request]] = {
    r.OPERATION.name: r
    for r in (SearchRequest, RouteRequest, ReadRequest, StatusRequest, IndexRequest)
}
