"""Server benchmark: what a tool call costs over MCP (stdio, streamable HTTP) and REST, measured
against the in-process search in the same run; throughput under 8 concurrent HTTP clients; the
server's memory after warm-up and after many requests.

The library is one ~3,000-chunk collection built from xquad-dev-distract/ru (three documentation
sets plus the xquad topics), so the questions have answers in it. Its index is cached.
Writes bench/results/server.json.

    python bench/server.py --queries 100 --requests 10000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from judged import free_port, pct, record, smoke_args, smoke_eval  # noqa: E402  (bench/ is on sys.path)

from memo.config import Settings  # noqa: E402
from memo.requests import IndexRequest, SearchRequest, StatusRequest  # noqa: E402
from memo.server.service import Service  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PARTS = ("docs-laravel-1", "docs-laravel-2", "docs-vue-1", "topic-1", "topic-2", "topic-3")


def build_library(eval_dir: Path, base: Path) -> Path:
    """One collection `docs/` holding six sets of notes: ~3,000 chunks."""
    root = base / "lib"
    coll = root / "docs"
    if not (coll / "_meta.yaml").exists():
        src = eval_dir / "xquad-dev-distract" / "ru" / "lib"
        for part in PARTS:
            shutil.copytree(src / part, coll / part, ignore=shutil.ignore_patterns("_meta.yaml"))
        (coll / "_meta.yaml").write_text(
            "name: docs\ndescription: Laravel and Vue documentation plus encyclopedia topics\n"
        )
    return root


def questions(eval_dir: Path, n: int) -> list[str]:
    qs = []
    for name in ("ru.jsonl", "en-ru.cross.jsonl"):
        path = eval_dir / "xquad-dev-distract" / "qrels" / name
        qs += [json.loads(x)["question"] for x in path.read_text().splitlines() if x.strip()]
    return qs[:: max(1, len(qs) // n)][:n]


def timed(fn: Callable[[str], object], qs: list[str]) -> list[float]:
    out = []
    for q in qs:
        t = time.perf_counter()
        fn(q)
        out.append((time.perf_counter() - t) * 1000)
    return out


def mcp_latencies(target: object, qs: list[str]) -> list[float]:
    """Each question's `memo_search` call over MCP, ms (the SDK client validates every
    structured result against the tool's schema too: part of what a client pays)."""

    async def go() -> list[float]:
        async with Client(target) as c:
            await c.call_tool("memo_search", {"path": "docs", "query": "warm up"})
            out = []
            for q in qs:
                t = time.perf_counter()
                r = await c.call_tool("memo_search", {"path": "docs", "query": q})
                out.append((time.perf_counter() - t) * 1000)
                assert not r.is_error, r.content
            return out

    return anyio.run(go)


def served(root: Path, env: dict[str, str], qs: list[str], args: Any) -> dict[str, Any]:
    """MCP over HTTP from one fresh server; REST and the load from another (the first one
    cached these questions' embeddings); MCP over stdio."""
    proc, url = start_server(root, env)
    try:
        http_mcp = mcp_latencies(f"{url}/mcp", qs)
    finally:
        stop_server(proc)
    proc, url = start_server(root, env)
    try:
        with httpx.Client(base_url=url, timeout=60) as c:
            rest = timed(lambda q: c.post("/search", json={"path": "docs", "query": q}), qs)
        rss_warm = rss_mb(proc.pid)
        rps, lat, errors = load(url, questions(args.eval, 100_000), args.clients, args.requests)
        rss_after = rss_mb(proc.pid)
    finally:
        stop_server(proc)
    stdio = StdioServerParameters(
        command=sys.executable, args=["-m", "memo", "mcp", str(root)], env=env
    )
    paths = {
        "MCP `memo_search` over stdio": mcp_latencies(stdio, qs),
        "MCP `memo_search` over streamable HTTP": http_mcp,
        "REST `POST /search`": rest,
    }
    return {
        "paths": paths,
        "load": {"clients": args.clients, "requests": args.requests, "errors": errors}
        | {"rps": rps, "ms": [statistics.median(lat), pct(lat, 95)]},
        "rss_mb": [rss_warm, rss_after],
    }


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def load(url: str, qs: list[str], clients: int, total: int) -> tuple[float, list[float], int]:
    """`clients` threads, each with its own connection, share `total` POST /search requests."""
    lat: list[float] = []
    errors = 0
    lock = threading.Lock()
    counter = iter(range(total))

    def worker() -> None:
        nonlocal errors
        with httpx.Client(base_url=url, timeout=120) as c:
            for i in counter:
                t = time.perf_counter()
                r = c.post("/search", json={"path": "docs", "query": qs[i % len(qs)]})
                dt = (time.perf_counter() - t) * 1000
                with lock:
                    lat.append(dt)
                    errors += r.status_code != 200

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return total / (time.perf_counter() - t0), lat, errors


def start_server(root: Path, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "memo", "serve", str(root), "--port", str(port)]
        + ["--log-level", "warning"],
        env=env,
    )
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=2).json()["model_loaded"]:
                return proc, url
        except (httpx.TransportError, ValueError):
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("server did not start")
        time.sleep(0.2)


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--embedder", default=os.environ.get("MEMO_EMBEDDER", "auto"))
    ap.add_argument("--eval", type=Path, default=REPO.parent / "shared" / "eval")
    ap.add_argument(
        "--scratch", type=Path, default=Path(tempfile.gettempdir()) / "memo-bench-server"
    )
    ap.add_argument("--queries", type=int, default=100, help="questions per latency series")
    ap.add_argument("--requests", type=int, default=2000, help="requests in the load phase")
    ap.add_argument("--clients", type=int, default=8)
    smoke_args(ap)
    args = ap.parse_args()
    if args.smoke:
        args.scratch = Path(tempfile.mkdtemp(prefix="memo-smoke-"))
        args.eval, args.queries, args.requests, args.clients = smoke_eval(args.scratch), 4, 16, 2

    env = {**os.environ, "MEMO_EMBEDDER": args.embedder}
    env["MEMO_INDEX_DIR"] = str(args.scratch / "index")
    env.pop("MEMO_TOKEN", None)
    os.environ.update({k: env[k] for k in ("MEMO_EMBEDDER", "MEMO_INDEX_DIR")})
    root = build_library(args.eval, args.scratch)
    qs = questions(args.eval, args.queries)

    service = Service(root, Settings.from_env())
    service.index(IndexRequest.make("docs"))
    chunks = service.status(StatusRequest.make("docs")).to_dict()["collections"][0]["chunks"]
    engine = service.health()["embedder"]
    load0 = os.getloadavg()[0]
    service.search(SearchRequest.make("docs", "warm up"))
    inproc = timed(lambda q: service.search(SearchRequest.make("docs", q)), qs)
    service.close()
    got = served(root, env, qs, args)
    times = {"in-process `Service.search`": inproc, **got.pop("paths")}
    paths = [{"path": k, "ms": [statistics.median(v), pct(v, 95)]} for k, v in times.items()]
    data = {"chunks": chunks, "engine": engine, "questions": len(qs), "paths": paths, **got}
    record(__file__, "serve", data, load0, args.smoke)


if __name__ == "__main__":
    main()
