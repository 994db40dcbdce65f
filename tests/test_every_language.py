"""Every language the model reads (issue 48): a language for every chunk and question, a
lexical leg in every script, the translate warning and confidence across any pair, and the
route map naming each collection's language."""

from __future__ import annotations

from pathlib import Path

import pytest

from memo.collection.langid import detect, name, script_of
from memo.collection.lexical import query_forms, query_terms, terms
from memo.config import Settings
from memo.library import Library
from memo.search.languages import translate_warning

# One fact a language, written here (not taken from any data set): Tesla's birth year and town.
NOTES = {
    "zh": ("特斯拉", "尼古拉·特斯拉于1856年出生在斯米连，他发明了交流电动机和特斯拉线圈。"),
    "ja": ("テスラ", "ニコラ・テスラは1856年にスミリャンで生まれ、交流電動機を発明した。"),
    "ko": ("테슬라", "니콜라 테슬라는 1856년 스밀랸에서 태어났으며 교류 전동기를 발명했다."),
    "th": ("เทสลา", "นิโคลา เทสลา เกิดเมื่อปี 1856 ที่สมิลยาน และประดิษฐ์มอเตอร์กระแสสลับ"),
    "vi": ("Tesla", "Nikola Tesla sinh năm 1856 tại Smiljan và đã phát minh ra động cơ điện xoay chiều."),  # noqa: E501
    "de": ("Tesla", "Nikola Tesla wurde 1856 in Smiljan geboren und erfand den Wechselstrommotor."),
    "hi": ("टेस्ला", "निकोला टेस्ला का जन्म 1856 में स्मिल्जान में हुआ था और उन्होंने प्रत्यावर्ती धारा मोटर का आविष्कार किया।"),  # noqa: E501
    "ar": ("تسلا", "ولد نيكولا تسلا (Nikola Tesla) عام 1856 في سميليان واخترع محرك التيار المتردد."),  # noqa: E501
    "el": ("Τέσλα", "Ο Νίκολα Τέσλα γεννήθηκε το 1856 στο Σμίλιαν και εφηύρε τον κινητήρα εναλλασσόμενου ρεύματος."),  # noqa: E501
}  # fmt: skip
# a word of each fact, as a question would ask it
ASKED = {
    "zh": "特斯拉发明了什么电动机？",
    "ja": "テスラは何を発明した？",
    "ko": "테슬라는 무엇을 발명했나요?",
    "th": "เทสลาประดิษฐ์อะไร",
    "vi": "Tesla đã phát minh ra gì?",
    "de": "Was erfand Tesla?",
    "hi": "टेस्ला ने किसका आविष्कार किया?",
    "el": "Τι εφηύρε ο Τέσλα;",
}


def test_a_language_for_every_text_by_its_script_and_the_identifier():
    for lang, (_, body) in NOTES.items():
        if lang != "ar":  # its body holds a Latin-written name on purpose (below)
            assert detect(body) == lang, lang
    assert detect("Wie konfiguriere ich die Synchronisierung?") == "de"
    assert detect("How do I configure sync?") == "en"
    assert detect("как настроить синхронизацию") == "ru"
    assert detect("VLAN 802.1Q", query=True) is None  # acronyms and numbers say nothing
    assert detect("") is None and detect("1856 — 1943") is None
    assert script_of("テスラは発明した") == "kana"  # Han between kana is Japanese
    # scripts memo does not name are the identifier's to name (they read as no language)
    assert detect("தமிழ் ஒரு திராவிட மொழி ஆகும்") == "ta"
    assert detect("ಕನ್ನಡ ಒಂದು ದ್ರಾವಿಡ ಭಾಷೆ") == "kn" and script_of("ភាសាខ្មែរ") == "othr"
    assert name("zh") == "Chinese" and name("xx") == "xx"


def test_a_short_question_the_identifier_is_unsure_of_takes_the_notes_language():
    # three Romanian words: lid.176 alone guesses Italian or Catalan at 0.2-0.3
    q = "Câte mingi a interceptat Norman?"
    assert detect(q, query=True, among=("ro",)) == "ro"
    # a sure guess is kept, whatever the notes' language
    assert detect("How many points did the defense give up?", query=True, among=("de",)) == "en"


def test_scripts_without_spaces_are_cut_into_character_grams_and_numbers_stay_words():
    assert terms("特斯拉1856年", "zh") == ["特斯", "斯拉", "1856", "年"]
    assert terms("เกิดเมื่อปี", "th") == ["เกิ", "กิด", "ิดเ", "ดเม", "เมื", "มื่", "ื่อ", "่อป", "อปี"]
    # a Latin name inside Chinese text is a word of its own, stemmed as English
    assert "tesla" in terms("尼古拉Tesla发明", "zh")
    # a Hindi vowel sign belongs to its word (Python's \w splits at it)
    assert terms("आविष्कार", "hi") == [terms("आविष्कार", "hi")[0]] and len(terms("जन्म", "hi")) == 1


def test_each_language_is_stemmed_by_its_own_rule_and_other_scripts_by_theirs():
    assert terms("Wechselstrommotoren", "de") == terms("Wechselstrommotor", "de")
    assert terms("running", "en") == ["run"]
    assert terms("домена", "de") == terms("домен", "ru")  # Cyrillic in a German text: Russian
    assert terms("settings", "ru") == terms("settings", "en")  # Latin in Russian: English
    # Vietnamese keeps its tones: "của" is not "cua" (FTS5 no longer folds diacritics)
    assert terms("của cua", "vi") == ["của", "cua"]
    assert query_terms("Wann erfand Tesla Motoren?", "de") == [
        *terms("Wann", "de"),
        *terms("erfand", "de"),
        *terms("Tesla", "de"),
        *terms("Motoren", "de"),
    ]


