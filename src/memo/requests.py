"""What a client may ask memo: the six requests, every field declared once, and who answers.

Each request (search, route, read, related, status, index) is a frozen dataclass whose every
client-settable field is declared once, with `param()` (params.py): its default, typed once,
kind, bounds, help text, the argument names models send instead (aliases), and how the CLI
spells it. Beside it, its `Operation`: what each driver calls it (the CLI command, the MCP
tool, the HTTP method and path, the web page), and `sent_to`, the one method of whoever
answers it (`Answers`: `Library`, the servers' `Service`) that it calls: a reader greps
`.search(` and finds every caller. Every driver is derived from them:

- `make()` checks any client's arguments (RequestError, a MemoError that says what to send);
- the CLI commands and options (cli/queries.py, cli/options.py), the HTTP endpoints, bodies and
  query models (server/routes.py, server/schemas.py), the MCP tools (server/mcp_tools.py) and
  the web pages and form bounds (server/web/pages.py) are built from the requests' `PARAMS`
  and `OPERATION`; tests/test_requests.py walks every field of every request through each.

| bound | value | beyond it |
|---|---|---|
| hits per search (`k`) | 1..MAX_K = 50 | refused |
| collections per route (`k`, `route`) | 1..MAX_ROUTE_K = 50 | refused |
| query | not blank; MAX_QUERY_CHARS = 2,000 characters | blank refused; longer cut, said |
| other phrasings (`also`) | MAX_ALSO = 3, each up to MAX_QUERY_CHARS | refused |
| keywords (`keywords`) | MAX_KEYWORDS = 8, each up to MAX_KEYWORD_CHARS = 100 | refused |
| a likely answer (`answer`) | MAX_ANSWER_CHARS = 1,000 characters | refused |
| path | MAX_PATH_CHARS = 4,096 characters | refused |
| token budget (`max_tokens`) | 1..MAX_BUDGET = 1,000,000 | refused |
| lines of a note (`lines`) | 1..MAX_LINES = 2,000 | refused |
| one folder or file name of a path | MAX_NAME_CHARS = 255 characters, no NUL | refused |
| dates (`since`, `until`) | `DATE_PATTERN`: YYYY-MM-DD (a real day), or 7d, 2w, 3m, 1y | refused |

Every bound `check` applies is published in the HTTP and MCP schemas (maximum, maxLength,
maxItems, pattern: `pattern_of`), so a schema-valid request is never refused for its form; the
query bound is published as maxLength (HTTP refuses a longer one up front). The agent's words
(`also`, `keywords`, `answer`) are checked and normalised in params.py; a phrasing or keyword
that says what the query or an earlier one says is dropped here, before any work.

Pure standard library: the CLI imports this module on its fast path (delegating to a server)
without loading numpy, SQLite or the model.
"""

from __future__ import annotations

from typing import Any, Self

from . import words
from .operations import Answer, Answers, Operation, _Request, declared
from .params import (
    DATE_FORM,
    DATE_HINT,
    DATE_PATTERN,
    LOCATION,
    MAX_NAME_CHARS,
    PATH_PATTERN,
    QUERY_PATTERN,
    TEXT_PATTERN,
    WORD_PATTERN,
    Param,
    RequestError,
    check,
    param,
    pattern_of,
)
from .words import MAX_ALSO, MAX_ANSWER_CHARS, MAX_KEYWORD_CHARS, MAX_KEYWORDS

__all__ = [  # what the drivers read here of the modules the requests are made with
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
    "WORD_PATTERN",
    "Answer",
    "Answers",
    "Operation",
    "Param",
    "RequestError",
    "check",
    "pattern_of",
]

MODES = ("hybrid", "lex", "vec")
# the route's answer by the library's size; `summary` is the summary router's top k (BM25 and
# embeddings over the collections' descriptions and summaries), once called `hybrid`
STRATEGIES = ("auto", "flat", "tree", "summary")
RENAMED_STRATEGIES = (("hybrid", "summary"),)
MAX_K = 50
DEFAULT_K = 8
MAX_ROUTE_K = 50
DEFAULT_ROUTE_K = 5
DEFAULT_RELATED_K = 8  # similar notes of `related`
MAX_QUERY_CHARS = 2_000  # the model reads 512 tokens (~2,000 characters); the rest is noise
MAX_PATH_CHARS = 4_096
MAX_BUDGET = 1_000_000
MAX_LINES = 2_000
MAX_DATE_CHARS = 40


# ---------------------------------------------------------------------- shared fields
PATH_HELP = (
    "A collection path (from memo_route), a folder or note inside it, or any folder above "
    "collections, relative to the library root; '.' or '*' is the whole library."
)
PATH_ALIASES = ("collection", "scope", "folder", "target")
QUERY_HELP = "The question or keywords, in any language (Russian and English both work)."


def _path(default: str = ".") -> Any:
    return param(
        default,
        kind="path",
        help=PATH_HELP,
        high=MAX_PATH_CHARS,
        aliases=PATH_ALIASES,
        metavar="PATH",
    )


