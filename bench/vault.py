"""A real vault nobody here wrote, adopted the way a new user would (issues 22 and 31).

The Obsidian Help vault (github obsidianmd/obsidian-help; its `ru/` and `en/` folders, 173
notes each; fetch and clone it yourself, it is never committed) is copied to a scratch folder,
and for each language:

1. `memo init --yes` on the bare copy: the plan's time and shape;
2. `memo index` into a new index: seconds and chunks/s with the indexing engine (the user's
   embedding cache is used as found: a second run embeds nothing, and says so in seconds);
3. the questions of bench/vault/ (159 per set, README there) asked of the whole library: R@1,
   R@5, R@10 and MRR@10, where a hit counts when its lines `line..end_line` overlap one of the
   question's answer spans; per set (ru, en>ru, en>ru+also, en) and per half (`tune` /
   `held-back`, a seeded hash of the question id: bench/vault/check.py `half`) and in total;
4. the confidence of each answer, per half: of the questions whose first hit is right, how many
   said high / low / none; the same for a wrong first hit; and for the questions the vault does
   not answer (none-*.jsonl), which should say `none`;
5. the route's first collection (route top-1) and the flow agents run (route, then search the
   route's first collection: flow R@5), with the drafted descriptions and with hand-written
   ones (bench/vault/descriptions-*.yaml);
6. with `--baseline SRC` (the `src/` of an older checkout), the same questions against that
   code's chunking of the same notes, under the hand-written descriptions, in a subprocess.

    python bench/vault.py --vault /path/to/obsidian-help [--baseline /tmp/base/src]
    python bench/vault.py --smoke      # a tiny vault it makes itself: the code paths, in seconds

Prints markdown tables; the scratch folder is left for inspection (its path is printed), with
each question's rank and confidence in `answers-<lang>.json`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "vault"
HALVES = ("tune", "held-back")
LEVELS = ("high", "low", "none")


def _check_module() -> Any:
    """bench/vault/check.py (stdlib only): the halves and the spans of a row live there."""
    spec = importlib.util.spec_from_file_location("vault_check", QUESTIONS / "check.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_check = _check_module()
half = _check.half
spans_of = _check.spans_of

# label -> (questions, the same questions in the notes' language passed as `also` (same ids),
# the unanswerable questions, their `also`)
SETS: dict[str, list[tuple[str, str, str | None, str, str | None]]] = {
    "ru": [
        ("ru", "ru.jsonl", None, "none-ru.jsonl", None),
        ("en>ru", "en-ru.jsonl", None, "none-en.jsonl", None),
        ("en>ru+also", "en-ru.jsonl", "ru.jsonl", "none-en.jsonl", "none-ru.jsonl"),
    ],
    "en": [("en", "en.jsonl", None, "none-en.jsonl", None)],
}


def qrels(folder: Path, name: str) -> list[dict[str, Any]]:
    lines = (folder / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def rank_of(hits: list[Any], spans: list[tuple[str, int, int]], k: int) -> int | None:
    """1-based rank of the first of the first `k` hits whose lines overlap an answer span."""
    for rank, h in enumerate(hits[:k], start=1):
        last = max(h.line, getattr(h, "end_line", 0) or h.line)
        if any(h.path == p and h.line <= e and s <= last for p, s, e in spans):
            return rank
    return None


def focus_record(hit: Any) -> dict[str, Any]:
    """How many lines a right hit's chunk and its focus (search/focus.py) are. Whether the
    focus holds the answer is measured by bench/focus.py on XQuAD's answer texts: here the
    answer is a section, which holds every line of its chunks."""
    end = max(hit.line, hit.end_line)
    return {"lines": end - hit.line + 1, "focus_lines": hit.focus_end_line - hit.focus_line + 1}


def home(path: str, collections: list[str]) -> str:
    """The collection a note belongs to: the deepest collection folder above it."""
    best = "."
    for c in collections:
        if c != "." and (path == c or path.startswith(c + "/")) and len(c) > len(best):
            best = c
    return best


def measure(
    root: Path,
    sets: list[tuple[str, str, str | None, str, str | None]],
    flow: bool = True,
    folder: str = str(QUESTIONS),
) -> dict[str, Any]:
    """Retrieval and confidence on one adopted library, with whatever memo is importable (this
    checkout's, or --baseline's): the Library API all of them share. Per set, one record per
    question: {id, half, rank, confidence, answerable, top1, flow}."""
    from memo.config import Settings
    from memo.embed import embedder_for
    from memo.library import Library

    qdir = Path(folder)
    settings = Settings.from_env()
    out: dict[str, Any] = {"sets": {}}
    with Library(root, embedder_for(settings, "serve"), settings) as lib:
        t = time.perf_counter()
        rep = lib.index()
        out["index_s"] = time.perf_counter() - t
        done = rep.to_dict()
        out["chunks"] = done["chunks_embedded"] + done.get("chunks_reused", 0)
        # `memo index` ends with every vector (two-stage indexing waits for its stage two);
        # a figure measured with vectors missing would be a lexical one: say so, loudly
        out["pending"] = done.get("chunks_pending", 0)
        if out["pending"]:
            print(f"WARNING: {out['pending']} chunks without vectors after index", flush=True)
        colls = [c.rel for c in lib.collections()]
        for label, name, also_name, none_name, none_also in sets:
            said = {x["id"]: x["question"] for x in qrels(qdir, also_name)} if also_name else {}
            said |= {x["id"]: x["question"] for x in qrels(qdir, none_also)} if none_also else {}
            asked = [(q, True) for q in qrels(qdir, name)]
            asked += [(q, False) for q in qrels(qdir, none_name)]
            records, ms = [], []
            for q, answerable in asked:
                # older memo has no `also`: only sets without it are passed to a baseline
                extra = {"also": [said[q["id"]]]} if q["id"] in said else {}
                t = time.perf_counter()
                res = lib.search(".", q["question"], k=10, **extra)
                ms.append((time.perf_counter() - t) * 1000)
                rec: dict[str, Any] = {
                    "id": q["id"],
                    "half": half(q["id"]),
                    "answerable": answerable,
                    "confidence": getattr(res, "confidence", "none"),
                }
                if answerable:
                    spans = spans_of(q)
                    rec["rank"] = rank_of(res.hits, spans, 10)
                    if rec["rank"] and getattr(res.hits[0], "focus_line", 0):
                        rec |= focus_record(res.hits[rec["rank"] - 1])
                    if flow:
                        routed = [
                            c.path for c in lib.route(q["question"], k=3, **extra).collections
                        ]
                        want = {home(p, colls) for p, _, _ in spans}
                        rec["top1"] = bool(routed) and routed[0] in want
                        first = (
                            lib.search(routed[0], q["question"], k=5, **extra).hits
                            if routed
                            else []
                        )
                        rec["flow"] = rank_of(first, spans, 5) is not None
                records.append(rec)
            out["sets"][label] = {"answers": records, "p50_ms": statistics.median(ms)}
    return out


def scores(records: list[dict[str, Any]]) -> dict[str, float]:
    """R@1, R@5, R@10, MRR@10 (and route top-1, flow R@5 when measured) of answerable records."""
    rs = [r for r in records if r["answerable"]]
    n = max(1, len(rs))
    ranks = [r["rank"] for r in rs]
    out = {
        "n": float(len(rs)),
        "r1": sum(x == 1 for x in ranks) / n,
        "r5": sum(x is not None and x <= 5 for x in ranks) / n,
        "r10": sum(x is not None for x in ranks) / n,
        "mrr": sum(1 / x for x in ranks if x) / n,
    }
    for key in ("top1", "flow"):
        if rs and key in rs[0]:
            out[key] = sum(bool(r[key]) for r in rs) / n
    return out


def confidence_table(records: list[dict[str, Any]]) -> dict[str, Counter[str]]:
    """How often each level was said: first hit right / first hit wrong / unanswerable."""
    out: dict[str, Counter[str]] = {"right": Counter(), "wrong": Counter(), "none": Counter()}
    for r in records:
        kind = "none" if not r["answerable"] else ("right" if r["rank"] == 1 else "wrong")
        out[kind][r["confidence"]] += 1
    return out


def adopt(src: Path, dst: Path) -> dict[str, Any]:
    """A bare copy of the vault made a library with `memo init --yes`; the plan's figures."""
    from memo.config import Settings
    from memo.library.adopt import plan

    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".obsidian"))
    t = time.perf_counter()
    p = plan(dst, Settings.from_env())
    seconds = time.perf_counter() - t
    p.write(Settings.from_env())
    return {"plan_s": seconds, "collections": len(p.new), "notes": p.notes}


