"""What a search says of the indexes it read: each collection caught up first (the text of
every changed note; vectors within the catch-up's budget), and the receipt it returns."""

from __future__ import annotations

from typing import NamedTuple

from ..collection.sync import SyncReport
from ..config import Settings
from ..errors import MemoError
from ..search.results import Freshness
from . import upkeep
from .collections import Collections
from .upkeep import IndexReport, pending_warning


class Caught(NamedTuple):
    """What a catch-up did: the receipt per collection (by path), what the reader should know
    (vectors still missing included), and the collections it could not bring up to date (their
    index searched as it was: the notes changed since are not in it)."""

    fresh: dict[str, Freshness]
    warnings: list[str]
    failed: list[str]


def caught_up(
    colls: Collections, parts: upkeep.Parts, settings: Settings, has_model: bool, target: str
) -> Caught:
    """Sync these collections before searching them: an edit made just before the call is
    found. The text of every changed note is indexed; vectors only within the catch-up's
    budget (upkeep.catch_up): a search never turns into indexing."""
    outcome = upkeep.sync_parts(colls, parts, IndexReport(), vectors=upkeep.catch_up(settings))
    fresh: dict[str, Freshness] = {}
    warnings: list[str] = []
    failed: list[str] = []
    for coll, _ in parts:
        rep = outcome.get(coll.rel)
        if isinstance(rep, MemoError):  # disk full, locked too long: serve what is there
            warnings.append(f"{rep} — searched the index as it was. {rep.hint}")
            failed.append(coll.rel)
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
    return Caught(fresh, warnings, failed)
