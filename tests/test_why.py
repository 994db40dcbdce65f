"""Reasons (issue 45 item 3): `explain` on each hit of a search, and `memo why NOTE QUERY`, on
real indexes of the example library: each says what the ranking did, checked against the
ranking itself, and a note that is not found gets the reason memo can check."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memo.config import Settings
from memo.library import Library

from .conftest import EXAMPLES

QUESTION = "how do I tag a VLAN on a Linux interface"
WORDS = {
    "also": ["тегированный интерфейс VLAN на Linux"],
    "keywords": ["ip link"],
    "answer": "Интерфейс создаётся командой ip link add link eth0 name eth0.42 type vlan id 42.",
}


@pytest.fixture(scope="module")
def lib(tmp_path_factory, real_embedder):
    notes = tmp_path_factory.mktemp("why") / "notes"
    shutil.copytree(EXAMPLES, notes, ignore=shutil.ignore_patterns(".memo"))
    (notes / "work" / "networking" / ".memoignore").write_text("draft-*.md\n")
    (notes / "work" / "networking" / "draft-bgp.md").write_text(
        "# BGP draft\n\nBGP peers exchange routes over TCP port 179.\n"
    )
    (notes / "loose").mkdir()
    (notes / "loose" / "vlan-notes.md").write_text("# VLAN\n\nTagging VLAN frames on Linux.\n")
    with Library(notes, real_embedder, Settings()) as made:
        made.index()
        yield made


def test_each_hit_explains_its_score_by_its_phrasings_and_its_note(lib):
    res = lib.search(".", QUESTION, k=5, explain=True, **WORDS)
    first = res.hits[0]
    assert first.path == "work/networking/vlan.md" and first.explain is not None
    why = first.explain
    kinds = [w["kind"] for w in why["phrasings"]]
    assert kinds == ["question", "also", "answer"]
    # the score is the phrasings' mean log-score, times the note's factor
    logs = [w["log"] for w in why["phrasings"]]
    assert math.exp(sum(logs) / len(logs)) * why["note"]["factor"] == pytest.approx(
        first.score, rel=1e-3
    )
    best = max(range(3), key=lambda i: logs[i])
    assert why["won_by"] == ("also 1" if kinds[best] == "also" else kinds[best])
    question = why["phrasings"][0]
    assert question["lex"]["rank"] == first.lex_rank and question["vec"]["rank"] == first.vec_rank
    assert question["vec"]["from"] == "chunk" or question["vec"]["from"].startswith("window")
    assert why["fused_rank"] == 1 and why["shown_rank"] == 1
    assert all(h.explain is not None for h in res.hits)
    assert "explain" not in lib.search(".", QUESTION, k=2).hits[0].to_dict()


def test_explain_says_what_diversity_and_the_budget_did(lib):
    res = lib.search("work/networking", "VLAN", k=5, explain=True, diverse=True)
    moved = [h.explain["diversity"] for h in res.hits if h.explain["diversity"]]
    places = [(h.explain["fused_rank"], h.explain["shown_rank"]) for h in res.hits]
    assert bool(moved) == any(a != b for a, b in places)
    cut = lib.search(".", QUESTION, k=3, explain=True, max_tokens=60)
    assert cut.budget is not None and cut.budget.cut
    assert cut.hits[-1].explain["budget"] == "cut to fit max_tokens"


def test_why_places_a_note_and_names_what_stood_above_it(lib):
    top = lib.search(".", "JQL open bugs assigned to me", k=10, diverse=False).hits
    second = next(h for h in top if h.path != top[0].path)  # the first hit of another note
    out = lib.why(second.path, "JQL open bugs assigned to me").to_dict()
    assert out["found"] and out["collection"] == "jira"
    assert out["rank"] == top.index(second) + 1
    best = out["chunks"][0]
    assert best["line"] == second.line and best["fused_rank"] == out["rank"]
    above = [(h.path, h.line) for h in top[: out["rank"] - 1]][:5]
    assert [(a["path"], a["line"]) for a in out["above"]] == above
    lexical = any(c["lex_rank"] for c in out["chunks"])
    assert out["reasons"] == ([] if lexical else [out["reasons"][0]])


@pytest.mark.parametrize(
    ("note", "within", "reason"),
    [
        ("work/networking/draft-bgp.md", ".", "left out on purpose: .memoignore"),
        ("loose/vlan-notes.md", ".", "in no collection"),
        ("work/networking/vlan.md", "work/jira", "outside the path searched"),
    ],
)
def test_why_says_why_a_note_is_not_found(lib, note, within, reason):
    out = lib.why(note, "BGP peers route exchange port", within=within)
    assert not out.found and out.rank is None
    assert any(reason.split(":")[0] in r for r in out.reasons), out.reasons


def test_why_says_when_only_the_vector_leg_reaches_a_note(lib):
    """A small library's every chunk is a vector candidate: the note is placed, far down,
    and the reason it is there only by meaning is said."""
    out = lib.why("home/cooking/sourdough.md", "BGP peers route exchange port")
    assert out.found and out.rank is not None and out.rank > 1
    assert all(c.lex_rank is None for c in out.chunks)
    assert any("holds no word of the question" in r for r in out.reasons), out.reasons


def test_why_with_route_names_the_collections_the_router_chose(lib):
    out = lib.why("home/cooking/sourdough.md", "JQL open bugs assigned to me", route=1)
    assert not out.found
    assert any("was not routed" in r and "work/jira" in r for r in out.reasons), out.reasons


def test_memo_why_prints_the_place_and_the_reasons(lib):
    root = lib.root
    run = [sys.executable, "-m", "memo", "why", "--root", str(root), "--no-server"]
    done = subprocess.run(
        [*run, "work/jira/jql.md:5", "JQL open bugs assigned to me"],
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    assert "work/jira/jql.md" in done.stdout and "ranks 1" in done.stdout
    done = subprocess.run(
        [*run, "--json", "loose/vlan-notes.md", "vlan"], capture_output=True, text=True, cwd=root
    )
    got = json.loads(done.stdout)
    assert got["found"] is False and "in no collection" in got["reasons"][0]
    done = subprocess.run([*run, "work", "vlan"], capture_output=True, text=True, cwd=root)
    assert done.returncode == 1 and "is not a note" in done.stderr


def test_a_note_with_a_path_outside_the_library_is_refused(lib, tmp_path: Path):
    outside = tmp_path / "x.md"
    outside.write_text("# X\n")
    with pytest.raises(Exception, match="outside|not inside"):
        lib.why(str(outside), "x")
