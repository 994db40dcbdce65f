"""Search answers real questions with path:line, in every mode, for any typed string."""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memo.errors import MemoError, TargetError
from memo.library import Library
from memo.params import QUERY_PATTERN
from memo.requests import MAX_QUERY_CHARS, RequestError

from .conftest import EXAMPLES


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, real_embedder) -> Library:
    """One indexed copy of the example library, shared by the read-only tests below."""
    notes = tmp_path_factory.mktemp("search") / "notes"
    shutil.copytree(EXAMPLES, notes, ignore=shutil.ignore_patterns(".memo"))
    lib = Library(notes, real_embedder)
    lib.index()
    yield lib
    lib.close()


def _top(lib: Library, query: str, mode: str = "hybrid", k: int = 5, target: str = ".") -> list:
    return [(h.path, h.line) for h in lib.search(target, query, k=k, mode=mode).hits]


def test_hit_shape(indexed):
    res = indexed.search(".", "policy based routing", k=3)
    h = res.hits[0]
    assert h.path == "work/networking/pbr.md" and h.collection == "networking"
    assert h.abs_path == str(indexed.root / "work" / "networking" / "pbr.md")
    lines = (indexed.root / h.path).read_text().splitlines()
    assert h.line >= 1 and lines[h.line - 1].strip()  # the line exists and is not blank
    assert h.heading.startswith("PBR (policy based routing)")
    assert 0 < len(h.text) <= 1210 and h.score > 0
    d = res.to_dict()
    assert set(d) >= {"query", "mode", "results", "took_ms", "freshness", "warnings"}


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("802.1Q", "work/networking/vlan.md"),
        ("eth0.42", "work/networking/vlan.md"),
        ("1,700 rule runs", "work/jira/automation.md"),
        ("PBR", "work/networking/pbr.md"),
        ("QinQ 1504", "work/networking/vlan.md"),
    ],
)
@pytest.mark.parametrize("mode", ["lex", "hybrid"])
def test_exact_number_or_abbreviation(indexed, query, path, mode):
    assert _top(indexed, query, mode, k=1)[0][0] == path


@pytest.mark.parametrize("mode", ["vec", "hybrid"])
def test_russian_paraphrase_in_top5(indexed, mode):
    # Different words from the note: "fasttrack ... PBR молча перестаёт работать".
    query = "почему правила маршрутизации по политике вдруг перестали срабатывать"
    assert "work/networking/pbr.md" in [p for p, _ in _top(indexed, query, mode)]


@pytest.mark.parametrize("mode", ["vec", "hybrid"])
def test_russian_question_finds_english_note(indexed, mode):
    query = "как автоматически закрывать заброшенные заявки"
    assert "work/jira/automation.md" in [p for p, _ in _top(indexed, query, mode)]


@pytest.mark.parametrize("mode", ["vec", "hybrid"])
def test_english_question_finds_russian_note(indexed, mode):
    query = "what temperature to bake sourdough bread in a dutch oven"
    assert "home/cooking/sourdough.md" in [p for p, _ in _top(indexed, query, mode, k=3)]


def test_russian_morphology_on_lexical_leg(indexed):
    # The note says "закваску"/"закваски"; the query's form appears nowhere verbatim.
    assert _top(indexed, "закваской", "lex", k=1)[0][0] == "home/cooking/sourdough.md"


def test_targets_file_collection_folder(indexed):
    assert {p for p, _ in _top(indexed, "маршрутом", "lex", target="work/networking/pbr.md")} == {
        "work/networking/pbr.md"
    }
    assert {p.split("/")[1] for p, _ in _top(indexed, "the", "lex", k=20, target="work")} <= {
        "jira",
        "networking",
    }
    assert _top(indexed, "закваска", "hybrid", target="home/cooking")[0][0].startswith("home/")


@pytest.mark.parametrize("target", ["../", "/etc", "work/../../", "nope/missing", "..\\..\\etc"])
def test_targets_outside_or_missing_are_refused(indexed, target):
    with pytest.raises(TargetError):
        indexed.search(target, "x")


def test_a_target_no_file_can_have_is_a_bad_argument(indexed):
    # a NUL byte or a name beyond 255 characters: refused by the request's declared form, as
    # every driver's schema publishes it (requests.PATH_PATTERN)
    for target in ("work/\x00x", "work/" + "n" * 256):
        with pytest.raises(RequestError):
            indexed.search(target, "x")


def test_symlink_out_of_root_is_refused(notes, embedder, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "_meta.yaml").write_text("description: outside\n")
    (notes / "link").symlink_to(outside)
    with pytest.raises(TargetError):
        Library(notes, embedder).search("link", "x")


