"""The size of each collection's index as memo lays it out (collection/store.py), on a real
library, against issue 24's target: an index ≤ 2 × its notes' bytes + 100 KB.

Indexes a library (declared, e.g. the Obsidian Help vault after `memo init`) with memo's
default engine and the embedding cache into a scratch index folder, closes it (the WAL
checkpointed) and writes every collection's notes, chunks and index bytes into
bench/results/index_layout.json. How the layout was chosen (pages of 4,096 / 2,048 / 1,024
bytes, chunk text deflated or not, vec0 chunks of 64 slots, int8 vectors), with synthetic
collections of 37 to 5,000 chunks: `git show lab-2026-12:bench/index_layout.py`,
`git show lab-2026-12:bench/vec_chunks.py`.

    python bench/index_layout.py --vault ROOT [--scratch DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from judged import record, smoke_args, smoke_eval  # noqa: E402  (bench/ is on sys.path)

from memo.config import Settings  # noqa: E402
from memo.embed import embedder_for  # noqa: E402
from memo.library import Library  # noqa: E402


def index_bytes(path: Path) -> int:
    """The index file and its WAL (empty after the checkpoint); not the -shm file, a
    shared-memory map that lives only while a connection is open."""
    return sum(os.path.getsize(f"{path}{s}") for s in ("", "-wal") if os.path.exists(f"{path}{s}"))


def vault(root: Path, scratch: Path) -> list[dict]:
    """Each collection of a real library: notes, chunks, index bytes against the target."""
    idx = scratch / "vault-idx"
    shutil.rmtree(idx, ignore_errors=True)
    settings = Settings(index_dir=idx)
    held = {}
    with Library(root, embedder_for(settings, "index"), settings) as lib:
        lib.index()
        for coll in sorted(lib.collections(), key=lambda c: c.rel):
            chunks = coll.read(lambda s: s.chunk_count())[0]
            files = coll.read(lambda s: s.conn.execute("SELECT path FROM files").fetchall())[0]
            held[coll.rel] = (coll.index_path, chunks, [coll.folder / f for (f,) in files])
    out = []
    for rel, (path, chunks, files) in held.items():  # closed: the WAL checkpointed, no -shm
        note_bytes = sum(f.stat().st_size for f in files)
        out.append(
            {"collection": rel, "notes": len(files), "chunks": chunks}
            | {"note_bytes": note_bytes, "index_bytes": index_bytes(path)}
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scratch", type=Path, default=None)
    ap.add_argument("--vault", type=Path, help="a declared library: its collections' indexes")
    smoke_args(ap)  # the smoke library as the vault
    a = ap.parse_args()
    scratch = a.scratch or Path(tempfile.mkdtemp(prefix="memo-layout-"))
    if a.smoke:
        a.vault = smoke_eval(scratch) / "xquad-dev-distract" / "ru"
    if not a.vault:
        ap.error("--vault ROOT is required (or --smoke)")
    load0 = os.getloadavg()[0]
    rows = vault(a.vault.resolve(), scratch)
    record(__file__, "vault", {"library": a.vault.name, "rows": rows}, load0, a.smoke)


if __name__ == "__main__":
    main()
