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


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_pipe_gets_plain_lines_with_both_stages_rate_and_time_left():
    out, clock = io.StringIO(), Clock()
    p = IndexProgress(out, every=0, clock=clock)
    p.collections(2)
    p.begin("work/jira", 3)
    p.files_done(3)
    p.begin("home/cooking", 2)
    p.files_done(2)
    p.pending(40)  # every note read: the vector stage starts
    p.vectors("work/jira", 30)
    clock.now = 1.0
    p.chunks_done(4)  # the first slice: the pace is measured from here
    clock.now = 3.0
    p.chunks_done(10)  # 10 chunks in 2 s
    p.close()
    lines = out.getvalue().splitlines()
    assert (
        lines[0].startswith("indexing collection 1/2, read 0/3+ notes")
        and "vectors" not in lines[0]
    )
    assert lines[0].endswith("work/jira")
    assert "read 5/5 notes, vectors 0/40 chunks (starting)" in lines[5]
    assert lines[-1] == (
        "indexing collection 2/2, read 5/5 notes, vectors 14/40 chunks "
        "(5.0 chunks/s, 5 s left) work/jira"
    )
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
    assert "indexing read 1/2 notes" in text  # one collection: no collection count


def test_lines_are_spaced_in_time_off_a_terminal():
    out = io.StringIO()
    p = IndexProgress(out)  # every EVERY seconds
    p.collections(1)
    p.begin("notes", 1000)
    for _ in range(1000):
        p.files_done(1)
    assert len(out.getvalue().splitlines()) == 1  # the first line says work began


def test_another_process_computing_the_vectors_is_named_while_waiting():
    out = io.StringIO()
    p = IndexProgress(out, every=1000)
    p.collections(1)
    p.begin("notes", 1)
    p.waiting("notes", 4242)
    assert "notes: its vectors are being computed by memo pid 4242: waiting for it" in (
        out.getvalue().splitlines()
    )


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


def _part(label: str, files: list[tuple[str, int]]):
    from memo.library.plan import PlannedPart

    return PlannedPart(label, files)


def test_with_the_work_counted_first_the_notes_and_their_size_show_at_once():
    """Issue 24, item 4: the plan counts the notes before the first is read."""
    out, clock = io.StringIO(), Clock()
    p = IndexProgress(out, every=0, clock=clock)
    p.collections(2)
    p.plan([_part("a", [("x.md", 50_000)] * 4), _part("b", [("y.md", 50_000)] * 4)])
    p.begin("a", 4)
    assert "read 0/8 notes (0.4 MB)" in out.getvalue()  # counted: no "8+"
    p.files_done(4)
    p.begin("b", 4)
    p.files_done(4)
    assert "read 8/8 notes (0.4 MB) b" in out.getvalue().splitlines()[-1]


def test_a_note_whose_vectors_take_minutes_says_so_once_read():
    out, clock = io.StringIO(), Clock()
    p = IndexProgress(out, every=1000, clock=clock)  # progress lines: only the first
    p.collections(1)
    p.plan([_part("docs", [("small.md", 5_000), ("huge.md", 20_000_000)])])
    p.begin("docs", 2)
    p.files_done(2)
    said = [x for x in out.getvalue().splitlines() if not x.startswith("indexing")]
    assert said == [
        "docs/huge.md: 20.0 MB, about 8,000 chunks: searchable by its words now, "
        "its vectors take ~11 min"
    ]


def test_the_plan_counts_what_a_sync_will_reindex(library, notes):
    """`memo index` counts the notes it will reindex and their bytes before it starts."""
    from memo.collection.progress import SyncProgress

    class Recorder(SyncProgress):
        wants_plan = True

        def __init__(self) -> None:
            self.parts: list = []

        def plan(self, parts: list) -> None:
            self.parts = parts

    rec = Recorder()
    library.index(progress=rec)
    counted = {(p.label, f) for p in rec.parts for f, _ in p.files}
    assert len(counted) == 5
    on_disk = sum((notes / label / f).stat().st_size for label, f in counted)
    assert sum(p.bytes for p in rec.parts) == on_disk > 0
    library.index(progress=rec)
    assert [f for p in rec.parts for f in p.files] == []  # nothing to do: nothing counted
    library.index(full=True, progress=rec)
    assert len([f for p in rec.parts for f in p.files]) == 5


