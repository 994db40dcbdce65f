"""The link graph (issue 45, item 1): what a note's links are as Obsidian reads them, which note
each opens as Obsidian resolves it, and an index that keeps them as fresh as the chunks.

Extraction and resolution are pinned rule by rule (pure functions: a note's text, a list of
note paths); the graph through a real library of real SQLite indexes, edited on disk.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memo.collection.chunker import chunk_note
from memo.collection.links import Link, NoteLinks
from memo.collection.markdown import locate
from memo.config import Settings
from memo.embed.tokens import estimate_tokens
from memo.library import Library
from memo.library.linkgraph import Resolver, Target


def links_of(text: str) -> list[tuple[int, str, str, str]]:
    """(line, kind, target, sub) of every link the text stage finds in a note."""
    got = chunk_note(text, estimate_tokens, name="note").links
    return [(x.line, x.kind, x.target, x.sub) for x in got.links]


# ---------------------------------------------------------------------- what a link is
def test_wikilinks_embeds_headings_and_blocks():
    text = "\n".join(
        [
            "# Note",  # 1
            "See [[Guide]], [[Guide#Setup|the setup]] and [[Help#Questions#Bugs]].",  # 2
            "![[Guide#^step-two]] and ![[Other note]]",  # 3
            "| a | [[Table note\\|shown]] |",  # 4: Obsidian's escaped bar in a table
            "[[Sq]uare]] [[a [[Inner]] b]]",  # 5: `]` alone ends nothing; a `[` starts anew
        ]
    )
    assert links_of(text) == [
        (2, "wikilink", "Guide", ""),
        (2, "wikilink", "Guide", "Setup"),
        (2, "wikilink", "Help", "Questions#Bugs"),
        (3, "embed", "Guide", "^step-two"),
        (3, "embed", "Other note", ""),
        (4, "wikilink", "Table note", ""),
        (5, "wikilink", "Sq]uare", ""),
        (5, "wikilink", "Inner", ""),
    ]


def test_markdown_links_to_notes_are_decoded_urls_are_not_links():
    text = "\n".join(
        [
            "A [note](Folder/My%20Note.md#Some%20Part) and [bare](Other) here.",  # 1
            "[web](https://example.com/x.md) [mail](mailto:a@b.c) [up](#Heading)",  # 2
            "[spaced](My Note.md) is no link; [angled](<My Note.md>) is one.",  # 3
            '![alt](pic.png) [titled](Guide.md "a title") [[Wiki]](after)',  # 4
        ]
    )
    assert links_of(text) == [
        (1, "markdown", "Folder/My Note.md", "Some Part"),
        (1, "markdown", "Other", ""),
        (2, "markdown", "", "Heading"),
        (3, "markdown", "My Note.md", ""),
        (4, "markdown", "Guide.md", ""),
        (4, "wikilink", "Wiki", ""),
    ]


def test_no_link_where_obsidian_reads_no_syntax_nor_to_a_file():
    text = "\n".join(
        [
            "# Note",
            "`[[Inline code]]` and $[[Math]]$ and %%[[Comment]]%% are text.",
            "```",
            "[[Fenced]]",
            "```",
            "%% a comment",
            "over lines [[Hidden]]",
            "%%",
            "$$",
            "[[Block math]]",
            "$$",
            "[[#Heading of this note]] ![[image.png]] [[Figure 1.pdf]] ![[scheme.canvas]]",
            "After all that: [[Kept]]",
        ]
    )
    assert links_of(text) == [
        (12, "wikilink", "", "Heading of this note"),  # the note itself, at that heading
        (13, "wikilink", "Kept", ""),
    ]


def test_frontmatter_links_are_property_links_on_their_own_line_and_aliases_are_read():
    text = "---\naliases: [Doggo, Woofer]\nup: '[[Parent note]]'\n---\n# Dog\n\n[[Bone]]\n"
    note = chunk_note(text, estimate_tokens, name="Dog").links
    assert note == NoteLinks(
        (Link(3, "property", "Parent note"), Link(7, "wikilink", "Bone")), ("Doggo", "Woofer")
    )


# ---------------------------------------------------------------------- which note it opens
# Obsidian 1.13.7's own answers (getFirstLinkpathDest, markdown-vault-mcp issue #1350): an exact
# vault path wins, then the linking note's folder, then the shortest path string
TIE = ["Note.md", "zzzz/Note.md", "a/b/Note.md", "zzzz/src.md", "a/b/src.md", "src.md"]


def opens(notes: list[str], target: str, source: str, aliases=()) -> Target | None:
    return Resolver(notes, aliases).resolve(target, source)


@pytest.mark.parametrize("source", ["src.md", "zzzz/src.md", "a/b/src.md"])
def test_an_exact_vault_path_wins_from_every_folder(source):
    assert opens(TIE, "Note", source) == Target("Note.md", "path")


def test_then_the_linking_notes_own_folder_then_the_shortest_path():
    notes = [n for n in TIE if n != "Note.md"] + ["b/Note.md", "zzzz/deep/src.md"]
    assert opens(notes, "Note", "zzzz/src.md") == Target("zzzz/Note.md", "name")
    assert opens(notes, "Note", "a/b/src.md") == Target("a/b/Note.md", "name")
    assert opens(notes, "Note", "zzzz/deep/src.md").path == "b/Note.md"  # no ancestor folder
    assert opens(notes, "Note", "src.md").path == "b/Note.md"
    two = ["a/b/Note.md", "zzzz/Note.md"]
    assert opens(two, "Note", "src.md").path == "a/b/Note.md"  # 11 characters beat 12


def test_a_path_suffix_names_a_deeper_note_and_an_exact_one_beats_it():
    assert opens(["a/b/Note.md"], "b/Note", "x.md") == Target("a/b/Note.md", "name")
    both = ["a/b/Note.md", "b/Note.md", "a/b/src.md"]
    assert opens(both, "b/Note", "a/b/src.md") == Target("b/Note.md", "path")


def test_case_extension_and_unicode_form_are_read_as_obsidian_reads_them():
    notes = ["Log.md", "Cafe\u0301.md"]
    assert opens(notes, "log", "x.md").path == "Log.md"
    assert opens(notes, "LOG.MD", "x.md").path == "Log.md"
    assert opens(notes, "Caf\u00e9", "x.md").path == "Cafe\u0301.md"


def test_relative_links_resolve_from_the_linking_note_and_nowhere_else():
    notes = ["y.md", "a/x.md", "elsewhere/Missing.md"]
    assert opens(notes, "", "a/x.md") == Target("a/x.md", "self")  # [[#Heading]]
    assert opens(notes, "../y", "a/x.md") == Target("y.md", "relative")
    assert opens(notes, "./Missing", "a/x.md") is None
    assert opens(notes, "../../y", "a/x.md") is None  # above the library


def test_an_alias_resolves_only_when_no_note_has_that_name_and_says_so():
    notes = ["Dog.md", "Doggo.md", "Cat.md"]
    aliases = [("Dog.md", "Doggo"), ("Cat.md", "Kitty")]
    assert opens(notes, "Doggo", "x.md", aliases) == Target("Doggo.md", "path")
    assert opens(notes, "kitty", "x.md", aliases) == Target("Cat.md", "alias")
    assert opens(notes, "Nobody", "x.md", aliases) is None


def test_equal_paths_go_to_the_linking_notes_side_and_a_vault_keeps_its_links():
    notes = ["en/P/Headless.md", "ru/P/Headless.md", "ru/Q/src.md", "en/Q/src.md"]
    assert opens(notes, "Headless", "ru/Q/src.md").path == "ru/P/Headless.md"
    assert opens(notes, "Headless", "en/Q/src.md").path == "en/P/Headless.md"
    top = lambda p: p.split("/")[0]  # noqa: E731
    vaults = Resolver(["v1/Note.md", "v2/Long/Path/Note.md", "v2/src.md"], [], top, top)
    assert vaults.resolve("Note", "v2/src.md").path == "v2/Long/Path/Note.md"


def test_a_subpath_opens_at_its_heading_or_the_first_line_of_its_block():
    lines = [
        "# Guide",  # 1
        "## Setup",  # 2
        "First: a paragraph",  # 3
        "that ends with its id ^para",  # 4
        "",
        "- one item",  # 6
        "- another ^item",  # 7
        "",
        "> a quote",  # 9
        "",
        "^quote",  # 11
        "## Other",  # 12
        "### Setup",  # 13
        "```",
        "## Setup",  # 15: code, no heading
        "```",
    ]
    assert [locate(lines, s) for s in ("^para", "^item", "^quote", "^none")] == [3, 7, 9, None]
    assert locate(lines, "Setup") == 2
    assert locate(lines, "Other#Setup") == 13  # each heading after the one before it
    assert locate(lines, "setup: ") == 2  # as a link names it: case, what links leave out
    assert locate(lines, "Nowhere#Setup") == 2  # a chain that fails: its last heading


# ---------------------------------------------------------------------- the graph, fresh
def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


HOME = """---
up: "[[Index]]"
---
# Home

