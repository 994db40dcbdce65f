"""The rules of roots.py as a caller meets them (issue 32: what mutation found no test pinning).

Which folder counts as declared when memo keeps its files apart from the notes, what `declare`
says about a path that is no folder, and which folder the "not a library" error tells the user
to run `memo init` on.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memo.caches import registry_dir
from memo.config import Settings
from memo.errors import LibraryNotFoundError
from memo.roots import (
    CACHED_MARKER,
    MARKER,
    MARKER_TEXT,
    declare,
    declared_root,
    is_declared,
    libraries_between,
    not_a_library,
)


@pytest.fixture
def apart(tmp_path: Path) -> tuple[Path, Settings]:
    """A folder of notes and settings that keep memo's files under an index folder."""
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    return notes, Settings(index_dir=tmp_path / "index")


@pytest.mark.parametrize("kept", [CACHED_MARKER, "registry.db"])
def test_either_file_kept_apart_declares_the_library(apart, kept: str) -> None:
    """Under MEMO_INDEX_DIR a library is declared by its cached marker or by its registry
    alone (a library indexed before the marker existed): each one is enough."""
    notes, settings = apart
    assert not is_declared(notes, settings)
    folder = registry_dir(notes, settings)
    folder.mkdir(parents=True)
    (folder / kept).write_text("", encoding="utf-8")
    assert is_declared(notes, settings)
    assert declared_root(notes / "sub", settings) == notes
    assert not list(notes.rglob("*.yaml"))  # nothing beside the notes


def test_declare_apart_writes_the_marker_under_the_index_folder(apart) -> None:
    notes, settings = apart
    path = declare(notes, settings)
    assert path == registry_dir(notes, settings) / CACHED_MARKER
    assert path.read_text(encoding="utf-8") == MARKER_TEXT
    assert not (notes / MARKER).exists()
    assert declare(notes, settings) is None  # declared already: nothing written again


@pytest.mark.parametrize("what", ["file", "missing"])
def test_declare_refuses_what_is_not_a_folder_and_says_what_to_give(
    tmp_path: Path, what: str
) -> None:
    target = tmp_path / "note.md"
    if what == "file":
        target.write_text("# a note\n", encoding="utf-8")
    with pytest.raises(LibraryNotFoundError) as e:
        declare(target, Settings())
    assert str(e.value) == f"{target} is not a folder"
    assert e.value.hint == "Give the folder that holds your notes."
    assert sorted(p.name for p in tmp_path.iterdir()) == (["note.md"] if what == "file" else [])


def test_a_file_finds_the_root_of_its_folder(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    (root / "c").mkdir(parents=True)
    declare(root, Settings())
    note = root / "c" / "n.md"
    note.write_text("x\n", encoding="utf-8")
    assert declared_root(note, Settings()) == root
    assert declared_root(tmp_path, Settings()) is None


def _init_arg(hint: str) -> str:
    return hint.split("`memo init ", 1)[1].split("`", 1)[0]


def test_not_a_library_names_the_folder_to_init(tmp_path: Path) -> None:
    """The hint names the folder to declare: a folder itself, a file's folder, and a path that
    does not exist as it was given (there is no folder to look at)."""
    folder = tmp_path / "my notes"  # a space: the command must stay one argument
    folder.mkdir()
    note = folder / "a.md"
    note.write_text("x\n", encoding="utf-8")
    missing = tmp_path / "gone" / "b.md"
    for path, named in ((folder, folder), (note, folder), (missing, missing)):
        e = not_a_library(path)
        assert _init_arg(e.hint) == shlex.quote(str(named))
        assert f"`memo index {shlex.quote(str(named))}`" in e.hint
        assert str(e) == f"{path} is not inside a memo library"


def test_not_a_library_shows_the_path_as_the_user_typed_it(tmp_path: Path) -> None:
    e = not_a_library(tmp_path, shown="../elsewhere")
    assert str(e) == "../elsewhere is not inside a memo library"
    assert _init_arg(e.hint) == shlex.quote(str(tmp_path))


# a backtick would end the hint's code span early (the hint is markdown): not generated here
NAMES = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00/`")


@given(st.text(NAMES, min_size=1, max_size=20))
def test_the_init_command_in_the_hint_is_one_shell_word(name: str) -> None:
    """Whatever the folder's name, pasting the hint's command passes it as one argument."""
    if name in (".", ".."):
        return
    path = Path("/nonexistent-memo-test") / name
    assert shlex.split(_init_arg(not_a_library(path).hint)) == [str(path)]


def test_libraries_between_asks_only_the_folders_strictly_below_the_root(tmp_path: Path) -> None:
    """A library below the root that holds a collection is found; the root itself, and a
    library beside the root (a folder outside it, even declared), never are."""
    settings = Settings()
    root, inner, beside = tmp_path / "root", tmp_path / "root" / "a" / "inner", tmp_path / "beside"
    for lib in (root, inner, beside):
        (lib / "c").mkdir(parents=True)
        (lib / MARKER).write_text(MARKER_TEXT, encoding="utf-8")
    asked = [inner / "c", root / "c", root / "a", beside / "c"]
    assert libraries_between(root, asked, settings) == [inner]
    assert libraries_between(root, [beside / "c", tmp_path], settings) == []


def test_outside_library_names_the_path_as_shown_and_a_symlink_where_it_leads(
    tmp_path: Path,
) -> None:
    """From inside a library, a path outside it is named as the user typed it; the words
    '(it leads to …)' come only when a symlink took it elsewhere."""
    lib, out = tmp_path / "lib", tmp_path / "out"
    lib.mkdir()
    out.mkdir()
    plain = not_a_library(out, "../out", inside=lib, named=out)
    assert str(plain) == f"../out is outside the library {lib}"
    assert str(not_a_library(out, inside=lib)) == f"{out} is outside the library {lib}"
    link = lib / "link"
    link.symlink_to(out)
    led = not_a_library(out, "link", inside=lib, named=link)
    assert str(led) == f"link (it leads to {out}) is outside the library {lib}"
