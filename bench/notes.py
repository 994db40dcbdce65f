"""Note-level evidence, measured on stored rankings (issue 31, item 3).

Each question is ranked once as memo ranks it (search/ranking.py `rank`, depth 100); then
every rule re-scores the same candidates with evidence about their notes as a whole, and the
hits are read through the same diversity cap (`Ranking.hits`): the table compares rules, not
noise. Sets: the vault benchmark (bench/vault/, per half) on libraries bench/vault.py adopted,
and xquad-dev-distract's tasks.

    MEMO_INDEX_DIR=SCRATCH/indexes python bench/notes.py --vault-ru SCRATCH/ru-drafted \\
        --vault-en SCRATCH/en-drafted [--distract ../shared/eval/xquad-dev-distract]
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
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from judged import inside, smoke_args, smoke_eval  # noqa: E402
from vault import QUESTIONS, half, qrels, rank_of, spans_of  # noqa: E402

from memo.config import Settings  # noqa: E402
from memo.embed import embedder_for  # noqa: E402
from memo.library import Library  # noqa: E402
from memo.search.diversity import notes_cap  # noqa: E402
from memo.search.fusion import CANDIDATES  # noqa: E402
from memo.search.ranking import Ranking, rank, witnessed  # noqa: E402

K = 10
QUERIES: dict[int, list[str]] = {}  # id(ranking) -> its phrasings


def asked_vault(lang: str) -> list[tuple[str, list[dict[str, Any]]]]:
    """(set label, questions with `also` where the set passes it)."""
    none_ru, none_en = qrels(QUESTIONS, "none-ru.jsonl"), qrels(QUESTIONS, "none-en.jsonl")
    if lang == "ru":
        ru = qrels(QUESTIONS, "ru.jsonl")
        en = qrels(QUESTIONS, "en-ru.jsonl")
        said = {q["id"]: q["question"] for q in ru + none_ru}
        return [
            ("ru", ru + none_ru),
            ("en>ru", en + none_en),
            ("en>ru+also", [{**q, "also": [said[q["id"]]]} for q in en + none_en]),
        ]
    return [("en", qrels(QUESTIONS, "en.jsonl") + none_en)]


def asked_distract(folder: Path) -> list[tuple[str, str, list[dict[str, Any]]]]:
    out = []
    for lib, name in (
        ("ru", "ru"),
        ("en", "en"),
        ("ru", "en-ru.cross"),
        ("ru", "ru.exact"),
        ("en", "en.exact"),
    ):
        rows = [
            json.loads(x) for x in (folder / "qrels" / f"{name}.jsonl").read_text().splitlines()
        ]
        out.append((lib, f"D {name}", [r for r in rows if r]))
    return out


SPENT: dict[int, float] = {}  # id(ranking) -> seconds its rank() took


def collect(lib: Library, questions: list[dict[str, Any]]) -> list[tuple[dict, Ranking]]:
    scope = inside(lib).resolve(".")
    out = []
    for q in questions:
        also = tuple(q.get("also", ()))
        t = time.perf_counter()
        r = rank(scope, q["question"], "hybrid", inside(lib).vectors, CANDIDATES, also=also)
        SPENT[id(r)] = time.perf_counter() - t
        QUERIES[id(r)] = [q["question"], *also]
        out.append((q, r))
    return out


def note_cost(label: str, items: list[tuple[dict, Ranking]]) -> str:
    """The note step's share of a search (search/fusion.py with_notes): the median ms of the
    whole rank() and of the note step run again on the same ranking (its reads and its z),
    and the median of their ratio. Query vectors are cached by then, so rank() here is the
    legs' SQL, the fusion and the note step; a search that embeds its question costs more."""
    whole, step = [], []
    for _, r in items:
        if all(lg.qvec is None for lg in r.phrasings):
            continue
        t = time.perf_counter()
        witnessed(r.reader, r.scores, r.phrasings)
        step.append(time.perf_counter() - t)
        whole.append(SPENT[id(r)])
    if not step:
        return f"{label}: no hybrid searches"
    ratio = float(np.median(np.array(step) / np.array(whole)))
    return (
        f"{label}: rank {1000 * float(np.median(whole)):.2f} ms, note step"
        f" {1000 * float(np.median(step)):.2f} ms (median share {ratio:.3f}), {len(step)} searches"
    )


Rule = Callable[[Ranking], dict]


def rescored(r: Ranking, scores: dict) -> Ranking:
    return Ranking(r.reader, r.legs, scores, phrasings=r.phrasings, _rows=r._rows)


def evaluate(items: list[tuple[dict, Ranking]], rule: Rule | None) -> list[dict[str, Any]]:
    recs = []
    for q, r in items:
        if "path" not in q:  # unanswerable: confidence only
            continue
        rr = r if rule is None else rescored(r, rule(r))
        hits = rr.hits(K, notes_cap(K))
        spans = spans_of(q)
        recs.append({"id": q["id"], "half": half(q["id"]), "rank": rank_of(hits, spans, K)})
    return recs


