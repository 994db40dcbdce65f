"""`_meta.yaml`: what makes a folder a collection, and what the router reads about it."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConflictError, MetaInvalidError, OutsideLibraryError, TargetError

META_FILE = "_meta.yaml"
MAX_META_BYTES = 64 * 1024  # a description file, not a data dump
# libyaml's safe loader when PyYAML was built with it (~10x faster: a registry rebuild parses
# 100,000 of these files); the pure-Python one otherwise. Both refuse python/object tags.
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_YAML_NODES = 10_000  # values a parsed document may expand to (anchors bomb guard)


def yaml_too_big(data: Any, limit: int = MAX_YAML_NODES) -> bool:
    """True when `data` expands to more than `limit` values, aliases counted at every use.

    safe_load builds a "billion laughs" document cheaply (aliases are shared references), but
    anything that later walks it - str(), json.dumps, a registry writer - would expand it.
    """
    seen = 0
    stack = [data]
    while stack:
        item = stack.pop()
        seen += 1
        if seen > limit:
            return True
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set):
            stack.extend(item)
    return False


@dataclass(frozen=True, slots=True)
class CollectionMeta:
    name: str
    description: str
    tags: tuple[str, ...] = ()
    embedder: str | None = None
    chunker: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def problem_of(e: Exception, folder: Path) -> str:
    """A broken meta's problem without the file's path (`load_meta` names it first): what a
    list that names the file itself shows beside it."""
    return str(e).removeprefix(f"{folder / META_FILE}: ")


def yaml_problem(e: yaml.YAMLError, text: str) -> str:
    """What is wrong with a YAML text, on a line the file has: at its end (a quote or bracket
    never closed), the line where the unclosed thing begins, not the line after the last."""
    problem = getattr(e, "problem", None) or str(e)
    context = getattr(e, "context", None)
    what = f"{problem} {context}" if context else problem
    mark, began = getattr(e, "problem_mark", None), getattr(e, "context_mark", None)
    if mark is None:
        return f"not valid YAML: {what}"
    lines = max(1, len(text.splitlines()))
    line = mark.line + 1
    if line > lines and began is not None:
        line = began.line + 1
    return f"not valid YAML (line {min(line, lines)}): {what}"


def load_meta(folder: Path, raw: bytes | None = None) -> CollectionMeta:
    """Parse `folder/_meta.yaml` (its bytes, when the caller has read them already); a problem
    raises MetaInvalidError naming the file and field."""
    path = folder / META_FILE
    if raw is None:
        try:
            raw = path.read_bytes()
        except OSError as e:
            raise MetaInvalidError(f"{path}: cannot read: {e.strerror or e}") from e
    if len(raw) > MAX_META_BYTES:
        raise MetaInvalidError(f"{path}: {len(raw)} bytes; a _meta.yaml may hold at most 64 KiB")
    text = raw.decode("utf-8-sig", errors="replace")
    try:
        # safe_load: tags such as !!python/object are refused, never executed.
        data = yaml.load(text, Loader=SafeLoader)
    except yaml.YAMLError as e:
        if "nesting depth" in str(e):  # libyaml's guard against [[[[...]]]]
            raise MetaInvalidError(f"{path}: YAML nested too deeply") from e
        raise MetaInvalidError(f"{path}: {yaml_problem(e, text)}") from e
    except RecursionError as e:  # PyYAML composes recursively: [[[[...]]]] 30,000 deep
        raise MetaInvalidError(f"{path}: YAML nested too deeply") from e
    if yaml_too_big(data):
        raise MetaInvalidError(
            f"{path}: YAML expands to more than {MAX_YAML_NODES} values (an anchors bomb?)"
        )
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise MetaInvalidError(f"{path}: expected a mapping of fields, got {type(data).__name__}")

    name = data.get("name", folder.name)
    if not isinstance(name, str | int | float) or not str(name).strip():
        raise MetaInvalidError(f"{path}: field `name` must be a non-empty string")
    description = data.get("description")
    if description is None:
        raise MetaInvalidError(f"{path}: field `description` is missing")
    if not isinstance(description, str):
        raise MetaInvalidError(f"{path}: field `description` must be a string")
    tags = data.get("tags", [])
    if isinstance(tags, str):
        tags = [t.strip() for t in tags.split(",")]
    if not isinstance(tags, list) or not all(isinstance(t, str | int | float) for t in tags):
        raise MetaInvalidError(f"{path}: field `tags` must be a list of strings")
    for key in ("embedder", "chunker"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise MetaInvalidError(f"{path}: field `{key}` must be a string")
    known = {"name", "description", "tags", "embedder", "chunker"}
    return CollectionMeta(
        name=str(name).strip(),
        description=description.strip(),
        tags=tuple(str(t) for t in tags if str(t).strip()),
        embedder=data.get("embedder"),
        chunker=data.get("chunker"),
        extra={k: v for k, v in data.items() if k not in known},
    )


SLUG_PART = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
MAX_DESCRIPTION = 2_000


def create_collection(
    root: Path,
    rel: str,
    description: str,
    tags: list[str] | tuple[str, ...] = (),
    name: str | None = None,
    allows: Callable[[str], bool] | None = None,
    hint: str = "",
) -> Path:
    """Make `root/rel` a collection: create the folder if needed and write its `_meta.yaml`.

    The only file memo writes among the notes themselves, and only when asked (beside them go
    its caches: `.memo/` folders, the `_library.yaml` marker and `_registry.yaml`, all under
    MEMO_INDEX_DIR when it is set): it refuses to
    overwrite an existing `_meta.yaml`, to leave the root, and to create folders whose names
    are not lowercase ASCII slugs (the names agents and shells handle without quoting), or
    what `allows` accepts with `hint` to say why not (the library's own naming:
    library/naming.py); a folder that exists keeps its name.
    """
    rel = rel.strip()
    if rel.startswith("/") or "\\" in rel:
        raise TargetError(
            f"{rel} is not a path relative to the library root", "Give e.g. work/kafka."
        )
    rel = rel.rstrip("/")
    parts = rel.split("/") if rel else []
    if not parts:
        raise TargetError("give the new collection's folder, e.g. work/kafka")
    made = root
    for part in parts:
        made = made / part
        if part in (".", ".."):
            raise TargetError(f"{rel} is not a folder path inside the library")
        # A folder the user has keeps its name, whatever it is ('Obsidian Sync', 'Плагины');
        # only folders memo makes must be names agents and shells handle without quoting.
        fits = allows(part) if allows is not None else bool(SLUG_PART.match(part))
        if not made.is_dir() and not fits:
            raise TargetError(
                f"{part!r} is not a folder name memo creates",
                hint
                or "Use lowercase ASCII slugs: letters, digits, '-', '_' or '.', e.g. "
                "work/kafka-ops (an existing folder may have any name).",
            )
    folder = root / Path(*parts)
    real_root = Path(os.path.realpath(root))
    # The deepest existing ancestor decides where the new folder really lands (symlinks).
    probe = folder
    while not probe.exists():
        probe = probe.parent
    real = Path(os.path.realpath(probe))
    if real != real_root and real_root not in real.parents:
        raise OutsideLibraryError(f"{rel} would be outside the library root {root}")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        write_meta(folder, description, tags, name or parts[-1])
    except FileExistsError as e:
        raise ConflictError(
            f"{rel} is already a collection ({META_FILE} exists)",
            "Edit its _meta.yaml by hand, or pick another folder.",
        ) from e
    return folder


DRAFTED_NOTE = (
    "# drafted by `memo init` from this folder's notes: review the description, then delete\n"
    "# the `drafted` line.\n"
)


def write_meta(
    folder: Path,
    description: str,
    tags: list[str] | tuple[str, ...] = (),
    name: str | None = None,
    drafted: bool = False,
) -> Path:
    """The one writer of a `_meta.yaml` (`memo new`, `memo init`): name (the folder's when not
    given), description, tags, and `drafted: true` under a comment asking for a review when
    memo wrote the description itself. Each field on one line. Never over an existing file,
    one written meanwhile included: FileExistsError."""
    description = (description or "").strip()
    if not description:
        raise MetaInvalidError("a collection needs a description", "Say in one line what it holds.")
    if len(description) > MAX_DESCRIPTION:
        raise MetaInvalidError(f"description is {len(description)} characters; keep it short")
    data: dict[str, Any] = {"name": name or folder.name, "description": description}
    clean_tags = [str(t).strip() for t in tags if str(t).strip()]
    if clean_tags:
        data["tags"] = clean_tags
    if drafted:
        data["drafted"] = True
    width = MAX_DESCRIPTION + 100  # never folded: a person edits it as one line
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=width)
    path = folder / META_FILE
    with open(path, "x", encoding="utf-8") as f:  # "x": never overwrite a meta written meanwhile
        f.write((DRAFTED_NOTE if drafted else "") + text)
    return path
