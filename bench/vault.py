"""A real vault nobody here wrote, adopted the way a new user would (issues 22 and 31).

The Obsidian Help vault (github obsidianmd/obsidian-help: its `ru/` and `en/`, 173 notes each;
clone it yourself, it is never committed) is copied to a scratch folder; per language:
`memo init --yes` (the plan's time and shape), `memo index` (the embedding cache as found),
then the questions of bench/vault/ (README there) asked of the whole library: R@1, R@5, R@10
and MRR@10, a hit counting when its lines overlap an answer span, per set (ru, en>ru,
en>ru+also, en) and per half (`half`); each answer's confidence (first hit right, wrong,
unanswerable); the focus of the first right hit; the route's first collection and the flow
(route, then search it), with the descriptions `memo init` drafted (they routed as
hand-written ones did, to the last digit: `git show lab-2026-12:bench/vault.py`). Writes
bench/results/vault.json; the scratch folder stays (`DIR/ru-drafted`, `DIR/en-drafted`, the
indexes in `DIR/indexes`, each question's record in `answers-<lang>.json`) for
bench/confidence.py. A before/after is this script run on each checkout.

`--words` asks every set again with the agent's words (bench/words/, README there: written by
helpers who saw each question and the route map, never a note), each kind alone and all
together: `also` (up to 3 phrasings), `answer` (a likely answer), `keywords` (exact terms),
`all`; per half, with the route's first collection and the confidence said (part `words`).

    python bench/vault.py --vault /path/to/obsidian-help --scratch DIR [--words]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from judged import record, smoke_args  # noqa: E402

QUESTIONS = HERE / "vault"
WORDS = HERE / "words"
# a set's words file (bench/words/README.md), and which of a row's fields each kind sends
WORD_FILES = {"ru": "vault-ru.jsonl", "en>ru": "vault-en-ru.jsonl", "en": "vault-en.jsonl"}
KINDS = {
    "also": ("also",),
    "answer": ("answer",),
    "keywords": ("keywords",),
    "all": ("also", "keywords", "answer"),
}
HALVES = ("tune", "held-back")
LEVELS = ("high", "low", "none")


SEED = "obsidian-help-2026"  # the halves: fixed before any figure was measured


def half(qid: str) -> str:
    """'tune' or 'held-back': the parity of blake2b(SEED + id), the same in every set."""
    h = hashlib.blake2b((SEED + qid).encode("utf-8"), digest_size=8).digest()
    return "tune" if int.from_bytes(h, "big") % 2 == 0 else "held-back"


def spans_of(row: dict[str, Any]) -> list[tuple[str, int, int]]:
    """Every answer span of a row: [(path, line_start, line_end)]."""
    if "spans" in row:
        return [(s["path"], s["line_start"], s["line_end"]) for s in row["spans"]]
    return [(row["path"], row["line_start"], row["line_end"])]


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


def words_of(folder: Path, label: str, kind: str) -> dict[str, dict[str, Any]]:
    """Question id -> the search's keyword arguments for `kind` from the set's words file."""
    out = {}
    for row in qrels(folder, WORD_FILES[label]):
        extra = {f: row[f] for f in KINDS[kind] if row.get(f)}
        out[row["id"]] = extra
    return out


def measure(
    root: Path,
    sets: list[tuple[str, str, str | None, str, str | None]],
    folder: str = str(QUESTIONS),
    words: Path | None = None,
) -> dict[str, Any]:
    """Retrieval and confidence on one adopted library. Per set, one record per question:
    {id, half, rank, confidence, answerable, top1, flow}; with `words` (a folder of words
    files), every set that has one again per kind, labelled `SET +KIND`."""
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
            extra = {i: {"also": [q]} for i, q in said.items()}
            out["sets"][label] = ask(lib, asked, extra, colls)
            if words is None or label not in WORD_FILES:
                continue
            for kind in KINDS:
                got = ask(lib, asked, words_of(words, label, kind), colls)
                out["sets"][f"{label} +{kind}"] = got
                print(f"{label} +{kind}: {scores(got['answers'])}", flush=True)
    return out


def ask(
    lib: Any, asked: list[tuple[dict, bool]], extra: dict[str, dict], colls: list[str]
) -> dict[str, Any]:
    """Each question searched (with its extra words, by id), judged; and the searches' p50."""
    records, ms = [], []
    for q, answerable in asked:
        more = extra.get(q["id"], {})
        t = time.perf_counter()
        res = lib.search(".", q["question"], k=10, **more)
        ms.append((time.perf_counter() - t) * 1000)
        records.append(judged(lib, q, res, answerable, more, colls))
    return {"answers": records, "p50_ms": statistics.median(ms)}


