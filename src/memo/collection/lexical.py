"""The lexical leg's terms: each language by its own rule, every script cut into words.

A word (letters, digits and their marks) is stemmed by Snowball in its text's language where
that language is written in the word's script, else in the script's usual one (Latin English,
Cyrillic Russian); Chinese, Japanese and Korean become character bigrams, Thai trigrams, and a
number or a Latin name inside them stays a word. FTS5 stores memo's terms and only splits them
at spaces (`FTS_TOKENIZE`: no diacritic folded); queries go through the same functions and
reach FTS5 as quoted terms only, never as syntax. docs/design.md, "Languages".
"""

from __future__ import annotations

import re
from functools import lru_cache
from unicodedata import normalize

import regex
import Stemmer

from .stopwords import ALL as STOPWORDS

# v2: text is NFC-normalised first (a macOS NFD "й" is "и" + a combining mark, which \w
# splits: "чайные" became "чаи" + "ные"); v3: words split at "_" as FTS5's unicode61 does
# (it stored `max_tokens` as "max" + "tokens", so a question saying `max_tokens` found nothing);
# v4: every language (schema 10): stems by the text's language, marks inside words, CJK bigrams,
# Thai trigrams, and FTS5 folds no diacritic (it stored "của" as "cua" and looked up "của")
LEXICAL_VERSION = "snowball-langid-cjk2-thai3-v4"
# what FTS5 does with memo's stem stream: split at what is not a letter, digit or mark
FTS_TOKENIZE = "unicode61 remove_diacritics 0 categories 'L* N* Co M*'"

WORD = re.compile(r"[^\W_]+", re.UNICODE)  # letters and digits: "_" is no part of a word
# The scripts cut into grams, as code point ranges: stdlib `re` reads them 5x faster than the
# `regex` module's \p{Han} (a search's focus cuts every line of its hits)
_CJK = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
    "\uf900-\ufaff\U00020000-\U0002fa1f"
)  # Hangul jamo, kana, Hangul compatibility jamo, Han, Hangul syllables, Han
_THAI = "\u0e00-\u0e7f"
# The combining marks of the Basic Multilingual Plane but Thai's (category M: a Hindi vowel
# sign is part of its word; Python's \w is not), generated from unicodedata 14.0:
# "".join(ranges of chr(i) for i < 0x10000 with category M*, outside U+0E00-U+0E7F)
MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u05bf\u05c1-\u05c2\u05c4-\u05c5\u05c7"
    "\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7-\u06e8\u06ea-\u06ed"
    "\u0711\u0730-\u074a\u07a6-\u07b0\u07eb-\u07f3\u07fd\u0816-\u0819\u081b-\u0823"
    "\u0825-\u0827\u0829-\u082d\u0859-\u085b\u0898-\u089f\u08ca-\u08e1\u08e3-\u0903"
    "\u093a-\u093c\u093e-\u094f\u0951-\u0957\u0962-\u0963\u0981-\u0983\u09bc\u09be-\u09c4"
    "\u09c7-\u09c8\u09cb-\u09cd\u09d7\u09e2-\u09e3\u09fe\u0a01-\u0a03\u0a3c\u0a3e-\u0a42"
    "\u0a47-\u0a48\u0a4b-\u0a4d\u0a51\u0a70-\u0a71\u0a75\u0a81-\u0a83\u0abc\u0abe-\u0ac5"
    "\u0ac7-\u0ac9\u0acb-\u0acd\u0ae2-\u0ae3\u0afa-\u0aff\u0b01-\u0b03\u0b3c\u0b3e-\u0b44"
    "\u0b47-\u0b48\u0b4b-\u0b4d\u0b55-\u0b57\u0b62-\u0b63\u0b82\u0bbe-\u0bc2\u0bc6-\u0bc8"
    "\u0bca-\u0bcd\u0bd7\u0c00-\u0c04\u0c3c\u0c3e-\u0c44\u0c46-\u0c48\u0c4a-\u0c4d"
    "\u0c55-\u0c56\u0c62-\u0c63\u0c81-\u0c83\u0cbc\u0cbe-\u0cc4\u0cc6-\u0cc8\u0cca-\u0ccd"
    "\u0cd5-\u0cd6\u0ce2-\u0ce3\u0d00-\u0d03\u0d3b-\u0d3c\u0d3e-\u0d44\u0d46-\u0d48"
    "\u0d4a-\u0d4d\u0d57\u0d62-\u0d63\u0d81-\u0d83\u0dca\u0dcf-\u0dd4\u0dd6\u0dd8-\u0ddf"
    "\u0df2-\u0df3\u0eb1\u0eb4-\u0ebc\u0ec8-\u0ecd\u0f18-\u0f19\u0f35\u0f37\u0f39"
    "\u0f3e-\u0f3f\u0f71-\u0f84\u0f86-\u0f87\u0f8d-\u0f97\u0f99-\u0fbc\u0fc6\u102b-\u103e"
    "\u1056-\u1059\u105e-\u1060\u1062-\u1064\u1067-\u106d\u1071-\u1074\u1082-\u108d\u108f"
    "\u109a-\u109d\u135d-\u135f\u1712-\u1715\u1732-\u1734\u1752-\u1753\u1772-\u1773"
    "\u17b4-\u17d3\u17dd\u180b-\u180d\u180f\u1885-\u1886\u18a9\u1920-\u192b\u1930-\u193b"
    "\u1a17-\u1a1b\u1a55-\u1a5e\u1a60-\u1a7c\u1a7f\u1ab0-\u1ace\u1b00-\u1b04\u1b34-\u1b44"
    "\u1b6b-\u1b73\u1b80-\u1b82\u1ba1-\u1bad\u1be6-\u1bf3\u1c24-\u1c37\u1cd0-\u1cd2"
    "\u1cd4-\u1ce8\u1ced\u1cf4\u1cf7-\u1cf9\u1dc0-\u1dff\u20d0-\u20f0\u2cef-\u2cf1\u2d7f"
    "\u2de0-\u2dff\u302a-\u302f\u3099-\u309a\ua66f-\ua672\ua674-\ua67d\ua69e-\ua69f"
    "\ua6f0-\ua6f1\ua802\ua806\ua80b\ua823-\ua827\ua82c\ua880-\ua881\ua8b4-\ua8c5"
    "\ua8e0-\ua8f1\ua8ff\ua926-\ua92d\ua947-\ua953\ua980-\ua983\ua9b3-\ua9c0\ua9e5"
    "\uaa29-\uaa36\uaa43\uaa4c-\uaa4d\uaa7b-\uaa7d\uaab0\uaab2-\uaab4\uaab7-\uaab8"
    "\uaabe-\uaabf\uaac1\uaaeb-\uaaef\uaaf5-\uaaf6\uabe3-\uabea\uabec-\uabed\ufb1e"
    "\ufe00-\ufe0f\ufe20-\ufe2f"
)
# one piece of text: a run of CJK, a run of Thai, or a word of anything else (letters, digits
# and their marks; "_" is no part of a word, as in FTS5)
_PIECE = re.compile(rf"([{_CJK}]+)|([{_THAI}]+)|((?:[^\W_{_CJK}{_THAI}]|[{MARKS}])+)")
# the same, fast for the usual text: runs of word characters, cut further (_PIECE) only where
# they hold "_", CJK or Thai
_RUN = re.compile(rf"[\w{MARKS}{_THAI}]+")
_SPECIAL = re.compile(rf"[_{_CJK}{_THAI}]")