def test_a_word_takes_the_form_of_every_language_the_notes_are_written_in():
    # a short question told in one language may search notes stemmed in another
    forms = query_forms("Wechselstrommotoren", "en", ("de", "en"))
    assert forms == [(terms("Wechselstrommotoren", "en")[0], terms("Wechselstrommotoren", "de")[0])]
    assert query_forms("特斯拉", "zh", ("en",)) == [("特斯",), ("斯拉",)]  # grams have one form
    assert [f[0] for f in query_forms("Wann erfand Tesla?", "de", ("en",))] == query_terms(
        "Wann erfand Tesla?", "de"
    )


def test_the_warning_names_any_pair_of_languages():
    zh = [(40, {"zh": 0.95, "en": 0.05})]
    said = translate_warning("When was Tesla born?", (), zh)
    assert said is not None and "mostly Chinese" in said and "English" in said
    assert translate_warning("特斯拉是哪一年出生的？", (), zh) is None
    assert translate_warning("When was Tesla born?", ("特斯拉是哪一年出生的？",), zh) is None
    de = [(40, {"de": 1.0})]
    assert "mostly German" in (translate_warning("When was Tesla born?", (), de) or "")
    assert translate_warning("Wann wurde Tesla geboren?", (), de) is None


@pytest.fixture
def world(tmp_path: Path, embedder) -> Library:
    """A library of one collection a language, the same fact in each, and a mixed one."""
    root = tmp_path / "world"
    for lang, (title, body) in NOTES.items():
        coll = root / lang
        coll.mkdir(parents=True)
        (coll / "_meta.yaml").write_text(f"description: Tesla ({lang})\n", encoding="utf-8")
        (coll / "tesla.md").write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
        if lang == "zh":  # a second note, on something else
            (coll / "warsaw.md").write_text("# 华沙\n\n华沙位于维斯瓦河畔。\n", encoding="utf-8")
    mixed = root / "mixed"
    mixed.mkdir()
    (mixed / "_meta.yaml").write_text("description: two languages\n", encoding="utf-8")
    (mixed / "de.md").write_text(
        "# Zug\n\nDer Zug nach Berlin fährt um acht Uhr vom Hauptbahnhof ab.\n", encoding="utf-8"
    )
    zh = "# 火车\n\n去上海的火车早上八点从北京南站出发。\n"
    (mixed / "zh.md").write_text(zh, encoding="utf-8")
    lib = Library(root, embedder, Settings(index_dir=tmp_path / "idx"))
    lib.index()
    return lib


def test_every_language_is_found_lexically_by_a_question_in_it(world: Library):
    for lang, question in ASKED.items():
        hits = world.search(lang, question, k=1, mode="lex").hits
        assert hits and hits[0].path == f"{lang}/tesla.md", (lang, question)
    # across the whole library: words with diacritics (FTS5 folded them and memo looked them up
    # unfolded) and Hindi words whole (Python's \w split them at every vowel sign)
    assert world.search(".", "động cơ điện", k=1, mode="lex").hits[0].path == "vi/tesla.md"
    assert world.search(".", "आविष्कार", k=1, mode="lex").hits[0].path == "hi/tesla.md"
    # a number inside Chinese text, a Latin name inside Arabic text
    assert world.search("zh", "1856", k=1, mode="lex").hits[0].path == "zh/tesla.md"
    assert world.search("ar", "nikola", k=1, mode="lex").hits[0].path == "ar/tesla.md"


def test_one_collection_reads_each_chunk_and_each_question_by_its_own_language(world: Library):
    assert world.search("mixed", "Züge nach Berlin", k=1, mode="lex").hits[0].path == "mixed/de.md"
    assert world.search("mixed", "上海火车", k=1, mode="lex").hits[0].path == "mixed/zh.md"
    shares = {e.path: e.language_shares() for e in world.registry.entries}
    assert shares["mixed"] == {"de": 0.5, "zh": 0.5}
    assert shares["zh"] == {"zh": 1.0} and shares["th"]["th"] == 1.0


def test_the_route_map_and_status_name_each_collections_language(world: Library):
    route = world.route("Tesla", k=20).to_dict()
    langs = {c["path"]: c["languages"] for c in route["collections"]}
    assert langs["zh"] == {"zh": 1.0} and langs["de"] == {"de": 1.0}
    status = {c.path: c for c in world.status().collections}
    assert status["th"].languages == "th:1.00" and status["ko"].languages == "ko:1.00"


def test_an_english_question_of_chinese_notes_is_warned_and_judged_across(world: Library):
    res = world.search("zh", "What motor did Tesla invent?", k=3)
    assert any("mostly Chinese" in w for w in res.warnings)
    same = world.search("zh", ASKED["zh"], k=3)
    assert not any("mostly" in w for w in same.warnings)
    both = world.search("zh", "What motor did Tesla invent?", also=[ASKED["zh"]], k=3)
    assert not any("mostly" in w for w in both.warnings)
    assert both.hits[0].path == "zh/tesla.md"
