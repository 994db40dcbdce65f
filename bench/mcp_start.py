"""`memo mcp` as an agent host starts it: how soon it lists its tools, how soon it searches.

Each run is a new `memo mcp ROOT` process fed JSON-RPC on its stdin, the way a host speaks
to a stdio server (initialize, notifications/initialized, tools/list), timed from spawn:

- start → `tools/list` answered (the host's discovery: Hermes waits 1.5 s for it), and the
  process closed right after (stdin closed, exit code checked);
- start → the first `memo_search` answered, sent right after `tools/list`, on a library
  indexed beforehand (the default engine, the same query each time).

The library is a copy of `examples/notes` indexed into a scratch MEMO_INDEX_DIR, unless
`--root` names one (already indexed, under the MEMO_INDEX_DIR of the environment). The last
line is JSON; the one before says the medians and the load average, which sets these numbers
more than anything (two cores here).

    python bench/mcp_start.py                 # 10 runs each
    python bench/mcp_start.py --runs 20 --root ~/notes/memo
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

from judged import smoke_args  # bench/ is on sys.path when run as a script

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
    load0 = os.getloadavg()
    lists, searches, codes, cpu = [], [], [], []
    try:
        for _ in range(a.runs):
            s = Server(a.memo, root, env)
            tools, t = s.handshake()
            assert len(tools["result"]["tools"]) == 5, tools
            lists.append(t)
            codes.append(s.close())
        for _ in range(a.runs):
            before = _cpu()
            s = Server(a.memo, root, env)
            s.handshake()
            args = {"path": ".", "query": QUERY, "max_tokens": 300}
            s.send(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {"name": "memo_search", "arguments": args},
                }
            )
            got, t = s.reply(3)
            text = got["result"]["content"][0]["text"]
            assert not got["result"].get("isError") and "hits for" in text, got
            searches.append(t)
            codes.append(s.close())
            cpu.append(_cpu() - before)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    load1 = os.getloadavg()
    out = {
        "runs": a.runs,
        "tools_list_s": [round(x, 3) for x in lists],
        "first_search_s": [round(x, 3) for x in searches],
        "tools_list_p50_s": round(statistics.median(lists), 3),
        "first_search_p50_s": round(statistics.median(searches), 3),
        # CPU of a whole first-search process (start, search, close): what load cannot change
        "first_search_process_cpu_p50_s": round(statistics.median(cpu), 3),
        "exit_codes": sorted(set(codes)),
        "loadavg_before": [round(x, 2) for x in load0],
        "loadavg_after": [round(x, 2) for x in load1],
    }
    print(
        f"memo mcp, {a.runs} runs each: start → tools/list p50 {out['tools_list_p50_s']} s "
        f"(target ≤ 0.3), start → first memo_search p50 {out['first_search_p50_s']} s "
        f"(target ≤ 2.0; {out['first_search_process_cpu_p50_s']} s CPU); "
        f"exit codes {out['exit_codes']}; load average "
        f"{' '.join(map(str, out['loadavg_before']))} before, "
        f"{' '.join(map(str, out['loadavg_after']))} after",
        file=sys.stderr,
    )
    print(json.dumps(out))
    return 0 if out["exit_codes"] == [0] else 1


if __name__ == "__main__":
    sys.exit(main())