def _pieces(text: str) -> list[tuple[str, str, str]]:
    """`_PIECE.findall(text)`: (CJK run, Thai run, word), one of the three set."""
    out: list[tuple[str, str, str]] = []
    for run in _RUN.findall(text):
        if _SPECIAL.search(run) is None:
            out.append(("", "", run))
        else:
            out += _PIECE.findall(run)
    return out


_MAX_QUERY_TERMS = 64
BIGRAM, TRIGRAM = 2, 3

# Snowball's languages (PyStemmer), by ISO 639-1 code
SNOWBALL = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech",
    "da": "danish", "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian",
    "fi": "finnish", "fr": "french", "de": "german", "el": "greek", "hi": "hindi",
    "hu": "hungarian", "id": "indonesian", "ga": "irish", "it": "italian", "lt": "lithuanian",
    "ne": "nepali", "no": "norwegian", "fa": "persian", "pl": "polish", "pt": "portuguese",
    "ro": "romanian", "ru": "russian", "sr": "serbian", "es": "spanish", "sv": "swedish",
    "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}  # fmt: skip
# a word's script -> the language its words are stemmed in when the text's language is not
# written in it (a Latin name in Russian prose is stemmed as English, as memo always did)
_SCRIPTS = [
    ("latn", regex.compile(r"^[\p{Latin}\p{M}\p{N}]+$"), "en"),
    ("cyrl", regex.compile(r"^[\p{Cyrillic}\p{M}\p{N}]+$"), "ru"),
    ("grek", regex.compile(r"^[\p{Greek}\p{M}\p{N}]+$"), "el"),
    ("arab", regex.compile(r"^[\p{Arabic}\p{M}\p{N}]+$"), "ar"),
    ("deva", regex.compile(r"^[\p{Devanagari}\p{M}\p{N}]+$"), "hi"),
    ("armn", regex.compile(r"^[\p{Armenian}\p{M}\p{N}]+$"), "hy"),
    ("taml", regex.compile(r"^[\p{Tamil}\p{M}\p{N}]+$"), "ta"),
]
_WRITTEN = {  # the script each stemmed language is written in (the rest: Latin)
    "ru": "cyrl", "sr": "cyrl", "el": "grek", "ar": "arab", "fa": "arab", "hi": "deva",
    "ne": "deva", "hy": "armn", "ta": "taml", "yi": "hebr",
}  # fmt: skip
_stemmers: dict[str, Stemmer.Stemmer] = {}


