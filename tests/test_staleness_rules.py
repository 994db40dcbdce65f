"""The one staleness rule (collection/staleness.py), as sync, plan and status meet it: a note
is owed its text when the index has no row for it or its (mtime, size) moved; a row whose note
is gone is owed a removal; nothing else (not its hash, not its vectors) makes a note stale."""

from __future__ import annotations

import os
from pathlib import Path

from memo.collection.files import FileStat
from memo.collection.staleness import Behind, behind, stored_stats
from memo.collection.store import reading
from memo.config import Settings
from memo.library import Library
from memo.library.plan import plan

from .watch_helpers import make_collection


def test_new_changed_and_gone_notes_are_owed_sorted_and_nothing_else():
    stored = {"a.md": (1, 10, "h"), "b.md": (2, 20, "h"), "gone.md": (3, 30, "h")}
    on_disk = {
        "b.md": FileStat(2, 20),  # as indexed
        "a.md": FileStat(1, 11),  # size moved
        "z.md": FileStat(5, 5),  # new
        "m.md": FileStat(9, 10),  # new
    }
    owed = behind(on_disk, stored)
    assert owed.todo == ["a.md", "m.md", "z.md"] and owed.removed == ["gone.md"]
    assert owed.count == 4
    moved = behind({"a.md": FileStat(7, 10)}, {"a.md": (1, 10, "h")})  # mtime alone moved
    assert moved.todo == ["a.md"] and moved.removed == [] and moved.count == 1
    assert behind({"a.md": FileStat(1, 10)}, {"a.md": (1, 10, "other")}).count == 0  # hash: no
    assert Behind().count == 0


def test_stored_stats_reads_what_the_index_holds_under_a_prefix(tmp_path: Path):
    root = tmp_path / "lib"
    make_collection(root / "c", {"top.md": "# Top\n\ntext\n"})
    (root / "c" / "sub").mkdir()
    (root / "c" / "sub" / "in.md").write_text("# In\n\ntext\n")
    (root / "c" / "subway.md").write_text("# Subway\n\ntext\n")  # shares the prefix's letters
    with Library(root, None, Settings()) as lib:
        lib.index()
        coll = lib.collections()[0]
    with reading(coll.index_path) as conn:
        every = stored_stats(conn)
        assert set(every) == {"top.md", "sub/in.md", "subway.md"}
        st = os.stat(root / "c" / "top.md")
        assert every["top.md"][:2] == (st.st_mtime_ns, st.st_size) and every["top.md"][2]
        assert set(stored_stats(conn, "sub")) == {"sub/in.md"}
        assert set(stored_stats(conn, "/sub/")) == {"sub/in.md"}
        assert set(stored_stats(conn, "sub/in.md")) == {"sub/in.md"}
        assert stored_stats(conn, "nothing") == {}


def test_the_plan_counts_by_the_same_rule_and_never_writes(tmp_path: Path):
    root = tmp_path / "lib"
    make_collection(root / "c", {"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n"})
    with Library(root, None, Settings()) as lib:
        lib.index()
        coll = lib.collections()[0]
        (root / "c" / "a.md").write_text("# A\n\nalpha, longer now\n")
        (root / "c" / "c.md").write_text("# C\n\ngamma\n")
        before = coll.index_path.stat().st_mtime_ns
        (part,) = plan([(coll, "")])
        assert [p for p, _ in part.files] == ["a.md", "c.md"]
        assert part.bytes == sum(os.path.getsize(root / "c" / p) for p in ("a.md", "c.md"))
        (full,) = plan([(coll, "")], full=True)
        assert [p for p, _ in full.files] == ["a.md", "b.md", "c.md"]
        assert coll.index_path.stat().st_mtime_ns == before  # an estimate never writes
        assert lib.status().collections[0].stale == 2
        assert lib.index().totals()["new"] == 1 and lib.status().collections[0].stale == 0


def test_a_prefix_is_a_folder_path_whatever_its_letters_and_a_skipped_note_has_no_hash(
    tmp_path: Path,
):
    root = tmp_path / "lib"
    make_collection(root / "c", {"top.md": "# Top\n\ntext\n"})
    for folder in ("XsubX", "sub"):
        (root / "c" / folder).mkdir()
        (root / "c" / folder / "in.md").write_text("# In\n\ntext\n")
    (root / "c" / "big.md").write_bytes(b"# Big\n\n" + b"x " * 600)
    with Library(root, None, Settings(max_file_bytes=1000)) as lib:
        lib.index()  # big.md is skipped: too large, a row with no hash
        coll = lib.collections()[0]
    with reading(coll.index_path) as conn:
        assert set(stored_stats(conn, "XsubX")) == {"XsubX/in.md"}
        assert set(stored_stats(conn, "/XsubX/")) == {"XsubX/in.md"}
        assert stored_stats(conn)["big.md"][2] == ""
