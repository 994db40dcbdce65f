"""`memo status` and `memo index` say each fact in the same words to a person (the CLI) and to
a model (memo_status, memo_reindex): one rendering (server/render.py), as search, why and
route have (issue 49, item 3). The person is told more of each index; never other words."""

from __future__ import annotations

import pytest

from memo.cli import text
from memo.config import Settings
from memo.library import Library
from memo.printable import shown
from memo.server import render

from .conftest import checksums


def test_index_says_what_the_pass_did_in_one_sentence_everywhere(notes, capsys):
    with Library(notes, None, Settings(embedder="none")) as lib:
        first, again = lib.index("work").to_dict(), lib.index("work").to_dict()
    for r in (first, again):
        text.index(r)
        person = capsys.readouterr().out.splitlines()
        assert render.reindex_text(r).splitlines()[0] == person[0]
    assert person[0].startswith("nothing to do: 2 collections, ")


def test_status_says_each_collection_alike_and_tells_a_person_more(notes, capsys):
    with Library(notes, None, Settings(embedder="none")) as lib:
        lib.index("work")
        r = lib.status().to_dict()
    r["collections"][-1]["excluded"] = [{"notes": 2, "why": "a rule\nover two lines"}]
    broken = "index unreadable (file is not a database); rebuilt on the next index or search"
    r["collections"][-1]["damaged"] = broken
    text.status(r)
    person = capsys.readouterr().out.splitlines()
    model = render.status_text(r).splitlines()
    assert person[0] == model[0] == f"root: {r['root']}"
    assert person[1].startswith("watcher: ") and not any(m.startswith("watcher") for m in model)
    cooking = [line for line in person + model if line.startswith("home/cooking ")]
    assert cooking == [
        "home/cooking  [cooking]  not indexed yet (1 note)",
        "home/cooking  not indexed yet (1 note)",
    ]
    c = next(c for c in r["collections"] if c["path"] == "work/jira")
    counts = f"{c['files']} files, {c['chunks']} chunks, {c['stale']} changed since indexing, "
    told = next(line for line in person if line.startswith("work/jira "))
    assert told.startswith(f"work/jira  [jira]  {counts}embedder none (lexical only), ")
    said = next(line for line in model if line.startswith("work/jira "))
    assert said.startswith(f"work/jira  {counts}last indexed ")
    last = shown(r["collections"][-1]["path"])
    assert f"{last}  {broken}" in model and any(p.endswith(f"]  {broken}") for p in person)
    left = "    left out on purpose: 2 notes, a rule\\nover two lines"
    assert left in person and left in model  # one line each, its newline shown


def test_a_note_that_lost_lines_is_named_with_its_count():
    one = {"path": "a.md", "dropped": [{"first": 7, "last": 7, "why": "binary", "lost": True}]}
    many = {"path": "b.md", "dropped": [{"first": 2, "last": 9, "why": "a table", "lost": False}]}
    few = {"path": "c.md", "dropped": [{"first": 2, "last": 3, "why": "a table", "lost": False}]}
    assert render.coverage_lines([one, many, few]) == [
        "not indexed: 1 line of a.md (lines 7 binary)",
        "not indexed: 8 lines of b.md (lines 2-9 a table)",
    ]


@pytest.mark.edits_notes  # the test writes a broken collection (memo none: checked below)
def test_a_model_is_told_what_a_search_cannot_see_yet(notes, capsys):
    """A broken collection is not searched and a chunk without its vector is found by its words
    only: memo_status and memo_reindex tell a model both, the broken one once (its error), and
    chunks waiting in the CLI's words (the model's face left them out before)."""
    bad = notes / "work" / "broken"
    bad.mkdir()
    (bad / "_meta.yaml").write_text("description: [broken\n", encoding="utf-8")
    (bad / "note.md").write_text("# A note\n\nNot searched while its _meta.yaml is broken.\n")
    before = checksums(notes)
    with Library(notes, None, Settings(embedder="none")) as lib:
        done = lib.index("work").to_dict()
        r = lib.status().to_dict()
    assert checksums(notes) == before
    c = next(c for c in r["collections"] if c["path"] == "work/jira")
    c["pending"], c["embedder"] = 1, "intfloat/multilingual-e5-small"  # one chunk still to embed
    text.status(r)
    person = capsys.readouterr().out.splitlines()
    for model in (render.status_text(r), render.reindex_text(done)):
        told = [line for line in model.splitlines() if "work/broken" in line]
        assert len(told) == 1 and told[0].startswith("error: work/broken/_meta.yaml: not valid")
    waiting = f"vectors {c['chunks'] - 1:,}/{c['chunks']:,} chunks (run `memo index`)"
    model = render.status_text(r).splitlines()
    assert all(any(waiting in line for line in said) for said in (person, model))
