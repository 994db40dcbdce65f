"""Does a hit's focus (search/focus.py) hold the answer? XQuAD's answers, to the character.

The vault benchmark judges sections, and a hit's focus lies inside its section by
construction; XQuAD's qrels carry each question's answer as text (`answer`, and for the
English questions of the Russian library `answer_library_lang`), so here the question is
whether the three sentences memo points at hold it. For each question whose hits (k=10) hold
its paragraph, the first such hit's chunk is read and judged four ways:

- `focus`: the answer is in the focus window's sentences;
- `start`: the answer is in the chunk's first window (the same three sentences read from the
  top: what a reader without a focus reads first);
- `shown` / `shown before`: the answer is in the text the hit carries (focus.shown), and in the
  chunk's first TEXT_LIMIT characters alone (the text before the focus);
- `chars`: the focus's length against the chunk's, median.

Chunks of three sentences or fewer have no windows: their focus is the whole chunk (counted in
`whole`, and in every share as a hit). Reported per half of a seeded hash of the question id
(nothing here was tuned on either: the window size and stride are collection/windows.py's).

    MEMO_INDEX_DIR=SCRATCH python bench/focus.py --eval ../shared/eval
    python bench/focus.py --smoke
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

from judged import inside, smoke_args, smoke_eval  # noqa: E402  (bench/ is on sys.path)

from memo.collection import windows  # noqa: E402
from memo.config import Settings  # noqa: E402
from memo.embed import embedder_for  # noqa: E402
from memo.library import Library  # noqa: E402
from memo.search import focus  # noqa: E402
from memo.search.fusion import CANDIDATES  # noqa: E402
from memo.search.ranking import rank  # noqa: E402
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
    ins = inside(lib)
    ranking = rank(ins.resolve("."), q["question"], "hybrid", ins.vectors, CANDIDATES)
    hits = ranking.hits(10)
    order, rows = ranking._ordered(10)
    for key, h in zip(order, hits, strict=False):
        if h.path == q["path"] and q["line_start"] <= h.line <= q["line_end"]:
            row = rows[key]
            window = ranking._focus([key], rows)[key]
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


def report(label: str, records: list[dict[str, Any]]) -> None:
    for part in ("tune", "held-back", "all"):
        pick = [r for r in records if part in ("all", half(r["id"]))]
        if not pick:
            continue
        n = len(pick)
        cells = " | ".join(f"{sum(r[k] for r in pick) / n:.3f}" for k in KEYS)
        focus_chars = statistics.median(r["chars"][0] for r in pick)
        chunk_chars = statistics.median(r["chars"][1] for r in pick)
        whole = sum(r["whole"] for r in pick)
        print(
            f"| {label} | {part} | {n} | {whole} | {cells} | "
            f"{focus_chars:.0f} / {chunk_chars:.0f} |"
        )


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
    print(
        "| set | half | n | whole chunk | answer in focus | in first window | "
        "in shown text | in shown text before | chars: focus / chunk (median) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for lib_dir, qrels_file, label in SETS:
        rows = [json.loads(x) for x in (args.eval / qrels_file).read_text("utf-8").splitlines()]
        if args.limit:
            rows = rows[: args.limit]
        report(label, measure(args.eval / lib_dir, rows))
    if args.smoke:
        print("smoke: ok")


if __name__ == "__main__":
    main()