def test_unknown_mode_is_an_error(indexed):
    with pytest.raises(MemoError):
        indexed.search(".", "x", mode="fuzzy")


HOSTILE = [
    '"',
    '""',
    "'",
    "*",
    "-",
    "-x",
    "NEAR",
    "NEAR(a b)",
    "AND",
    "OR",
    "NOT",
    "a AND",
    "(",
    ")",
    "((a)",
    "a:b",
    "col:val",
    "^x",
    "x*",
    "{a b}",
    "[a]",
    "\\",
    "%",
    "_",
    "😀🔥",
    "\x00",
    "\u200b",
    "   ",
    "",
    "\n\t",
    "a" * 10_000,
    "SELECT * FROM chunks; --",
    'summary ~ "\\"x\\""',
]


@pytest.mark.parametrize("query", HOSTILE)
@pytest.mark.parametrize("mode", ["hybrid", "lex", "vec"])
def test_hostile_queries_never_error(indexed, query, mode):
    if not query.strip():  # issue 42: refused everywhere, saying what to send
        with pytest.raises(RequestError, match="query is empty"):
            indexed.search(".", query, k=5, mode=mode)
        return
    res = indexed.search(".", query, k=5, mode=mode)
    assert res.query == query[:MAX_QUERY_CHARS] and res.mode == mode and len(res.hits) <= 5
    json.dumps(res.to_dict())  # every answer is valid JSON, whatever was asked
    for h in res.hits:  # every hit points at a real line of a real note
        lines = (indexed.root / h.path).read_text().splitlines()
        assert 1 <= h.line <= len(lines) and h.cite
    if len(query) > MAX_QUERY_CHARS:
        assert any("characters long" in w for w in res.warnings)
    if not re.search(r"\w", query):  # no word to look for: the lexical leg finds nothing
        assert mode != "lex" or not res.hits
        assert res.confidence != "high"
    if mode == "vec":  # any non-blank text has a nearest neighbour
        assert res.hits


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=200))
def test_any_text_is_a_valid_lexical_query(indexed, query):
    if not re.search(QUERY_PATTERN, query):
        return  # blank to memo ('\ufeff' too): refused (test_hostile_queries_never_error)
    res = indexed.search(".", query, k=3, mode="lex")
    assert len(res.hits) <= 3


@pytest.mark.edits_notes
def test_ties_break_by_mtime_newer_first(notes, embedder):
    import os

    coll = notes / "work" / "jira"
    for name, t in (("old.md", 1_600_000_000), ("new.md", 1_700_000_000)):
        (coll / name).write_text("# Twin\n\nidentical wombat text\n")
        os.utime(coll / name, (t, t))
    lib = Library(notes, embedder)
    hits = lib.search("work/jira", "wombat", k=2, mode="lex").hits
    assert [h.path for h in hits] == ["work/jira/new.md", "work/jira/old.md"]
    assert hits[0].score == hits[1].score


@pytest.mark.parametrize("query", ["как настроить kafka consumer lag", "sourdough starter"])
def test_the_vector_leg_ranks_like_every_stored_vector_scored(indexed, query):
    """The vector leg (collection/matrix.py: every stored vector in memory, each chunk at its best
    row) gives the ranking and cosines of scoring each stored int8 vector against the int8
    query one by one, and an index is close to what it holds."""
    from memo.collection import matrix as nearest
    from memo.collection.store import VEC_CHUNK, has_windows
    from memo.collection.vectors import dequantize, quantize
    from memo.collection.windows import chunk_of

    qvec = np.asarray(indexed.embedder.embed_query(query), dtype=np.float32)
    q = dequantize(quantize(qvec))
    for coll in indexed.collections():
        store = coll.store()[0]
        (found,) = nearest.nearest(nearest.matrix(store), store, [qvec], 5)
        best: dict[int, float] = {}
        rows = store.conn.execute("SELECT rowid, embedding FROM chunks_vec").fetchall()
        if has_windows(store.conn):
            wins = store.conn.execute("SELECT rowid, embedding FROM windows_vec").fetchall()
            rows += [(chunk_of(r), blob) for r, blob in wins]
        for cid, blob in rows:
            best[cid] = max(best.get(cid, -2.0), float(dequantize(bytes(blob)) @ q))
        every = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
        assert found, coll.rel
        assert [i for i, _ in every] == [i for i, _ in found], coll.rel
        assert [s for _, s in every] == pytest.approx([s for _, s in found], abs=1e-5)
        sql = "SELECT sql FROM sqlite_master WHERE name = 'chunks_vec'"
        declared = store.conn.execute(sql).fetchone()[0]
        assert f"chunk_size={VEC_CHUNK}" in declared and "int8[384]" in declared
        # a vec0 chunk is VEC_CHUNK x 384 int8 (25 KB): a few chunks' worth, not 1.6 MB
        assert coll.status().size_bytes < 600_000, coll.rel


