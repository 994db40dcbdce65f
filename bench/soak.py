"""Soak: concurrent HTTP searches while notes are edited continuously.

    python bench/soak.py --duration 600 --clients 8 [--watch]   # the run in docs/reliability.md

A throwaway library (the examples and generated notes) under `memo serve` (with `--watch`, its
watcher writes too): `--clients` threads search (real questions, words just written, FTS5
syntax, junk); an editor rewrites, appends, creates and deletes notes, and checks that the
next search finds what it wrote; a sampler reads the server's RSS. At the end every note must
hold what the editor last wrote, every index pass `PRAGMA integrity_check`, the server's log
hold no traceback nor "database is locked": exit 1 otherwise. Writes bench/results/soak.json.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

import apsw
import httpx
from judged import free_port, pct, record, smoke_args  # bench/ is on sys.path when run as a script

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "notes"
MEMO = [sys.executable, "-m", "memo"]

QUERIES = [
    "почему перестала работать маршрутизация по политикам",
    "how to bake bread in a dutch oven",
    "JQL updated last week",
    "PBR",
    "VLAN trunk",
    'foo" OR bar NEAR(x y) *',
    "^^^ ((( ))) :: -- +",
    "a" * 1500,
    "закваска температура",
    "soak note topic",
]

WORDS = (
    "router switch bread flour oven policy route vlan trunk ticket sprint backlog kernel "
    "маршрут хлеб печь тесто задача спринт ядро сеть"
).split()


def rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def note_text(rng: random.Random, n: int, marker: str) -> str:
    body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 120)))
    return f"# Soak note {n}\n\nsoak note topic {marker}\n\n## Details\n\n{body}\n"


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.locked = 0
        self.locked_samples: list[str] = []
        self.edits = 0
        self.fresh_checks = 0
        self.fresh_misses: list[str] = []
        self.rss: list[tuple[float, int]] = []
        self.elapsed = 0.0


def client(url: str, stop: threading.Event, stats: Stats, seed: int, words: list[str]) -> None:
    rng = random.Random(seed)
    with httpx.Client(timeout=120) as http:
        while not stop.is_set():
            q = rng.choice(QUERIES + words[-5:]) if words else rng.choice(QUERIES)
            path = rng.choice([".", "soak", "work", "home/cooking"])
            t = time.perf_counter()
            try:
                r = http.get(f"{url}/search", params={"path": path, "query": q, "k": 8})
                dt = time.perf_counter() - t
                body = r.text
                with stats.lock:
                    stats.latencies.append(dt)
                    # Only what memo says counts: a note may well quote the phrase (one does).
                    said = body if r.status_code != 200 else " ".join(r.json()["warnings"])
                    if "database is locked" in said:
                        stats.locked += 1
                        stats.locked_samples.append(said[:600])
                    if r.status_code != 200:
                        stats.errors.append(f"{r.status_code} {path} {q[:40]!r}: {body[:200]}")
            except httpx.HTTPError as e:
                with stats.lock:
                    stats.errors.append(f"transport {type(e).__name__}: {e}")


def editor(
    root: Path,
    url: str,
    stop: threading.Event,
    stats: Stats,
    every: float,
    truth: dict[str, bytes],
    words: list[str],
) -> None:
    """Edits notes like an agent would; `truth` keeps what each note must hold at the end."""
    rng = random.Random(7)
    coll = root / "soak"
    n = len(list(coll.glob("*.md")))
    with httpx.Client(timeout=120) as http:
        while not stop.is_set():
            time.sleep(every)
            stats.edits += 1
            marker = f"soakmark{stats.edits}x"
            action = rng.random()
            notes = sorted(coll.glob("*.md"))
            if action < 0.1 and len(notes) > 10:  # delete
                victim = rng.choice(notes)
                victim.unlink()
                truth.pop(str(victim.relative_to(root)), None)
                continue
            if action < 0.2:  # create
                n += 1
                target = coll / f"note-{n:04d}.md"
                data = note_text(rng, n, marker).encode()
            elif action < 0.6:  # append (echo >> note.md)
                target = rng.choice(notes)
                data = target.read_bytes() + f"\nappended {marker}\n".encode()
            else:  # rewrite
                target = rng.choice(notes)
                data = note_text(rng, n, marker).encode()
            if rng.random() < 0.5:
                target.write_bytes(data)  # in place, as `echo >>` or most editors do
            else:  # atomic rename, as VS Code and Obsidian do
                tmp = target.with_name(f".{target.name}.tmp")
                tmp.write_bytes(data)
                os.replace(tmp, target)
            truth[str(target.relative_to(root))] = data
            words.append(marker)
            if stats.edits % 5 == 0:  # the edit must be found by the very next search
                q = {"path": "soak", "query": marker, "k": 3, "mode": "lex"}
                r = http.get(f"{url}/search", params=q)
                stats.fresh_checks += 1
                hits = r.json().get("results", []) if r.status_code == 200 else []
                if not any(h["path"] == str(target.relative_to(root)) for h in hits):
                    stats.fresh_misses.append(f"{marker} -> {target.name}: {r.text[:200]}")


def sampler(pid: int, stop: threading.Event, stats: Stats, t0: float) -> None:
    while not stop.is_set():
        stats.rss.append((time.monotonic() - t0, rss_kb(pid)))
        stop.wait(5)


def library(work: Path, notes: int) -> tuple[Path, dict[str, bytes], dict[str, str]]:
    """The examples plus a collection of `notes` generated notes, indexed: (root, every file's
    bytes, the environment of memo's processes)."""
    root = work / "notes"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memo"))
    coll = root / "soak"
    coll.mkdir()
    (coll / "_meta.yaml").write_text("description: notes the soak test edits continuously\n")
    rng = random.Random(1)
    for i in range(notes):
        (coll / f"note-{i:04d}.md").write_text(note_text(rng, i, f"seed{i}x"))
    env = {**os.environ, "MEMO_INDEX_DIR": str(work / "idx")}
    env.pop("MEMO_ROOT", None)
    env.pop("MEMO_TOKEN", None)
    subprocess.run([*MEMO, "index", str(root)], env=env, check=True, capture_output=True)
    return root, files(root), env


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".memo" not in p.parts
    }


