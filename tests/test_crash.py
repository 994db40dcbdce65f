"""Crashes heal: kill -9 at random moments, damaged and truncated databases, a full disk.

Lexical only (no model), so a run indexes a few hundred notes in about a second and the kill
lands inside the indexing, not inside model loading.

The harness is `WRITERS`: each entry is a command line that writes an index and can be killed.
`memo watch` is added there with one line once it exists (it never ends by itself: the harness
always kills it, after editing notes while it runs).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import apsw
import pytest

from memo.collection import reads
from memo.collection import store as dbm
from memo.config import Settings
from memo.library import Library

from .conftest import EXAMPLES, checksums

SEED = 20240606
KILLS = 50

# name -> argv after `python -m memo`, given the library root. A writer must be killable at
# any moment. `memo watch` never ends by itself: test_kill_9_watch_heals kills it while notes
# change under it.
WRITERS = {
    "index": lambda root: ["index", str(root)],
}


def make_library(base: Path, n: int = 150, seed: int = 0) -> Path:
    root = base / "notes"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memo"))
    c = root / "crash"
    c.mkdir()
    (c / "_meta.yaml").write_text("description: notes the crash test edits\n")
    rng = random.Random(seed)
    for i in range(n):
        write_note(c / f"n{i:03d}.md", rng, i)
    return root


def write_note(path: Path, rng: random.Random, i: int) -> None:
    words = "alpha beta gamma delta маршрут сеть хлеб печь policy vlan kernel".split()
    sections = "\n\n".join(
        f"## Part {j}\n\n" + " ".join(rng.choice(words) for _ in range(rng.randint(5, 60)))
        for j in range(rng.randint(1, 6))
    )
    path.write_text(f"# Note {i}\n\nmarker{i}x {rng.random()}\n\n{sections}\n")


def mutate(root: Path, rng: random.Random) -> None:
    """Edit, add and delete some notes so every run has work to do."""
    c = root / "crash"
    notes = sorted(c.glob("*.md"))
    for p in rng.sample(notes, k=max(1, len(notes) // 4)):
        write_note(p, rng, int(p.stem[1:]))
    if rng.random() < 0.5 and len(notes) > 20:
        rng.choice(notes).unlink()
    if rng.random() < 0.5:
        i = rng.randint(0, 999)
        write_note(c / f"n{i:03d}.md", rng, i)


def content(db: Path) -> dict[str, list[tuple]]:
    """What an index knows, without rowids or timestamps: equal for equal notes."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {
            "files": conn.execute(
                "SELECT path, mtime_ns, size, hash, status, note, updated, tags FROM files"
                " ORDER BY path"
            ).fetchall(),
            "chunks": conn.execute(
                "SELECT path, heading, line, ord, text, hash FROM chunks ORDER BY path, ord"
            ).fetchall(),
            "fts": conn.execute("SELECT term, doc, cnt FROM chunks_vocab ORDER BY term").fetchall(),
        }
    finally:
        conn.close()


def integrity(db: Path) -> list[tuple]:
    conn = apsw.Connection(str(db))
    try:
        return conn.execute("PRAGMA integrity_check").fetchall()
    finally:
        conn.close()


def index_dbs(index_dir: Path) -> dict[str, Path]:
    return {p.parent.name: p for p in sorted(index_dir.glob("*/index.db"))}


def clean_rebuild(root: Path, tmp: Path) -> dict[str, dict]:
    fresh = tmp / f"clean-{time.monotonic_ns()}"
    lib = Library(root, None, Settings(index_dir=fresh))
    lib.index()
    lib.close()
    out = {name: content(db) for name, db in index_dbs(fresh).items()}
    shutil.rmtree(fresh)
    return out


def assert_converged(root: Path, index_dir: Path, tmp: Path) -> None:
    lib = Library(root, None, Settings(index_dir=index_dir))
    rep = lib.index()
    assert not rep.errors, rep.errors
    lib.close()
    have = {name: content(db) for name, db in index_dbs(index_dir).items()}
    assert have == clean_rebuild(root, tmp)


def memo_env(index_dir: Path) -> dict[str, str]:
    env = {**os.environ, "MEMO_INDEX_DIR": str(index_dir), "MEMO_EMBEDDER": "none"}
    env.pop("MEMO_ROOT", None)
    return env


