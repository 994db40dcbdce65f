"""Marking the query's words in a hit's text, the way the lexical leg matched them.

The lexical leg compares terms, not letters: "домена" in a note matches "домен" in a query, a
Chinese bigram its bigram. The page marks exactly those, so what is highlighted is what the index
matched: the text's terms are cut as the index cuts them (`lexical.spans`, read in the question's
language) and marked when one is among the query's terms (`lexical.query_terms`: function words
dropped, as the search drops them, so "the" and "и" are not lit up everywhere).

Every piece of note text is escaped here before it is joined with `<mark>` tags: the result is
`Markup`, safe to put in a template as is.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from ...collection.langid import detect
from ...collection.lexical import query_terms, spans


class QueryStems(frozenset[str]):
    """The terms a search looks for, and the language the question is read in."""

    lang: str | None = None


def query_stems(query: str) -> QueryStems:
    """The terms a search for `query` looks for."""
    lang = detect(query, query=True)
    stems = QueryStems(query_terms(query, lang))
    stems.lang = lang
    return stems


def marked(text: str, stems: frozenset[str]) -> Markup:
    """`text`, escaped, with each stretch whose term is in `stems` wrapped in <mark>
    (overlapping character grams of one stretch marked once)."""
    if not stems:
        return escape(text)
    lang = stems.lang if isinstance(stems, QueryStems) else None
    runs: list[list[int]] = []
    for start, end, term in spans(text, lang):  # the terms the index holds
        if term in stems:
            if runs and start <= runs[-1][1]:
                runs[-1][1] = max(runs[-1][1], end)
            else:
                runs.append([start, end])
    out: list[str] = []
    at = 0
    for start, end in runs:
        out.append(escape(text[at:start]))
        out.append(Markup("<mark>%s</mark>") % text[start:end])
        at = end
    out.append(escape(text[at:]))
    return Markup("").join(out)
