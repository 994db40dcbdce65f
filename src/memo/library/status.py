"""`memo status` of a library: every collection at or below a path, and what is wrong."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import heartbeat
from ..collection.health import CollectionStatus
from ..collection.meta import META_FILE
from ..config import Settings
from ..embed import Embedder
from ..embed.cache import cache_status
from ..errors import EmbedderUnavailableError
from ..outputs import Published, doc
from ..printable import shown
from ..search.fusion import FUSION_VERSION
from ..search.legs import Scope
from ..sqlite import vectors_missing
from . import upkeep
from .collections import Collections
from .upkeep import IndexReport


@dataclass(frozen=True, slots=True)
class VectorLeg(Published):
    """Whether searches find by meaning too, or by words only."""

    available: bool = doc("Searches find by meaning too.")
    why: str | None = doc("Why they find by words only (null: the vector leg works).")


@dataclass(slots=True)
class StatusReport(Published):
    """`memo status`: every collection at or below a path, and what is wrong."""

    root: str = doc("The library root.")
    collections: list[CollectionStatus] = doc("Each collection at or below the path.")
    errors: list[str] = doc("Broken _meta.yaml files, one line each.", factory=list)
    broken: list[dict[str, str]] = doc(
        "Collections not indexed for a broken _meta.yaml: path, error.", factory=list
    )
    warnings: list[str] = doc(factory=list)
    fusion: str = doc("The rule search results come from.", default=FUSION_VERSION)
    embed_cache: dict[str, Any] | None = doc(  # embed/cache.py
        "The user's embedding cache: where, how large, how often it served.", default=None
    )
    vector_leg: VectorLeg = doc(
        "Whether searches find by meaning too.", default=VectorLeg(True, None)
    )


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
        vector_leg=VectorLeg(missing is None, missing),
    )
