"""Many indexes rank like one: the lexical leg over N collections scores with the statistics of
all of them, so it returns what the same notes in one collection would (issue 13)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import apsw
import pytest

from memo.collection import reads
from memo.collection.lexical import query_terms
from memo.config import Settings
from memo.library import Library

WORDS_EN = (
    "network router switch packet latency throughput cluster node replica shard queue topic "
    "consumer producer offset partition broker schema migration index vacuum checkpoint"
).split()
WORDS_RU = (
    "сеть маршрутизатор коммутатор пакет задержка кластер узел реплика очередь тема потребитель "
    "смещение раздел брокер схема миграция индекс очистка журнал резервный"
).split()
QUERIES = [
    "kafka consumer lag",  # kafka: once in the small collection, everywhere in the big one
    "очередь kafka смещение",
    "replica shard checkpoint",
    "маршрутизатор пакет задержка",
    "vacuum index migration schema",
    "kafka",
]


def _note(rng: random.Random, words: tuple[str, ...] | list[str], extra: str = "") -> str:
    sections = []
    for s in range(rng.randint(1, 3)):
        body = " ".join(rng.choice(words) for _ in range(rng.randint(8, 60)))
        sections.append(f"## Part {s}\n\n{body} {extra}".strip())
    return "# Note\n\n" + "\n\n".join(sections) + "\n"


def make_library(root: Path) -> None:
    """Five collections of very different sizes and languages, two nested levels."""
    rng = random.Random(13)
    plan = [
        ("small", WORDS_EN, 3, {0: "kafka"}),  # kafka is rare here ...
        ("big", WORDS_EN, 40, {i: "kafka kafka" for i in range(0, 40, 2)}),  # ... common here
        ("ru/ops", WORDS_RU, 25, {3: "kafka"}),
        ("ru/db", WORDS_RU, 8, {}),
        ("mixed/deep/x", WORDS_EN + WORDS_RU, 12, {5: "kafka lag"}),
    ]
    for rel, words, n, extra in plan:
        folder = root / rel
        folder.mkdir(parents=True)
        (folder / "_meta.yaml").write_text(f"description: {rel} notes\n")
        for i in range(n):
            (folder / f"n{i:02}.md").write_text(_note(rng, words, extra.get(i, "")))


def merged_copy(src: Path, dst: Path) -> None:
    """The same notes with one `_meta.yaml` at the root: one collection holding everything."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".memo", "_meta.yaml"))
    (dst / "_meta.yaml").write_text("description: everything\n")


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("ranking")
    make_library(base / "split")
    merged_copy(base / "split", base / "merged")
    out = []
    for name in ("split", "merged"):
        lib = Library(base / name, None, Settings(index_dir=base / f"idx-{name}"))
        lib.index()
        out.append(lib)
    assert len(out[0].collections()) == 5 and len(out[1].collections()) == 1
    yield out
    for lib in out:
        lib.close()


def _leg(lib: Library, query: str) -> list[tuple[str, int, float]]:
    """The lexical leg's candidates as (path, line, BM25 score), best first."""
    r = lib.rank(".", query, mode="lex", depth=1000)
    scope, legs = r.scope, r.legs
    rows = {}
    for ci in {ci for (ci, _), _ in legs.lex}:
        coll = scope.parts[ci][0]
        ids = [cid for (c, cid), _ in legs.lex if c == ci]
        for cid, row in coll.read(lambda s, ids=ids: reads.chunk_rows(s, ids))[0].items():
            rows[(ci, cid)] = (coll.root_path(row.path), row.line)
    return [(*rows[key], score) for key, score in legs.lex]


