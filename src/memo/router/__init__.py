"""Routing: which collections should a question be searched in (DESIGN "Routing").

route.py    summary_rank(): the summary's two legs fused by RRF; the shapes (flat / tree / summary)
lexical.py  BM25 over the registry's words and the collections' content stems
vectors.py  cosine with descriptions and chunk centroids (merged from 20,000 collections)
"""
