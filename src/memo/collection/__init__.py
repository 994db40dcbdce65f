"""A collection: one folder of notes (a `_meta.yaml` makes it one) and its rebuildable index.
This package stores and reads; how a search ranks what it reads is search/.

    collection.py  Collection: one folder tied to its index
    meta.py        _meta.yaml -> CollectionMeta
    files.py       which files are its notes          excluded.py   what is left out on purpose
    markdown.py    Obsidian/Logseq syntax as read     chunker.py    markdown -> heading chunks
    splitter.py    a long section -> pieces that fit  windows.py    each chunk's sentence windows
    langid.py      which language a text is in        lexical.py    terms for the lexical leg
    stopwords.py   words the lexical leg skips
    coverage.py    lines in no chunk, and why         skips.py      why a note is not indexed
    store.py       the index database and profile     vectors.py    int8 vectors and back
    pool.py        the bound on open indexes          reads.py      what a search reads
    sync.py        notes -> index: the text first     embedding.py  then the vectors
    progress.py    what sync reports as it goes       staleness.py  which notes an index is behind
    lease.py       who reads notes, who embeds        site.py       what sync and status read
    filters.py     frontmatter filters (tags, dates)  health.py     what `memo status` says
    summary.py     what the registry is told

Nothing is imported here: `memo.collection.meta` or `.files` stay cheap to import alone.
"""
