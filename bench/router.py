"""Routing at scale: the registry and the summary router at 50 to 100,000 collections.

    python bench/router.py [--big 100000] [--queries 60] [--sample 6]

Libraries generated from xquad-dev's articles (tests/genlib.py): at 1,000 collections with
notes, route accuracy (descriptions alone before the index; with what the collections hold;
with each collection's two vectors merged, as from router/vector_leg.py `MERGE_MIN` on); route
latency at 50, 1,000, 5,000 and --big; at --big the registry's lexical rebuild and rescan,
lexical accuracy, routes with every row given content stems and a centroid, then with the
shortlist's evidence search. Beyond 50 collections descriptions get seeded vectors (`Seeded`:
the vector leg's cost, not its accuracy). Writes bench/results/router.json. (The variants
studied: `git show lab-2026-12:bench/router.py`.)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from memo.collection.lexical import lex_text  # noqa: E402
from memo.config import Settings  # noqa: E402
from memo.library import Library, evidence  # noqa: E402
from memo.router import route as router_route  # noqa: E402
from memo.router import vector_leg as router_vectors  # noqa: E402
from tests import genlib  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judged import engine, pct, record, smoke_args, smoke_eval  # noqa: E402


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.standard_normal((n, 384)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


class Seeded:
    """The model for questions; seeded unit vectors for passages: 100,000 descriptions get
    vectors in seconds, and the router's vector leg costs what it would with real ones."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.rng = inner, np.random.default_rng(0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return _unit(self.rng, len(texts))


def fake_content(lib: Library, terms: int) -> float:
    """Give every collection what an indexed one has: a `body` of `terms` content stems drawn
    (Zipf) from the xquad articles' vocabulary and a centroid (seeded), written into the
    registry's database. Returns the seconds it took."""
    reg = lib.registry
    vocab: dict[str, int] = {}
    for a in genlib.articles():
        for t in lex_text(a.text).split():
            vocab[t] = vocab.get(t, 0) + 1
    words = sorted(vocab, key=lambda w: -vocab[w])
    p = 1.0 / np.arange(1, len(words) + 1)
    p /= p.sum()
    rng = np.random.default_rng(1)
    centroids = _unit(rng, len(reg.entries)).astype(np.float16)
    conn = reg.store.conn
    t = time.perf_counter()
    with conn:
        for e, c in zip(reg.entries, centroids, strict=True):
            body = " ".join(words[i] for i in np.unique(rng.choice(len(words), terms, p=p)))
            conn.execute("DELETE FROM colls_fts WHERE rowid=?", (e.id,))
            conn.execute(
                "INSERT INTO colls_fts(rowid, lex, body) VALUES (?, ?, ?)",
                (e.id, lex_text(e.doc_text()), body),
            )
            conn.execute(
                "INSERT OR REPLACE INTO colls_cvec(id, sig, v) VALUES (?, ?, ?)",
                (e.id, e.content_sig, c.tobytes()),
            )
    reg.release_vectors()
    reg.derived.clear()
    return time.perf_counter() - t


def route_latency(lib: Library, qs: list[str]) -> dict[str, float]:
    """p50 / p95 ms of `route(q, k=5)`; each question is new to the library's query cache the
    first time (`fresh`: its embedding included), then asked again (`cached`)."""
    lib.route("warm up the route", k=5)
    out = {}
    for name in ("fresh", "cached"):
        ts = []
        for q in qs:
            t = time.perf_counter()
            lib.route(q, k=5)
            ts.append(time.perf_counter() - t)
        out[name] = [1000 * pct(ts, 50), 1000 * pct(ts, 95)]
    return out


def accuracy(lib: Library, qs: list[genlib.Question]) -> list[float]:
    top1 = top5 = 0
    for q in qs:
        paths = [c.path for c in lib.route(q.text, k=5).collections]
        top1 += paths[:1] == [q.home]
        top5 += q.home in paths[:5]
    return [top1 / len(qs), top5 / len(qs)]


def thousand(tmp: Path, n: int, emb: Any, qs_sample: int, queries: list[str]) -> dict:
    root = tmp / f"lib{n}"
    homes = genlib.generate(root, n, notes=True)
    qs = genlib.questions(homes)[:: max(1, qs_sample)]
    lib = Library(root, emb, Settings(index_dir=tmp / "indexes"))
    rep = lib.rebuild_registry(write_yaml=False)  # descriptions only: nothing indexed yet
    out: dict[str, Any] = {"collections": n, "questions": len(qs)}
    out["embed_rate"] = rep.embedded / rep.embed_seconds if rep.embed_seconds else None
    out["descriptions"] = accuracy(lib, qs)
    lib.index()
    lib.rebuild_registry(write_yaml=False)  # now with the notes' headings and content
    t = time.perf_counter()
    lib.rebuild_registry(write_yaml=False)
    out["rescan_s"] = time.perf_counter() - t
    out["content"] = accuracy(lib, qs)
    keep, router_vectors.MERGE_MIN = router_vectors.MERGE_MIN, 0
    lib.registry.derived.clear()
    out["merged"] = accuracy(lib, qs)
    router_vectors.MERGE_MIN = keep
    lib.registry.derived.clear()
    out.update(route_latency(lib, queries))
    lib.close()
    return out


