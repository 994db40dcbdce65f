"""One field of a request: declared once with `param()`, read back as a `Param`, checked by
`check`.

`param()` is `dataclasses.field` with the declaration (kind, bounds, help, aliases, CLI spelling)
in its metadata, so the default is typed once, as the dataclass's own; `params_of` reads every
declared field back as a `Param`, what the drivers publish and `check` applies. The CLI and the
MCP tools are read leniently, the HTTP API `exact`ly, as the published schemas state each field
(`lenient` names what differs), its refusals ArgumentError. What each kind takes and gives, and
how the agent's words are read: docs/design.md, "requests.py and params.py".
Pure standard library: the CLI imports this on its fast path.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Callable
from dataclasses import MISSING, dataclass
from typing import Any
from urllib.parse import quote, unquote

from .errors import MemoError
from .printable import readings


class RequestError(MemoError):
    """A client sent arguments outside the documented bounds."""

    hint = "Check the arguments against the request's declaration (`--help`, /docs)."


class ArgumentError(RequestError):
    """One argument outside its declaration: a name no field has, a required one missing, a
    value of another type, beyond its bounds or not of its form (what a published schema
    refuses; over HTTP an `invalid_request`)."""


KINDS = (
    *("path", "location", "locations", "query", "text", "int", "bool", "choice", "tags"),
    *("phrasings", "keywords", "answer"),
)
WORDS = ("phrasings", "keywords", "answer")  # the agent's words: normalised, deduplicated
LISTS = ("tags", "phrasings", "keywords", "locations")  # sent as a list (or one string)
BLANK_IS_DEFAULT = ("path", "choice", *LISTS, "answer")  # '' for these: not given
BLANK_IS_PATH = ("path",)  # ... as the schemas publish them: '' is a path (the default)
META = "memo"  # the key of the declaration in a field's metadata
GROUP = "memo.group"  # ... of a field's members, declared each with its own (`group`)

# The forms `check` accepts, as regular expressions Python and JSON Schema (ECMA-262) read the
# same way: `check` full-matches them and the schemas publish them anchored (`published`), but
# for the SEARCHED kinds, whose pattern need only occur.
MAX_NAME_CHARS = 255  # one folder or file name (NAME_MAX is 255 bytes on Linux and macOS)
_NAME = f"[^/\\x00]{{0,{MAX_NAME_CHARS}}}"
PATH_PATTERN = f"(?:{_NAME}/)*{_NAME}"  # no NUL, no name longer than MAX_NAME_CHARS
TEXT_PATTERN = "[^\\x00]*"  # no NUL
# Whitespace as Python's str.isspace and ECMA-262's \s count it together, spelled out: `\S`
# alone differs (Python's takes U+001C-U+001F and U+0085 for spaces, ECMA's U+FEFF), so a
# client of the published schema sent "\u0085" as a query and memo refused it as empty
SPACES = (
    "\\t\\n\\x0b\\x0c\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029"
    "\\u202f\\u205f\\u3000\\ufeff"
)
QUERY_PATTERN = f"[^{SPACES}]"  # something besides spaces
WORD_PATTERN = QUERY_PATTERN  # a word is refused only when blank
SEARCHED = ("query", *WORDS)  # their pattern need only occur: published unanchored, shorter
_DAY = (  # YYYY-MM-DD of a day that exists (years 1000-2999: the leap years spelled out)
    "[12][0-9]{3}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))"
    "|[12][0-9](?:0[48]|[2468][048]|[13579][26])-02-29|(?:1[26]|2[048])00-02-29"
)
# a date (a datetime is read as its date), or days, weeks, months (30 days), years ago; or ''
DATE_PATTERN = f"(?:(?:{_DAY})(?:[T ][^\\x00]*)?|[0-9]{{1,4}}[dwmyDWMY])?"
# a note's path as memo prints it in a hit: path:line or path:line-end
LOCATION = re.compile(
    r"^(?P<path>.+?\.md):(?P<line>\d+)(?:-(?P<end>\d+))?$", re.IGNORECASE | re.DOTALL
)
# what an MCP hit adds after its place, `path:38-49 (best 38-42)`: the lines that answer best
_BEST = re.compile(r"\s+\(best \d+(?:-\d+)?\)$")
# ... and as a URI (its MCP resource, the `search` tool's urls): memo:// and the path
URI_SCHEME = "memo://"


def location(text: str) -> re.Match[str] | None:
    """`text` read as `path:line` or `path:line-end` (LOCATION), in any form memo prints one:
    plain, shell-quoted (`'My notes/A b.md':4`), escaped (printable.readings), or an MCP hit's
    place with its `(best …)`; None when it is no such location."""
    for spelled in readings(_BEST.sub("", text)):
        if m := LOCATION.match(spelled):
            return m
    return None


def note_uri(path: str) -> str:
    """A note's URI: `memo://` and its path, percent-encoded (a space, `#`, `%`, Cyrillic)."""
    return URI_SCHEME + quote(path, safe="/")


