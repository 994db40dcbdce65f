"""Running `memo watch` as a real process on a temporary library, and reading its indexes."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import apsw

from memo.collection.store import unpack_text
from memo.config import Settings
from memo.roots import declare

META = "description: test notes\n"
WAIT = 30.0  # generous: the machine is shared; nothing here asserts speed


def wait_for(pred: Callable[[], object], timeout: float = WAIT, every: float = 0.05) -> object:
    end = time.monotonic() + timeout
    while True:
        got = pred()
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout} s waiting for {pred}")
        time.sleep(every)


def make_collection(folder: Path, notes: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "_meta.yaml").write_text(META)
    for name, text in (notes or {}).items():
        p = folder / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return folder


def index_rows(coll: Path) -> dict[str, tuple[str, float, str]]:
    """path -> (hash, indexed_at, status) from the collection's index ({} when none)."""
    db = coll / ".memo" / "index.db"
    if not db.exists():
        return {}
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    conn.set_busy_timeout(5000)
    try:
        return {
            r[0]: (r[1], r[2], r[3])
            for r in conn.execute("SELECT path, hash, indexed_at, status FROM files")
        }
    except apsw.SQLError:  # caught between creating the file and its schema
        return {}
    finally:
        conn.close()


def chunk_text(coll: Path, path: str | None = None) -> str:
    """Every chunk text of one note (or of the whole collection), joined."""
    db = coll / ".memo" / "index.db"
    if not db.exists():
        return ""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    conn.set_busy_timeout(5000)
    try:
        if path is None:
            rows = conn.execute("SELECT text FROM chunks ORDER BY path, ord")
        else:
            rows = conn.execute("SELECT text FROM chunks WHERE path=? ORDER BY ord", (path,))
        return "\n".join(unpack_text(r[0]) for r in rows)
    except apsw.SQLError:  # caught between creating the file and its schema
        return ""
    finally:
        conn.close()


class WatchProcess:
    """`memo watch ROOT -v` in a subprocess; stderr lines collected as they come."""

    def __init__(self, root: Path, *args: str, env: dict[str, str] | None = None) -> None:
        full_env = {**os.environ, "MEMO_EMBEDDER": "none", **(env or {})}
        full_env.pop("MEMO_INDEX_DIR", None)
        full_env.pop("MEMO_ROOT", None)
        self.root = root
        declare(root, Settings.from_env(full_env))  # a watcher runs on a declared library
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memo", "watch", str(root), "-v", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=full_env,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def log(self) -> str:
        return "\n".join(self.lines)

    def count(self, pattern: str) -> int:
        rx = re.compile(pattern)
        return sum(1 for line in list(self.lines) if rx.search(line))

    def wait_line(self, pattern: str, n: int = 1, timeout: float = WAIT) -> None:
        try:
            wait_for(lambda: self.count(pattern) >= n or self.proc.poll() is not None, timeout)
        except AssertionError:
            raise AssertionError(f"no {pattern!r} in the watcher's log:\n{self.log()}") from None
        assert self.proc.poll() is None, f"watcher died:\n{self.log()}"

    def wait_ready(self) -> None:
        self.wait_line(r"info: reconciled \d+ collections")

    def wait_idle(self, quiet: float = 1.5, timeout: float = WAIT) -> None:
        """Until the log has been silent for `quiet` seconds (debounce is 0.5 s)."""
        end = time.monotonic() + timeout
        n, since = len(self.lines), time.monotonic()
        while time.monotonic() < end:
            time.sleep(0.1)
            if len(self.lines) != n:
                n, since = len(self.lines), time.monotonic()
            elif time.monotonic() - since >= quiet:
                return
        raise AssertionError(f"the watcher never went quiet:\n{self.log()[-3000:]}")

    def reindexed(self, rel: str) -> int:
        """How many times the watcher wrote this note (root-relative path)."""
        return self.count(rf"(info|debug): (new|changed) {re.escape(rel)}( |$)")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = WAIT) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        finally:
            self._reader.join(5)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(WAIT)


def indexed_vectors(where: Path) -> int:
    """Chunks whose vector is committed, in the index at `where` or every index below it
    (0 for an index being created, with no table yet)."""
    dbs = [where] if where.suffix == ".db" else sorted(where.rglob("index.db"))
    n = 0
    for db in dbs:
        try:
            conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
            try:
                n += conn.execute("SELECT count(*) FROM chunks WHERE vec = 1").fetchone()[0]
            finally:
                conn.close()
        except apsw.Error:
            pass
    return n


def ctrl_c_works() -> None:
    """For Popen(preexec_fn=...): the child takes SIGINT as Ctrl-C even when this test runs in
    a job that ignores it (a shell runs background jobs with SIGINT ignored, and a child
    inherits that: Python then installs no KeyboardInterrupt handler)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
