"""The ranking of a scope (search/ranking.py) as a search meets it: which hits come first,
which are held back for variety, what each hit carries, what a narrowed ranking keeps and how
sure the first hit is (issue 32: pinned, not restated). Each test ranks the chunks of a small
real library (two collections, SQLite on disk) under scores it chooses, so the rule under test
alone decides the order a caller sees; the last ones rank real queries through `rank`."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memo.collection.filters import Filter
from memo.collection.lexical import terms
from memo.config import Settings
from memo.library import Library
from memo.search.fusion import SEARCH_FUSION_K, Legs
from memo.search.legs import QueryVectors, Reader, Words
from memo.search.ranking import Ranking, rank
from memo.search.results import TEXT_LIMIT

OLD, NEW = 1_000_000_000, 2_000_000_000  # mtimes (s): a/x.md is older than b/x.md
LONG_WORDS = "Kafka consumers read partitions in order. " * 32  # > TEXT_LIMIT characters
NOTES = {
    "a/x.md": "# X\n\n## One\n\nkafka consumer lag grows\nsecond line of one\nthird line\n\n"
    "## Two\n\nkafka broker offset\n\n## Three\n\nkafka replica shard\n",
    "a/long.md": "# Long\n\n" + "".join(f"## S{i}\n\nsection {i} on nginx\n\n" for i in range(9)),
    "a/big.md": f"# Big\n\n{LONG_WORDS.strip()}\n",
    "b/x.md": "# X\n\nkafka topic partition\n",
    "b/y.md": "---\ntags: [ops]\n---\n# Y\n\nrouter packet latency kafka\n",
    "b/ru.md": "# Заметка\n\nочередь kafka смещение брокер журнал реплика\n",
    "b/solo.md": "# Solo\n\nnginx upstream timeout\n",
}


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory, real_embedder) -> Iterator[Library]:
    base = tmp_path_factory.mktemp("ranking-rules")
    root = base / "lib"
    for c in ("a", "b"):
        (root / c).mkdir(parents=True)
        (root / c / "_meta.yaml").write_text(f"description: {c} notes\n")
    for rel, text in NOTES.items():
        (root / rel).write_text(text, encoding="utf-8")
    os.utime(root / "a/x.md", (OLD, OLD))
    os.utime(root / "b/x.md", (NEW, NEW))
    library = Library(root, real_embedder, Settings(index_dir=base / "idx"))
    library.index()
    yield library
    library.close()


@pytest.fixture(scope="module")
def key(lib: Library) -> dict[str, tuple[int, int]]:
    """'a/x.md#One' -> its chunk's key (collection position, chunk id); '#' alone: the note's
    only chunk ('b/x.md#')."""
    scope = lib.scope(".")
    rows = Reader(scope).rows((ci, cid) for ci in range(2) for cid in range(1, 60))
    out = {}
    for k, row in rows.items():
        coll = scope.parts[k[0]][0]
        out[f"{coll.rel}/{row.path}#{_section(row.heading)}"] = k
    assert len(out) == len(rows) == 3 + 9 + 1 + 4  # every chunk named once
    return out


def _ranking(lib: Library, scores: dict, *phrasings: Legs, reader: Reader | None = None):
    legs = phrasings[0] if phrasings else Legs()
    reader = reader or Reader(lib.scope("."))
    return Ranking(reader, legs, dict(scores), phrasings=list(phrasings))


def _section(heading: str) -> str:
    return heading.rpartition(" > ")[2] if " > " in heading else ""


def _where(hits) -> list[str]:
    """Each hit as 'note#section', the names `key` gives."""
    return [f"{h.path}#{_section(h.heading)}" for h in hits]


class CountingReader(Reader):
    """The real reader, counting the chunk rows it was asked for."""

    def __init__(self, scope) -> None:
        super().__init__(scope)
        self.asked: list = []

    def rows(self, keys):
        keys = list(keys)
        self.asked += keys
        return super().rows(keys)


# ---------------------------------------------------------------------- order
def test_hits_come_best_score_first_whatever_order_the_scores_arrive_in(lib, key):
    names = ["a/x.md#One", "b/y.md#", "a/x.md#Two", "b/solo.md#"]
    scores = dict(zip(names, (0.2, 0.5, 0.4, 0.1), strict=True))
    want = ["b/y.md#", "a/x.md#Two", "a/x.md#One", "b/solo.md#"]
    for order in (names, names[::-1]):
        r = _ranking(lib, {key[n]: scores[n] for n in order})
        assert _where(r.hits(4)) == want
        assert r.ranked == [key[n] for n in want]


def test_a_tie_goes_to_the_newer_file_even_at_the_cut(lib, key):
    older, newer = key["a/x.md#One"], key["b/x.md#"]
    for scores in ({older: 0.5, newer: 0.5}, {newer: 0.5, older: 0.5}):
        r = _ranking(lib, {**scores, key["b/solo.md#"]: 0.1})
        assert _where(r.hits(1)) == ["b/x.md#"]
        assert _where(r.hits(2)) == ["b/x.md#", "a/x.md#One"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([0.1, 0.2, 0.3]), min_size=6, max_size=6), st.integers(1, 6))
def test_hits_are_the_k_best_scores_ties_newer_first(lib, key, values, k):
    names = ["a/x.md#One", "a/x.md#Two", "b/x.md#", "b/y.md#", "a/long.md#S0", "b/solo.md#"]
    r = _ranking(lib, {key[n]: v for n, v in zip(names, values, strict=True)})
    hits = r.hits(k)
    assert [h.score for h in hits] == sorted(values, reverse=True)[:k]
    for a, b in zip(hits, hits[1:], strict=False):
        if a.score == b.score:
            assert os.stat(a.abs_path).st_mtime_ns >= os.stat(b.abs_path).st_mtime_ns


def test_only_the_best_candidates_and_their_ties_are_read(lib, key):
    """Reading every fused candidate's row costs more than both legs' SQL: a search reads the
    rows of the hits it shows and of whatever ties with the last of them."""
    names = ["a/x.md#One", "a/x.md#Two", "b/x.md#", "b/y.md#", "b/solo.md#"]
    scope = lib.scope(".")

    def reader_after(scores, ask) -> list:
        reader = CountingReader(scope)
        ask(_ranking(lib, {key[n]: s for n, s in zip(names, scores, strict=True)}, reader=reader))
        return sorted(reader.asked)

    assert reader_after((5, 4, 3, 2, 1), lambda r: r.hits(2)) == sorted(key[n] for n in names[:2])
    assert reader_after((5, 4, 3, 2, 1), lambda r: r.top_passage()) == [key[names[0]]]
    tie = reader_after((5, 4, 4, 2, 1), lambda r: r.hits(2))
    assert tie == sorted(key[n] for n in names[:3])
    assert reader_after((5, 4, 3, 2, 1), lambda r: r.hits(5)) == sorted(key[n] for n in names)


def test_a_candidate_whose_chunk_is_gone_is_left_out(lib, key):
    gone = (0, 999_999)  # an id the index no longer has
    r = _ranking(lib, {gone: 0.9, key["b/x.md#"]: 0.5, key["b/solo.md#"]: 0.4})
    assert _where(r.hits(3)) == ["b/x.md#", "b/solo.md#"]


# ---------------------------------------------------------------------- one hit
def test_a_hit_carries_its_note_lines_ranks_score_and_citation(lib, key):
    one, two = key["a/x.md#One"], key["a/x.md#Two"]
    legs = Legs(lex=[(two, 3.0), (one, 2.0)], vec=[(one, 0.9)])
    r = _ranking(lib, {one: 0.123456789, two: 0.1}, legs)
    h, h2 = r.hits(2)
    assert (h.collection, h.path, h.heading) == ("a", "a/x.md", "X > One")
    assert h.abs_path == str(lib.root / "a" / "x.md")
    assert (h.line, h.end_line) == (5, 7)  # its chunk's three lines
    assert h.text == "kafka consumer lag grows\nsecond line of one\nthird line"
    assert h.score == 0.123457  # six decimals
    assert (h.lex_rank, h.vec_rank) == (2, 1) and (h2.lex_rank, h2.vec_rank) == (1, None)
    shown = lib.read(h.path, h.line, h.end_line - h.line + 1)
    assert h.cite == shown.cite and shown.text.endswith("third line")
    assert h2.cite == lib.read(h2.path, h2.line, 1).cite != h.cite


def test_a_long_chunk_is_cut_in_its_hit(lib, key):
    h = _ranking(lib, {key["a/big.md#"]: 1.0}).hits(1)[0]
    assert len(LONG_WORDS) > TEXT_LIMIT >= len(h.text) - 2 and h.text.endswith(" …")
    assert LONG_WORDS.startswith(h.text[:-2])


def test_the_top_passage_is_the_first_hits_heading_and_text(lib, key):
    r = _ranking(lib, {key["a/x.md#Two"]: 0.9, key["b/x.md#"]: 0.5})
    assert r.top_passage() == "X > Two\n\nkafka broker offset"
    assert _ranking(lib, {}).top_passage() == ""


# ---------------------------------------------------------------------- variety
def test_a_notes_second_chunk_gives_way_to_a_comparable_other_note(lib, key):
    """Per note means per (collection, path): a/x.md and b/x.md are two notes."""
    scores = {
        key["a/x.md#One"]: 0.90,
        key["a/x.md#Two"]: 0.89,
        key["a/x.md#Three"]: 0.88,
        key["b/x.md#"]: 0.85,
        key["b/solo.md#"]: 0.20,
    }
    r = _ranking(lib, scores)
    assert _where(r.hits(2, per_note=1)) == ["a/x.md#One", "b/x.md#"]
    assert _where(r.hits(2)) == ["a/x.md#One", "a/x.md#Two"]  # no cap asked: by score
    assert _where(r.hits(3, per_note=2)) == ["a/x.md#One", "a/x.md#Two", "b/x.md#"]
    del scores[key["b/x.md#"]]  # the other note left scores under 0.9 of the second chunk's
    assert _where(_ranking(lib, scores).hits(2, per_note=1)) == ["a/x.md#One", "a/x.md#Two"]


@pytest.mark.parametrize("leg", ["lex", "vec"])
def test_a_chunk_in_either_legs_top_three_is_never_held_back(lib, key, leg):
    scores = {
        key["a/x.md#One"]: 0.90,
        key["a/x.md#Two"]: 0.89,
        key["b/x.md#"]: 0.85,
        key["b/solo.md#"]: 0.84,
        key["b/y.md#"]: 0.83,
    }
    others = [key["b/solo.md#"], key["b/y.md#"], key["b/x.md#"]]

    def legs(order) -> Legs:
        return Legs(**{leg: [(k, 1.0 - i / 10) for i, k in enumerate(order)]})

    third = legs([*others[:2], key["a/x.md#Two"]])  # third in that leg: kept
    assert _where(_ranking(lib, scores, third).hits(2, 1)) == ["a/x.md#One", "a/x.md#Two"]
    fourth = legs([*others, key["a/x.md#Two"]])  # fourth: held back for another note
    assert _where(_ranking(lib, scores, fourth).hits(2, 1)) == ["a/x.md#One", "b/x.md#"]
    # any phrasing's legs count, not only the first's
    also = _ranking(lib, scores, legs(others), third)
    assert _where(also.hits(2, 1)) == ["a/x.md#One", "a/x.md#Two"]


@pytest.mark.parametrize(("other_at", "second"), [(8, "b/x.md#"), (9, "a/long.md#S1")])
def test_the_cap_looks_four_candidates_deep_per_hit(lib, key, other_at, second):
    """hits(2) weighs the best 2 x 4 candidates: another note at rank 8 can take the second
    place from the first note, one at rank 9 is not seen."""
    same = [key[f"a/long.md#S{i}"] for i in range(other_at - 1)]
    scores = {k: 0.9 - i / 1000 for i, k in enumerate(same)}
    scores[key["b/x.md#"]] = 0.85
    got = _where(_ranking(lib, scores).hits(2, per_note=1))
    assert got == ["a/long.md#S0", second]


# ---------------------------------------------------------------------- confidence
def test_confidence_is_none_without_a_hit(lib):
    assert _ranking(lib, {}).confidence() == "none"


def test_the_question_or_its_first_phrasing_in_the_first_hits_language_decides(lib, key):
    """The first hit is Russian. An English question that looks sure does not count once a
    Russian phrasing is given; among phrasings in the hit's language the first decides, not
    the surest; with none in its language, the question does; a likely answer never does."""
    ru = key["b/ru.md#"]
    noise = [((1, 500 + i), 0.5) for i in range(12)]  # no lift: weak vector evidence

    def phrasing(lang: str, word: str, cosine: float, kind: str = "also") -> Legs:
        return Legs(
            lex=[(ru, 5.0)],
            vec=[(ru, cosine), *noise],
            terms=terms(word),
            idf=[1.0],
            query_lang=lang,
            coverage=1.0,
            kind=kind,
        )

    sure_en = phrasing("en", "kafka", 0.95, "question")  # agrees, holds the word: high
    unsure_ru = phrasing("ru", "кошка", 0.5)  # not in the note, weak: none
    sure_ru = phrasing("ru", "kafka", 0.95)
    assert _ranking(lib, {ru: 1.0}, sure_en, unsure_ru).confidence() == "none"
    assert _ranking(lib, {ru: 1.0}, sure_en, unsure_ru, sure_ru).confidence() == "none"
    assert _ranking(lib, {ru: 1.0}, sure_en, sure_ru, unsure_ru).confidence() == "high"
    assert _ranking(lib, {ru: 1.0}, sure_en).confidence() == "high"
    # no phrasing in the hit's language: the question judges, and across languages memo
    # never says `none` (search/confidence.py); a likely answer never vouches
    unsure_en = phrasing("en", "кошка", 0.5, "question")
    assert _ranking(lib, {ru: 1.0}, unsure_en, sure_en).confidence() == "low"
    answer = phrasing("ru", "kafka", 0.95, "answer")
    assert _ranking(lib, {ru: 1.0}, unsure_en, answer).confidence() == "low"


def test_a_search_is_sure_only_of_a_scope_it_saw_whole(lib, key):
    """Issue 50, item 5: the confidence a search returns (`verdict`) is `low` while any chunk
    of its scope waits for its vector or part of the scope was skipped, whatever the first
    hit's evidence says, with or without a hit; a query without a word stays `none`."""
    x = key["b/x.md#"]
    sure = Legs(
        lex=[(x, 5.0)],
        vec=[(x, 0.95)] + [((1, 500 + i), 0.5) for i in range(12)],
        terms=terms("kafka"),
        idf=[1.0],
        query_lang="en",
        coverage=1.0,
    )
    weak = Legs(lex=[(x, 5.0)], vec=[(x, 0.3)], terms=terms("кошка"), idf=[1.0], coverage=1.0)
    for legs, whole in ((sure, "high"), (weak, "none")):
        assert _ranking(lib, {x: 1.0}, legs).verdict() == whole
        assert _ranking(lib, {x: 1.0}, legs).verdict(hits=True, skipped=True) == "low"
        legs.unseen = 0.001  # one chunk in a thousand without its vector
        assert _ranking(lib, {x: 1.0}, legs).verdict() == "low"
        assert _ranking(lib, {x: 1.0}, legs).confidence() == whole  # the evidence, uncapped
        legs.unseen = 0.0
    assert _ranking(lib, {}, Legs()).verdict(hits=False) == "none"
    assert _ranking(lib, {}, Legs(unseen=0.5)).verdict(hits=False) == "low"
    assert _ranking(lib, {}, Legs()).verdict(hits=False, skipped=True) == "low"
    assert _ranking(lib, {x: 1.0}, sure).verdict(hits=False) == "none"  # no hit: no evidence
    wordless = Legs(lex=sure.lex, vec=sure.vec, words=False, unseen=0.5)
    assert _ranking(lib, {x: 1.0}, wordless).verdict(skipped=True) == "none"


