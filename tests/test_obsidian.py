"""Obsidian and Logseq markdown read the way a person reads it (issue 22, item 5): each rule
on the fixture vault written for the tests (tests/vault.py), through a real index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memo.collection.store import unpack_text
from memo.config import Settings
from memo.library import Library
from memo.library.adopt import plan

from .vault import PLUGINS, SYNC, write_vault


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    root = write_vault(tmp_path_factory.mktemp("obsidian") / "vault")
    plan(root, Settings()).write(Settings())
    with Library(root, None, Settings()) as lib:  # lexical only: the rules are about text
        lib.index()
        yield lib


def chunks_of(lib: Library, rel: str) -> list[tuple[str, str]]:
    """(heading, text) of every chunk the index holds for one note, in order."""
    for c in lib.collections():
        inside = rel if c.rel == "." else rel.removeprefix(c.rel + "/")
        if inside != rel or c.rel == ".":
            rows, _ = c.read(
                lambda store, p=inside: store.conn.execute(
                    "SELECT heading, text FROM chunks WHERE path = ? ORDER BY ord", (p,)
                ).fetchall()
            )
            if rows:
                return [(h, unpack_text(t)) for h, t in rows]
    raise AssertionError(f"{rel} is not in any index")


def texts(lib: Library) -> str:
    return "\n".join(f"{h}\n{t}" for rel in _notes(lib.root) for h, t in chunks_of(lib, rel))


def _notes(root: Path) -> list[str]:
    return [
        str(p.relative_to(root))
        for p in root.rglob("*.md")
        if not any(part.startswith(".") or part == "logseq" for part in p.parts)
        and p.name != "inbox.md"
    ]


def test_a_note_without_an_h1_is_titled_by_its_file_name(lib):
    heads = [h for h, _ in chunks_of(lib, f"{SYNC}/История версий.md")]
    assert heads == ["История версий", "История версий > Восстановление"]
    hit = lib.search(".", "восстановить прошлое состояние заметки", mode="lex").hits[0]
    assert hit.heading.startswith("История версий")


def test_frontmatter_title_and_aliases_head_the_path(lib):
    assert chunks_of(lib, f"{PLUGINS}/Поиск.md")[1][0] == "Поиск по хранилищу > Операторы"
    head = chunks_of(lib, f"{SYNC}/Настройка синхронизации.md")[0][0]
    assert head == "Настройка синхронизации (Set up Sync)"
    # the English alias of a Russian note finds it lexically
    assert (
        lib.search(".", "set up sync", mode="lex")
        .hits[0]
        .path.endswith("Настройка синхронизации.md")
    )


def test_wikilinks_index_their_visible_words(lib):
    (_, home), *_ = chunks_of(lib, "Главная.md")
    assert "настройки Sync" in home and "Поиск" in home and "[[" not in home
    (_, history), (_, restore) = chunks_of(lib, f"{SYNC}/История версий.md")
    assert "историю" in restore and "Восстановление|" not in restore
    assert "синхронизации" not in home  # the link's target is not what the reader sees


def test_embeds_and_images_add_no_noise(lib):
    everything = texts(lib)
    for noise in ("history.png", "lucide-search", "![[", ".svg", "#icon"):
        assert noise not in everything


def test_callouts_index_title_and_body_without_the_marker(lib):
    body = " ".join(t for _, t in chunks_of(lib, f"{SYNC}/Настройка синхронизации.md"))
    assert "Пароль не восстановить" in body and "данные на сервере" in body
    assert "[!warning]" not in body and "\n>" not in body


def test_comments_and_block_ids_are_not_indexed(lib):
    everything = texts(lib)
    assert "черновик" not in everything and "регионы" not in everything
    assert "^remote-vault" not in everything
    assert not lib.search(".", "черновик дописать регионы", mode="lex").hits


def test_inline_tags_join_frontmatter_tags(lib):
    got = {h.path for h in lib.search(".", "заметки", k=20, mode="lex", tags="versions").hits}
    assert got == {f"{SYNC}/История версий.md"}
    nested = lib.search(".", "review", mode="lex", tags="habit/review").hits
    assert [h.path for h in nested] == ["English notes/Daily review.md"]
    front = lib.search(".", "синхронизация", mode="lex", tags="sync").hits
    assert {h.path for h in front} == {f"{SYNC}/Настройка синхронизации.md"}


def test_hidden_trash_and_logseq_backups_are_never_indexed_and_attachments_never_fail(lib):
    st = lib.status().to_dict()
    indexed = {f["path"] for c in st["collections"] for f in c["indexed_files"]}
    assert not any(".obsidian" in p or ".trash" in p or "logseq" in p for p in indexed)
    assert not lib.search(".", "secret deleted backup copy", mode="lex").hits
    for c in st["collections"]:
        assert c["skipped"] == [] and c["failed"] == [], c["path"]


def test_the_note_page_shows_the_note_as_written(lib):
    """Issue 50: the page shows every line of the file, its syntax kept and marked up (a
    callout, a block id, a comment dimmed), where it once hid what the index leaves out."""
    from fastapi.testclient import TestClient

    from memo.server.api import build_app
    from memo.server.service import Service

    service = Service(lib.root, Settings(embedder="none"), embedder=None)
    with TestClient(build_app(service), base_url="http://127.0.0.1:8765") as client:
        page = client.get("/read", params={"path": f"{SYNC}/Настройка синхронизации.md"})
        assert page.status_code == 200
        html = page.text
        assert "Пароль не восстановить" in html and "данные на сервере" in html
        for raw in ("[!warning]", "^remote-vault", "черновик", "%%"):
            assert raw in html, raw
        home = client.get("/read", params={"path": "Главная.md"}).text
        assert "настройки Sync" in home and "[[" in home and "<a " in home
    service.close()


def test_syntax_inside_code_and_math_is_not_interpreted(lib):
    """`%%` in inline code used to open a comment that never closed: every section after it
    was lost, silently (issue 31). Obsidian interprets nothing inside code or math."""
    chunks = chunks_of(lib, "English notes/Link syntax.md")
    heads = [h.split(" > ")[-1] for h, _ in chunks]
    assert heads == ["Link syntax", "Link to a heading", "Math", "Escaping"]
    body = "\n".join(t for _, t in chunks)
    assert "`# | ^ : %% [[ ]]`" in body  # code as written
    assert "`[[Other note#Heading]]`" in body and "$50%% + x$" in body
    assert "[[not a link]] %% in math" in body  # block math as written
    assert "a real comment" not in body and "backslash before a character" in body
    assert "notatag" not in lib.search(".", "review", mode="lex", tags="notatag").to_dict()
    hit = lib.search(".", "link to a heading in another note", mode="lex").hits[0]
    assert hit.path == "English notes/Link syntax.md" and hit.line == 5


def test_an_unclosed_comment_hides_the_rest_as_obsidian_does_and_says_so():
    from memo.collection.chunker import chunk_note
    from memo.collection.markdown import HIDDEN_UNCLOSED
    from memo.embed.tokens import estimate_tokens

    text = (
        "# Note\n\nKept line.\n\nStarts here %% never closed\nhidden one\n\n## Later\nhidden two\n"
    )
    note = chunk_note(text, estimate_tokens)
    assert [c.text for c in note.chunks] == ["Kept line.\n\nStarts here"]
    assert any("never closes" in w and "line 5" in w for w in note.warnings)
    assert note.dropped == [(6, 9, HIDDEN_UNCLOSED)]  # the heading inside it is hidden too
    assert note.lost == 0
