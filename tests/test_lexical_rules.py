"""The lexical leg's reading of a question (collection/lexical.py) as a caller meets it: which
notes a lexical search finds, which alphabet a text or a query is said to be in, and what FTS5
makes of text typed with its syntax (issue 32: pinned, not restated). Small real libraries,
indexed without a model; real SQLite FTS5 where the module's expression meets it."""

from __future__ import annotations

import pytest

from memo.collection.lexical import query_terms, script
from memo.config import Settings
from memo.library import Library

NOTES = {
    "printer.md": "# Printer\n\nHow to fix the printer when it jams.\n",
    "bread.md": "# Bread\n\nBaking bread at home, with sourdough.\n",
    "hedgehog.md": "# Ёжики\n\nЁжик спит зимой в норе.\n",
    "decided.md": "# Итог\n\nВсё решено.\n",
    "zebra.md": "# Stripes\n\nThe zebra grazes.\n",
    "limits.md": "# Limits\n\nmax_tokens: 512 caps the reply length.\n",
}


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("lexical")
    root = base / "notes"
    root.mkdir()
    (root / "_meta.yaml").write_text("description: lexical rules\n", encoding="utf-8")
    for name, text in NOTES.items():
        (root / name).write_text(text, encoding="utf-8")
    library = Library(root, None, Settings(index_dir=base / "idx"))
    library.index()
    yield library
    library.close()


def found(lib: Library, query: str) -> set[str]:
    return {h.path for h in lib.search(".", query, mode="lex", k=10).hits}


def test_a_question_is_searched_by_its_content_words_unless_it_has_only_function_words(lib):
    # "how" and "to" are in the printer note, yet the question is about bread
    assert found(lib, "how to bake bread") == {"bread.md"}
    # a question of nothing but function words keeps them: it still finds what says them
    assert found(lib, "how to") == {"printer.md"}


def test_a_snake_case_word_is_found_as_the_note_writes_it(lib):
    # FTS5's tokenizer splits at "_": memo's words must split there too, in notes and questions
    assert found(lib, "max_tokens") == {"limits.md"}
    assert found(lib, "max tokens") == {"limits.md"}
    assert query_terms("max_tokens") == query_terms("max tokens")


def test_yo_is_read_as_ye_when_telling_a_function_word(lib):
    # "всё" is the stopword "все" written with ё: dropped, so the note that says "Всё" is no hit
    assert found(lib, "всё про ёжиков") == {"hedgehog.md"}
    assert query_terms("всё про ёжиков") == query_terms("ежиков")


def test_a_long_question_searches_its_first_64_distinct_stems(lib):
    filler = [f"w{i}" for i in range(64)]  # 64 words no note holds
    # repeats count once: the 64 distinct words come first, the 65th is not searched
    question = " ".join(filler[:10] + filler + ["zebra"])
    assert query_terms(question) == filler
    assert found(lib, question) == set()
    assert found(lib, " ".join(filler[1:] + ["zebra"])) == {"zebra.md"}  # as the 64th it is


def test_fts_syntax_in_a_question_is_searched_as_words(lib):
    # quotes, OR, a prefix star, NEAR, a minus and an open parenthesis: no error, no operator
    assert found(lib, '"bread" OR bak* NEAR(printer -x (') == {"bread.md", "printer.md"}
    assert found(lib, "bak*") == set()  # not a prefix search: no note says "bak"
    assert query_terms('"a" OR b*') == ["b"]  # "a" and "or" are function words here


def test_an_alphabet_dominates_from_exactly_twice_the_other_ones_letters():
    assert script("гора up") == "cyrl"  # 4 Cyrillic letters, 2 Latin
    assert script("data ум") == "latn"  # 4 Latin, 2 Cyrillic
    assert script("гора top") is None  # 4 against 3: mixed
    assert script("горы top") is None and script("12 345") is None


def test_a_query_leaves_out_acronyms_and_words_with_digits_a_text_does_not():
    said = "GRUB UEFI BIOS загрузчик"  # 12 Latin letters, all acronyms, 9 Cyrillic
    assert script(said) is None  # a note's text: every letter counts
    assert script(said, query=True) == "cyrl"  # a question: the acronyms say nothing
    assert script("x86 arm64 ядро", query=True) == "cyrl"
