"""A collection: one folder of notes (a `_meta.yaml` makes it one) and its rebuildable index.
This package stores and reads; how a search ranks what it reads is search/.

Its modules, one line each: docs/design.md's map (rendered from their docstrings). Nothing is
imported here: `memo.collection.meta` or `.files` stay cheap to import alone.
"""
