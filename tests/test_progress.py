"""`memo index` says what it is doing on stderr, whatever stdout is (issue 15): a redrawn line
on a terminal, a plain line every few seconds anywhere else, nothing with --quiet."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memo.cli.progress import IndexProgress

from .conftest import EXAMPLES


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_pipe_gets_plain_lines_with_collections_notes_rate_and_time_left():
    out = io.StringIO()
    p = IndexProgress(out, every=0)
    p.collections(2)
    p.begin("work/jira", 3)
    p.files_done(3)
    p.chunks_done(7)
    p.begin("home/cooking", 2)
    p.files_done(1)
    p.close()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("indexing collection 1/2, 0/3+ notes, 0 chunks embedded")
    assert lines[0].endswith("work/jira")
    assert "3/3+ notes" in lines[1] and "left" not in lines[1]  # not every collection counted
    assert lines[-1].startswith("indexing collection 2/2, 4/5 notes, 7 chunks embedded (")
    assert "chunks/s, " in lines[-1] and " left)" in lines[-1]
    assert "\r" not in out.getvalue()


def test_a_terminal_gets_one_line_redrawn_and_cleared_at_the_end():
    out = Terminal()
    p = IndexProgress(out, every=0)
    p.collections(1)
    p.begin("notes", 2)
    p.files_done(1)
    p.close()
    text = out.getvalue()
    assert "\n" not in text and text.count("\r\x1b[2K") == 3 and text.endswith("\r\x1b[2K")
    assert "indexing 1/2 notes" in text  # one collection: no collection count


def test_lines_are_spaced_in_time_off_a_terminal():
    out = io.StringIO()
    p = IndexProgress(out)  # every EVERY seconds
    p.collections(1)
    p.begin("notes", 1000)
    for _ in range(1000):
        p.files_done(1)
    assert len(out.getvalue().splitlines()) == 1  # the first line says work began


@pytest.mark.slow
@pytest.mark.parametrize("quiet", [False, True])
def test_memo_index_in_a_pipe_says_it_began_unless_quiet(tmp_path: Path, quiet: bool):
    shutil.copytree(EXAMPLES, tmp_path / "notes")
    env = {**os.environ, "MEMO_INDEX_DIR": str(tmp_path / "idx")}
    env.pop("MEMO_ROOT", None)
    argv = [sys.executable, "-m", "memo", "index", str(tmp_path / "notes"), "--json"]
    done = subprocess.run(
        argv + (["--quiet"] if quiet else []), env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert '"new": 5' in done.stdout  # stdout is the JSON alone
    began = [x for x in done.stderr.splitlines() if x.startswith("indexing collection 1/3, ")]
    assert began == [] if quiet else len(began) == 1
