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

from .library import Library
from .status import StatusReport
from .upkeep import IndexReport

__all__ = ["IndexReport", "Library", "StatusReport"]
