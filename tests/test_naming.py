"""How a library names its notes (library/naming.py), read from the names on disk: the rule
`memo skill` states and what `memo new` accepts (issue 50, item 6)."""

from __future__ import annotations

from pathlib import Path

from memo.library.naming import SLUG_RULE, read

from .conftest import EXAMPLES


def _vault(root: Path, names: list[str]) -> Path:
    for rel in names:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("# x\n")
    return root


def test_a_library_of_slugs_or_of_nothing_gets_memos_rule():
    for naming in (read(EXAMPLES), read(EXAMPLES / "missing")):
        assert naming.slugs and naming.rule() == SLUG_RULE
        assert naming.allows("kafka-ops") and not naming.allows("Kafka Ops")
        assert not naming.allows("заметки")


def test_a_vault_in_sentence_case_and_cyrillic_says_so_and_takes_such_names(tmp_path: Path):
    names = ["Настройка синхронизации.md", "История версий.md", "Поиск.md", "Главная.md"]
    names += [".obsidian/Ignored Name.md", "logseq/bak/old-copy.md", "inbox.md"]
    naming = read(_vault(tmp_path, names))
    assert naming.names == 4  # hidden folders, other tools' copies and the inbox left out
    assert naming.case == "Sentence case" and naming.separator == " "
    assert naming.rule().startswith(
        "file and folder names as this library writes them: Sentence case words separated by "
        "spaces, in any alphabet (`История версий.md`, `Настройка синхронизации.md`)"
    )
    for fine in ("Рабочие заметки", "Home Lab", "home-lab", "Q3 (2025), plans"):
        assert naming.allows(fine), fine
    for bad in ("a:b", "Lab*", "What?", "[[Link]]", "#tag", " Lead", "Trail ", ".hidden"):
        assert not naming.allows(bad), bad
    assert not naming.allows("Two  spaces") and not naming.allows("x" * 101)


def test_most_names_set_the_rule_and_some_open_a_trait(tmp_path: Path):
    slugs = [f"topic-{i}.md" for i in range(8)] + ["Road Map.md", "Team Plan.md"]
    naming = read(_vault(tmp_path, slugs))
    assert naming.slugs  # two names of ten do not make a rule
    assert naming.allows("Team Notes")  # but a fifth of them open spaces and capitals
    assert not naming.allows("Заметки")