def _query() -> Any:
    return param(
        kind="query",
        help=QUERY_HELP,
        high=MAX_QUERY_CHARS,
        aliases=("q", "question", "text"),
        metavar="QUERY",
        hint="Send the question in words, e.g. query='how do I tag a VLAN on Linux?', or a "
        "few keywords.",
    )


def _budget(what: str) -> Any:
    """`max_tokens`: what a model reads of the answer, at most (search, route, read)."""
    return param(
        None,
        kind="int",
        help=f"Fit {what} into this many tokens; over MCP the text a model reads stays within "
        "about 4 characters a token.",
        low=1,
        high=MAX_BUDGET,
        flag="--max-tokens",
    )


def _k(default: int, high: int, help: str) -> Any:
    return param(
        default,
        kind="int",
        help=help,
        low=1,
        high=high,
        aliases=("limit", "top_k", "n"),
        flag="--k",
        short="-k",
    )


def _date(since: bool) -> Any:
    return param(
        None,
        kind="text",
        help=f"Only notes updated {'since' if since else 'until'}: YYYY-MM-DD, or 7d, 2w, 3m, "
        "1y ago.",
        high=MAX_DATE_CHARS,
        flag="--since" if since else "--until",
        pattern=DATE_PATTERN,
        form=DATE_FORM,
        hint=DATE_HINT,
    )


def _asked(checked: dict[str, Any], said: list[str]) -> int:
    """A question made ready in place: the query cut to its bound (its length before, else 0,
    is returned and said), the words that repeat it dropped."""
    query = checked["query"]
    cut_from = len(query) if len(query) > MAX_QUERY_CHARS else 0
    if cut_from:
        checked["query"] = query[:MAX_QUERY_CHARS]
        said.insert(0, cut_warning(cut_from)[0])
    words.drop_repeats(checked)
    return cut_from


def cut_warning(cut_from: int) -> list[str]:
    if not cut_from:
        return []
    return [
        f"the query was {cut_from} characters long; only its first {MAX_QUERY_CHARS} "
        "were searched (ask with the question or a few keywords)"
    ]


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
class SearchRequest(_Request):
    """A search: where, what, and how."""

    path: str = _path()
    query: str = _query()
    k: int = _k(DEFAULT_K, MAX_K, "How many hits.")
    mode: str = param(
        "hybrid",
        kind="choice",
        help="hybrid fuses keyword and meaning search; lex and vec run one leg alone (lex for "
        "exact names, numbers and codes).",
        choices=MODES,
        flag="--mode",
    )
    route: int | None = param(
        None,
        kind="int",
        help="Search only the N collections the router ranks best for the query (within path).",
        low=1,
        high=MAX_ROUTE_K,
        flag="--route",
    )
    max_tokens: int | None = _budget(
        "the hits (the last one cut at a sentence border, the rest dropped)"
    )
    tags: tuple[str, ...] = param(
        (),
        kind="tags",
        help="Only notes whose frontmatter has all these tags (a,b).",
        flag="--tags",
    )
    since: str | None = _date(since=True)
    until: str | None = _date(since=False)
    diverse: bool | None = param(
        None,
        kind="bool",
        help="Cap hits per note while other notes match (default: on for k >= 5).",
        flag="--diverse",
    )
    also: tuple[str, ...] = words.also(
        MAX_QUERY_CHARS
    )  # other phrasings of the question, fused into one ranking
    keywords: tuple[str, ...] = words.keywords()  # exact terms: the lexical leg's
    answer: str | None = words.answer()  # a likely answer: the vector leg's
    cut_from: int = 0  # the query's length before it was cut to MAX_QUERY_CHARS (0: not cut)

    def sent_to(self, to: Answers) -> Answer:
        return to.search(self)

    @classmethod
    def _built(cls, checked: dict[str, Any], said: list[str]) -> Self:
        cut_from = _asked(checked, said)
        return cls(**checked, cut_from=cut_from, said=tuple(said))


@declared(
    Operation(
        "route",
        command="route",
        tool="memo_route",
        http=("POST /route", "GET /route"),
        summary="Rank the collections whose notes answer the question, each with its best hits.",
    )
)
class RouteRequest(_Request):
    """A route: which collections hold the answer."""

    query: str = _query()
    k: int = _k(DEFAULT_ROUTE_K, MAX_ROUTE_K, "How many collections (flat lists them all).")
    prefix: str | None = param(
        None,
        kind="text",
        help="Only collections under this folder: 'work' or 'work/*'.",
        high=MAX_PATH_CHARS,
        flag="--prefix",
    )
    strategy: str = param(
        "auto",
        kind="choice",
        help="auto picks by size: flat up to 50 collections (all of them), tree up to 5,000 "
        "(top k and the sub-folders), summary beyond (the summary router's top k; its old "
        "name hybrid is still read).",
        choices=STRATEGIES,
        renamed=RENAMED_STRATEGIES,
        flag="--strategy",
    )
    max_tokens: int | None = _budget(
        "the collections and their best hits (the ones that do not fit left out)"
    )
    also: tuple[str, ...] = words.also(MAX_QUERY_CHARS)
    keywords: tuple[str, ...] = words.keywords()
    answer: str | None = words.answer()
    cut_from: int = 0

    def sent_to(self, to: Answers) -> Answer:
        return to.route(self)

    @classmethod
    def _built(cls, checked: dict[str, Any], said: list[str]) -> Self:
        cut_from = _asked(checked, said)
        return cls(**checked, cut_from=cut_from, said=tuple(said))


