"""What the benchmarks share: judging hits against a qrel, the smoke library, the results.

    rank_of(hits, q)     the rank of the first hit inside the section (None: not in the list)
    scores(ranks)        R@1, R@5 and MRR over many questions' ranks
    TASKS                the dev tasks: (name, library, qrels) under ../shared/eval
    smoke_eval(folder)   a tiny eval tree shaped like ../shared/eval, made in `folder`
    smoke_args(ap)       `--smoke` on a script's parser
    record(...)          a measured part into bench/results/<script>.json (docs/benchmarks.md
                         renders it: bench/render.py), printed as the docs show it
    judge, pct, free_port, load_average    what every table measures the same way

Every script takes `--smoke` (its code paths on `smoke_eval`'s tree, in seconds: tests/
test_bench.py), and measures through memo's public face: `Library` (`search`, `route`, `rank`)
and public names, never a `_private` one. bench/ is on sys.path when a script runs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
TASKS = [  # (name, library, qrels), under ../shared/eval
    ("ru>ru", "xquad-dev/ru", "xquad-dev/qrels/ru.jsonl"),
    ("en>en", "xquad-dev/en", "xquad-dev/qrels/en.jsonl"),
    ("en>ru", "xquad-dev/ru", "xquad-dev/qrels/en-ru.cross.jsonl"),
    ("ru-exact", "xquad-dev/ru", "xquad-dev/qrels/ru.exact.jsonl"),
    ("en-exact", "xquad-dev/en", "xquad-dev/qrels/en.exact.jsonl"),
    ("D ru>ru", "xquad-dev-distract/ru", "xquad-dev-distract/qrels/ru.jsonl"),
    ("D en>en", "xquad-dev-distract/en", "xquad-dev-distract/qrels/en.jsonl"),
    ("D en>ru", "xquad-dev-distract/ru", "xquad-dev-distract/qrels/en-ru.cross.jsonl"),
]


def rank_of(hits: Sequence[Any], q: dict[str, Any], k: int | None = None) -> int | None:
    """1-based rank of the first of the first `k` hits (all when None) whose path is the
    qrel's note and whose line lies in its section."""
    for rank, h in enumerate(hits[:k] if k else hits, start=1):
        if h.path == q["path"] and q["line_start"] <= h.line <= q["line_end"]:
            return rank
    return None


def scores(ranks: Iterable[int | None]) -> dict[str, float]:
    """{"r1", "r5", "mrr"} over the ranks (None: the answer was not found)."""
    ranks = list(ranks)
    n = max(1, len(ranks))
    return {
        "r1": sum(r == 1 for r in ranks) / n,
        "r5": sum(r is not None and r <= 5 for r in ranks) / n,
        "mrr": sum(1 / r for r in ranks if r) / n,
    }


# ---------------------------------------------------------------------- --smoke
# (id, topic, note, {lang: (title, body, question)}): one paragraph each, line 3 of its note
# fmt: off
_SMOKE = [
    ("q1", "topic-1", "bread.md", {
        "ru": ("Хлеб", "Тесто из 500 г муки и 350 г воды печётся 45 минут при 230 °C.",
               "Сколько минут печётся хлеб?"),
        "en": ("Bread", "Dough of 500 g flour and 350 g water bakes for 45 minutes at 230 °C.",
               "How many minutes does the bread bake?")}),
    ("q2", "topic-2", "tesla.md", {
        "ru": ("Никола Тесла", "Тесла родился в 1856 году в Смилянах и изобрёл асинхронный "
               "двигатель.", "В каком году родился Тесла?"),
        "en": ("Nikola Tesla", "Tesla was born in 1856 in Smiljan and invented the induction "
               "motor.", "In which year was Tesla born?")}),
    ("q3", "topic-3", "vlan.md", {
        "ru": ("VLAN", "Тегированный интерфейс создаётся командой ip link с типом vlan и id 42.",
               "Какой командой создаётся тегированный интерфейс?"),
        "en": ("VLAN", "A tagged interface is made with ip link, type vlan and id 42.",
               "Which command makes a tagged interface?")}),
    ("q4", "topic-3", "warsaw.md", {
        "ru": ("Варшава", "Варшава стоит на Висле; в городе живёт около 1,8 миллиона человек.",
               "На какой реке стоит Варшава?"),
        "en": ("Warsaw", "Warsaw lies on the Vistula; about 1.8 million people live there.",
               "Which river does Warsaw lie on?")}),
]
# fmt: on
_ANSWERS = {"q1": "45", "q2": "1856", "q3": "42", "q4": "1"}  # as XQuAD's `answer`: text
SMOKE_SETS = ("xquad-dev", "xquad-dev-distract")
# the distract set's documentation collections: one note each, answering no question
_DOCS = {"docs-laravel-1": "Artisan", "docs-laravel-2": "Eloquent", "docs-vue-1": "Components"}


