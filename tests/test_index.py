"""The index follows the notes: incremental, no ghosts, rebuilt when its profile changes."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import apsw
import pytest

from memo import sqlite
from memo.collection import store as dbm
from memo.config import Settings
from memo.library import Library


def _bump_mtime(p: Path) -> None:
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def test_first_index_creates_db_and_second_is_noop(library, notes, embedder, untouched):
    rep = library.index()
    t = rep.totals()
    assert t["new"] == 5 and t["collections"] == 3 and not t["nothing_to_do"]
    answer = rep.to_dict()  # the sums are the answer's own figures, without its lists
    assert t == {k: v for k, v in answer.items() if not isinstance(v, list)}
    assert embedder.passages, "the real model embedded the chunks"
    for coll in library.collections():
        assert coll.index_path.is_file()
    embedder.passages.clear()
    again = library.index().totals()
    assert again["nothing_to_do"] and again["unchanged"] == 5
    assert embedder.passages == []


def test_index_lives_in_collection_dot_memo(library, notes):
    library.index()
    assert (notes / "work" / "jira" / ".memo" / "index.db").is_file()


def test_touch_without_change_reembeds_nothing(library, notes, embedder):
    library.index()
    embedder.passages.clear()
    _bump_mtime(notes / "work" / "jira" / "jql.md")
    t = library.index().totals()
    assert t["touched"] == 1 and t["changed"] == 0
    assert embedder.passages == []
    assert library.index().totals()["nothing_to_do"]


def _codes(library: Library, rel: str) -> dict[str, bytes]:
    """Chunk hash -> the vector's int8 codes as the collection's index stores them."""
    coll = next(c for c in library.collections() if c.rel == rel)
    sql = "SELECT c.hash, v.embedding FROM chunks c JOIN chunks_vec v ON v.rowid = c.id"
    return dict(coll.read(lambda s: s.conn.execute(sql).fetchall())[0])


@pytest.mark.edits_notes
def test_edit_reembeds_only_the_changed_section(library, notes, embedder):
    library.index()
    before = _codes(library, "work/jira")
    embedder.passages.clear()
    note = notes / "work" / "jira" / "automation.md"
    note.write_text(note.read_text() + "\n## Budget\n\nThe quota resets on the 1st.\n")
    t = library.index().totals()
    assert t["changed"] == 1 and t["unchanged"] == 4
    assert len(embedder.passages) == 1 and "quota resets" in embedder.passages[0]
    # the note's unchanged sections keep their vectors: read back, written again, same codes
    after = _codes(library, "work/jira")
    kept = set(before) & set(after)
    assert len(kept) == len(before) and all(after[h] == before[h] for h in kept)
    assert all(len(v) == 384 for v in after.values())  # int8[384], not float32
    hits = library.search("work/jira", "when does the quota reset", k=3).hits
    assert hits[0].path == "work/jira/automation.md" and "quota resets" in hits[0].text


@pytest.mark.edits_notes
def test_delete_and_rename_leave_no_ghosts(library, notes):
    library.index()
    (notes / "work" / "networking" / "vlan.md").unlink()
    (notes / "home" / "cooking" / "sourdough.md").rename(notes / "home" / "cooking" / "bread.md")
    t = library.index().totals()
    assert t["removed"] == 2 and t["new"] == 1
    res = library.search(".", "VLAN 802.1Q trunk", k=8, mode="lex")
    assert all("vlan.md" not in h.path for h in res.hits)
    res = library.search(".", "закваска", k=8)
    paths = {h.path for h in res.hits}
    assert "home/cooking/bread.md" in paths and "home/cooking/sourdough.md" not in paths
    for coll in library.collections():
        conn = dbm.connect(coll.index_path)
        (orphans,) = conn.execute(
            "SELECT count(*) FROM chunks WHERE path NOT IN (SELECT path FROM files)"
        ).fetchone()
        (nvec,) = conn.execute("SELECT count(*) FROM chunks_vec").fetchone()
        (nchunks,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
        assert orphans == 0 and nvec == nchunks
        conn.close()


def test_profile_mismatch_rebuilds(library, notes, embedder):
    library.index()
    coll = next(c for c in library.collections() if c.name == "jira")
    coll.close()
    conn = dbm.connect(coll.index_path)
    profile = sqlite.read_profile(conn)
    profile["chunker"] = "headings-v0"
    conn.execute("UPDATE meta SET value=? WHERE key='profile'", (json.dumps(profile),))
    conn.close()
    embedder.passages.clear()
    rep = library.index("work/jira")
    assert "chunker" in rep.reports[0].rebuilt
    assert rep.totals()["new"] == 2 and embedder.passages


def test_deleting_dot_memo_loses_nothing(library, notes):
    library.index()
    before = library.search(".", "гидратация теста", k=3).hits
    library.close()
    for d in notes.rglob(".memo"):
        shutil.rmtree(d)
    after = library.search(".", "гидратация теста", k=3)
    assert [h.path for h in after.hits] == [h.path for h in before]
    assert any(f.caught_up for f in after.freshness)


@pytest.mark.edits_notes
def test_search_catches_up_an_edit_in_the_same_call(library, notes):
    library.index()
    with open(notes / "work" / "networking" / "vlan.md", "a", encoding="utf-8") as f:
        f.write("\nКодовое слово для проверки: зюзябра.\n")
    res = library.search("work/networking", "зюзябра", k=3, mode="lex")
    assert res.hits and res.hits[0].path == "work/networking/vlan.md"
    fresh = {f.collection: f for f in res.freshness}
    assert fresh["networking"].caught_up == 1 and not fresh["networking"].current


@pytest.mark.edits_notes
def test_not_indexed_files(notes, embedder):
    coll = notes / "work" / "jira"
    (coll / "inbox.md").write_text("# secret draft zanzibar\n")
    (coll / ".hidden").mkdir()
    (coll / ".hidden" / "x.md").write_text("# zanzibar hidden\n")
    (coll / "notes.txt").write_text("zanzibar text file\n")
    (notes / "inbox.md").write_text("# zanzibar root inbox\n")
    lib = Library(notes, embedder)
    lib.index()
    assert lib.search(".", "zanzibar", mode="lex").hits == []


@pytest.mark.edits_notes
def test_nested_collection_owns_its_files(notes, embedder):
    child = notes / "work" / "jira" / "cloud"
    child.mkdir()
    (child / "_meta.yaml").write_text("description: Jira Cloud specifics\n")
    (child / "sso.md").write_text("# SSO\n\nSAML login through Okta, kumquat.\n")
    lib = Library(notes, embedder)
    lib.index()
    jira = next(c for c in lib.collections() if c.name == "jira")
    conn = dbm.connect(jira.index_path)
    paths = {r[0] for r in conn.execute("SELECT path FROM files")}
    conn.close()
    assert paths == {"jql.md", "automation.md"}
    hits = lib.search("work/jira", "kumquat", mode="lex").hits  # the folder covers the child
    assert [(h.collection, h.path) for h in hits] == [("cloud", "work/jira/cloud/sso.md")]


@pytest.mark.edits_notes
def test_broken_meta_names_file_and_field_and_rest_still_indexes(notes, embedder):
    (notes / "work" / "jira" / "_meta.yaml").write_text("name: jira\ntags: [a]\n")
    (notes / "home" / "cooking" / "_meta.yaml").write_text("description: [unclosed\n")
    lib = Library(notes, embedder)
    rep = lib.index()
    assert rep.totals()["collections"] == 1  # networking
    text = "\n".join(rep.errors)
    assert "jira/_meta.yaml" in text and "description" in text
    assert "cooking/_meta.yaml" in text and "YAML" in text


@pytest.mark.edits_notes
def test_hostile_meta_yaml_is_refused_not_executed(notes, embedder):
    (notes / "work" / "jira" / "_meta.yaml").write_text(
        f"description: !!python/object/apply:os.system ['touch {notes.parent}/memo-pwned']\n"
    )
    lib = Library(notes, embedder)
    rep = lib.index()
    assert any("jira/_meta.yaml" in e for e in rep.errors)
    assert not (notes.parent / "memo-pwned").exists()  # in the test's own folder


@pytest.mark.edits_notes
def test_bad_files_are_reported_and_skipped(notes, embedder):
    coll = notes / "work" / "jira"
    (coll / "binary.md").write_bytes(b"\x00\x01\x02PNG" * 100)
    (coll / "latin1.md").write_bytes(
        "# Caf\xe9\n\nna\xefve r\xe9sum\xe9 quokka\n".encode("latin-1")
    )
    (coll / "huge.md").write_text("# big\n\n" + "word " * 3000)
    lib = Library(notes, embedder, Settings(max_file_bytes=10_000))
    rep = lib.index("work/jira")
    warnings = "\n".join(w for r in rep.reports for w in r.warnings)
    assert "binary.md: skipped" in warnings and "huge.md: skipped, too large" in warnings
    assert "latin1.md" in warnings and "UTF-8" in warnings
    assert lib.search("work/jira", "quokka", mode="lex").hits[0].path == "work/jira/latin1.md"
    st = lib.status("work/jira").to_dict()["collections"][0]
    assert {s["path"] for s in st["skipped"]} == {"work/jira/binary.md", "work/jira/huge.md"}


@pytest.mark.edits_notes
def test_a_skip_stores_its_kind_and_an_index_from_before_kinds_is_rebuilt(notes, tmp_path):
    """The kind of a skipped note is a column beside its reason (status splits failures from
    choices by it). An index built before the column existed (schema 1) still answers status,
    and the next sync rebuilds it by the profile rule."""
    coll = notes / "work" / "jira"
    (coll / "binary.md").write_bytes(b"\x00\x01\x02PNG" * 100)
    (coll / "huge.md").write_text("# big\n\n" + "word " * 3000)
    lib = Library(notes, None, Settings(max_file_bytes=10_000, index_dir=tmp_path / "idx"))
    lib.index("work/jira")
    jira = next(c for c in lib.collections() if c.name == "jira")

    def skipped() -> dict[str, str]:
        with dbm.reading(jira.index_path) as conn:
            return dict(conn.execute("SELECT path, skip FROM files WHERE status='skipped'"))

    assert skipped() == {"binary.md": "binary", "huge.md": "too_large"}
    jira.close()
    conn = dbm.connect(jira.index_path)  # what an older memo left: no column, schema 1
    conn.execute("ALTER TABLE files DROP COLUMN skip")
    profile = sqlite.read_profile(conn)
    profile["schema"] = 1
    conn.execute("UPDATE meta SET value=? WHERE key='profile'", (json.dumps(profile),))
    conn.close()
    st = lib.status("work/jira").collections[0]
    assert not st.damaged and not st.current and st.files == 2
    assert {s["path"] for s in st.skipped} == {"work/jira/binary.md", "work/jira/huge.md"}
    rep = lib.index("work/jira")
    assert "schema" in rep.reports[0].rebuilt
    assert skipped() == {"binary.md": "binary", "huge.md": "too_large"}
    lib.close()


@pytest.mark.edits_notes
def test_concurrent_reader_sees_whole_files(library, notes):
    """A reader connection during a write sees the old or the new file, never a mix (WAL)."""
    library.index()
    coll = next(c for c in library.collections() if c.name == "jira")
    reader = apsw.Connection(str(coll.index_path), flags=apsw.SQLITE_OPEN_READONLY)
    reader.execute("BEGIN")
    (n_before,) = reader.execute("SELECT count(*) FROM chunks").fetchone()
    (notes / "work" / "jira" / "jql.md").write_text("# JQL\n\nonly one section now\n")
    library.index("work/jira")
    (n_during,) = reader.execute("SELECT count(*) FROM chunks").fetchone()
    reader.execute("COMMIT")
    (n_after,) = reader.execute("SELECT count(*) FROM chunks").fetchone()
    reader.close()
    assert n_during == n_before and n_after < n_before


def test_index_dir_setting_keeps_notes_folder_clean(notes, embedder, tmp_path, untouched):
    lib = Library(notes, embedder, Settings(index_dir=tmp_path / "idx"))
    lib.index()
    assert not list(notes.rglob(".memo"))
    assert len(list((tmp_path / "idx").glob("*/index.db"))) == 3
    assert lib.search(".", "JQL", mode="lex").hits


def test_sync_timestamps_are_recent(library):
    library.index()
    st = library.status(".")
    for c in st.collections:
        assert c.stale == 0 and c.current
        assert time.time() - c.last_indexed < 600


@pytest.mark.edits_notes
def test_a_process_without_a_model_keeps_the_vectors(library, notes, embedder):
    """MEMO_EMBEDDER=none reads a model's index as it is; what it syncs waits for a model."""
    library.index()
    jira = next(c for c in library.collections() if c.name == "jira")

    def vectors() -> int:
        conn = dbm.connect(jira.index_path)
        try:
            return conn.execute("SELECT count(*) FROM chunks_vec").fetchone()[0]
        finally:
            conn.close()

    before = vectors()
    (notes / "work" / "jira" / "jql.md").write_text("# JQL\n\nlexical wombat edit\n")
    with Library(notes, None) as lexical:
        assert lexical.search("work/jira", "wombat", mode="lex").hits
        assert not any(r.rebuilt for r in lexical.index().reports)
    assert vectors() == before - 3  # only the edited note's old chunks went; the rest stayed
    again = Library(notes, embedder).index()
    # the note is not read again: its chunk waits for the vector stage, which embeds just it
    assert again.totals()["changed"] == 0 and again.totals()["chunks_embedded"] == 1
    assert again.totals()["chunks_pending"] == 0
    assert vectors() == before - 3 + 1


