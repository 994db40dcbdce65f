"""Marking the query's words in a hit's text, the way the lexical leg matched them.

The lexical leg compares Snowball stems, not letters: "домена" in a note matches "домен" in a
query. The page marks exactly those words, so what is highlighted is what the index matched: each
word of the text is stemmed with the same function (`lexical.stem`) and marked when its stem is
one of the query's stems (`lexical.query_terms`: function words dropped, as the search drops
them, so "the" and "и" are not lit up everywhere).

Every piece of note text is escaped here before it is joined with `<mark>` tags: the result is
`Markup`, safe to put in a template as is.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from ...collection.lexical import WORD, query_terms, stem


def query_stems(query: str) -> frozenset[str]:
    """The stems a search for `query` looks for."""
    return frozenset(query_terms(query))


def marked(text: str, stems: frozenset[str]) -> Markup:
    """`text`, escaped, with each word whose stem is in `stems` wrapped in <mark>."""
    if not stems:
        return escape(text)
    out: list[str] = []
    at = 0
    for m in WORD.finditer(text):  # the words the index holds
        word = m.group()
        if stem(word.lower()) in stems:
            out.append(escape(text[at : m.start()]))
            out.append(Markup("<mark>%s</mark>") % word)
            at = m.end()
    out.append(escape(text[at:]))
    return Markup("").join(out)