def uri_location(text: str) -> str | None:
    """The note path a note's URI names; None when `text` is no such URI."""
    return unquote(text[len(URI_SCHEME) :]) if text.startswith(URI_SCHEME) else None


DATE_FORM = "a date, YYYY-MM-DD, or a time ago: 7d, 2w, 3m, 1y"
DATE_HINT = (
    "Write a date as YYYY-MM-DD (2024-05-01) or a time ago: 1d (since yesterday), 7d, 2w, "
    "3m (months), 1y."
)


@dataclass(frozen=True, slots=True)
class Param:
    """One field of a request, as every driver shows it (read off the field: `params_of`)."""

    name: str
    kind: str
    help: str
    default: Any = None
    required: bool = False  # the field has no default: a client must send it
    low: int | None = None  # ints: the least value
    high: int | None = None  # ints: the greatest value; strings: the longest; lists: most items
    longest: int | None = None  # the agent's words, locations: the longest (an item, the answer)
    choices: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()  # choices: (old name, new name), still taken
    aliases: tuple[str, ...] = ()  # argument names models send instead (HTTP, MCP)
    flag: str | None = None  # the CLI option ('--k'); None: a positional argument
    short: str | None = None  # its one-letter form ('-k')
    metavar: str | None = None  # the CLI's name for a positional argument
    cli: bool = True  # shown on the CLI (ReadRequest.line is given there as PATH:LINE)
    pattern: str | None = None  # strings: the form they must have (default: `pattern_of`)
    form: str = ""  # that form in words, for the error
    hint: str = ""  # what to send instead, when refused (default: the help)
    # what the MCP tool list says of it (default: the help): every host sends that list to the
    # model on every turn, so it says only what a model needs to fill the field in
    brief: str = ""

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind

    def refused(self, message: str, error: type[RequestError] = ArgumentError) -> RequestError:
        """The error for a value of this field: the message, and what to send."""
        return error(message, self.hint or f"{self.name}: {self.help}")

    @property
    def nullable(self) -> bool:
        """Whether null is a value the published schemas take (it stands for the default)."""
        return self.default in (None, ()) and not self.required

    @property
    def tool_help(self) -> str:
        """The field's description in the MCP tool list: its `brief`, else its help."""
        return self.brief or self.help

    @property
    def accepted(self) -> tuple[str, ...]:
        """Every value a choice takes: its choices, then the old names it still reads."""
        return self.choices + tuple(old for old, _ in self.renamed)


