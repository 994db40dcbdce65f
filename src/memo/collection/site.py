"""One collection as its jobs see it: where it lives and what it is indexed with.

`Collection` hands a `Site` to the sync (`sync.py`) and to status (`health.py`); they read
only this value, never the `Collection` itself, so neither needs to know the class that ties a
folder to its open index (and neither imports it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .chunker import CHUNKER_VERSION
from .lexical import LEXICAL_VERSION
from .meta import CollectionMeta
from .store import SCHEMA_VERSION

if TYPE_CHECKING:
    from ..config import Settings
    from ..embed import Embedder


@dataclass(frozen=True, slots=True)
class Site:
    meta: CollectionMeta
    folder: Path
    root: Path  # the library root
    rel: str  # the folder relative to the root, posix ('.' for the root itself)
    index_path: Path
    settings: Settings
    embedder: Embedder | None

    @property
    def name(self) -> str:
        return self.meta.name

    def root_path(self, path: str) -> str:
        """A note path relative to this collection -> relative to the library root."""
        return path if self.rel == "." else f"{self.rel}/{path}"

    def profile(self) -> dict[str, Any]:
        """Everything that, when changed, makes the stored index wrong."""
        e = self.embedder
        return {
            "schema": SCHEMA_VERSION,
            "chunker": CHUNKER_VERSION,
            "chunk_budget": self.settings.chunk_budget,
            "lexical": LEXICAL_VERSION,
            "model": e.model_id if e is not None else None,
            "dim": e.dim if e is not None else None,
        }
