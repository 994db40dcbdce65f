"""Measure each search leg and fusion rules on the xquad-dev sets, in one run.

For every question the two legs are computed once (lexical BM25 top-N with its stems' coverage,
vector KNN top-N), then every fusion rule is scored on the same candidates, so the table compares
rules, not noise. Prints recall@1, recall@5 and MRR@10 per task and rule.

    MEMO_INDEX_DIR=/tmp/memo-bench python bench/fusion.py [--shared ../shared] [--embedder auto]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from judged import smoke_args, smoke_eval  # noqa: E402  (bench/ is on sys.path)

from memo.collection import queries  # noqa: E402
from memo.collection.lexical import script  # noqa: E402
from memo.config import Settings  # noqa: E402
from memo.embed import get_embedder  # noqa: E402
from memo.library import Library
from memo.search import legs as federated  # noqa: E402
from memo.search.fusion import Legs, fuse, rrf  # noqa: E402

TASKS = [  # (name, library, qrels)
    ("ru>ru", "xquad-dev/ru", "xquad-dev/qrels/ru.jsonl"),
    ("en>en", "xquad-dev/en", "xquad-dev/qrels/en.jsonl"),
    ("en>ru", "xquad-dev/ru", "xquad-dev/qrels/en-ru.cross.jsonl"),
    ("ru-exact", "xquad-dev/ru", "xquad-dev/qrels/ru.exact.jsonl"),
    ("en-exact", "xquad-dev/en", "xquad-dev/qrels/en.exact.jsonl"),
    ("D ru>ru", "xquad-dev-distract/ru", "xquad-dev-distract/qrels/ru.jsonl"),
    ("D en>en", "xquad-dev-distract/en", "xquad-dev-distract/qrels/en.jsonl"),
    ("D en>ru", "xquad-dev-distract/ru", "xquad-dev-distract/qrels/en-ru.cross.jsonl"),
]
DEPTH = 100


def texts(scope, keys):
    """The chunk texts of these keys, in order."""
    rows = federated.Reader(scope).rows(keys)
    return [rows[k].text for k in keys if k in rows]


def collect(lib: Library, qrels: list[dict]) -> list[dict]:
    """Per question: the qrel and both legs as lists of (path, line, score)."""
    lib.index()
    out = []
    for q in qrels:
        r = lib.rank(".", q["question"], depth=DEPTH)
        scope, legs = r.scope, r.legs
        keys = {k for k, _ in legs.lex} | {k for k, _ in legs.vec}
        rows = {}
        for ci in {k[0] for k in keys}:
            coll = scope.parts[ci][0]
            ids = [k[1] for k in keys if k[0] == ci]
            for cid, row in coll.read(lambda s, ids=ids: queries.chunk_rows(s, ids))[0].items():
                rows[(ci, cid)] = (coll.root_path(row.path), row.line)
        out.append(
            {
                "q": q,
                "lex": [(*rows[k], s, f"{k[0]}:{k[1]}") for k, s in legs.lex],
                "vec": [(*rows[k], s, f"{k[0]}:{k[1]}") for k, s in legs.vec],
                "coverage": legs.coverage,
                "qs": legs.query_script,
                "as": legs.answer_script,  # the vector leg's best chunk
                "lex_scripts": [script(t) for t in texts(scope, legs.lex_ranked[:3])],
                "vec_scripts": [script(t) for t in texts(scope, legs.vec_ranked[:3])],
            }
        )
    return out


def metrics(ranked_lists: list[tuple[dict, list[tuple[str, int]]]]) -> dict[str, float]:
    r1 = r5 = mrr = 0.0
    for q, ranked in ranked_lists:
        for rank, (path, line, _key) in enumerate(ranked[:10], start=1):
            if path == q["path"] and q["line_start"] <= line <= q["line_end"]:
                r1 += rank == 1
                r5 += rank <= 5
                mrr += 1 / rank
                break
    n = max(len(ranked_lists), 1)
    return {"r1": r1 / n, "r5": r5 / n, "mrr": mrr / n}


Rule = Callable[[dict], list[tuple[str, int]]]


def _legs_of(item: dict) -> Legs:
    legs = Legs()
    legs.lex = [((p, ln, key), s) for p, ln, s, key in item["lex"]]  # type: ignore[misc]
    legs.vec = [((p, ln, key), s) for p, ln, s, key in item["vec"]]  # type: ignore[misc]
    legs.coverage = item["coverage"]
    scripts = item.get("vec_scripts") or [item.get("as")]
    legs.query_script, legs.answer_script = item.get("qs"), scripts[0]
    return legs


def by_scores(scores: dict) -> list:
    return [k for k, _ in sorted(scores.items(), key=lambda kv: -kv[1])]


def rule_rrf(
    k: int = 60,
    wv: float = 1.0,
    wl: float = 1.0,
    cov: bool = False,
    depth: int = DEPTH,
    cov_pow: float = 1.0,
) -> Rule:
    def f(item: dict) -> list:
        legs = _legs_of(item)
        w = wl * (legs.coverage**cov_pow if cov else 1.0)
        return by_scores(rrf([(legs.vec[:depth], wv), (legs.lex[:depth], w)], k))

    return f


def rule_current(item: dict) -> list:
    return by_scores(fuse(_legs_of(item), "hybrid"))


RULES: dict[str, Rule] = {
    "vec leg alone": lambda it: [(p, ln, key) for p, ln, _, key in it["vec"]],
    "lex leg alone (stems)": lambda it: [(p, ln, key) for p, ln, _, key in it["lex"]],
    "RRF k=60 (plain)": rule_rrf(),
    "RRF k=60, lex × coverage": rule_rrf(cov=True),
    "RRF k=60, lex × 0.5 × coverage": rule_rrf(wl=0.5, cov=True),
    "RRF k=20, lex × 0.7 × coverage²": rule_rrf(k=20, wl=0.7, cov=True, cov_pow=2),
    "memo (search.fuse)": rule_current,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    ap.add_argument("--embedder", default=os.environ.get("MEMO_EMBEDDER", "auto"))
    ap.add_argument(
        "--cache",
        default=str(Path(tempfile.gettempdir()) / "memo-bench-legs.json"),
        help="legs are cached here; delete it after changing the index or legs",
    )
    ap.add_argument("--tasks", default="", help="comma-separated task names (default: all)")
    smoke_args(ap)
    args = ap.parse_args()
    eval_dir = Path(args.shared) / "eval"
    if args.smoke:
        eval_dir = smoke_eval(Path(tempfile.mkdtemp(prefix="memo-smoke-")))
        args.cache = str(eval_dir.parent / "legs.json")
    cache = Path(args.cache)
    data: dict[str, list[dict]] = json.loads(cache.read_text()) if cache.exists() else {}
    wanted = [t for t in TASKS if not args.tasks or t[0] in args.tasks.split(",")]
    embedder = get_embedder(args.embedder, os.environ.get("MEMO_MODEL_DIR"))
    libs: dict[str, Library] = {}
    for name, lib_rel, qrels_rel in wanted:
        if name in data:
            continue
        t = time.perf_counter()
        lib = libs.setdefault(lib_rel, Library(eval_dir / lib_rel, embedder, Settings.from_env()))
        qrels = [json.loads(x) for x in (eval_dir / qrels_rel).read_text().splitlines() if x]
        data[name] = collect(lib, qrels)
        print(
            f"# {name}: {len(qrels)} questions, legs in {time.perf_counter() - t:.1f} s",
            file=sys.stderr,
        )
        cache.write_text(json.dumps(data))
    print(f"embedder: {embedder.backend}")
    names = [t[0] for t in wanted]
    print("| rule | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for rule_name, rule in RULES.items():
        cells = []
        for name in names:
            m = metrics([(it["q"], rule(it)) for it in data[name]])
            cells.append(f"{m['r5']:.3f} / {m['mrr']:.3f}")
        print(f"| {rule_name} | " + " | ".join(cells) + " |")
    print("\ncells: recall@5 / MRR@10")


if __name__ == "__main__":
    main()