def test_open_indexes_stay_within_the_pool_bound(tmp_path: Path):
    """Every collection shares the library's pool of open indexes: indexing and searching 40
    collections with max_open=4 keeps at most 4 index connections open (each holds three
    descriptors; an unbounded cache ran `memo index` out of them at a few thousand)."""
    from . import genlib

    root = tmp_path / "lib"
    genlib.generate(root, 40, notes=True)

    def open_indexes() -> int:
        return sum(c.filename.endswith("index.db") for c in apsw.connections())

    before = open_indexes()
    with Library(root, None, Settings(index_dir=tmp_path / "idx", max_open=4)) as lib:
        assert len(lib.index().reports) == 40
        assert open_indexes() - before <= 4
        assert lib.search("*", "chess openings", k=5).hits
        assert open_indexes() - before <= 4
    assert open_indexes() == before


@pytest.mark.edits_notes
def test_an_index_is_laid_out_small_and_reads_its_text_back(notes):
    """A new index has memo's page size and incremental vacuum, deflates a chunk's text when
    that is shorter (a one-word chunk stays plain TEXT), and every reader gets the text back as
    written: emoji, combining marks, Cyrillic."""
    from memo.collection.chunker import chunk_note
    from memo.embed.tokens import estimate_tokens

    odd = (
        "# Заметка\n\n"
        + "Строка про кафку и брокеры, 🚀 и e\u0301 посреди. " * 40
        + "\n\n# Short\n\nok\n"
    )
    (notes / "work" / "jira" / "odd.md").write_text(odd, encoding="utf-8")
    with Library(notes, None, Settings()) as lib:
        lib.index()
        (coll,) = [c for c in lib.collections() if c.rel == "work/jira"]
        conn = dbm.connect(coll.index_path, readonly=True)
        try:
            assert conn.execute("PRAGMA page_size").fetchone()[0] == dbm.PAGE_SIZE
            assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental
            rows = conn.execute(
                "SELECT typeof(text), text FROM chunks WHERE path='odd.md' ORDER BY ord"
            ).fetchall()
        finally:
            conn.close()
        want = [c.text for c in chunk_note(odd, estimate_tokens).chunks]
        assert [dbm.unpack_text(t) for _, t in rows] == want
        kinds = {dbm.unpack_text(t): k for k, t in rows}
        assert kinds["ok"] == "text" and "blob" in kinds.values()
        hit = lib.search("work/jira", "кафку брокеры", k=1).hits[0]
        assert hit.path.endswith("odd.md") and "🚀 и e\u0301 посреди" in hit.text


