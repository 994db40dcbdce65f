"""Does a hit's focus (search/focus.py) hold the answer? XQuAD's answers, to the character.

For each question whose hits (k=10) hold its paragraph, the first such hit's chunk is judged:
the answer (`answer`, or `answer_library_lang` across languages) in the focus window
(`focus`), in the chunk's first window, what a reader without a focus reads first (`start`),
in the text the hit carries and in the chunk's first TEXT_LIMIT characters (`shown`, `shown
before`); and the focus's length against the chunk's. A chunk of three sentences or fewer is
its own focus (`whole`). Per half of a seeded hash of the id; nothing here was tuned. Writes
bench/results/focus.json.

    MEMO_INDEX_DIR=SCRATCH python bench/focus.py --eval ../shared/eval
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from judged import record, smoke_args, smoke_eval  # noqa: E402  (bench/ is on sys.path)

from memo.collection import windows  # noqa: E402
from memo.config import Settings  # noqa: E402
from memo.embed import embedder_for  # noqa: E402
from memo.library import Library  # noqa: E402
from memo.search import focus  # noqa: E402
from memo.search.results import cut_text  # noqa: E402

SEED = "focus-2026"
SETS = [  # (library, qrels, label)
    ("xquad-dev/ru", "xquad-dev/qrels/ru.jsonl", "ru>ru"),
    ("xquad-dev/en", "xquad-dev/qrels/en.jsonl", "en>en"),
    ("xquad-dev/ru", "xquad-dev/qrels/en-ru.cross.jsonl", "en>ru"),
]
KEYS = ("focus", "start", "shown", "shown_before")


def half(qid: str) -> str:
    digest = hashlib.blake2b((SEED + qid).encode(), digest_size=8).digest()
    return "tune" if int.from_bytes(digest, "big") % 2 == 0 else "held-back"


def answer_of(q: dict[str, Any]) -> str:
    return str(q.get("answer_library_lang") or q.get("answer") or "").strip()


def judge_one(lib: Library, q: dict[str, Any]) -> dict[str, Any] | None:
    """The four judgements of the first hit in the question's paragraph; None when no hit of
    the ten is, or the qrel has no answer text."""
    answer = answer_of(q)
    if not answer:
        return None
    ranking = lib.rank(".", q["question"])
    hits = ranking.hits(10)
    order, rows = ranking.ordered(10)
    for key, h in zip(order, hits, strict=False):
        if h.path == q["path"] and q["line_start"] <= h.line <= q["line_end"]:
            row = rows[key]
            window = ranking.focus_of([key], rows)[key]
            spans = windows.spans(row.text)
            text = row.text
            a, b = spans[window] if window is not None and spans else (0, len(text))
            first = text[: spans[0][1]] if spans else text
            return {
                "id": q["id"],
                "whole": not spans,
                "focus": answer in text[a:b],
                "start": answer in first,
                "shown": answer in focus.shown(text, window),
                "shown_before": answer in cut_text(text),
                "chars": (b - a, len(text)),
            }
    return None


def measure(root: Path, qrels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    settings = Settings.from_env()
    with Library(root, embedder_for(settings, "index"), settings) as lib:
        lib.index()
        return [r for q in qrels if (r := judge_one(lib, q)) is not None]


def summary(label: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per half and in all: n, chunks without windows, each judgement's share, median chars."""
    out = []
    for part in ("tune", "held-back", "all"):
        pick = [r for r in records if part in ("all", half(r["id"]))]
        if pick:
            n = len(pick)
            out.append(
                {"set": label, "half": part, "n": n, "whole": sum(r["whole"] for r in pick)}
                | {k: sum(r[k] for r in pick) / n for k in KEYS}
                | {"focus_chars": statistics.median(r["chars"][0] for r in pick)}
                | {"chunk_chars": statistics.median(r["chars"][1] for r in pick)}
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eval", type=Path, help="../shared/eval")
    ap.add_argument("--limit", type=int, default=0, help="questions per set (0: all)")
    smoke_args(ap)
    args = ap.parse_args()
    if args.smoke:
        scratch = Path(tempfile.mkdtemp(prefix="memo-focus-"))
        os.environ.setdefault("MEMO_INDEX_DIR", str(scratch / "indexes"))
        args.eval = smoke_eval(scratch)
    if args.eval is None:
        ap.error("--eval DIR (../shared/eval) or --smoke")
    os.environ.setdefault("MEMO_INDEX_DIR", str(Path(tempfile.gettempdir()) / "memo-focus-idx"))
    load0 = os.getloadavg()[0]
    out = []
    for lib_dir, qrels_file, label in SETS:
        rows = [json.loads(x) for x in (args.eval / qrels_file).read_text("utf-8").splitlines()]
        if args.limit:
            rows = rows[: args.limit]
        out += summary(label, measure(args.eval / lib_dir, rows))
    record(__file__, "xquad", {"rows": out}, load0, args.smoke)


if __name__ == "__main__":
    main()
