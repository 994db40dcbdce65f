"""Markdown read as a person reads it (collection/markdown.py), rule by rule, as the chunker and
the note page meet it: which words a line shows, which lines read as nothing and why, what a
note's title and tags are (issue 32: each rule a mutant showed unpinned, on a small real note).
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memo.collection.chunker import chunk_note
from memo.collection.markdown import (
    ALIASES_CHARS,
    ALIASES_SHOWN,
    HIDDEN_BLOCK_ID,
    HIDDEN_COMMENT,
    HIDDEN_EMBED,
    HIDDEN_MARKUP,
    HIDDEN_PROPERTY,
    HIDDEN_UNCLOSED,
    HTML_COMMENTS,
    WIKILINK,
    Reading,
    block_id,
    comment_spans,
    fence_lines,
    fenced,
    frontmatter_tags,
    heading,
    heading_marker,
    literal_spans,
    locate,
    note_title,
    read_lines,
    readable_lines,
)
from memo.embed.tokens import estimate_tokens
from memo.server.web.source import source_lines


def read(text: str, code: set[int] = frozenset()) -> Reading:
    """`text` read line by line; the lines numbered in `code` are fenced code."""
    lines = text.split("\n")
    return read_lines(lines, [k in code for k in range(len(lines))])


def shown(text: str) -> list[str]:
    return read(text).lines


# ---------------------------------------------------------------- wikilinks and embeds
def test_a_wikilink_shows_its_alias_else_its_note_name_and_headings():
    assert shown("see [[Note|the words]] here") == ["see the words here"]
    assert shown("| [[Note\\|in a table]] |") == ["| in a table |"]  # a table's escaped bar
    assert shown("[[Note| ]] and [[Other|]]") == ["Note and Other"]  # an empty alias: the name
    assert shown("[[a/b/Deep note]]") == ["Deep note"]  # the folders are not shown
    assert shown("[[Note.md]] [[Shout.MD]]") == ["Note Shout"]
    assert shown("[[ Note # Part # Sub ]]") == ["Note Part Sub"]
    assert shown("| [[Note\\|]] |") == ["| Note |"]  # never the escaping backslash
    assert shown("[[Note#^block-1]] [[#Here]] [[#^x]]") == ["Note Here "]


def test_an_embedded_note_reads_as_its_name_and_a_file_as_nothing():
    assert shown("![[Other note]]") == ["Other note"]
    assert shown("![[Doc.MD]] ![[v1.2/Page]]") == ["Doc Page"]  # a dot in a folder: a note
    assert shown("![[Note\\|alias]]") == ["alias"]
    assert shown("![[Note.md\\|alias]]") == ["alias"]  # a table's bar ends the name
    assert shown("![[Release 1.2.md]] ![[a/v1.2/Page]]") == ["Release 1.2 Page"]
    # the name ends at the first bar or `#`: dots after it are no extension
    assert shown("![[Note|v1.2]] ![[Note#v1.2#Sub]]") == ["v1.2 Note v1.2 Sub"]
    assert shown("![[Chapter|ch. 2|wide]]") == ["ch. 2|wide"]
    r = read("![[pic.PNG|100]]\n![[icon.svg#icon]]\n![[a/b.pdf]] ok\n![[My photo.png]]")
    assert r.lines == ["", "", " ok", ""]
    assert r.hidden == {0: HIDDEN_EMBED, 1: HIDDEN_EMBED, 3: HIDDEN_EMBED}
    assert shown("[[image.png]]") == ["image.png"]  # a link (not an embed) shows its target


def test_an_image_reads_as_its_alt_text():
    r = read("![a chart](pic.png) after\n![](p.png)")
    assert r.lines == ["a chart after", ""] and r.hidden == {1: HIDDEN_EMBED}


# ---------------------------------------------------------------- literal spans
def test_inline_code_is_a_run_of_backticks_up_to_the_next_run_as_long():
    assert literal_spans("plain") == literal_spans("") == []
    assert literal_spans("a `b` c") == [(2, 5)]
    assert literal_spans("`` a ` b `` c `d`") == [(0, 11), (14, 17)]
    assert literal_spans("` a ``b`` c") == [(4, 9)]  # a single ` never closed: literal
    assert literal_spans("\\`a` `b`") == [(3, 6)]  # an escaped backtick opens nothing
    assert literal_spans("a \\` b") == [] and literal_spans("\\` $x$") == [(3, 6)]
    assert shown("`[[a]]` [[b]] ``[[c]]``") == ["`[[a]]` b ``[[c]]``"]


def test_inline_math_is_dollars_with_no_space_inside_and_no_digit_after():
    assert literal_spans("so $x+1$ then") == [(3, 8)]
    assert literal_spans("$ x$ $x $ \\$x$") == []
    assert literal_spans("from $5 to $6") == []  # prices, not math
    assert literal_spans("$$a b$$ c") == [(0, 7)]
    assert shown("$m [[a]]$ `x` [[b]]") == ["$m [[a]]$ `x` b"]
    assert shown("[[a]] `[[b]]` [[c]]") == ["a `[[b]]` c"]


def test_math_and_code_spans_come_in_order_whichever_kind_comes_first():
    assert literal_spans("$m$ `c` $n$") == [(0, 3), (4, 7), (8, 11)]
    assert literal_spans("`$a$` $b$") == [(0, 5), (6, 9)]  # math inside code is code
    assert literal_spans("$a `x` b$") == [(3, 6)]  # math never spans code
    assert shown("$[[x]]$ [[a]] `[[y]]` [[b]]") == ["$[[x]]$ a `[[y]]` b"]


# ---------------------------------------------------------------- comments
def test_a_comment_hides_its_words_on_one_line_and_over_several():
    assert shown("a %%b%% c %%d%% e") == ["a  c  e"]
    r = read("a %%b\nc\n\nd%% e")
    assert r.lines == ["a ", "", "", " e"]
    assert r.hidden == {1: HIDDEN_COMMENT}  # the blank line held no words
    assert read("%%only%%").hidden == {0: HIDDEN_COMMENT}
    assert shown("a %%%% b") == ["a  b"]  # an empty comment closes at once
    assert shown("%%\nx%% y %%z%% w") == ["", " y  w"]  # closed, then one more on the line


def test_percent_signs_in_code_or_math_open_no_comment():
    assert shown("a `%%` then %%hid%% shown") == ["a `%%` then  shown"]
    assert shown("`%%` `%%` x %%h%% y") == ["`%%` `%%` x  y"]
    assert shown("$50%%$ and %%no%% yes") == ["$50%%$ and  yes"]
    assert shown("`code`%%hidden%% shown") == ["`code` shown"]  # right after code: opens


def test_a_comment_hides_block_math_and_block_math_hides_a_comment():
    r = read("%%\n$$\n[[hidden]]\n%%\n[[shown]]")
    assert r.lines == ["", "", "", "", "shown"]
    assert set(r.hidden) == {0, 1, 2, 3} and r.warnings == []
    assert shown("$$\n[[a]] %% x\n$$\n[[b]]") == ["$$", "[[a]] %% x", "$$", "b"]
    assert shown("  $$ [[a]] $$\n[[b]]") == ["  $$ [[a]] $$", "b"]  # opened and closed
    assert shown("$$\nx\nend $$\n[[b]]") == ["$$", "x", "end $$", "b"]
    assert shown("$$\nx\n[[y]]\n$$\n[[z]]") == ["$$", "x", "[[y]]", "$$", "z"]
    assert shown("$$$$\n[[a]]") == ["$$$$", "a"]  # empty, closed on its line


def test_fenced_code_is_read_as_written():
    r = read("```\n%% [[a]] ^id #t\n```\n[[b]]", code={0, 1, 2})
    assert r.lines == ["```", "%% [[a]] ^id #t", "```", "b"]
    assert r.hidden == {} and r.tags == [] and r.warnings == []


def test_an_unclosed_comment_hides_the_rest_and_names_where_it_opened():
    r = read("%%x%%\ntext\n%% open\nhidden")
    assert r.lines == ["", "text", "", ""]
    assert r.hidden == {0: HIDDEN_COMMENT, 2: HIDDEN_UNCLOSED, 3: HIDDEN_UNCLOSED}
    assert r.warnings == [
        "line 3: a %% comment never closes: lines 3-4 are hidden, as in Obsidian (close it with %%)"
    ]
    first = read("%% open\nrest")
    assert first.hidden == {0: HIDDEN_UNCLOSED, 1: HIDDEN_UNCLOSED}
    assert first.warnings[0].startswith("line 1: a %% comment never closes: lines 1-2 ")
    again = read("x\n%%a%% b %%c\nd")  # closed, then opened again on the same line
    assert again.lines == ["x", " b ", ""] and again.warnings[0].startswith("line 2:")


def test_a_comment_closed_and_reopened_on_one_line_is_a_new_comment():
    """The comment that never closes is the one opened on line 4, not the one of line 2 that
    line 4 closed: the warning names line 4, and lines 2-3 were inside a closed comment."""
    r = read("one\n%% open\nmid\nend %% shown %% reopen\nz")
    assert r.lines == ["one", "", "", " shown ", ""]
    assert r.hidden == {1: HIDDEN_COMMENT, 2: HIDDEN_COMMENT, 4: HIDDEN_UNCLOSED}
    assert r.warnings[0].startswith("line 4: a %% comment never closes: lines 4-5 ")


# ---------------------------------------------------------------- quotes, properties, ids
def test_quotes_and_callouts_lose_their_markers():
    assert shown("> [!tip]- Title here") == ["Title here"]
    assert shown("  >> nested > quote") == ["nested > quote"]
    r = read("> [!note]\n>\n> %%x%%")
    assert r.lines == ["", "", ""]
    assert r.hidden == {0: HIDDEN_MARKUP, 1: HIDDEN_MARKUP, 2: HIDDEN_MARKUP}


def test_logseq_id_and_collapsed_properties_read_as_nothing_other_properties_stay():
    r = read("id:: 64f0-aa\n- collapsed:: true\nkey:: value\nid::x")
    assert r.lines == ["", "", "key:: value", "id::x"]
    assert r.hidden == {0: HIDDEN_PROPERTY, 1: HIDDEN_PROPERTY}


def test_a_block_id_at_the_end_of_a_line_reads_as_nothing():
    r = read("text ^abc-1\n^only\nx^2 y\n`x ^id`\n$a ^b$")
    assert r.lines == ["text", "", "x^2 y", "`x ^id`", "$a ^b$"]
    assert r.hidden == {1: HIDDEN_BLOCK_ID}


def test_what_reads_as_nothing_says_the_first_reason():
    r = read("%%c%% ![[a.png]]\n![[a.png]] ^id\n> ![[b.png]]")
    assert [ln.strip() for ln in r.lines] == ["", "", ""]
    assert r.hidden == {0: HIDDEN_EMBED, 1: HIDDEN_BLOCK_ID, 2: HIDDEN_EMBED}


# ---------------------------------------------------------------- tags
def test_inline_tags_are_collected_once_lowercased_in_order():
    r = read("#Zeta and (#alpha), #zeta #123 #2024-q1 a#b `#code` $#m$ #nest/ed/")
    assert r.tags == ["zeta", "alpha", "2024-q1", "nest/ed"]
    assert r.lines == ["#Zeta and (#alpha), #zeta #123 #2024-q1 a#b `#code` $#m$ #nest/ed/"]
    assert read("#todo`now` (#next$x$)").tags == ["todo", "next"]  # a tag ends at code


def test_a_tag_in_a_heading_of_any_level_is_a_tag():
    assert read("# Project #active\n## Part #later\n#not-a-heading").tags == [
        "active",
        "later",
        "not-a-heading",
    ]


def test_frontmatter_tags_are_a_list_or_one_string_without_hashes():
    assert frontmatter_tags({"tags": "a, b  c,#d"}) == ["a", "b", "c", "d"]
    assert frontmatter_tags({"tags": ["#x", " y ", "", "#", 2024]}) == ["x", "y", "2024"]
    assert frontmatter_tags({"tags": 5}) == frontmatter_tags({}) == []
    assert frontmatter_tags({"tags": ["X", "#xx"]}) == ["X", "xx"]


# ---------------------------------------------------------------- titles
def test_the_title_is_the_h1_else_the_frontmatter_title_else_the_file_name():
    assert note_title("stem", {"title": "T"}, "The H1") == "The H1"
    assert note_title("stem", {"title": "  A   title\n"}) == "A title"
    assert note_title("stem", {"title": 2024}) == "stem"  # not a string: not a title
    assert note_title("stem", {"title": "  "}, "") == "stem"
    assert note_title("stem", {}) == "stem"


def test_aliases_follow_the_title_once_each_not_repeating_it():
    assert note_title("stem", {"aliases": "one"}) == "stem (one)"
    got = note_title("Stem", {"aliases": ["STEM", "a", "a", "", " b \t c ", 7]})
    assert got == "Stem (a, b c, 7)"
    assert note_title("stem", {"aliases": {"a": 1}}) == note_title("stem", {"aliases": []})
    assert note_title("stem", {"aliases": []}) == "stem"


def test_at_most_three_aliases_and_sixty_characters_the_first_ones_in_order():
    assert ALIASES_SHOWN == 3 and ALIASES_CHARS == 60
    assert note_title("t", {"aliases": ["a", "b", "c", "d"]}) == "t (a, b, c)"
    fits = ["x" * 28, "y" * 30]  # 28 + 2 + 30 = 60 characters
    assert note_title("t", {"aliases": fits}) == f"t ({', '.join(fits)})"
    assert note_title("t", {"aliases": ["x" * 29, "y" * 30, "z"]}) == f"t ({'x' * 29})"
    assert note_title("t", {"aliases": ["x" * 61, "short"]}) == "t"


def test_the_chunker_heads_every_chunk_with_the_title_and_joins_both_tag_kinds():
    text = "---\ntitle: Given\naliases: [Other]\ntags: [front]\n---\nBody #inline\n"
    note = chunk_note(text, estimate_tokens, name="file")
    assert note.title == "Given (Other)" and note.chunks[0].heading == "Given (Other)"
    assert note.tags == ["front", "inline"]
    assert readable_lines(["[[a|b]] %%c%%", "```"], [False, True]) == (["b ", "```"], [])


def test_a_code_mask_of_another_length_is_an_error_not_a_shorter_reading():
    with pytest.raises(ValueError):
        read_lines(["a", "b"], [False])


# ---------------------------------------------------------------- invariants
_pieces = st.sampled_from(
    ["%%", "`", "$", "$$", "[[a|b]]", "![[p.png]]", "#t", " ^id", "> ", "[!x] ", "id:: v", "w "]
)


@given(st.lists(st.lists(_pieces, max_size=6).map("".join), max_size=10))
def test_a_reading_keeps_the_line_count_and_explains_every_line_it_empties(lines):
    r = read_lines(lines, [False] * len(lines))
    assert len(r.lines) == len(lines)
    pairs = enumerate(zip(lines, r.lines, strict=True))
    emptied = {k for k, (a, b) in pairs if a.strip() and not b.strip()}
    assert emptied <= set(r.hidden)
    assert all(lines[k].strip() for k in r.hidden)  # a blank line is never "hidden"


@given(st.lists(_pieces, max_size=12).map("".join))
def test_literal_spans_are_ordered_disjoint_and_delimited(line):
    spans = literal_spans(line)
    assert all(a < b <= c for (a, b), (c, _) in itertools.pairwise(spans))
    for a, b in spans:
        assert line[a] in "`$" and line[b - 1] == line[a]


# ---------------------------------------------------------------- one rule each (issue 49)
def test_one_wikilink_rule_a_single_bracket_inside_does_not_end_it():
    """Obsidian 1.13.7 reads `[[Sq]uare]]` as a link to `Sq]uare`, `[[a [[Inner]] b]]` as
    `Inner`, and a line ending inside `[[` as no link: the reading, the links and the note
    page all take WIKILINK, so they agree on every edge."""
    cases = {
        "[[Sq]uare]]": ("Sq]uare", ["Sq]uare"]),
        "[[x]y|shown]]": ("shown", ["x]y"]),
        "[[a]]]": ("a]", ["a"]),
        "[[a [[Inner]] b]]": ("[[a Inner b]]", ["Inner"]),
        "[[wiki [link]]]": ("[[wiki [link]]]", []),  # a `[` inside: no link (unobserved)
        "[[open": ("[[open", []),
        "[[]]": ("[[]]", []),
    }
    for text, (words, targets) in cases.items():
        note = chunk_note(f"# N\n{text}", estimate_tokens, name="n")
        assert note.chunks[0].text == words, text
        assert [x.target for x in note.links.links] == targets, text
        assert [m[2].split("|")[0] for m in WIKILINK.finditer(text)] == targets, text
        page = str(source_lines([text], 1, frozenset())[0].text)
        assert page.count('class="wl') == len(targets), text


def test_a_heading_is_one_to_six_hashes_the_chunker_splits_at_three():
    assert heading("# Title #") == (1, "Title")
    assert heading("   ###### Six ######  ") == (6, "Six")
    assert heading("#") == (1, "") and heading("# #") == (1, "") and heading("#\tTab") == (1, "Tab")
    for text in ("####### seven", "#tag", "    # four spaces", "Setext\n==="):
        assert heading(text) is None and heading_marker(text) == "", text
    assert heading_marker("  ## Sub") == "  ##"
    text = "# A\n#### Deep\nx\n#\ny\n## B\nz"
    note = chunk_note(text, estimate_tokens, name="n")
    # `#` alone is an empty H1: a border that empties the path, as it always did
    assert [(c.line, c.heading) for c in note.chunks] == [(2, "A"), (5, ""), (7, "B")]
    lines = text.split("\n")
    assert [locate(lines, h) for h in ("A", "Deep", "B", "A#B")] == [1, 2, 6, 6]


def test_fences_are_read_once_a_fence_inside_a_longer_one_is_code():
    lines = ["````", "```", "# code", "````", "# Heading", "~~~", "x"]
    assert fenced(lines) == [True, True, True, True, False, True, True]
    assert fence_lines(lines) == [True, False, False, True, False, True, False]
    kinds = [x.kind for x in source_lines(lines, 1, frozenset())]
    assert kinds[:5] == ["code fence", "code", "code", "code fence", "h h1"]
    assert fenced(["---", "```", "---"], 3) == [False, False, False]


def test_a_block_id_is_read_once_the_reading_the_page_and_related_agree():
    assert block_id("Para line ^block-1") == "block-1" and block_id("^lonely") == "lonely"
    for text in ("x^glued", "^a.b", "mid ^id text", "^^^^", "^-dash"):
        assert block_id(text) == "", text
    lines = ["# N", "Para line ^block-1", "", "- item ^item-id", "^^^^"]
    assert shown("\n".join(lines))[1] == "Para line"
    page = [str(x.text) for x in source_lines(lines, 1, frozenset())]
    assert '<span class="bid">^block-1</span>' in page[1] and "bid" not in page[4]
    assert [locate(lines, s) for s in ("^block-1", "^item-id", "^^^")] == [2, 4, None]


def test_comments_are_read_once_the_page_adds_html_comments():
    line = "a %%b%% `%%` c %%open"
    assert comment_spans(line) == ([(2, 7), (15, len(line))], "%%")
    assert comment_spans("still%% out <!-- x", "%%") == ([(0, 7)], "")
    both = comment_spans("still%% out <!-- x", "%%", HTML_COMMENTS)
    assert both == ([(0, 7), (12, 18)], "<!--")
    page = [x.why for x in source_lines(["%%", "[[Hidden]]", "%%", "shown"], 1, frozenset())]
    assert page == [HIDDEN_COMMENT] * 3 + [""]
