"""memo: a local library of markdown notes with a meaning-aware index, for AI agents."""

__version__ = "0.1.0"

from .config import Settings  # noqa: E402
from .errors import MemoError  # noqa: E402
from .library import Library  # noqa: E402
from .search import Hit, SearchResult  # noqa: E402

__all__ = ["Hit", "Library", "MemoError", "SearchResult", "Settings", "__version__"]
