"""Fanned out vs merged: does a search over N collections rank like one index of the same notes?

For each xquad-dev-distract library the script builds a merged twin (the same notes, every
`_meta.yaml` removed and one written at the root: one collection) and scores both with every
mode on the same questions: recall@1, recall@5, MRR@10 (k=10, hits inside the qrel's lines).
The twin's chunks are the same texts, so their vectors are taken from the split library's
index by text hash instead of being embedded again (the same vectors the model gave).

    MEMO_MODEL_DIR=../shared/models/multilingual-e5-small \\
        python bench/federation.py --index-dir /tmp/memo-bench [--questions 632]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np  # noqa: E402
from judged import judge, smoke_args, smoke_eval  # noqa: E402  (bench/ on sys.path)

from memo.caches import digest  # noqa: E402
from memo.collection.vectors import dequantize  # noqa: E402
from memo.config import Settings  # noqa: E402
from memo.embed import Embedder, get_embedder  # noqa: E402
from memo.library import Library  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TASKS = [  # (name, library, qrels)
    ("ru>ru", "ru", "ru.jsonl"),
    ("en>en", "en", "en.jsonl"),
    ("en>ru", "ru", "en-ru.cross.jsonl"),
]
MODES = ("lex", "vec", "hybrid")


class Reuse:
    """The real embedder, answering passages it has seen from a table of stored vectors."""

    def __init__(self, inner: Embedder, known: dict[str, np.ndarray]) -> None:
        self.inner, self.known, self.fresh = inner, known, 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in texts if digest(t.encode()) not in self.known]
        if todo:
            self.fresh += len(todo)
            for t, v in zip(todo, self.inner.embed_passages(todo), strict=True):
                self.known[digest(t.encode())] = v
        return np.vstack([self.known[digest(t.encode())] for t in texts])


def stored_vectors(lib: Library) -> dict[str, np.ndarray]:
    out = {}
    for coll in lib.collections():
        conn = coll.store()[0].conn
        for h, blob in conn.execute(
            "SELECT c.hash, v.embedding FROM chunks c JOIN chunks_vec v ON v.rowid = c.id"
        ):
            out[h] = dequantize(blob)  # int8 codes; written again, the same codes
    return out


def merged_twin(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".memo", "_meta.yaml"))
    (dst / "_meta.yaml").write_text("description: every note in one collection\n")


def depth_study(lib: Library, questions: list[str], depths: Sequence[int]) -> None:
    """The alternative to scoring every posting: each collection's top N by its own bm25(),
    rescored with the scope's statistics. How much of the exhaustive top 10 / top 100 does it
    keep, and what does each cost?"""
    from memo.collection import queries
    from memo.collection.lexical import fts_query, query_terms
    from memo.search.bm25 import Corpus

    colls = lib.collections()
    stores = [c.store()[0] for c in colls]
    kept = {n: [0.0, 0.0] for n in depths}
    t_all, t_local = [], []
    for q in questions:
        terms, match = query_terms(q), fts_query(q)
        if not terms:
            continue
        t = time.perf_counter()
        shares = [queries.lex_share(s, terms) for s in stores]
        corpus = Corpus(terms)
        for rows, tokens, df, _ in shares:
            corpus.add(rows, tokens, df)
        full = [(x, i, c) for (i, c), x in corpus.best([p for *_, p in shares], 10**9)]
        t_all.append(time.perf_counter() - t)
        t = time.perf_counter()
        for s in stores:  # what the leg did before: each collection's own top 100
            s.conn.execute(
                "SELECT rowid, -bm25(chunks_fts) AS x FROM chunks_fts WHERE chunks_fts MATCH ?"
                " ORDER BY x DESC LIMIT 100",
                (match,),
            ).fetchall()
        t_local.append(time.perf_counter() - t)
        best10 = {(i, c) for _, i, c in full[:10]}
        best100 = {(i, c) for _, i, c in full[:100]}
        for n in depths:
            local = set()
            for i, s in enumerate(stores):
                rows = s.conn.execute(
                    "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?"
                    " ORDER BY bm25(chunks_fts) LIMIT ?",
                    (match, n),
                )
                local |= {(i, r[0]) for r in rows}
            mine = sorted(((x, i, c) for x, i, c in full if (i, c) in local), reverse=True)
            kept[n][0] += len(best10 & {(i, c) for _, i, c in mine[:10]}) / max(1, len(best10))
            kept[n][1] += len(best100 & {(i, c) for _, i, c in mine[:100]}) / max(1, len(best100))
    n_q = len(t_all)
    print(
        f"\nexhaustive global scoring: p50 {1000 * float(np.median(t_all)):.1f} ms per question;"
        f" each collection's own top 100 (before): {1000 * float(np.median(t_local)):.1f} ms"
    )
    print("| local depth N | share of the exhaustive top 10 kept | of the top 100 |")
    print("|---:|---:|---:|")
    for n in depths:
        print(f"| {n} | {kept[n][0] / n_q:.4f} | {kept[n][1] / n_q:.4f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    ap.add_argument("--index-dir", default="", help="reuse indexes here (default: a fresh temp)")
    ap.add_argument("--embedder", default=os.environ.get("MEMO_EMBEDDER", "auto"))
    ap.add_argument("--questions", type=int, default=0, help="per task (default: all)")
    ap.add_argument("--depth-study", action="store_true", help="only the local-depth study")
    smoke_args(ap)  # both: the depth study, then the comparison
    args = ap.parse_args()
    eval_dir = Path(args.shared) / "eval" / "xquad-dev-distract"
    scratch = Path(tempfile.mkdtemp(prefix="memo-federation-"))
    if args.smoke:
        eval_dir = smoke_eval(scratch / "smoke") / "xquad-dev-distract"
    index_dir = Path(args.index_dir) if args.index_dir else scratch / "idx"
    emb = get_embedder(args.embedder, os.environ.get("MEMO_MODEL_DIR"))
    print(f"## Fanned out vs merged — embedder {emb.backend}, {time.strftime('%Y-%m-%d')}")
    print(f"load average before: {os.getloadavg()[0]:.2f}\n")
    libs: dict[tuple[str, str], Library] = {}
    if args.depth_study or args.smoke:
        lib = Library(eval_dir / "ru", emb, Settings(index_dir=index_dir))
        rows = (eval_dir / "qrels" / "ru.jsonl").read_text(encoding="utf-8").splitlines()
        rows += (eval_dir / "qrels" / "en-ru.cross.jsonl").read_text(encoding="utf-8").splitlines()
        qs = [json.loads(x)["question"] for x in rows if x.strip()]
        depth_study(lib, qs[: args.questions or None], (10, 25, 50, 100, 200))
        lib.close()
        if args.depth_study:
            return
    try:
        for lang in ("ru", "en"):
            split = Library(eval_dir / lang, emb, Settings(index_dir=index_dir))
            split.index()
            merged_twin(eval_dir / lang, scratch / lang)
            reuse = Reuse(emb, stored_vectors(split))
            merged = Library(scratch / lang, reuse, Settings(index_dir=scratch / f"idx-{lang}"))
            merged.index()
            print(f"{lang}: {len(split.collections())} collections vs 1; {reuse.fresh} re-embedded")
            libs[(lang, "split")], libs[(lang, "merged")] = split, merged
        print("\n| task | mode | fanned out R@1 / R@5 / MRR@10 | merged | max gap |")
        print("|---|---|---|---|---:|")
        for name, lang, qrels_file in TASKS:
            rows = (eval_dir / "qrels" / qrels_file).read_text(encoding="utf-8").splitlines()
            qrels = [json.loads(x) for x in rows if x.strip()]
            if args.questions:
                qrels = qrels[: args.questions]
            for mode in MODES:
                a = judge(libs[(lang, "split")], qrels, mode)
                b = judge(libs[(lang, "merged")], qrels, mode)
                gap = max(abs(x - y) for x, y in zip(a, b, strict=True))
                cells = [" / ".join(f"{v:.3f}" for v in r) for r in (a, b)]
                print(f"| {name} | {mode} | {cells[0]} | {cells[1]} | {gap:.3f} |")
                sys.stdout.flush()
    finally:
        for lib in libs.values():
            lib.close()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
