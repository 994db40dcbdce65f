"""BM25 over many collections as if they were one (search/bm25.py), as its caller (the
lexical leg, search/legs.py) meets it: which rows come back, in which order, under whose
collection (issue 32: pinned, not restated). Postings as collection/reads.py reads them from
FTS5: chunk ids, term positions, counts and lengths as SQLite's integers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memo.search.bm25 import Corpus, Postings


def test_depth_keeps_the_best_rows_and_no_more():
    corpus = Corpus(["rare", "common"])
    corpus.add(rows=10, tokens=100, df={"rare": 1, "common": 6})
    # chunk 5 holds both terms, chunk 7 the rare one, chunk 3 the common one
    share = Postings(docs=[3, 5, 5, 7], terms=[1, 0, 1, 0], tf=[1, 1, 1, 1], length=[10] * 4)
    full = corpus.best([share], 10)
    assert [key for key, _ in full] == [(0, 5), (0, 7), (0, 3)]
    assert corpus.best([share], 1) == full[:1]
    assert corpus.best([share], 0) == []


def test_a_corpus_that_counted_no_rows_scores_nothing():
    # no statistics (no collection's share added): no average length to score with, no hit
    share = Postings(docs=[1], terms=[0], tf=[1], length=[5])
    assert Corpus(["a"]).best([share], 5) == []


def test_a_hit_keeps_its_collection_and_chunk_id_exactly_however_large_the_id():
    # chunk ids are SQLite rowids (64-bit): a big one in the second collection stays its own
    big = 2**61
    corpus = Corpus(["a"])
    corpus.add(rows=10, tokens=100, df={"a": 1})
    corpus.add(rows=10, tokens=100, df={"a": 1})
    first = Postings(docs=[1], terms=[0], tf=[1], length=[5])
    second = Postings(docs=[big], terms=[0], tf=[2], length=[5])
    assert [key for key, _ in corpus.best([first, second], 5)] == [(1, big), (0, 1)]


ROW = st.tuples(
    st.integers(1, 40),  # the row's length in tokens
    st.dictionaries(st.integers(0, 2), st.integers(1, 4), min_size=1),  # term -> count
    st.integers(0, 3),  # the collection it goes to when split
)


@settings(max_examples=100, deadline=None)
@given(st.lists(ROW, min_size=1, max_size=30), st.integers(0, 20))
def test_rows_split_among_collections_score_as_in_one(rows, others):
    """The DFS rule: each collection's share added up, its rows score as they would in one
    collection holding every row (`others` rows hold no query term, in collection 0)."""
    terms = ["a", "b", "c"]

    def share(rows: list[tuple[int, dict[int, int], int]]) -> tuple[int, int, dict, Postings]:
        docs, at, tf, length = [], [], [], []
        for doc, (n, counts, _) in rows:
            for term, count in counts.items():
                docs.append(doc)
                at.append(term)
                tf.append(count)
                length.append(n)
        df = {terms[t]: sum(1 for _, (_, c, _) in rows if t in c) for t in range(3)}
        tokens = sum(n for _, (n, _, _) in rows)
        return len(rows), tokens, df, Postings(docs, at, tf, length)

    numbered = list(enumerate(rows, start=1))
    one = Corpus(terms)
    n, tokens, df, postings = share(numbered)
    one.add(n + others, tokens + 7 * others, df)
    alone = {doc: x for (_, doc), x in one.best([postings], 10**6)}

    split, shares = Corpus(terms), []
    for c in range(4):
        n, tokens, df, postings = share([r for r in numbered if r[1][2] == c])
        extra = others if c == 0 else 0
        split.add(n + extra, tokens + 7 * extra, df)
        shares.append(postings)
    got = split.best(shares, 10**6)
    assert [x for _, x in got] == sorted((x for _, x in got), reverse=True)  # best first
    assert {doc: x for (_, doc), x in got} == pytest.approx(alone, rel=1e-12)
    assert {key for key, _ in got} == {(r[2], doc) for doc, r in numbered}
