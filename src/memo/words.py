"""The agent's words: what an agent adds to its question, declared once (`AgentWords`, a
request's `words`: fields.py `words_field`) for the requests that carry them (requests.py).

The strongest model in the loop is the agent's own; beside the question it may send `also` (up to
MAX_ALSO other phrasings in the notes' language, each searched like the query), `keywords` (up to
MAX_KEYWORDS names, codes and exact terms, for the lexical leg only) and `answer` (one short likely
answer, searched like a phrasing and embedded as a passage: HyDE). Each is checked and normalised
in params.py; `drop_repeats` drops a phrasing or keyword that says what the query says, so no word
costs a leg twice. The bounds are published in every schema. Why: docs/design.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .params import param, same

MAX_ALSO = 3  # extra phrasings of one question (each one costs both legs once more)
MAX_KEYWORDS = 8
MAX_KEYWORD_CHARS = 100
MAX_ANSWER_CHARS = 1_000  # 1-3 sentences; the model reads 512 tokens of it at most

# what a model reads of each field in the tool schemas, on every turn: short (the bounds are
# the schema's own maxItems and maxLength)
ALSO_HELP = (
    f"Up to {MAX_ALSO} other phrasings in the notes' language (a translation, the notes' own "
    "terms), each searched like the query."
)
KEYWORDS_HELP = (
    "Names, codes or exact terms the answer holds, matched by their words only (one string "
    "is split at commas)."
)
ANSWER_HELP = (
    "A likely answer, 1-3 sentences in the notes' language as a note would say it, searched "
    "like the query."
)


# their briefs in the MCP tool list (params.py `brief`): memo_search's say what each is; the
# other tools that take them say "as memo_search's" (the same list holds both)
ALSO_BRIEF = "Other phrasings in the notes' language: a translation, their own terms."
KEYWORDS_BRIEF = "Names, codes, exact terms the answer holds."
ANSWER_BRIEF = "A likely answer, 1-3 sentences in the notes' language."
AS_SEARCH = "As memo_search's."


@dataclass(frozen=True, slots=True)
class AgentWords:
    """The agent's words of a request (its `words`: fields.py `words_field`), each a field of
    its own to every driver."""

    also: tuple[str, ...] = ()  # other phrasings of the question, fused into one ranking
    keywords: tuple[str, ...] = ()  # exact terms: the lexical leg's
    answer: str | None = None  # a likely answer: the vector leg's


def also(longest: int, brief: str = ALSO_BRIEF) -> Any:
    """Other phrasings, each at most as long as a query (`longest`)."""
    return param(
        (),
        kind="phrasings",
        help=ALSO_HELP,
        brief=brief,
        high=MAX_ALSO,
        longest=longest,
        aliases=("phrasings", "alternatives"),
        flag="--also",
    )


def keywords(brief: str = KEYWORDS_BRIEF) -> Any:
    return param(
        (),
        kind="keywords",
        help=KEYWORDS_HELP,
        brief=brief,
        high=MAX_KEYWORDS,
        longest=MAX_KEYWORD_CHARS,
        aliases=("terms",),
        flag="--keywords",
    )


def answer(brief: str = ANSWER_BRIEF) -> Any:
    return param(
        None,
        kind="answer",
        help=ANSWER_HELP,
        brief=brief,
        longest=MAX_ANSWER_CHARS,
        aliases=("hypothetical_answer", "hyde"),
        flag="--answer",
    )


def drop_unsearchable(checked: dict[str, Any], said: list[str]) -> None:
    """A request's checked words, in place: those without a letter or digit (`%%`, `[[##`,
    `---`) left out, each said: the index holds words, not markdown syntax, so no leg could
    match them (3.5% of the word sets a helper wrote for the vault benchmark named some)."""
    for name in ("also", "keywords"):
        kept = tuple(w for w in checked[name] if _searchable(w))
        said += [
            f"{name} {w!r} has no letter or digit: the index holds words, not syntax, so it "
            "was left out"
            for w in checked[name]
            if not _searchable(w)
        ]
        checked[name] = kept
    if checked["answer"] is not None and not _searchable(checked["answer"]):
        said.append("answer has no letter or digit: it was left out")
        checked["answer"] = None


def _searchable(word: str) -> bool:
    return any(c.isalnum() for c in word)


def drop_repeats(checked: dict[str, Any]) -> None:
    """A request's checked fields, in place: the phrasings and keywords that say what its
    query says dropped (each kind is already free of its own repeats)."""
    asked = same(checked["query"])
    for name in ("also", "keywords"):
        checked[name] = tuple(w for w in checked[name] if same(w) != asked)
