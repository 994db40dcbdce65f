"""Where a question's terms stand in a text, read as the lexical leg reads both.

The lexical leg compares terms, not letters: "домена" in a note matches "домен" in a question,
a Chinese bigram its bigram. `QueryTerms` holds what a search for the question looks for
(function words dropped, as the search drops them) and the language it is read in; `runs` gives
the stretches of a text whose terms are among them, overlapping grams merged into one.
"""

from __future__ import annotations

from .langid import detect
from .lexical import query_terms, spans


class QueryTerms(frozenset[str]):
    """The terms a search looks for, and the language the question is read in."""

    lang: str | None = None


def terms_of(query: str) -> QueryTerms:
    """The terms a search for `query` looks for."""
    lang = detect(query, query=True)
    terms = QueryTerms(query_terms(query, lang))
    terms.lang = lang
    return terms


def runs(text: str, terms: frozenset[str]) -> list[tuple[int, int]]:
    """(start, end) of each stretch of `text` whose term, cut as the index cuts the text (in
    the question's language), is among `terms`; touching or overlapping stretches merged."""
    lang = terms.lang if isinstance(terms, QueryTerms) else None
    out: list[list[int]] = []
    for start, end, term in spans(text, lang):
        if term in terms:
            if out and start <= out[-1][1]:
                out[-1][1] = max(out[-1][1], end)
            else:
                out.append([start, end])
    return [(a, b) for a, b in out]