@declared(
    Operation(
        "read",
        command="show",
        tool="memo_get",
        http=("GET /note",),
        summary="Lines of a note from `line` (a hit's path and line, or `path:line`), with "
        "their citation hash.",
        page="/read",
    )
)
class ReadRequest(_Request):
    """A read: lines of one note."""

    path: str = param(
        kind="location",
        help="A note's path as a hit gives it (relative to the library root, or absolute inside "
        "it); `path:line` and `path:line-end` are read as line and lines.",
        high=MAX_PATH_CHARS,
        aliases=("file",),
        metavar="PATH[:LINE]",
        hint="Give a note's path, e.g. a search hit's `path:line`.",
    )
    line: int | None = param(
        None,
        kind="int",
        help="First line, 1-based (a hit's `line`).",
        low=1,
        aliases=("start_line", "offset"),
        cli=False,
    )
    lines: int | None = param(
        None,
        kind="int",
        help="How many lines (default: 40 from `line`, else the whole note).",
        low=1,
        high=MAX_LINES,
        aliases=("n", "count"),  # `n`: the CLI's -n
        flag="--lines",
        short="-n",
    )
    max_tokens: int | None = _budget("the lines (the ones that do not fit left out)")

    def sent_to(self, to: Answers) -> Answer:
        return to.read(self)

    @classmethod
    def _built(cls, checked: dict[str, Any], said: list[str]) -> Self:
        path, line, end = _located(cls, checked)
        lines = checked["lines"]
        if lines is None and end is not None:
            lines = check(cls.param("lines"), end - line + 1)
        max_tokens = checked["max_tokens"]
        return cls(path=path, line=line, lines=lines, max_tokens=max_tokens, said=tuple(said))


def _located(cls: type[_Request], checked: dict[str, Any]) -> tuple[str, Any, int | None]:
    """A note's path, its line and the range's last line, from `path` (maybe `path:line` or
    `path:line-end`, every form memo prints) and `line`; RequestError when they disagree."""
    path, line = checked["path"], checked["line"]
    at = cls.param("path")
    if not path:
        raise at.refused("path is required: a note's path, e.g. from a search hit")
    m = LOCATION.match(path)
    if m is None:
        return path, line, None
    path, start = m["path"], int(m["line"])
    if line is not None and line != start:
        raise at.refused(f"line given twice: {path}:{start} and line={line}")
    end = int(m["end"]) if m["end"] else None
    if start < 1 or (end is not None and end < start):
        raise at.refused(f"{checked['path']} is not a line range of a note")
    return path, start, end


@declared(
    Operation(
        "related",
        command="related",
        tool="memo_related",
        http=("GET /related",),
        summary="A note's neighbours: the notes it links to, the notes linking to it (each "
        "with its line), the notes nearest it in meaning, and its links that open nothing; "
        "every item `path:line`.",
    )
)
class RelatedRequest(_Request):
    """A note's neighbours: its links, its backlinks, the notes nearest it in meaning."""

    path: str = param(
        kind="location",
        help="A note's path as a hit gives it (relative to the library root, or absolute "
        "inside it); `path:line` narrows to the section holding that line: its links, and "
        "the notes nearest that section in meaning.",
        high=MAX_PATH_CHARS,
        aliases=("file", "note"),
        metavar="PATH[:LINE]",
        hint="Give a note's path, e.g. a search hit's `path:line`.",
    )
    line: int | None = param(
        None,
        kind="int",
        help="A line of the note (a hit's `line`): its section's links, and the notes nearest "
        "that section.",
        low=1,
        aliases=("start_line",),
        cli=False,
    )
    k: int = _k(DEFAULT_RELATED_K, MAX_K, "How many similar notes.")
    max_tokens: int | None = _budget(
        "the lists (links, backlinks, similar, unresolved: the last items of each left out first)"
    )

    def sent_to(self, to: Answers) -> Answer:
        return to.related(self)

    @classmethod
    def _built(cls, checked: dict[str, Any], said: list[str]) -> Self:
        path, line, _ = _located(cls, checked)
        return cls(
            path=path, line=line, k=checked["k"], max_tokens=checked["max_tokens"], said=tuple(said)
        )


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

    path: str = _path()

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

    path: str = _path()
    full: bool = param(
        False, kind="bool", help="Drop the indexes and rebuild them from the notes.", flag="--full"
    )

    def sent_to(self, to: Answers) -> Answer:
        return to.index(self)


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
    )
}
