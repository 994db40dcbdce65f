"""The lexical leg's view of text: lower-cased word stems, Russian and English.

FTS5's unicode61 tokenizer has no stemming, so "домена" would not match "домен". We stem
ourselves with Snowball (PyStemmer, a C extension) and store the stem stream in FTS5; queries go
through the same function. Cyrillic words take the Russian stemmer, Latin words the English one,
anything else (digits, mixed, other scripts) is kept as written.

The query side builds an FTS5 expression out of quoted terms only, so no character a person can
type (quotes, `*`, `-`, NEAR, AND, parentheses) ever reaches FTS5 as syntax.
"""

from __future__ import annotations

import re
from functools import lru_cache
from unicodedata import normalize

import Stemmer

from .stopwords import ALL as STOPWORDS

# v2: text is NFC-normalised first (a macOS NFD "й" is "и" + a combining mark, which \w
# splits: "чайные" became "чаи" + "ные"); v3: words split at "_" as FTS5's unicode61 does
# (it stored `max_tokens` as "max" + "tokens", so a question saying `max_tokens` found nothing)
LEXICAL_VERSION = "snowball-ru-en-nfc-v3"

WORD = re.compile(r"[^\W_]+", re.UNICODE)  # letters and digits: "_" is no part of a word
_CYRILLIC = re.compile(r"^[а-яё]+$")
_LATIN = re.compile(r"^[a-z]+$")
_MAX_QUERY_TERMS = 64

_ru = Stemmer.Stemmer("russian")
_en = Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    if _CYRILLIC.match(word):
        return str(_ru.stemWord(word.replace("ё", "е")))
    if _LATIN.match(word):
        return str(_en.stemWord(word))
    return word


def terms(text: str) -> list[str]:
    """Text -> stems in order (duplicates kept: BM25 counts them)."""
    return [stem(w) for w in WORD.findall(normalize("NFC", text).lower())]


def lex_text(text: str) -> str:
    """What FTS5 stores for a chunk."""
    return " ".join(terms(text))


_LETTER_CYR = re.compile(r"[а-яё]")
_LETTER_LAT = re.compile(r"[a-z]")


def script(text: str, query: bool = False) -> str | None:
    """'cyrl' or 'latn' when one alphabet clearly dominates the words (`dominant`), else None.

    For a query, acronyms (PBR, VLAN) and words with digits say nothing about the language the
    person writes in, so they are left out.
    """
    words = WORD.findall(text)
    if query:
        words = [w for w in words if not w.isupper() and not any(c.isdigit() for c in w)]
    return dominant(*letters(" ".join(words)))


def letters(text: str) -> tuple[int, int]:
    """How many Cyrillic and Latin letters `text` holds, either case."""
    low = text.lower()
    return len(_LETTER_CYR.findall(low)), len(_LETTER_LAT.findall(low))


def dominant(cyr: int, lat: int) -> str | None:
    """The one rule for a text's alphabet: 'cyrl' or 'latn' when it has at least twice the
    other's letters, else None (mixed, or no letters). Twice, not a bare majority: Russian
    notes quote English names and commands, and a text is only called Russian or English (a
    collection's language share, a drafted description's language, the "translate" hint) when
    one alphabet carries it."""
    if cyr + lat == 0:
        return None
    if cyr >= 2 * lat:
        return "cyrl"
    if lat >= 2 * cyr:
        return "latn"
    return None


def query_terms(query: str) -> list[str]:
    """The distinct stems a query searches for: function words dropped unless that is all."""
    words = WORD.findall(normalize("NFC", query).lower())
    content = [w for w in words if w.replace("ё", "е") not in STOPWORDS] or words
    seen: dict[str, None] = {}
    for w in content:
        seen.setdefault(stem(w), None)
        if len(seen) >= _MAX_QUERY_TERMS:
            break
    return list(seen)