See [[Guide]], [[guide#Setup|the setup]] and ![[Guide#^step-two]].
A [markdown link](Sub/Deep%20Note.md#Part) and [the web](https://example.com).
`[[Code Link]]` %%[[Comment Link]]%%

```
[[Fenced Link]]
```

[[Nowhere]] and [[Doggo]] and ![[pic.png]] and [[#Home]]
"""
GUIDE = "# Guide\n\nIntro.\n\n## Setup\n\nFirst step.\n\nSecond step. ^step-two\n"


def make_graph(root: Path) -> Path:
    write(root / "notes" / "_meta.yaml", "description: notes that link\n")
    write(root / "notes" / "Home.md", HOME)
    write(root / "notes" / "Guide.md", GUIDE)
    write(root / "notes" / "Index.md", "# Index\n\n- [[Home]]\n")
    write(root / "notes" / "Sub" / "Deep Note.md", "# Deep\n\n## Part\n\nBack to [[Home]].\n")
    write(root / "other" / "_meta.yaml", "description: another collection\n")
    write(root / "other" / "Dog.md", "---\naliases: [Doggo]\n---\n# Dog\n\nSee [[Guide]].\n")
    write(root / "other" / "Guide.md", "# Other guide\n\nFor dogs.\n")
    return root


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[Library]:
    root = make_graph(tmp_path / "lib")
    with Library(root, None, Settings()) as lib:  # no model: the graph is the text stage's
        lib.index()
        yield lib


def test_a_notes_links_resolve_across_collections_with_their_lines(graph):
    r = graph.related("notes/Home.md")
    got = [(x.path, x.line, x.from_line, x.kind, x.heading, x.by) for x in r.links]
    assert got == [
        ("notes/Index.md", 1, 2, "property", "", "name"),
        ("notes/Guide.md", 1, 6, "wikilink", "", "name"),
        ("notes/Guide.md", 5, 6, "wikilink", "Setup", "name"),
        ("notes/Guide.md", 9, 6, "embed", "^step-two", "name"),
        ("notes/Sub/Deep Note.md", 3, 7, "markdown", "Part", "name"),
        ("other/Dog.md", 1, 14, "wikilink", "", "alias"),
        ("notes/Home.md", 4, 14, "wikilink", "Home", "self"),
    ]
    assert [(x.target, x.line) for x in r.unresolved] == [("Nowhere", 14)]


def test_backlinks_are_the_notes_that_open_this_one_with_the_line_and_its_text(graph):
    r = graph.related("notes/Home.md")
    assert [(x.path, x.line, x.text) for x in r.backlinks] == [
        ("notes/Index.md", 3, "- [[Home]]"),
        ("notes/Sub/Deep Note.md", 5, "Back to [[Home]]."),
    ]
    guide = graph.related("notes/Guide.md")  # Dog's [[Guide]] opens other/Guide.md
    assert [(x.path, x.times) for x in guide.backlinks] == [("notes/Home.md", 3)]
    assert [x.path for x in graph.related("other/Guide.md").backlinks] == ["other/Dog.md"]


def indexed_at(lib: Library, coll: str, path: str) -> float:
    c = next(c for c in lib.collections() if c.rel == coll)
    rows, _ = c.read(
        lambda s: s.conn.execute("SELECT indexed_at FROM files WHERE path = ?", (path,)).fetchall()
    )
    return float(rows[0][0])


@pytest.mark.edits_notes
def test_a_note_added_anywhere_resolves_links_written_before_it(graph):
    before = indexed_at(graph, "notes", "Home.md")
    root = graph.root
    write(root / "later" / "_meta.yaml", "description: a collection made afterwards\n")
    write(root / "later" / "Nowhere.md", "# Nowhere\n\nNow it exists.\n")
    r = graph.related("notes/Home.md")
    assert ("later/Nowhere.md", 14) in [(x.path, x.from_line) for x in r.links]
    assert r.unresolved == []
    assert indexed_at(graph, "notes", "Home.md") == before  # the linking note was not re-read
    assert [x.path for x in graph.related("later/Nowhere.md").backlinks] == ["notes/Home.md"]


@pytest.mark.edits_notes
def test_edits_and_deletions_are_caught_up_before_the_answer(graph):
    root = graph.root
    dog = root / "other" / "Dog.md"
    write(dog, "# Dog\n\nNo link any more.\n")
    os.utime(dog, ns=(time.time_ns(), time.time_ns() + 10**9))  # a new mtime, surely
    assert graph.related("other/Guide.md").backlinks == []
    assert "other/Dog.md" not in [x.path for x in graph.related("notes/Home.md").links]
    (root / "notes" / "Sub" / "Deep Note.md").unlink()
    r = graph.related("notes/Home.md")
    assert [x.path for x in r.backlinks] == ["notes/Index.md"]
    assert ("Sub/Deep Note.md", 7) in [(x.target, x.line) for x in r.unresolved]
    c = next(c for c in graph.collections() if c.rel == "notes")
    rows, _ = c.read(lambda s: s.conn.execute("SELECT path FROM links").fetchall())
    assert {p for (p,) in rows} == {"Home.md", "Index.md"}  # its links went with its row


@pytest.mark.edits_notes
def test_a_note_memo_skips_is_still_a_link_target_and_says_what_it_cannot_tell(graph):
    (graph.root / "notes" / "Guide.md").write_bytes(b"# Guide\n\x00binary\n")
    r = graph.related("notes/Guide.md")
    assert r.links == [] and r.warnings[-1] == (
        "notes/Guide.md was skipped (binary: NUL bytes in a .md file): its own links and "
        "similar notes are not known"
    )
    assert [x.path for x in r.backlinks] == ["notes/Home.md"]  # Obsidian opens it all the same


def test_a_line_narrows_the_links_to_its_section_and_a_folder_is_refused(graph):
    r = graph.related("notes/Home.md:14")
    assert r.section == (4, 15)
    assert graph.related("notes/Guide.md:7").section == (5, 10)
    from memo.errors import TargetError

    with pytest.raises(TargetError, match="not a note"):
        graph.related("notes")
    with pytest.raises(TargetError, match="past the note's end"):
        graph.related("notes/Guide.md:99")


@pytest.fixture
def examples(notes: Path, embedder) -> Iterator[Library]:
    with Library(notes, embedder, Settings()) as lib:
        lib.index()
        yield lib


def test_similar_notes_come_from_the_stored_vectors_nearest_first(examples, embedder):
    embedder.passages.clear()
    r = examples.related("work/networking/pbr.md", k=3)
    assert embedder.passages == []  # no model: the vectors the index holds
    paths = [x.path for x in r.similar]
    assert paths[0] == "work/networking/vlan.md" and "work/networking/pbr.md" not in paths
    assert len(paths) == 3 and [x.score for x in r.similar] == sorted(
        (x.score for x in r.similar), reverse=True
    )
    section = examples.related("work/networking/pbr.md:5", k=5)
    assert section.section is not None and section.section[0] <= 5 <= section.section[1]
    assert section.similar[0].path == "work/networking/vlan.md"
    assert "home/cooking/sourdough.md" in [x.path for x in section.similar]


def test_max_tokens_keeps_the_first_items_of_every_list(graph):
    whole = graph.related("notes/Home.md")
    small = graph.related("notes/Home.md", max_tokens=40)
    assert small.budget is not None and small.budget.used <= 40
    kept = len(small.links) + len(small.backlinks) + len(small.unresolved)
    assert kept + small.budget.dropped == len(whole.links) + len(whole.backlinks) + 1
    assert small.links == whole.links[: len(small.links)] and small.backlinks
    assert small.backlinks == whole.backlinks[: len(small.backlinks)]


def test_a_library_of_vaults_keeps_each_vaults_links_inside_it(tmp_path: Path):
    """Two vaults in one library, one per language, each a collection, with notes of the same
    name (the Obsidian Help vault's en/ and ru/): without `.obsidian/` memo cannot tell them
    from one vault, and a bare link opens the note of its own collection, even where the
    other's path is shorter; under one `.obsidian/` they are one vault, as Obsidian reads it."""
    root = tmp_path / "lib"
    for lang, folder in (("en", "Publish"), ("ru", "P")):
        write(root / lang / "_meta.yaml", f"description: the {lang} vault\n")
        write(root / lang / folder / "SEO.md", f"# SEO ({lang})\n")
        write(root / lang / "Guide" / "Start.md", "# Start\n\nSee [[SEO]].\n")
    with Library(root, None, Settings()) as lib:
        lib.index()
        assert [x.path for x in lib.related("en/Guide/Start.md").links] == ["en/Publish/SEO.md"]
        assert [x.path for x in lib.related("ru/Guide/Start.md").links] == ["ru/P/SEO.md"]
        back = lib.related("en/Publish/SEO.md").backlinks
        assert [b.path for b in back] == ["en/Guide/Start.md"]
        (root / ".obsidian").mkdir()  # one vault now: the shortest path, as Obsidian opens
        assert [x.path for x in lib.related("en/Guide/Start.md").links] == ["ru/P/SEO.md"]
