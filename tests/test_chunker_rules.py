"""`chunker.readable`, the lines of a note as the index reads them (what the web page shows
beside a hit), as a reader meets it (issue 32: mutation found no test reaching it)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memo.collection.chunker import readable

NOTE = (
    "---\ntitle: [[x]]\n---\n# H [[a|b]]\n```\n[[c|d]] %%x%%\n```\n"
    "see [[e|f]] and %%hidden%% ok ^block1\n"
)


def test_readable_reads_prose_and_keeps_frontmatter_and_code_as_written() -> None:
    assert readable(NOTE) == [
        "---",
        "title: [[x]]",
        "---",  # frontmatter as written
        "# H b",  # a wikilink reads as its label
        "```",
        "[[c|d]] %%x%%",
        "```",  # fenced code untouched
        "see f and  ok",  # the comment hidden, the block id dropped
        "",
    ]


def test_without_frontmatter_the_first_line_is_prose() -> None:
    assert readable("see [[e|f]]\n---\n[[g]]") == ["see f", "---", "g"]


lines = st.lists(
    st.sampled_from(["---", "# T", "```", "[[a|b]]", "%%", "x %%y%% z", "", "t"]), max_size=12
)


@given(lines)
def test_readable_is_line_for_line(ls: list[str]) -> None:
    """Whatever the note, line k of what it reads is line k of the note."""
    assert len(readable("\n".join(ls))) == len("\n".join(ls).split("\n"))