def hand_written(root: Path, descriptions: Path) -> None:
    """Replace each drafted description with the hand-written one (the root's loose notes
    keep their drafted one: nobody wrote one for them)."""
    import yaml

    given = yaml.safe_load(descriptions.read_text("utf-8"))
    for folder, description in given.items():
        meta = root / folder / "_meta.yaml"
        if meta.is_file():
            meta.write_text(
                yaml.safe_dump({"description": description}, allow_unicode=True, width=1000),
                encoding="utf-8",
            )


def baseline(src: Path, root: Path, sets: list[Any], folder: Path) -> dict[str, Any]:
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import vault; "
        "print(json.dumps(vault.measure(__import__('pathlib').Path(sys.argv[2]), "
        "json.loads(sys.argv[3]), flow=False, folder=sys.argv[4])))"
    )
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(HERE), str(root), json.dumps(sets), str(folder)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(
    vault: Path, langs: list[str], scratch: Path, folder: Path, base_src: Path | None
) -> list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any] | None]]:
    os.environ.setdefault("MEMO_INDEX_DIR", str(scratch / "indexes"))
    rows = []
    for lang in langs:
        sets = SETS[lang]
        drafted = scratch / f"{lang}-drafted"
        init = adopt(vault / lang, drafted)
        print(f"{lang}: init {init}", flush=True)
        res = measure(drafted, sets, folder=str(folder))
        (scratch / f"answers-{lang}.json").write_text(json.dumps(res, indent=1), "utf-8")
        print(f"{lang}: drafted, {res['index_s']:.0f} s to index", flush=True)
        hand = scratch / f"{lang}-hand"
        shutil.copytree(drafted, hand)
        hand_written(hand, folder / f"descriptions-{lang}.yaml")
        index_dir = os.environ["MEMO_INDEX_DIR"]
        os.environ["MEMO_INDEX_DIR"] = str(scratch / "indexes-hand")
        res_hand = measure(hand, sets, folder=str(folder))
        os.environ["MEMO_INDEX_DIR"] = index_dir
        print(f"{lang}: hand-written descriptions, done", flush=True)
        base = None
        if base_src:
            old = scratch / f"{lang}-baseline"
            shutil.copytree(hand, old, ignore=shutil.ignore_patterns("_library.yaml"))
            base = baseline(base_src, old, [x for x in sets if x[2] is None], folder)
            print(f"{lang}: baseline done", flush=True)
        rows.append((lang, init, res, res_hand, base))
    return rows


