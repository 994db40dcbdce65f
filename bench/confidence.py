"""Calibrating "is there a good match at all?" on answerable and negative questions.

Answerable: each xquad-dev question asked of its whole library (its article is in it).
Negative: the same question asked of another collection of the same library (its article is
not there) — and, on the distract set, of the documentation collections. For every search the
script records the signals `search.confidence` reads, then prints how each rule in a small grid
splits the two sets, and the rates of the rule memo ships.

    python bench/confidence.py                 # default embedder, cached indexes
    python bench/confidence.py --dump /tmp/conf.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memo.config import Settings  # noqa: E402
from memo.embed import get_embedder  # noqa: E402
from memo.library import Library  # noqa: E402
from memo.search.confidence import confidence, signals  # noqa: E402
from memo.search.fusion import CANDIDATES  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SETS = [
    # (library, qrels, negative targets: question's collection -> collections asked instead)
    ("xquad-dev/ru", "xquad-dev/qrels/ru.jsonl", "others"),
    ("xquad-dev/en", "xquad-dev/qrels/en.jsonl", "others"),
    ("xquad-dev/ru", "xquad-dev/qrels/en-ru.cross.jsonl", "others"),
    ("xquad-dev-distract/ru", "xquad-dev-distract/qrels/ru.jsonl", "docs"),
    ("xquad-dev-distract/en", "xquad-dev-distract/qrels/en.jsonl", "docs"),
]


def collect(eval_dir: Path, embedder, index_dir: Path, limit: int) -> list[dict]:
    rows = []
    for lib_rel, qrels_rel, kind in SETS:
        lib = Library(eval_dir / lib_rel, embedder, Settings(index_dir=index_dir))
        lib.index()
        colls = sorted(c.rel for c in lib.collections())
        qrels = [json.loads(x) for x in (eval_dir / qrels_rel).read_text().splitlines() if x]
        qrels = qrels[:: max(1, len(qrels) // limit)][:limit]
        for i, q in enumerate(qrels):
            own = "/".join(q["path"].split("/")[:2])
            others = [c for c in colls if c != own]
            if kind == "docs":
                others = [c for c in others if "docs-" in c]
            neg = others[i % len(others)]
            for target, answerable in ((".", True), (neg, False)):
                _, legs = lib._legs(target, q["question"], "hybrid", CANDIDATES)
                s = signals(legs)
                s.update(set=f"{lib_rel}:{Path(qrels_rel).stem}", answerable=answerable)
                rows.append(s)
        lib.close()
    return rows


def rates(rows: list[dict], **kw) -> tuple[float, float]:
    neg = [r for r in rows if not r["answerable"]]
    pos = [r for r in rows if r["answerable"]]
    none_neg = sum(confidence(r, **kw) == "none" for r in neg) / len(neg)
    none_pos = sum(confidence(r, **kw) == "none" for r in pos) / len(pos)
    return none_neg, none_pos


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--embedder", default=os.environ.get("MEMO_EMBEDDER", "auto"))
    ap.add_argument("--eval", type=Path, default=REPO.parent / "shared" / "eval")
    ap.add_argument("--index-dir", type=Path, default=Path("/tmp/memo-bench-idx"))
    ap.add_argument("--limit", type=int, default=200, help="questions per set")
    ap.add_argument("--dump", type=Path)
    ap.add_argument("--load", type=Path, help="reuse a dump instead of searching")
    args = ap.parse_args()
    if args.load:
        rows = [json.loads(x) for x in args.load.read_text().splitlines() if x]
    else:
        rows = collect(args.eval, get_embedder(args.embedder), args.index_dir, args.limit)
    if args.dump:
        args.dump.write_text("".join(json.dumps(r) + "\n" for r in rows))

    print("| set | answerable flagged none | negative flagged none |")
    print("|---|---:|---:|")
    for name in sorted({r["set"] for r in rows}):
        part = [r for r in rows if r["set"] == name]
        nn, np_ = rates(part)
        print(f"| {name} | {np_:.1%} | {nn:.1%} |")
    nn, np_ = rates(rows)
    n_pos = sum(r["answerable"] for r in rows)
    print(f"| all ({n_pos} answerable, {len(rows) - n_pos} negative) | {np_:.1%} | {nn:.1%} |")
    print("\nneighbourhood, gap_floor × vec_floor: negative→none / answerable→none")
    for gf in (0.035, 0.04, 0.045):
        cells = []
        for vf in (0.80, 0.82, 0.84):
            nn, np_ = rates(rows, gap_floor=gf, vec_floor=vf)
            cells.append(f"{vf}: {nn:.0%}/{np_:.1%}")
        print(f"  gap {gf}: " + "  ".join(cells))


if __name__ == "__main__":
    main()
