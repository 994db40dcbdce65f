"""The library: a root folder of collections, and the operations on any path inside it.

library.py      Library: the public face (index, sync, search, rank, route, why, read, status)
targets.py      what a path names: confinement to the root, the collections it covers
collections.py  the registry kept fresh, one Collection object per folder
upkeep.py       the one way indexes follow the notes (index, catch-up, watcher)
freshness.py    a search's catch-up and the receipt it returns
evidence.py     a route's candidates re-ranked by the search itself (its evidence)
adopt.py        `memo init`: collections proposed from the folders a vault has
plan.py         the work an index pass will do, counted first
why.py          `memo why`: where a note ranks for a question, or why it is absent
related.py      `memo related`: a note's links, backlinks and nearest notes
linkgraph.py    the links of every collection, resolved as Obsidian resolves them
status.py       `memo status`: every collection's index and what is wrong

How a search ranks is search/ (legs, fusion, ranking); the library resolves the path, catches
the indexes up and hands search/ the scope.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..collection.coverage import coverage_lines
    from ..collection.files import file_identity
    from ..collection.links import ATTACHMENTS, link_key
    from ..collection.matching import QueryTerms, runs, terms_of
    from ..collection.meta import create_collection
    from ..collection.pool import raise_open_files_limit
    from ..collection.progress import SyncProgress
    from ..collection.sync import SyncReport
    from ..registry_tools.entry import Entry
    from .library import Library
    from .status import StatusReport
    from .targets import file_kind
    from .upkeep import IndexDone, IndexReport

# where each name lives, imported when a driver first asks for it: a delegated `memo search`
# renders a server's answer with coverage_lines and must not load SQLite or numpy to do so
_HOMES = {
    "coverage_lines": "..collection.coverage",
    "file_identity": "..collection.files",
    "ATTACHMENTS": "..collection.links",
    "link_key": "..collection.links",
    "QueryTerms": "..collection.matching",
    "runs": "..collection.matching",
    "terms_of": "..collection.matching",
    "create_collection": "..collection.meta",
    "raise_open_files_limit": "..collection.pool",
    "SyncProgress": "..collection.progress",
    "SyncReport": "..collection.sync",
    "Entry": "..registry_tools.entry",
    "Library": ".library",
    "StatusReport": ".status",
    "file_kind": ".targets",
    "IndexDone": ".upkeep",
    "IndexReport": ".upkeep",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name], __name__), name)
    globals()[name] = value
    return value


# What the drivers (cli/, server/, watch/) use of the core besides Library and the results they
# render: the one door they come in by (tests/test_layout.py holds them to it), so the rooms
# behind it can move without a driver knowing.
__all__ = [
    "ATTACHMENTS",
    "Entry",
    "IndexDone",
    "IndexReport",
    "Library",
    "QueryTerms",
    "StatusReport",
    "SyncProgress",
    "SyncReport",
    "coverage_lines",
    "create_collection",
    "file_identity",
    "file_kind",
    "link_key",
    "raise_open_files_limit",
    "runs",
    "terms_of",
]
