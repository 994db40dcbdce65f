"""CLI benchmark: what one `memo` process costs end to end, as an agent's shell pays it.

Measured in one run, each as a whole process (spawn, imports, answer, exit), questions taken
in turn from the set's qrels:

- `memo --version`;
- `memo search LIB "q" --json` with a `memo serve` for LIB running (the command delegates);
- the same with `--no-server` (in-process: imports, opening the indexes, the model);
- optionally the same in-process command from another source tree (`--baseline SRC`, e.g. a
  worktree of the commit before delegation) to show the fallback did not get slower.

The library is `../shared/eval/xquad-dev-distract/ru` (nine collections, ~300 documentation
notes plus the xquad topics); its indexes go under `--index-dir` and are reused.

    python bench/cli.py                      # 30 questions, each way
    python bench/cli.py --baseline /work/wt-base/src
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from judged import (  # bench/ is on sys.path when run as a script
    free_port,
    pct,
    smoke_args,
    smoke_eval,
)

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def questions(eval_dir: Path, n: int) -> list[str]:
    path = eval_dir / "xquad-dev-distract" / "qrels" / "ru.jsonl"
    qs = [json.loads(x)["question"] for x in path.read_text().splitlines() if x.strip()]
    return qs[:: max(1, len(qs) // n)][:n]


def run(argv: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    ms = (time.perf_counter() - t) * 1000
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])}… failed: {out.stderr[-800:]}")
    return ms


def line(name: str, ms: list[float]) -> None:
    print(
        f"| {name} | {len(ms)} | {statistics.median(ms):.0f} | {pct(ms, 95):.0f} "
        f"| {min(ms):.0f} | {max(ms):.0f} |"
    )


def wait_for(url: str, timeout: float = 120.0) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
                if json.loads(r.read()).get("model_loaded"):
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("memo serve did not start")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--index-dir", type=Path, default=REPO.parent / "bench-cli")
    ap.add_argument("--baseline", type=Path, help="another source tree's src/ to time in-process")
    smoke_args(ap)
    args = ap.parse_args()
    eval_dir = SHARED / "eval"
    if args.smoke:
        eval_dir = smoke_eval(Path(tempfile.mkdtemp(prefix="memo-smoke-")))
        args.index_dir, args.queries = eval_dir.parent / "indexes", 3
    lib = eval_dir / "xquad-dev-distract" / "ru" / "lib"
    if not lib.is_dir():
        raise SystemExit(f"{lib} is missing: this benchmark needs ../shared/eval")
    env = {**os.environ, "MEMO_INDEX_DIR": str(args.index_dir)}
    env.pop("MEMO_ROOT", None)
    # A user's Python caches compiled modules (__pycache__); this sandbox sets
    # PYTHONDONTWRITEBYTECODE, which would make every process compile memo's sources again.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("MEMO_TOKEN", None)
    memo = [sys.executable, "-m", "memo"]
    t = time.perf_counter()
    subprocess.run([*memo, "index", str(lib), "--quiet"], env=env, check=True)
    print(f"index (cached after the first run): {time.perf_counter() - t:.1f} s")
    qs = questions(eval_dir, args.queries)
    print(f"load average before: {os.getloadavg()[0]:.2f}; {len(qs)} questions")

    rows: dict[str, list[float]] = {}
    rows["memo --version"] = [run([*memo, "--version"], env) for _ in range(len(qs))]
    rows["search, in-process (--no-server)"] = [
        run([*memo, "search", str(lib), q, "--json", "--no-server"], env) for q in qs
    ]
    if args.baseline:
        base_env = {**env, "PYTHONPATH": str(args.baseline)}
        rows[f"search, in-process ({args.baseline})"] = [
            run([*memo, "search", str(lib), q, "--json"], base_env) for q in qs
        ]
    port = free_port()
    server = subprocess.Popen(
        [*memo, "serve", str(lib), "--port", str(port), "--log-level", "warning"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(f"http://127.0.0.1:{port}")
        for q in qs[:3]:  # the server's first queries warm its caches, as a day's use would
            run([*memo, "search", str(lib), q, "--json"], env)
        rows["search, delegated to memo serve"] = [
            run([*memo, "search", str(lib), q, "--json"], env) for q in qs
        ]
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    print("| process | n | p50 ms | p95 ms | min | max |")
    print("|---|---|---|---|---|---|")
    for name, ms in rows.items():
        line(name, ms)
    here = statistics.median(rows["search, in-process (--no-server)"])
    there = statistics.median(rows["search, delegated to memo serve"])
    print(f"\ndelegated / in-process median: {there / here:.2f}")


if __name__ == "__main__":
    main()