def report(rows: list[Any]) -> None:
    print(f"\n## Obsidian Help vault, {time.strftime('%Y-%m-%d')}, load {os.getloadavg()}\n")
    # a fresh index, but the user's embedding cache as found: a second run embeds nothing
    print("| vault | init: plan s / collections / notes | new index s (chunks, chunks/s) |")
    print("|---|---|---|")
    for lang, init, res, *_ in rows:
        rate = res["chunks"] / res["index_s"] if res["index_s"] else 0
        print(
            f"| {lang} | {init['plan_s']:.2f} / {init['collections']} / {init['notes']} | "
            f"{res['index_s']:.0f} ({res['chunks']}, {rate:.1f}/s) |"
        )
    has_base = any(b for *_, b in rows)
    print(
        "\n### Retrieval (drafted descriptions; a hit counts when its lines overlap an answer "
        "span)\n"
    )
    head = "| set | half | n | R@1 | R@5 | R@10 | MRR@10 |"
    print(head + (" baseline R@1 / R@5 / MRR@10 |" if has_base else ""))
    print("|---|---|---|---|---|---|---|" + ("---|" if has_base else ""))
    for _lang, _init, res, _hand, base in rows:
        for label, got in res["sets"].items():
            for part in (*HALVES, "all"):
                pick = [r for r in got["answers"] if part == "all" or r["half"] == part]
                s = scores(pick)
                line = (
                    f"| {label} | {part} | {s['n']:.0f} | {s['r1']:.3f} | {s['r5']:.3f} | "
                    f"{s['r10']:.3f} | {s['mrr']:.3f} |"
                )
                if has_base:
                    old = base["sets"].get(label) if base else None
                    if old:
                        b = scores(
                            [r for r in old["answers"] if part == "all" or r["half"] == part]
                        )
                        line += f" {b['r1']:.3f} / {b['r5']:.3f} / {b['mrr']:.3f} |"
                    else:
                        line += " — |"
                print(line)
    print(
        "\n### Confidence (high / low / none): first hit right, first hit wrong, "
        "unanswerable questions\n"
    )
    print(
        "| set | half | right: n, high / low / none | wrong: n, high / low / none | "
        "unanswerable: n, high / low / none |"
    )
    print("|---|---|---|---|---|")
    for label, part, pick in by_half(rows):
        table = confidence_table(pick)
        cells = [
            f"{sum(table[k].values())}: " + " / ".join(str(table[k][lv]) for lv in LEVELS)
            for k in ("right", "wrong", "none")
        ]
        print(f"| {label} | {part} | " + " | ".join(cells) + " |")
    focus_table(rows)
    print("\n### Route and flow (all questions)\n")
    print("| set | route top-1 drafted / hand | flow R@5 drafted / hand | p50 ms |")
    print("|---|---|---|---|")
    for _lang, _init, res, hand, _base in rows:
        for label, got in res["sets"].items():
            r, h = scores(got["answers"]), scores(hand["sets"][label]["answers"])
            print(
                f"| {label} | {r['top1']:.3f} / {h['top1']:.3f} | "
                f"{r['flow']:.3f} / {h['flow']:.3f} | {got['p50_ms']:.0f} |"
            )


