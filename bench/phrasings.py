"""The agent translates; memo fuses: English questions of a Russian library, with and without
the Russian phrasing passed as `also` (issue 25, item 5).

XQuAD ids are shared across languages, so the Russian question of an id is the English one's
translation: what an agent hands back after memo's warning. On each Russian library
(xquad-dev/ru, xquad-dev-distract/ru), for the dev questions:

- search everything: en>ru alone, en>ru with also=[ru], ru>ru alone: R@1 / R@5 / MRR@10;
- the route-then-search flow (memo_route, then memo_search on the first collection), each with
  the same phrasings: R@5, against searching everything;
- the fusion rules for several phrasings, scored on the same legs: the sum of each phrasing's
  fused score, the max (shipped), the English phrasing at half weight, RRF over the phrasings'
  fused rankings;
- the warning: how often it fires on same-language questions (ru>ru here, en>en on the English
  library: the target is never) and on en>ru (it should, always);
- the cost: a search with two phrasings against one, hot, in-process, same questions.

    python bench/phrasings.py --index-dir /tmp/memo-phr [--sets dev,distract] [--limit 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Hashable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from judged import inside, rank_of, scores, smoke_args, smoke_eval  # noqa: E402  (bench/ on sys.path)

from memo.config import Settings  # noqa: E402
from memo.embed import embedder_for  # noqa: E402
from memo.library import Library  # noqa: E402
from memo.search.fusion import CANDIDATES, Legs, fuse, rrf  # noqa: E402
from memo.search.ranking import Ranking, rank  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SETS = {"dev": "xquad-dev", "distract": "xquad-dev-distract"}
K = 10

Rule = Callable[[list[Legs]], dict[Hashable, float]]


def _sum(every: list[Legs]) -> dict[Hashable, float]:
    out: dict[Hashable, float] = {}
    for legs in every:
        for key, s in fuse(legs, "hybrid").items():
            out[key] = out.get(key, 0.0) + s
    return out


def _max(every: list[Legs]) -> dict[Hashable, float]:
    out: dict[Hashable, float] = {}
    for legs in every:
        for key, s in fuse(legs, "hybrid").items():
            out[key] = max(out.get(key, 0.0), s)
    return out


def _weighted(w: float) -> Rule:
    def rule(every: list[Legs]) -> dict[Hashable, float]:
        out: dict[Hashable, float] = {}
        for n, legs in enumerate(every):
            for key, s in fuse(legs, "hybrid").items():
                out[key] = out.get(key, 0.0) + (w if n == 0 else 1.0) * s
        return out

    return rule


def _rrf(every: list[Legs]) -> dict[Hashable, float]:
    ranked = []
    for legs in every:
        f = fuse(legs, "hybrid")
        ranked.append((sorted(f.items(), key=lambda x: -x[1]), 1.0))
    return rrf(ranked, k=10)


RULES: dict[str, Rule] = {
    "sum": _sum,
    "max (shipped)": _max,
    "query at 0.5": _weighted(0.5),
    "rrf k=10": _rrf,
}


def qrels(path: Path) -> dict[str, dict]:
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
    return {r["id"]: r for r in rows if r.get("split", "dev") == "dev"}


def place(r: Ranking, q: dict, k: int = K) -> int | None:
    return rank_of(r.hits(k), q)


def line(name: str, s: dict[str, float]) -> str:
    return f"| {name} | {s['r1']:.3f} / {s['r5']:.3f} / {s['mrr']:.3f} |"


def study(lib: Library, en: dict[str, dict], ru: dict[str, dict], limit: int) -> dict:
    ids = [i for i in en if i in ru][:limit]
    scope = inside(lib).resolve(".")
    vec = inside(lib).vectors
    got: dict[str, list[int | None]] = {"en": [], "en+ru": [], "ru": []}
    by_rule: dict[str, list[int | None]] = {name: [] for name in RULES}
    flow: dict[str, list[bool]] = {"en": [], "en+ru": [], "ru": []}
    warned = {"en": 0, "ru": 0}
    for i in ids:
        e, r = en[i], ru[i]
        one = rank(scope, e["question"], "hybrid", vec, CANDIDATES)
        both = rank(scope, e["question"], "hybrid", vec, CANDIDATES, also=(r["question"],))
        alone = rank(scope, r["question"], "hybrid", vec, CANDIDATES)
        for name, ranking in (("en", one), ("en+ru", both), ("ru", alone)):
            got[name].append(place(ranking, e))
        for name, rule in RULES.items():
            fused = Ranking(both.reader, both.legs, rule(both.phrasings), phrasings=both.phrasings)
            by_rule[name].append(place(fused, e))
        for name, query, also in (
            ("en", e["question"], ()),
            ("en+ru", e["question"], (r["question"],)),
            ("ru", r["question"], ()),
        ):
            routed = lib.route(query, k=1, also=also)
            first = routed.collections[0].path if routed.collections else "."
            hits = lib.search(first, query, k=5, also=also).hits
            flow[name].append(
                any(
                    h.path == e["path"] and e["line_start"] <= h.line <= e["line_end"] for h in hits
                )
            )
            if name in ("en", "ru"):
                warned[name] += any("mostly" in w for w in routed.warnings)
    return {
        "n": len(ids),
        "search": {k: scores(v) for k, v in got.items()},
        "rules": {k: scores(v) for k, v in by_rule.items()},
        "flow": {k: sum(v) / max(1, len(v)) for k, v in flow.items()},
        "warned": {k: v / max(1, len(ids)) for k, v in warned.items()},
        "ids": ids,
    }


def same_language_warnings(lib: Library, qs: dict[str, dict], limit: int) -> float:
    """How often the warning fires on questions in the library's own language."""
    fired = 0
    ids = list(qs)[:limit]
    for i in ids:
        res = lib.search(".", qs[i]["question"], k=5)
        fired += any("mostly" in w for w in res.warnings)
    return fired / max(1, len(ids))


