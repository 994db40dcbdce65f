"""A collection: one folder of notes (a `_meta.yaml` makes it one) and its rebuildable index.

    meta.py      _meta.yaml -> CollectionMeta          files.py    which files are its notes
    chunker.py   markdown -> heading-scoped chunks     lexical.py  stems for the lexical leg
    store.py     the index database and its profile    pool.py     the bound on open indexes
    sync.py      notes -> index (incremental)          queries.py  what a search reads
    status.py    what `memo status` says               summary.py  what the registry is told
    skips.py     why a note is not indexed (kinds)     site.py     what sync and status read
    bm25.py      FTS5's BM25 over many indexes' sums  collection.py  Collection: one folder
    staleness.py which notes an index is behind on                  tied to its index
    lease.py     who computes an index's vectors      excluded.py what is left out on purpose
    markdown.py  Obsidian/Logseq syntax as read       coverage.py what a note's lines in no
                                                                  chunk are, told to people

Nothing is imported here: `memo.collection.meta` or `.files` stay cheap to import alone.
"""
