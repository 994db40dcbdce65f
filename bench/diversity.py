"""Diversity (a note's extra hits held back while other notes match comparably,
search/diversity.py): recall@5 and MRR@10 with and without it, on every dev task, in one run.
The target is "never lowers recall@5". Writes bench/results/diversity.json.

    python bench/diversity.py --index-dir DIR [--tasks "ru>ru,D ru>ru"] [--limit 300]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from judged import TASKS, engine, rank_of, record, smoke_args, smoke_eval  # noqa: E402

from memo.config import Settings  # noqa: E402
from memo.library import Library  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--embedder", default=os.environ.get("MEMO_EMBEDDER", "auto"))
    ap.add_argument("--eval", type=Path, default=REPO.parent / "shared" / "eval")
    ap.add_argument(
        "--index-dir", type=Path, default=Path(tempfile.gettempdir()) / "memo-bench-idx"
    )
    ap.add_argument("--tasks", default="")
    ap.add_argument("--limit", type=int, default=0, help="questions per task (0 = all)")
    smoke_args(ap)
    args = ap.parse_args()
    if args.smoke:
        args.eval = smoke_eval(Path(tempfile.mkdtemp(prefix="memo-smoke-")))
        args.index_dir = args.eval.parent / "indexes"
    embedder = engine(args.embedder, os.environ.get("MEMO_MODEL_DIR"))
    load0 = os.getloadavg()[0]
    libs: dict[str, Library] = {}
    rows = []
    for name, lib_rel, qrels_rel in TASKS:
        if args.tasks and name not in args.tasks.split(","):
            continue
        lib = libs.setdefault(
            lib_rel, Library(args.eval / lib_rel, embedder, Settings(index_dir=args.index_dir))
        )
        lib.index()
        qrels = [json.loads(x) for x in (args.eval / qrels_rel).read_text().splitlines() if x]
        if args.limit:
            qrels = qrels[:: max(1, len(qrels) // args.limit)][: args.limit]
        r5 = {False: 0, True: 0}
        mrr = {False: 0.0, True: 0.0}
        notes = {False: 0, True: 0}
        for q in qrels:
            for diverse in (False, True):
                hits10 = lib.search(".", q["question"], k=10, diverse=diverse).hits
                hits5 = lib.search(".", q["question"], k=5, diverse=diverse).hits
                r = rank_of(hits5, q)
                r5[diverse] += r is not None
                r10 = rank_of(hits10, q)
                mrr[diverse] += 1 / r10 if r10 else 0.0
                notes[diverse] += len({h.path for h in hits5})
        n = len(qrels)
        rows.append(
            {
                "task": name,
                "questions": n,
                **{
                    f"{k}_{'on' if on else 'off'}": v[on] / n
                    for k, v in (("r5", r5), ("mrr", mrr), ("notes", notes))
                    for on in (False, True)
                },
            }
        )
    record(__file__, "dev", {"engine": embedder.backend, "tasks": rows}, load0, args.smoke)


if __name__ == "__main__":
    main()
