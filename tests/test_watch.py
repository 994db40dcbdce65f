"""The watcher in-process: keys, debounce, overflow, failures and retries, polling, readers
searching while it writes, and the real embedder re-embedding only what changed."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import apsw
import pytest

from memo import heartbeat
from memo.collection.collection import Collection
from memo.collection.store import unpack_text
from memo.config import Settings
from memo.library import Library
from memo.watch import Watcher
from memo.watch.debounce import Debouncer
from memo.watch.events import keys_for

from .watch_helpers import chunk_text, index_rows, make_collection, wait_for

NOTE = "# T\n\nalpha beta\n\n## S\n\ngamma delta\n"


# ---------------------------------------------------------------------- pure parts
def test_keys_for_editor_noise():
    root = "/lib"
    assert keys_for(root, "modified", "/lib/c/n.md", "", False) == [("file", "/lib/c/n.md")]
    assert keys_for(root, "moved", "/lib/c/n.md.tmp", "/lib/c/n.md", False) == [
        ("file", "/lib/c/n.md")
    ]
    assert keys_for(root, "moved", "/lib/c/n.md", "/lib/c/n.md~", False) == [
        ("file", "/lib/c/n.md")
    ]
    for noise in (
        "/lib/c/4913",
        "/lib/c/n.md~",
        "/lib/c/.n.md.swp",
        "/lib/c/sedAbc123",
        "/lib/c/.memo/index.db-wal",
        "/lib/.git/index",
        "/lib/c/~lock.md",
    ):
        assert keys_for(root, "modified", noise, "", False) == [], noise
    assert keys_for(root, "created", "/lib/c/_meta.yaml", "", False) == [("meta", "/lib/c")]
    assert keys_for(root, "deleted", "/lib/c/sub", "", True) == [("dir", "/lib/c/sub")]
    assert keys_for(root, "modified", "/lib/c/sub", "", True) == []  # a child says which
    assert keys_for(root, "opened", "/lib/c/n.md", "", False) == []
    assert keys_for(root, "closed_no_write", "/lib/c/n.md", "", False) == []
    assert keys_for(root, "modified", "/elsewhere/n.md", "", False) == []


def test_debouncer_coalesces_a_burst():
    q = Debouncer(delay=0.05, max_delay=1.0)
    for _ in range(5):
        q.push("a")
    q.push("b")
    got: list[object] = []
    wait_for(lambda: got.extend(q.pop_due(0.2)) or len(got) >= 2, timeout=5)
    assert sorted(got) == ["a", "b"]
    assert q.pending() == 0
    q.retry("c", 0.0)
    assert q.pop_due(1.0) == ["c"]
    q.close()
    assert q.pop_due(1.0) == []


# ---------------------------------------------------------------------- in-process watcher
class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str) -> None:
        self.lines.append(line)

    def count(self, text: str) -> int:
        return sum(1 for line in list(self.lines) if text in line)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "lib"
    make_collection(r / "c", {"a.md": NOTE})
    return r


def _start(root: Path, embedder=None, **kw) -> tuple[Watcher, Log]:
    log = Log()
    w = Watcher(root, embedder, Settings(), log=log, level=logging.DEBUG, **kw)
    w.start()
    wait_for(lambda: w.reconciles >= 1)
    return w, log


def test_start_stop_and_heartbeat(root):
    w, log = _start(root)
    try:
        assert set(index_rows(root / "c")) == {"a.md"}
        state = heartbeat.read(root, Settings())
        assert state and state["alive"] and state["last_reconcile"]
        st = Library(root, None, Settings()).status().to_dict()["collections"][0]
        assert st["watcher_last_seen"] is not None and st["last_reconcile"] is not None
    finally:
        assert w.stop(timeout=5.0)
    st = Library(root, None, Settings()).status().to_dict()["collections"][0]
    assert st["watcher_last_seen"] is None and st["last_reconcile"] is not None


def test_no_heartbeat_means_no_watcher(root):
    st = Library(root, None, Settings()).status().to_dict()["collections"][0]
    assert st["watcher_last_seen"] is None and st["last_reconcile"] is None


def test_overflow_triggers_a_reconcile(root):
    w, log = _start(root)
    try:
        # watchdog >= 7.1 reports IN_Q_OVERFLOW only as this warning on its own logger
        logging.getLogger("watchdog.observers.inotify_c").warning(
            "Inotify queue overflowed; filesystem events were lost"
        )
        wait_for(lambda: w.reconciles >= 2)
        assert w.overflows == 1
        assert log.count("overflowed") == 1
    finally:
        w.stop(timeout=5.0)


def test_periodic_reconcile_heals_a_lost_event(root):
    # an observer that polls once an hour is blind for this test: only the scan sees the edit
    w, log = _start(root, reconcile_every=1.0, polling=True, polling_interval=3600.0)
    try:
        assert log.count("(polling,") == 1  # watching, and not by inotify
        wait_for(lambda: log.count("reconciled ") >= 1)  # the first scan has logged
        caught = log.count(" notes, 1 caught up")  # the first scan's, if it indexed a.md
        (root / "c" / "a.md").write_text(NOTE + "\nhealed by the scan\n")
        wait_for(lambda: "healed" in chunk_text(root / "c", "a.md"))
        wait_for(lambda: log.count(" notes, 1 caught up") > caught)  # a scan caught it up
    finally:
        w.stop(timeout=5.0)


def test_disk_full_is_logged_and_retried(root, monkeypatch):
    real_sync = Collection.sync
    fails = {"n": 0}

    def flaky(self, prefix="", full=False, progress=None, **kw):
        if prefix == "a.md" and fails["n"] < 1:
            fails["n"] += 1
            raise apsw.FullError("database or disk is full")
        return real_sync(self, prefix, full=full, progress=progress, **kw)

    w, log = _start(root)
    monkeypatch.setattr("memo.watch.watcher.RETRY_FIRST", 0.2)
    monkeypatch.setattr(Collection, "sync", flaky)
    try:
        (root / "c" / "a.md").write_text(NOTE + "\nafter the disk filled\n")
        wait_for(lambda: log.count("FullError") == 1)
        assert "retrying in" in next(line for line in log.lines if "FullError" in line)
        wait_for(lambda: "filled" in chunk_text(root / "c", "a.md"))
    finally:
        w.stop(timeout=5.0)


def test_permission_error_is_a_skipped_file(root, monkeypatch):
    from memo.collection import sync as cm

    real = cm.read_capped

    def deny(path, limit):  # root reads everything: fail the read the way EACCES would
        if path.name == "secret.md":
            raise PermissionError(13, "Permission denied")
        return real(path, limit)

    monkeypatch.setattr(cm, "read_capped", deny)
    w, log = _start(root)
    try:
        (root / "c" / "secret.md").write_text("# no\n")
        wait_for(lambda: index_rows(root / "c").get("secret.md", ("", 0, ""))[2] == "skipped")
        (root / "c" / "a.md").write_text(NOTE + "\nstill going\n")
        wait_for(lambda: "still going" in chunk_text(root / "c", "a.md"))
    finally:
        w.stop(timeout=5.0)


def test_polling_mode(root):
    w, log = _start(root, polling=True, polling_interval=0.2, debounce=0.1)
    try:
        assert "polling" in log.lines[0]
        (root / "c" / "a.md").write_text(NOTE + "\npolled\n")
        wait_for(lambda: "polled" in chunk_text(root / "c", "a.md"))
    finally:
        w.stop(timeout=5.0)


def test_real_embedder_reembeds_only_the_changed_section(root, embedder):
    w, log = _start(root, embedder=embedder)
    try:
        # The registry embeds the collection's description too (for the router): not a chunk.
        chunks = lambda: [p for p in embedder.passages if p != "c: test notes"]  # noqa: E731
        assert len(chunks()) == 2
        with open(root / "c" / "a.md", "a") as f:
            f.write("\nepsilon appended\n")
        wait_for(lambda: "epsilon" in chunk_text(root / "c", "a.md"))
        wait_for(lambda: log.count("changed c/a.md") == 1)
        assert len(chunks()) == 3  # only the last section, not the whole note
        lib = Library(root, embedder, Settings())
        hits = lib.search("c", "epsilon appended", k=1).hits
        assert hits and "epsilon" in hits[0].text
        lib.close()
    finally:
        w.stop(timeout=5.0)


def test_readers_never_see_half_a_file_nor_a_lock_error(root):
    """While the watcher rewrites a note over and over, readers in other threads (own
    connections) and a catch-up searcher (a second writer) never fail and never see a mix."""
    n_sections = 40

    def body(v: int) -> str:
        return "# V\n\n" + "\n".join(f"## S{i}\n\nversion{v} text {i}\n" for i in range(n_sections))

    (root / "c" / "v.md").write_text(body(0))
    w, log = _start(root, debounce=0.05)
    errors: list[BaseException] = []
    stop = threading.Event()
    mixes: list[set[str]] = []

    def raw_reader() -> None:
        db = root / "c" / ".memo" / "index.db"
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        conn.set_busy_timeout(10_000)
        try:
            while not stop.is_set():
                with conn:  # one read transaction: a consistent snapshot
                    texts = [
                        unpack_text(r[0])
                        for r in conn.execute("SELECT text FROM chunks WHERE path='v.md'")
                    ]
                versions = {t.split()[0] for t in texts if t.startswith("version")}
                if len(versions) > 1 or (texts and len(texts) != n_sections):
                    mixes.append(versions)
        except BaseException as e:
            errors.append(e)
        finally:
            conn.close()

    def searcher() -> None:
        lib = Library(root, None, Settings())
        try:
            while not stop.is_set():
                lib.search("c", "version text", k=3, mode="lex")
        except BaseException as e:
            errors.append(e)
        finally:
            lib.close()

    threads = [threading.Thread(target=raw_reader) for _ in range(2)]
    threads.append(threading.Thread(target=searcher))
    try:
        wait_for(lambda: "version0" in chunk_text(root / "c", "v.md"))
        for t in threads:
            t.start()
        for v in range(1, 25):
            tmp = root / "c" / f"v.md.{v}.tmp"
            tmp.write_text(body(v))
            os.replace(tmp, root / "c" / "v.md")
            time.sleep(0.03)
        wait_for(lambda: "version24" in chunk_text(root / "c", "v.md"))
    finally:
        stop.set()
        for t in threads:
            t.join(30)
        w.stop(timeout=5.0)
    assert not errors, errors
    assert not mixes, mixes[:3]


@pytest.mark.slow
def test_the_vector_stage_gives_way_to_a_new_edit_and_then_goes_on(tmp_path: Path, real_embedder):
    """Issue 30: the watcher computes vectors in the background, between slices it lets a new
    edit through (read and indexed by its words), then goes on with the vectors."""
    from memo.collection import lease

    root = tmp_path / "lib"
    words = "route packet node queue lag delay gateway table entry lease slice".split()
    make_collection(
        root / "c",
        {
            f"n{i}.md": f"# Note {i}\n\n"
            + "\n\n".join(
                f"## Part {j}\n\n" + " ".join(words[(i + j + k) % 11] for k in range(60))
                for j in range(6)
            )
            + "\n"
            for i in range(40)
        },
    )
    log = Log()
    w = Watcher(root, real_embedder, Settings(), log=log, level=logging.DEBUG, debounce=0.1)
    w.start()
    try:
        index = root / "c" / ".memo" / "index.db"  # the watcher's Library is its thread's own
        wait_for(lambda: lease.holder(index) is not None or log.count("error"))
        assert not log.count("error"), log.lines  # embedding
        (root / "c" / "fresh.md").write_text("# Fresh\n\nThe wombat gateway note.\n")
        wait_for(lambda: "fresh.md" in index_rows(root / "c"), timeout=120)
        assert _pending(root) > 0  # the edit came in before the vectors were done
        wait_for(lambda: _pending(root) == 0, timeout=600, every=0.5)  # and then they were
    finally:
        w.stop()


def _pending(root: Path) -> int:
    """Chunks of the collection's index still without a vector, read as status reads it."""
    conn = apsw.Connection(str(root / "c" / ".memo" / "index.db"), flags=apsw.SQLITE_OPEN_READONLY)
    conn.set_busy_timeout(5000)
    try:
        return conn.execute("SELECT count(*) FROM chunks WHERE vec = 0").fetchone()[0]
    finally:
        conn.close()
