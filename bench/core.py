"""Core benchmark: no-op re-index, hot search against its raw parts, retrieval.

Each part writes bench/results/core.json (docs/benchmarks.md renders it). One run, one
machine, medians and ratios against baselines measured in the same run.

    python bench/core.py                          # everything, default engine
    python bench/core.py --only search,retrieval --index-dir DIR   # parts: noop, search,
                                                                   # retrieval; indexes kept

A cold index, a rebuild and `--full` are bench/rebuild.py's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from judged import TASKS, engine, judge, pct, record, smoke_args, smoke_eval  # noqa: E402

from memo.collection.lexical import query_terms  # noqa: E402
from memo.collection.matrix import matrix, nearest  # noqa: E402
from memo.collection.reads import lex_share  # noqa: E402
from memo.config import Settings  # noqa: E402
from memo.library import Library  # noqa: E402
from memo.search.fusion import CANDIDATES  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def load_qrels(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def make_notes(top: Path, n_notes: int, per_collection: int = 200) -> None:
    rnd = random.Random(7)
    words = (
        "alpha beta gamma delta сеть маршрут ключ заметка backup vlan docker python кластер диск"
    ).split()
    for i in range(n_notes):
        coll = top / f"area-{i // (per_collection * 10)}" / f"coll-{i // per_collection}"
        if not (coll / "_meta.yaml").exists():
            coll.mkdir(parents=True, exist_ok=True)
            (coll / "_meta.yaml").write_text(f"description: generated collection {coll.name}\n")
        body = "\n\n".join(
            f"## Section {s}\n\n" + " ".join(rnd.choice(words) for _ in range(40)) for s in range(3)
        )
        (coll / f"note-{i}.md").write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")


def bench_noop(n_notes: int, scratch: Path) -> dict:
    """A fresh Library's `index()` when nothing changed: discovery, every database opened, a
    stat per note, one SELECT of each files table (built lexically: a no-op never embeds)."""
    top = scratch / "noop-notes"
    make_notes(top, n_notes)
    settings = Settings(index_dir=scratch / "noop-idx")
    t = time.perf_counter()
    Library(top, None, settings).index()
    build = time.perf_counter() - t
    runs = []
    for _ in range(5):
        lib = Library(top, None, settings)
        t = time.perf_counter()
        rep = lib.index()
        runs.append(time.perf_counter() - t)
        assert rep.totals()["nothing_to_do"], rep.totals()
        lib.close()
    colls = len(Library(top, None, settings).collections())
    return {
        "notes": n_notes,
        "collections": colls,
        "build_s": build,
        "median_s": statistics.median(runs),
        "min_s": min(runs),
    }


def bench_search(lib: Library, eval_dir: Path, n_queries: int) -> dict:
    """Warm searches of xquad-dev-distract/ru in each mode, and their raw parts: the query's
    embedding, each leg's SQL summed over the collections, the catch-up's stat walk."""
    qrels = eval_dir / "xquad-dev-distract/qrels"
    qs = [q["question"] for f in ("ru", "en-ru.cross") for q in load_qrels(qrels / f"{f}.jsonl")]
    random.Random(1).shuffle(qs)
    qs = qs[:n_queries]
    emb = lib.embedder
    colls = lib.collections()
    for q in qs[:5]:  # warm: model, page cache, connections
        lib.search(".", q, k=8)
    stores = [c.store()[0] for c in colls]
    parts: dict[str, list[float]] = {"embed": [], "lex_sql": [], "knn": [], "catchup": []}
    for q in qs:
        t = time.perf_counter()
        qv = emb.embed_query(q)
        parts["embed"].append(time.perf_counter() - t)
        terms = query_terms(q)
        t = time.perf_counter()
        for s in stores:
            lex_share(s, terms)
        parts["lex_sql"].append(time.perf_counter() - t)
        t = time.perf_counter()
        for s in stores:  # the vector leg's scan: each index's matrix in memory (warm)
            nearest(matrix(s), s, [qv], CANDIDATES)
        parts["knn"].append(time.perf_counter() - t)
        t = time.perf_counter()
        for c in colls:
            c.sync()
        parts["catchup"].append(time.perf_counter() - t)
    modes = {}
    for mode in ("hybrid", "lex", "vec"):
        times = []
        for q in qs:
            t = time.perf_counter()
            lib.search(".", q, k=8, mode=mode)
            times.append(time.perf_counter() - t)
        modes[mode] = {"p50": 1000 * statistics.median(times), "p95": 1000 * pct(times, 95)}
    raw = {k: 1000 * statistics.median(v) for k, v in parts.items()}
    return {
        "engine": emb.backend,
        "collections": len(colls),
        "questions": len(qs),
        "chunks": sum(c.status().chunks for c in colls),
        "raw_ms": raw,
        "modes": modes,
    }


def bench_retrieval(eval_dir: Path, embedder, index_dir: Path, tasks: list[str]) -> dict:
    out = []
    libs: dict[str, Library] = {}
    for name, lib_rel, qrels_rel in TASKS:
        if tasks and name not in tasks:
            continue
        lib = libs.setdefault(
            lib_rel, Library(eval_dir / lib_rel, embedder, Settings(index_dir=index_dir))
        )
        lib.index()
        qrels = load_qrels(eval_dir / qrels_rel)
        res = {m: judge(lib, qrels, m) for m in ("hybrid", "lex", "vec")}
        out.append({"task": name, "questions": len(qrels), **res})
        print(name, res, flush=True)
    return {"engine": embedder.backend, "tasks": out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    ap.add_argument("--embedder", default=os.environ.get("MEMO_EMBEDDER", "auto"))
    ap.add_argument("--only", default="noop,search,retrieval")
    ap.add_argument("--notes", type=int, default=10_000, help="notes for the no-op re-index")
    ap.add_argument("--queries", type=int, default=200, help="questions for hot search")
    ap.add_argument("--tasks", default="", help="retrieval tasks, comma-separated (default all)")
    ap.add_argument("--index-dir", default="", help="reuse indexes here (default: a fresh temp)")
    smoke_args(ap)
    args = ap.parse_args()
    parts = set(args.only.split(","))
    eval_dir = Path(args.shared) / "eval"
    scratch = Path(tempfile.mkdtemp(prefix="memo-bench-"))
    if args.smoke:
        eval_dir, args.notes, args.queries = smoke_eval(scratch), 20, 4
    index_dir = Path(args.index_dir) if args.index_dir else scratch / "idx"
    embedder = engine(args.embedder, os.environ.get("MEMO_MODEL_DIR"))

    def run(part: str, measure) -> None:
        if part in parts:
            load0 = os.getloadavg()[0]
            record(__file__, part, measure(), load0, args.smoke)

    def searched() -> dict:
        root = eval_dir / "xquad-dev-distract" / "ru"
        with Library(root, embedder, Settings(index_dir=index_dir)) as lib:
            lib.index()
            return bench_search(lib, eval_dir, args.queries)

    tasks = [t for t in args.tasks.split(",") if t]
    try:
        run("noop", lambda: bench_noop(args.notes, scratch))
        run("search", searched)
        run("retrieval", lambda: bench_retrieval(eval_dir, embedder, index_dir, tasks))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