def signals_of(label: str, items: list[tuple[dict, Ranking]]) -> list[dict[str, Any]]:
    """What confidence reads for each search (the phrasing that decides it), with whether the
    first hit is right."""
    from memo.search.confidence import signals

    rows = []
    for q, r in items:
        hits = r.hits(K, notes_cap(K))
        text = r.top_passage()
        every = [signals(legs, text) for legs in r.phrasings]
        s = next((x for x in every if not x["languages_differ"]), every[0])
        s.update(
            set=label, id=q["id"], half=half(q["id"]), shipped=r.confidence() if hits else "none"
        )
        # beyond what confidence reads: where each leg put the first hit, how far the fused
        # first stands from the second, and the vector leg's own gap
        order, _ = r._ordered(2)
        legs = r.phrasings[0]
        top = order[0] if order else None
        s["lex_rank"] = legs.lex_ranked.index(top) + 1 if top in legs.lex_ranked else None
        s["vec_rank"] = legs.vec_ranked.index(top) + 1 if top in legs.vec_ranked else None
        fused = [r.scores[k] for k in order[:2]]
        s["fused_margin"] = (fused[0] - fused[1]) / fused[0] if len(fused) == 2 else 1.0
        vec = [x for _, x in legs.vec]
        s["vec_gap"] = vec[0] - vec[1] if len(vec) >= 2 else 0.0
        s["answerable"] = "path" in q
        s["correct"] = bool(s["answerable"] and rank_of(hits, spans_of(q), 1))
        rows.append(s)
    return rows


def score(recs: list[dict[str, Any]]) -> dict[str, float]:
    n = max(1, len(recs))
    ranks = [x["rank"] for x in recs]
    return {
        "n": len(recs),
        "r1": sum(x == 1 for x in ranks) / n,
        "r5": sum(x is not None and x <= 5 for x in ranks) / n,
        "r10": sum(x is not None for x in ranks) / n,
        "mrr": sum(1 / x for x in ranks if x) / n,
    }


def main() -> None:
    import notes_rules as rules  # the rules tried, kept apart for quick edits

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault-ru", type=Path)
    ap.add_argument("--vault-en", type=Path)
    ap.add_argument("--distract", type=Path)
    ap.add_argument("--rules", default="")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--distract-libs", default="ru,en")
    ap.add_argument("--held-back", action="store_true", help="print the held-back half too")
    ap.add_argument(
        "--index-dir",
        type=Path,
        default=Path(
            os.environ.get("MEMO_INDEX_DIR") or Path(tempfile.gettempdir()) / "memo-notes-idx"
        ),
        help="where the indexes go (MEMO_INDEX_DIR; never beside the eval's own notes)",
    )
    ap.add_argument("--signals", type=Path, help="write each vault search's confidence signals")
    ap.add_argument("--cost", action="store_true", help="time the note step against rank()")
    smoke_args(ap)
    args = ap.parse_args()
    if args.smoke:  # every rule over a tiny distract-shaped set made here
        args.distract = smoke_eval(Path(tempfile.mkdtemp(prefix="memo-notes-smoke-")))
        args.distract = args.distract / "xquad-dev-distract"
        args.index_dir = args.distract.parent / "indexes"
    os.environ["MEMO_INDEX_DIR"] = str(args.index_dir)
    settings = Settings.from_env()
    emb = embedder_for(settings, "serve")
    sets: list[tuple[str, list[tuple[dict, Ranking]], bool]] = []
    t = time.perf_counter()
    for lang, root in (("ru", args.vault_ru), ("en", args.vault_en)):
        if root:
            lib = Library(root, emb, settings)
            lib.index()
            rules.prepare(lib)
            for label, qs in asked_vault(lang):
                sets.append((label, collect(lib, qs), True))
    if args.distract:
        libs: dict[str, Library] = {}
        for sub, label, qs in asked_distract(args.distract):
            if sub not in args.distract_libs.split(","):
                continue
            if sub not in libs:
                libs[sub] = Library(args.distract / sub, emb, settings)
                libs[sub].index()
                rules.prepare(libs[sub])
            sets.append((label, collect(libs[sub], qs[: args.limit or None]), False))
    print(f"# ranked in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    if args.cost or args.smoke:
        print(f"# load {os.getloadavg()[0]:.2f}")
        for label, items, _ in sets:
            print(note_cost(label, items))
    if args.signals:
        with args.signals.open("w") as out:
            for label, items, halves in sets:
                if halves:
                    for row in signals_of(label, items):
                        out.write(json.dumps(row) + "\n")
    rules.QUERIES = QUERIES
    chosen = {n: f for n, f in rules.RULES.items() if not args.rules or n in args.rules.split(",")}
    for name, f in {"memo": None, **chosen}.items():
        cells = []
        for label, items, halves in sets:
            recs = evaluate(items, f)
            parts = ("tune", "held-back") if args.held_back else ("tune",)
            for part in parts if halves else ("all",):
                s = score([x for x in recs if part == "all" or x["half"] == part])
                tag = f"{label}/{part[0]}" if halves else label
                cells.append(f"{tag} {s['r1']:.3f}/{s['r5']:.3f}/{s['mrr']:.3f}")
        print(f"{name}: " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
