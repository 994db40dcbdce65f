"""The agent's flow, measured: memo_route, then memo_search on the route's first collection.

For each question of a task: the route's top 1 and top 3 (is the qrel's collection there?),
"search everything" (the collection of its top hit; its recall@5), the flow (search only the
route's top collection: recall@5), and `search --route 3` (recall@5). Libraries:

- xquad-dev-distract ru and en: 3 article collections of 8 unrelated articles each, described
  in English, among 6 coherent documentation collections;
- a re-grouped dev library: the xquad-dev articles shuffled into collections of 3-6, each
  described in the other language than its notes (vectors reused from the dev indexes);
- a generated library of 1,000 collections (tests/genlib.py: one home per article, the rest
  everyday distractors with one note each), with --thousand.

    MEMO_MODEL_DIR=../shared/models/multilingual-e5-small \\
        python bench/routing.py --index-dir /tmp/memo-bench [--questions 200] [--thousand]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from federation import Reuse, stored_vectors  # noqa: E402  (bench/ is on sys.path)
from judged import inside, smoke_args, smoke_eval  # noqa: E402

from memo.config import Settings  # noqa: E402
from memo.embed import get_embedder  # noqa: E402
from memo.library import Library  # noqa: E402
from tests import genlib  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TASKS = [  # (name, library folder under eval/, qrels)
    ("ru>ru", "xquad-dev-distract/ru", "xquad-dev-distract/qrels/ru.jsonl"),
    ("en>en", "xquad-dev-distract/en", "xquad-dev-distract/qrels/en.jsonl"),
    ("en>ru", "xquad-dev-distract/ru", "xquad-dev-distract/qrels/en-ru.cross.jsonl"),
]


def hit_ok(hits: list, q: dict, k: int = 5) -> bool:
    return any(h.path == q["path"] and q["line_start"] <= h.line <= q["line_end"] for h in hits[:k])


def home(q: dict) -> str:
    """The collection holding the qrel's note: its folder (a collection per folder here)."""
    return q["path"].rsplit("/", 1)[0]


def flow(lib: Library, qrels: list[dict]) -> dict[str, float]:
    n = len(qrels)
    got = dict.fromkeys(("top1", "top3", "all_top", "flow", "route3", "all"), 0.0)
    times = []
    for q in qrels:
        t = time.perf_counter()
        routed = [c.path for c in lib.route(q["question"], k=3).collections]
        times.append(time.perf_counter() - t)
        everything = lib.search("*", q["question"], k=5).hits
        got["top1"] += routed[:1] == [home(q)]
        got["top3"] += home(q) in routed[:3]
        got["all_top"] += bool(everything) and everything[0].path.rsplit("/", 1)[0] == home(q)
        got["all"] += hit_ok(everything, q)
        got["flow"] += bool(routed) and hit_ok(lib.search(routed[0], q["question"], k=5).hits, q)
        got["route3"] += hit_ok(lib.search("*", q["question"], k=5, route=3).hits, q)
    out = {k: v / n for k, v in got.items()}
    out["p50_ms"] = statistics.median(times) * 1000
    out["p95_ms"] = sorted(times)[int(0.95 * (len(times) - 1))] * 1000
    return out


def regrouped(src: Path, other: Path, dst: Path, lang: str, seed: int = 3) -> dict[str, str]:
    """The dev articles of `src` in collections of 3-6, described in the other language (the
    titles of the same articles in `other`); returns old note path -> new note path."""
    rng = random.Random(seed)
    notes = sorted(src.glob("lib/topic-*/*.md"))
    rng.shuffle(notes)
    moved: dict[str, str] = {}
    i = g = 0
    while i < len(notes):
        size = rng.randint(3, 6)
        group, i, g = notes[i : i + size], i + size, g + 1
        folder = dst / "lib" / f"group-{g}"
        folder.mkdir(parents=True)
        titles = []
        for note in group:
            twin = other / note.relative_to(src)
            text = twin.read_text(encoding="utf-8") if twin.exists() else note.name
            titles.append(next((x[2:] for x in text.splitlines() if x.startswith("# ")), note.stem))
            shutil.copy(note, folder / note.name)
            moved[str(note.relative_to(src))] = f"lib/group-{g}/{note.name}"
        head = "Конспекты на английском: " if lang == "en" else "Reading notes in Russian: "
        genlib.write_meta(folder, f"group-{g}", head + "; ".join(titles), [])
    return moved


