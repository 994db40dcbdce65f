"""A library is declared, never guessed (issue 22, item 1).

The scenes: two people's collections side by side in one temp tree, a read command run from
one of them at the folder above, a folder of notes nobody declared. Each test walks its own
temp tree before and after: a read creates nothing, anywhere in it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from memo.cli import cli
from memo.config import Settings
from memo.roots import MARKER, declare, declared_root, is_declared


def tree(top: Path) -> dict[str, int]:
    """Every file and folder under `top` with its size (folders: -1)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), top)] = -1
        for f in filenames:
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, top)] = os.path.getsize(p)
    return out


def collection(folder: Path, description: str, note: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "_meta.yaml").write_text(f"description: {description}\n", encoding="utf-8")
    (folder / "note.md").write_text(note, encoding="utf-8")
    return folder


@pytest.fixture
def neighbours(tmp_path: Path) -> Path:
    """Two people's collections side by side, nobody's library declared."""
    top = tmp_path / "shared"
    collection(top / "a" / "c1", "alice's notes", "# Alice\n\nzz apples\n")
    collection(top / "b" / "c2", "bob's notes", "# Bob\n\nzz bananas\n")
    return top


def run(*args: str, cwd: Path, monkeypatch: pytest.MonkeyPatch, **env: str):
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("MEMO_ROOT", raising=False)
    # CI sets MEMO_INDEX_DIR for the eval sets; these tests check what lands beside the notes
    monkeypatch.delenv("MEMO_INDEX_DIR", raising=False)
    monkeypatch.setenv("MEMO_EMBEDDER", "none")
    monkeypatch.setenv("HOME", str(cwd))  # no ~/notes/memo to fall back on
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return CliRunner().invoke(cli, list(args))


READS = [
    ("search", "..", "zz"),
    ("search", "../b/c2", "zz"),
    ("status", ".."),
    ("show", "../b/c2/note.md:1"),
    ("route", "zz", "--root", ".."),
    ("status",),
    ("search", ".", "zz"),
]


@pytest.mark.parametrize("args", READS, ids=lambda a: " ".join(a))
def test_a_read_outside_every_library_is_an_error_that_writes_nothing(
    neighbours, monkeypatch, args
):
    before = tree(neighbours)
    out = run(*args, cwd=neighbours / "a", monkeypatch=monkeypatch)
    assert out.exit_code == 1, out.output
    assert "memo init" in out.output and "hint:" in out.output
    assert tree(neighbours) == before


def test_a_declared_neighbour_never_reaches_the_other(neighbours, monkeypatch):
    """`cd a && memo index .` makes `a` a library; `memo search ..` from there still touches
    neither b's notes nor the folder above (the scene of the issue: it used to index both)."""
    first = run("index", ".", cwd=neighbours / "a", monkeypatch=monkeypatch)
    assert first.exit_code == 0, first.output
    assert (neighbours / "a" / MARKER).is_file() and (neighbours / "a" / "c1" / ".memo").is_dir()
    before = tree(neighbours)
    for args in (("search", "..", "zz"), ("search", "../b", "zz"), ("status", "../b")):
        out = run(*args, cwd=neighbours / "a", monkeypatch=monkeypatch)
        assert out.exit_code == 1 and "is outside the library" in out.output, args
        assert "memo init" not in out.output, args
    assert tree(neighbours) == before
    assert not (neighbours / "b" / "c2" / ".memo").exists()
    # inside a: found by walking up, whatever the current folder
    hit = run("search", "*", "zz", "--json", cwd=neighbours / "a" / "c1", monkeypatch=monkeypatch)
    assert hit.exit_code == 0 and '"c1/note.md"' in hit.output
    named = run("search", "a/c1", "zz", "--json", cwd=neighbours, monkeypatch=monkeypatch)
    assert named.exit_code == 0 and '"c1/note.md"' in named.output


def test_index_on_a_folder_without_collections_names_init_and_writes_nothing(tmp_path, monkeypatch):
    vault = tmp_path / "vault"
    (vault / "Ideas").mkdir(parents=True)
    (vault / "Ideas" / "one.md").write_text("# One\n\ntext\n")
    before = tree(tmp_path)
    out = run("index", str(vault), cwd=tmp_path, monkeypatch=monkeypatch)
    assert out.exit_code == 1
    assert "no collection at or below" in out.output and "memo init" in out.output
    assert tree(tmp_path) == before  # no marker, no .memo/registry.db


def test_index_on_a_folder_holding_a_library_refuses_and_writes_nothing(neighbours, monkeypatch):
    """`memo index /tmp` once made one library of every library below it, with an index in
    each of their collections: a folder holding a library is refused, saying which."""
    done = run("index", str(neighbours / "a"), cwd=neighbours, monkeypatch=monkeypatch)
    assert done.exit_code == 0 and is_declared(neighbours / "a", Settings())
    before = tree(neighbours)
    out = run("index", str(neighbours), cwd=neighbours, monkeypatch=monkeypatch)
    assert out.exit_code == 1
    assert f"holds the library {neighbours / 'a'}" in out.output
    assert f"memo index {neighbours / 'a'}" in out.output
    assert tree(neighbours) == before  # no marker, no index in b/c2