# ---------------------------------------------------------------------- per collection
def test_each_collection_comes_in_the_order_of_its_best_with_its_best_few(lib, key):
    scores = {
        key["b/x.md#"]: 0.9,
        key["a/x.md#One"]: 0.8,
        key["b/y.md#"]: 0.7,
        key["b/solo.md#"]: 0.6,
        key["a/x.md#Two"]: 0.5,
        key["a/x.md#Three"]: 0.4,
    }
    r = _ranking(lib, scores)
    assert r.by_collection(2) == [
        (1, [key["b/x.md#"], key["b/y.md#"]]),
        (0, [key["a/x.md#One"], key["a/x.md#Two"]]),
    ]
    assert r.by_collection(1) == [(1, [key["b/x.md#"]]), (0, [key["a/x.md#One"]])]


def test_a_ranking_within_some_collections_keeps_their_candidates_and_scores(lib, key):
    a1, b1, b2 = key["a/x.md#One"], key["b/x.md#"], key["b/y.md#"]
    legs = Legs(lex=[(a1, 3.0), (b2, 2.0), (b1, 1.0)], vec=[(a1, 0.9), (b1, 0.8)])
    r = _ranking(lib, {a1: 0.9, b1: 0.5, b2: 0.4}, legs)
    assert [c.rel for c, _ in r.parts()] == ["a", "b"]
    assert r.warnings == [] and r.scope.target == "."
    b = r.within({1})
    assert [c.rel for c, _ in b.parts()] == ["b"]
    hits = b.hits(3)
    assert _where(hits) == ["b/x.md#", "b/y.md#"] and [h.score for h in hits] == [0.5, 0.4]
    # ranks within what it holds: b's legs without a's chunk
    assert [(h.lex_rank, h.vec_rank) for h in hits] == [(2, 1), (1, None)]
    assert b.by_collection(5) == [(1, [b1, b2])]
    assert r.within({0, 1}).hits(3) == r.hits(3)
    assert r.within(set()).hits(3) == [] and r.within(set()).confidence() == "none"


