"""In-process plug for ../shared/eval/run_eval.py: `--backend bench/eval_backend.py:factory`.

The mode comes from MEMO_MODE (hybrid, lex, vec); the embedder from MEMO_EMBEDDER as usual.
Equivalent to `memo search {root} {query} --k {k} --json`, without a process per question.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memo.config import Settings  # noqa: E402
from memo.embed import get_embedder  # noqa: E402
from memo.library import Library  # noqa: E402


class Searcher:
    def __init__(self, root: str) -> None:
        settings = Settings.from_env()
        self.lib = Library(
            Path(root), get_embedder(settings.embedder, settings.model_dir), settings
        )
        self.lib.index()
        self.mode = os.environ.get("MEMO_MODE", "hybrid")

    def search(self, query: str, k: int) -> dict[str, Any]:
        return self.lib.search(".", query, k=k, mode=self.mode).to_dict()


def factory(root: str) -> Searcher:
    return Searcher(root)
