"""Search, past the indexes: fusing the legs, judging confidence, shaping what comes back.

    fusion.py      the lexical and vector legs' standardised scores fused (the rule and why)
    confidence.py  high / low / none: is there an answer at all
    diversity.py   one note cannot take every slot
    budget.py      fitting hits into an agent's token budget
    excerpt.py     reading lines of a note, and the citation hash
    results.py     Hit, Freshness, Budget, SearchResult

The federated search that runs the legs over many collections is library/federated.py.
"""
