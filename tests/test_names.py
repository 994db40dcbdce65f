"""Existing names just work (issue 22, item 4): spaces, Cyrillic, macOS's NFD forms."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

from memo.cli import cli

from .vault import NFD_FOLDER, SYNC, write_vault


@pytest.fixture
def lib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    vault = write_vault(tmp_path / "vault")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MEMO_ROOT", raising=False)
    monkeypatch.setenv("MEMO_EMBEDDER", "none")
    out = CliRunner().invoke(cli, ["init", str(vault), "--yes", "--index"])
    assert out.exit_code == 0, out.output
    return vault


def memo(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_an_nfd_note_is_found_by_the_nfc_words_people_type(lib):
    query = unicodedata.normalize("NFC", "чайный пуэр")
    out = memo("search", str(lib), query, "--mode", "lex", "--json")
    assert out.exit_code == 0, out.output
    top = json.loads(out.output)["results"][0]
    assert top["path"] == f"{NFD_FOLDER}/Пуэр.md"  # the name as it is on disk
    typed = unicodedata.normalize("NFC", top["path"])
    assert typed != top["path"]
    shown = memo("show", f"{typed}:{top['line']}-{top['end_line']}", "--root", str(lib), "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["cite"] == top["cite"]


def test_text_output_prints_a_path_as_it_is_and_show_takes_it_back(lib):
    """Issue 50: the hit line quoted a path a shell would split, and `memo show` given that
    text said it does not exist. One form, plain; the old quoted one is still read."""
    out = memo("search", str(lib), "пароль шифрования", "--mode", "lex")
    assert out.exit_code == 0, out.output
    first = out.output.splitlines()[-2]  # the hit's line, before its snippet
    assert first.startswith(f"{SYNC}/Настройка синхронизации.md:"), out.output
    where = first.split("  ")[0]
    for given in (where, f"'{SYNC}/Настройка синхронизации.md':{where.rsplit(':', 1)[1]}"):
        again = memo("show", given, "--root", str(lib))
        assert again.exit_code == 0, again.output


def test_new_adds_a_meta_to_a_folder_whatever_its_name(tmp_path, monkeypatch):
    vault = write_vault(tmp_path / "v")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMO_EMBEDDER", "none")
    assert memo("init", str(vault), "--yes").exit_code == 0
    (vault / SYNC / "_meta.yaml").unlink()
    made = memo("new", str(vault / SYNC), "-d", "Синхронизация между устройствами")
    assert made.exit_code == 0, made.output
    assert (vault / SYNC / "_meta.yaml").read_text(encoding="utf-8").startswith("name: ")
    # a new folder is named as this vault names its notes (Cyrillic words with spaces), and
    # a name a shell or a wikilink breaks on is refused (issue 50: the library's own naming)
    named = memo("new", str(vault / "Новая папка"), "-d", "x", "--root", str(vault))
    assert named.exit_code == 0, named.output
    refused = memo("new", str(vault / "Папка: старая*"), "-d", "x", "--root", str(vault))
    assert refused.exit_code == 1 and "not a folder name memo creates" in refused.output
    assert not (vault / "Папка: старая*").exists()