def test_servers_and_the_watcher_refuse_an_undeclared_root(neighbours, monkeypatch):
    before = tree(neighbours)
    for args in (("mcp", str(neighbours)), ("serve", str(neighbours)), ("watch", str(neighbours))):
        out = run(*args, cwd=neighbours, monkeypatch=monkeypatch)
        assert out.exit_code == 1 and "memo init" in out.output, (args, out.output)
    inner = run("mcp", str(neighbours / "a" / "c1"), cwd=neighbours, monkeypatch=monkeypatch)
    assert inner.exit_code == 1 and "memo init" in inner.output
    assert tree(neighbours) == before


def test_a_root_inside_a_library_is_named_with_its_library(neighbours, monkeypatch):
    made = run("index", str(neighbours / "a"), cwd=neighbours, monkeypatch=monkeypatch)
    assert made.exit_code == 0, made.output
    out = run("mcp", str(neighbours / "a" / "c1"), cwd=neighbours, monkeypatch=monkeypatch)
    assert out.exit_code == 1 and f"lies in the library {neighbours / 'a'}" in out.output


def test_index_dir_keeps_the_declaration_apart_from_the_notes(neighbours, tmp_path, monkeypatch):
    """Under MEMO_INDEX_DIR memo writes nothing beside the notes, the declaration included."""
    idx = tmp_path / "idx"
    env = {"MEMO_INDEX_DIR": str(idx)}
    before = tree(neighbours)
    out = run("index", str(neighbours / "a"), cwd=tmp_path, monkeypatch=monkeypatch, **env)
    assert out.exit_code == 0, out.output
    assert tree(neighbours) == before
    settings = Settings(index_dir=idx)
    assert is_declared(neighbours / "a", settings)
    assert not is_declared(neighbours / "a", Settings())
    found = run("search", "a", "zz", "--json", cwd=neighbours, monkeypatch=monkeypatch, **env)
    assert found.exit_code == 0 and '"c1/note.md"' in found.output


def test_declarations_old_and_new(tmp_path):
    s = Settings()
    lib = tmp_path / "lib"
    (lib / "x" / "y").mkdir(parents=True)
    assert declared_root(lib / "x" / "y", s) is None
    assert declare(lib, s) == lib / MARKER and declare(lib, s) is None  # never rewritten
    assert declared_root(lib / "x" / "y", s) == lib
    old = tmp_path / "old"
    (old / ".memo").mkdir(parents=True)
    (old / ".memo" / "registry.db").write_bytes(b"")  # a registry an earlier memo wrote
    assert declared_root(old, s) == old
    yaml_only = tmp_path / "yaml"
    yaml_only.mkdir()
    (yaml_only / "_registry.yaml").write_text("collections: []\n")
    assert is_declared(yaml_only, s)


def test_dot_in_a_plain_folder_names_that_folder_and_memo_init(tmp_path, monkeypatch):
    """Issue 29: `cd plain && memo search . q` said `library root ~/notes/memo is not a folder`
    where `memo search plain q` named `memo init plain`: both name the folder and `memo init`."""
    plain = tmp_path / "plain"
    collection(plain / "c", "some notes", "# A note\n\nzz\n")
    dot = run("search", ".", "zz", cwd=plain, monkeypatch=monkeypatch)
    named = run("search", "plain", "zz", cwd=tmp_path, monkeypatch=monkeypatch)
    for out in (dot, named):
        assert out.exit_code == 1, out.output
        assert "is not inside a memo library" in out.output, out.output
        assert f"memo init {plain.resolve()}" in out.output, out.output
        assert "is not a folder" not in out.output


def test_a_path_in_a_collection_with_a_broken_meta_says_so(tmp_path, monkeypatch):
    """Issue 29: a search inside a collection whose _meta.yaml is broken got the generic "give a
    path inside the library root" hint, as if the path were wrong: it names the file and why."""
    lib = tmp_path / "lib"
    collection(lib / "good", "fine", "# G\n\nzz\n")
    bad = collection(lib / "bad", "x", "# B\n\nzz\n")
    (bad / "_meta.yaml").write_text("description: [broken\n", encoding="utf-8")
    assert run("index", str(lib), cwd=tmp_path, monkeypatch=monkeypatch).exit_code == 1
    for args in (
        ("search", "lib/bad", "zz"),
        ("search", "lib/bad/note.md", "zz"),
        ("status", "lib/bad"),
    ):
        out = run(*args, "--no-server", cwd=tmp_path, monkeypatch=monkeypatch)
        assert out.exit_code == 1, out.output
        assert "its _meta.yaml is broken" in out.output and "not valid YAML" in out.output
        assert f"hint: Fix {bad / '_meta.yaml'}" in out.output, out.output
        assert "Give a path inside the library root" not in out.output


