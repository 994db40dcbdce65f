"""Search: from a question to ranked hits. "Why is this hit first?" is answered here.

    legs.py        each leg's candidates over every collection of a Scope, with the whole
                   scope's statistics (lexical) and the query's vector (vector); Reader
    bm25.py        BM25 over many indexes' summed statistics (the "DFS" step)
    fusion.py      the legs' standardised scores fused; several phrasings; the note witness
    ranking.py     Ranking: one scope ranked once, read as hits (search and route share it)
    focus.py       the lines of a hit that answer best
    confidence.py  high / low / none: is there an answer at all
    languages.py   when the question's language is not the notes'
    diversity.py   one note cannot take every slot
    budget.py      fitting hits into an agent's token budget
    excerpt.py     reading lines of a note, and the citation hash
    results.py     Hit, Freshness, Budget, SearchResult

The SQL each leg runs on one index is collection/reads.py; `Library.search` and
`Library.rank` (library/library.py) are the doors in.
"""
