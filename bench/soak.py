"""Soak: concurrent HTTP searches while notes are edited continuously.

    python bench/soak.py --duration 600 --clients 8            # the run in docs/reliability.md
    python bench/soak.py --duration 30                         # a quick look
    python bench/soak.py --duration 600 --watch                # once `memo watch` exists

It builds a throwaway library (the examples plus a collection of generated notes), indexes it,
starts `memo serve` on it and then, for `--duration` seconds:

- `--clients` threads search over HTTP (GET /search, hybrid, a mix of real questions, words the
  editor just wrote, FTS5 syntax and junk), each as fast as it gets answers;
- one editor rewrites, appends to, creates and deletes notes every `--edit-every` seconds, and
  checks now and then that the word it just wrote is found by the next search (freshness);
- a sampler reads the server's RSS every 5 s.

Writers today are the server's own catch-up syncs (a search re-indexes what changed first), from
its pool of libraries at once. With `--watch` (only when `memo.watch` is importable) the server
runs its watcher as well, which then writes too.

At the end it checks that every note holds exactly what the editor last wrote (memo never
changes a note), that every index passes `PRAGMA integrity_check`, and scans the server's log for
tracebacks and "database is locked". Exit status 1 when any of that fails.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import apsw
import httpx
from judged import free_port, pct, smoke_args  # bench/ is on sys.path when run as a script

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "notes"

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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=600)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--notes", type=int, default=60, help="generated notes in the soak collection")
    ap.add_argument("--edit-every", type=float, default=0.5, help="seconds between edits")
    ap.add_argument("--watch", action="store_true", help="run `memo serve --watch` (the watcher)")
    ap.add_argument("--json", dest="json_out", help="write the summary here too")
    smoke_args(ap)  # 5 s, 2 clients, 6 notes, with the watcher
    args = ap.parse_args()
    if args.smoke:
        args.duration, args.clients, args.notes, args.watch = 5.0, 2, 6, True

    extra = []
    if args.watch:
        try:
            import memo.watch  # noqa: F401
        except ImportError:
            print("--watch: memo.watch is not importable here; running without the watcher")
        else:
            extra.append("--watch")

    work = Path(tempfile.mkdtemp(prefix="memo-soak-"))
    root = work / "notes"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memo"))
    coll = root / "soak"
    coll.mkdir()
    (coll / "_meta.yaml").write_text("description: notes the soak test edits continuously\n")
    rng = random.Random(1)
    for i in range(args.notes):
        (coll / f"note-{i:04d}.md").write_text(note_text(rng, i, f"seed{i}x"))
    truth = {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".memo" not in p.parts
    }
    env = {**os.environ, "MEMO_INDEX_DIR": str(work / "idx")}
    env.pop("MEMO_ROOT", None)
    env.pop("MEMO_TOKEN", None)
    memo = [sys.executable, "-m", "memo"]
    t = time.perf_counter()
    subprocess.run([*memo, "index", str(root)], env=env, check=True, capture_output=True)
    print(f"indexed {len(truth)} files in {time.perf_counter() - t:.1f} s")

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = work / "server.log"
    log = open(log_path, "w")  # noqa: SIM115 - closed below
    server = subprocess.Popen(
        [*memo, "serve", str(root), "--port", str(port), "--log-level", "warning", *extra],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=2).json().get("model_loaded"):
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"server did not start: {log_path.read_text()[-2000:]}")
            time.sleep(0.2)

        stats = Stats()
        stop = threading.Event()
        words: list[str] = []
        t0 = time.monotonic()
        threads = [
            threading.Thread(target=client, args=(url, stop, stats, i, words), daemon=True)
            for i in range(args.clients)
        ]
        threads.append(
            threading.Thread(
                target=editor,
                args=(root, url, stop, stats, args.edit_every, truth, words),
                daemon=True,
            )
        )
        threads.append(
            threading.Thread(target=sampler, args=(server.pid, stop, stats, t0), daemon=True)
        )
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
                print(
                    f"{last - t0:6.0f} s: {n} searches, {errs} errors, p95 {p95:.0f} ms, "
                    f"rss {rss_kb(server.pid) / 1024:.0f} MB, edits {stats.edits}",
                    flush=True,
                )
        stop.set()
        for th in threads:
            th.join(timeout=150)
        elapsed = time.monotonic() - t0
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()

    # Markdown is the truth: every note holds what the editor last wrote, nothing else.
    now = {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".memo" not in p.parts
    }
    changed = sorted(k for k in set(now) | set(truth) if now.get(k) != truth.get(k))
    bad_indexes = []
    for db in (work / "idx").rglob("index.db"):
        conn = apsw.Connection(str(db))
        result = conn.execute("PRAGMA integrity_check").fetchall()
        conn.close()
        if result != [("ok",)]:
            bad_indexes.append(f"{db}: {result[:3]}")
    server_log = log_path.read_text()
    rss = [kb for _, kb in stats.rss if kb]
    warm = [kb for s, kb in stats.rss if kb and s >= min(60, elapsed / 3)]
    lat = stats.latencies
    summary = {
        "duration_s": round(elapsed, 1),
        "clients": args.clients,
        "watch": bool(extra),
        "searches": len(lat),
        "searches_per_s": round(len(lat) / elapsed, 1),
        "errors": len(stats.errors),
        "database_is_locked": stats.locked + server_log.count("database is locked"),
        "tracebacks_in_server_log": server_log.count("Traceback"),
        "latency_ms": {
            "p50": round(statistics.median(lat) * 1000, 1) if lat else None,
            "p95": round(pct(lat, 95) * 1000, 1),
            "p99": round(pct(lat, 99) * 1000, 1),
            "max": round(max(lat) * 1000, 1) if lat else None,
        },
        "edits": stats.edits,
        "freshness_checks": stats.fresh_checks,
        "freshness_misses": len(stats.fresh_misses),
        "rss_mb": {
            "first": round(rss[0] / 1024, 1) if rss else None,
            "after_warmup": round(warm[0] / 1024, 1) if warm else None,
            "last": round(rss[-1] / 1024, 1) if rss else None,
            "max": round(max(rss) / 1024, 1) if rss else None,
        },
        "notes_changed_by_memo": changed,
        "indexes_failing_integrity_check": bad_indexes,
    }
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    for e in stats.errors[:10]:
        print("error:", e)
    for b in stats.locked_samples[:3]:
        print("locked:", b)
    for line in server_log.splitlines():
        if "locked" in line or "Traceback" in line:
            print("server log:", line[:300])
    for m in stats.fresh_misses[:10]:
        print("freshness miss:", m)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(summary, indent=2, ensure_ascii=False))
    ok = not (
        stats.errors
        or summary["database_is_locked"]
        or summary["tracebacks_in_server_log"]
        or changed
        or bad_indexes
        or stats.fresh_misses
    )
    shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
