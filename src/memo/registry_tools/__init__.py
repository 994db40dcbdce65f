"""Registry tools: discover a library's collections, keep `_registry.yaml` and the router index."""

from .registry import REGISTRY_FILE, Entry, RefreshReport, Registry

__all__ = ["REGISTRY_FILE", "Entry", "RefreshReport", "Registry"]
