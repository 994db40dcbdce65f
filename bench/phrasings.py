"""The agent translates; memo fuses: English questions of a Russian library, with and without
the Russian phrasing passed as `also` (XQuAD ids are shared, so the Russian question of an
id is the English one's translation). On xquad-dev/ru and xquad-dev-distract/ru: search
everything (en>ru, en>ru with also=[ru], ru>ru), the route-then-search flow, how often the
language warning fires (en>ru: always; same language: never) and what two phrasings cost.
Phrasings fuse by their max (search/fusion.py `fuse_phrasings`); the rules it was chosen
against: `git show lab-2026-12:bench/phrasings.py`. Writes bench/results/phrasings.json.

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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from judged import rank_of, record, scores, smoke_args, smoke_eval  # noqa: E402  (bench/ on sys.path)

from memo.config import Settings  # noqa: E402
from memo.embed import embedder_for  # noqa: E402
from memo.library import Library  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SETS = {"dev": "xquad-dev", "distract": "xquad-dev-distract"}
K = 10


def qrels(path: Path) -> dict[str, dict]:
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
    return {r["id"]: r for r in rows if r.get("split", "dev") == "dev"}


def study(lib: Library, en: dict[str, dict], ru: dict[str, dict], limit: int) -> dict:
    ids = [i for i in en if i in ru][:limit]
    got: dict[str, list[int | None]] = {"en": [], "en+ru": [], "ru": []}
    flow: dict[str, list[bool]] = {"en": [], "en+ru": [], "ru": []}
    warned = {"en": 0, "ru": 0}
    for i in ids:
        e, r = en[i], ru[i]
        for name, query, also in (
            ("en", e["question"], ()),
            ("en+ru", e["question"], (r["question"],)),
            ("ru", r["question"], ()),
        ):
            got[name].append(rank_of(lib.search(".", query, k=K, also=also).hits, e))
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
    load0 = os.getloadavg()[0]
    out = {}
    for name in args.sets.split(","):
        base = args.eval / SETS[name]
        en = qrels(base / "qrels" / "en-ru.cross.jsonl")
        ru = qrels(base / "qrels" / "ru.jsonl")
        with Library(base / "ru", emb, settings) as lib:
            lib.index()
            res = study(lib, en, ru, args.limit)
            res["same_ru"] = same_language_warnings(lib, ru, args.limit)
            res["cost"] = cost(lib, en, ru, res.pop("ids")[:40])
        with Library(base / "en", emb, settings) as lib_en:
            lib_en.index()
            res["same_en"] = same_language_warnings(lib_en, qrels(base / "qrels" / "en.jsonl"), 100)
        out[SETS[name]] = res
    record(__file__, "also", out, load0, args.smoke)


if __name__ == "__main__":
    main()