def table(name: str, r: dict[str, float]) -> None:
    print(
        f"| {name} | {r['top1']:.3f} | {r['top3']:.3f} | {r['all_top']:.3f} | {r['flow']:.3f} "
        f"| {r['route3']:.3f} | {r['all']:.3f} | {r['p50_ms']:.0f} / {r['p95_ms']:.0f} |"
    )
    sys.stdout.flush()


def load(path: Path, limit: int, seed: int = 9) -> list[dict]:
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    random.Random(seed).shuffle(rows)
    return rows[:limit] if limit else rows


def study(lib: Library, qrels: list[dict], name: str) -> None:
    """Rules for ranking collections from one search's fused list, compared on the same
    questions: the collection of the best chunk (max), or every collection's chunks in the top
    N summed as 1/(k + rank), with and without the summary router's rank."""
    from memo.router.route import summary_rank
    from memo.search import legs as federated
    from memo.search.fusion import CANDIDATES, fuse

    colls, vectors = inside(lib).colls, inside(lib).vectors
    paths = [c.rel for c in colls.under()]
    reg = colls.registry()
    rules: dict[str, list[int]] = {}
    for q in qrels:
        scope = federated.Scope(".", [(colls.by_path(p), "") for p in paths])
        legs = federated.gather_legs(
            federated.Reader(scope), q["question"], "hybrid", CANDIDATES, vectors
        )
        scores = fuse(legs, "hybrid")
        ranked = sorted(scores, key=lambda key: -scores[key])
        listed, _ = summary_rank(reg, q["question"], reg.ok_mask(), None, vectors.get)
        summary = [c.path for c in listed]
        for top_n in (1, 5, 10, 20, 50):
            for k in (1, 5, 20):
                if top_n == 1 and k != 1:
                    continue
                ev: dict[str, float] = {}
                for rank, key in enumerate(ranked[:top_n], start=1):
                    rel = scope.parts[key[0]][0].rel
                    ev[rel] = ev.get(rel, 0.0) + 1.0 / (k + rank)
                by_ev = sorted(ev, key=lambda c: -ev[c])
                for wd in (0.0, 0.25, 0.5):
                    score = {c: wd / (10 + r) for r, c in enumerate(summary, 1)}
                    for r, c in enumerate(by_ev, 1):
                        score[c] = score.get(c, 0.0) + 1.0 / (10 + r)
                    order = sorted(score, key=lambda c: -score[c])
                    key_name = f"top{top_n} k{k} desc{wd}"
                    rules.setdefault(key_name, []).append(order[:1] == [home(q)])
    print(f"\n{name}: route top-1 by rule ({len(qrels)} questions)")
    for rule, got in sorted(rules.items(), key=lambda x: -sum(x[1])):
        print(f"  {rule:22s} {sum(got) / len(got):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    ap.add_argument("--index-dir", default="", help="reuse indexes here (default: a fresh temp)")
    ap.add_argument("--embedder", default=os.environ.get("MEMO_EMBEDDER", "auto"))
    ap.add_argument("--questions", type=int, default=200, help="per task")
    ap.add_argument("--thousand", action="store_true", help="also the 1,000-collection library")
    ap.add_argument("--study", action="store_true", help="compare collection-ranking rules")
    ap.add_argument(
        "--thousand-only", action="store_true", help="only the 1,000-collection library"
    )
    smoke_args(ap)  # every part: the flow, the study, re-grouped, 12 generated collections
    args = ap.parse_args()
    ev = Path(args.shared) / "eval"
    scratch = Path(tempfile.mkdtemp(prefix="memo-routing-"))
    many = 1000
    if args.smoke:
        ev, args.questions, args.thousand, many = smoke_eval(scratch), 4, True, 12
        genlib.XQUAD = ev / "xquad-dev"  # the generated library's articles and questions
    index_dir = Path(args.index_dir) if args.index_dir else scratch / "idx"
    emb = get_embedder(args.embedder, os.environ.get("MEMO_MODEL_DIR"))
    print(
        f"## The route-then-search flow — {emb.backend}, {time.strftime('%Y-%m-%d')}, "
        f"load {os.getloadavg()[0]:.2f}\n"
    )
    print(
        "| task | route top-1 | route top-3 | search everything: top hit's collection "
        "| flow: search the route's top-1, R@5 | `--route 3` R@5 | search everything, R@5 "
        "| route p50 / p95 ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    try:
        for name, lib_rel, qrels_rel in [] if args.thousand_only else TASKS:
            lib = Library(ev / lib_rel, emb, Settings(index_dir=index_dir))
            lib.index()
            if args.study or args.smoke:
                study(lib, load(ev / qrels_rel, args.questions), f"distract {name}")
                if args.study:
                    continue
            table(f"distract {name}", flow(lib, load(ev / qrels_rel, args.questions)))
            lib.close()
        for lang, other in () if args.thousand_only else (("ru", "en"), ("en", "ru")):
            src = Library(ev / "xquad-dev" / lang, emb, Settings(index_dir=index_dir))
            src.index()
            dst = scratch / f"regrouped-{lang}"
            moved = regrouped(ev / "xquad-dev" / lang, ev / "xquad-dev" / other, dst, lang)
            lib = Library(dst, Reuse(emb, stored_vectors(src)), Settings(index_dir=scratch / "i"))
            lib.index()
            for qfile in (f"{lang}.jsonl", "en-ru.cross.jsonl" if lang == "ru" else None):
                if qfile is None:
                    continue
                qs = load(ev / "xquad-dev" / "qrels" / qfile, args.questions)
                qs = [{**q, "path": moved[q["path"]]} for q in qs]
                pair = "en>ru" if qfile.startswith("en-ru") else f"{lang}>{lang}"
                table(f"re-grouped {pair}", flow(lib, qs))
            lib.close()
            src.close()
        if args.thousand or args.thousand_only:
            root = scratch / "lib1000"
            homes = genlib.generate(root, many, notes=True)
            lib = Library(root, emb, Settings(index_dir=scratch / "i1000"))
            lib.index()
            qs = []
            for q in genlib.questions(homes, per_article=4):
                qs.append(
                    {
                        "question": q.text,
                        "path": f"{q.home}/x.md",
                        "line_start": 0,
                        "line_end": 10**9,
                        "home": q.home,
                    }
                )
            table("1,000 collections", flow_homes(lib, qs))
            with exhaustive():
                table("1,000 collections, every one searched", flow_homes(lib, qs))
            shortlist_study(lib, qs)
            lib.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def shortlist_study(lib: Library, qs: list[dict]) -> None:
    """Beyond EVIDENCE_ALL collections the summary router shortlists: how much of the
    exhaustive evidence ranking does a shortlist of N keep (its top 1, its top 3), and what
    does a route cost at each N?"""
    from memo.library import routing as evidence

    full = []
    with exhaustive():
        for q in qs:
            full.append([c.path for c in lib.route(q["question"], k=3).collections])
    keep = evidence.EVIDENCE_ALL, evidence.SHORTLIST
    print("\n| shortlist N | top-1 as exhaustive | top-3 as exhaustive | route p50 ms |")
    print("|---:|---:|---:|---:|")
    try:
        evidence.EVIDENCE_ALL = 0  # force the shortlist path on this library
        for n in (10, 25, 50, 100, 200):
            evidence.SHORTLIST = n
            same1 = same3 = 0
            times = []
            for q, want in zip(qs, full, strict=True):
                t = time.perf_counter()
                got = [c.path for c in lib.route(q["question"], k=3).collections]
                times.append(time.perf_counter() - t)
                same1 += got[:1] == want[:1]
                same3 += set(got[:3]) == set(want[:3])
            print(
                f"| {n} | {same1 / len(qs):.3f} | {same3 / len(qs):.3f} "
                f"| {statistics.median(times) * 1000:.0f} |"
            )
    finally:
        evidence.EVIDENCE_ALL, evidence.SHORTLIST = keep


@contextlib.contextmanager
def exhaustive() -> Iterator[None]:
    """Routes search every collection, whatever the library's size."""
    from memo.library import routing as evidence

    keep = evidence.EVIDENCE_ALL
    evidence.EVIDENCE_ALL = 10**9
    try:
        yield
    finally:
        evidence.EVIDENCE_ALL = keep


def flow_homes(lib: Library, qs: list[dict]) -> dict[str, float]:
    """The flow on the generated library, where a question's answer is its home collection's
    article (any line of it)."""
    for q in qs:
        note = next(Path(lib.root, q["home"]).glob("*.md"))
        q["path"] = f"{q['home']}/{note.name}"
    return flow(lib, qs)


if __name__ == "__main__":
    main()
