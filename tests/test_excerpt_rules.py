"""Reading a range of a note and its citation hash (search/excerpt.py) as an agent meets them
(issue 32): which lines come back, what the hash says, the error past the end."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memo.errors import TargetError
from memo.requests import MAX_LINES
from memo.search.excerpt import (
    DEFAULT_LINES,
    LineError,
    cite_hash,
    cite_range,
    read_excerpt,
    read_excerpts,
)


def note(tmp_path: Path, text: str | bytes, name: str = "n.md") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return p


def numbered(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


def test_the_whole_note_by_default(tmp_path: Path) -> None:
    e = read_excerpt(note(tmp_path, "a\nb\nc\n"), "c/n.md")
    assert (e.path, e.line, e.end_line, e.total_lines, e.text, e.more_lines) == (
        "c/n.md",
        1,
        3,
        3,
        "a\nb\nc",
        0,
    )
    assert e.next_line is None
    assert e.abs_path == str(tmp_path / "n.md")
    assert e.cite == cite_hash(["a", "b", "c"])


def test_a_last_line_without_newline_counts_the_same(tmp_path: Path) -> None:
    assert read_excerpt(note(tmp_path, "a\nb"), "n").total_lines == 2
    assert read_excerpt(note(tmp_path, "a\nb\n\n"), "n").total_lines == 3  # an empty 3rd line


def test_from_a_line_reads_default_lines(tmp_path: Path) -> None:
    p = note(tmp_path, numbered(100))
    e = read_excerpt(p, "n", line=10)
    assert (e.line, e.end_line, e.more_lines) == (10, 10 + DEFAULT_LINES - 1, 100 - 49)
    assert e.next_line == 10 + DEFAULT_LINES  # where to go on reading
    assert e.text.split("\n")[0] == "line 10"
    e = read_excerpt(p, "n", line=90)
    assert (e.end_line, e.more_lines, e.next_line) == (100, 0, None)  # up to the end
    e = read_excerpt(p, "n", line=3, lines=2)
    assert (e.text, e.end_line, e.more_lines, e.next_line) == ("line 3\nline 4", 4, 96, 5)
    e = read_excerpt(p, "n", lines=5)
    assert (e.line, e.end_line) == (1, 5)


def test_a_line_before_the_first_reads_from_the_first(tmp_path: Path) -> None:
    p = note(tmp_path, numbered(3))
    for line in (0, -5):
        assert read_excerpt(p, "n", line=line).line == 1


def test_no_more_than_max_lines(tmp_path: Path) -> None:
    p = note(tmp_path, numbered(MAX_LINES + 5))
    e = read_excerpt(p, "n")
    assert (e.end_line, e.total_lines, e.more_lines) == (MAX_LINES, MAX_LINES + 5, 5)
    assert read_excerpt(p, "n", line=2, lines=MAX_LINES + 50).end_line == MAX_LINES + 1


def test_zero_lines_is_an_empty_range(tmp_path: Path) -> None:
    p = note(tmp_path, numbered(3))
    e = read_excerpt(p, "n", line=2, lines=0)
    assert (e.line, e.end_line, e.text, e.more_lines, e.next_line) == (2, 1, "", 2, 2)
    assert e.cite == cite_hash([]) == cite_range(p, 2, 1)
    first = read_excerpt(p, "n", line=1, lines=0)  # an empty range before the first line
    assert first.end_line == 0 and first.cite == cite_range(p, 1, 0) == cite_hash([])


def test_a_line_past_the_end_names_the_range(tmp_path: Path) -> None:
    p = note(tmp_path, numbered(3))
    assert read_excerpt(p, "n", line=3).text == "line 3"
    with pytest.raises(LineError) as e:
        read_excerpt(p, "c/n.md", line=4)
    assert str(e.value) == "c/n.md has 3 lines; line 4 is past its end"
    assert e.value.hint.startswith("Ask for a line from 1 to 3:")


def test_an_empty_note_reads_as_no_lines(tmp_path: Path) -> None:
    e = read_excerpt(note(tmp_path, ""), "n", line=1)
    assert (e.line, e.end_line, e.total_lines, e.text) == (1, 0, 0, "")
    with pytest.raises(LineError):
        read_excerpt(note(tmp_path, ""), "n", line=2)


@pytest.mark.parametrize("nl", ["\n", "\r\n", "\r"])
def test_every_line_end_counts_as_the_chunker_counts_it(tmp_path: Path, nl: str) -> None:
    p = note(tmp_path, nl.join(["# T", "one", "two", ""]))
    e = read_excerpt(p, "n", line=2, lines=2)
    assert (e.text, e.total_lines) == ("one\ntwo", 3)
    assert e.cite == cite_range(p, 2, 3) == cite_hash(["one", "two"])


def test_cite_range_says_whether_a_range_still_reads_the_same(tmp_path: Path) -> None:
    p = note(tmp_path, "a\nb\nc\n")
    before = cite_range(p, 2, 3)
    assert before == read_excerpt(p, "n", line=2, lines=2).cite
    note(tmp_path, "a\nB\nc\n")
    assert cite_range(p, 2, 3) != before
    assert cite_range(p, 1, 1) == cite_hash(["a"])
    assert cite_range(p, 0, 1) == cite_hash(["a"])  # line 0 is the first line
    assert cite_range(tmp_path / "gone.md", 1, 2) == ""


def test_cite_range_reads_a_note_once_for_many_hits(tmp_path: Path) -> None:
    p = note(tmp_path, "a\nb\n")
    read: dict = {}
    first = cite_range(p, 1, 1, read)
    assert read == {p: ["a", "b", ""]}
    note(tmp_path, "changed\n")
    assert cite_range(p, 1, 1, read) == first  # the lines read for this result set
    missing = tmp_path / "gone.md"
    assert cite_range(missing, 1, 1, read) == "" and read[missing] is None


def test_cite_hash_is_twelve_hex_digits_of_the_lf_joined_lines() -> None:
    h = cite_hash(["a", "b"])
    assert len(h) == 12 and int(h, 16) >= 0
    assert h != cite_hash(["a", "b", ""]) and h != cite_hash(["ab"])


@given(
    st.lists(
        st.text(
            # text a note holds: control characters make a file binary (collection/skips.py)
            st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff"),
            max_size=8,
        ),
        min_size=1,
        max_size=30,
    ),
    st.integers(1, 30),
    st.integers(0, 30),
)
@settings(deadline=None)  # no timing: a loaded machine took 433 ms for one example
def test_a_read_range_and_its_cite_agree(tmp_path_factory, lines, line, n) -> None:
    p = note(tmp_path_factory.mktemp("n"), "\n".join(lines) + "\n")
    if line > len(lines):
        with pytest.raises(LineError):
            read_excerpt(p, "n", line=line, lines=n)
        return
    e = read_excerpt(p, "n", line=line, lines=n)
    assert e.text.split("\n") == lines[line - 1 : line - 1 + n] or (n == 0 and e.text == "")
    assert e.cite == cite_range(p, e.line, e.end_line)
    assert e.more_lines == len(lines) - e.end_line


def test_the_citation_hash_of_a_range_is_the_same_in_every_version() -> None:
    """A hash an agent kept from an older memo must still match the same lines read now."""
    assert cite_hash(["a", "b"]) == "5ccb5f677c3e"
    assert cite_hash(["Заметка", "é"]) == "a2b25716e6fa"


def test_an_excerpt_as_a_dict_is_what_the_servers_send(tmp_path: Path) -> None:
    e = read_excerpt(note(tmp_path, "a\nb\n"), "c/n.md", line=2)
    assert e.to_dict() == {
        "path": "c/n.md",
        "abs_path": str(tmp_path / "n.md"),
        "line": 2,
        "end_line": 2,
        "total_lines": 2,
        "text": "b",
        "cite": cite_hash(["b"]),
        "more_lines": 0,
        "next_line": None,
    }


def test_a_binary_note_is_refused_not_printed(tmp_path: Path) -> None:
    p = note(tmp_path, b"\x00\x01\x02PNG" * 50)
    with pytest.raises(TargetError) as e:
        read_excerpt(p, "c/n.md")
    assert str(e.value).startswith("c/n.md is ") and str(e.value).endswith(
        ": memo does not print it"
    )
    assert e.value.hint == "memo reads text notes; open that file with the program that wrote it."
    assert "NUL bytes" in str(e.value)  # the reason why it is binary, as the index says it
    noise = note(tmp_path, bytes(range(0x80, 0x100)) * 8, "noise.md")  # no NUL, no UTF-8
    with pytest.raises(TargetError) as e:
        read_excerpt(noise, "c/noise.md")
    assert "% of its first 1,024 bytes are not UTF-8 text" in str(e.value)


def words(text: str) -> int:
    """A token count for these tests: one a word (the real one is the model's)."""
    return len(text.split())


def two_notes(tmp_path: Path) -> tuple[Path, Path]:
    a = note(tmp_path, "one two\nthree four\nfive six\n", "a.md")
    b = note(tmp_path, "seven eight\nnine ten\n", "b.md")
    return a, b


def test_several_reads_come_back_in_order_the_first_with_the_others_in_more(tmp_path) -> None:
    a, b = two_notes(tmp_path)
    got = read_excerpts([(a, "a.md", 2, 1), (b, "b.md", None, None)], None, words)
    assert (got.path, got.text, got.next_line) == ("a.md", "three four", 3)
    assert [(m.path, m.text, m.next_line) for m in got.more] == [
        ("b.md", "seven eight\nnine ten", None)
    ]
    d = got.to_dict()
    assert d["more"] == [got.more[0].to_dict()] and "more" not in d["more"][0]
    assert d["next_line"] == 3 and d["more_lines"] == 1
    alone = read_excerpts([(b, "b.md", 1, None)], None, words)
    assert alone.more == () and "more" not in alone.to_dict()


def test_several_reads_share_one_token_budget(tmp_path) -> None:
    a, b = two_notes(tmp_path)
    # 5 tokens: a's three lines are 6, so two of them (4); b gets what is left (1): no line of
    # its 2-token first line, and its next_line says where it would have started
    got = read_excerpts([(a, "a.md", None, None), (b, "b.md", None, None)], 5, words)
    assert got.text == "one two\nthree four" and got.next_line == 3
    (later,) = got.more
    assert (later.text, later.line, later.end_line, later.next_line) == ("", 1, 0, 1)
    # the budget spent to the token: nothing left for b at all
    got = read_excerpts([(a, "a.md", None, None), (b, "b.md", 1, 2)], 6, words)
    assert got.text.count("\n") == 2 and got.more[0].text == ""
    # enough for everything: every line of both
    got = read_excerpts([(a, "a.md", None, None), (b, "b.md", None, None)], 10, words)
    assert got.more_lines == 0 and got.more[0].text == "seven eight\nnine ten"


def test_the_first_read_returns_a_line_even_over_the_budget(tmp_path) -> None:
    a, b = two_notes(tmp_path)
    got = read_excerpts([(a, "a.md", None, None), (b, "b.md", None, None)], 1, words)
    assert got.text == "one two" and got.more[0].text == ""


def test_a_note_that_cannot_be_read_names_itself(tmp_path) -> None:
    a, _ = two_notes(tmp_path)
    with pytest.raises(TargetError, match="^cannot read gone.md: "):
        read_excerpts([(a, "a.md", 1, 1), (tmp_path / "gone.md", "gone.md", 1, 1)], None, words)


def test_a_cut_read_keeps_its_note_and_its_first_line(tmp_path) -> None:
    a, b = two_notes(tmp_path)
    got = read_excerpts([(a, "a.md", 2, None), (b, "b.md", None, None)], 3, words)
    assert (got.path, got.line, got.text, got.next_line) == ("a.md", 2, "three four", 3)
    assert got.more[0].path == "b.md" and got.more[0].text == ""


def test_a_later_read_gets_its_first_line_only_when_that_line_fits(tmp_path) -> None:
    a = note(tmp_path, "one two\n", "a.md")
    wide = note(tmp_path, "three four five\nsix\n", "wide.md")  # its first line: 3 tokens
    snug = note(tmp_path, "three four\nfive six seven\n", "snug.md")  # its first line: 2 tokens
    left_two = [(a, "a.md", None, None)]
    got = read_excerpts([*left_two, (wide, "wide.md", None, None)], 4, words)
    assert got.more[0].text == ""  # 3 > the 2 left, though its second line would fit
    got = read_excerpts([*left_two, (snug, "snug.md", None, None)], 4, words)
    assert got.more[0].text == "three four"  # exactly the 2 left
    # the budget spent to the token: a one-token first line after it gets nothing either
    one = note(tmp_path, "six\nseven\n", "one.md")
    got = read_excerpts([(a, "a.md", None, None), (one, "one.md", None, None)], 2, words)
    assert got.text == "one two" and got.more[0].text == ""


def test_a_note_that_cannot_be_read_says_why_in_words(tmp_path) -> None:
    with pytest.raises(TargetError) as e:
        read_excerpts([(tmp_path / "gone.md", "gone.md", 1, 1)], None, words)
    assert str(e.value) == "cannot read gone.md: No such file or directory"