def focus_table(rows: list[Any]) -> None:
    """The first right hit of each question (within the top 10): its lines and its focus's."""
    print(
        "\n### Focus: the first right hit's lines that answer best (search/focus.py)\n\n"
        "| set | half | n | lines: chunk / focus (median) | focus shorter than its chunk |"
    )
    print("|---|---|---|---|---|")
    for label, part, answers in by_half(rows):
        pick = [r for r in answers if "lines" in r]
        if not pick:
            continue
        chunk = statistics.median(r["lines"] for r in pick)
        focus = statistics.median(r["focus_lines"] for r in pick)
        fewer = sum(r["focus_lines"] < r["lines"] for r in pick) / len(pick)
        print(f"| {label} | {part} | {len(pick)} | {chunk:.0f} / {focus:.0f} | {fewer:.3f} |")


def by_half(rows: list[Any]) -> Iterator[tuple[str, str, list[dict[str, Any]]]]:
    """Each set of each language's run, per half and then in all: (set, half, its answers)."""
    for _lang, _init, res, *_ in rows:
        for label, got in res["sets"].items():
            for part in (*HALVES, "all"):
                yield label, part, [r for r in got["answers"] if part in ("all", r["half"])]


SMOKE_NOTES = {
    "Garden/Tomatoes.md": (
        "---\npermalink: tomatoes\n---\nTomatoes like sun.\n\n## Watering\n\nWater the "
        "tomatoes every morning, at the root.\n\n## Pests\n\nAphids are washed off with "
        "soapy water.\n"
    ),
    "Garden/Roses.md": (
        "---\npermalink: roses\n---\n## Pruning\n\nPrune roses in early spring, above an "
        "outward bud.\n\n## Feeding\n\nFeed roses with compost in May.\n"
    ),
    "Kitchen/Bread.md": (
        "---\npermalink: bread\n---\n## Dough\n\nKnead the dough for ten minutes until it is "
        "smooth.\n\n## Baking\n\nBake the loaf at 220 degrees for thirty minutes.\n"
    ),
}


