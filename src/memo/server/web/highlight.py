"""Marking the query's words in a hit's text, the way the lexical leg matched them.

The page marks what the index matched (collection/matching.py: the text's terms cut as the
index cuts them, function words dropped as the search drops them, so "the" and "и" are not lit
up everywhere).

Every piece of note text is escaped here before it is joined with `<mark>` tags: the result is
`Markup`, safe to put in a template as is.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from ...library import runs


def marked(text: str, terms: frozenset[str]) -> Markup:
    """`text`, escaped, with each stretch whose term is in `terms` (a question's `terms_of`)
    wrapped in <mark> (overlapping character grams of one stretch marked once)."""
    if not terms:
        return escape(text)
    out: list[str] = []
    at = 0
    for start, end in runs(text, terms):
        out.append(escape(text[at:start]))
        out.append(Markup("<mark>%s</mark>") % text[start:end])
        at = end
    out.append(escape(text[at:]))
    return Markup("").join(out)
