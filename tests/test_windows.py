"""Sentence windows (collection/windows.py): what a chunk's windows are, that they are stored
with its vector and go with it, and that the vector leg scores a chunk by its best evidence.

Real SQLite files and the real model (conftest's `real_embedder`).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memo.collection import matrix as nearest
from memo.collection import windows as windows_module
from memo.collection.chunker import passage_text
from memo.collection.store import SCHEMA_VERSION, has_windows, unpack_text, window_codes
from memo.collection.vectors import dequantize, quantize
from memo.collection.windows import (
    MAX,
    SIZE,
    SPACING,
    STRIDE,
    chunk_of,
    rowid,
    rowids,
    sentence_spans,
    sentences,
    spacing_of,
    spans,
    windows,
)
from memo.config import Settings
from memo.library import Library

from .watch_helpers import make_collection

FIVE = "One two. Three four! Five six? Seven eight… Nine ten."


def test_sentences_end_at_stops_and_line_ends_and_drop_one_word_lines():
    text = "First one. Second one!\n- a bare\n- item\n}\nThird one? Yes it is…  Fourth, last"
    assert sentences(text) == [
        "First one.",
        "Second one!",
        "- a bare",  # "- item" and "}" hold one word each
        "Third one?",
        "Yes it is…",
        "Fourth, last",
    ]
    assert sentences("}\n{\n") == ["}", "{"]  # nothing longer: the one-word lines are all
    assert sentences("\n\n  \n") == []


def test_a_chunk_of_at_most_size_sentences_has_no_windows():
    assert windows("T", "One two. Three four. Five six.") == []
    assert windows("T", "") == []


def test_windows_run_size_sentences_and_the_last_ends_with_the_chunk():
    got = windows("Note > Part", FIVE)
    assert got == [
        passage_text("Note > Part", "One two. Three four! Five six?"),
        passage_text("Note > Part", "Five six? Seven eight… Nine ten."),
    ]
    six = FIVE + " Eleven twelve."  # the run from the third is too near the first: not made
    assert [w.removeprefix("T\n\n") for w in windows("T", six)] == [
        "One two. Three four! Five six?",
        "Seven eight… Nine ten. Eleven twelve.",  # the last window ends with the chunk
    ]


def prose(lengths: list[int]) -> str:
    """A paragraph of sentences of about these lengths (characters), a space apart."""
    return " ".join(
        f"S{i} " + "x" * max(1, n - len(f"S{i} .")) + "." for i, n in enumerate(lengths)
    )


def firsts(text: str) -> list[int]:
    """The first sentence of each of the chunk's windows."""
    starts = [a for a, _ in sentence_spans(text)]
    return [starts.index(a) for a, _ in spans(text)]


def test_a_window_starts_every_stride_sentences_once_spacing_characters_lie_behind():
    # prose of long sentences keeps a window every STRIDE sentences, as schema 7 made them
    assert firsts(prose([120] * 9)) == [0, 2, 4, 6]
    # a list of short items: a window when 200 characters lie behind the last one's start
    items = "\n".join(f"- item number {i:02}" for i in range(30))  # 18 characters a line
    assert firsts(items) == [0, 12, 24, 27]
    assert firsts(prose([20] * 9)) == [0, 6]  # short sentences: the first and the last
    assert windows("T", "\n".join(f"- item {i} here" for i in range(9))) == [
        passage_text("T", "- item 0 here - item 1 here - item 2 here"),
        passage_text("T", "- item 6 here - item 7 here - item 8 here"),
    ]
    # the windows schemas 7 and 8 made, for a rebuild's salvage: every STRIDE-th run
    assert [len(windows("T", items, spacing_of(s))) for s in (7, 8, 9)] == [15, 15, 4]
    assert spacing_of(SCHEMA_VERSION) == windows_module.SPACING  # today's index: today's rule
    # a run exactly SPACING characters after the last one kept is kept (sentences of 99
    # characters a space apart: the third starts at 200)
    assert windows_module.SPACING == 200 and firsts(prose([99] * 9)) == [0, 2, 4, 6]
    assert firsts(prose([98] * 9)) == [0, 4, 6]  # the third at 198: too near, the fifth kept