def judged(
    lib: Any, q: dict[str, Any], res: Any, answerable: bool, extra: dict, colls: list[str]
) -> dict[str, Any]:
    """One question's record: its half, rank, confidence, focus, and the route's flow."""
    rec: dict[str, Any] = {"id": q["id"], "half": half(q["id"]), "answerable": answerable}
    rec["confidence"] = res.confidence
    if not answerable:
        return rec
    spans = spans_of(q)
    rec["rank"] = rank_of(res.hits, spans, 10)
    if rec["rank"]:
        rec |= focus_record(res.hits[rec["rank"] - 1])
    routed = [c.path for c in lib.route(q["question"], k=3, **extra).collections]
    rec["top1"] = bool(routed) and routed[0] in {home(p, colls) for p, _, _ in spans}
    first = lib.search(routed[0], q["question"], k=5, **extra).hits if routed else []
    rec["flow"] = rank_of(first, spans, 5) is not None
    return rec


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


def run(
    vault: Path, langs: list[str], scratch: Path, folder: Path, words: Path | None = None
) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    os.environ.setdefault("MEMO_INDEX_DIR", str(scratch / "indexes"))
    rows = []
    for lang in langs:
        sets = SETS[lang]
        drafted = scratch / f"{lang}-drafted"
        init = adopt(vault / lang, drafted)
        print(f"{lang}: init {init}", flush=True)
        res = measure(drafted, sets, folder=str(folder), words=words)
        (scratch / f"answers-{lang}.json").write_text(json.dumps(res, indent=1), "utf-8")
        print(f"{lang}: drafted, {res['index_s']:.0f} s to index", flush=True)
        rows.append((lang, init, res))
    return rows


def report(rows: list[Any], load0: float, smoke: bool) -> None:
    """Each table's figures into bench/results/vault.json (render.py prints them)."""

    def each(part: str, data: Any) -> None:
        record(__file__, part, data, load0, smoke)

    each(
        "index",
        [
            {"lang": lang, **init, "index_s": res["index_s"], "chunks": res["chunks"]}
            for lang, init, res in rows
        ],
    )
    plain = [(label, part, pick) for label, part, pick in by_half(rows) if " +" not in label]
    each("retrieval", [{"set": label, "half": part, **scores(pick)} for label, part, pick in plain])
    if any(" +" in label for label, _, _ in by_half(rows)):
        each("words", words_rows(rows))
    each(
        "confidence",
        [
            {"set": label, "half": part}
            | {kind: [sum(c.values()), *(c[lv] for lv in LEVELS)] for kind, c in table.items()}
            for label, part, pick in plain
            for table in [confidence_table(pick)]
        ],
    )
    each("focus", [x for label, part, pick in plain if (x := focus_of(label, part, pick))])
    each(
        "route",
        [
            {"set": label, "p50_ms": got["p50_ms"]}
            | {k: scores(got["answers"])[k] for k in ("top1", "flow")}
            for _lang, _init, res in rows
            for label, got in res["sets"].items()
            if " +" not in label
        ],
    )


