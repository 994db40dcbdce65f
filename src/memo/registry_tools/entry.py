"""One collection as the registry knows it, and what a re-scan reports."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..caches import digest
from ..collection.meta import CollectionMeta, load_meta, problem_of
from ..errors import MemoError


@dataclass(slots=True)
class Entry:
    """One collection: its `_meta.yaml` (with the file's stamp) and its index's summary."""

    path: str  # relative to the root, posix; '.' for a collection at the root itself
    name: str
    description: str
    tags: tuple[str, ...]
    embedder: str | None
    chunker: str | None
    mtime_ns: int
    size: int
    hash: str
    error: str = ""  # a broken _meta.yaml: listed with the reason, never routed to
    files: int | None = None
    chunks: int | None = None
    last_indexed: float | None = None
    headings: str = ""  # the notes' headings, from the collection's index: routing vocabulary
    content: str = ""  # the collection's most frequent content stems (collection/summary.py)
    content_sig: str = ""  # the index files' (mtime, size) when `content` was read
    languages: str = ""  # share of the chunks per language: "ru:0.93 en:0.07" (summary.py)
    id: int = 0

    def language_shares(self) -> dict[str, float]:
        """{"ru": 0.93, "en": 0.07}: the share of the collection's chunks per language."""
        out = {}
        for part in self.languages.split():
            lang, _, share = part.partition(":")
            try:
                out[lang] = float(share)
            except ValueError:
                continue
        return out

    def meta(self) -> CollectionMeta:
        return CollectionMeta(self.name, self.description, self.tags, self.embedder, self.chunker)

    def doc_text(self) -> str:
        """What the router indexes for this collection: name, path words, description, tags."""
        words = self.path.replace("/", " ").replace("-", " ").replace("_", " ")
        text = f"{self.name}. {words}. {self.description} {' '.join(self.tags)}"
        return f"{text}\n{self.headings}".strip()

    def embed_text(self) -> str:
        return f"{self.name}: {self.description} {', '.join(self.tags)}".strip()

    def text_hash(self) -> str:
        return digest(self.embed_text().encode("utf-8"))

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "name": self.name}
        if self.error:
            out["error"] = self.error
            return out
        out["description"] = self.description
        out["tags"] = list(self.tags)
        if self.embedder:
            out["embedder"] = self.embedder
        out["files"] = self.files
        out["chunks"] = self.chunks
        if self.languages:
            out["languages"] = self.languages
        out["last_indexed"] = (
            time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.last_indexed))
            if self.last_indexed
            else None
        )
        return out


def read_entry(folder: Path, rel: str, st: os.stat_result, raw: bytes) -> Entry:
    """The entry of the collection at `folder` from its `_meta.yaml`'s bytes; a broken meta
    gives an entry with `error` set (listed, never routed to)."""
    stamp = (st.st_mtime_ns, st.st_size, digest(raw))
    try:
        m = load_meta(folder, raw)
    except MemoError as e:
        # the problem alone: every reader of `error` names the file before it
        error = problem_of(e, folder)
        return Entry(rel, folder.name, "", (), None, None, *stamp, error=error)
    return Entry(rel, m.name, m.description, m.tags, m.embedder, m.chunker, *stamp)


@dataclass(slots=True)
class RefreshReport:
    """What one re-scan of the registry found and did."""

    collections: int = 0
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    embedded: int = 0
    not_embedded: int = 0  # descriptions still waiting for a vector
    seconds: float = 0.0
    walk_seconds: float = 0.0
    embed_seconds: float = 0.0
    wrote_yaml: bool = False

    @property
    def changed_any(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "collections": self.collections,
            "added": self.added,
            "changed": self.changed,
            "removed": self.removed,
            "errors": self.errors,
            "embedded": self.embedded,
            "not_embedded": self.not_embedded,
            "seconds": round(self.seconds, 3),
            "walk_seconds": round(self.walk_seconds, 3),
            "embed_seconds": round(self.embed_seconds, 3),
            "wrote_yaml": self.wrote_yaml,
        }


# A collection's row in `colls`, besides id and gen: Entry's fields, in this order.
FIELDS = (
    "path",
    "name",
    "description",
    "tags",  # JSON list
    "embedder",
    "chunker",
    "mtime_ns",
    "size",
    "hash",
    "error",
    "files",
    "chunks",
    "last_indexed",
    "headings",
    "content",
    "content_sig",
    "languages",
)
COLUMNS = "id, " + ", ".join(FIELDS)


def from_row(r: Any) -> Entry:
    """An Entry from a `colls` row read with COLUMNS."""
    fields = dict(zip(FIELDS, r[1:], strict=True))
    fields["tags"] = tuple(json.loads(fields["tags"]))
    return Entry(id=r[0], **fields)


def to_row(e: Entry) -> tuple[Any, ...]:
    """An Entry's FIELDS as stored."""
    return tuple(
        json.dumps(list(e.tags), ensure_ascii=False) if f == "tags" else getattr(e, f)
        for f in FIELDS
    )