def cost(lib: Library, en: dict[str, dict], ru: dict[str, dict], ids: list[str]) -> dict:
    """Hot search time with one phrasing and with two, the same questions, interleaved."""
    one, two = [], []
    for i in ids:
        for _ in range(2):  # the second round: query vectors cached, as a hot server has them
            t = time.perf_counter()
            lib.search(".", en[i]["question"], k=8)
            one.append(time.perf_counter() - t)
            t = time.perf_counter()
            lib.search(".", en[i]["question"], k=8, also=[ru[i]["question"]])
            two.append(time.perf_counter() - t)
    a, b = statistics.median(one) * 1000, statistics.median(two) * 1000
    return {"one_ms": a, "two_ms": b, "ratio": b / a}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--eval", type=Path, default=REPO.parent / "shared" / "eval")
    ap.add_argument("--index-dir", type=Path, help="where the indexes go (required)")
    ap.add_argument("--sets", default="dev,distract")
    ap.add_argument("--limit", type=int, default=200)
    smoke_args(ap)
    args = ap.parse_args()
    if args.smoke:
        args.eval = smoke_eval(Path(tempfile.mkdtemp(prefix="memo-smoke-")))
        args.index_dir = args.eval.parent / "indexes"
    if args.index_dir is None:
        ap.error("--index-dir is required")
    settings = Settings(index_dir=args.index_dir)
    emb = embedder_for(Settings.from_env(), "serve")
    print(f"# load {os.getloadavg()}, engine {emb.backend if emb else None}")
    for name in args.sets.split(","):
        base = args.eval / SETS[name]
        en = qrels(base / "qrels" / "en-ru.cross.jsonl")
        ru = qrels(base / "qrels" / "ru.jsonl")
        with Library(base / "ru", emb, settings) as lib:
            lib.index()
            res = study(lib, en, ru, args.limit)
            res["same_ru"] = same_language_warnings(lib, ru, args.limit)
            res["cost"] = cost(lib, en, ru, res["ids"][:40])
        with Library(base / "en", emb, settings) as lib_en:
            lib_en.index()
            res["same_en"] = same_language_warnings(lib_en, qrels(base / "qrels" / "en.jsonl"), 100)
        print(f"\n## {SETS[name]}/ru, {res['n']} dev questions\n")
        print("| asked | R@1 / R@5 / MRR@10 |\n|---|---|")
        for k, label in (("en", "en>ru alone"), ("en+ru", "en>ru, also=[ru]"), ("ru", "ru>ru")):
            print(line(label, res["search"][k]))
        print("\n| rule for two phrasings | R@1 / R@5 / MRR@10 |\n|---|---|")
        for k, s in res["rules"].items():
            print(line(k, s))
        print("\n| flow: route, then search its first collection | R@5 |\n|---|---|")
        for k, label in (("en", "en>ru alone"), ("en+ru", "en>ru, also=[ru]"), ("ru", "ru>ru")):
            print(f"| {label} | {res['flow'][k]:.3f} |")
        w = res["warned"]
        print(
            f"\nwarning: fires on en>ru {w['en']:.3f} (route); on same-language questions: ru>ru "
            f"{w['ru']:.3f} (route) / {res['same_ru']:.3f} (search), en>en {res['same_en']:.3f}"
        )
        c = res["cost"]
        print(
            f"cost (hot, in-process, 40 questions x2): one phrasing {c['one_ms']:.1f} ms, two "
            f"{c['two_ms']:.1f} ms: x{c['ratio']:.2f}"
        )


if __name__ == "__main__":
    main()