def test_show_refuses_a_binary_note_rather_than_printing_its_bytes(tmp_path, monkeypatch):
    """Issue 29: `memo show` of a binary `.md` wrote its bytes to the terminal. The index skips
    such a file (skips.is_binary); show refuses it with the same reason."""
    lib = tmp_path / "lib"
    c = collection(lib / "c", "notes", "# A\n\nzz\n")
    (c / "blob.md").write_bytes(b"\x1b[2J\x00\x01\xff" * 100)  # a terminal escape, NULs
    assert run("index", str(lib), cwd=tmp_path, monkeypatch=monkeypatch).exit_code == 0
    out = run("show", "lib/c/blob.md", "--no-server", cwd=tmp_path, monkeypatch=monkeypatch)
    assert out.exit_code == 1
    assert "c/blob.md is binary: NUL bytes in a .md file" in out.output and "hint:" in out.output
    assert "\x1b" not in out.output and "\x00" not in out.output
    shown = run("show", "lib/c/note.md", "--no-server", cwd=tmp_path, monkeypatch=monkeypatch)
    assert shown.exit_code == 0 and "zz" in shown.output


def test_query_and_path_the_wrong_way_round_name_the_order(tmp_path, monkeypatch):
    """`memo search QUERY PATH` read "zz apples" as a PATH and said only that the default root
    ~/notes/memo is not a folder: the hint now gives the command the right way round (a query
    that names no file gets no such hint)."""
    lib = tmp_path / "lib"
    collection(lib / "c", "some notes", "# A note\n\nzz apples\n")
    assert run("index", str(lib), cwd=tmp_path, monkeypatch=monkeypatch).exit_code == 0
    out = run("search", "zz apples", "lib", cwd=tmp_path, monkeypatch=monkeypatch)
    assert out.exit_code == 1, out.output
    assert "hint: PATH comes before QUERY: `memo search lib 'zz apples'`" in out.output
    right = run("search", "lib", "zz apples", cwd=tmp_path, monkeypatch=monkeypatch)
    assert right.exit_code == 0 and "note.md" in right.output, right.output
    neither = run("search", "zz apples", "nowhere", cwd=tmp_path, monkeypatch=monkeypatch)
    assert neither.exit_code == 1 and "PATH comes before" not in neither.output


@pytest.mark.parametrize("given", ["/etc/passwd", "/tmp", "c/out.md", "../elsewhere"])
def test_a_path_out_of_the_library_the_current_folder_is_in_says_so(tmp_path, monkeypatch, given):
    """Issue 42: from inside a vault, a symlink out of it, /etc/passwd or /tmp got the hint
    `memo init /etc` (make /etc a library); it is "outside the library", as with --root, and
    a symlink says where it leads."""
    lib = tmp_path / "lib"
    collection(lib / "c", "some notes", "# A note\n\nzz apples\n")
    (lib / "c" / "out.md").symlink_to("/etc/passwd")
    (tmp_path / "elsewhere").mkdir()
    assert run("index", str(lib), cwd=tmp_path, monkeypatch=monkeypatch).exit_code == 0
    for command in (("search", given, "zz"), ("show", given)):
        out = run(*command, cwd=lib, monkeypatch=monkeypatch)
        assert out.exit_code == 1, out.output
        assert f"is outside the library {lib}" in out.output and "memo init" not in out.output
        assert ("(it leads to /etc/passwd)" in out.output) == (given == "c/out.md")
    with_root = run(
        "search", given, "zz", "--root", str(lib), cwd=tmp_path, monkeypatch=monkeypatch
    )
    assert with_root.exit_code == 1 and "is outside the library root" in with_root.output


def test_a_broken_meta_is_named_once_on_a_line_it_has(tmp_path, monkeypatch):
    """Issue 42: the error repeated its path ("c/_meta.yaml: /…/c/_meta.yaml: not valid YAML")
    and named line 5 of a 4-line file (YAML's end of stream); it names the file once and the
    line where the quote that never closes begins."""
    lib = tmp_path / "lib"
    collection(lib / "good", "fine", "# G\n\nzz\n")
    bad = collection(lib / "bad", "x", "# B\n\nzz\n")
    (bad / "_meta.yaml").write_text('name: c\ndescription: "unclosed\ntags: [a]\nembedder: x\n')
    said = run("index", str(lib), cwd=tmp_path, monkeypatch=monkeypatch).output
    said += run("status", str(lib), cwd=tmp_path, monkeypatch=monkeypatch).output
    lines = [x for x in said.splitlines() if "not valid YAML" in x]
    assert lines and all(x.count("_meta.yaml") <= 1 and str(bad) not in x for x in lines), lines
    assert all("not valid YAML (line 2): found unexpected end of stream" in x for x in lines)
    assert "bad/_meta.yaml: not valid YAML" in said
