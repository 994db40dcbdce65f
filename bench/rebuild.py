"""What a rebuild costs once vectors are cached: cold index, every index deleted, --full.

    python bench/rebuild.py --out DIR [--root ../shared/eval/xquad-dev-distract/ru] [--part P]

`memo index` as a user runs it (a process each, the default engine unless --model-dir), with
MEMO_INDEX_DIR and XDG_CACHE_HOME under DIR (the built model linked in from the user cache):
cold (an empty embedding cache), every index deleted, then `--full`. Writes seconds, chunks and
the ratios to cold into bench/results/rebuild.json, with the load around each run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from judged import load_average, record, smoke_args, smoke_eval  # bench/ is on sys.path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MEMO_SHARED", REPO.parent / "shared"))


def user_models() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "memo" / "models"


def run(env: dict[str, str], *args: str) -> dict:
    t = time.perf_counter()
    before = load_average()
    done = subprocess.run(
        [sys.executable, "-m", "memo", "index", *args, "--json", "--quiet"],
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - t
    if done.returncode:
        raise SystemExit(done.stderr)
    out = json.loads(done.stdout)
    return {
        "seconds": round(seconds, 1),
        "chunks_embedded": out["chunks_embedded"],
        "chunks_cached": out["chunks_cached"],
        "embed_seconds": out["embed_seconds"],
        "load_before": before,
        "load_after": load_average(),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, help="scratch: caches, indexes, the result (required)")
    ap.add_argument("--root", type=Path, default=SHARED / "eval" / "xquad-dev-distract" / "ru")
    ap.add_argument("--model-dir", type=Path, help="index with this export (MEMO_MODEL_DIR)")
    ap.add_argument("--keep-cache", action="store_true", help="do not empty the cache first")
    ap.add_argument("--part", help="its name in rebuild.json (default: the root's last two parts)")
    smoke_args(ap)
    args = ap.parse_args()
    if args.smoke:
        args.out = Path(tempfile.mkdtemp(prefix="memo-smoke-"))
        args.root = smoke_eval(args.out) / "xquad-dev-distract" / "ru"
    if args.out is None:
        ap.error("--out is required")
    out = args.out.resolve()
    xdg, idx = out / "xdg", out / "idx"
    (xdg / "memo").mkdir(parents=True, exist_ok=True)
    link = xdg / "memo" / "models"
    if not link.exists():
        link.symlink_to(user_models())
    if not args.keep_cache:
        shutil.rmtree(xdg / "memo" / "embeddings", ignore_errors=True)
    shutil.rmtree(idx, ignore_errors=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(xdg), "MEMO_INDEX_DIR": str(idx)}
    for key in ("MEMO_EMBEDDER", "MEMO_EMBED_CACHE_MB", "MEMO_ROOT", "MEMO_MODEL_DIR"):
        env.pop(key, None)
    if args.model_dir:
        env["MEMO_MODEL_DIR"] = str(args.model_dir)
    root = str(args.root)
    load0 = os.getloadavg()[0]
    res = {"root": root, "model_dir": str(args.model_dir or "")}
    res["cold"] = run(env, root)
    print("cold", res["cold"], flush=True)
    shutil.rmtree(idx)
    res["rebuild"] = run(env, root)
    print("rebuild", res["rebuild"], flush=True)
    res["full"] = run(env, root, "--full")
    print("full", res["full"], flush=True)
    chunks = res["cold"]["chunks_embedded"]
    if args.smoke and res["rebuild"]["chunks_cached"] != chunks:
        raise SystemExit("the rebuild did not find every chunk in the embedding cache")
    res["root"] = str(args.root.relative_to(SHARED) if args.root.is_relative_to(SHARED) else "")
    part = args.part or "-".join(args.root.resolve().parts[-2:])
    record(__file__, part, res, load0, args.smoke)


if __name__ == "__main__":
    main()
