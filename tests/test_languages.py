"""Across languages (issue 25): memo knows each collection's languages, says when to translate,
and fuses every phrasing of a question into one ranking."""

from __future__ import annotations

from memo.search.languages import language_of, main_language, translate_warning
from memo.skill import skill_text


def test_a_collection_knows_its_languages(library):
    library.index()
    entries = {e.path: e.language_shares() for e in library.registry.entries}
    assert entries["home/cooking"] == {"ru": 1.0}
    assert entries["work/jira"]["en"] > 0.5
    route = library.route("sourdough bread", k=3).to_dict()
    langs = {c["path"]: c["languages"] for c in route["collections"]}
    assert langs["home/cooking"] == {"ru": 1.0}
    status = {c.path: c for c in library.status().collections}
    assert status["home/cooking"].languages == "ru:1.00"
    assert status["work/jira"].languages.startswith("en:")
    skill = skill_text(library)
    assert "`home/cooking` — " in skill and "(notes in ru: Russian)" in skill and "also=[" in skill


def test_memo_says_when_to_translate_and_not_otherwise(library):
    english = library.search("home/cooking", "how long to bake bread in a dutch oven")
    said = [w for w in english.warnings if "mostly Russian" in w]
    assert said and "also" in said[0]
    russian = library.search("home/cooking", "сколько печь хлеб в чугунной кастрюле")
    assert not [w for w in russian.warnings if "mostly" in w]
    both = library.search(
        "home/cooking", "how long to bake bread", also=["сколько печь хлеб в кастрюле"]
    )
    assert not [w for w in both.warnings if "mostly" in w]
    same = library.search("work/jira", "open bugs assigned to me")
    assert not [w for w in same.warnings if "mostly" in w]
    routed = library.route("how long to bake bread in a dutch oven", prefix="home")
    assert any("mostly Russian" in w for w in routed.warnings)


def test_every_phrasing_is_fused_into_one_ranking(library):
    alone = library.search("home", "bake time with the lid on", k=3, mode="lex")
    both = library.search(
        "home", "bake time with the lid on", k=3, mode="lex", also=["под крышкой 20 минут"]
    )
    assert not alone.hits  # English words: the lexical leg finds nothing in Russian notes
    assert both.hits and both.hits[0].path == "home/cooking/sourdough.md"


def test_the_rule_by_itself():
    assert language_of("сколько печь хлеб") == "ru" and language_of("bake bread") == "en"
    assert language_of("VLAN 802.1Q") is None  # acronyms and numbers say nothing
    assert main_language([(10, {"ru": 0.9, "en": 0.1}), (10, {"en": 1.0})]) == ("en", 0.55)
    parts = [(40, {"ru": 0.95, "en": 0.05})]
    assert translate_warning("bake bread", (), parts)
    assert translate_warning("bake bread", ("печь хлеб",), parts) is None
    assert translate_warning("печь хлеб", (), parts) is None
    assert translate_warning("bake bread", (), [(40, {"ru": 0.5, "en": 0.5})]) is None
    # a likely answer in the notes' language is the agent writing in it: no warning
    assert translate_warning("bake bread", (), parts, answer="Печь 20 минут под крышкой.") is None
    said = translate_warning("bake bread", (), parts)
    assert said is not None and "`also`" in said and "`answer`" in said
    # one letter is in no language (a bare `x` was told to ask again in Russian)
    assert translate_warning("x", (), parts) is None
