"""When to translate: the question's language against the language of what it searched.

multilingual-e5-small places a translation near its original, not on it: a Russian library
asked in English loses about a third of its first hits (issue 25), and no offline model memo
can ship does much better. But the caller is an LLM, which translates in one step: so memo says
when the question's language differs from most of what it searched, and takes the translation
back as an extra phrasing (`also`), fused into the same ranking.

Languages are told apart by alphabet (collection/summary.py LANGUAGES): Cyrillic is Russian,
Latin English, the two memo stems. A question counts by its words, acronyms and words with
digits left out (lexical.script). The warning says so only when no phrasing given (the question
or an `also`) is in the notes' main language, and that language holds most (MOST) of the
chunks searched.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..collection.lexical import WORD, script

NAMES = {"ru": "Russian", "en": "English"}
BY_SCRIPT = {"cyrl": "ru", "latn": "en"}
MOST = 0.5  # the main language holds more than this share of the chunks searched


def language_of(text: str) -> str | None:
    """'ru', 'en', or None when the words do not say (mixed, digits, acronyms only)."""
    return BY_SCRIPT.get(script(text, query=True) or "")


def main_language(parts: Iterable[tuple[int, dict[str, float]]]) -> tuple[str, float] | None:
    """The language most chunks are in, and its share, over (chunks, shares) per collection."""
    total, per = 0, dict[str, float]()
    for chunks, shares in parts:
        if not chunks or not shares:
            continue
        total += chunks
        for lang, share in shares.items():
            per[lang] = per.get(lang, 0.0) + share * chunks
    if not total or not per:
        return None
    lang, n = max(per.items(), key=lambda x: x[1])
    return (lang, n / total) if lang in NAMES else None


def translate_warning(
    query: str,
    also: tuple[str, ...],
    parts: Iterable[tuple[int, dict[str, float]]],
    answer: str | None = None,
) -> str | None:
    """The warning that tells the caller to ask in the notes' language, or None (also when
    the question has no word of two letters: `x` is in no language)."""
    if not any(len(w) > 1 for w in WORD.findall(query)):
        return None
    main = main_language(parts)
    if main is None:
        return None
    lang, share = main
    if share <= MOST:
        return None
    said = [language_of(q) for q in (query, *also, *([answer] if answer else []))]
    if said[0] is None or said[0] == lang or lang in said:
        return None
    name = NAMES[lang]
    return (
        f"the notes searched here are mostly {name} ({share:.0%} of them) and the question is "
        f"{NAMES.get(said[0], 'in another language')}: pass the question in {name} as `also` "
        f"and a likely answer in {name} as `answer` (memo_search/memo_route also=[...], "
        "answer=...; memo search --also, --answer): they are fused into one ranking"
    )
