"""`memo mcp` as an agent host starts it: how soon it lists its tools, how soon it searches.

Each run a new `memo mcp ROOT` fed JSON-RPC on stdin as a host does, timed from spawn: to
`tools/list` answered (Hermes waits 1.5 s for it), then closed; and to the first `memo_search`
answered, on a library indexed beforehand (a copy of examples/notes, unless `--root`). Writes
bench/results/mcp_start.json; the load average sets these numbers more than anything.

    python bench/mcp_start.py                 # 10 runs each
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import selectors
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from judged import record, smoke_args  # bench/ is on sys.path when run as a script

REPO = Path(__file__).resolve().parents[1]
QUERY = "How do I create a tagged VLAN interface on Linux?"
HELLO = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench-mcp-start", "version": "1"},
}


class Server:
    """One `memo mcp` process and a line reader with a deadline."""

    def __init__(self, memo: str, root: str, env: dict[str, str]) -> None:
        self.t0 = time.perf_counter()
        self.p = subprocess.Popen(
            [memo, "mcp", root],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.p.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]
        self.buf = b""

    def send(self, msg: dict) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()

    def reply(self, mid: int, timeout: float = 120) -> tuple[dict, float]:
        """The answer to request `mid`, and the seconds since spawn when it arrived."""
        end = time.perf_counter() + timeout
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                msg = json.loads(line) if line.strip() else {}
                if msg.get("id") == mid:
                    return msg, time.perf_counter() - self.t0
            left = end - time.perf_counter()
            if left <= 0 or not self.sel.select(left):
                raise SystemExit(f"memo mcp: no answer to request {mid} in {timeout} s")
            chunk = os.read(self.p.stdout.fileno(), 65536)  # type: ignore[union-attr]
            if not chunk:
                raise SystemExit(f"memo mcp exited (rc {self.p.wait()}) before answering {mid}")
            self.buf += chunk

    def handshake(self) -> tuple[dict, float]:
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO})
        self.reply(1)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        return self.reply(2)

    def close(self) -> int:
        assert self.p.stdin is not None
        self.p.stdin.close()
        try:
            return self.p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return -9


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def first_search(s: Server) -> tuple[float, int]:
    """(seconds from start to the first `memo_search` answered, the exit code)."""
    s.handshake()
    args = {"path": ".", "query": QUERY, "max_tokens": 300}
    call = {"name": "memo_search", "arguments": args}
    s.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
    got, t = s.reply(3)
    text = got["result"]["content"][0]["text"]
    assert not got["result"].get("isError") and "hits for" in text, got
    return t, s.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--root", help="an indexed library (default: a copy of examples/notes)")
    here = Path(sys.executable).with_name("memo")  # this Python's own, when not on PATH
    ap.add_argument("--memo", default=shutil.which("memo") or str(here))
    smoke_args(ap)  # one run each
    a = ap.parse_args()
    if a.smoke:
        a.runs = 1
    env = dict(os.environ)
    scratch = None
    if a.root:
        root = a.root
    else:
        scratch = Path(tempfile.mkdtemp(prefix="memo-mcp-start-"))
        root = str(scratch / "notes")
        shutil.copytree(REPO / "examples" / "notes", root)
        env["MEMO_INDEX_DIR"] = str(scratch / "indexes")
        subprocess.run([a.memo, "index", root], env=env, check=True, capture_output=True)
    load0 = os.getloadavg()[0]
    lists, searches, codes, cpu = [], [], [], []
    try:
        for _ in range(a.runs):
            s = Server(a.memo, root, env)
            tools, t = s.handshake()
            names = {t["name"] for t in tools["result"]["tools"]}
            assert {"memo_route", "memo_search", "memo_get"} <= names, sorted(names)
            lists.append(t)
            codes.append(s.close())
        for _ in range(a.runs):
            before = _cpu()
            t, code = first_search(Server(a.memo, root, env))
            searches.append(t)
            codes.append(code)
            cpu.append(_cpu() - before)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    out = {
        "runs": a.runs,
        "tools_list_s": [statistics.median(lists), max(lists)],
        "first_search_s": [statistics.median(searches), max(searches)],
        # CPU of a whole first-search process (start, search, close): what load cannot change
        "first_search_cpu_s": statistics.median(cpu),
        "exit_codes": sorted(set(codes)),
    }
    record(__file__, "start", out, load0, a.smoke)
    return 0 if out["exit_codes"] == [0] else 1


if __name__ == "__main__":
    sys.exit(main())