@pytest.mark.edits_notes
def test_a_search_reads_each_index_twice_and_sees_every_change(notes, embedder):
    """The legs read an index once (both legs, every phrasing), the hits' rows once; the
    vectors held in memory follow an edit made between two searches."""
    with Library(notes, embedder) as lib:
        lib.index()
        r = lib.rank(".", "vlan tagging", also=["тегированный интерфейс"])
        r.hits(8, 3)
        r.confidence()
        assert r.reader.reads and max(r.reader.reads.values()) <= 2
        note = notes / "work" / "networking" / "vlan.md"
        with note.open("a", encoding="utf-8") as f:
            f.write("\n## Зеркалирование\n\nSPAN-сессия копирует кадры порта на анализатор.\n")
        hits = lib.search("work", "how to mirror port traffic to an analyzer", k=3).hits
        assert hits[0].heading.endswith("Зеркалирование")


@pytest.mark.parametrize(
    ("query", "want"),
    [
        ("policy based routing (PBR) on MikroTik", {"high"}),
        ("JQL for issues updated last week", {"high"}),
        ("what is the population of Tokyo in 2020", {"none"}),
        ("when was the Eiffel tower built", {"none"}),
        ("Как приготовить борщ", {"none"}),
    ],
)
def test_confidence_says_whether_the_notes_hold_an_answer(indexed, query, want):
    res = indexed.search(".", query, k=5)
    assert res.confidence in want, (query, res.confidence)


def test_a_question_in_another_language_is_answered_with_the_agents_translation(indexed):
    """Across languages e5 places the answer near, not first: a Russian question of the
    English Jira note finds it among the first two (a Russian section's sentence window lies as
    near); with the agent's English phrasing as `also` it is first, and not `none`."""
    query = "как автоматически закрывать заброшенные заявки"
    alone = indexed.search(".", query, k=5)
    assert "work/jira/automation.md" in [h.path for h in alone.hits[:2]]
    res = indexed.search(".", query, k=5, also=("how to close abandoned tickets automatically",))
    assert res.hits[0].path == "work/jira/automation.md"
    assert res.confidence in {"low", "high"}, res.confidence


@pytest.mark.parametrize("query", ["?!", "...", " — ?"])
def test_a_query_without_a_word_is_answered_none(indexed, query):
    """Punctuation asks nothing a note could answer, whatever its embedding lies near."""
    res = indexed.search(".", query, k=5)
    assert res.confidence == "none", (query, [h.path for h in res.hits])
    assert indexed.search(".", "?! PBR", k=5).confidence != "none"


def test_lexical_only_confidence_is_never_high(indexed):
    from memo.search.confidence import confidence

    signals = {"top_share": 1.0, "vec_strength": None, "agree": False, "languages_differ": False}
    assert confidence(signals) == "low"
    assert confidence({**signals, "top_share": 0.0}) == "none"
    res = indexed.search(".", "policy based routing (PBR) on MikroTik", mode="lex")
    assert res.confidence == "low"


class Calls:
    """The real embedder, counting what a search asks of the model."""

    def __init__(self, inner) -> None:
        self.inner, self.calls = inner, []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def embed_query(self, text):
        self.calls.append(("query", [text]))
        return self.inner.embed_query(text)

    def embed_queries(self, texts, passages=()):
        self.calls.append(("queries", list(texts), list(passages)))
        return self.inner.embed_queries(texts, passages)

    def embed_passages(self, texts):
        self.calls.append(("passages", list(texts)))
        return self.inner.embed_passages(texts)


def test_a_search_asks_the_model_once_for_its_words_and_never_again_for_them(indexed):
    """The question, the agent's phrasings and the likely answer (as a passage) go to the
    model in one call, stored nowhere; asked again, the same words are not embedded again."""
    calls = Calls(indexed.embedder)
    with Library(indexed.root, calls, indexed.settings) as lib:
        words = {"also": ["тегирование VLAN", "802.1Q trunk"], "keywords": ["vlan"]}
        got = lib.search(".", "how do I tag a vlan", answer="Тег 802.1Q ставит порт.", **words)
        question = ["how do I tag a vlan", "тегирование VLAN", "802.1Q trunk"]
        assert got.hits and calls.calls == [("queries", question, ["Тег 802.1Q ставит порт."])]
        lib.search(".", "how do I tag a vlan", also=["802.1Q trunk"])
        assert len(calls.calls) == 1