def smoke() -> int:
    """The runner's code paths on a tiny vault it writes itself (a few notes, a few questions,
    one of them answered by two sections; this checkout as its own baseline): exits 0 when
    they all ran."""
    scratch = Path(tempfile.mkdtemp(prefix="memo-vault-smoke-"))
    vault, qdir = scratch / "vault" / "smoke", scratch / "questions"
    for rel, text in SMOKE_NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    qdir.mkdir()

    def row(qid: str, question: str, path: str, *headings: str) -> dict[str, Any]:
        """A question answered by these sections of `path`, their lines derived, not typed."""
        note = _check.Note(str(vault / path))
        spans = []
        for heading in headings:
            (start,) = [no for no, _lvl, text in note.heads if text == heading]
            spans.append({"path": path, "line_start": start, "line_end": note.section_of(start)[0]})
        r: dict[str, Any] = {"id": qid, "question": question, **spans[0]}
        if len(spans) > 1:
            r["spans"] = spans
        return r

    asked = [
        row("v001", "how often should I water tomato plants", "Garden/Tomatoes.md", "Watering"),
        row("v002", "when do I cut back roses", "Garden/Roses.md", "Pruning"),
        row("v003", "what temperature to bake bread", "Kitchen/Bread.md", "Baking"),
        row("v004", "rose care: pruning and feeding", "Garden/Roses.md", "Pruning", "Feeding"),
    ]
    none = [{"id": "n001", "question": "how do I file my tax return online"}]
    for name, rows_ in (("q.jsonl", asked), ("none.jsonl", none)):
        text = "".join(json.dumps(r) + "\n" for r in rows_)
        (qdir / name).write_text(text, encoding="utf-8")
    (qdir / "descriptions-smoke.yaml").write_text(
        "Garden: growing tomatoes and roses\nKitchen: baking bread\n", encoding="utf-8"
    )
    SETS["smoke"] = [
        ("smoke", "q.jsonl", None, "none.jsonl", None),
        ("smoke+also", "q.jsonl", "q.jsonl", "none.jsonl", "none.jsonl"),
    ]
    os.environ["MEMO_INDEX_DIR"] = str(scratch / "indexes")
    # this checkout's own src/ stands in for an older one: the --baseline path runs too
    rows = run(scratch / "vault", ["smoke"], scratch, qdir, HERE.parent / "src")
    report(rows)
    got, base = rows[0][2]["sets"], rows[0][4]
    ok = all(len(got[label]["answers"]) == 5 for label in ("smoke", "smoke+also"))
    ok = ok and base is not None and len(base["sets"]["smoke"]["answers"]) == 5
    print(f"\nsmoke: {'ok' if ok else 'FAILED: ' + str(scratch)}")
    if ok:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0 if ok else 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault", type=Path, help="a clone of obsidian-help")
    ap.add_argument("--baseline", type=Path, help="src/ of an older memo checkout")
    ap.add_argument("--langs", default="ru,en")
    ap.add_argument("--scratch", type=Path, default=None)
    ap.add_argument("--smoke", action="store_true", help="a tiny vault of its own, in seconds")
    args = ap.parse_args()
    if args.smoke:
        sys.exit(smoke())
    if not args.vault:
        ap.error("--vault is required (or --smoke)")
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="memo-vault-"))
    print(f"scratch: {scratch}; load {os.getloadavg()}", flush=True)
    rows = run(args.vault, args.langs.split(","), scratch, QUESTIONS, args.baseline)
    report(rows)


if __name__ == "__main__":
    main()