@given(st.lists(st.integers(min_value=5, max_value=400), max_size=600))
def test_every_window_is_size_sentences_spaced_as_the_rule_says(lengths):
    text = prose(lengths)
    at = [a for a, _ in sentence_spans(text)]
    got, n = firsts(text), len(at)
    assert n == len(lengths)
    if n <= SIZE:
        assert got == [] == windows("", text)
        return
    assert len(got) == len(windows("", text)) <= MAX
    assert got[0] == 0 and all(a % STRIDE == 0 for a in got[:-1])
    if len(got) < MAX:
        assert got[-1] == n - SIZE  # the last ends with the chunk
    kept = got[:-1] if got[-1] == n - SIZE else got
    for j, first in enumerate(kept):
        assert j == 0 or at[first] - at[kept[j - 1]] >= SPACING
        if j + 1 == len(kept) and len(got) == MAX:
            break  # cut at MAX: the runs after it are not made at all
        then = kept[j + 1] if j + 1 < len(kept) else n - SIZE
        # no run between two kept ones lies SPACING past the first: it would have been kept
        assert all(at[i] - at[first] < SPACING for i in range(first + STRIDE, then, STRIDE))
    # schema 7's rule: every STRIDE-th run, so every sentence in a window
    old = len(windows("", text, spacing_of(7)))
    assert old == min(MAX, (n - SIZE) // STRIDE + 1 + ((n - SIZE) % STRIDE != 0)) >= len(got)


def test_a_window_rowid_names_its_chunk():
    assert [chunk_of(rowid(7, k)) for k in range(MAX)] == [7] * MAX
    assert rowids(3, 2) == [rowid(3, 0), rowid(3, 1)] and rowids(3, 0) == []
    assert rowid(8, 0) == rowid(7, MAX) + 1  # no two chunks share a rowid


LONG = (
    "# Router\n\n## Maintenance\n\n"
    "The router sits in the hall cupboard beside the fuse box. Its lights blink green when the "
    "line is up. The admin password is on a sticker under it. Firmware updates come out every "
    "spring and take ten minutes. To reboot it, pull the power cord and wait thirty seconds "
    "before plugging it back in. The guest network is called Visitors.\n\n"
    "## Short\n\nA short section.\n"
)


def window_rows(lib: Library) -> tuple[dict[int, int], set[int]]:
    """(chunk id -> its wins, every rowid in windows_vec) of the library's one collection."""
    (coll,) = lib.collections()

    def read(store):
        wins = dict(store.conn.execute("SELECT id, wins FROM chunks").fetchall())
        if not has_windows(store.conn):
            return wins, set()
        rows = {r for (r,) in store.conn.execute("SELECT rowid FROM windows_vec")}
        return wins, rows

    return coll.read(read)[0]


def test_a_chunks_windows_are_stored_with_its_vector_and_leave_with_it(tmp_path, real_embedder):
    root = tmp_path / "lib"
    make_collection(root / "c")
    (root / "c" / "router.md").write_text(LONG)
    (root / "c" / "other.md").write_text("# Other\n\nOne line only.\n")
    (root / "c" / "modem.md").write_text(LONG.replace("router", "modem").replace("Router", "Modem"))
    lib = Library(root, real_embedder, Settings())
    lib.index()
    wins, rows = window_rows(lib)
    assert sum(wins.values()) > 0
    assert rows == {r for cid, n in wins.items() for r in rowids(cid, n)}
    # the stored windows are the chunk's windows, embedded as the model reads them
    (coll,) = lib.collections()

    def chunks_and_codes(store):
        out = []
        for cid, h, t, n in store.conn.execute(
            "SELECT id, heading, text, wins FROM chunks WHERE wins > 0 ORDER BY id"
        ).fetchall():
            ids = ",".join(str(r) for r in rowids(cid, n))
            sql = f"SELECT rowid, embedding FROM windows_vec WHERE rowid IN ({ids})"
            got = dict(store.conn.execute(sql))
            out.append((h, unpack_text(t), [got[r] for r in rowids(cid, n)]))
        return out

    stored = coll.read(chunks_and_codes)[0]
    assert len(stored) == 2  # two long sections, embedded in one slice: each gets its own
    for h, t, codes in stored:
        want = quantize(real_embedder.embed_passages(windows(h, t)))
        assert [bytes(c) for c in codes] == [w.tobytes() for w in want], h
    # an edit of the long section replaces its windows; deleting the note removes them all
    (root / "c" / "router.md").write_text(LONG.replace("Visitors", "Guests. It has no password"))
    lib.index()
    wins, rows = window_rows(lib)
    assert rows == {r for cid, n in wins.items() for r in rowids(cid, n)}
    (root / "c" / "router.md").unlink()
    lib.index()
    wins, rows = window_rows(lib)
    assert rows == {r for cid, n in wins.items() for r in rowids(cid, n)}  # modem's alone
    (root / "c" / "modem.md").unlink()
    lib.index()
    wins, rows = window_rows(lib)
    assert rows == set() and set(wins.values()) == {0}


def test_an_unchanged_chunk_keeps_its_windows_without_the_model(tmp_path, embedder):
    """A note edited elsewhere: its long section's vector and windows are reused from the
    index itself (no embedding cache here), not embedded again."""
    root = tmp_path / "lib"
    make_collection(root / "c")
    (root / "c" / "router.md").write_text(LONG)
    lib = Library(root, embedder, Settings(embed_cache_mb=0))
    lib.index()
    before = window_rows(lib)[1]
    embedder.passages.clear()
    (root / "c" / "router.md").write_text(LONG.replace("A short section.", "A changed one."))
    lib.index()
    assert embedder.passages == ["Router > Short\n\nA changed one."]
    wins, rows = window_rows(lib)
    assert rows == before  # the reused chunk's windows, counted on its row as before
    assert rows == {r for cid, n in wins.items() for r in rowids(cid, n)}
    (root / "c" / "router.md").write_text(LONG.replace("A short section.", "Changed again."))
    lib.index()  # reused twice: its windows still come with it, not the model
    assert embedder.passages[1:] == ["Router > Short\n\nChanged again."]


@pytest.mark.parametrize("query", ["how long should I wait before plugging the router back in"])
def test_the_vector_leg_scores_a_chunk_by_its_best_window_filtered_or_not(
    tmp_path, real_embedder, query
):
    root = tmp_path / "lib"
    make_collection(root / "c")
    (root / "c" / "router.md").write_text(LONG)
    (root / "c" / "other.md").write_text("# Other\n\nOne line only.\n")
    lib = Library(root, real_embedder, Settings())
    lib.index()
    (coll,) = lib.collections()
    q = np.asarray(real_embedder.embed_query(query), dtype=np.float32)
    qq = dequantize(quantize(q))

    def legs(store):
        rows = store.conn.execute("SELECT id, heading, text FROM chunks").fetchall()
        held = nearest.matrix(store)
        (every,) = nearest.nearest(held, store, [q], 10)
        (narrowed,) = nearest.nearest(held, store, [q], 10, prefix="router.md")
        return rows, every, narrowed

    rows, every, narrowed = coll.read(legs)[0]
    want = {}
    for cid, h, t in rows:
        passages = [passage_text(h, unpack_text(t)), *windows(h, unpack_text(t))]
        vecs = dequantize(quantize(real_embedder.embed_passages(passages)))
        want[cid] = float(np.max(vecs @ qq))
    assert dict(every) == pytest.approx(want, abs=1e-5)
    long_id = next(cid for cid, h, _ in rows if h.endswith("Maintenance"))
    own = {
        cid: float(dequantize(bytes(blob)) @ qq)
        for cid, blob in coll.read(
            lambda s: s.conn.execute("SELECT rowid, embedding FROM chunks_vec").fetchall()
        )[0]
    }
    assert want[long_id] > own[long_id]  # its answering window scores above the chunk itself
    assert dict(narrowed) == pytest.approx({c: s for c, s in want.items() if c in dict(narrowed)})
    assert {c for c, _ in narrowed} == {cid for cid, h, _ in rows if h.startswith("Router")}


def test_a_collection_of_short_notes_has_no_windows_table_until_a_long_one_comes(
    tmp_path, real_embedder
):
    """windows_vec is made with the first window: short notes pay no empty vec0 table."""
    root = tmp_path / "lib"
    make_collection(root / "c")
    (root / "c" / "other.md").write_text("# Other\n\nOne line only. And a second one.\n")
    lib = Library(root, real_embedder, Settings())
    lib.index()
    (coll,) = lib.collections()
    assert not coll.read(lambda s: has_windows(s.conn))[0]
    q = np.asarray(real_embedder.embed_query("one line"), dtype=np.float32)
    hits = coll.read(lambda s: nearest.nearest(nearest.matrix(s), s, [q], 5)[0])[0]
    assert [c for c, _ in hits] and len(hits) == 1  # the leg works without the table
    (root / "c" / "router.md").write_text(LONG)
    lib.index()
    assert coll.read(lambda s: has_windows(s.conn))[0]
    wins, rows = window_rows(lib)
    assert rows == {r for cid, n in wins.items() for r in rowids(cid, n)} != set()


SHAPES = (
    "# Shapes\n\n## Prose\n\n"
    + " ".join(
        f"The {w} paragraph of this section explains one more step of the backup routine, "
        "with the reasons behind it and what to check afterwards."
        for w in "first second third fourth fifth sixth seventh eighth ninth".split()
    )
    + "\n\n## List\n\n"
    + "\n".join(f"- pack item {i} today" for i in range(12))
    + "\n\n## Table\n\n| key | what it does |\n|---|---|\n"
    + "\n".join(f"| Ctrl+{c} | opens pane {c} |" for c in "ABCDEFGHIJ")
    + "\n\n## Code\n\n```python\n"
    + "\n".join(f"value_{i} = compute({i}, flag=True)" for i in range(14))
    + "\n```\n\n## Short\n\nOne short section. It has two sentences.\n"
)


def vectors_per_chunk(lib: Library) -> dict[str, int]:
    """Each chunk's vectors in the index (its own and its windows'), by its heading."""
    (coll,) = lib.collections()

    def read(store):
        wins = set()
        if has_windows(store.conn):
            wins = {r for (r,) in store.conn.execute("SELECT rowid FROM windows_vec")}
        own = {r for (r,) in store.conn.execute("SELECT rowid FROM chunks_vec")}
        rows = store.conn.execute("SELECT id, heading FROM chunks").fetchall()
        return {h: (cid in own) + sum(chunk_of(r) == cid for r in wins) for cid, h in rows}

    return coll.read(read)[0]


def test_lists_tables_and_code_get_fewer_windows_than_prose(tmp_path, real_embedder, monkeypatch):
    """Vectors a chunk, on a note of every shape: prose keeps a window every two sentences;
    a list, a table and a code block of short lines, which schema 7 windowed as densely, keep
    one every 200 characters and the last: 3.2 vectors a chunk instead of 5.4."""
    root = tmp_path / "lib"
    make_collection(root / "c")
    (root / "c" / "shapes.md").write_text(SHAPES)
    lib = Library(root, real_embedder, Settings())
    lib.index()
    got = vectors_per_chunk(lib)
    assert got == {
        "Shapes > Prose": 5,
        "Shapes > List": 3,
        "Shapes > Table": 3,
        "Shapes > Code": 4,
        "Shapes > Short": 1,
    }
    assert sum(got.values()) / len(got) == 3.2
    monkeypatch.setattr(windows_module, "SPACING", 0)  # schema 7's rule: every run kept
    lib.index(full=True)
    old = vectors_per_chunk(lib)
    assert old == {**got, "Shapes > List": 7, "Shapes > Table": 6, "Shapes > Code": 8}
    assert sum(old.values()) / len(old) == 5.4


def test_a_rebuild_of_a_schema_7_index_embeds_no_window_again(tmp_path, real_embedder, monkeypatch):
    """Schema 9 keeps a subset of schema 7's (and 8's) windows: the rebuild hands the old
    index's window vectors to the embedding cache under the texts schema 7 gave them, so it
    asks the model for none, and every window keeps the vector of its own text."""
    from memo.collection import site, store
    from memo.embed.cache import EmbeddingCache
    from memo.embed.caching import CachingEmbedder

    from .test_embed_cache import Model

    root = tmp_path / "lib"
    make_collection(root / "c")
    (root / "c" / "shapes.md").write_text(SHAPES)
    with monkeypatch.context() as m:  # an index schema 7 made, with no embedding cache
        m.setattr(store, "SCHEMA_VERSION", 7)
        m.setattr(site, "SCHEMA_VERSION", 7)
        m.setattr(windows_module, "SPACING", 0)
        Library(root, real_embedder, Settings(embed_cache_mb=0)).index()
    model = Model(real_embedder)
    cache = EmbeddingCache(tmp_path / "xdg" / "vectors.db", 64 * 2**20)
    lib = Library(root, CachingEmbedder(model, cache), Settings())
    assert lib.index().to_dict()["rebuilt"] == 1
    (coll,) = lib.collections()

    def held(store):
        rows = store.conn.execute("SELECT id, heading, text, wins FROM chunks").fetchall()
        return [(h, unpack_text(t), window_codes(store.conn, cid, n)) for cid, h, t, n in rows]

    chunks = coll.read(held)[0]
    texts = {w for h, t, _ in chunks for w in windows(h, t)}
    assert texts and not texts & set(model.asked), "a window was embedded again"
    for h, t, codes in chunks:
        want = quantize(real_embedder.embed_passages(windows(h, t))) if windows(h, t) else []
        assert [bytes(c) for c in codes] == [w.tobytes() for w in want], h
    cache.close()
