"""The library: a root folder of collections, and the operations on any path inside it.

Its modules, one line each: docs/design.md's map; library.py's `Library` is the public face.
How a search ranks is search/ (legs, fusion, ranking); the library resolves the path, catches
the indexes up and hands search/ the scope.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
# must not load SQLite or numpy to render a server's answer
_HOMES = {
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
    "create_collection",
    "file_identity",
    "file_kind",
    "link_key",
    "raise_open_files_limit",
    "runs",
    "terms_of",
]