def _stemmer(lang: str) -> Stemmer.Stemmer:
    if lang not in _stemmers:
        _stemmers[lang] = Stemmer.Stemmer(SNOWBALL[lang])
    return _stemmers[lang]


@lru_cache(maxsize=200_000)
def stem(word: str, lang: str | None = None) -> str:
    """A lower-cased word's stem in language `lang` (a text's, `langid`), or in its script's
    usual language when `lang` is not written in that script; as written when no Snowball
    stemmer fits (digits, mixed scripts, a language Snowball lacks)."""
    if word.isdigit():
        return word
    for script, rx, usual in _SCRIPTS:
        if rx.match(word):
            if lang in SNOWBALL and _WRITTEN.get(lang, "latn") == script:
                use = lang
            else:
                use = usual
            if use == "ru":
                word = word.replace("ё", "е")
            return str(_stemmer(use).stemWord(word))
    return word


def _grams(run: str, n: int) -> list[str]:
    return [run] if len(run) <= n else [run[i : i + n] for i in range(len(run) - n + 1)]


def terms(text: str, lang: str | None = None) -> list[str]:
    """Text -> its terms in order (duplicates kept: BM25 counts them): stems, CJK bigrams,
    Thai trigrams (see the module docstring), read as language `lang`."""
    out: list[str] = []
    for cjk, thai, word in _pieces(normalize("NFC", text).lower()):
        if word:  # the common case first: a search's focus cuts every line of its hits
            out.append(stem(word, lang))
        elif cjk:
            out += _grams(cjk, BIGRAM)
        else:
            out += _grams(thai, TRIGRAM)
    return out


def spans(text: str, lang: str | None = None) -> list[tuple[int, int, str]]:
    """Each of `terms(text, lang)` with where it stands in `text`: (start, end, term)."""
    out: list[tuple[int, int, str]] = []
    for m in _PIECE.finditer(text):
        cjk, thai, word = m.groups()
        if word:
            out.append((m.start(), m.end(), terms(word, lang)[0]))
            continue
        run, n = (cjk, BIGRAM) if cjk else (thai, TRIGRAM)
        if len(run) <= n:
            out.append((m.start(), m.end(), run.lower()))
            continue
        at = m.start()
        out += [(at + i, at + i + n, run[i : i + n].lower()) for i in range(len(run) - n + 1)]
    return out


def lex_text(text: str, lang: str | None = None) -> str:
    """What FTS5 stores for a chunk in language `lang`."""
    return " ".join(terms(text, lang))


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


def query_terms(query: str, lang: str | None = None) -> list[str]:
    """The distinct terms a query searches for, read as language `lang` (the question's):
    function words dropped unless that is all."""
    return [forms[0] for forms in query_forms(query, lang)]


def query_forms(
    query: str, lang: str | None = None, others: tuple[str, ...] = ()
) -> list[tuple[str, ...]]:
    """`query_terms(query, lang)`, each with the other stems its word takes in the `others`
    languages: (term, *alternatives). The index stems a chunk by its own language, which a
    short question's words may not be told in: the search takes the form the index holds."""
    pieces = _pieces(normalize("NFC", query).lower())
    words = [w for _, _, w in pieces if w]
    content = {w for w in words if w.replace("ё", "е") not in STOPWORDS} or set(words)
    seen: dict[str, tuple[str, ...]] = {}
    for cjk, thai, word in pieces:
        if word and word not in content:
            continue
        if cjk or thai:
            for t in _grams(cjk, BIGRAM) if cjk else _grams(thai, TRIGRAM):
                seen.setdefault(t, (t,))
        else:
            t = stem(word, lang)
            alts = dict.fromkeys(stem(word, o) for o in others)
            seen.setdefault(t, (t, *(x for x in alts if x != t)))
        if len(seen) >= _MAX_QUERY_TERMS:
            break
    return list(seen.values())[:_MAX_QUERY_TERMS]
