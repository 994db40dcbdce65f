"""The requests about one note: a read of its lines (`memo show`, `memo_get`) and its
neighbours (`memo related`), each declared once as requests.py declares the others.

Pure standard library, like requests.py.
"""

from __future__ import annotations

from typing import Any, Protocol, Self

from .fields import (
    DEFAULT_RELATED_K,
    MAX_K,
    MAX_LINES,
    MAX_PATH_CHARS,
    MAX_PATHS,
    budget_field,
    k_field,
)
from .operations import Answer, Operation, _Request, declared
from .params import Param, RequestError, check, location, param, uri_location


class NoteAnswers(Protocol):
    """Whoever answers the requests about one note (requests.py `Answers` answers them all)."""

    def read(self, req: ReadRequest, /) -> Answer: ...
    def related(self, req: RelatedRequest, /) -> Answer: ...


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
    """A read: lines of one note, or of several (`paths`), in order, within one budget."""

    path: str = param(
        kind="location",
        help="A note's path as a hit gives it (relative to the library root, or absolute inside "
        "it); `path:line` and `path:line-end` are read as line and lines.",
        brief="A note's path, or a hit's `path:line-end`.",
        high=MAX_PATH_CHARS,
        aliases=("file",),
        metavar="PATH[:LINE]",
        hint="Give a note's path, e.g. a search hit's `path:line`.",
    )
    line: int | None = param(
        None,
        kind="int",
        help="First line, 1-based (a hit's `line`).",
        brief="First line (a hit's `line`).",
        low=1,
        aliases=("start_line", "offset"),
        cli=False,
    )
    lines: int | None = param(
        None,
        kind="int",
        help="How many lines (default: 40 from `line`, else the whole note).",
        brief="How many (default 40, or all).",
        low=1,
        high=MAX_LINES,
        aliases=("n", "count"),  # `n`: the CLI's -n
        flag="--lines",
        short="-n",
    )
    paths: tuple[str, ...] = param(
        (),
        kind="locations",
        help="More to read in the same call, after `path`: each `path:line-end` as a hit gives "
        "it; max_tokens is shared.",
        brief="More `path:line-end` to read in the same call.",
        high=MAX_PATHS,
        longest=MAX_PATH_CHARS,
        aliases=("locations",),
        cli=False,
    )
    max_tokens: int | None = budget_field("the lines (the ones that do not fit left out)")

    def sent_to(self, to: NoteAnswers) -> Answer:
        return to.read(self)

    @classmethod
    def make(cls, *args: Any, **kwargs: Any) -> Self:
        """As every request's; a list given as the path is read as the path and `paths`."""
        given = args[0] if args else kwargs.get("path")
        if isinstance(given, list | tuple) and given and "paths" not in kwargs:
            first, *rest = given
            if args:
                args = (first, *args[1:])
            else:
                kwargs["path"] = first
            kwargs["paths"] = rest
        return super(ReadRequest, cls).make(*args, **kwargs)  # noqa: UP008 - slots: no bare super()

    @classmethod
    def _built(cls, checked: dict[str, Any], said: list[str]) -> Self:
        at = cls.param("path")
        if not checked["path"]:
            raise at.refused(REQUIRED, RequestError)
        path, line, lines = cls._where(at, checked["path"], checked["line"], checked["lines"])
        for other in checked["paths"]:
            cls._where(cls.param("paths"), other, None, None)  # refused now, not half-way
        return cls(
            path=path,
            line=line,
            lines=lines,
            paths=checked["paths"],
            max_tokens=checked["max_tokens"],
            said=tuple(said),
        )

    def reads(self) -> list[tuple[str, int | None, int | None]]:
        """Every location this read asks for, in order: (path, first line, lines)."""
        others = [self._where(self.param("paths"), p, None, None) for p in self.paths]
        return [(self.path, self.line, self.lines), *others]

    @classmethod
    def _where(
        cls, at: Param, given: str, line: int | None, lines: int | None
    ) -> tuple[str, int | None, int | None]:
        """A location read back as a path, its first line and how many lines (`_located`)."""
        path, start, end = located(at, given, line)
        if lines is None and end is not None and start is not None:
            lines = check(cls.param("lines"), end - start + 1)
        return path, start, lines


REQUIRED = "path is required: a note's path, e.g. from a search hit"


def located(at: Param, given: str, line: int | None) -> tuple[str, int | None, int | None]:
    """A location read back (every form memo prints: path:line, path:line-end, shell-quoted,
    an MCP hit's place, a note's URI) as a note's path, its first line and the range's last
    line; RequestError when `line` says otherwise or the range runs backwards. A path without
    a line is returned as given: the library reads its forms (`targets.confine`)."""
    named = uri_location(given)
    path = given if named is None else named
    m = location(path)
    if m is None:
        return path, line, None
    path, start = m["path"], int(m["line"])
    if line is not None and line != start:
        raise at.refused(f"line given twice: {path}:{start} and line={line}", RequestError)
    end = int(m["end"]) if m["end"] else None
    if start < 1 or (end is not None and end < start):
        raise at.refused(f"{given} is not a line range of a note", RequestError)
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
        brief="A note's path; `path:line` for its section.",
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
        brief="A line: that section's links and neighbours.",
        low=1,
        aliases=("start_line",),
        cli=False,
    )
    k: int = k_field(DEFAULT_RELATED_K, MAX_K, "How many similar notes.")
    max_tokens: int | None = budget_field(
        "the lists (links, backlinks, similar, unresolved: the last items of each left out first)"
    )

    def sent_to(self, to: NoteAnswers) -> Answer:
        return to.related(self)

    @classmethod
    def _built(cls, checked: dict[str, Any], said: list[str]) -> Self:
        at = cls.param("path")
        if not checked["path"]:
            raise at.refused(REQUIRED, RequestError)
        path, line, _ = located(at, checked["path"], checked["line"])
        return cls(
            path=path, line=line, k=checked["k"], max_tokens=checked["max_tokens"], said=tuple(said)
        )
