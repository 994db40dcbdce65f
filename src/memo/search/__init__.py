"""Search: from a question to ranked hits. "Why is this hit first?" is answered here.

Its modules, one line each: docs/design.md's map. The SQL each leg runs on one index is
collection/reads.py; `Library.search` and `Library.rank` (library/library.py) are the doors in.
"""
