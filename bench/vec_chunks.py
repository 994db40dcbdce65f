"""Size and KNN cost of sqlite-vec's vec0 table by its `chunk_size` and element type (issue 24,
item 1).

vec0 stores vectors in chunks of `chunk_size` slots, allocated whole: the default 1,024 slots
of 384 float32 are 1.5 MB even for a collection of 37 chunks. This measures, for collections
of 37, 500 and 5,000 chunks, the file's size and the median time of a k=20 KNN query (the
vector leg's own query; random unit vectors: vec0's cost does not depend on their values) for
each chunk size, in one process, so the table can choose; for float32 (memo's index until
schema 3) and int8 (since schema 4: collection/vectors.py, a quarter of the bytes).

    python bench/vec_chunks.py [--queries 60] [--scratch DIR] [--types float32,int8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import apsw
import numpy as np
import sqlite_vec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from judged import smoke_args  # noqa: E402  (bench/ is on sys.path)

from memo.collection.vectors import quantize  # noqa: E402

DIM = 384
SIZES = (37, 500, 5000)
CHUNKS = (8, 32, 64, 128, 256, 512, 1024)


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


# element type -> (column type, SQL of a bound vector, the bytes of a vector)
TYPES = {
    "float32": ("float", "?", lambda v: v.astype(np.float32).tobytes()),
    "int8": ("int8", "vec_int8(?)", lambda v: quantize(v).tobytes()),
}


def build(
    path: Path, n: int, chunk: int, rng: np.random.Generator, kind: str = "float32"
) -> apsw.Connection:
    column, bound, blob = TYPES[kind]
    path.unlink(missing_ok=True)
    c = apsw.Connection(str(path))
    c.enable_load_extension(True)
    c.load_extension(sqlite_vec.loadable_path())
    c.execute("PRAGMA journal_mode=WAL")
    c.execute(
        "CREATE VIRTUAL TABLE chunks_vec USING vec0("
        f"embedding {column}[{DIM}] distance_metric=cosine, chunk_size={chunk})"
    )
    vecs = unit(rng, n)
    with c:
        for i, v in enumerate(vecs, 1):
            c.execute(f"INSERT INTO chunks_vec(rowid, embedding) VALUES (?, {bound})", (i, blob(v)))
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return c


def knn_ms(c: apsw.Connection, queries: np.ndarray, kind: str = "float32") -> float:
    _, bound, blob = TYPES[kind]
    sql = f"SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH {bound} AND k = 20"
    c.execute(sql, (blob(queries[0]),)).fetchall()  # warm the page cache
    times = []
    for q in queries:
        b = blob(q)  # outside the timer: vec0 alone (quantizing a query takes ~30 µs)
        t = time.perf_counter()
        c.execute(sql, (b,)).fetchall()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--scratch", type=Path, default=None)
    ap.add_argument("--types", default="float32,int8", help="element types, comma-separated")
    smoke_args(ap)  # every type and chunk size, at 37 vectors
    a = ap.parse_args()
    sizes = (37,) if a.smoke else SIZES
    if a.smoke:
        a.queries = 5
    kinds = a.types.split(",")
    scratch = a.scratch or Path(tempfile.mkdtemp(prefix="memo-vec-"))
    scratch.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    queries = unit(rng, a.queries)
    print(f"load average {os.getloadavg()[0]:.2f}; sqlite-vec {sqlite_vec.__version__}")
    print("| chunks | type | chunk_size | file MB | KNN k=20 ms (median) | vs float32, 1024 |")
    print("|---:|---|---:|---:|---:|---:|")
    for n in sizes:
        rows = []
        for kind in kinds:
            for chunk in CHUNKS:
                path = scratch / f"v-{n}-{kind}-{chunk}.db"
                c = build(path, n, chunk, rng, kind)
                ms = knn_ms(c, queries, kind)
                c.close()
                rows.append((kind, chunk, path.stat().st_size / 1e6, ms))
        base = {(k, ch): ms for k, ch, _, ms in rows}.get((kinds[0], 1024), float("nan"))
        for kind, chunk, mb, ms in rows:
            print(f"| {n} | {kind} | {chunk} | {mb:.3f} | {ms:.3f} | {ms / base:.2f} |")


if __name__ == "__main__":
    main()
