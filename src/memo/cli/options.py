"""A request's declaration (requests.py) as click arguments and options: the CLI never spells a
field, a bound or a help text of its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..requests import Param, _Request

F = TypeVar("F", bound=Callable[..., Any])


def request_options(request: type[_Request], *, skip: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Every Param of `request` shown on the CLI, in declaration order: positionals (no flag)
    as arguments, optional when last and defaulted; the rest as options."""
    params = [p for p in request.PARAMS if p.cli and p.name not in skip]
    positional = [p for p in params if p.flag is None]

    def apply(f: F) -> F:
        for p in reversed(params):
            if p.flag is None:
                optional = p is positional[-1] and not p.required
                shown = f"[{p.metavar}]" if optional else p.metavar
                f = click.argument(p.name, metavar=shown, required=not optional)(f)
            else:
                f = _option(p)(f)
        return f

    return apply


def _option(p: Param) -> Callable[[F], F]:
    names = [p.flag, p.short] if p.short else [p.flag]
    kw: dict[str, Any] = {"help": p.help, "default": p.default}
    if p.kind == "int":
        kw["type"] = click.IntRange(p.low, p.high)
        kw["show_default"] = p.default is not None
    elif p.kind == "choice":
        kw["type"] = click.Choice(p.choices)
        kw["show_default"] = True
    elif p.kind == "phrasings":  # repeatable: --also "…" --also "…"
        kw.update(multiple=True, default=())
    elif p.kind == "bool":
        if p.default is None:  # three states: on, off, or let memo decide
            assert p.flag is not None
            names = [f"{p.flag}/--no-{p.flag[2:]}"]
        else:
            kw["is_flag"] = True
    return click.option(*names, p.name, **kw)  # type: ignore[arg-type]  # kw: click.option's keywords, built per kind
