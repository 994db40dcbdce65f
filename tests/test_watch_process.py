"""`memo watch` as a real process: editor patterns end in one re-index of the right file and no
ghost rows; structure changes (folders, _meta.yaml) are followed; status shows the watcher; it
stops on SIGTERM; a kill -9 in the middle of a large file converges after a restart.

One watcher serves the whole module (each test works in its own collection), lexical only
(MEMO_EMBEDDER=none): what is asserted is which files get indexed, not the vectors.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from .watch_helpers import (
    WatchProcess,
    chunk_text,
    index_rows,
    make_collection,
    wait_for,
)

pytestmark = pytest.mark.slow  # real `memo watch` processes

NOTE = "# Title\n\nfirst paragraph about apples\n\n## Second\n\nsome text about pears\n"


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("watchlib")
    (root / "inbox.md").write_text("drafts are never indexed\n")
    make_collection(root / "base", {"a.md": NOTE})
    return root


@pytest.fixture(scope="module")
def watcher(lib: Path) -> Iterator[WatchProcess]:
    w = WatchProcess(lib)
    try:
        w.wait_ready()
        yield w
    finally:
        code = w.stop()
        assert code == 0, w.log()


def _coll(lib: Path, name: str, watcher: WatchProcess, notes: dict[str, str]) -> Path:
    coll = make_collection(lib / name, notes)
    for n in notes:
        watcher.wait_line(rf"new {name}/{n}")
    watcher.wait_idle()
    return coll


def test_echo_append(lib, watcher):
    coll = _coll(lib, "echo", watcher, {"note.md": NOTE})
    subprocess.run(f"echo 'appended kiwi' >> {coll / 'note.md'}", shell=True, check=True)
    wait_for(lambda: "kiwi" in chunk_text(coll, "note.md"))
    watcher.wait_idle()
    assert watcher.reindexed("echo/note.md") == 2  # new once at creation, changed once now


def test_atomic_save(lib, watcher):
    coll = _coll(lib, "atomic", watcher, {"note.md": NOTE})
    tmp = coll / "note.md.tmp.4242"
    tmp.write_text(NOTE + "\natomic mango\n")
    os.replace(tmp, coll / "note.md")
    wait_for(lambda: "mango" in chunk_text(coll, "note.md"))
    watcher.wait_idle()
    assert watcher.reindexed("atomic/note.md") == 2
    assert set(index_rows(coll)) == {"note.md"}


def test_vim_save(lib, watcher):
    coll = _coll(lib, "vim", watcher, {"note.md": NOTE})
    note = coll / "note.md"
    probe = coll / "4913"  # vim checks it may create files here
    probe.write_text("")
    probe.unlink()
    (coll / ".note.md.swp").write_bytes(b"\0swap")
    os.rename(note, coll / "note.md~")  # backup
    note.write_text(NOTE + "\nvim papaya\n")
    (coll / "note.md~").unlink()
    (coll / ".note.md.swp").unlink()
    wait_for(lambda: "papaya" in chunk_text(coll, "note.md"))
    watcher.wait_idle()
    assert watcher.reindexed("vim/note.md") == 2
    assert set(index_rows(coll)) == {"note.md"}
    assert "4913" not in watcher.log() or watcher.count(r"(new|changed) vim/4913") == 0


def test_sed_in_place(lib, watcher):
    coll = _coll(lib, "sed", watcher, {"note.md": NOTE})
    subprocess.run(["sed", "-i", "s/pears/quinces/", str(coll / "note.md")], check=True)
    wait_for(lambda: "quinces" in chunk_text(coll, "note.md"))
    watcher.wait_idle()
    assert watcher.reindexed("sed/note.md") == 2
    assert "pears" not in chunk_text(coll, "note.md")


def test_git_checkout_of_many_files(lib, watcher):
    n = 30
    notes = {f"n{i:02}.md": f"# N{i}\n\nversion one {i}\n" for i in range(n)}
    coll = _coll(lib, "git", watcher, notes)

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=coll,
            check=True,
            capture_output=True,
        )

    git("init", "-q", "-b", "one")
    git("add", "-A")
    git("commit", "-qm", "one")
    git("checkout", "-q", "-b", "two")
    for i in range(n):
        (coll / f"n{i:02}.md").write_text(f"# N{i}\n\nversion two {i}\n")
    (coll / "n00.md").unlink()
    git("add", "-A")
    git("commit", "-qm", "two")
    watcher.wait_idle()
    before = {i: watcher.reindexed(f"git/n{i:02}.md") for i in range(n)}
    git("checkout", "-q", "one")  # every note changes back at once, n00.md comes back
    wait_for(lambda: chunk_text(coll).count("version one") == n)
    watcher.wait_idle()
    assert "version two" not in chunk_text(coll)
    assert set(index_rows(coll)) == {f"n{i:02}.md" for i in range(n)}
    assert all(watcher.reindexed(f"git/n{i:02}.md") == before[i] + 1 for i in range(n)), (
        watcher.log()[-4000:]
    )


def test_folder_moved_in_and_out(lib, watcher, tmp_path):
    coll = _coll(lib, "moves", watcher, {"stay.md": NOTE})
    outside = tmp_path / "sub"
    outside.mkdir()
    for i in range(3):
        (outside / f"m{i}.md").write_text(f"# M{i}\n\nmoved walnut {i}\n")
    shutil.move(str(outside), str(coll / "sub"))
    wait_for(lambda: chunk_text(coll).count("walnut") == 3)
    watcher.wait_idle()
    assert all(watcher.reindexed(f"moves/sub/m{i}.md") == 1 for i in range(3))
    shutil.move(str(coll / "sub"), str(tmp_path / "away"))
    wait_for(lambda: set(index_rows(coll)) == {"stay.md"})
    assert "walnut" not in chunk_text(coll)


def test_meta_created_edited_deleted(lib, watcher):
    folder = lib / "newcoll"
    folder.mkdir()
    (folder / "x.md").write_text("# X\n\nfig tree\n")
    watcher.wait_line(r"newcoll/x\.md: not in a collection")  # not a collection yet
    assert not (folder / ".memo").exists()
    (folder / "_meta.yaml").write_text("description: appeared\n")
    watcher.wait_line(r"collection found: newcoll")
    wait_for(lambda: "fig" in chunk_text(folder, "x.md"))
    synced = watcher.count(r"debug: newcoll: up to date")
    (folder / "_meta.yaml").write_text("description: edited, same notes\n")
    watcher.wait_line(r"debug: newcoll: up to date", n=synced + 1)  # the edit was handled
    assert watcher.reindexed("newcoll/x.md") == 1  # a description edit re-indexes nothing
    (folder / "_meta.yaml").unlink()
    watcher.wait_line(r"collection gone: newcoll")


def test_nested_meta_moves_notes_between_indexes(lib, watcher):
    parent = _coll(lib, "outer", watcher, {"top.md": NOTE, "inner/in.md": "# In\n\nplum\n"})
    assert set(index_rows(parent)) == {"top.md", "inner/in.md"}
    (parent / "inner" / "_meta.yaml").write_text("description: inner\n")
    wait_for(lambda: set(index_rows(parent)) == {"top.md"})  # no ghost in the parent
    wait_for(lambda: "plum" in chunk_text(parent / "inner", "in.md"))
    (parent / "inner" / "_meta.yaml").unlink()
    wait_for(lambda: set(index_rows(parent)) == {"top.md", "inner/in.md"})


def test_collection_deleted_and_recreated(lib, watcher):
    coll = _coll(lib, "phoenix", watcher, {"old.md": "# Old\n\nashes\n"})
    shutil.rmtree(coll)
    watcher.wait_line(r"collection gone: phoenix")
    assert not coll.exists()  # the watcher never re-creates a deleted folder
    make_collection(coll, {"new.md": "# New\n\nfeathers\n"})
    wait_for(lambda: "feathers" in chunk_text(coll))
    watcher.wait_idle()
    assert set(index_rows(coll)) == {"new.md"}
    assert "ashes" not in chunk_text(coll)


def test_broken_meta_is_logged_and_the_watcher_goes_on(lib, watcher):
    coll = _coll(lib, "broken", watcher, {"b.md": NOTE})
    (coll / "_meta.yaml").write_text("description: [unclosed\n")
    watcher.wait_line(r"error: .*broken/_meta.yaml")
    (coll / "b.md").write_text(NOTE + "\nwhile broken\n")
    other = _coll(lib, "healthy", watcher, {"h.md": "# H\n\nstill working\n"})
    assert "still working" in chunk_text(other)
    (coll / "_meta.yaml").write_text("description: fixed\n")
    wait_for(lambda: "while broken" in chunk_text(coll, "b.md"))


def test_file_vanishing_before_it_is_read(lib, watcher):
    coll = _coll(lib, "flash", watcher, {"keep.md": NOTE})
    p = coll / "blink.md"
    p.write_text("# gone\n")
    p.unlink()
    (coll / "keep.md").write_text(NOTE + "\nafter blink\n")
    wait_for(lambda: "after blink" in chunk_text(coll, "keep.md"))
    watcher.wait_idle()
    assert set(index_rows(coll)) == {"keep.md"}
    assert watcher.proc.poll() is None


def test_inbox_and_other_files_are_ignored(lib, watcher):
    (lib / "inbox.md").write_text("more drafts\n")
    (lib / "base" / "notes.txt").write_text("not a note\n")
    (lib / "base" / "a.md").write_text(NOTE + "\nbase edit\n")
    wait_for(lambda: "base edit" in chunk_text(lib / "base", "a.md"))
    watcher.wait_idle()
    assert set(index_rows(lib / "base")) == {"a.md"}
    assert watcher.count(r"inbox\.md|notes\.txt") == 0


def test_status_shows_the_running_watcher(lib, watcher):
    env = {**os.environ, "MEMO_EMBEDDER": "none"}
    env.pop("MEMO_INDEX_DIR", None)
    out = subprocess.run(
        [sys.executable, "-m", "memo", "status", str(lib), "--root", str(lib), "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    colls = json.loads(out.stdout)["collections"]
    base = next(c for c in colls if c["path"] == "base")
    assert base["watcher_last_seen"] is not None
    assert base["last_reconcile"] is not None
    assert base["files"] == 1 and base["stale"] == 0


def test_sigterm_stops_it_and_status_says_so(tmp_path):
    root = tmp_path / "lib"
    make_collection(root / "c", {"a.md": NOTE})
    w = WatchProcess(root)
    w.wait_ready()
    t0 = time.monotonic()
    assert w.stop(signal.SIGTERM) == 0
    took = time.monotonic() - t0
    assert took < 10, took  # a liveness bound, not a speed target (bench/watch.py measures it)
    assert "info: stopped" in w.log()
    state = json.loads((root / ".memo" / "watcher.json").read_text())
    assert state["running"] is False and state["last_reconcile"]
    w2 = WatchProcess(root)
    w2.wait_ready()
    assert w2.stop(signal.SIGINT) == 0


def test_kill_9_in_the_middle_of_a_large_file_converges(tmp_path):
    root = tmp_path / "lib"
    coll = make_collection(root / "c", {"small.md": NOTE})
    w = WatchProcess(root)
    w.wait_ready()
    sections = [f"## Section {i}\n\nword{i} lorem ipsum dolor sit amet {i}\n" for i in range(6000)]
    big = coll / "big.md"
    big.write_text("# Big\n\n" + "\n".join(sections))
    w.wait_line(r"indexing c/big\.md")
    time.sleep(0.3)
    w.kill()  # SIGKILL: no cleanup at all, maybe inside the file's transaction
    (coll / "small.md").write_text(NOTE + "\nwritten while no watcher ran\n")
    w2 = WatchProcess(root)
    try:
        w2.wait_ready()
        wait_for(lambda: "word5999" in chunk_text(coll, "big.md"))
        wait_for(lambda: "no watcher ran" in chunk_text(coll, "small.md"))
    finally:
        assert w2.stop() == 0, w2.log()
    conn = apsw.Connection(str(coll / ".memo" / "index.db"))
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        n, distinct = conn.execute(
            "SELECT count(*), count(DISTINCT ord) FROM chunks WHERE path='big.md'"
        ).fetchone()
        assert n == distinct >= 6000  # every section once: nothing doubled by the killed run
        (fts,) = conn.execute("SELECT count(*) FROM chunks_fts").fetchone()
        (total,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
        assert fts == total
    finally:
        conn.close()
