"""Routing and federated search figures (docs/benchmarks.md, "Routing").

    MEMO_MODEL_DIR=../shared/models/multilingual-e5-small python bench/router.py [--big 100000]

Generates libraries from xquad-dev topics (tests/genlib.py) in a temp folder and measures:
registry rebuild at --big collections (lexical part; the description-embedding rate is measured
on the 1,000 library and extrapolated), route latency p50/p95 at 50, 5,000 and --big (the last
also with the summary shortlist plus the evidence search over it), routing accuracy on the
xquad-dev questions (top 1 / top 5), scope `*` over 1,000 small collections next to the same
per-collection searches run one by one, and `--route 5`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from memo.collection.lexical import lex_text  # noqa: E402
from memo.config import Settings  # noqa: E402
from memo.embed import get_embedder  # noqa: E402
from memo.library import Library, routing, syncing  # noqa: E402
from memo.router import route as router_route  # noqa: E402
from memo.router import vectors as router_vectors  # noqa: E402
from tests import genlib  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judged import inside, pct, smoke_args, smoke_eval  # noqa: E402

MERGE_MIN = router_vectors.MERGE_MIN


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.standard_normal((n, 384)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def fake_vectors(lib: Library, content: bool = False) -> None:
    """Unit vectors for every description (and content centroid): the vector leg's cost
    without embedding 100k texts."""
    reg = lib.registry
    rng = np.random.default_rng(0)
    n = len(reg.entries)
    reg._vectors = (_unit(rng, n), np.ones(n, dtype=bool))
    if content:
        reg._content = (_unit(rng, n), np.ones(n, dtype=bool))
    reg.derived.clear()  # what the router derived from the old vectors


def fake_content(lib: Library, terms: int) -> float:
    """Give every collection a `body` of `terms` content stems drawn (Zipf) from the xquad
    articles' vocabulary: the router's FTS as big as a library whose every collection is
    indexed. Returns the seconds it took."""
    reg = lib.registry
    vocab: dict[str, int] = {}
    for a in genlib.articles():
        for t in lex_text(a.text).split():
            vocab[t] = vocab.get(t, 0) + 1
    words = sorted(vocab, key=lambda w: -vocab[w])
    p = 1.0 / np.arange(1, len(words) + 1)
    p /= p.sum()
    rng = np.random.default_rng(1)
    conn = reg.store.conn
    t = time.perf_counter()
    with conn:
        for e in reg.entries:
            body = " ".join(words[i] for i in np.unique(rng.choice(len(words), terms, p=p)))
            conn.execute("DELETE FROM colls_fts WHERE rowid=?", (e.id,))
            conn.execute(
                "INSERT INTO colls_fts(rowid, lex, body) VALUES (?, ?, ?)",
                (e.id, lex_text(e.doc_text()), body),
            )
    return time.perf_counter() - t


def route_latency(lib: Library, qs: list[str], strategy: str | None = None) -> tuple[float, float]:
    for q in qs[:5]:
        lib.route(q, k=5, strategy=strategy)
    ts = []
    for q in qs:
        t = time.perf_counter()
        lib.route(q, k=5, strategy=strategy)
        ts.append(time.perf_counter() - t)
    return 1000 * pct(ts, 50), 1000 * pct(ts, 95)


def accuracy(lib: Library, qs: list[genlib.Question]) -> tuple[float, float, str]:
    top1 = top5 = 0
    strategy = ""
    for q in qs:
        r = lib.route(q.text, k=5)
        strategy = r.strategy
        paths = [c.path for c in r.collections]
        top1 += paths[:1] == [q.home]
        top5 += q.home in paths[:5]
    return top1 / len(qs), top5 / len(qs), strategy


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", type=int, default=100_000)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument(
        "--sample",
        type=int,
        default=0,
        help="score routing accuracy on every Nth question only (a route over 1,000 "
        "collections searches all of them since issue 16: ~0.4 s; 5 passes of 1,264 = 40 min)",
    )
    smoke_args(ap)  # every part at 12 / 5 / 20 / 30 collections
    args = ap.parse_args()
    small, flat, tree = 1000, 50, 5000  # the libraries' sizes (collections)
    if args.smoke:
        small, flat, tree, args.big, args.queries = 12, 5, 20, 30, 4
        args.backend = os.environ.get("MEMO_EMBEDDER", args.backend)
        genlib.XQUAD = smoke_eval(Path(tempfile.mkdtemp(prefix="memo-smoke-"))) / "xquad-dev"
    emb = get_embedder(args.backend, os.environ.get("MEMO_MODEL_DIR"))
    print(f"embedder: {emb.backend}")
    tmp = Path(tempfile.mkdtemp(prefix="memo-router-bench-"))
    settings = Settings(index_dir=tmp / "indexes")

    # ---- 1,000 small collections with notes: accuracy, scope *, --route, embedding rate
    root = tmp / "lib1000"
    homes = genlib.generate(root, small, notes=True)
    qs = genlib.questions(homes)
    texts = [q.text for q in qs]
    if args.sample > 1:
        qs = qs[:: args.sample]
    lib = Library(root, emb, settings)
    rep = lib.rebuild_registry(write_yaml=False)  # descriptions only (no index yet)
    rate = rep.embedded / rep.embed_seconds if rep.embed_seconds else float("nan")
    print(f"1000: registry {rep.seconds:.1f} s, {rep.embedded} descriptions at {rate:.0f}/s")
    a1, a5, st = accuracy(lib, qs)
    print(f"1000 descriptions only [{st}]: top1 {a1:.3f} top5 {a5:.3f} ({len(qs)} questions)")
    t = time.perf_counter()
    lib.index()
    print(f"1000: indexed in {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    lib.rebuild_registry(write_yaml=False)  # now with the notes' headings and content
    print(f"1000: registry rebuild with index stats + content {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    lib.rebuild_registry(write_yaml=False)
    print(f"1000: again, no index moved {time.perf_counter() - t:.2f} s")
    router_route.CONTENT = False
    a1, a5, st = accuracy(lib, qs)
    print(f"1000 descriptions+headings [{st}]: top1 {a1:.3f} top5 {a5:.3f}")
    router_route.CONTENT = True
    a1, a5, st = accuracy(lib, qs)
    print(f"1000 descriptions+headings+content [{st}]: top1 {a1:.3f} top5 {a5:.3f}")
    for name, sub in (("even", qs[0::2]), ("odd", qs[1::2])):
        a1, a5, st = accuracy(lib, sub)
        print(f"1000 +content, {name} half: top1 {a1:.3f} top5 {a5:.3f}")
    router_vectors.MERGE_MIN = 0  # the rule used from MERGE_MIN collections on, measured here
    lib.registry.derived.clear()
    a1, a5, st = accuracy(lib, qs)
    print(
        f"1000 +content, merged vectors (the rule above {MERGE_MIN}): top1 {a1:.3f} top5 {a5:.3f}"
    )
    router_vectors.MERGE_MIN = MERGE_MIN
    lib.registry.derived.clear()
    p50, p95 = route_latency(lib, texts[: args.queries])
    print(f"1000 route: p50 {p50:.1f} ms p95 {p95:.1f} ms")
    sample = texts[:: max(1, len(texts) // 20)][:20]
    star, one_by_one = [], []
    for q in sample:
        t = time.perf_counter()
        lib.search("*", q, k=8)
        star.append(time.perf_counter() - t)
    colls = lib.collections()
    for q in sample[:5]:
        t = time.perf_counter()
        for c in colls:
            lib.search(c.rel, q, k=8)
        one_by_one.append(time.perf_counter() - t)
    print(
        f"1000 scope *: p50 {1000 * pct(star, 50):.0f} ms p95 {1000 * pct(star, 95):.0f} ms; "
        f"1000 searches one by one: p50 {1000 * pct(one_by_one, 50):.0f} ms"
    )
    routed = []
    right = 0
    for q in [x for x in qs][:: max(1, len(qs) // 60)]:
        t = time.perf_counter()
        res = lib.search("*", q.text, k=8, route=5)
        routed.append(time.perf_counter() - t)
        right += any(h.path.startswith(q.home + "/") for h in res.hits[:5])
    print(
        f"1000 --route 5: p50 {1000 * pct(routed, 50):.0f} ms p95 {1000 * pct(routed, 95):.0f} ms; "
        f"answer's collection in top-5 hits for {right}/{len(routed)}"
    )
    lib.close()

    # ---- 50 and 5,000: route latency (descriptions embedded for 50; vectors faked at 5,000)
    for n in (flat, tree):
        root = tmp / f"lib{n}"
        genlib.generate(root, n)
        lib = Library(root, emb, settings)
        lib.rebuild_registry(write_yaml=False, embed=n <= flat)
        if n > flat:
            fake_vectors(lib)
        p50, p95 = route_latency(lib, texts[: args.queries])
        print(f"{n} route [{lib.route('x').strategy}]: p50 {p50:.1f} ms p95 {p95:.1f} ms")
        lib.close()

    if not args.big:  # --big 0: the 50 / 1,000 / 5,000 figures only
        print(f"(libraries left in {tmp}; delete it)")
        return
    # ---- big: rebuild (lexical), lexical accuracy, latency with the vector leg's real cost
    root = tmp / f"lib{args.big}"
    t = time.perf_counter()
    homes = genlib.generate(root, args.big)
    print(f"{args.big}: generated in {time.perf_counter() - t:.0f} s")
    lib = Library(root, emb, settings)
    rep = lib.rebuild_registry(embed=False)
    print(
        f"{args.big}: registry rebuild {rep.seconds:.1f} s (walk {rep.walk_seconds:.1f} s), "
        f"yaml written; embedding {args.big} descriptions at {rate:.0f}/s would add "
        f"{args.big / rate:.0f} s"
    )
    t = time.perf_counter()
    rep = lib.rebuild_registry(embed=False, write_yaml=False)
    print(f"{args.big}: rescan with nothing changed {time.perf_counter() - t:.1f} s")
    qs = genlib.questions(homes)[:: max(1, args.sample)]
    a1, a5, st = accuracy(lib, qs)
    print(f"{args.big} lexical only [{st}]: top1 {a1:.3f} top5 {a5:.3f}")
    p50, p95 = route_latency(lib, texts[: args.queries])
    print(f"{args.big} route, lexical only: p50 {p50:.1f} ms p95 {p95:.1f} ms")
    fake_vectors(lib)
    inside(lib).vectors.clear()
    p50, p95 = route_latency(lib, texts[: args.queries])
    print(f"{args.big} route, hybrid ({emb.backend} query embedding): p50 {p50:.1f} p95 {p95:.1f}")
    for q in texts[: args.queries]:
        inside(lib).vectors.get(q)
    p50, p95 = route_latency(lib, texts[: args.queries])
    print(f"{args.big} route, hybrid, query embedding cached: p50 {p50:.1f} ms p95 {p95:.1f} ms")
    # every collection indexed: a body of content stems and a centroid for each
    secs = fake_content(lib, 256)
    print(f"{args.big}: wrote 256 content stems into each router row in {secs:.0f} s")
    fake_vectors(lib, content=True)
    p50, p95 = route_latency(lib, texts[: args.queries])
    print(f"{args.big} route, hybrid + content everywhere, cached: p50 {p50:.1f} p95 {p95:.1f}")
    router_route.CONTENT = False
    fake_vectors(lib, content=True)  # the merged matrix replaced them: load them again
    p50, p95 = route_latency(lib, texts[: args.queries])
    print(f"{args.big} route, same, descriptions only: p50 {p50:.1f} p95 {p95:.1f}")
    router_route.CONTENT, router_vectors.MERGE_MIN = True, 10**9
    fake_vectors(lib, content=True)
    p50, p95 = route_latency(lib, texts[: args.queries])
    print(
        f"{args.big} route, hybrid + centroids scored apart (max rule): p50 {p50:.1f} p95 {p95:.1f}"
    )
    router_vectors.MERGE_MIN = MERGE_MIN
    # shortlist + evidence: give every shortlisted collection a note and an index (the 100,000
    # stay index-less otherwise, and the evidence search would have nothing to read)
    router_route.CONTENT = True
    fake_vectors(lib)
    n, secs = index_shortlists(lib, root, texts[: args.queries])
    print(f"{args.big}: {n} shortlisted collections given a note and indexed in {secs:.0f} s")
    fake_vectors(lib)  # the sync's registry refresh dropped them
    inside(lib).vectors.clear()
    p50, p95 = route_latency(lib, texts[: args.queries])
    print(
        f"{args.big} route, shortlist {routing.SHORTLIST} + evidence ({emb.backend} query "
        f"embedding): p50 {p50:.1f} p95 {p95:.1f}"
    )
    lib.close()
    print(f"(libraries left in {tmp}; delete it)")


def index_shortlists(lib: Library, root: Path, qs: list[str]) -> tuple[int, float]:
    """Write a small note into every collection the summary router shortlists for `qs`, and
    index them all in one pass (a `memo index` per collection would rescan 100,000 folders)."""
    reg, vectors, colls = lib.registry, inside(lib).vectors, inside(lib).colls
    short: set[str] = set()
    everything = reg.ok_mask()
    for q in qs:
        ranked, _ = router_route.summary_rank(reg, q, everything, routing.SHORTLIST, vectors.get)
        short.update(c.path for c in ranked)
    t = time.perf_counter()
    for rel in short:
        note = root / rel / "note.md"
        if not note.exists():
            note.write_text(f"# {rel}\n\nNotes kept in {rel}.\n", encoding="utf-8")
    parts = [(colls.by_path(rel), "") for rel in sorted(short)]
    syncing.sync_parts(colls, parts, syncing.IndexReport(), thorough=True)
    return len(short), time.perf_counter() - t


if __name__ == "__main__":
    main()
