"""Scope `*` over many small collections: the federated search's per-collection cost.

Generates N collections of 2 short notes each (cached under --scratch), indexes them, then times
warm `search("*", q)` in lexical and hybrid mode and `--route 5`, in-process, and the sum of the
same per-collection searches run one by one. Writes bench/results/scope_star.json.

    python bench/scope_star.py --collections 1000
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from judged import engine, record, smoke_args  # noqa: E402  (bench/ is on sys.path)

from memo.config import Settings  # noqa: E402
from memo.library import Library  # noqa: E402

WORDS = (
    "alpha beta gamma delta kafka broker lag vlan routing bread sourdough jira query index "
    "vector search note folder disk memory"
).split()
QUESTIONS = [
    "kafka consumer lag",
    "sourdough bread starter",
    "vlan routing table",
    "disk memory usage",
    "alpha beta gamma",
    "index vector search",
    "jira query broker",
    "folder note delta",
    "memory note",
    "gamma delta vlan",
]


def make(root: Path, n: int) -> None:
    rng = random.Random(1)
    for i in range(n):
        c = root / f"g{i // 100}" / f"c{i:05d}"
        if (c / "_meta.yaml").exists():
            continue
        c.mkdir(parents=True, exist_ok=True)
        (c / "_meta.yaml").write_text(
            f"description: collection {i} about {' '.join(rng.sample(WORDS, 3))}\n"
        )
        for j in range(2):
            body = " ".join(rng.choice(WORDS) for _ in range(80))
            part = " ".join(rng.choice(WORDS) for _ in range(60))
            (c / f"n{j}.md").write_text(f"# Note {i} {j}\n\n{body}\n\n## Part\n\n{part}\n")


def p50(lib: Library, **kw: object) -> float:
    times = []
    for q in QUESTIONS:
        t = time.perf_counter()
        lib.search("*", q, **kw)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--embedder", default=os.environ.get("MEMO_EMBEDDER", "auto"))
    ap.add_argument("--collections", type=int, default=1000)
    ap.add_argument(
        "--scratch", type=Path, default=Path(tempfile.gettempdir()) / "memo-bench-scope"
    )
    ap.add_argument("--root", type=Path, help="an existing library made by this script")
    ap.add_argument("--index-dir", type=Path, help="where its indexes are (MEMO_INDEX_DIR)")
    smoke_args(ap)  # 6 collections
    args = ap.parse_args()
    if args.smoke:
        args.collections, args.scratch = 6, Path(tempfile.mkdtemp(prefix="memo-smoke-"))
    root = args.root or args.scratch / f"lib-{args.collections}"
    make(root, args.collections)
    index_dir = args.index_dir or args.scratch / f"idx-{args.embedder}-{args.collections}"
    settings = Settings(index_dir=index_dir)
    embedder = (
        None if args.embedder == "none" else engine(args.embedder, os.environ.get("MEMO_MODEL_DIR"))
    )
    load0 = os.getloadavg()[0]
    lib = Library(root, embedder, settings)
    t = time.perf_counter()
    lib.index()
    indexed = time.perf_counter() - t
    files = [f for f in index_dir.rglob("index.db*") if not f.name.endswith("-shm")]
    lib.search("*", "warm up")
    data = {
        "collections": args.collections,
        "engine": embedder.backend if embedder else "none",
        "index_s": indexed,
        "index_mb": sum(f.stat().st_size for f in files) / 1e6,
        "lex_ms": p50(lib, mode="lex"),
        "hybrid_ms": p50(lib),
        "route5_ms": p50(lib, route=5),
    }
    colls = [c.rel for c in lib.collections()]
    sums = []
    for q in QUESTIONS[:3]:
        t = time.perf_counter()
        for rel in colls:
            lib.search(rel, q)
        sums.append((time.perf_counter() - t) * 1000)
    data["one_by_one_ms"] = statistics.median(sums)
    record(__file__, "star", data, load0, args.smoke)


if __name__ == "__main__":
    main()
