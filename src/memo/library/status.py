"""`memo status` of a library: every collection at or below a path, and what is wrong."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import heartbeat
from ..collection.health import CollectionStatus
from ..collection.meta import META_FILE
from ..config import Settings
from ..embed import Embedder
from ..embed.cache import cache_status
from ..errors import EmbedderUnavailableError
from ..printable import shown
from ..search.fusion import FUSION_VERSION
from ..search.legs import Scope
from ..sqlite import vectors_missing
from . import upkeep
from .collections import Collections
from .upkeep import IndexReport


@dataclass(slots=True)
class StatusReport:
    """`memo status`: every collection at or below a path, and what is wrong."""

    root: str
    collections: list[CollectionStatus]
    errors: list[str] = field(default_factory=list)  # broken _meta.yaml files, one line each
    broken: list[dict[str, str]] = field(default_factory=list)  # {path, error}: not indexed
    warnings: list[str] = field(default_factory=list)
    fusion: str = FUSION_VERSION  # the rule search results come from
    embed_cache: dict[str, Any] | None = None  # the user's embedding cache (embed/cache.py)
    vector_leg: str | None = None  # why searches find by words only; None: meaning works too

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "collections": [c.to_dict() for c in self.collections],
            "errors": self.errors,
            "broken": self.broken,
            "warnings": self.warnings,
            "fusion": self.fusion,
            "embed_cache": self.embed_cache,
            "vector_leg": {"available": self.vector_leg is None, "why": self.vector_leg},
        }


def vector_leg_missing(embedder: Embedder | None) -> str | None:
    """Why a search of this process has no vector leg, said loudly wherever it is lost: no
    model configured, the model cannot load (asked once: its load is what every search needs
    anyway), sqlite-vec not loaded. None when the vector leg works."""
    missing = vectors_missing()  # first: without it no index opens, model or not
    if missing:
        return missing
    if embedder is None:
        return "no embedding model configured (MEMO_EMBEDDER=none)"
    try:
        embedder.embed_query("memo status")
    except EmbedderUnavailableError as e:
        return f"the embedding model cannot load: {e}"
    return None


def library_status(
    colls: Collections,
    scope: Scope,
    under: Path,
    settings: Settings,
    embedder: Embedder | None = None,
) -> StatusReport:
    """The status of a scope's collections, with the library's warnings and broken files."""
    watcher = heartbeat.summary(colls.root, settings)
    found = []
    for c, _ in scope.parts:
        st = c.status()
        st.watcher_last_seen = watcher["watcher_last_seen"]
        st.last_reconcile = watcher["last_reconcile"]
        found.append(st)
    warnings = [
        f"{c.path}: empty description in _meta.yaml; the router cannot route to it"
        for c in found
        if not c.description.strip()
    ]
    drafted = [shown(c.path) for c in found if c.drafted]
    if drafted:  # one warning for all: each collection's own line says which
        warnings.append(
            f"{drafted[0]}: description drafted by memo: review it in its {META_FILE}, "
            "then delete the `drafted` line"
            if len(drafted) == 1
            else f"{len(drafted)} descriptions drafted by memo: review each in its "
            f"{META_FILE}, then delete its `drafted` line"
        )
    report = IndexReport()
    upkeep.note_broken(colls, under, report)
    cache = cache_status(settings)
    missing = vector_leg_missing(embedder)
    if missing:
        warnings.append(f"vector leg unavailable: {missing}; searches match words only")
    return StatusReport(
        str(colls.root),
        found,
        report.errors,
        report.broken,
        warnings,
        embed_cache=cache,
        vector_leg=missing,
    )