def param(default: Any = MISSING, **declared: Any) -> Any:
    """A request's field, declared once: its default (none: required) and its `Param` fields
    but name and default, which are the dataclass field's own."""
    meta = {META: declared}
    if default is MISSING:
        return dataclasses.field(metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def group(value: Any, **members: Any) -> Any:
    """A request's field that is several to a client (the agent's words: `also`, `keywords`,
    `answer`), each member declared with `param()`: one field of the request, its value
    `value`'s type made of the members' values (`grouped`), and a field of every driver each."""
    return dataclasses.field(default=value, metadata={GROUP: members})


def params_of(cls: type) -> tuple[Param, ...]:
    """Every declared field of a request class, in declaration order (a group's members in
    its place)."""
    out = []
    for f in dataclasses.fields(cls):
        for name, declared in f.metadata.get(GROUP, {f.name: f}).items():
            if META in declared.metadata:
                required = declared.default is MISSING
                default = None if required else declared.default
                out.append(
                    Param(name, default=default, required=required, **declared.metadata[META])
                )
    return tuple(out)


def grouped(cls: type, checked: dict[str, Any]) -> dict[str, Any]:
    """A request's checked arguments as its fields: each group's members as its one value."""
    out = dict(checked)
    for f in dataclasses.fields(cls):
        if GROUP in f.metadata:
            kind: Any = type(f.default)  # the group's value: its own type, of its members
            out[f.name] = kind(**{n: out.pop(n) for n in f.metadata[GROUP]})
    return out


def ungrouped(request: Any) -> dict[str, Any]:
    """A request's fields as its arguments, each group's members one by one."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(request):
        value = getattr(request, f.name)
        if GROUP in f.metadata:
            out |= {n: getattr(value, n) for n in f.metadata[GROUP]}
        else:
            out[f.name] = value
    return out


def pattern_of(p: Param) -> str | None:
    """The regular expression a string Param (or each item of a list) must full-match (None:
    any string)."""
    if p.pattern is not None:
        return p.pattern
    if p.kind in ("path", "location", "locations"):
        return PATH_PATTERN
    if p.kind == "text":
        return TEXT_PATTERN
    if p.kind == "query":
        return QUERY_PATTERN
    if p.kind in WORDS:
        return WORD_PATTERN
    return None


def published(p: Param) -> str | None:
    """The pattern the schemas publish for a string Param (or each item of a list): JSON
    Schema searches a pattern, so a form the whole string must have is anchored."""
    pattern = pattern_of(p)
    if pattern is None or p.kind in SEARCHED:
        return pattern
    return f"^(?:{pattern})$"


def check(p: Param, value: Any, exact: bool = False) -> Any:
    """One argument checked against its declaration (None: the default). `exact`: as the
    published schemas state it, without the readings a model or a shell is allowed (`lenient`)."""
    if (value is None and (p.nullable or p.required or not exact)) or (
        value == "" and p.kind in (BLANK_IS_DEFAULT if not exact else BLANK_IS_PATH)
    ):
        if p.required:
            raise p.refused(f"{p.name} is required")
        if p.kind in LISTS:
            return p.default or ()
        return p.default
    if exact:
        lenient(p, value)
    out = CHECKS[p.kind](p, value)
    if exact and p.kind in LISTS and p.high is not None and len(value) > p.high:
        raise p.refused(f"{p.name} holds {len(value)} items; at most {p.high}")
    return out


def lenient(p: Param, value: Any) -> None:
    """ArgumentError for what `check` reads leniently, for a model or a shell, and the
    published schemas refuse: null for a field that is never null, one string for a list,
    '' for a choice or an answer, a query beyond its bound (cut and said otherwise), an empty
    location. (And, checked after it, more items in a list than its bound, repeats counted.)"""
    if value is None:
        raise p.refused(f"{p.name} must not be null")
    if p.kind in LISTS and isinstance(value, str):
        raise p.refused(f"{p.name} must be a list, not one string")
    if p.kind == "query" and isinstance(value, str) and p.high and len(value) > p.high:
        raise p.refused(f"{p.name} is {len(value)} characters long; the limit is {p.high}")
    if p.kind == "location" and value == "":
        raise p.refused(f"{p.name} is empty: give a note's path")
    if p.kind == "locations" and isinstance(value, list) and "" in value:
        raise p.refused(f"{p.name}[{value.index('')}] is empty: give a note's path")


def _string(p: Param, value: Any) -> str:
    """`value` as a string within its bound and of its form."""
    if not isinstance(value, str):
        if p.kind in ("path", "location"):
            raise p.refused(f"{p.name} must be a string, e.g. 'work/jira' or '.'")
        raise p.refused(f"{p.name} must be a string, got {type(value).__name__}")
    if p.kind != "query" and p.high is not None and len(value) > p.high:
        raise p.refused(f"{p.name} is {len(value)} characters long; the limit is {p.high}")
    _form(p, value, p.name)
    return value


def _form(p: Param, value: str, what: str) -> None:
    """RequestError when a string is not of its Param's declared form."""
    pattern = pattern_of(p)
    if pattern is None:
        return
    if (re.search if p.kind in SEARCHED else re.fullmatch)(pattern, value):
        return
    if p.kind == "query":
        raise p.refused(f"{what} is empty: there is nothing to search for")
    if p.kind in WORDS:
        raise p.refused(f"{what} is empty: it has no word to search for")
    if "\x00" in value:
        raise p.refused(f"{what} contains a NUL byte")
    if p.kind in ("path", "location", "locations"):
        raise p.refused(f"{what} has a folder or file name longer than {MAX_NAME_CHARS} characters")
    raise p.refused(f"{what} must be {p.form or 'of the form ' + pattern}, got {value!r}")


def _path(p: Param, value: Any) -> str:
    value = _string(p, value).strip()
    if p.kind == "path" and (m := location(value)):  # a hit's path:line: that note
        value = m["path"]
    return value or (p.default or "")


def _locations(p: Param, value: Any) -> tuple[str, ...]:
    """A list of locations (`path:line-end`), or one: each a path of its form and bound."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not all(isinstance(t, str) for t in value):
        raise p.refused(f"{p.name} must be a list of note paths, e.g. ['notes/a.md:5-9']")
    if p.high is not None and len(value) > p.high:
        raise p.refused(f"{p.name} holds {len(value)} locations; at most {p.high}")
    out = []
    for i, where in enumerate(value):
        if p.longest is not None and len(where) > p.longest:
            raise p.refused(
                f"{p.name}[{i}] is {len(where)} characters long; the limit is {p.longest}"
            )
        _form(p, where, f"{p.name}[{i}]")
        if where.strip():
            out.append(where.strip())
    return tuple(out)


def _text(p: Param, value: Any) -> str | None:
    return _string(p, value) or None


def _int(p: Param, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise p.refused(f"{p.name} must be an integer, got {value!r}")
    low, high = p.low, p.high
    if (low is not None and value < low) or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise p.refused(f"{p.name} must be an integer {span}, got {value}")
    return value


def _bool(p: Param, value: Any) -> bool:
    if not isinstance(value, bool):
        raise p.refused(f"{p.name} must be true or false")
    return value


def _choice(p: Param, value: Any) -> str:
    if value not in p.accepted:
        raise p.refused(f"{p.name} must be one of {', '.join(p.choices)}, got {value!r}")
    return dict(p.renamed).get(value, value)


def _tags(p: Param, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [t for t in value.replace(",", " ").split() if t]
    if not isinstance(value, list | tuple) or not all(isinstance(t, str) for t in value):
        raise p.refused(f"{p.name} must be a list of strings (or one comma-separated string)")
    return tuple(value)


def normal(text: str) -> str:
    """A word as it is searched: NFC, its whitespace collapsed to single spaces."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def same(text: str) -> str:
    """What two words share when they say the same (`normal`, casefolded)."""
    return normal(text).casefold()


def _word(p: Param, value: str, what: str) -> str:
    if p.longest is not None and len(value) > p.longest:
        raise p.refused(f"{what} is {len(value)} characters long; the limit is {p.longest}")
    _form(p, value, what)
    return normal(value)


def _words(p: Param, value: Any) -> tuple[str, ...]:
    """A list of words (phrasings, keywords), or one string: checked one by one, repeats
    dropped. One string of keywords holds several, split at commas."""
    if isinstance(value, str):
        parts = [t for t in value.split(",") if t.strip()] if p.kind == "keywords" else []
        value = parts or [value]
    if not isinstance(value, list | tuple) or not all(isinstance(t, str) for t in value):
        raise p.refused(f"{p.name} must be a list of strings")
    kept: dict[str, str] = {}
    for i, t in enumerate(value):
        word = _word(p, t, f"{p.name}[{i}]")
        kept.setdefault(same(word), word)
    if p.high is not None and len(kept) > p.high:
        raise p.refused(f"{p.name} holds {len(kept)} different ones; at most {p.high}")
    return tuple(kept.values())


def _answer(p: Param, value: Any) -> str | None:
    if not isinstance(value, str):
        raise p.refused(f"{p.name} must be a string, got {type(value).__name__}")
    return _word(p, value, p.name)


def _query(p: Param, value: Any) -> str:
    return _string(p, value)  # cut to its bound by the request, which says so in the result


CHECKS: dict[str, Callable[[Param, Any], Any]] = {
    "path": _path,
    "location": _path,
    "locations": _locations,
    "query": _query,
    "text": _text,
    "int": _int,
    "bool": _bool,
    "choice": _choice,
    "tags": _tags,
    "phrasings": _words,
    "keywords": _words,
    "answer": _answer,
}
