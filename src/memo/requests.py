"""What a client may ask memo, with its bounds: defined once, used by every driver.

The CLI, the MCP tools, the HTTP API and the Python API all build one of these requests and
pass it on; `make()` checks types and bounds the same way for all of them and raises
RequestError (a MemoError with a hint). Transports with a schema (HTTP, MCP) publish the same
bounds from the constants below, and tests/test_requests.py checks they stay equal.

| bound | value | beyond it |
|---|---|---|
| hits per search (`k`) | 1..MAX_K = 50 | refused |
| collections per route (`k`, `route`) | 1..MAX_ROUTE_K = 50 | refused |
| query | MAX_QUERY_CHARS = 2,000 characters | cut there, with a warning in the result |
| path | MAX_PATH_CHARS = 4,096 characters | refused |
| token budget (`max_tokens`) | 1..MAX_BUDGET = 1,000,000 | refused |
| lines of a note (`lines`) | 1..MAX_LINES = 2,000 | refused |

The HTTP and MCP schemas publish the query bound as maxLength and refuse a longer one up front.
An empty query is valid for the Python API and the CLI (no hits, with a warning); the HTTP and
MCP schemas refuse it (`minLength` 1), since a network client sending one has a bug.

Pure standard library: the CLI imports this module on its fast path (delegating to a server)
without loading numpy, SQLite or the model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

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


class RequestError(MemoError):
    """A client sent arguments outside the documented bounds."""

    hint = (
        f"Check the arguments: query up to {MAX_QUERY_CHARS} characters, k 1-{MAX_K}, "
        f"mode {'|'.join(MODES)}, route 1-{MAX_ROUTE_K}."
    )


def _int(name: str, value: Any, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise RequestError(f"{name} must be an integer {span}, got {value}")
    return value


def _opt_int(name: str, value: Any, low: int, high: int | None = None) -> int | None:
    return None if value is None else _int(name, value, low, high)


def _path(value: Any, default: str = ".") -> str:
    if value is None:
        return default
    if not isinstance(value, str):
        raise RequestError("path must be a string, e.g. 'work/jira' or '.'")
    if len(value) > MAX_PATH_CHARS:
        raise RequestError(f"path is {len(value)} characters long; the limit is {MAX_PATH_CHARS}")
    return value.strip() or default


def _text(name: str, value: Any, limit: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise RequestError(f"{name} must be a string, got {type(value).__name__}")
    if len(value) > limit:
        raise RequestError(f"{name} is {len(value)} characters long; the limit is {limit}")
    return value


def _query(value: Any) -> tuple[str, int]:
    """(the query as searched, its original length when it had to be cut, else 0)."""
    if not isinstance(value, str):
        raise RequestError(f"query must be a string, got {type(value).__name__}")
    if len(value) > MAX_QUERY_CHARS:
        return value[:MAX_QUERY_CHARS], len(value)
    return value, 0


def _tags(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        value = [t for t in value.replace(",", " ").split() if t]
    if not isinstance(value, list | tuple) or not all(isinstance(t, str) for t in value):
        raise RequestError("tags must be a list of strings (or one comma-separated string)")
    return tuple(value)


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """`memo search`, `memo_search`, POST /search: where, what, and how."""

    path: str  # a note, a folder or collection, or '.'/'*' for the whole library
    query: str
    k: int = DEFAULT_K
    mode: str = "hybrid"
    route: int | None = None  # search only the N collections the router ranks best
    max_tokens: int | None = None  # fit the hits into this many tokens
    tags: tuple[str, ...] = ()  # only notes whose frontmatter has all of them
    since: str | None = None  # only notes updated since: YYYY-MM-DD or 7d / 2w / 3m / 1y
    until: str | None = None
    diverse: bool | None = None  # cap hits per note (default: on for k >= 5)
    cut_from: int = 0  # the query's length before it was cut to MAX_QUERY_CHARS (0: not cut)

    @classmethod
    def make(cls, path: Any = ".", query: Any = "", **options: Any) -> SearchRequest:
        """A checked request; RequestError names the first bad argument."""
        unknown = set(options) - _SEARCH_OPTIONS
        if unknown:
            raise RequestError(f"unknown argument {sorted(unknown)[0]!r}")
        mode = options.get("mode") or "hybrid"
        if mode not in MODES:
            raise RequestError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        diverse = options.get("diverse")
        if diverse is not None and not isinstance(diverse, bool):
            raise RequestError("diverse must be true or false")
        q, cut_from = _query(query)
        k = options.get("k")
        return cls(
            path=_path(path),
            query=q,
            k=DEFAULT_K if k is None else _int("k", k, 1, MAX_K),
            mode=mode,
            route=_opt_int("route", options.get("route"), 1, MAX_ROUTE_K),
            max_tokens=_opt_int("max_tokens", options.get("max_tokens"), 1, MAX_BUDGET),
            tags=_tags(options.get("tags")),
            since=_text("since", options.get("since"), 40),
            until=_text("until", options.get("until"), 40),
            diverse=diverse,
            cut_from=cut_from,
        )

    def warnings(self) -> list[str]:
        """What the request itself has to say to the reader of the result."""
        if not self.cut_from:
            return []
        return [
            f"the query was {self.cut_from} characters long; only its first {MAX_QUERY_CHARS} "
            "were searched (ask with the question or a few keywords)"
        ]

    def to_dict(self) -> dict[str, Any]:
        """The request as the HTTP API's POST /search body (the CLI's delegation)."""
        out = asdict(self)
        del out["cut_from"]
        out["tags"] = list(self.tags) or None
        return {k: v for k, v in out.items() if v is not None}


_SEARCH_OPTIONS = {
    "k",
    "mode",
    "route",
    "max_tokens",
    "tags",
    "since",
    "until",
    "diverse",
}


@dataclass(frozen=True, slots=True)
class RouteRequest:
    """`memo route`, `memo_route`, /route: which collections hold the answer."""

    query: str
    k: int = DEFAULT_ROUTE_K
    prefix: str | None = None  # only collections under this folder: 'work' or 'work/*'
    strategy: str = "auto"
    cut_from: int = 0

    @classmethod
    def make(
        cls, query: Any = "", k: Any = None, prefix: Any = None, strategy: Any = None
    ) -> RouteRequest:
        strategy = strategy or "auto"
        if strategy not in STRATEGIES:
            raise RequestError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
        if prefix is not None and not isinstance(prefix, str):
            raise RequestError("prefix must be a string such as 'work/' or 'work/jira'")
        if prefix and ("\x00" in prefix or len(prefix) > MAX_PATH_CHARS):
            raise RequestError("prefix must be a folder path, e.g. 'work/'")
        q, cut_from = _query(query)
        return cls(
            query=q,
            k=DEFAULT_ROUTE_K if k is None else _int("k", k, 1, MAX_ROUTE_K),
            prefix=prefix or None,
            strategy=strategy,
            cut_from=cut_from,
        )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        del out["cut_from"]
        return {k: v for k, v in out.items() if v is not None}


@dataclass(frozen=True, slots=True)
class ReadRequest:
    """`memo show`, `memo_get`, GET /note: lines of one note."""

    path: str
    line: int | None = None  # first line, 1-based (a hit's `line`)
    lines: int | None = None  # how many (default: 40 from `line`, else the whole note)

    @classmethod
    def make(cls, path: Any, line: Any = None, lines: Any = None) -> ReadRequest:
        return cls(
            _path(path, default=""),
            _opt_int("line", line, 1),
            _opt_int("lines", lines, 1, MAX_LINES),
        )


@dataclass(frozen=True, slots=True)
class StatusRequest:
    """`memo status`, `memo_status`, GET /status: the indexes at or below a path."""

    path: str = "."

    @classmethod
    def make(cls, path: Any = None) -> StatusRequest:
        return cls(_path(path))


@dataclass(frozen=True, slots=True)
class IndexRequest:
    """`memo index`, `memo_reindex`, POST /reindex: bring the indexes at or below a path up to
    date (`full`: drop and rebuild them)."""

    path: str = "."
    full: bool = False

    @classmethod
    def make(cls, path: Any = None, full: Any = False) -> IndexRequest:
        if not isinstance(full, bool):
            raise RequestError("full must be true or false")
        return cls(_path(path), full)
