"""memo: a local library of markdown notes with a meaning-aware index, for AI agents.

    from memo import Library

    with Library.from_env("~/notes/memo") as lib:
        lib.index()
        for hit in lib.search("work", "policy based routing", k=5).hits:
            print(f"{hit.path}:{hit.line}", hit.heading)

The names below load lazily: `import memo` (the CLI's first step) costs no numpy, SQLite or model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import MemoError

__version__ = "0.1.0"

__all__ = [
    "Excerpt",
    "Hit",
    "IndexReport",
    "Library",
    "MemoError",
    "ReadRequest",
    "RouteRequest",
    "RouteResult",
    "SearchRequest",
    "SearchResult",
    "Settings",
    "StatusReport",
    "__version__",
]

_WHERE = {
    "Excerpt": "memo.search.excerpt",
    "Hit": "memo.search.results",
    "IndexReport": "memo.library.upkeep",
    "Library": "memo.library.library",
    "ReadRequest": "memo.requests",
    "RouteRequest": "memo.requests",
    "RouteResult": "memo.router.route",
    "SearchRequest": "memo.requests",
    "SearchResult": "memo.search.results",
    "Settings": "memo.config",
    "StatusReport": "memo.library.status",
}

if TYPE_CHECKING:
    from .config import Settings
    from .library.library import Library
    from .library.status import StatusReport
    from .library.upkeep import IndexReport
    from .requests import ReadRequest, RouteRequest, SearchRequest
    from .router.route import RouteResult
    from .search.excerpt import Excerpt
    from .search.results import Hit, SearchResult


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'memo' has no attribute {name!r}")
