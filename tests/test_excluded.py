"""What the vault leaves out stays out (issue 31, item 5): Obsidian's excluded files, its
templates and attachments folders, and `.memoignore`, on a small vault written here, through
`memo init`, the Library (index, catch-up before a search, status) and the watcher."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from memo.cli import cli
from memo.collection import excluded
from memo.config import Settings
from memo.library import Library
from memo.library.adopt import plan
from memo.watch import Watcher
from memo.watch.events import RECONCILE, keys_for

from .conftest import checksums
from .watch_helpers import index_rows, wait_for

APP = {
    "userIgnoreFilters": ["Notes/Archive/", "/\\.excalidraw\\.md$/"],
    "attachmentFolderPath": "Assets",
}
NOTES = {
    "Notes/Alpha.md": "# Alpha\n\nthe kept note about zebrafinch songs\n",
    "Notes/Archive/Old.md": "# Old\n\nunicornword from the archive\n",
    "Notes/Archive/deep/Older.md": "# Older\n\nunicornword again\n",
    "Notes/drafts/Draft.md": "# Draft\n\ndraftword half written\n",
    "Notes/Diary.private.md": "# Diary\n\nprivateword\n",
    "Notes/Sketch.excalidraw.md": "# Sketch\n\nexcalidrawword\n",
    "Templates/Meeting.md": "# {{title}}\n\ntemplateword {{date}}\n",
    "Assets/Embedded.md": "# Embedded\n\nattachmentword\n",
    "Journal/Day.md": "# Day\n\njournalword\n",
    "Journal/secret/Mine.md": "# Mine\n\nsecretword\n",
}
LEFT_OUT = {  # word -> the note that holds it, left out by one rule each
    "unicornword": "Notes/Archive/Old.md",
    "draftword": "Notes/drafts/Draft.md",
    "privateword": "Notes/Diary.private.md",
    "excalidrawword": "Notes/Sketch.excalidraw.md",
    "templateword": "Templates/Meeting.md",
    "attachmentword": "Assets/Embedded.md",
    "secretword": "Journal/secret/Mine.md",
}


def write_vault(root: Path) -> Path:
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "app.json").write_text(json.dumps(APP))
    (root / ".obsidian" / "templates.json").write_text('{"folder": "Templates"}')
    (root / ".memoignore").write_text("# drafts are not ready\nNotes/drafts/\n*.private.md\n")
    (root / "Journal" / ".memoignore").write_text("secret/\n")
    os.mkfifo(root / "Notes" / "drafts" / "pipe.md")  # never opened: a reader would block
    return root


def run(*args: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("MEMO_ROOT", raising=False)
    monkeypatch.delenv("MEMO_INDEX_DIR", raising=False)
    monkeypatch.setenv("MEMO_EMBEDDER", "none")
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return write_vault(tmp_path / "Vault")


def lex(lib: Library, word: str) -> list[str]:
    return [h.path for h in lib.search(".", word, mode="lex").hits]


def left_out_of(status: dict, collection: str) -> dict[str, int]:
    (c,) = [c for c in status["collections"] if c["path"] == collection]
    return {x["pattern"]: x["notes"] for x in c["excluded"]}


# ---------------------------------------------------------------------- the rules alone
def test_obsidian_entries_are_path_prefixes_or_regexes_between_slashes(tmp_path):
    root = tmp_path / "v"
    (root / ".obsidian").mkdir(parents=True)
    filters = ["Arch", "Daily/2023", "/^People/.+-old\\.md$/", "/[/", "/"]
    (root / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": filters}))
    rules = excluded.for_collection(root, root)
    out = {
        p: (r.pattern if (r := rules.note(p)) else None)
        for p in (
            "Archive/a.md",  # a prefix, not a folder name: as Obsidian reads it
            "Arch.md",
            "Daily/2023-01-01.md",
            "Daily/2024-01-01.md",
            "People/Ann-old.md",
            "People/Ann.md",
            "Notes/People/Ann-old.md",
        )
    }
    assert out == {
        "Archive/a.md": "Arch",
        "Arch.md": "Arch",
        "Daily/2023-01-01.md": "Daily/2023",
        "Daily/2024-01-01.md": None,
        "People/Ann-old.md": "/^People/.+-old\\.md$/",
        "People/Ann.md": None,
        "Notes/People/Ann-old.md": None,
    }
    assert rules.folder("Archive") is not None and rules.folder("Daily") is None
    # "/" alone is a prefix nothing has; a regex Python cannot read is said, not guessed
    assert [p for p in rules.problems if "`/[/`" in p]
    # a collection below the vault reads the same entries from its own place
    sub = excluded.for_collection(root / "Daily", root)
    assert sub.note("2023-05-05.md") is not None and sub.note("2024-05-05.md") is None
    assert excluded.for_collection(root / "Archive", root).whole.pattern == "Arch"


def test_a_folder_left_out_is_left_out_whole_as_in_git(tmp_path):
    root = tmp_path / "v"
    root.mkdir()
    (root / ".memoignore").write_text("old/\n!old/keep.md\n/top.md\n")
    rules = excluded.for_collection(root, root)
    assert rules.note("old/keep.md").pattern == "old/"  # git cannot re-include it either
    assert rules.note("top.md").pattern == "/top.md"
    assert rules.note("sub/top.md") is None
    assert [r.pattern for r in rules.rules] == ["old/", "/top.md"]


def test_the_watcher_rescans_when_a_rule_file_changes():
    root = "/lib"
    for rule_file in (
        "/lib/.memoignore",
        "/lib/c/.memoignore",
        "/lib/.obsidian/app.json",
        "/lib/.obsidian/templates.json",
        "/lib/.obsidian/plugins/templater-obsidian/data.json",
    ):
        assert keys_for(root, "modified", rule_file, "", False) == [RECONCILE], rule_file
    assert keys_for(root, "modified", "/lib/.obsidian/workspace.json", "", False) == []


# ---------------------------------------------------------------------- memo init
def test_init_shows_what_it_will_skip_and_proposes_only_the_rest(vault, monkeypatch):
    p = plan(vault, Settings())
    by = {x.path: x.notes for x in p.proposals}
    assert by == {"Notes": 1, "Journal": 1}  # Templates/ and Assets/ propose nothing
    left = {x["pattern"]: x["notes"] for x in p.left_out}
    assert left == {
        "Notes/drafts/": 2,  # Draft.md and the FIFO, counted by name, never opened
        "*.private.md": 1,
        "secret/": 1,
        "Notes/Archive/": 2,
        "/\\.excalidraw\\.md$/": 1,
        "Assets": 1,
        "Templates": 1,
    }
    before = checksums(vault)
    out = run("init", str(vault), monkeypatch=monkeypatch)
    assert out.exit_code == 0, out.output
    assert "left out on purpose: 9 notes, by 7 rules" in out.output
    assert "templates folder `Templates` (.obsidian/templates.json)" in out.output
    assert "Obsidian's excluded files `Notes/Archive/` (.obsidian/app.json)" in out.output
    assert "ignore file `secret/` (Journal/.memoignore)" in out.output
    as_json = json.loads(run("init", str(vault), "--json", monkeypatch=monkeypatch).output)
    assert {x["kind"] for x in as_json["left_out"]} == {
        "ignore_file",
        "obsidian_excluded",
        "templates",
        "attachments",
    }
    assert checksums(vault) == before


# ---------------------------------------------------------------------- index, search, status
def test_what_is_left_out_is_never_indexed_and_status_counts_it(vault, monkeypatch):
    plan(vault, Settings()).write(Settings())
    with Library(vault, None, Settings()) as lib:
        lib.index()
        assert lex(lib, "zebrafinch") == ["Notes/Alpha.md"]
        assert lex(lib, "journalword") == ["Journal/Day.md"]
        for word in LEFT_OUT:
            assert lex(lib, word) == [], word
        assert set(index_rows(vault / "Notes")) == {"Alpha.md"}
        assert set(index_rows(vault / "Journal")) == {"Day.md"}
        st = lib.status().to_dict()
    assert left_out_of(st, "Notes") == {
        "Notes/drafts/": 2,
        "*.private.md": 1,
        "Notes/Archive/": 2,
        "/\\.excalidraw\\.md$/": 1,
    }
    assert left_out_of(st, "Journal") == {"secret/": 1}
    for c in st["collections"]:  # skipped on purpose is neither skipped nor failed
        assert c["skipped"] == [] and c["failed"] == [], c
    out = run("status", str(vault), "--json", monkeypatch=monkeypatch)
    assert out.exit_code == 0, out.output
    assert left_out_of(json.loads(out.output), "Journal") == {"secret/": 1}
    text = run("status", str(vault), monkeypatch=monkeypatch).output
    assert "left out on purpose: 2 notes, Obsidian's excluded files `Notes/Archive/`" in text


def test_a_rule_added_drops_the_note_and_removed_brings_it_back(vault, monkeypatch):
    plan(vault, Settings()).write(Settings())
    with Library(vault, None, Settings()) as lib:
        lib.index()
        assert lex(lib, "zebrafinch") == ["Notes/Alpha.md"]
        rules = vault / ".memoignore"
        kept = rules.read_text()
        rules.write_text(kept + "Notes/Alpha.md\n")
        assert lex(lib, "zebrafinch") == []  # the catch-up before the search drops it
        assert index_rows(vault / "Notes") == {}
        rules.write_text(kept.replace("Notes/drafts/\n", ""))  # and lets the drafts in
        assert lex(lib, "zebrafinch") == ["Notes/Alpha.md"]
        assert lex(lib, "draftword") == ["Notes/drafts/Draft.md"]
        assert "pipe.md" not in index_rows(vault / "Notes")  # a FIFO: memo's own rule holds
        app = vault / ".obsidian" / "app.json"
        app.write_text(json.dumps({**APP, "userIgnoreFilters": []}))
        assert sorted(lex(lib, "unicornword")) == [
            "Notes/Archive/Old.md",
            "Notes/Archive/deep/Older.md",
        ]
        (vault / ".obsidian" / "templates.json").unlink()
        assert lex(lib, "templateword") == []  # Templates/ is no collection: nothing to find
        report = run("index", str(vault), "--json", monkeypatch=monkeypatch)
        assert json.loads(report.output)["nothing_to_do"], report.output


def test_one_note_asked_alone_is_judged_as_the_walk_judges_it(vault):
    plan(vault, Settings()).write(Settings())
    with Library(vault, None, Settings()) as lib:
        lib.index()
        report = lib.index("Notes/Archive/Old.md")
        assert report.totals()["new"] == 0 and report.totals()["skipped"] == 0
        assert lex(lib, "unicornword") == []
        hits = lib.search("Notes/Archive/Old.md", "unicornword", mode="lex").hits
        assert hits == []


# ---------------------------------------------------------------------- the watcher
def test_the_watcher_follows_the_rules_and_their_changes(vault):
    plan(vault, Settings()).write(Settings())
    w = Watcher(vault, None, Settings(), log=lambda _: None, level=logging.DEBUG)
    w.start()
    try:
        wait_for(lambda: w.reconciles >= 1)
        assert set(index_rows(vault / "Notes")) == {"Alpha.md"}
        (vault / "Notes" / "Archive" / "New.md").write_text("# New\n\nfreshword\n")
        (vault / "Notes" / "Beta.md").write_text("# Beta\n\nbetaword\n")
        wait_for(lambda: "Beta.md" in index_rows(vault / "Notes"))
        assert "Archive/New.md" not in index_rows(vault / "Notes")
        (vault / ".obsidian" / "app.json").write_text(json.dumps({"userIgnoreFilters": []}))
        # the rules' change lets in all three; the watcher indexes them in no promised order
        back = {"Archive/New.md", "Archive/Old.md", "Sketch.excalidraw.md"}
        wait_for(lambda: back <= set(index_rows(vault / "Notes")))
    finally:
        assert w.stop(timeout=5.0)


def test_the_servers_say_what_is_left_out(vault, tmp_path):
    from fastapi.testclient import TestClient

    from memo.server.api import build_app
    from memo.server.render import status_text
    from memo.server.service import Service

    plan(vault, Settings()).write(Settings())
    with Library(vault, None, Settings()) as lib:
        lib.index()
        text = status_text(lib.status().to_dict())  # what memo_status hands an agent
    assert "left out on purpose: 1 note, ignore file `secret/` (Journal/.memoignore)" in text
    service = Service(vault, Settings(embedder="none"), embedder=None)
    with TestClient(build_app(service), base_url="http://127.0.0.1:8765") as http:
        page = http.get("/library")
    assert page.status_code == 200
    assert "6 left out on purpose" in page.text  # Notes: drafts 2, private, archive 2, sketch
    assert "templates folder" not in page.text  # Templates/ is no collection's folder


def test_a_vault_above_the_library_is_not_read_and_a_collection_may_be_a_vault(tmp_path):
    outer = tmp_path / "vault"
    (outer / ".obsidian").mkdir(parents=True)
    (outer / ".obsidian" / "app.json").write_text('{"userIgnoreFilters": ["lib/c/"]}')
    root = outer / "lib"
    (root / "c" / ".obsidian").mkdir(parents=True)
    (root / "c" / ".obsidian" / "templates.json").write_text('{"folder": "/tpl/"}')
    rules = excluded.for_collection(root / "c", root)  # the library is lib/, not vault/
    assert [r.pattern for r in rules.rules] == ["/tpl/"]
    assert rules.note("tpl/Meeting.md").source == "c/.obsidian/templates.json"
    assert rules.note("Meeting.md") is None and rules.whole is None


def test_a_note_newly_left_out_is_not_changed_and_a_folder_left_out_is_no_collection(
    tmp_path, monkeypatch
):
    """Issue 42: a note a new rule leaves out showed as "1 changed since indexing" beside
    "left out on purpose: 1 note"; a collection folder a rule leaves out stayed a collection
    of 0 files, listed by status and routed to. It is no collection while the rule stands,
    and says why when asked for."""
    root = tmp_path / "lib"
    for rel, text in {"c/a.md": "# A\n\nalphaword\n", "c/b.md": "# B\n\nbetaword\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "d").mkdir()
    (root / "d" / "n.md").write_text("# D\n\ndeltaword\n")
    for name in ("c", "d"):
        (root / name / "_meta.yaml").write_text(f"description: notes of {name}\n")
    with Library(root, None, Settings()) as lib:
        lib.index()
        assert [c.rel for c in lib.collections()] == ["c", "d"]
        (root / ".memoignore").write_text("c/b.md\nd/\n")
        (c,) = lib.status().to_dict()["collections"]  # d is gone; c still holds b.md
        assert (c["path"], c["stale"], left_out_of({"collections": [c]}, "c")) == (
            "c",
            0,
            {"c/b.md": 1},
        )
        assert [x.rel for x in lib.collections()] == ["c"]
        assert [r.path for r in lib.route("deltaword", k=5).collections] == ["c"]
        assert lex(lib, "deltaword") == [] and lex(lib, "betaword") == []
        said = run("search", str(root / "d"), "deltaword", monkeypatch=monkeypatch)
        assert said.exit_code == 1
        assert "d is left out of the library on purpose: ignore file `d/`" in said.output
        (root / ".memoignore").unlink()
        assert lex(lib, "deltaword") == ["d/n.md"] and lex(lib, "betaword") == ["c/b.md"]
