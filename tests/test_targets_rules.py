"""Path confinement (library/targets.py) as a client meets it (issue 32): every path a client
gives is resolved, symlinks included, and must stay inside the library root; what it names is
the collections (and sub-paths) it covers. Real folders in tmp, a real registry, no model."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memo.config import Settings
from memo.errors import TargetError
from memo.library.collections import Collections
from memo.library.targets import confine, label, no_collection, resolve


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    """A library: collection `work` (with a sub-folder and a nested collection `work/deep`),
    collection `home`, a folder `plain` of notes without a collection, a file beside them."""
    root = tmp_path / "lib"
    for folder, desc in (("work", "work notes"), ("work/deep", "deep notes"), ("home", "home")):
        (root / folder).mkdir(parents=True)
        (root / folder / "_meta.yaml").write_text(f"description: {desc}\n", encoding="utf-8")
    (root / "work" / "jira").mkdir()
    (root / "work" / "jira" / "t.md").write_text("# T\n", encoding="utf-8")
    (root / "home" / "a.md").write_text("# A\n", encoding="utf-8")
    (root / "plain").mkdir()
    (root / "plain" / "p.md").write_text("# P\n", encoding="utf-8")
    (root / "loose.md").write_text("# L\n", encoding="utf-8")
    return root


def error(root: Path, target: str) -> TargetError:
    with pytest.raises(TargetError) as e:
        confine(root, target)
    return e.value


@pytest.mark.parametrize("whole", [None, "", ".", "*"])
def test_the_whole_library(lib: Path, whole: str | None) -> None:
    assert confine(lib, whole) == lib


def test_a_path_inside_keeps_the_roots_spelling(lib: Path, tmp_path: Path) -> None:
    assert confine(lib, "work/jira") == lib / "work" / "jira"
    assert confine(lib, str(lib / "home" / "a.md")) == lib / "home" / "a.md"
    assert confine(lib, "work/../home") == lib / "home"
    assert confine(lib, "work/..") == lib  # the root itself is inside
    link = tmp_path / "link"
    link.symlink_to(lib)  # a root reached through a symlink keeps that spelling
    assert confine(link, "home/a.md") == link / "home" / "a.md"


@pytest.mark.parametrize("target", ["..", "../lib2", "work/../../x", "/etc", "/"])
def test_a_path_outside_the_root_is_refused(lib: Path, target: str) -> None:
    (lib.parent / "lib2").mkdir(exist_ok=True)
    e = error(lib, target)
    assert str(e) == f"{target} is outside the library root {lib}"


def test_a_symlink_out_of_the_root_is_refused(lib: Path, tmp_path: Path) -> None:
    (tmp_path / "secret").mkdir()
    (lib / "work" / "out").symlink_to(tmp_path / "secret")
    assert "is outside the library root" in str(error(lib, "work/out"))
    (lib / "work" / "in").symlink_to(lib / "home")  # a symlink that stays inside is fine
    assert confine(lib, "work/in") == lib / "home"


def test_a_missing_path_is_named(lib: Path) -> None:
    assert str(error(lib, "work/nope.md")) == f"work/nope.md does not exist under {lib}"


def test_a_nul_byte_is_refused(lib: Path) -> None:
    assert str(error(lib, "work\x00/x")) == "path contains a NUL byte"


@pytest.mark.parametrize("target", ["work\\jira", "C:\\notes", "c:/notes", "D:"])
def test_a_windows_path_is_refused_with_a_hint(lib: Path, target: str) -> None:
    e = error(lib, target)
    assert str(e) == f"{target} looks like a Windows path"
    assert e.hint.startswith("Use forward slashes")


def test_a_colon_later_in_a_name_is_an_ordinary_name(lib: Path) -> None:
    (lib / "home" / "C:x.md").write_text("# x\n", encoding="utf-8")
    assert confine(lib, "home/C:x.md") == lib / "home" / "C:x.md"
    (lib / "C:").mkdir()  # `C:` on its own is refused, under the root as anywhere
    assert "Windows" in str(error(lib, "C:"))


def test_home_is_expanded_and_an_unknown_user_is_a_name(lib: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(lib / "home"))
    assert confine(lib, "~/a.md") == lib / "home" / "a.md"
    (lib / "~nosuchuser-memo").mkdir()
    assert confine(lib, "~nosuchuser-memo") == lib / "~nosuchuser-memo"


def test_a_name_too_long_is_an_error_that_shows_its_start(lib: Path) -> None:
    long = "x" * 300
    e = error(lib, long)
    assert str(e) == f"{'x' * 80}… (300 characters) cannot name a file here: File name too long"
    inside = "work/" + "z" * 300  # a long name in a folder that exists
    assert str(error(lib, inside)).startswith(f"{inside[:80]}… (305 characters) cannot name")


def test_nfc_typed_finds_an_nfd_name_and_back(lib: Path) -> None:
    nfd = unicodedata.normalize("NFD", "Заметки-é")
    nfc = unicodedata.normalize("NFC", nfd)
    assert nfd != nfc
    (lib / "home" / nfd).mkdir()
    (lib / "home" / nfd / f"{nfd}.md").write_text("# n\n", encoding="utf-8")
    assert confine(lib, f"home/{nfc}/{nfc}.md") == lib / "home" / nfd / f"{nfd}.md"
    assert confine(lib, f"home/{nfc}") == lib / "home" / nfd
    (lib / "work" / nfc).mkdir()
    assert confine(lib, f"work/{nfd}") == lib / "work" / nfc
    assert "does not exist" in str(error(lib, f"home/{nfc}/other.md"))
    assert "does not exist" in str(error(lib, f"nowhere/{nfc}"))


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.sampled_from(["..", ".", "work", "home", "jira", "deep", "x", "/"]),
        min_size=1,
        max_size=6,
    )
)
def test_whatever_the_path_the_answer_is_inside_the_root_or_an_error(lib, parts) -> None:
    target = "/".join(parts)
    try:
        got = confine(lib, target)
    except TargetError:
        return
    assert got == lib or lib in got.parents
    assert got.exists()
    assert Path(os.path.realpath(got)) == Path(os.path.realpath(lib)) / got.relative_to(lib)


def test_label_is_relative_and_posix(lib: Path) -> None:
    assert label(lib, lib) == "."
    assert label(lib, lib / "work" / "jira") == "work/jira"


def scope(lib: Path, target: str | None) -> tuple[str, list[tuple[str, str]]]:
    colls = Collections(lib, None, Settings())
    s = resolve(colls, target)
    return s.target, [(label(lib, c.folder), sub) for c, sub in s.parts]


def test_what_a_target_covers(lib: Path) -> None:
    assert scope(lib, None) == (".", [("home", ""), ("work", ""), ("work/deep", "")])
    assert scope(lib, "work") == ("work", [("work", ""), ("work/deep", "")])
    assert scope(lib, "work/jira") == ("work/jira", [("work", "jira")])
    assert scope(lib, "work/jira/t.md") == ("work/jira/t.md", [("work", "jira/t.md")])
    assert scope(lib, "home/a.md") == ("home/a.md", [("home", "a.md")])


def test_a_target_without_a_collection_names_the_command(lib: Path) -> None:
    for target, shown in (
        ("plain", "plain"),
        ("plain/p.md", "plain/p.md"),
        ("loose.md", "loose.md"),
    ):
        with pytest.raises(TargetError) as e:
            scope(lib, target)
        if target.endswith(".md"):
            assert str(e.value) == f"{shown} is not inside a collection (no _meta.yaml above it)"
        else:
            assert str(e.value) == f"no collection at or below {shown}"
            assert "`memo init " in e.value.hint and "memo new FOLDER" in e.value.hint


def test_a_broken_collection_is_named_in_the_error(lib: Path) -> None:
    (lib / "plain" / "_meta.yaml").write_text("tags: [a\n", encoding="utf-8")
    with pytest.raises(TargetError) as e:
        scope(lib, "plain/p.md")
    meta = str(lib / "plain" / "_meta.yaml")
    assert str(e.value).startswith(
        f"the collection 'plain' cannot be read: its _meta.yaml is broken: {meta}: "
    )
    assert str(e.value).count(meta) == 1  # named once, whether or not the reader named it
    assert e.value.hint.startswith(f"Fix {meta}: YAML with at least `description: ...`")
    with pytest.raises(TargetError) as e:
        scope(lib, "plain")
    assert "plain/_meta.yaml" in str(e.value)


def test_no_collection_names_the_commands_that_make_one(lib: Path) -> None:
    with pytest.raises(TargetError) as e:
        scope(lib, "plain")
    assert str(e.value) == "no collection at or below plain"
    assert e.value.hint == (
        f"A collection is a folder with a _meta.yaml: `memo init {lib / 'plain'}` proposes them "
        "from the folders you have, `memo new FOLDER -d DESCRIPTION` adds one."
    )


def test_a_broken_collection_below_the_target_is_named_with_its_error(lib: Path) -> None:
    for sub in ("plain/one", "plain/two", "elsewhere"):  # elsewhere: not below the target
        (lib / sub).mkdir()
        (lib / sub / "_meta.yaml").write_text("tags: [a\n", encoding="utf-8")
    with pytest.raises(TargetError) as e:
        scope(lib, "plain")
    msg = str(e.value)
    assert msg.startswith("no collection at or below plain (") and msg.endswith(")")
    one, two = msg[len("no collection at or below plain (") : -1].split("; ")
    assert sorted([one.split(": ")[0], two.split(": ")[0]]) == [
        "plain/one/_meta.yaml",
        "plain/two/_meta.yaml",
    ]


def test_no_collection_without_a_reason_says_only_where(tmp_path: Path) -> None:
    """What an empty library says (Library's own call gives no reason)."""
    e = no_collection(tmp_path, tmp_path)
    assert str(e) == f"no collection at or below {tmp_path}"
