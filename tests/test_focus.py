"""A hit's focus (search/focus.py): the lines of its sentences that answer best, found by the
windows' vectors, or by the question's words while vectors are missing, and the text a hit
shows from there. Pure rules first, then real SQLite files and the real model."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memo.collection.chunker import passage_text
from memo.collection.vectors import quantize
from memo.collection.windows import lines_of, sentences, spans, windows
from memo.config import Settings
from memo.library import Library
from memo.search import focus
from memo.search.results import LEAD, TEXT_LIMIT, cut_text, snippet
from memo.server.render import focused

from .watch_helpers import make_collection

SENTENCE = st.text(alphabet="abc xyz.!?\n", min_size=0, max_size=40)


@given(st.lists(SENTENCE, max_size=30))
def test_a_windows_span_runs_from_its_first_sentence_to_its_last(parts):
    text = " ".join(parts)
    got, made = spans(text), windows("H", text)
    assert len(got) == len(made)
    for (a, b), passage in zip(got, made, strict=True):
        inside = sentences(text[a:b])
        assert passage == passage_text("H", " ".join(inside))  # the same sentences, in order
        assert text[a:b] == text[a:b].strip() and inside


def test_a_spans_lines_are_the_note_lines_it_covers():
    text = "One two.\nThree four.\n\nFive six. Seven eight.\nNine ten."
    assert lines_of(text, 10, (0, len(text))) == (10, 14)
    assert lines_of(text, 10, (text.index("Five"), text.index("Seven"))) == (13, 13)
    assert lines_of(text, 1, (text.index("Three"), text.index("Nine") + 3)) == (2, 5)
    assert lines_of(text, 3, (0, 0)) == (3, 3)  # an empty span stays on its line
    assert lines_of("\nTwo three.", 1, (1, 11)) == (2, 2)  # a newline first: the next line
    assert lines_of("One two.\nX", 1, (0, 10)) == (1, 2)  # a last line of one character
    assert focus.lines("\nOne two.", 3, None) == (3, 4)
    assert focus.lines(text, 7, None) == (7, 11)  # no window: the whole chunk
    assert focus.lines(text, 7, 99) == (7, 11)  # a window the chunk no longer has: the same
    nine = NINE.replace(". ", ".\n")  # a sentence a line
    assert focus.lines(nine, 7, len(spans(nine))) == (7, 15)  # one past the last: the whole
    assert focus.lines(nine, 7, 0) == (7, 9) and focus.lines(nine, 7, 3) == (13, 15)


NINE = " ".join(  # sentences over 100 characters: a window every two (windows.SPACING)
    f"Sentence {w} here, with enough words after it to fill a line of prose as people write "
    "them in their notes."
    for w in "one two three four five six seven eight nine".split()
)


def test_by_words_takes_the_window_with_most_of_the_questions_weight():
    # windows of nine sentences: 0-2, 2-4, 4-6, 6-8
    assert focus.by_words(NINE, ["five", "six"], [1.0, 1.0]) == 2  # 4-6 holds both
    assert focus.by_words(NINE, ["one", "nine"], [1.0, 3.0]) == 3  # the rarer word wins
    assert focus.by_words(NINE, ["sentenc"], [1.0]) == 0  # in all: the first of equals
    assert focus.by_words(NINE, ["sentenc", "sentenc"], [1.0, 1.0]) == 0
    assert focus.by_words(NINE, ["wombat"], [5.0]) is None  # in none: the whole chunk
    assert focus.by_words("Short one. Two.", ["short"], [1.0]) is None  # no windows at all
    with pytest.raises(ValueError):  # a stem without its weight is a caller's bug
        focus.by_words(NINE, ["five", "six"], [1.0])


def _unit(k: int) -> np.ndarray:
    v = np.zeros(8, dtype=np.float32)
    v[k] = 1.0
    return v


def test_by_vectors_takes_the_window_nearest_any_phrasing():
    codes = [quantize(_unit(k)).tobytes() for k in range(4)]
    assert focus.by_vectors(codes, [_unit(2)]) == 2
    assert focus.by_vectors(codes, [_unit(7), _unit(3)]) == 3  # the second phrasing is nearer
    both = (_unit(1) + _unit(2)) / np.sqrt(2)
    assert focus.by_vectors(codes, [both]) == 1  # equals: the first
    assert focus.by_vectors([], [_unit(0)]) is None
    assert focus.by_vectors(codes, []) is None


def test_a_hit_shows_its_focus_when_the_cut_would_leave_it_out():
    long = " ".join(f"Filler sentence number {i} says nothing much at all." for i in range(60))
    last = len(spans(long)) - 1
    assert len(long) > TEXT_LIMIT
    shown = focus.shown(long, last)
    a, b = spans(long)[last]
    assert shown.startswith(focus.LEAD) and long[a:b] in shown and len(shown) <= TEXT_LIMIT + 2
    assert focus.shown(long, 0) == cut_text(long)  # within the cut: from the chunk's start
    assert focus.shown(long, None) == cut_text(long)
    assert focus.shown(NINE, 3) == NINE  # short enough to show whole
    assert focus.shown(long, len(spans(long))) == cut_text(long)  # a window it has not


def test_a_hit_shown_from_its_focus_stays_within_the_limit():
    run = " ".join(["x"] * 400)  # one long last sentence: cut at a word, near the limit
    text = " ".join(f"Filler sentence number {i} says little." for i in range(12)) + " " + run
    last = len(spans(text)) - 1
    for limit in (300, 500):
        shown = focus.shown(text, last, limit)
        assert shown.startswith(focus.LEAD) and shown.endswith(" …")
        assert limit - 6 <= len(shown.removesuffix(" …")) <= limit
        a, b = spans(text)[last - 1]
        # a focus ending exactly where the cut from the top ends is within it
        assert focus.shown(text, last - 1, b + 2) == cut_text(text, b + 2)
        assert len(cut_text(text, b + 2)) == b + 2  # (the cut: its sentences and " …")


def test_the_mcp_text_says_the_best_lines_only_when_they_are_fewer():
    hit = {"line": 10, "end_line": 20, "focus_line": 14, "focus_end_line": 16}
    assert focused(hit) == " (best 14-16)"
    assert focused({**hit, "focus_end_line": 14}) == " (best 14)"
    assert focused({**hit, "focus_line": 10, "focus_end_line": 20}) == ""
    assert focused({"line": 3, "end_line": 3}) == ""  # an older answer without a focus


FILLER = [
    "The router sits in the hall cupboard beside the fuse box.",
    "Its lights blink green when the line is up and amber while it starts.",
    "The admin password is printed on a sticker under the case.",
    "Firmware updates come out every spring and take ten minutes to install.",
    "The guest network is called Visitors and has its own password.",
    "Parental controls switch the children's tablets off at nine in the evening.",
    "The printer in the study is connected by cable, not over the air.",
    "A second access point in the attic covers the bedrooms upstairs.",
    "Port forwarding is set up for the security camera in the garden.",
    "The provider's support line is open on weekdays until six.",
    "The monthly data plan has no cap, so streaming is never throttled.",
    "Old cables are kept in the blue box on the top shelf.",
    "The power adapter is twelve volts and must not be swapped for another.",
    "Internet speed tests are logged in a spreadsheet every Sunday morning.",
    "The mesh system was bought in the winter sale three years ago.",
    "Cable modems from the provider are rented, not owned, and go back on moving.",
    "The cupboard door has a vent cut into it so the router never runs hot in summer.",
    "Smart plugs in the kitchen join the network through the second access point.",
    "A spare router of the old model waits in its box in case the new one fails.",
    "The neighbours' networks on channel six crowd the air, so ours stays on eleven.",
]
AT = 18  # the answer's sentence comes after this many: past a hit's TEXT_LIMIT characters
ANSWER = (
    "To reset the wombat router to factory settings, hold the pinhole button for fifteen seconds."
)


def _library(tmp_path, real_embedder, **settings):
    root = tmp_path / "lib"
    body = "\n".join(FILLER[:AT] + [ANSWER] + FILLER[AT:])
    assert len(body) > TEXT_LIMIT  # one chunk, longer than a hit's text
    make_collection(root / "home", {"router.md": f"# Router\n\n## Everything\n\n{body}\n"})
    return root, Library(root, real_embedder, Settings(**settings)), 5 + AT


def test_a_long_chunks_hit_points_at_its_answering_lines_and_shows_them(tmp_path, real_embedder):
    root, lib, answer_line = _library(tmp_path, real_embedder)
    with lib:
        lib.index()
        for mode in ("hybrid", "vec", "lex"):
            (hit,) = lib.search("home", "how do I reset the wombat router to factory settings",
                                k=1, mode=mode).hits  # fmt: skip
            assert (hit.line, hit.end_line) == (5, 5 + len(FILLER))  # the chunk, one section
            assert hit.focus_line <= answer_line <= hit.focus_end_line, mode
            assert hit.focus_end_line - hit.focus_line == 2  # three sentences, a line each
            assert hit.text.startswith(focus.LEAD) and ANSWER in hit.text  # past the cut


def test_a_chunk_without_vectors_yet_is_focused_by_the_questions_words(tmp_path, real_embedder):
    root, lib, answer_line = _library(tmp_path, real_embedder, search_embed_seconds=0)
    with lib:
        res = lib.search("home", "wombat router reset pinhole", k=1)
        assert [f.pending for f in res.freshness] == [1]  # found by its words alone
        (hit,) = res.hits
        assert hit.focus_line <= answer_line <= hit.focus_end_line
        assert ANSWER in hit.text


def test_a_short_chunks_focus_is_all_of_it(notes, embedder):
    with Library(notes, embedder, Settings()) as lib:
        for hit in lib.search(".", "vlan tagging", k=5).hits:
            if len(sentences(hit.text)) <= 3:
                assert (hit.focus_line, hit.focus_end_line) == (hit.line, hit.end_line)
            assert hit.line <= hit.focus_line <= hit.focus_end_line <= max(hit.line, hit.end_line)


def test_a_snippet_starts_at_the_focus_when_its_cut_would_leave_it_out():
    text = "\n".join(f"Line {i} of the chunk, long enough to matter here." for i in range(20))
    # the focus on lines 15-17 of a hit at line 1: past a 300-character cut
    got = snippet(text, 1, 15, 17, 300)
    assert got.startswith(LEAD) and got[len(LEAD) :].startswith("Line 14 of")
    assert snippet(text, 1, 2, 4, 300) == cut_text(text, 300)  # within the cut: from the top
    assert snippet(text, 1, 1, 20, 300) == cut_text(text, 300)  # the whole chunk
    assert snippet(text, 1, 0, 0, 300) == cut_text(text, 300)  # an answer without a focus
    led = LEAD + "Line 14 of the chunk."
    assert snippet(led, 1, 15, 17, 300) == cut_text(led, 300)  # already from the focus


TABLE = """Text before the table.

