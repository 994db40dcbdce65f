"""CLI benchmark: what one `memo` process costs end to end, as an agent's shell pays it.

Each a whole process (spawn, imports, answer, exit), on xquad-dev-distract/ru (indexes under
`--index-dir`, reused): `memo --version`; `memo search LIB "q" --json --no-server`; the same
delegated to a running `memo serve`. Writes bench/results/cli.json.

    python bench/cli.py                      # 30 questions, each way
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

from judged import free_port, pct, record, smoke_args, smoke_eval  # bench/ is on sys.path

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
    load0 = os.getloadavg()[0]

    rows: dict[str, list[float]] = {}
    rows["memo --version"] = [run([*memo, "--version"], env) for _ in range(len(qs))]
    rows["search, in-process (--no-server)"] = [
        run([*memo, "search", str(lib), q, "--json", "--no-server"], env) for q in qs
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
    data = [
        {
            "process": name,
            "n": len(ms),
            "ms": [statistics.median(ms), pct(ms, 95), min(ms), max(ms)],
        }
        for name, ms in rows.items()
    ]
    record(__file__, "oneshot", data, load0, args.smoke)


if __name__ == "__main__":
    main()
