"""The agent's flow, measured: memo_route, then memo_search on the route's first collection.

Per task: the route's top 1 and top 3, the flow's recall@5, `search --route 3`'s and searching
everything's. Libraries: xquad-dev-distract ru and en (3 article collections described in
English among 6 documentation ones); xquad-dev re-grouped into collections of 3-6 described in
the other language (`regrouped`); with --thousand, 1,000 generated collections
(tests/genlib.py), and the summary router's shortlist (library/evidence.py `SHORTLIST`) against
searching every collection. Writes bench/results/routing.json. (Rules a collection was
ranked by before its best chunk: `--study` in `git show lab-2026-12:bench/routing.py`.)

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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judged import engine, record, smoke_args, smoke_eval  # noqa: E402  (bench/ is on sys.path)

from memo.config import Settings  # noqa: E402
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


def regrouped_flow(
    ev: Path, lang: str, other: str, scratch: Path, emb: Any, index_dir: Path, questions: int
) -> list[dict]:
    """The flow on xquad-dev/LANG re-grouped (`regrouped`), for its questions and en>ru's."""
    src = Library(ev / "xquad-dev" / lang, emb, Settings(index_dir=index_dir))
    src.index()  # the vectors the re-grouped copy takes from the embedding cache
    src.close()
    dst = scratch / f"regrouped-{lang}"
    moved = regrouped(ev / "xquad-dev" / lang, ev / "xquad-dev" / other, dst, lang)
    out = []
    with Library(dst, emb, Settings(index_dir=scratch / "i")) as lib:
        lib.index()
        for qfile in (f"{lang}.jsonl", *(("en-ru.cross.jsonl",) if lang == "ru" else ())):
            qs = load(ev / "xquad-dev" / "qrels" / qfile, questions)
            qs = [{**q, "path": moved[q["path"]]} for q in qs]
            pair = "en>ru" if qfile.startswith("en-ru") else f"{lang}>{lang}"
            out.append({"task": f"re-grouped {pair}", **flow(lib, qs)})
    return out


def load(path: Path, limit: int, seed: int = 9) -> list[dict]:
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    random.Random(seed).shuffle(rows)
    return rows[:limit] if limit else rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    ap.add_argument("--index-dir", default="", help="reuse indexes here (default: a fresh temp)")
    ap.add_argument("--embedder", default=os.environ.get("MEMO_EMBEDDER", "auto"))
    ap.add_argument("--questions", type=int, default=200, help="per task")
    ap.add_argument("--thousand", action="store_true", help="also the 1,000-collection library")
    ap.add_argument(
        "--thousand-only", action="store_true", help="only the 1,000-collection library"
    )
    smoke_args(ap)  # every part: the flow, re-grouped, 12 generated collections
    args = ap.parse_args()
    ev = Path(args.shared) / "eval"
    scratch = Path(tempfile.mkdtemp(prefix="memo-routing-"))
    many = 1000
    if args.smoke:
        ev, args.questions, args.thousand, many = smoke_eval(scratch), 4, True, 12
        genlib.XQUAD = ev / "xquad-dev"  # the generated library's articles and questions
    index_dir = Path(args.index_dir) if args.index_dir else scratch / "idx"
    emb = engine(args.embedder, os.environ.get("MEMO_MODEL_DIR"))
    load0 = os.getloadavg()[0]
    rows: list[dict] = []
    try:
        for name, lib_rel, qrels_rel in [] if args.thousand_only else TASKS:
            lib = Library(ev / lib_rel, emb, Settings(index_dir=index_dir))
            lib.index()
            rows.append(
                {"task": f"distract {name}", **flow(lib, load(ev / qrels_rel, args.questions))}
            )
            lib.close()
        for lang, other in () if args.thousand_only else (("ru", "en"), ("en", "ru")):
            rows += regrouped_flow(ev, lang, other, scratch, emb, index_dir, args.questions)
        if rows:
            record(__file__, "flow", {"engine": emb.backend, "rows": rows}, load0, args.smoke)
        if args.thousand or args.thousand_only:
            load0, rows[:] = os.getloadavg()[0], []
            root = scratch / "lib1000"
            homes = genlib.generate(root, many, notes=True)
            lib = Library(root, emb, Settings(index_dir=scratch / "i1000"))
            lib.index()
            span = {"line_start": 0, "line_end": 10**9}  # any line of the home's article
            qs = [
                {"question": q.text, "home": q.home, **span}
                for q in genlib.questions(homes, per_article=4)
            ]
            rows.append({"task": "1,000 collections", **flow_homes(lib, qs)})
            with exhaustive():
                rows.append({"task": "… every one searched", **flow_homes(lib, qs)})
            data = {"engine": emb.backend, "rows": rows, "shortlist": shortlist_study(lib, qs)}
            lib.close()
            record(__file__, "thousand", data, load0, args.smoke)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def shortlist_study(lib: Library, qs: list[dict]) -> list[dict[str, float]]:
    """Beyond SHORTLIST collections the summary router shortlists: how much of the exhaustive
    evidence ranking does a shortlist of N keep (its top 1, its top 3), at what cost?"""
    from memo.library import evidence as evidence

    full = []
    with exhaustive():
        for q in qs:
            full.append([c.path for c in lib.route(q["question"], k=3).collections])
    keep, out = evidence.SHORTLIST, []
    try:
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
            p50 = statistics.median(times) * 1000
            out.append({"n": n, "top1": same1 / len(qs), "top3": same3 / len(qs), "p50_ms": p50})
    finally:
        evidence.SHORTLIST = keep
    return out


@contextlib.contextmanager
def exhaustive() -> Iterator[None]:
    """Routes search every collection, whatever the library's size."""
    from memo.library import evidence as evidence

    keep, evidence.SHORTLIST = evidence.SHORTLIST, 10**9
    try:
        yield
    finally:
        evidence.SHORTLIST = keep


def flow_homes(lib: Library, qs: list[dict]) -> dict[str, float]:
    """The flow on the generated library, where a question's answer is its home collection's
    article (any line of it)."""
    for q in qs:
        note = next(Path(lib.root, q["home"]).glob("*.md"))
        q["path"] = f"{q['home']}/{note.name}"
    return flow(lib, qs)


if __name__ == "__main__":
    main()
