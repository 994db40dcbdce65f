"""What a collection tells the registry about itself: counts, headings, top stems, centroid.

The router reads these (registry_tools/, router/): a description is one line a person wrote;
the headings, the most frequent content stems and the centroid of the chunk vectors say what
the notes actually hold. All of it comes from the collection's own index, read-only: no note
is re-read, no text re-embedded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import apsw
import numpy as np

from .. import sqlite
from ..errors import MemoError
from .lexical import stem
from .stopwords import ALL as STOPWORDS
from .store import has_vector_table, reading
from .vectors import stored

HEADINGS_CHARS = 4000
CONTENT_TERMS = 256  # content stems per collection in the router's FTS row
_STOP_STEMS = frozenset(stem(w) for w in STOPWORDS)


@dataclass(frozen=True, slots=True)
class Summary:
    files: int | None  # None: the index exists but cannot be read
    chunks: int | None
    last_indexed: float | None
    headings: str  # distinct headings in file order, one per line
    stems: str  # the most frequent content stems, space-separated
    centroid: bytes | None  # normalised mean of the chunk vectors, float16; None without any
    languages: str = ""  # share of the chunks per language, "ru:0.93 en:0.07" (LANGUAGES)


EMPTY = Summary(0, 0, None, "", "", None)  # no index yet
UNREADABLE = Summary(None, None, None, "", "", None)
# A chunk's language is the one its index stored (langid.py); a chunk without words that say
# one (code, numbers) counts as MIXED.
MIXED = "mixed"


def summarize(index_path: Path) -> Summary:
    """The summary of the index at `index_path` (EMPTY when it does not exist)."""
    if not index_path.exists():
        return EMPTY
    try:
        with reading(index_path) as conn:
            (files,) = conn.execute("SELECT count(*) FROM files WHERE status='ok'").fetchone()
            (chunks,) = conn.execute("SELECT count(*) FROM chunks").fetchone()
            (last,) = conn.execute("SELECT max(indexed_at) FROM files").fetchone()
            return Summary(
                int(files),
                int(chunks),
                last,
                _headings(conn),
                _stems(conn),
                _centroid(conn),
                languages(conn, int(chunks)),
            )
    except (apsw.Error, MemoError, UnicodeDecodeError):
        return UNREADABLE


def languages(conn: apsw.Connection, chunks: int) -> str:
    """The share of the chunks per language, as "ru:0.93 en:0.07" (largest first; a share that
    rounds to 0.00 not named)."""
    if not chunks:
        return ""
    rows = conn.execute("SELECT lang, count(*) FROM chunks GROUP BY 1")
    counts: dict[str, int] = {}
    for lang, n in rows:
        counts[lang or MIXED] = counts.get(lang or MIXED, 0) + int(n)
    total = sum(counts.values())
    if not total:
        return ""
    ranked = sorted(counts.items(), key=lambda x: (-x[1], x[0]))
    return " ".join(f"{lang}:{n / total:.2f}" for lang, n in ranked if n / total >= 0.005)


def _stems(conn: apsw.Connection, terms: int = CONTENT_TERMS) -> str:
    """The `terms` most frequent stems of the chunks (fts5vocab over the collection's own FTS),
    function words dropped; the router's BM25 weighs them across collections."""
    rows = conn.execute("SELECT term, cnt FROM chunks_vocab")
    counts = [(int(c), t) for t, c in rows if len(t) > 1 and t not in _STOP_STEMS]
    counts.sort(key=lambda x: (-x[0], x[1]))
    return " ".join(t for _, t in counts[:terms])


def _centroid(conn: apsw.Connection) -> bytes | None:
    """The normalised mean of the chunk vectors, float16 (None without vectors). Read as the
    index holds them: int8 codes, or float32 in an index from before schema 4 (vectors.py)."""
    if not has_vector_table(conn):
        return None
    dim = int((sqlite.read_profile(conn) or {}).get("dim") or 0)
    acc: np.ndarray | None = None
    for (blob,) in conn.execute("SELECT embedding FROM chunks_vec"):
        v = stored(blob, dim)
        if v is None:
            continue
        acc = v.astype(np.float64) if acc is None else acc + v
    if acc is None:
        return None
    norm = float(np.linalg.norm(acc))
    return (acc / norm).astype(np.float16).tobytes() if norm > 0 else None


def _headings(conn: apsw.Connection) -> str:
    """The distinct headings of the notes, in file order, cut at HEADINGS_CHARS."""
    out: list[str] = []
    seen: set[str] = set()
    size = 0
    for (h,) in conn.execute("SELECT heading FROM chunks ORDER BY path, ord"):
        for part in str(h).split(" > "):
            if part and part not in seen:
                seen.add(part)
                out.append(part)
                size += len(part) + 1
        if size >= HEADINGS_CHARS:
            break
    return "\n".join(out)[:HEADINGS_CHARS]