def test_a_ranking_within_keeps_every_phrasings_legs(lib, key):
    one, two, s0 = key["a/x.md#One"], key["a/x.md#Two"], key["a/long.md#S0"]
    scores = {one: 0.9, two: 0.89, s0: 0.85, key["b/x.md#"]: 0.95}
    first = Legs(lex=[(key["b/x.md#"], 2.0), (s0, 1.0)])
    second = Legs(lex=[(two, 1.0)])  # its top three: never held back
    a = _ranking(lib, scores, first, second).within({0})
    assert _where(a.hits(2, per_note=1)) == ["a/x.md#One", "a/x.md#Two"]
    assert _where(_ranking(lib, scores, first).within({0}).hits(2, 1)) == [
        "a/x.md#One",
        "a/long.md#S0",
    ]


def test_a_ranking_within_reads_each_row_once(lib, key):
    a1, b1 = key["a/x.md#One"], key["b/x.md#"]
    reader = CountingReader(lib.scope("."))
    r = _ranking(lib, {a1: 0.9, b1: 0.5}, reader=reader)
    r.hits(2)
    r.within({1}).hits(1)
    assert sorted(reader.asked) == [a1, b1]


# ---------------------------------------------------------------------- rank()
def test_rank_fuses_every_phrasing_and_reports_the_first_ones_legs(lib):
    scope = lib.scope(".")
    vectors = QueryVectors(None)
    alone = rank(scope, "kafka", "lex", vectors)
    assert {h.path for h in alone.hits(20)} == {"a/x.md", "a/big.md", "b/x.md", "b/y.md", "b/ru.md"}
    both = rank(scope, Words("kafka", also=("nginx",)), "lex", vectors)
    paths = {h.path for h in both.hits(20)}
    assert {"b/solo.md", "a/long.md", "a/x.md"} <= paths
    solo = next(h for h in both.hits(20) if h.path == "b/solo.md")
    assert solo.lex_rank is None  # the ranks shown are the question's own
    assert len(both.phrasings) == 2 and both.legs is both.phrasings[0]
    assert both.legs.lex == alone.legs.lex


def test_rank_keeps_depth_candidates_per_leg_and_applies_the_filter(lib):
    scope = lib.scope(".")
    vectors = QueryVectors(None)
    assert len(rank(scope, "kafka", "lex", vectors, depth=2).ranked) == 2
    tagged = rank(scope, "kafka", "lex", vectors, flt=Filter.make(tags=["ops"]))
    assert [h.path for h in tagged.hits(10)] == ["b/y.md"]


@pytest.mark.parametrize("also", [(), ("nginx",)])
def test_rank_scores_a_one_leg_search_by_that_leg_alone(lib, real_embedder, also):
    """lex and vec rank by their one leg: the first hit scores 1 / (k + 1), whatever weight
    the hybrid fusion would give that leg."""
    scope = lib.scope(".")
    vectors = QueryVectors(real_embedder)
    for mode, other in (("lex", "vec_rank"), ("vec", "lex_rank")):
        hits = rank(scope, Words("kafka consumer", also=also), mode, vectors).hits(3)
        assert hits and all(getattr(h, other) is None for h in hits), mode
        assert hits[0].score == round(1 / (SEARCH_FUSION_K + 1), 6), mode
