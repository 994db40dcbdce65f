"""How an index stores its vectors: int8, each vector scaled by its own factor (issue 24, item 1).

Each unit float32 vector is multiplied so that its largest |component| is 127 and rounded into
vec0's `int8[dim]` (384 bytes instead of 1,536); cosine ignores the scale, so none is stored.
Every reader and writer of the vector tables goes through here: `quantize` on the way in (a
query too: vec0 compares int8 with int8), `dequantize` on the way out (`stored` also reads an
index from before schema 4). Invariant: quantizing a dequantized vector gives back its exact
codes, so a vector read back and written again never drifts. Figures: docs/design.md, "Index".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

PEAK = 127  # the largest |code|; -128 is never used, so a vector and its negation are symmetric


def quantize(vecs: np.ndarray) -> np.ndarray:
    """int8 codes of a vector (dim,) or of vectors (n, dim): each scaled so its largest
    |component| is PEAK, then rounded. An all-zero vector stays zero."""
    v = np.asarray(vecs, dtype=np.float64)
    peak = np.max(np.abs(v), axis=-1, keepdims=True)
    scale = np.divide(PEAK, peak, out=np.zeros_like(peak), where=peak > 0)
    return np.clip(np.rint(v * scale), -PEAK, PEAK).astype(np.int8)


def dequantize(codes: bytes | np.ndarray) -> np.ndarray:
    """Float32 unit vectors from int8 codes: a blob or an int8 array, (dim,) or (n, dim)."""
    if isinstance(codes, bytes | bytearray | memoryview):
        codes = np.frombuffer(codes, dtype=np.int8)
    v = np.asarray(codes, dtype=np.float32)
    norm = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.divide(v, norm, out=np.zeros_like(v), where=norm > 0)


def as_indexed(query: np.ndarray) -> np.ndarray:
    """A query vector (dim,) or vectors (n, dim) as the index holds a vector: quantized, then
    read back as float32 unit rows. Every cosine against stored vectors takes the query so, so
    the vector leg, its explanation, the focus and `memo why` agree to the last digit."""
    return dequantize(quantize(np.asarray(query, dtype=np.float32)))


def dequantize_rows(blobs: Sequence[bytes]) -> np.ndarray:
    """(n, dim) float32 unit vectors from n blobs of int8 codes."""
    return dequantize(np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), -1))


def stored(blob: bytes, dim: int) -> np.ndarray | None:
    """A vector as any index holds it, as float32: int8 codes (dim bytes, schema 4 on)
    dequantized; float32 (4 * dim bytes: an index of schema 3 or before, not rebuilt yet: its
    salvage, or the registry reading its centroid) exactly as stored. None for another size."""
    if len(blob) == dim:
        return dequantize(bytes(blob))
    if len(blob) == 4 * dim:
        return np.frombuffer(blob, dtype=np.float32)
    return None
