"""What a search says of the indexes it read: each collection caught up first (the text of
every changed note; vectors within the catch-up's budget), and the receipt it returns."""

from __future__ import annotations

from ..collection.sync import SyncReport
from ..config import Settings
from ..errors import MemoError
from ..search.results import Freshness
from . import syncing
from .collections import Collections
from .syncing import IndexReport, pending_warning


def caught_up(
    colls: Collections, parts: syncing.Parts, settings: Settings, has_model: bool, target: str
) -> tuple[dict[str, Freshness], list[str]]:
    """Sync these collections before searching them: an edit made just before the call is
    found. The text of every changed note is indexed; vectors only within the catch-up's
    budget (syncing.catch_up): a search never turns into indexing. Returns the receipt per
    collection (by path) and what the reader should know, vectors still missing included."""
    outcome = syncing.sync_parts(colls, parts, IndexReport(), vectors=syncing.catch_up(settings))
    fresh: dict[str, Freshness] = {}
    warnings: list[str] = []
    for coll, _ in parts:
        rep = outcome.get(coll.rel)
        if isinstance(rep, MemoError):  # disk full, locked too long: serve what is there
            warnings.append(f"{rep} — searched the index as it was. {rep.hint}")
            fresh[coll.rel] = Freshness(coll.name, 0, False, coll.last_write(), "")
        elif rep is not None:
            warnings.extend(rep.warnings)
            current = rep.caught_up == 0 and not rep.rebuilt and not rep.unread
            fresh[coll.rel] = Freshness(
                coll.name,
                rep.caught_up,
                current,
                coll.last_write(),
                rep.rebuilt,
                rep.chunks,
                rep.chunks_pending if has_model else 0,
                rep.embedding_by,
            )
    reports = [rep for rep in outcome.values() if isinstance(rep, SyncReport)]
    said = pending_warning(reports, has_model, target)
    if said:
        warnings.append(said)
    return fresh, warnings
