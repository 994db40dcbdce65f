"""Routing by evidence (issue 16): a collection ranks by what its notes answer, shown with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memo.config import Settings
from memo.library import Library

from . import genlib

NOTES = {
    # descriptions in English, notes in Russian
    "kitchen": (
        "Cooking notes: recipes and kitchen gear",
        {
            "borscht.md": "# Борщ\n\nСвёклу тушить отдельно с уксусом 20 минут, чтобы цвет "
            "остался ярким. Капусту класть за 10 минут до конца.\n",
            "knives.md": "# Ножи\n\nЯпонские ножи точить на камне 1000/6000, угол 15 градусов.\n",
        },
    ),
    # descriptions in Russian, notes in English
    "garage": (
        "Заметки про машину: обслуживание и ремонт",
        {
            "tyres.md": "# Tyres\n\nSummer tyres go on when the night temperature stays above "
            "7 °C; torque the wheel nuts to 110 Nm.\n",
            "oil.md": "# Oil\n\nChange the engine oil every 10,000 km with 5W-30.\n",
        },
    ),
    # one heterogeneous collection: unrelated articles, described by their titles only
    "reading": (
        "Reading notes: Warsaw; ctenophores; the 1973 oil crisis",
        {
            "warsaw.md": "# Warsaw\n\nThe Palace of Culture and Science was a gift from the "
            "Soviet Union, finished in 1955.\n",
            "ctenophora.md": "# Ctenophora\n\nComb jellies swim with eight rows of cilia "
            "called comb rows; most species are hermaphrodites.\n",
            "oil-crisis.md": "# 1973 oil crisis\n\nOAPEC proclaimed an oil embargo in October "
            "1973; prices quadrupled by March 1974.\n",
        },
    ),
    "network": (
        "Home network: router, VLANs, Wi-Fi",
        {"vlan.md": "# VLAN\n\nGuests get VLAN 30 with client isolation on the access points.\n"},
    ),
}


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory, onnx_embedder):
    root = tmp_path_factory.mktemp("routing") / "notes"
    for name, (description, notes) in NOTES.items():
        genlib.write_meta(root / name, name, description, [])
        for file, text in notes.items():
            (root / name / file).write_text(text, encoding="utf-8")
    library = Library(root, onnx_embedder, Settings(index_dir=root.parent / "idx"))
    library.index()
    yield library
    library.close()


@pytest.mark.parametrize(
    ("question", "home", "note"),
    [
        ("сколько минут тушить свёклу для борща", "kitchen", "kitchen/borscht.md"),
        ("при какой температуре ставить летние шины", "garage", "garage/tyres.md"),
        ("how long to stew beets for borscht", "kitchen", "kitchen/borscht.md"),
        ("how do comb jellies swim", "reading", "reading/ctenophora.md"),
        ("who gave Warsaw its Palace of Culture", "reading", "reading/warsaw.md"),
        ("when did the oil embargo start", "reading", "reading/oil-crisis.md"),
    ],
)
def test_the_question_goes_where_the_answer_is(lib: Library, question, home, note):
    """Descriptions in the other language, a collection of unrelated articles: the route's
    first collection is the one whose note answers, and it comes with that note's line."""
    res = lib.route(question, k=3)
    first = res.collections[0]
    assert first.path == home, [c.path for c in res.collections]
    assert first.evidence and first.evidence[0].path == note
    line = first.evidence[0].line
    assert 1 <= line <= len((lib.root / note).read_text().splitlines())


def test_route_shows_its_evidence_everywhere(lib: Library):
    d = lib.route("engine oil interval", k=2).to_dict()
    hit = d["collections"][0]["evidence"][0]
    assert set(hit) == {"path", "line", "heading", "text"} and hit["path"] == "garage/oil.md"
    json.dumps(d)
    from click.testing import CliRunner

    from memo.cli import cli

    env = {"MEMO_INDEX_DIR": str(lib.settings.index_dir)}  # the indexes the fixture built
    out = CliRunner().invoke(
        cli, ["route", "engine oil interval", "--root", str(lib.root)], env=env
    )
    assert out.exit_code == 0, out.output
    assert "garage/oil.md:3" in out.output  # the text shows the best hit as path:line


def test_a_route_scans_the_registry_once(lib: Library, monkeypatch: pytest.MonkeyPatch):
    """A small library is re-scanned on every registry() call; a route looks its candidates
    up one by one and must read them from its own scan, not walk the folders per candidate."""
    reg = lib.registry
    scans = []
    refresh = reg.refresh
    monkeypatch.setattr(reg, "refresh", lambda *a, **kw: scans.append(1) or refresh(*a, **kw))
    res = lib.route("guest wifi isolation", k=3)
    assert res.collections[0].path == "network" and res.collections[0].evidence
    assert len(scans) == 1, len(scans)


def test_flat_lists_every_collection_and_tree_its_folders(lib: Library):
    flat = lib.route("guest wifi isolation", strategy="flat")
    assert [c.path for c in flat.collections][0] == "network"
    assert {c.path for c in flat.collections} == set(NOTES)
    one = lib.route("guest wifi isolation", k=1, strategy="flat")  # all listed, one with hits
    assert len(one.collections) == len(flat.collections) and one.collections[0].evidence
    assert not any(c.evidence for c in one.collections[1:])
    tree = lib.route("guest wifi isolation", k=2, strategy="tree")
    assert len(tree.collections) == 2 and tree.tree


def test_a_question_no_note_answers_routes_by_description(lib: Library, tmp_path: Path):
    """An empty collection described as the question: nothing to search, the summary routes."""
    genlib.write_meta(lib.root / "astro", "astro", "Telescopes, mounts and star charts", [])
    try:
        assert lib.route("which telescope mount for star charts", k=1).collections[0].path == (
            "astro"
        )
    finally:
        (lib.root / "astro" / "_meta.yaml").unlink()
        (lib.root / "astro").rmdir()