| Option            | Type     | Description                                         |
|-------------------|----------|-----------------------------------------------------|
| Theme             | Dropdown | Light, Dark, or Adapt to System.                    |
| Light/Dark Toggle | Toggle   | Let readers switch the mode.                        |
| Show hover        | Toggle   | Preview a [[Page preview\\|linked note]] on hover.  |
| Stack pages       | Toggle   | Stack tabs.                                         |"""


def test_a_snippet_in_a_table_shows_the_rows_under_the_header_without_padding():
    """The page, the terminal and the MCP text showed an aligned table's header alone: the
    padding filled the cut. Now: the header, then the focus rows; a gap says rows were left
    out; an escaped pipe stays inside its cell."""
    got = snippet(TABLE, 10, 16, 16, 240)  # the focus: the third row (line 16)
    assert got.split("\n") == [
        "| Option | Type | Description |",
        "…",
        "| Show hover | Toggle | Preview a [[Page preview\\|linked note]] on hover. |",
    ]
    got = snippet(TABLE, 10, 14, 15, 240)  # the first two rows: right under the header
    assert got.split("\n") == [
        "| Option | Type | Description |",
        "| Theme | Dropdown | Light, Dark, or Adapt to System. |",
        "| Light/Dark Toggle | Toggle | Let readers switch the mode. |",
    ]
    whole = snippet(TABLE, 10, 10, 17, 240)  # a focus that starts before the table: as before
    assert whole == cut_text(TABLE, 240)
