"""What every request is: a frozen dataclass that names its operation, is checked by `make`,
and is answered by whoever `Answers` it (requests.py declares them).

`declared(Operation(...))` makes a request class: a frozen, keyword-only dataclass whose
fields are declared with `param()` (params.py), its `PARAMS` read off them, its `OPERATION`
the names each driver gives it. `sent_to` is the one method of `Answers` (requests.py:
`Library`, the servers' `Service`) it calls, written out in each request: a reader greps
`.search(` and finds every caller; no driver looks a method up by the operation's name.

Pure standard library, like requests.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, Self, TypeVar, dataclass_transform

from .params import (
    ArgumentError,
    Param,
    RequestError,
    check,
    group,
    grouped,
    param,
    params_of,
    ungrouped,
)


# ---------------------------------------------------------------------- who answers
class Answer(Protocol):
    """A result of any operation, as every driver hands it on."""

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation, as every driver names it: declared once, beside its request."""

    name: str  # the operation: the Answers method its request calls, the key of REQUESTS
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


# ---------------------------------------------------------------------- what they share
@dataclass(frozen=True, slots=True, kw_only=True)
class _Request:
    """What every request shares: checked construction from a client's arguments."""

    PARAMS: ClassVar[tuple[Param, ...]]  # its declared fields (`declared` reads them)
    OPERATION: ClassVar[Operation]  # what each driver calls it

    said: tuple[str, ...] = ()  # what the request itself has to tell the reader of its result

    def sent_to(self, to: Any) -> Answer:
        """The answer of `to` (a Library, a Service: requests.py `Answers`) to this request.
        Typed there, where the requests are: this module names none of them."""
        raise NotImplementedError

    @classmethod
    def param(cls, name: str) -> Param:
        return next(p for p in cls.PARAMS if p.name == name)

    @classmethod
    def aliases(cls) -> dict[str, str]:
        """alias -> the field it names."""
        return {a: p.name for p in cls.PARAMS for a in p.aliases}

    @classmethod
    def make(cls, *args: Any, **kwargs: Any) -> Self:
        """A checked request from positional arguments (in declaration order) and keywords
        (names or their aliases); RequestError names the first bad argument."""
        names = [p.name for p in cls.PARAMS]
        if len(args) > len(names):
            raise RequestError(f"too many arguments ({len(args)})", cls._takes())
        return cls._made([*zip(names, args, strict=False), *kwargs.items()], exact=False)

    @classmethod
    def make_exact(cls, arguments: Iterable[tuple[str, Any]]) -> Self:
        """A checked request from (name or alias, value) pairs, each value as the published
        schemas state it (`check`'s `exact`: no lenient reading): what the HTTP API reads."""
        return cls._made(list(arguments), exact=True)

    @classmethod
    def _takes(cls) -> str:
        return f"The arguments are {', '.join(p.name for p in cls.PARAMS)}."

    @classmethod
    def _made(cls, arguments: list[tuple[str, Any]], exact: bool) -> Self:
        """Every argument named once (ArgumentError for a name no field has, RequestError for
        one given twice), then each checked; the request built from them."""
        names = [p.name for p in cls.PARAMS]
        aliases = cls.aliases()
        values: dict[str, Any] = {}
        given: dict[str, str] = {}  # field -> the name it was given by
        for key, value in arguments:
            name = key if key in names else aliases.get(key)
            if name is None:
                raise ArgumentError(f"unknown argument {key!r}", cls._takes())
            if name in values:
                also = f" (as {given[name]} and {key})" if given[name] != key else ""
                raise RequestError(f"{name} given twice{also}", cls._takes())
            values[name], given[name] = value, key
        checked = {
            p.name: check(p, values[p.name], exact) if p.name in values else check(p, None)
            for p in cls.PARAMS
        }
        said = [
            f"{p.name} '{old}' is now called '{new}': send {p.name}='{new}'"
            for p in cls.PARAMS
            for old, new in p.renamed
            if values.get(p.name) == old
        ]
        return cls._built(checked, said)

    @classmethod
    def _built(cls, checked: dict[str, Any], said: list[str]) -> Self:
        return cls._of(checked, said=tuple(said))

    @classmethod
    def _of(cls, checked: dict[str, Any], **own: Any) -> Self:
        """The request made of its checked arguments (a group's members as the group's one
        value: `grouped`) and its own fields."""
        return cls(**grouped(cls, checked), **own)

    def warnings(self) -> list[str]:
        """What the request itself has to say to the reader of the result."""
        return list(self.said)

    def at(self, path: str) -> Self:
        """The same request for another path (the CLI reads a path from where it runs)."""
        return dataclasses.replace(self, path=path)  # type: ignore[call-arg]  # a request with a path

    def to_dict(self) -> dict[str, Any]:
        """The request as the HTTP API reads it (a body or query; the CLI's delegation)."""
        fields = ungrouped(self)
        out = {p.name: fields[p.name] for p in self.PARAMS}
        out = {k: (list(v) or None) if isinstance(v, tuple) else v for k, v in out.items()}
        return {k: v for k, v in out.items() if v is not None}


R = TypeVar("R", bound=_Request)


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(param, group))
def declared(operation: Operation) -> Callable[[type[R]], type[R]]:
    """A request class as a frozen, keyword-only dataclass, named by `operation`, its PARAMS
    read off the fields `param()` declares."""

    def apply(cls: type[R]) -> type[R]:
        made = dataclass(frozen=True, slots=True, kw_only=True)(cls)
        made.OPERATION = operation
        made.PARAMS = params_of(made)
        return made

    return apply