def sized(tmp: Path, n: int, emb: Any, queries: list[str]) -> dict:
    """Route latency at `n` collections without notes (descriptions only)."""
    root = tmp / f"lib{n}"
    genlib.generate(root, n)
    with Library(root, emb, Settings(index_dir=tmp / "indexes")) as lib:
        lib.rebuild_registry(write_yaml=False)
        return {"collections": n, "strategy": lib.route("x").strategy} | route_latency(lib, queries)


def big(tmp: Path, n: int, emb: Any, qs_sample: int, queries: list[list[str]]) -> dict:
    root = tmp / f"lib{n}"
    t = time.perf_counter()
    homes = genlib.generate(root, n)
    out: dict[str, Any] = {"collections": n, "generate_s": time.perf_counter() - t}
    lib = Library(root, emb, Settings(index_dir=tmp / "indexes"))
    rep = lib.rebuild_registry(embed=False)
    out["rebuild_s"], out["walk_s"] = rep.seconds, rep.walk_seconds
    t = time.perf_counter()
    lib.rebuild_registry(embed=False, write_yaml=False)
    out["rescan_s"] = time.perf_counter() - t
    out["lexical"] = accuracy(lib, genlib.questions(homes)[:: max(1, qs_sample)])
    out["route_lexical"] = route_latency(lib, queries[0])
    lib.rebuild_registry(write_yaml=False)  # every description a (seeded) vector
    out["content_s"] = fake_content(lib, 256)
    out["route_hybrid"] = route_latency(lib, queries[1])
    # shortlist + evidence: every shortlisted collection gets a note and an index (the rest
    # stay index-less: the evidence search would have nothing to read)
    rest = queries[2]
    short: set[str] = set()
    for q in rest:
        ranked, _ = router_route.summary_rank(
            lib.registry, q, lib.registry.ok_mask(), evidence.SHORTLIST, lambda x: (None, "")
        )
        short.update(c.path for c in ranked)
    for rel in short:
        (root / rel / "note.md").write_text(f"# {rel}\n\nNotes kept in {rel}.\n", encoding="utf-8")
    t = time.perf_counter()
    lib.sync([root / rel for rel in sorted(short)])
    out["shortlisted"], out["shortlist_index_s"] = len(short), time.perf_counter() - t
    out["route_evidence"] = route_latency(lib, rest)
    lib.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--big", type=int, default=100_000, help="0: up to 5,000 only")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--queries", type=int, default=60, help="timed routes per figure")
    ap.add_argument("--sample", type=int, default=6, help="accuracy on every Nth question")
    smoke_args(ap)  # every part at 12 / 5 / 20 / 30 collections
    args = ap.parse_args()
    small, flat, tree = 1000, 50, 5000
    if args.smoke:
        small, flat, tree, args.big, args.queries = 12, 5, 20, 30, 2
        args.backend = os.environ.get("MEMO_EMBEDDER", args.backend)
        genlib.XQUAD = smoke_eval(Path(tempfile.mkdtemp(prefix="memo-smoke-"))) / "xquad-dev"
    emb = engine(args.backend, os.environ.get("MEMO_MODEL_DIR"))
    tmp = Path(tempfile.mkdtemp(prefix="memo-router-bench-"))
    lines = [
        json.loads(x)["question"]
        for lang in ("en", "ru")
        for x in (genlib.XQUAD / "qrels" / f"{lang}.jsonl").read_text("utf-8").splitlines()
    ]
    n = args.queries
    # six figures, each timed on questions the library has not embedded yet
    queries = [[lines[(i * n + j) % len(lines)] for j in range(n)] for i in range(6)]
    load0 = os.getloadavg()[0]
    data: dict[str, Any] = {"engine": emb.backend, "queries": n}
    data["thousand"] = thousand(tmp, small, emb, args.sample, queries[0])
    data["sizes"] = [sized(tmp, flat, emb, queries[1])]
    data["sizes"].append(sized(tmp, tree, Seeded(emb), queries[2]))
    if args.big:
        data["big"] = big(tmp, args.big, Seeded(emb), args.sample, queries[3:])
    record(__file__, "scale", data, load0, args.smoke)
    print(f"(libraries left in {tmp}; delete it)")


if __name__ == "__main__":
    main()
