"""A request's declaration (requests.py) as click arguments and options: the CLI never spells a
field, a bound or a help text of its own."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..params import LISTS
from ..requests import Param, RequestError, _Request, check

F = TypeVar("F", bound=Callable[..., Any])


def request_options(request: type[_Request], *, skip: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Every Param of `request` shown on the CLI, in declaration order: positionals (no flag)
    as arguments, optional when last and defaulted; the rest as options. A defaulted
    positional before a required one may be left out too (`memo search QUERY` is `memo
    search . QUERY`): one word given is the required one."""
    params = [p for p in request.PARAMS if p.cli and p.name not in skip]
    positional = [p for p in params if p.flag is None]
    lead, last = positional[:-1], positional[-1] if positional else None
    shifts = bool(lead) and last is not None and last.required
    shifts = shifts and all(not p.required and p.default is not None for p in lead)

    def apply(f: F) -> F:
        g = _shifted(f, lead, last) if shifts and last is not None else f
        for p in reversed(params):
            if p.flag is None:
                optional = (p is last and not p.required) or (shifts and p in lead)
                shown = f"[{p.metavar}]" if optional else p.metavar
                g = click.argument(p.name, metavar=shown, required=not optional and not shifts)(g)
            else:
                g = _option(p)(g)
        return g  # type: ignore[return-value]  # the same command, its arguments read first

    return apply


def _shifted(f: F, lead: list[Param], last: Param) -> Callable[..., Any]:
    """`f` with its positionals shifted right when the last, required one was not given: the
    words given fill the last positionals, the first keep their defaults."""

    @functools.wraps(f)
    def run(**kw: Any) -> Any:
        given = [kw[p.name] for p in (*lead, last) if kw[p.name] is not None]
        if not given:
            raise click.UsageError(f"Missing argument '{last.metavar}'.")
        names = [p.name for p in (*lead, last)]
        for p in lead:
            kw[p.name] = p.default
        kw.update(zip(names[len(names) - len(given) :], given, strict=True))
        return f(**kw)

    return run


class DeclaredInt(click.IntRange):
    """An int option checked as its declaration checks it (`check`): a value out of bounds, or
    no number, is refused with the sentence and hint HTTP and MCP give (cli/__init__.py
    `usage_failure` says them); `--help` still shows the range."""

    def __init__(self, p: Param) -> None:
        super().__init__(p.low, p.high)
        self.declared = p

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            with contextlib.suppress(ValueError):  # not a number: `check` says so
                value = int(value)
        try:
            return check(self.declared, value)
        except RequestError as e:
            raise click.BadParameter(str(e), ctx, param) from e


class DeclaredChoice(click.Choice):
    """A choice option checked as its declaration checks it: a value not among its choices is
    refused with the declaration's sentence; the value goes on as given (an old name still
    read: `make` says the new one)."""

    def __init__(self, p: Param) -> None:
        super().__init__(p.accepted)
        self.declared = p

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            check(self.declared, value)
        except RequestError as e:
            raise click.BadParameter(str(e), ctx, param) from e
        return value


def _joined(ctx: click.Context, option: click.Parameter, given: tuple[str, ...]) -> str | None:
    """`--keywords PBR --keywords "BGP, OSPF"` as the one string `make` splits at commas."""
    return ",".join(given) if given else None


def _option(p: Param) -> Callable[[F], F]:
    names = [p.flag, p.short] if p.short else [p.flag]
    kw: dict[str, Any] = {"help": p.help, "default": None if p.kind in LISTS else p.default}
    if p.kind == "int":
        kw["type"] = DeclaredInt(p)
        kw["show_default"] = p.default is not None
    elif p.kind == "choice":
        kw["type"] = DeclaredChoice(p)
        kw["show_default"] = True
    elif p.kind == "phrasings":  # repeatable: --also "…" --also "…"
        kw.update(multiple=True, default=())
    elif p.kind == "keywords":  # repeatable, each maybe comma-separated: one string for `make`
        kw.update(multiple=True, default=(), callback=_joined)
    elif p.kind == "bool":
        if p.default is None:  # three states: on, off, or let memo decide
            assert p.flag is not None
            names = [f"{p.flag}/--no-{p.flag[2:]}"]
        else:
            kw["is_flag"] = True
    return click.option(*names, p.name, **kw)  # type: ignore[arg-type]  # kw: click.option's keywords, built per kind
