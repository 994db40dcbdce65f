"""What a result publishes: each field's description and JSON form, declared once at the field.

A result (a search's hits, a route, a read, related notes, why, status, index) is a dataclass
deriving from `Published`, each field written `took_ms: float = doc("Milliseconds.", digits=2)`:
its description, the JSON name (`name=`), a float's rounding (`digits=`) and when it is left out
(`omit=`: NONE, EMPTY). `to_dict` reads the JSON every driver prints off the fields in order;
server/schemas.py reads the published output schemas off the same fields, so a field is added,
renamed or described in one place. Pure standard library.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import MISSING, dataclass
from typing import Any, ClassVar

KEY = "doc"  # the key of a field's Doc in its metadata
NONE = "none"  # omit=NONE: the field is left out of the JSON when it is None
EMPTY = "empty"  # omit=EMPTY: ... when it is empty (or zero, or '')


@dataclass(frozen=True, slots=True)
class Doc:
    """How one field of a result is published."""

    text: str = ""  # its description
    name: str | None = None  # the JSON's name for it (None: the field's own)
    digits: int | None = None  # a float rounded to this many digits
    omit: str | None = None  # NONE or EMPTY: when it is left out of the JSON


PLAIN = Doc()


def doc(
    text: str = "",
    *,
    default: Any = MISSING,
    factory: Any = MISSING,
    init: bool = True,
    name: str | None = None,
    digits: int | None = None,
    omit: str | None = None,
) -> Any:
    """A result's field, with how it is published: its description and JSON form (`Doc`)."""
    assert omit in (None, NONE, EMPTY), omit
    meta = {KEY: Doc(text, name, digits, omit)}
    return dataclasses.field(default=default, default_factory=factory, init=init, metadata=meta)


def doc_of(f: dataclasses.Field[Any]) -> Doc:
    """How a field is published (PLAIN when it was declared without `doc()`)."""
    return f.metadata.get(KEY, PLAIN)


def default_of(f: dataclasses.Field[Any]) -> Any:
    """A field's default (its factory's value): what a field the JSON leaves out stands for."""
    if f.default_factory is not MISSING:
        return f.default_factory()
    return None if f.default is MISSING else f.default


def left_out(how: Doc, value: Any) -> bool:
    """Whether a field of this value is left out of the JSON."""
    return (how.omit == NONE and value is None) or (how.omit == EMPTY and not value)


class Published:
    """A result: its JSON is its fields as their `doc()` says (`to_dict`)."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]  # each one is a dataclass

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            how, value = doc_of(f), getattr(self, f.name)
            if not left_out(how, value):
                out[how.name or f.name] = _json(value, how.digits)
        return out


def _json(value: Any, digits: int | None = None) -> Any:
    """A field's value as JSON: results as their dicts, a tuple as a list, a float rounded; a
    dict copied (the caller may change it)."""
    if isinstance(value, Published):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        return copy.deepcopy(value)
    if digits is not None and isinstance(value, float):
        return round(value, digits)
    return value