@pytest.mark.parametrize("query", QUERIES)
def test_lexical_leg_over_many_collections_equals_one_collection(libs, query):
    split, merged = (_leg(lib, query) for lib in libs)
    assert split and len(split) == len(merged)
    # Same chunks, same scores (to 1e-6), same order up to exact ties.
    key = lambda r: (-round(r[2], 6), r[0], r[1])  # noqa: E731
    for a, b in zip(sorted(split, key=key), sorted(merged, key=key), strict=True):
        assert a[:2] == b[:2] and a[2] == pytest.approx(b[2], abs=1e-6)
    assert [round(s, 6) for *_, s in split] == [round(s, 6) for *_, s in merged]


@pytest.mark.parametrize("query", QUERIES)
def test_lex_search_over_many_collections_equals_one_collection(libs, query):
    split, merged = (
        [(h.path, h.line, h.score) for h in lib.search(".", query, k=20, mode="lex").hits]
        for lib in libs
    )
    key = lambda r: (-r[2], r[0], r[1])  # noqa: E731
    assert sorted(split, key=key) == sorted(merged, key=key)


def test_one_collection_scores_equal_fts5s_own_bm25(libs):
    """Over one collection the statistics are its own: the scores are FTS5's bm25()."""
    merged = libs[1]
    coll = merged.collections()[0]
    for query in QUERIES:
        mine = {(p, ln): s for p, ln, s in _leg(merged, query)}
        store = coll.store()[0]
        rows = store.conn.execute(
            "SELECT c.path, c.line, -bm25(chunks_fts) FROM chunks_fts JOIN chunks c"
            " ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ?",
            (_any_stem(query),),
        ).fetchall()
        assert len(rows) == len(mine)
        for path, line, score in rows:
            assert mine[(path, line)] == pytest.approx(score, abs=1e-6)


def _any_stem(query: str) -> str:
    """An FTS5 MATCH of the chunks holding any of the question's stems (what the leg reads)."""
    return " OR ".join(f'"{t}"' for t in query_terms(query))


def _local_ranking(lib: Library, query: str) -> list[tuple[str, int]]:
    """What the leg gave before: each collection's own FTS5 bm25(), sorted together."""
    out = []
    for coll in lib.collections():
        rows = coll.store()[0].conn.execute(
            "SELECT c.path, c.line, -bm25(chunks_fts) FROM chunks_fts JOIN chunks c"
            " ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ?",
            (_any_stem(query),),
        )
        out += [(coll.root_path(p), ln, s) for p, ln, s in rows]
    return [(p, ln) for p, ln, _ in sorted(out, key=lambda r: -r[2])]


def test_per_collection_statistics_would_rank_differently(libs):
    """The bias the global statistics remove: sorting each collection's own bm25() together
    orders this library unlike one index of the same notes ('kafka' is rare in some
    collections and common in others)."""
    split, merged = libs
    differs = 0
    for query in QUERIES:
        one_index = [(p, ln) for p, ln, _ in _leg(merged, query)][:10]
        differs += _local_ranking(split, query)[:10] != one_index
    assert differs >= 2, differs


@pytest.mark.parametrize("narrow", ["big", "ru", "mixed/deep/x/n05.md"])
def test_narrowed_search_uses_the_statistics_of_the_collections_it_touches(libs, narrow):
    """A prefix or a note inside a collection: that collection's whole statistics, filtered
    candidates. So `merged` narrowed to a folder scores like `split` on that folder only when
    the folder is a whole collection (equal statistics), and every hit lies under it."""
    split, merged = libs
    hits = split.search(narrow, "kafka lag", k=10, mode="lex").hits
    assert hits and all(h.path.startswith(narrow.split("/n")[0]) for h in hits)
    if narrow == "big":  # a whole collection: its own statistics, the same as searching it
        r = split.rank("big", "kafka lag", mode="lex", depth=1000)
        scope, legs = r.scope, r.legs
        coll = scope.parts[0][0]
        own = (
            coll.store()[0]
            .conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'kafka OR lag'")
            .fetchone()[0]
        )
        assert len(legs.lex) == own


