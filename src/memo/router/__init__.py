"""Routing: which collections should a question be searched in (DESIGN "Routing").

route.py        summary_rank(): the summary's legs fused by RRF; the shapes (flat / tree / summary)
lexical_leg.py  BM25 over the registry's words and the collections' content stems
vector_leg.py   cosine with descriptions and chunk centroids (merged from 20,000 collections)
"""