def serve(root: Path, env: dict[str, str], log: IO[str], watch: bool) -> tuple[Any, str]:
    """`memo serve` on the library, once its model is loaded: (the process, its URL)."""
    url = f"http://127.0.0.1:{(port := free_port())}"
    extra = ["--watch"] if watch else []
    server = subprocess.Popen(
        [*MEMO, "serve", str(root), "--port", str(port), "--log-level", "warning", *extra],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=2).json().get("model_loaded"):
                return server, url
        except httpx.HTTPError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"server did not start (its log: {log.name})")
        time.sleep(0.2)


def soak(server: Any, url: str, root: Path, args: Any, truth: dict[str, bytes]) -> Stats:
    """Clients, the editor and the sampler for `args.duration` seconds."""
    stats, stop, words = Stats(), threading.Event(), []
    t0 = time.monotonic()
    jobs: list[tuple[Any, tuple]] = [
        (client, (url, stop, stats, i, words)) for i in range(args.clients)
    ]
    jobs.append((editor, (root, url, stop, stats, args.edit_every, truth, words)))
    jobs.append((sampler, (server.pid, stop, stats, t0)))
    threads = [threading.Thread(target=f, args=a, daemon=True) for f, a in jobs]
    for th in threads:
        th.start()
    last = t0
    while time.monotonic() - t0 < args.duration:
        time.sleep(1)
        if time.monotonic() - last >= 60:
            last = time.monotonic()
            with stats.lock:
                n, errs = len(stats.latencies), len(stats.errors)
                p95 = pct(stats.latencies[-2000:], 95) * 1000
            print(f"{last - t0:6.0f} s: {n} searches, {errs} errors, p95 {p95:.0f} ms", flush=True)
    stop.set()
    for th in threads:
        th.join(timeout=150)
    stats.elapsed = time.monotonic() - t0
    return stats


def summary(stats: Stats, args: Any, server_log: str, changed: list, bad: list) -> dict:
    rss = [kb for _, kb in stats.rss if kb]
    warm = [kb for s, kb in stats.rss if kb and s >= min(60, stats.elapsed / 3)]
    lat = stats.latencies or [0.0]
    mb = lambda kb: round(kb / 1024, 1)  # noqa: E731
    return {
        "duration_s": round(stats.elapsed, 1),
        "clients": args.clients,
        "watch": args.watch,
        "searches": len(stats.latencies),
        "searches_per_s": round(len(stats.latencies) / stats.elapsed, 1),
        "errors": len(stats.errors),
        "database_is_locked": stats.locked + server_log.count("database is locked"),
        "tracebacks_in_server_log": server_log.count("Traceback"),
        "latency_ms": {
            k: round(pct(lat, q) * 1000, 1) for k, q in (("p50", 50), ("p95", 95), ("p99", 99))
        }
        | {"max": round(max(lat) * 1000, 1)},
        "edits": stats.edits,
        "freshness_checks": stats.fresh_checks,
        "freshness_misses": len(stats.fresh_misses),
        "rss_mb": {"first": mb(rss[0]), "after_warmup": mb((warm or rss)[0])}
        | {"last": mb(rss[-1]), "max": mb(max(rss))},
        "notes_changed_by_memo": changed,
        "indexes_failing_integrity_check": bad,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=600)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--notes", type=int, default=60, help="generated notes in the soak collection")
    ap.add_argument("--edit-every", type=float, default=0.5, help="seconds between edits")
    ap.add_argument("--watch", action="store_true", help="run `memo serve --watch` (the watcher)")
    smoke_args(ap)  # 5 s, 2 clients, 6 notes, with the watcher
    args = ap.parse_args()
    if args.smoke:
        args.duration, args.clients, args.notes, args.watch = 5.0, 2, 6, True
    load0 = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="memo-soak-"))
    root, truth, env = library(work, args.notes)
    with open(work / "server.log", "w") as log:
        server, url = serve(root, env, log, args.watch)
        try:
            stats = soak(server, url, root, args, truth)
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
    # Markdown is the truth: every note holds what the editor last wrote, nothing else.
    now = files(root)
    changed = sorted(k for k in set(now) | set(truth) if now.get(k) != truth.get(k))
    bad = []
    for db in (work / "idx").rglob("index.db"):
        conn = apsw.Connection(str(db))
        result = conn.execute("PRAGMA integrity_check").fetchall()
        conn.close()
        if result != [("ok",)]:
            bad.append(f"{db}: {result[:3]}")
    server_log = (work / "server.log").read_text()
    got = summary(stats, args, server_log, changed, bad)
    record(__file__, "soak", got, load0, args.smoke)
    said = [f"error: {e}" for e in stats.errors[:10]] + [
        f"locked: {b}" for b in stats.locked_samples[:3]
    ]
    said += [
        f"server log: {x[:300]}"
        for x in server_log.splitlines()
        if "locked" in x or "Traceback" in x
    ]
    said += [f"freshness miss: {m}" for m in stats.fresh_misses[:10]]
    print("\n".join(said))
    shutil.rmtree(work, ignore_errors=True)
    return 1 if said or changed or bad else 0


if __name__ == "__main__":
    sys.exit(main())
