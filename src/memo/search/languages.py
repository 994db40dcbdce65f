"""When to translate: the question's language against the language of what it searched.

multilingual-e5-small places a translation near its original, not on it, and an LLM caller
translates in one step: so memo says when the question's language (collection/langid.py, any
of the identifier's 176) differs from the main language of the chunks searched, and takes the
translation back as `also`, fused into the same ranking. It says so only when no phrasing given
(the question, an `also`, the `answer`) is in that language and it holds most (MOST) of them.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..collection.langid import detect, name
from ..collection.lexical import WORD
from ..collection.summary import MIXED

MOST = 0.5  # the main language holds more than this share of the chunks searched


def language_of(text: str, among: tuple[str, ...] = ()) -> str | None:
    """The language a question is asked in, or None when its words do not say (digits,
    acronyms only); read as one of `among` (the notes') when the identifier is unsure."""
    return detect(text, query=True, among=among)


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
    return (lang, n / total) if lang != MIXED else None


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
    said = [language_of(q, (lang,)) for q in (query, *also, *([answer] if answer else []))]
    if said[0] is None or said[0] == lang or lang in said:
        return None
    notes = name(lang)
    return (
        f"the notes searched here are mostly {notes} ({share:.0%} of them) and the question is "
        f"{name(said[0])}: pass the question in {notes} as `also` and a likely answer in "
        f"{notes} as `answer` (memo_search/memo_route also=[...], answer=...; memo search "
        "--also, --answer): they are fused into one ranking"
    )