def test_statistics_stay_exact_after_deletes_and_edits(tmp_path):
    """FTS5 keeps the row and token counts the scores use in its own records; they follow
    deletes and edits in the same transaction (no stats table to keep in step)."""
    root = tmp_path / "lib"
    make_library(root)
    lib = Library(root, None, Settings(index_dir=tmp_path / "idx"))
    lib.index()
    for i in range(0, 40, 3):
        (root / "big" / f"n{i:02}.md").unlink()
    (root / "big" / "n01.md").write_text("# Edited\n\nkafka kafka kafka lag\n")
    lib.index()
    coll = next(c for c in lib.collections() if c.rel == "big")
    store = coll.store()[0]
    rows, tokens, df, _ = reads.lex_share(store, ["kafka", "lag"])
    conn = store.conn
    assert rows == conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert rows == conn.execute("SELECT count(*) FROM chunks_fts_docsize").fetchone()[0]
    # every token of every row is one instance in fts5vocab: their count is the token total
    assert tokens == conn.execute("SELECT count(*) FROM temp.chunks_inst").fetchone()[0]
    for term, n in df.items():
        (want,) = conn.execute(
            "SELECT count(DISTINCT doc) FROM temp.chunks_inst WHERE term = ?", (term,)
        ).fetchone()
        assert n == want
    lib.close()
    with pytest.raises(apsw.SQLError):  # the instance view is per connection, never stored
        c2 = apsw.Connection(str(coll.index_path))
        c2.execute("SELECT * FROM chunks_inst LIMIT 1")


def test_row_lengths_decode_alike_for_few_and_many_rows():
    """docsize records start with the row's token count as a varint (1-3 bytes here); the
    Python path (a few rows) and the numpy path (many) read the same numbers."""

    def varint(n: int) -> bytes:
        out = [n & 0x7F]
        n >>= 7
        while n:
            out.append(0x80 | (n & 0x7F))
            n >>= 7
        return bytes(reversed(out)) + b"\x05"  # a second varint follows, as in FTS5's records

    rng = random.Random(3)
    want = [rng.choice([0, 1, 127, 128, 300, 16383, 16384, 2**21 - 1]) for _ in range(100)]
    blobs = tuple(varint(n) for n in want)
    assert reads.row_lengths(blobs) == want  # numpy: more than 32 rows
    assert reads.row_lengths(blobs[:5]) == want[:5]  # Python
    assert reads.row_lengths(()) == []


def test_scoring_every_collection_at_once_equals_scoring_each_apart():
    """Corpus.best scores all collections' postings in one pass: the same rows, scores and
    order (ties by collection, then row) as FTS5's formula applied row by row."""
    import numpy as np

    from memo.search.bm25 import Corpus, Postings

    rng = np.random.default_rng(5)
    corpus = Corpus(["a", "b", "c"])
    shares = []
    for i in range(40):
        n = int(rng.integers(0, 12))
        docs = rng.integers(1, 30, n)
        shares.append(
            Postings(docs, rng.integers(0, 3, n), rng.integers(1, 4, n) * 1.0, docs * 2.0 + 5)
        )
        corpus.add(100 + i, 900 + 10 * i, {"a": 7, "b": i % 5, "c": 40})
    together = corpus.best(shares, 10**6)
    idf, avgdl = corpus.idf(), corpus.tokens / corpus.rows
    apart = []
    for i, p in enumerate(shares):  # FTS5's formula, row by row, one collection at a time
        rows: dict[int, float] = {}
        for doc, term, tf, length in zip(p.docs, p.terms, p.tf, p.length, strict=True):
            part = idf[term] * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avgdl))
            rows[int(doc)] = rows.get(int(doc), 0.0) + part
        apart += sorted(((i, d), x) for d, x in rows.items())
    apart.sort(key=lambda x: -x[1])
    assert [k for k, _ in together] == [k for k, _ in apart]
    assert np.allclose([x for _, x in together], [x for _, x in apart], rtol=0, atol=1e-12)
    assert corpus.best(shares, 7) == together[:7]
    assert corpus.best([Postings.empty()] * 3, 5) == []
