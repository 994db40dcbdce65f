"""What an agent needs beyond "some chunks": reading a range, citation hashes, token budgets,
frontmatter filters inside the query, and diversity."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memo.config import Settings
from memo.embed.tokens import token_counter
from memo.errors import MemoError, TargetError
from memo.library import Library
from memo.search.budget import hit_cost_text


# ---------------------------------------------------------------------- read + cite
def test_read_a_hit_range_gives_the_same_citation_hash(library: Library, untouched) -> None:
    hit = library.search(".", "JQL open bugs assigned to me", k=3).hits[0]
    assert hit.cite and hit.end_line >= hit.line
    ex = library.read(hit.path, hit.line, hit.end_line - hit.line + 1)
    assert ex.cite == hit.cite
    assert ex.line == hit.line and ex.end_line == hit.end_line
    assert hit.text.split()[0] in ex.text


@pytest.mark.edits_notes
def test_an_edit_changes_the_citation_hash(library: Library, notes: Path) -> None:
    hit = library.search(".", "JQL open bugs assigned to me", k=1).hits[0]
    n = hit.end_line - hit.line + 1
    note = notes / hit.path
    lines = note.read_text().split("\n")
    lines[hit.line - 1] = lines[hit.line - 1].replace("Bug", "Story")
    note.write_text("\n".join(lines))
    assert library.read(hit.path, hit.line, n).cite != hit.cite
    # An edit elsewhere in the note leaves this range's hash alone.
    note.write_text("\n".join(lines[: hit.line]) + "\n" + "\n".join(lines[hit.line :]) + "\nmore\n")
    again = library.search(".", "JQL open Story assigned to me", k=1).hits[0]
    assert library.read(again.path, again.line, n).cite == again.cite


def test_read_whole_note_and_ranges(library: Library) -> None:
    whole = library.read("work/jira/jql.md")
    assert whole.line == 1 and whole.end_line == whole.total_lines and not whole.more_lines
    part = library.read("work/jira/jql.md", 2, 3)
    assert part.text == "\n".join(whole.text.split("\n")[1:4]) and part.next_line == 5
    assert part.more_lines == whole.total_lines - 4
    with pytest.raises(TargetError) as past:  # a range past the end is an error, not empty
        library.read("work/jira/jql.md", 10_000)
    assert f"has {whole.total_lines} lines" in str(past.value) and past.value.hint
    assert library.read("inbox.md").text.startswith("# Inbox")  # drafts can be read


@pytest.mark.parametrize(
    "path", ["work", "work/jira/_meta.yaml", "../outside.md", "/etc/passwd", "nope.md"]
)
def test_read_refuses_what_is_not_a_note_inside_the_root(library: Library, path: str) -> None:
    with pytest.raises(TargetError):
        library.read(path)


# ---------------------------------------------------------------------- token budget
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    budget=st.integers(min_value=1, max_value=1500),
    query=st.sampled_from(["sourdough", "JQL", "VLAN trunk", "маршрутизация", "bread oven jira"]),
)
def test_a_budgeted_response_never_exceeds_max_tokens(library: Library, budget, query) -> None:
    # every vector made first: a search's catch-up embeds for 0.5 s, so on a loaded machine the
    # two searches below would otherwise rank over different shares of the vectors
    library.index()
    res = library.search(".", query, k=10, max_tokens=budget)
    count = token_counter(library.embedder)
    used = sum(count(hit_cost_text(h)) for h in res.hits)
    assert used <= budget
    assert res.budget.used == used
    assert res.budget.dropped + len(res.hits) == len(library.search(".", query, k=10).hits)


def test_budget_cuts_at_a_sentence_border(library: Library) -> None:
    full = library.search(".", "sourdough dough hydration", k=1).hits[0]
    cost = token_counter(library.embedder)(hit_cost_text(full))
    res = library.search(".", "sourdough dough hydration", k=1, max_tokens=cost - 5)
    if res.hits:  # cut, not dropped
        h = res.hits[0]
        assert res.budget.cut == 1 and h.text.endswith(" …")
        assert full.text.startswith(h.text.removesuffix(" …"))
        assert h.text.removesuffix(" …")[-1] in ".!?…:;%)" or "\n" in full.text


# ---------------------------------------------------------------------- filters
def _write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


@pytest.fixture
def tagged(tmp_path: Path, embedder) -> Library:
    root = tmp_path / "lib"
    _write(root, "ops/_meta.yaml", "description: operations runbooks\n")
    for i in range(12):  # many strong matches without the tag...
        _write(root, f"ops/plain-{i}.md", f"# Disk full {i}\n\nThe disk is full: clean the logs.\n")
    for i, day in enumerate(["2024-01-10", "2025-06-01"]):  # ...and two weak ones with it
        _write(
            root,
            f"ops/tagged-{i}.md",
            f"---\ntags: [prod, Incident]\nupdated: {day}\n---\n# Notes {i}\n\nA disk note.\n",
        )
    lib = Library(root, embedder, Settings())
    lib.index()
    yield lib
    lib.close()


def test_tag_filter_applies_inside_the_query_and_does_not_starve_k(tagged: Library) -> None:
    plain = tagged.search(".", "disk full", k=3, diverse=False)
    assert all("plain" in h.path for h in plain.hits)
    res = tagged.search(".", "disk full", k=3, tags=["incident"])
    assert sorted(h.path for h in res.hits) == ["ops/tagged-0.md", "ops/tagged-1.md"]
    assert tagged.search(".", "disk", k=3, tags="prod,#incident").hits
    assert not tagged.search(".", "disk", k=3, tags=["prod", "other"]).hits


def test_date_filters_use_updated_then_mtime(tagged: Library) -> None:
    res = tagged.search(".", "disk note", k=5, tags=["prod"], since="2025-01-01")
    assert [h.path for h in res.hits] == ["ops/tagged-1.md"]
    res = tagged.search(".", "disk note", k=5, tags=["prod"], until="2024-12-31")
    assert [h.path for h in res.hits] == ["ops/tagged-0.md"]
    recent = tagged.search(".", "disk full", k=20, since="7d")  # plain notes: mtime is today
    assert {h.path for h in recent.hits} >= {f"ops/plain-{i}.md" for i in range(3)}
    assert all("tagged" not in h.path for h in recent.hits)


@pytest.mark.parametrize("bad", [{"since": "yesterday"}, {"since": "2025-02-01", "until": "2024"}])
def test_bad_filter_values_get_a_clear_error(tagged: Library, bad: dict) -> None:
    with pytest.raises(MemoError) as e:
        tagged.search(".", "disk", **bad)
    assert e.value.hint


# ---------------------------------------------------------------------- diversity
def test_one_long_note_cannot_fill_every_slot(tmp_path: Path, embedder) -> None:
    root = tmp_path / "lib"
    sections = "\n\n".join(
        f"## Kafka part {i}\n\nKafka consumer lag grows: step {i}." for i in range(9)
    )
    _write(root, "k/_meta.yaml", "description: kafka\n")
    _write(root, "k/long.md", f"# Kafka runbook\n\n{sections}\n")
    _write(root, "k/other.md", "# Lag\n\nConsumer lag in Kafka: check the partitions.\n")
    _write(root, "k/third.md", "# Brokers\n\nKafka brokers and consumer groups.\n")
    _write(root, "k/fourth.md", "# Lag alerts\n\nAlert when Kafka consumer lag passes 1000.\n")
    lib = Library(root, embedder, Settings())
    lib.index()
    off = lib.search(".", "kafka consumer lag", k=5, diverse=False)
    on = lib.search(".", "kafka consumer lag", k=5)
    assert sum(h.path == "k/long.md" for h in off.hits) >= 3
    assert sum(h.path == "k/long.md" for h in on.hits) <= 3  # notes_cap(5)
    assert len({"k/other.md", "k/third.md", "k/fourth.md"} & {h.path for h in on.hits}) >= 2
    assert len(on.hits) == 5
    # The cap never starves k: with fewer other notes, the long note fills what is left.
    (root / "k/fourth.md").unlink()
    assert len(lib.search(".", "kafka consumer lag", k=5).hits) == 5
    lib.close()


# ---------------------------------------------------------------------- writing discipline
@pytest.mark.edits_notes
def test_new_collection_is_created_safely(notes: Path, embedder) -> None:
    from memo.collection.meta import create_collection, load_meta

    folder = create_collection(notes, "work/kafka", "Kafka: consumer lag, brokers", ["kafka"])
    meta = load_meta(folder)
    assert meta.name == "kafka" and meta.tags == ("kafka",)
    with pytest.raises(TargetError):  # never overwrites
        create_collection(notes, "work/kafka", "other")
    for bad in ("../evil", "/etc", "Work/Big Folder", "work/.hidden", ""):
        with pytest.raises(MemoError):
            create_collection(notes, bad, "x")
    outside = notes.parent / "outside"
    outside.mkdir()
    (notes / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(TargetError):
        create_collection(notes, "link/new", "x")
    assert not (outside / "new").exists()
    with pytest.raises(MemoError):
        create_collection(notes, "work/empty", "   ")
    lib = Library(notes, embedder, Settings())
    assert "work/kafka" in [c.rel for c in lib.collections()]
    lib.close()


def test_skill_maps_topics_to_collections(library: Library) -> None:
    from memo.skill import skill_text

    text = skill_text(library)
    for rel in ("home/cooking", "work/jira", "work/networking"):
        assert f"`{rel}`" in text
    for rule in ("memo_route", "memo_search", "inbox.md", "_meta.yaml", "Search the collection"):
        assert rule in text
    hermes = skill_text(library, hermes=True)
    # Hermes: its frontmatter, then the same text with the tools named as Hermes shows them
    # (issue 23: `mcp__memo__memo_search`), hidden while memo's toolset is not connected
    assert hermes.startswith("---\nname: memo-notes\n")
    front, body = hermes.split("\n---\n", 1)
    assert "requires_toolsets: [mcp-memo]" in front
    description = front.split("description: ", 1)[1].split("\n", 1)[0]
    assert description[:57].startswith("Search, read and file the user's notes with memo")
    same = text.split("\n", 1)[1].rsplit("\nHosts may show", 1)[0]
    for tool in ("memo_route", "memo_search", "memo_get"):
        same = same.replace(f"`{tool}", f"`mcp__memo__{tool}")
    assert body.strip().split("\n", 1)[1].strip() == same.strip()
    assert "`memo_search(" not in body and "`mcp__memo__memo_search(" in body


# ---------------------------------------------------------------------- coverage
@pytest.mark.edits_notes
def test_status_lists_indexed_skipped_and_failed_files(notes: Path, embedder, monkeypatch) -> None:
    from memo.collection import sync as cm

    (notes / "work/jira/blob.md").write_bytes(b"\x00\x01binary" * 100)
    (notes / "work/jira/locked.md").write_text("# Locked\n\ncannot be read\n")
    real = cm.read_capped

    def deny(path, limit):  # root reads everything: fail this one read the way EACCES would
        if path.name == "locked.md":
            raise PermissionError(13, "Permission denied")
        return real(path, limit)

    monkeypatch.setattr(cm, "read_capped", deny)
    lib = Library(notes, embedder, Settings())
    lib.index("work/jira")
    st = lib.status("work/jira").to_dict()["collections"][0]
    lib.close()
    indexed = [f["path"] for f in st["indexed_files"]]
    assert indexed == ["work/jira/automation.md", "work/jira/jql.md"]
    assert all(f["chunks"] > 0 for f in st["indexed_files"])
    blob = {"path": "work/jira/blob.md", "why": "binary: NUL bytes in a .md file"}
    assert st["skipped"] == [blob]
    locked = {"path": "work/jira/locked.md", "error": "unreadable: Permission denied"}
    assert st["failed"] == [locked]
    assert st["files"] == 2


def test_status_of_a_never_indexed_collection_splits_failed_from_skipped(
    notes: Path, embedder, monkeypatch
) -> None:
    """Before any index exists, what the walk could not read is `failed` too, not `skipped`."""
    from memo.collection import health as cm
    from memo.collection import skips
    from memo.collection.skips import Skip

    def walk(folder, root, prefix="", rejected=None, excluded=None):
        rejected.extend(
            [
                ("sub", Skip.of(skips.FOLDER_UNREADABLE, error="Permission denied")),
                ("f.md", Skip.of(skips.NOT_REGULAR)),
            ]
        )
        return {}

    monkeypatch.setattr(cm, "note_files", walk)
    lib = Library(notes, embedder, Settings())
    st = lib.status("work/jira")
    lib.close()
    coll = st.collections[0]
    assert not coll.indexed
    assert coll.failed == [
        {"path": "work/jira/sub", "error": "folder cannot be read: Permission denied"}
    ]
    assert coll.skipped == [
        {"path": "work/jira/f.md", "why": "not a regular file (FIFO, socket or device)"}
    ]
    assert st.fusion