def undone(root: Path, index_dir: Path) -> set[str]:
    """The crash collection's notes whose committed row is missing or stale, and rows whose note
    is gone: the work an index run still has to do, as the index itself says it."""
    c = root / "crash"
    on_disk = {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in c.glob("*.md")}
    db = next((p for name, p in index_dbs(index_dir).items() if name.startswith("crash")), None)
    rows: dict[str, tuple[int, int]] = {}
    if db is not None:
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        conn.set_busy_timeout(5000)
        try:
            rows = {
                r[0]: (r[1], r[2]) for r in conn.execute("SELECT path, mtime_ns, size FROM files")
            }
        except apsw.Error:  # caught between creating the file and its schema: nothing written
            rows = {}
        finally:
            conn.close()
    stale = {p for p, st in on_disk.items() if rows.get(p) != st}
    return stale | (set(rows) - set(on_disk))


@pytest.mark.slow
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_kill_9_at_random_moments_heals(writer: str, tmp_path: Path):
    """Each kill is sent when the index says the run is where the kill is meant to land: after
    a random number of this run's notes are committed (none: a kill in start-up). Nothing is
    timed, so a busy machine moves the moments with the work instead of past it; what the index
    holds after the kill shows whether it landed inside the indexing."""
    root = make_library(tmp_path)
    idx = tmp_path / "idx"
    env = memo_env(idx)
    argv = [sys.executable, "-m", "memo", *WRITERS[writer](root)]
    rng = random.Random(SEED)

    killed_mid_write = 0
    for run in range(KILLS):
        mutate(root, rng)
        before = checksums(root)
        todo = undone(root, idx)
        wanted = rng.randrange(len(todo))  # notes committed when the kill is sent
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        while proc.poll() is None and len(todo - undone(root, idx)) < wanted:
            time.sleep(0.002)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
        assert b"Traceback" not in err, err.decode()
        left = undone(root, idx)
        if proc.returncode == -signal.SIGKILL and left and todo - left:
            killed_mid_write += 1  # some of this run's notes written, some not
        assert checksums(root) == before, "memo changed a note"
        for db in index_dbs(idx).values():
            assert integrity(db) == [("ok",)], (run, db)
        # it answers searches right away (catching up what the kill left undone)
        lib = Library(root, None, Settings(index_dir=idx))
        hits = lib.search("crash", "marker0x alpha", mode="lex").hits
        assert hits, run
        lib.close()
        if run % 10 == 9:
            assert_converged(root, idx, tmp_path)
    assert killed_mid_write >= KILLS // 2, (
        f"the kills mostly missed the indexing: {killed_mid_write} of {KILLS} landed inside it"
    )
    assert_converged(root, idx, tmp_path)