def words_rows(rows: list[Any]) -> list[dict[str, Any]]:
    """Per set and kind of words (`none` the question alone): each half's R@1/R@5/R@10, the
    route's top-1 and the confidence said (all questions), the searches' p50."""
    out = []
    for _lang, _init, res in rows:
        for label, got in res["sets"].items():
            base, _, kind = label.partition(" +")
            if not kind and f"{base} +all" not in res["sets"]:
                continue
            row: dict[str, Any] = {"set": base, "words": kind or "none", "p50_ms": got["p50_ms"]}
            for part in (*HALVES, "all"):
                pick = [r for r in got["answers"] if part in ("all", r["half"])]
                row[part] = {k: v for k, v in scores(pick).items() if k != "flow"}
            table = confidence_table(got["answers"])
            row["confidence"] = {
                k: [sum(c.values()), *(c[lv] for lv in LEVELS)] for k, c in table.items()
            }
            out.append(row)
    return out


def focus_of(label: str, part: str, answers: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first right hit of each question (within the top 10): its lines and its focus's."""
    pick = [r for r in answers if "lines" in r]
    if not pick:
        return None
    return {
        "set": label,
        "half": part,
        "n": len(pick),
        "chunk_lines": statistics.median(r["lines"] for r in pick),
        "focus_lines": statistics.median(r["focus_lines"] for r in pick),
        "shorter": sum(r["focus_lines"] < r["lines"] for r in pick) / len(pick),
    }


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
    one of them answered by two sections): exits 0 when they all ran."""
    scratch = Path(tempfile.mkdtemp(prefix="memo-vault-smoke-"))
    vault, qdir = scratch / "vault" / "smoke", scratch / "questions"
    for rel, text in SMOKE_NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    qdir.mkdir()

    def row(qid: str, question: str, path: str, *headings: str) -> dict[str, Any]:
        """A question answered by these `##` sections of `path`, their lines derived."""
        lines = (vault / path).read_text(encoding="utf-8").splitlines()
        spans = []
        for heading in headings:
            start = lines.index(f"## {heading}") + 1
            end = next((i for i in range(start, len(lines)) if lines[i][:3] == "## "), len(lines))
            spans.append({"path": path, "line_start": start, "line_end": end})
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
    said = {
        "v001": {"also": ["tomato watering"], "answer": "Water them every morning."},
        "v002": {"also": ["pruning roses"], "keywords": ["prune"]},
        "n001": {"keywords": ["%%"]},  # punctuation alone: left out with a warning
    }
    words = [{"id": i, **said.get(i, {})} for i in ("v001", "v002", "v003", "v004", "n001")]
    (qdir / "words.jsonl").write_text("".join(json.dumps(w) + "\n" for w in words), "utf-8")
    WORD_FILES["smoke"] = "words.jsonl"
    SETS["smoke"] = [
        ("smoke", "q.jsonl", None, "none.jsonl", None),
        ("smoke+also", "q.jsonl", "q.jsonl", "none.jsonl", "none.jsonl"),
    ]
    os.environ["MEMO_INDEX_DIR"] = str(scratch / "indexes")
    load0 = os.getloadavg()[0]
    rows = run(scratch / "vault", ["smoke"], scratch, qdir, words=qdir)
    report(rows, load0, smoke=True)
    got = rows[0][2]["sets"]
    labels = ("smoke", "smoke+also", *(f"smoke +{k}" for k in KINDS))
    ok = all(len(got[label]["answers"]) == 5 for label in labels)
    print(f"\nsmoke: {'ok' if ok else 'FAILED: ' + str(scratch)}")
    if ok:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0 if ok else 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault", type=Path, help="a clone of obsidian-help")
    ap.add_argument("--langs", default="ru,en")
    ap.add_argument("--scratch", type=Path, default=None)
    ap.add_argument("--words", action="store_true", help="every set again with the agent's words")
    smoke_args(ap)  # a tiny vault of its own, in seconds
    args = ap.parse_args()
    if args.smoke:
        sys.exit(smoke())
    if not args.vault:
        ap.error("--vault is required (or --smoke)")
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="memo-vault-"))
    print(f"scratch: {scratch}; load {os.getloadavg()}", flush=True)
    load0 = os.getloadavg()[0]
    words = WORDS if args.words else None
    rows = run(args.vault, args.langs.split(","), scratch, QUESTIONS, words)
    report(rows, load0, smoke=False)


if __name__ == "__main__":
    main()
