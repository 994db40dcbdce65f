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
_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc"
# one piece of text: a run of CJK, a run of Thai, or a word of anything else
_PIECE = regex.compile(
    rf"([{_CJK}]+)|(\p{{Thai}}+)|((?:(?![{_CJK}\p{{Thai}}])[\p{{L}}\p{{N}}\p{{M}}])+)"
)
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
    for cjk, thai, word in _PIECE.findall(normalize("NFC", text).lower()):
        if cjk:
            out += _grams(cjk, BIGRAM)
        elif thai:
            out += _grams(thai, TRIGRAM)
        else:
            out.append(stem(word, lang))
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
    pieces = _PIECE.findall(normalize("NFC", query).lower())
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
