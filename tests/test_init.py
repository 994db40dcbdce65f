"""`memo init`: an existing vault joins in one command (issue 22, items 2-4)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from memo.cli import cli
from memo.config import Settings
from memo.library.adopt import SPLIT_ABOVE, plan
from memo.roots import MARKER, is_declared

from .conftest import REPO, checksums
from .test_roots import tree
from .vault import NFD_FOLDER, PLUGINS, SYNC, write_vault


def run(*args: str, monkeypatch: pytest.MonkeyPatch, cwd: Path):
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("MEMO_ROOT", raising=False)
    # CI sets MEMO_INDEX_DIR for the eval sets; these tests check what lands beside the notes
    monkeypatch.delenv("MEMO_INDEX_DIR", raising=False)
    monkeypatch.setenv("MEMO_EMBEDDER", "none")
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return write_vault(tmp_path / "My Vault")


def test_the_plan_follows_the_folders_people_have(vault):
    p = plan(vault, Settings())
    by = {x.path: x for x in p.proposals}
    assert set(by) == {".", SYNC, PLUGINS, NFD_FOLDER, "English notes"}
    assert by["."].loose and by["."].notes == 2  # Главная, Помощь; inbox.md is drafts
    assert by[PLUGINS].notes == 3  # its sub-folder Макеты belongs to it
    assert by[SYNC].notes == 2 and p.notes == 10  # inbox.md counted as a file, not a note
    assert p.declare and not any(x.kept for x in p.proposals)
    # drafted from the folder's own notes, in their language, one line
    sync = by[SYNC].description
    assert sync.startswith("Obsidian Sync: ") and "Настройка синхронизации" in sync
    assert "\n" not in sync and len(sync) <= 200
    assert "Поиск по хранилищу" in by[PLUGINS].description  # a frontmatter title counts
    assert "заметки в корне" in by["."].description  # Russian notes: Russian words
    assert by["English notes"].description.startswith("English notes: Link syntax, Daily review")


def test_a_dry_run_writes_nothing_then_yes_writes_only_metas_and_the_marker(
    vault, tmp_path, monkeypatch
):
    before, notes = tree(tmp_path), checksums(vault)
    dry = run("init", str(vault), monkeypatch=monkeypatch, cwd=tmp_path)
    assert dry.exit_code == 0, dry.output
    assert "dry run: nothing written" in dry.output and "--yes" in dry.output
    assert f"  new  {SYNC} " in dry.output  # a path people read: as it is, unquoted
    assert f"`memo init {shlex.quote(str(vault))} --yes`" in dry.output  # a command: quoted
    assert tree(tmp_path) == before
    done = run("init", str(vault), "--yes", "--json", monkeypatch=monkeypatch, cwd=tmp_path)
    assert done.exit_code == 0, done.output
    out = json.loads(done.output)
    assert sorted(out["written"]) == sorted(
        [
            "_meta.yaml",
            f"{SYNC}/_meta.yaml",
            f"{PLUGINS}/_meta.yaml",
            f"{NFD_FOLDER}/_meta.yaml",
            "English notes/_meta.yaml",
            MARKER,
        ]
    )
    new = set(tree(tmp_path)) - set(before)
    assert new == {str(Path("My Vault") / w) for w in out["written"]}
    after = checksums(vault)
    assert {k: after[k] for k in notes} == notes  # every note byte-identical
    meta = yaml.safe_load((vault / SYNC / "_meta.yaml").read_text(encoding="utf-8"))
    assert meta["drafted"] is True and meta["description"].startswith("Obsidian Sync")
    assert is_declared(vault, Settings())


def test_a_second_init_writes_nothing_and_an_existing_meta_is_kept(vault, tmp_path, monkeypatch):
    (vault / SYNC / "_meta.yaml").write_text("description: my own words\n", encoding="utf-8")
    first = run("init", str(vault), "--yes", "--json", monkeypatch=monkeypatch, cwd=tmp_path)
    assert f"{SYNC}/_meta.yaml" not in json.loads(first.output)["written"]
    assert (vault / SYNC / "_meta.yaml").read_text() == "description: my own words\n"
    before = tree(tmp_path)
    again = run("init", str(vault), "--yes", monkeypatch=monkeypatch, cwd=tmp_path)
    assert again.exit_code == 0 and "nothing to do" in again.output
    assert tree(tmp_path) == before


def test_two_commands_from_a_bare_vault_to_the_first_answer(vault, tmp_path, monkeypatch):
    done = run("init", str(vault), "--yes", "--index", monkeypatch=monkeypatch, cwd=tmp_path)
    assert done.exit_code == 0, done.output
    assert "5 collections: 10 new" in done.output  # the index report: no Logseq backup
    assert "Indexing it now." in done.output and "Next: memo index" not in done.output
    hit = run(
        "search", str(vault), "пароль шифрования", "--json", monkeypatch=monkeypatch, cwd=tmp_path
    )
    assert hit.exit_code == 0, hit.output
    top = json.loads(hit.output)["results"][0]
    assert top["path"] == f"{SYNC}/Настройка синхронизации.md"
    shown = run(
        "show",
        f"{top['path']}:{top['line']}-{top['end_line']}",  # the form memo prints
        "--root",
        str(vault),
        "--json",
        monkeypatch=monkeypatch,
        cwd=tmp_path,
    )
    assert shown.exit_code == 0 and json.loads(shown.output)["cite"] == top["cite"]
    status = run("status", str(vault), monkeypatch=monkeypatch, cwd=tmp_path)
    assert "drafted by memo: review it" in status.output
    line = next(x for x in status.output.splitlines() if x.startswith(f"{SYNC}  ["))
    assert "languages ru:1.00" in line and "description drafted by memo" in line


def test_a_folder_far_past_a_collection_is_split_by_its_sub_folders(tmp_path):
    root = tmp_path / "big"
    for i in range(SPLIT_ABOVE + 1):
        sub = root / "Archive" / f"year {2000 + i % 3}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"n{i}.md").write_text(f"note {i}\n")
    (root / "Archive" / "index.md").write_text("the archive's own note\n")
    p = plan(root, Settings())
    by = {x.path: x for x in p.proposals}
    assert set(by) == {"Archive", "Archive/year 2000", "Archive/year 2001", "Archive/year 2002"}
    assert by["Archive"].loose and by["Archive"].notes == 1
    assert sum(x.notes for x in p.proposals) == SPLIT_ABOVE + 2


def test_init_refuses_a_folder_without_notes(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    out = run("init", str(tmp_path / "empty"), monkeypatch=monkeypatch, cwd=tmp_path)
    assert out.exit_code == 1 and "no notes" in out.output


def test_a_draft_names_each_note_by_the_title_the_index_uses(tmp_path):
    """One title rule (collection/markdown.py `note_title`): the H1 before frontmatter `title`,
    the aliases after it; and one alphabet rule (lexical.dominant): a folder of English prose
    quoting a few Russian words is drafted in English, as its language share is counted."""
    from memo.collection.chunker import chunk_note
    from memo.collection.lexical import dominant, letters

    root = tmp_path / "lib"
    (root / "ops").mkdir(parents=True)
    text = "---\ntitle: Frontmatter name\naliases: [Маршрутизация]\n---\n# Routing by policy\n\n"
    text += "Policy routing marks packets; the note quotes «маршрут» once.\n"
    (root / "ops" / "pbr.md").write_text(text, encoding="utf-8")
    indexed = chunk_note(text, lambda s: len(s) // 4, name="pbr")
    assert indexed.title == "Routing by policy (Маршрутизация)"
    assert indexed.chunks[0].heading.startswith(indexed.title)  # what the index stores
    (ops,) = [p for p in plan(root, Settings()).proposals if p.path == "ops"]
    assert indexed.title in ops.description and "Frontmatter name" not in ops.description
    assert dominant(*letters(text)) == "latn"
    assert ops.description.startswith("ops: ")


def test_both_writers_of_a_meta_write_it_one_way(tmp_path):
    """`memo new` and `memo init` write `_meta.yaml` through collection/meta.write_meta: the
    same fields, one line each, never over an existing file."""
    from memo.collection.meta import create_collection, load_meta
    from memo.errors import TargetError

    root = tmp_path / "lib"
    (root / "drafted").mkdir(parents=True)
    (root / "drafted" / "a.md").write_text("# A note\n\nwords words words\n", encoding="utf-8")
    plan(root, Settings()).write(Settings())
    create_collection(root, "made", "x " * 300)  # a long description stays one line
    drafted, made = (root / n / "_meta.yaml" for n in ("drafted", "made"))
    assert load_meta(drafted.parent).name == "drafted" and "name: drafted\n" in drafted.read_text()
    assert load_meta(drafted.parent).extra == {"drafted": True}
    assert len(made.read_text().splitlines()) == 2  # name, description
    with pytest.raises(TargetError, match="already a collection"):
        create_collection(root, "made", "again")


def test_the_readme_adopts_a_vault_with_the_memo_the_quick_start_installed():
    """Its quick start installs into .venv/bin: the next section's commands run that memo."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Already have notes?", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.strip()]
    assert commands and all(line.startswith(".venv/bin/memo ") for line in commands), commands
    assert "pip install -e" in readme.split("## Already have notes?", 1)[0]