def damage(db: Path, how: str, rng: random.Random) -> None:
    size = db.stat().st_size
    with open(db, "r+b") as f:
        if how == "header":
            f.seek(0)
            f.write(os.urandom(100))
        elif how == "random-pages":
            for _ in range(20):
                f.seek(rng.randrange(4096, size))
                f.write(os.urandom(rng.randint(1, 512)))
        elif how == "page-headers":  # the b-tree page headers: SQLite must notice
            for page in range(1, size // 4096):
                f.seek(page * 4096)
                f.write(os.urandom(12))
        elif how == "garbage":
            f.seek(0)
            f.write(os.urandom(size))
        elif how == "truncate-half":
            f.truncate(size // 2)
        elif how == "truncate-100":
            f.truncate(100)
        elif how == "empty":
            f.truncate(0)


DAMAGE = [
    "header",
    "random-pages",
    "page-headers",
    "garbage",
    "truncate-half",
    "truncate-100",
    "empty",
]


@pytest.mark.parametrize("first", ["search", "status"])
def test_text_that_is_not_utf8_in_the_index_is_damage(first: str, tmp_path: Path):
    """A damaged page can leave bytes that are not UTF-8 in a text value (SQLite never checks):
    reading it must heal the index like any other damage, not crash. Seen once in CI with
    random-pages damage."""
    root = make_library(tmp_path, n=10)
    idx = tmp_path / "idx"
    lib = Library(root, None, Settings(index_dir=idx))
    lib.index()
    lib.close()
    target = next(p for name, p in index_dbs(idx).items() if name.startswith("crash"))
    conn = apsw.Connection(str(target))
    bad = "CAST(x'80ff' AS TEXT)"
    conn.execute(f"UPDATE files SET hash = {bad}, note = {bad} WHERE path = 'n003.md'")
    conn.close()
    lib = Library(root, None, Settings(index_dir=idx))
    if first == "status":
        assert "damaged" in lib.status("crash").to_dict()["collections"][0]
    res = lib.search("crash", "marker3x", mode="lex")
    assert res.hits and res.hits[0].path == "crash/n003.md"
    assert any("damaged" in w for w in res.warnings), res.warnings
    lib.close()


@pytest.mark.parametrize("how", DAMAGE)
@pytest.mark.parametrize("first", ["search", "index", "status"])
def test_damaged_index_is_rebuilt_with_a_warning(how: str, first: str, tmp_path: Path):
    root = make_library(tmp_path, n=60)
    idx = tmp_path / "idx"
    lib = Library(root, None, Settings(index_dir=idx))
    lib.index()
    lib.close()
    before = checksums(root)
    db = index_dbs(idx)
    target = next(p for name, p in db.items() if name.startswith("crash"))
    for suffix in ("-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    damage(target, how, random.Random(zlib.crc32(how.encode())))  # the same damage every run

    lib = Library(root, None, Settings(index_dir=idx))
    if first == "status":
        st = lib.status("crash").to_dict()["collections"][0]  # never a crash; says what it can
        assert st["collection"] == "crash"
        if how not in ("random-pages",):
            assert "damaged" in st or st["files"] > 0 or how == "empty"
    if first in ("search", "status"):
        res = lib.search("crash", "marker3x", mode="lex")
        assert res.hits and res.hits[0].path == "crash/n003.md"
        said = " ".join(res.warnings) + " ".join(f.rebuilt for f in res.freshness)
    else:
        rep = lib.index()
        assert not rep.errors, rep.errors
        said = " ".join(r.rebuilt for r in rep.reports)
    if how != "random-pages":  # bytes inside a text value carry no checksum SQLite could test
        assert said, "a damaged index was rebuilt without saying so"
    lib.close()
    assert integrity(target) == [("ok",)]
    assert checksums(root) == before
    assert_converged(root, idx, tmp_path)


def test_corruption_found_by_a_search_leg_rebuilds(tmp_path: Path, monkeypatch):
    """Corruption that only surfaces at query time (inside a leg) heals too."""
    root = make_library(tmp_path, n=20)
    lib = Library(root, None, Settings(index_dir=tmp_path / "idx"))
    lib.index()
    real = reads.lex_share
    calls = {"n": 0}

    def flaky(*a, **kw):
        calls["n"] += 1
        if calls["n"] == 1:
            raise apsw.CorruptError("database disk image is malformed")
        return real(*a, **kw)

    monkeypatch.setattr(reads, "lex_share", flaky)
    res = lib.search("crash", "marker3x", mode="lex")
    assert res.hits[0].path == "crash/n003.md"
    assert any("damaged" in w for w in res.warnings)
    lib.close()


def test_index_deleted_under_an_open_library_is_reopened(tmp_path: Path):
    """`rm -rf .memo` while a server runs: the server must not keep an unlinked file."""
    root = make_library(tmp_path, n=5)
    idx = tmp_path / "idx"
    lib = Library(root, None, Settings(index_dir=idx))
    lib.search("crash", "marker1x", mode="lex")
    shutil.rmtree(idx)
    (root / "crash" / "n001.md").write_text("# One\n\nfreshword\n")
    assert lib.search("crash", "freshword", mode="lex").hits
    assert index_dbs(idx), "the index was not recreated on disk"
    lib.close()


def test_full_disk_is_reported_and_recovered(tmp_path: Path, monkeypatch):
    """SQLITE_FULL forced with PRAGMA max_page_count: same code path as a full disk."""
    root = make_library(tmp_path, n=120)
    idx = tmp_path / "idx"
    real_connect = dbm.connect

    def small(path, readonly=False):
        conn = real_connect(path, readonly)
        if not readonly:
            conn.execute("PRAGMA max_page_count=40")
        return conn

    monkeypatch.setattr(dbm, "connect", small)
    lib = Library(root, None, Settings(index_dir=idx))
    rep = lib.index("crash")
    assert rep.errors and "is full" in rep.errors[0], rep.errors
    # a search during the outage answers from what was indexed, with a warning
    res = lib.search("crash", "marker1x alpha", mode="lex")
    assert any("is full" in w for w in res.warnings)
    lib.close()
    for db in index_dbs(idx).values():
        assert integrity(db) == [("ok",)]
    monkeypatch.setattr(dbm, "connect", real_connect)  # space freed
    assert_converged(root, idx, tmp_path)


def _mount_tmpfs(where: Path, size: str) -> bool:
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    where.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    return r.returncode == 0


def test_full_disk_on_a_real_tmpfs(tmp_path: Path):
    """A real ENOSPC: the index folder on a small tmpfs, nearly filled by another file."""
    mnt = tmp_path / "tmpfs"
    if not _mount_tmpfs(mnt, "16m"):
        pytest.skip(
            "cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN); the "
            "max_page_count test above covers the same code path"
        )
    try:
        root = make_library(tmp_path, n=400)
        filler = mnt / "filler"
        filler.write_bytes(b"\0" * (15 * 1024 * 1024 + 512 * 1024))
        env = memo_env(mnt / "idx")
        argv = [sys.executable, "-m", "memo", "index", str(root)]
        out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        assert "Traceback" not in out.stderr, out.stderr
        assert "is full" in out.stderr, out.stderr
        assert "hint: Free some space" in out.stderr or "Free some space" in out.stderr
        filler.unlink()
        out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        for db in index_dbs(mnt / "idx").values():
            assert integrity(db) == [("ok",)]
        assert_converged(root, mnt / "idx", tmp_path)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.mark.slow
def test_kill_9_watch_heals(tmp_path: Path):
    """kill -9 `memo watch` at random moments while notes change under it; a restarted watcher
    converges by itself (its start-up reconcile) to what a clean rebuild holds."""
    root = make_library(tmp_path)
    idx = tmp_path / "idx"
    env = memo_env(idx)
    argv = [sys.executable, "-m", "memo", "watch", str(root), "--quiet"]
    rng = random.Random(SEED + 1)
    for run in range(KILLS):
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.2, 0.8))  # start-up, first reconcile under way
        mutate(root, rng)  # events while it runs
        before = checksums(root)
        time.sleep(rng.uniform(0.0, 0.5))  # mid-debounce or mid-sync
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
        assert b"Traceback" not in err, err.decode()
        assert checksums(root) == before, "memo changed a note"
        for db in index_dbs(idx).values():
            assert integrity(db) == [("ok",)], (run, db)
    want = clean_rebuild(root, tmp_path)
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 180
        have = None
        while time.monotonic() < deadline:
            time.sleep(1.0)
            try:
                have = {name: content(db) for name, db in index_dbs(idx).items()}
            except apsw.Error:  # a write in progress: look again
                continue
            if have == want:
                break
        assert have == want, "the restarted watcher did not converge"
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert b"Traceback" not in err, err.decode()


def test_a_read_that_meets_a_damaged_index_is_run_again_on_the_rebuilt_one(tmp_path: Path):
    """The read is retried after the rebuild, not before it: a retry on the damaged index
    raised the damage to the caller instead of answering."""
    root = make_library(tmp_path, n=5)
    before = checksums(root)
    lib = Library(root, None, Settings(index_dir=tmp_path / "idx"))
    lib.index()
    coll = next(c for c in lib.collections() if c.name == "crash")
    damaged = coll.store()[0]
    seen = []

    def count(store: dbm.IndexStore) -> int:
        seen.append(store)
        if store is damaged:  # every read of the damaged index fails, as a real one does
            raise apsw.CorruptError("database disk image is malformed")
        return store.chunk_count()

    chunks, warning = coll.read(count)
    assert chunks > 0 and "damaged" in warning
    assert len(seen) == 2 and seen[1] is not damaged
    assert checksums(root) == before  # the rebuild read the notes and wrote none
    lib.close()
