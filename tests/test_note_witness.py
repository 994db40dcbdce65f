"""A note is a witness of what its sections are about (search/fusion.py with_notes): a hybrid
search adds a quarter of each candidate's note's z, the cosine of the note's mean vector. Real
indexes, the real model; the means are recomputed here from the stored vectors, not trusted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memo.collection import matrix as nearest
from memo.collection.vectors import dequantize
from memo.config import Settings
from memo.library import Library
from memo.search.fusion import fuse

from .watch_helpers import make_collection

NOTES = {
    "links.md": "# Internal links\n\nLink to another note with double brackets.\n\n"
    "## Link to a heading\n\nAdd a hash after the note's name to link to one of its headings."
    "\n\n## Link to a block\n\nA caret and a block id link to one paragraph.\n",
    "tags.md": "# Tags\n\nA tag is a word after a hash sign.\n\n## Nested tags\n\n"
    "A slash inside a tag makes a hierarchy of tags.\n",
    "bread.md": "# Bread\n\nBake the loaf in a cast iron pot for forty minutes.\n",
}
QUESTION = "how do I link to a heading of another note"


def _stored(lib: Library) -> dict[str, np.ndarray]:
    """Each note's mean vector, computed from the index's rows by hand."""

    def read(store):
        return store.conn.execute(
            "SELECT c.path, v.embedding FROM chunks c JOIN chunks_vec v ON v.rowid = c.id"
        ).fetchall()

    rows, _ = lib.collections()[0].read(read)
    by: dict[str, list[np.ndarray]] = {}
    for path, blob in rows:
        by.setdefault(path, []).append(dequantize(bytes(blob)).astype(np.float64))
    return {p: (m := np.mean(v, axis=0)) / np.linalg.norm(m) for p, v in by.items()}


def _ids(lib: Library) -> dict[int, str]:
    rows, _ = lib.collections()[0].read(
        lambda store: store.conn.execute("SELECT id, path FROM chunks").fetchall()
    )
    return dict(rows)


@pytest.mark.edits_notes
def test_each_candidates_note_and_the_mean_of_its_chunks_that_have_a_vector(
    tmp_path: Path, embedder
):
    root = tmp_path / "lib"
    folder = make_collection(root / "c", NOTES)
    lib = Library(root, embedder, Settings())
    try:
        lib.index()
        coll = lib.collections()[0]
        ids = _ids(lib)
        (paths, means), _ = coll.read(lambda st: nearest.matrix(st).note_means(list(ids)))
        assert paths == ids
        want = _stored(lib)
        assert set(means) == set(NOTES)
        for path, mean in means.items():
            assert np.linalg.norm(mean) == pytest.approx(1.0)
            assert np.allclose(mean, want[path], atol=1e-6)
        # a new section and a new note, read for their words only: their chunks wait for
        # vectors, the note's mean stays that of its chunks with one, the new note has none
        with (folder / "links.md").open("a") as f:
            f.write("\n## Display text\n\nA pipe after the link changes the text shown.\n")
        (folder / "new.md").write_text("# Fresh\n\nA note nobody embedded yet.\n")
        coll.sync()
        ids = _ids(lib)
        (paths, means), _ = coll.read(lambda st: nearest.matrix(st).note_means(list(ids)))
        assert set(paths.values()) == {*NOTES, "new.md"}
        assert "new.md" not in means
        assert np.allclose(means["links.md"], want["links.md"], atol=1e-6)
        assert coll.read(lambda st: nearest.matrix(st).note_means([]))[0] == ({}, {})
    finally:
        lib.close()


def test_the_note_about_the_question_lifts_its_sections_and_one_leg_searches_no_note(
    tmp_path: Path, embedder
):
    """Against the same legs fused without the note step: every section of the note about
    links scores higher, bread's lower, a note's sections all move the same way, and a search
    of one leg alone ranks as that leg does."""
    root = tmp_path / "lib"
    make_collection(root / "c", NOTES)
    lib = Library(root, embedder, Settings())
    try:
        lib.index()
        ranking = lib.rank(".", QUESTION, mode="hybrid")
        plain = fuse(ranking.legs, "hybrid")
        assert set(ranking.scores) == set(plain)
        ids = _ids(lib)
        up = {ids[key[1]] for key in plain if ranking.scores[key] > plain[key]}
        down = {ids[key[1]] for key in plain if ranking.scores[key] < plain[key]}
        assert "links.md" in up and "bread.md" in down and not up & down
        assert ranking.hits(1)[0].path.endswith("links.md")
        for mode in ("lex", "vec"):
            one = lib.rank(".", QUESTION, mode=mode)
            assert one.scores == fuse(one.legs, mode)
    finally:
        lib.close()
