"""Routing: which collections should a question be searched in (DESIGN "Routing").

route.py    route_in(): the strategy by size (flat / tree / hybrid), RRF of the two legs
lexical.py  BM25 over the registry's words and the collections' content stems
vectors.py  cosine with descriptions and chunk centroids (merged from 20,000 collections)
"""
