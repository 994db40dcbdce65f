"""The library: a root folder of collections, and the operations on any path inside it.

library.py      Library: the public face (index, sync, search, route, read, status)
targets.py      what a path names: confinement to the root, the collections it covers
collections.py  the registry kept fresh, one Collection object per folder
syncing.py      the one way indexes follow the notes (index, catch-up, watcher)
federated.py    one search over many collections, ranked as one list
"""

from .library import Library, StatusReport
from .syncing import IndexReport

__all__ = ["IndexReport", "Library", "StatusReport"]
