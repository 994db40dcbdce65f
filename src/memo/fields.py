"""The fields the requests share (requests.py, note_requests.py): the bounds, and a field
declared once for all the requests that take it (a path, a query, a token budget, k, a date).

Pure standard library, like requests.py.
"""

from __future__ import annotations

from typing import Any

from . import words
from .params import DATE_FORM, DATE_HINT, DATE_PATTERN, group, param

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
MAX_PATHS = 20  # other locations one read takes beside its path
MAX_DATE_CHARS = 40


# ---------------------------------------------------------------------- shared fields
PATH_HELP = (
    "A collection path (from memo_route), a folder or note inside it, or any folder above "
    "collections, relative to the library root; '.' or '*' is the whole library."
)
PATH_ALIASES = ("collection", "scope", "folder", "target")
QUERY_HELP = "The question or keywords, in any language (Russian and English both work)."


def path_field(default: str = ".") -> Any:
    return param(
        default,
        kind="path",
        help=PATH_HELP,
        brief="A collection, folder or note; '.' is all.",
        high=MAX_PATH_CHARS,
        aliases=PATH_ALIASES,
        metavar="PATH",
    )


def query_field() -> Any:
    return param(
        kind="query",
        help=QUERY_HELP,
        brief="The question, in any language.",
        high=MAX_QUERY_CHARS,
        aliases=("q", "question", "text"),
        metavar="QUERY",
        hint="Send the question in words, e.g. query='how do I tag a VLAN on Linux?', or a "
        "few keywords.",
    )


def budget_field(what: str) -> Any:
    """`max_tokens`: what a model reads of the answer, at most (search, route, read)."""
    return param(
        None,
        kind="int",
        help=f"Fit {what} into this many tokens; over MCP the text a model reads stays within "
        "about 4 characters a token.",
        brief="The answer's token budget.",
        low=1,
        high=MAX_BUDGET,
        flag="--max-tokens",
    )


def k_field(default: int, high: int, help: str, brief: str = "") -> Any:
    return param(
        default,
        kind="int",
        help=help,
        brief=brief,
        low=1,
        high=high,
        aliases=("limit", "top_k", "n"),
        flag="--k",
        short="-k",
    )


def date_field(since: bool) -> Any:
    return param(
        None,
        kind="text",
        help=f"Only notes updated {'since' if since else 'until'}: YYYY-MM-DD, or 7d, 2w, 3m, "
        "1y ago.",
        brief=f"Only notes updated {'since' if since else 'until'}: YYYY-MM-DD or 7d, 2w, 3m, 1y.",
        high=MAX_DATE_CHARS,
        flag="--since" if since else "--until",
        pattern=DATE_PATTERN,
        form=DATE_FORM,
        hint=DATE_HINT,
    )


def words_field(brief: str | None = None) -> Any:
    """`words`: the agent's words (words.py), declared once for every request that takes
    them: `also`, `keywords` and `answer` to a client; `brief`, what the MCP tool list says
    of each (memo_search's own, else "as memo_search's": the same list holds both)."""
    return group(
        words.AgentWords(),
        also=words.also(MAX_QUERY_CHARS, brief or words.ALSO_BRIEF),
        keywords=words.keywords(brief or words.KEYWORDS_BRIEF),
        answer=words.answer(brief or words.ANSWER_BRIEF),
    )


def asked(checked: dict[str, Any], said: list[str]) -> None:
    """A question made ready in place: the query cut to its bound (said, with its length
    before), the words that repeat it dropped."""
    query = checked["query"]
    cut_from = len(query) if len(query) > MAX_QUERY_CHARS else 0
    if cut_from:
        checked["query"] = query[:MAX_QUERY_CHARS]
        said.insert(0, cut_warning(cut_from)[0])
    words.drop_repeats(checked)
    words.drop_unsearchable(checked, said)


def cut_warning(cut_from: int) -> list[str]:
    if not cut_from:
        return []
    return [
        f"the query was {cut_from} characters long; only its first {MAX_QUERY_CHARS} "
        "were searched (ask with the question or a few keywords)"
    ]
