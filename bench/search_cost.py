"""What a search with the agent's words, a search with `explain` and `memo related` cost against
a plain search, in one run (issue 43: words <= 2x; issue 45: explain <= 1.1x, related <= 50 ms).

A copy of a vault half is adopted as `memo init` would and indexed; then, in-process and warm
(every question asked once of every kind first), each question of bench/vault/ is searched in
turn plain, with all its words (bench/words/: up to 3 phrasings, keywords, a likely answer),
plain with `explain` and with words and `explain`, `rounds` times in a shuffled order, so that
load drifts over all four alike; `Library.related` is timed for every note the same way. p50
and p90 per kind, and each p50 over the plain search's. Writes bench/results/search_cost.json.

    python bench/search_cost.py --vault /path/to/obsidian-help --lang ru [--rounds 3]
    python bench/search_cost.py --smoke
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from judged import pct, record, smoke_args  # bench/ is on sys.path when run as a script

from memo.config import Settings
from memo.library import Library
from memo.library.adopt import plan
from memo.search import legs

HERE = Path(__file__).resolve().parent
# the questions asked of each half, and the words written for them (bench/words/README.md)
ASKED = {"ru": ("en-ru.jsonl", "vault-en-ru.jsonl"), "en": ("en.jsonl", "vault-en.jsonl")}
KINDS = ("plain", "words", "explain", "words+explain")


def rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def options(kind: str, words: dict) -> dict:
    """A search's keyword arguments for one kind of call."""
    out: dict = {"k": 8}
    if "words" in kind:
        out |= {f: words[f] for f in ("also", "keywords", "answer") if words.get(f)}
    if "explain" in kind:
        out["explain"] = True
    return out


def timed(calls: list, rounds: int) -> dict[str, list[float]]:
    """Each (kind, call) `rounds` times in a shuffled order: ms per kind."""
    times: dict[str, list[float]] = {}
    for _ in range(rounds):
        random.shuffle(calls)
        for kind, call in calls:
            t = time.perf_counter()
            call()
            times.setdefault(kind, []).append((time.perf_counter() - t) * 1000)
    return times


def measure(lib: Library, questions: list[dict], words: dict, rounds: int) -> dict:
    # no question's vectors kept between searches: every search embeds its words (once), as
    # an agent's new question does
    legs.QUERY_CACHE = 0

    def asked(q: dict, kind: str):
        o = options(kind, words.get(q["id"], {}))

        def call():
            return lib.search(".", q["question"], **o)

        return call

    calls = [(kind, asked(q, kind)) for q in questions for kind in KINDS]
    for _, call in calls:  # warm: each index's vectors, the model
        call()
    notes = sorted({h.path for _, call in calls[:: len(KINDS)] for h in call().hits})
    calls += [("related", lambda n=n: lib.related(n, k=8)) for n in notes]
    times = timed(calls, rounds)
    base = statistics.median(times["plain"])
    return {
        "questions": len(questions),
        "notes": len(notes),
        "rounds": rounds,
        "kinds": [
            {
                "kind": kind,
                "n": len(ts),
                "p50": statistics.median(ts),
                "p90": pct(ts, 90),
                "x_plain": statistics.median(ts) / base,
            }
            for kind, ts in sorted(times.items(), key=lambda x: [*KINDS, "related"].index(x[0]))
        ],
    }


def library(args: argparse.Namespace, scratch: Path) -> tuple[Path, list[dict], dict]:
    """The adopted copy, its questions and their words (for --smoke: the example notes and
    two questions of their own)."""
    root = scratch / "lib"
    if args.smoke:
        shutil.copytree(HERE.parent / "examples" / "notes", root)
        questions = [
            {"id": "s1", "question": "how do I tag a VLAN on a trunk port"},
            {"id": "s2", "question": "как настроить маршрутизацию по политике"},
        ]
        words = {"s1": {"also": ["802.1Q trunk"], "keywords": ["vlan"], "answer": "Tag it."}}
        return root, questions, words
    shutil.copytree(Path(args.vault) / args.lang, root, ignore=shutil.ignore_patterns(".obsidian"))
    plan(root, Settings.from_env()).write(Settings.from_env())
    asked, said = ASKED[args.lang]
    words = {w["id"]: w for w in rows(HERE / "words" / said)}
    return root, rows(HERE / "vault" / asked), words


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault", help="a clone of obsidian-help (its ru/ and en/)")
    ap.add_argument("--lang", default="ru", choices=sorted(ASKED))
    ap.add_argument("--rounds", type=int, default=3)
    smoke_args(ap)
    args = ap.parse_args()
    if not (args.vault or args.smoke):
        ap.error("--vault is required (or --smoke)")
    scratch = Path(tempfile.mkdtemp(prefix="memo-search-cost-"))
    os.environ.setdefault("MEMO_INDEX_DIR", str(scratch / "indexes"))
    try:
        root, questions, words = library(args, scratch)
        with Library.from_env(root) as lib:
            lib.index()
            load0 = os.getloadavg()[0]
            data = measure(lib, questions, words, 1 if args.smoke else args.rounds)
        data["library"] = "examples" if args.smoke else f"vault {args.lang}"
        record(__file__, "cost", data, load0, args.smoke)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
