"""Core benchmark: indexing cost, no-op re-index, hot search against its raw parts, retrieval.

Prints markdown tables (the source of docs/benchmarks.md). One run, one machine, medians and
ratios against baselines measured in the same run. Nothing here is a pass/fail test.

    python bench/core.py                          # everything, default embedder
    python bench/core.py --embedder fastembed     # with MEMO_MODEL_DIR=../shared/models/...
    python bench/core.py --only search,retrieval  # parts: cold, noop, search, retrieval
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

from fusion import TASKS  # noqa: E402  (bench/ is on sys.path when run as a script)
from judged import judge, pct, smoke_args, smoke_eval  # noqa: E402

from memo.collection.lexical import fts_query  # noqa: E402
from memo.collection.vectors import quantize  # noqa: E402
from memo.config import Settings  # noqa: E402
from memo.embed import get_embedder  # noqa: E402
from memo.library import Library  # noqa: E402
from memo.search.fusion import CANDIDATES  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def ms(v: float) -> str:
    return f"{v:.1f}"


def load_qrels(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


# ---------------------------------------------------------------------------- cold index
def bench_cold(eval_dir: Path, embedder, index_dir: Path) -> None:
    root = eval_dir / "xquad-dev-distract" / "ru"
    settings = Settings(index_dir=index_dir)
    lib = Library(root, embedder, settings)
    t = time.perf_counter()
    rep = lib.index()
    wall = time.perf_counter() - t
    tot = rep.totals()
    chunks = sum(c.status().chunks for c in lib.collections())
    print("\n### Cold index: xquad-dev-distract/ru\n")
    print("| notes | chunks | seconds | inside the embedder | chunks/s |")
    print("|---:|---:|---:|---:|---:|")
    print(
        f"| {tot['new']} | {chunks} | {wall:.1f} | {tot['embed_seconds'] / wall:.1%} "
        f"| {chunks / wall:.1f} |"
    )
    lib.close()


# ---------------------------------------------------------------------------- no-op re-index
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


def bench_noop(n_notes: int, scratch: Path) -> None:
    top = scratch / "noop-notes"
    make_notes(top, n_notes)
    settings = Settings(index_dir=scratch / "noop-idx")
    # Lexical-only build: a no-op pass never embeds, so the model does not change what it costs.
    t = time.perf_counter()
    Library(top, None, settings).index()
    build = time.perf_counter() - t
    runs = []
    for _ in range(5):
        lib = Library(top, None, settings)  # a fresh process's view: discovery + open + compare
        t = time.perf_counter()
        rep = lib.index()
        runs.append(time.perf_counter() - t)
        assert rep.totals()["nothing_to_do"], rep.totals()
        lib.close()
    colls = len(Library(top, None, settings).collections())
    print(f"\n### No-op re-index: {n_notes} notes in {colls} collections\n")
    print("| first (lexical) build s | no-op median s | no-op min s |")
    print("|---:|---:|---:|")
    print(f"| {build:.1f} | {statistics.median(runs):.3f} | {min(runs):.3f} |")


# ---------------------------------------------------------------------------- hot search
def bench_search(lib: Library, eval_dir: Path, n_queries: int) -> None:
    qs = [q["question"] for q in load_qrels(eval_dir / "xquad-dev-distract/qrels/ru.jsonl")]
    qs += [
        q["question"] for q in load_qrels(eval_dir / "xquad-dev-distract/qrels/en-ru.cross.jsonl")
    ]
    random.Random(1).shuffle(qs)
    qs = qs[:n_queries]
    emb = lib.embedder
    colls = lib.collections()
    for q in qs[:5]:  # warm: model, page cache, connections
        lib.search(".", q, k=8)
    conns = [c.store()[0].conn for c in colls]
    t_embed, t_fts, t_knn, t_sync = [], [], [], []
    for q in qs:
        t = time.perf_counter()
        qv = emb.embed_query(q)
        t_embed.append(time.perf_counter() - t)
        match = fts_query(q)
        t = time.perf_counter()
        for conn in conns:
            conn.execute(
                "SELECT rowid, -bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?"
                " ORDER BY rank LIMIT ?",
                (match, CANDIDATES),
            ).fetchall()
        t_fts.append(time.perf_counter() - t)
        t = time.perf_counter()
        for conn in conns:
            conn.execute(
                "SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH vec_int8(?)"
                " AND k = ?",
                (quantize(qv).tobytes(), CANDIDATES),
            ).fetchall()
        t_knn.append(time.perf_counter() - t)
        t = time.perf_counter()
        for c in colls:
            c.sync()
        t_sync.append(time.perf_counter() - t)
    modes = {}
    for mode in ("hybrid", "lex", "vec"):
        times = []
        for q in qs:
            t = time.perf_counter()
            lib.search(".", q, k=8, mode=mode)
            times.append(time.perf_counter() - t)
        modes[mode] = times
    med = {
        k: statistics.median(v) * 1000
        for k, v in {"embed": t_embed, "fts": t_fts, "knn": t_knn, "sync": t_sync}.items()
    }
    parts = med["embed"] + med["fts"] + med["knn"]
    print(
        f"\n### Hot search, in-process: xquad-dev-distract/ru ({len(colls)} collections), "
        f"{len(qs)} questions (ru and en), k=8\n"
    )
    print("| raw part | median ms |")
    print("|---|---:|")
    print(f"| one query embedding ({emb.backend}) | {ms(med['embed'])} |")
    print(f"| FTS5 BM25 query, top {CANDIDATES}, summed over the collections | {ms(med['fts'])} |")
    print(f"| vec0 KNN, k={CANDIDATES}, summed over the collections | {ms(med['knn'])} |")
    print(f"| **sum of raw parts** | **{ms(parts)}** |")
    print(
        f"| catch-up when nothing changed (stat + compare, all collections) | {ms(med['sync'])} |"
    )
    print("\n| mode | p50 ms | p95 ms | p50 / sum of raw parts |")
    print("|---|---:|---:|---:|")
    for mode, times in modes.items():
        p50 = statistics.median(times) * 1000
        print(f"| {mode} | {ms(p50)} | {ms(pct(times, 95) * 1000)} | {p50 / parts:.2f} |")


# ---------------------------------------------------------------------------- retrieval


def bench_retrieval(eval_dir: Path, embedder, index_dir: Path, tasks: list[str]) -> None:
    print("\n### Retrieval (recall@1 / recall@5 / MRR@10)\n")
    print("| task | questions | hybrid | lex | vec | hybrid ≥ best leg |")
    print("|---|---:|---|---|---|---|")
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
        ok = all(res["hybrid"][i] >= max(res["lex"][i], res["vec"][i]) - 1e-9 for i in (1, 2))
        cells = " | ".join(f"{r[0]:.3f} / {r[1]:.3f} / {r[2]:.3f}" for r in res.values())
        print(f"| {name} | {len(qrels)} | {cells} | {'yes' if ok else 'NO'} |")
        sys.stdout.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    ap.add_argument("--embedder", default=os.environ.get("MEMO_EMBEDDER", "auto"))
    ap.add_argument("--only", default="cold,noop,search,retrieval")
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
    embedder = get_embedder(args.embedder, os.environ.get("MEMO_MODEL_DIR"))
    print(
        f"## memo core benchmark — embedder {embedder.backend}, {os.cpu_count()} cores, "
        f"{time.strftime('%Y-%m-%d')}"
    )
    try:
        if "cold" in parts:
            bench_cold(eval_dir, embedder, scratch / "cold-idx")  # always from nothing
        if "noop" in parts:
            bench_noop(args.notes, scratch)
        if "search" in parts:
            lib = Library(
                eval_dir / "xquad-dev-distract" / "ru", embedder, Settings(index_dir=index_dir)
            )
            lib.index()
            bench_search(lib, eval_dir, args.queries)
        if "retrieval" in parts:
            tasks = [t for t in args.tasks.split(",") if t]
            bench_retrieval(eval_dir, embedder, index_dir, tasks)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
