"""bench/vault.py --smoke: the vault benchmark's runner, on a tiny vault it writes itself.

The real run needs the Obsidian Help vault (never committed); the smoke run exercises every
code path of the runner (adopt, index, search with and without `also`, the span-overlap rule,
a two-section answer, unanswerable questions, the halves, route and flow, the tables). A
benchmark: slow, out of the inner loop.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


KINDS = ("none", "also", "answer", "keywords", "all")


@pytest.mark.slow
def test_vault_runner_smoke(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path), "MEMO_INDEX_DIR": str(tmp_path / "idx")}
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "vault.py"), "--smoke"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "smoke: ok" in out
    # one row a set, the halves as columns; every kind of the agent's words a row of its own
    assert "tune: R@1 / R@5 / R@10 / MRR@10 | held-back: R@1" in out, out
    for want in ("| smoke | 4 |", "| smoke+also | 4 |", *(f"| smoke | {k} |" for k in KINDS)):
        assert want in out, out
    assert "unanswerable: n, high / low / none" in out