# ------------------------------------------------------------------ a time left that only shrinks


class Load:
    """The machine's load average, as the test sets it."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __call__(self) -> float:
        return self.value


def _embed(p: IndexProgress, pace, clock: Clock, seconds: list[float], chunks: int = 10):
    """Slices of `chunks` chunks, each taking the next of `seconds` (as embed_pending reports
    them: the pace first, then the chunks); the time left after each."""
    left = []
    for spent in seconds:
        clock.now += spent
        if (rate := pace.add(chunks, now=clock.now)) is not None:
            p.pace(rate)
        p.chunks_done(chunks)
        left.append(p.seconds_left())
    return left


def _vector_stage(out: io.StringIO, clock: Clock, load: Load, chunks: int) -> IndexProgress:
    p = IndexProgress(out, every=0, clock=clock, load=load)
    p.collections(1)
    p.begin("notes", 1)
    p.files_done(1)
    p.pending(chunks)
    p.vectors("notes", chunks)
    return p


def test_the_time_left_never_rises_with_the_noise_of_the_pace():
    """Issue 50, item 5: the estimate read 78 s, 86 s, "about 2 min", 59 s while the work only
    shrank. Slices whose times wander by a third either way, the load the same: the time
    left never rises, and no slowdown is said."""
    out, clock, load = io.StringIO(), Clock(), Load(2.0)
    from memo.collection.embedding import Pace

    p = _vector_stage(out, clock, load, 2000)
    wander = [1.0, 1.3, 0.8, 1.25, 0.75, 1.1, 0.9, 1.33] * 20  # 10 chunks a slice
    left = [x for x in _embed(p, Pace(), clock, wander) if x is not None]
    assert len(left) > 150
    assert all(b <= a for a, b in zip(left, left[1:], strict=False)), left
    assert "slower" not in out.getvalue()


def test_a_slower_machine_raises_the_time_left_once_and_says_why():
    """When the load changes the time left may grow: a line says so once, with the load
    before and after, and the estimate then follows the new pace."""
    out, clock, load = io.StringIO(), Clock(), Load(2.0)
    from memo.collection.embedding import Pace

    p = _vector_stage(out, clock, load, 3000)
    pace = Pace()
    before = _embed(p, pace, clock, [1.0] * 40)  # 10 chunks/s
    load.value = 4.1  # another job takes the cores: the slices take twice as long
    after = _embed(p, pace, clock, [2.0] * 80)
    said = [x for x in out.getvalue().splitlines() if not x.startswith("indexing")]
    assert len(said) == 1, said
    assert said[0].startswith("vectors: slower now, 7.") and said[0].count("from 10.0") == 1
    assert "the machine is busier (load 2.0 → 4.1); the time left grows from " in said[0]
    left = [x for x in before + after if x is not None]
    rises = [i for i, (a, b) in enumerate(zip(left, left[1:], strict=False)) if b > a]
    # every rise comes with the slowdown said, none before it
    assert rises and min(rises) + 1 >= len([x for x in before if x is not None])
    assert p.rate() == pytest.approx(5.0, rel=0.05)  # then it tells the new pace
    assert p.seconds_left() == pytest.approx((3000 - 1200) / 5.0, rel=0.05)


def test_a_pass_with_seconds_left_says_no_slowdown():
    """A slowdown near the end of a small pass has nothing to explain (the README's example
    library on a busy machine printed one in its transcript): said only with at least a
    progress line's interval of work left."""
    from memo.collection.embedding import Pace

    for chunks, said in ((100, False), (3000, True)):
        out, clock, load = io.StringIO(), Clock(), Load(2.0)
        p = _vector_stage(out, clock, load, chunks)
        _embed(p, Pace(), clock, [1.0] * 9)  # 10 chunks/s, 90 done
        load.value = 4.1
        p.pace(4.0)  # the pace told falls: 10 chunks left take 2.5 s, 2,910 take 12 min
        assert ("slower now" in out.getvalue()) is said, (chunks, out.getvalue())
