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
from memo.embed import embedder_for  # noqa: E402
from memo.library import Library  # noqa: E402


class Searcher:
    def __init__(self, root: str) -> None:
        settings = Settings.from_env()
        self.lib = Library(Path(root), embedder_for(settings, "serve"), settings)
        self.lib.index()
        self.mode = os.environ.get("MEMO_MODE", "hybrid")

    def search(self, query: str, k: int) -> dict[str, Any]:
        return self.lib.search(".", query, k=k, mode=self.mode).to_dict()


def factory(root: str) -> Searcher:
    return Searcher(root)


if __name__ == "__main__":  # --smoke: the plug on a tiny library, as run_eval.py calls it
    import argparse
    import tempfile

    from judged import smoke_args, smoke_eval

    ap = argparse.ArgumentParser()
    smoke_args(ap)
    if not ap.parse_args().smoke:
        raise SystemExit("a plug for run_eval.py: --backend bench/eval_backend.py:factory")
    os.environ.setdefault("MEMO_INDEX_DIR", tempfile.mkdtemp(prefix="memo-smoke-idx-"))
    root = smoke_eval(Path(tempfile.mkdtemp(prefix="memo-smoke-"))) / "xquad-dev" / "en"
    print(factory(str(root)).search("When was Tesla born?", 3)["results"][0]["path"])