@pytest.mark.edits_notes
def test_a_sync_gives_free_pages_back(notes):
    """Deleting most of a collection leaves its index no larger than what it holds needs: the
    free pages go back to the disk (over an eighth of the file is never left free)."""
    big = notes / "work" / "jira" / "big.md"
    big.write_text(
        "".join(f"# Part {i}\n\nbroker {i} lag partition consumer offset\n\n" for i in range(3000)),
        encoding="utf-8",
    )

    def pages(path: Path) -> tuple[int, int]:
        conn = dbm.connect(path, readonly=True)
        try:
            return tuple(
                conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count")
            )
        finally:
            conn.close()

    with Library(notes, None, Settings()) as lib:
        lib.index()
        (coll,) = [c for c in lib.collections() if c.rel == "work/jira"]
        full, _ = pages(coll.index_path)
        big.unlink()
        lib.index()
        now, free = pages(coll.index_path)
        assert free * dbm.FREE_SHARE <= now
        assert now < full / 4, (now, full)


def test_opening_an_index_writes_nothing(library):
    """Another process's open leaves the file and its WAL as they were: the registry re-reads an
    index's summary whenever their (mtime, size) move (setting auto_vacuum on an existing
    file rewrote its first page)."""
    library.index()
    for coll in library.collections():
        before = sqlite.signature(coll.index_path)  # the library holds it open
        conn = dbm.connect(coll.index_path)
        conn.execute("SELECT count(*) FROM chunks").fetchall()
        assert sqlite.signature(coll.index_path) == before
        conn.close()
