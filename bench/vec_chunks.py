"""Size and KNN cost of sqlite-vec's vec0 table by its `chunk_size` (issue 24, item 1).

vec0 stores vectors in chunks of `chunk_size` slots, allocated whole: the default 1,024 slots
of 384 float32 are 1.5 MB even for a collection of 37 chunks. This measures, for collections
of 37, 500 and 5,000 chunks, the file's size and the median time of a k=20 KNN query (the
vector leg's own query; random unit vectors: vec0's cost does not depend on their values) for
each chunk size, in one process, so the table can choose.

    python bench/vec_chunks.py [--queries 60] [--scratch DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import apsw
import numpy as np
import sqlite_vec

DIM = 384
SIZES = (37, 500, 5000)
CHUNKS = (8, 32, 64, 128, 256, 512, 1024)


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def build(path: Path, n: int, chunk: int, rng: np.random.Generator) -> apsw.Connection:
    path.unlink(missing_ok=True)
    c = apsw.Connection(str(path))
    c.enable_load_extension(True)
    c.load_extension(sqlite_vec.loadable_path())
    c.execute("PRAGMA journal_mode=WAL")
    c.execute(
        "CREATE VIRTUAL TABLE chunks_vec USING vec0("
        f"embedding float[{DIM}] distance_metric=cosine, chunk_size={chunk})"
    )
    vecs = unit(rng, n)
    with c:
        for i, v in enumerate(vecs, 1):
            c.execute("INSERT INTO chunks_vec(rowid, embedding) VALUES (?, ?)", (i, v.tobytes()))
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return c


def knn_ms(c: apsw.Connection, queries: np.ndarray) -> float:
    sql = "SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = 20"
    c.execute(sql, (queries[0].tobytes(),)).fetchall()  # warm the page cache
    times = []
    for q in queries:
        t = time.perf_counter()
        c.execute(sql, (q.tobytes(),)).fetchall()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--scratch", type=Path, default=None)
    a = ap.parse_args()
    scratch = a.scratch or Path(tempfile.mkdtemp(prefix="memo-vec-"))
    scratch.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    queries = unit(rng, a.queries)
    print(f"load average {os.getloadavg()[0]:.2f}; sqlite-vec {sqlite_vec.__version__}")
    print("| chunks | chunk_size | file MB | KNN k=20 ms (median) | vs 1024 |")
    print("|---:|---:|---:|---:|---:|")
    for n in SIZES:
        rows = []
        for chunk in CHUNKS:
            path = scratch / f"v-{n}-{chunk}.db"
            c = build(path, n, chunk, rng)
            ms = knn_ms(c, queries)
            c.close()
            rows.append((chunk, path.stat().st_size / 1e6, ms))
        base = dict((ch, ms) for ch, _, ms in rows)[1024]
        for chunk, mb, ms in rows:
            print(f"| {n} | {chunk} | {mb:.2f} | {ms:.3f} | {ms / base:.2f} |")


if __name__ == "__main__":
    main()