def smoke_eval(folder: Path) -> Path:
    """`folder/eval`, shaped like ../shared/eval for what the benchmarks read: per set and
    language a library (`<set>/<lang>/lib/topic-{1,2,3}/`, a `_meta.yaml` each; the distract
    set also `docs-*`) and the qrels (`<set>/qrels/{ru,en,en-ru.cross,ru.exact,en.exact}.jsonl`),
    four questions in all."""
    root = folder / "eval"
    for name in SMOKE_SETS:
        qrels: dict[str, list[dict[str, Any]]] = {}
        for lang in ("ru", "en"):
            for docs, title in _DOCS.items() if name.endswith("distract") else ():
                coll = root / name / lang / "lib" / docs
                coll.mkdir(parents=True, exist_ok=True)
                (coll / "_meta.yaml").write_text(f'description: "{title} documentation"\n')
                (coll / "index.md").write_text(f"# {title}\n\nHow {title} is configured.\n")
            for qid, topic, note, by_lang in _SMOKE:
                title, body, question = by_lang[lang]
                coll = root / name / lang / "lib" / topic
                coll.mkdir(parents=True, exist_ok=True)
                (coll / "_meta.yaml").write_text(
                    f'name: "{topic}"\ndescription: "Reading notes ({lang}): {topic}"\n',
                    encoding="utf-8",
                )
                (coll / note).write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
                q = {"id": qid, "lang": lang, "question": question, "path": f"lib/{topic}/{note}",
                     "line_start": 3, "line_end": 3, "library_lang": lang,
                     "answer": _ANSWERS[qid]}  # fmt: skip
                qrels.setdefault(lang, []).append(q)
                qrels.setdefault(f"{lang}.exact", []).append({**q, "variant": "exact"})
                if lang == "en":
                    cross = {**q, "library_lang": "ru", "variant": "cross"}
                    qrels.setdefault("en-ru.cross", []).append(cross)
        (root / name / "qrels").mkdir(parents=True, exist_ok=True)
        for file, rows in qrels.items():
            lines = [json.dumps(r, ensure_ascii=False) for r in rows]
            (root / name / "qrels" / f"{file}.jsonl").write_text("\n".join(lines) + "\n")
    return root


def engine(
    backend: str = "auto",
    model_dir: str | os.PathLike[str] | None = None,
    purpose: str = "serve",
    cached: bool = True,
) -> Any:
    """An embedder of this engine (MEMO_EMBEDDER's values; `none`: None) opened as memo opens
    one (embed.choose, embed.open_choice): behind the embedding cache unless `cached` is off
    (an engine measured, not its cache) or MEMO_EMBED_CACHE_MB is 0."""
    from memo.config import Settings
    from memo.embed import choose, open_choice

    if backend == "none":
        return None
    settings = Settings(
        embedder=backend,
        model_dir=Path(model_dir) if model_dir else None,
        embed_cache_mb=Settings.from_env().embed_cache_mb if cached else 0,
    )
    return open_choice(choose(settings, purpose), settings)


def smoke_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="run every code path once on a tiny library made here (seconds; CI runs it)",
    )


# ---------------------------------------------------------------------- results
def record(script: str, part: str, data: Any, load0: float, smoke: bool = False) -> Path:
    """Write one measured part of a script into bench/results/<script>.json, beside the
    other parts there, with what makes it a figure: the date, the commit (`+` when src/ has
    changes not committed), the load average from `load0` (taken when the part started) to
    now, and the command; then print it as docs/benchmarks.md renders it. A smoke run
    writes under $TMPDIR instead: the code path runs, the figures stay."""
    import render  # bench/render.py: one place formats a figure, for the docs and for here

    name = Path(script).stem
    folder = Path(tempfile.gettempdir()) / "memo-bench-results" if smoke else RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    got = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    got[part] = {
        "date": time.strftime("%Y-%m-%d"),
        "commit": _commit(),
        "load": f"{load0:.1f}-{os.getloadavg()[0]:.1f}",
        "command": " ".join(["python", f"bench/{name}.py", *sys.argv[1:]]),
        "data": data,
    }
    text = json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    path.write_text(text, encoding="utf-8")
    print("\n" + render.render(name, part, got[part]), flush=True)
    return path


def _commit() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=BENCH, capture_output=True, text=True)
        return done.stdout.strip()

    return git("rev-parse", "--short", "HEAD") + (
        "+" if git("status", "--porcelain", "src") else ""
    )


# ---------------------------------------------------------------------- measuring
def judge(lib: Any, qrels: list[dict[str, Any]], mode: str, k: int = 10) -> tuple[float, ...]:
    """(R@1, R@5, MRR@k) of `lib.search(".", question, k=k, mode=mode)` over the qrels."""
    s = scores(rank_of(lib.search(".", q["question"], k=k, mode=mode).hits, q) for q in qrels)
    return s["r1"], s["r5"], s["mrr"]


def pct(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0-100) by nearest rank, the one rule every table uses (NaN: none)."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[max(0, min(len(s), math.ceil(p / 100 * len(s))) - 1)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
