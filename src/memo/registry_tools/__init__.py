"""Registry tools: discover a library's collections, keep `_registry.yaml` and the router index.

entry.py     Entry (one collection as the registry knows it), RefreshReport
scan.py      what changed: `_meta.yaml` files, index summaries
database.py  the router index on disk (registry.db)
view.py      the registry in memory: entries by path, prefix ranges, vector matrices
export.py    _registry.yaml
registry.py  Registry: the above tied to one library root
"""

from .export import REGISTRY_FILE

__all__ = ["REGISTRY_FILE"]
