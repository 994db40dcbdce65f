"""A real vault nobody here wrote, adopted the way a new user would (issue 22, item 6).

The Obsidian Help vault (github obsidianmd/obsidian-help; its `ru/` and `en/` folders, 173
notes each; fetch and clone it yourself, it is never committed) is copied to a scratch folder,
and for each language:

1. `memo init --yes` on the bare copy: the plan's time and shape;
2. a cold `memo index`: seconds and chunks/s with the indexing engine;
3. the questions of bench/vault/ (80 per set, written for this benchmark: README there) asked
   of the whole library (R@1, R@5, MRR@10), the route's first collection (route top-1) and
   the flow agents run (route, then search the route's first collection: flow R@5), with the
   drafted descriptions and with hand-written ones (bench/vault/descriptions-*.yaml);
4. with `--baseline SRC` (the `src/` of an older checkout, e.g. a worktree of the round's
   start), the same questions against that code's chunking of the same notes, under the
   hand-written descriptions (older memo cannot draft them), in a subprocess.

    python bench/vault.py --vault /path/to/obsidian-help [--baseline /tmp/base/src]

Prints a markdown table; the scratch folder is left for inspection (its path is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from judged import rank_of  # bench/ is on sys.path when run as a script

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "vault"
# (label, questions, the same questions in the notes' language, passed as `also`: same ids)
SETS = {
    "ru": [
        ("ru", "ru.jsonl", None),
        ("en>ru", "en-ru.jsonl", None),
        ("en>ru+also", "en-ru.jsonl", "ru.jsonl"),
    ],
    "en": [("en", "en.jsonl", None)],
}


def qrels(name: str) -> list[dict[str, Any]]:
    lines = (QUESTIONS / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def home(path: str, collections: list[str]) -> str:
    """The collection a note belongs to: the deepest collection folder above it."""
    best = "."
    for c in collections:
        if c != "." and (path == c or path.startswith(c + "/")) and len(c) > len(best):
            best = c
    return best


def measure(
    root: Path, sets: list[tuple[str, str, str | None]], flow: bool = True
) -> dict[str, Any]:
    """Retrieval on one adopted library, with whatever memo is importable (this checkout's,
    or --baseline's): the Library API all of them share."""
    from memo.config import Settings
    from memo.embed import embedder_for
    from memo.library import Library

    settings = Settings.from_env()
    out: dict[str, Any] = {}
    with Library(root, embedder_for(settings, "serve"), settings) as lib:
        t = time.perf_counter()
        rep = lib.index()
        out["index_s"] = time.perf_counter() - t
        done = rep.to_dict()
        out["chunks"] = done["chunks_embedded"] + done.get("chunks_reused", 0)
        colls = [c.rel for c in lib.collections()]
        for label, name, also_name in sets:
            got: dict[str, list[float]] = {"r1": [], "r5": [], "mrr": [], "top1": [], "flow": []}
            ms = []
            said = {x["id"]: x["question"] for x in qrels(also_name)} if also_name else {}
            for q in qrels(name):
                # older memo has no `also`: only sets without it are passed to a baseline
                extra = {"also": [said[q["id"]]]} if also_name else {}
                t = time.perf_counter()
                hits = lib.search(".", q["question"], k=10, **extra).hits
                ms.append((time.perf_counter() - t) * 1000)
                r = rank_of(hits, q, 10)
                got["r1"].append(float(r == 1))
                got["r5"].append(float(r is not None and r <= 5))
                got["mrr"].append(1.0 / r if r else 0.0)
                if flow:
                    routed = [c.path for c in lib.route(q["question"], k=3, **extra).collections]
                    want = home(q["path"], colls)
                    got["top1"].append(float(routed[:1] == [want]))
                    first = (
                        lib.search(routed[0], q["question"], k=5, **extra).hits if routed else []
                    )
                    got["flow"].append(float(rank_of(first, q, 5) is not None))
            out[label] = {k: statistics.fmean(v) for k, v in got.items() if v}
            out[label]["p50_ms"] = statistics.median(ms)
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


def hand_written(root: Path, lang: str) -> None:
    """Replace each drafted description with the hand-written one (the root's loose notes
    keep their drafted one: nobody wrote one for them)."""
    import yaml

    given = yaml.safe_load((QUESTIONS / f"descriptions-{lang}.yaml").read_text("utf-8"))
    for folder, description in given.items():
        meta = root / folder / "_meta.yaml"
        if meta.is_file():
            meta.write_text(
                yaml.safe_dump({"description": description}, allow_unicode=True, width=1000),
                encoding="utf-8",
            )


def baseline(src: Path, root: Path, sets: list[tuple[str, str, str | None]]) -> dict[str, Any]:
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import vault; "
        "print(json.dumps(vault.measure(__import__('pathlib').Path(sys.argv[2]), "
        "json.loads(sys.argv[3]), flow=False)))"
    )
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(HERE), str(root), json.dumps(sets)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault", type=Path, required=True, help="a clone of obsidian-help")
    ap.add_argument("--baseline", type=Path, help="src/ of an older memo checkout")
    ap.add_argument("--langs", default="ru,en")
    ap.add_argument("--scratch", type=Path, default=None)
    args = ap.parse_args()
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="memo-vault-"))
    os.environ.setdefault("MEMO_INDEX_DIR", str(scratch / "indexes"))
    print(f"scratch: {scratch}; load {os.getloadavg()}", flush=True)
    rows = []
    for lang in args.langs.split(","):
        sets = SETS[lang]
        drafted = scratch / f"{lang}-drafted"
        init = adopt(args.vault / lang, drafted)
        print(f"{lang}: init {init}", flush=True)
        res = measure(drafted, sets)
        print(f"{lang}: drafted {json.dumps(res)}", flush=True)
        hand = scratch / f"{lang}-hand"
        shutil.copytree(drafted, hand)
        hand_written(hand, lang)
        os.environ["MEMO_INDEX_DIR"] = str(scratch / "indexes-hand")
        res_hand = measure(hand, sets)
        os.environ["MEMO_INDEX_DIR"] = str(scratch / "indexes")
        print(f"{lang}: hand {json.dumps(res_hand)}", flush=True)
        base = None
        if args.baseline:
            old = scratch / f"{lang}-baseline"
            shutil.copytree(hand, old, ignore=shutil.ignore_patterns("_library.yaml"))
            base = baseline(args.baseline, old, [x for x in sets if x[2] is None])
            print(f"{lang}: baseline {json.dumps(base)}", flush=True)
        rows.append((lang, init, res, res_hand, base, sets))
    print(f"\n## Obsidian Help vault, {time.strftime('%Y-%m-%d')}, load {os.getloadavg()}\n")
    print("| vault | init: plan s / collections / notes | cold index s (chunks, chunks/s) |")
    print("|---|---|---|")
    for lang, init, res, *_ in rows:
        rate = res["chunks"] / res["index_s"] if res["index_s"] else 0
        print(
            f"| {lang} | {init['plan_s']:.2f} / {init['collections']} / {init['notes']} | "
            f"{res['index_s']:.0f} ({res['chunks']}, {rate:.1f}/s) |"
        )
    print(
        "\n| questions | R@1 / R@5 / MRR@10 | baseline chunking R@1 / R@5 / MRR@10 | "
        "route top-1 drafted / hand | flow R@5 drafted / hand | p50 ms |"
    )
    print("|---|---|---|---|---|---|")
    for _lang, _init, res, hand, base, sets in rows:
        for label, _, _ in sets:
            r, h = res[label], hand[label]
            b = base.get(label) if base else None
            old = f"{b['r1']:.3f} / {b['r5']:.3f} / {b['mrr']:.3f}" if b else "—"
            print(
                f"| {label} | {r['r1']:.3f} / {r['r5']:.3f} / {r['mrr']:.3f} | {old} | "
                f"{r['top1']:.3f} / {h['top1']:.3f} | {r['flow']:.3f} / {h['flow']:.3f} | "
                f"{r['p50_ms']:.0f} |"
            )


if __name__ == "__main__":
    main()
