"""Real questions against a real library: the end-to-end guard on retrieval quality.

The full figures (all tasks, all modes) come from bench/core.py; this keeps a floor under the
default configuration so a regression in chunking, stems or fusion fails CI.
"""

from __future__ import annotations

import json

import pytest

from memo.config import Settings
from memo.library import Library

from .conftest import SHARED

EVAL = SHARED / "eval" / "xquad-dev"
pytestmark = [
    pytest.mark.slow,  # indexes a whole eval library
    pytest.mark.skipif(
        not (EVAL / "qrels" / "ru.jsonl").is_file(),
        reason=f"the eval sets live in ../shared ({EVAL}), absent on this machine",
    ),
]


@pytest.fixture(scope="module")
def ru_library(tmp_path_factory, real_embedder):
    lib = Library(EVAL / "ru", real_embedder, Settings(index_dir=tmp_path_factory.mktemp("idx")))
    lib.index()
    yield lib
    lib.close()


def _recall_mrr(lib: Library, qrels_file: str, mode: str, n: int) -> tuple[float, float]:
    rows = [json.loads(x) for x in (EVAL / "qrels" / qrels_file).read_text().splitlines() if x]
    rows = rows[:: max(1, len(rows) // n)][:n]  # spread over every article
    r5 = mrr = 0.0
    for q in rows:
        hits = lib.search(".", q["question"], k=10, mode=mode).hits
        for rank, h in enumerate(hits, start=1):
            if h.path == q["path"] and q["line_start"] <= h.line <= q["line_end"]:
                r5 += rank <= 5
                mrr += 1 / rank
                break
    return r5 / len(rows), mrr / len(rows)


def test_ru_questions_find_their_section(ru_library):
    r5, mrr = _recall_mrr(ru_library, "ru.jsonl", "hybrid", 150)
    assert r5 >= 0.95 and mrr >= 0.9, (r5, mrr)


def test_english_questions_find_russian_sections(ru_library):
    r5, mrr = _recall_mrr(ru_library, "en-ru.cross.jsonl", "hybrid", 150)
    assert r5 >= 0.9 and mrr >= 0.8, (r5, mrr)


def test_hybrid_does_not_lose_to_its_legs(ru_library):
    hyb = _recall_mrr(ru_library, "ru.exact.jsonl", "hybrid", 100)
    for mode in ("lex", "vec"):
        leg = _recall_mrr(ru_library, "ru.exact.jsonl", mode, 100)
        assert hyb[0] >= leg[0] - 0.02 and hyb[1] >= leg[1] - 0.02, (mode, hyb, leg)
