"""An index's vectors are int8 codes, one scale per vector (collection/vectors.py, issue 24)."""

from __future__ import annotations

import numpy as np
import pytest

from memo.collection.vectors import PEAK, dequantize, dequantize_rows, quantize, stored

PASSAGES = [
    "Policy based routing marks packets with mangle rules.",
    "BGP sessions need a router id and an AS number on both ends.",
    "500 г муки, 350 г воды и 10 г соли; закваска 100 г.",
    "Печь 20 минут под крышкой при 250 °C, затем 25 минут без крышки.",
]
QUERIES = ["how do I mark packets for routing", "сколько соли в хлебе", "BGP router id"]


def unit(n: int, seed: int = 1) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_a_vector_is_scaled_to_its_own_peak():
    v = unit(200)
    codes = quantize(v)
    assert codes.dtype == np.int8 and codes.shape == v.shape
    assert (np.abs(codes).max(axis=1) == PEAK).all()
    assert quantize(v[0]).tobytes() == codes[0].tobytes()  # one vector or many: the same codes
    assert (quantize(3 * v) == codes).all()  # the scale is not stored: it does not matter


def test_requantizing_a_dequantized_vector_gives_its_codes(real_embedder):
    """A vector read back from an index (an unchanged chunk's, a rebuild's through the
    embedding cache) and written again is byte for byte what was stored."""
    model = np.asarray(real_embedder.embed_passages(PASSAGES), dtype=np.float32)
    for v in (unit(2000), model):
        codes = quantize(v)
        back = dequantize_rows([c.tobytes() for c in codes])
        assert back.dtype == np.float32
        assert np.linalg.norm(back, axis=1) == pytest.approx(1.0, abs=1e-6)
        assert quantize(back).tobytes() == codes.tobytes()
        for c in codes[:50]:
            assert quantize(dequantize(c.tobytes())).tobytes() == c.tobytes()


def test_a_cosine_through_int8_is_the_float_one_within_1e3(real_embedder):
    docs = np.asarray(real_embedder.embed_passages(PASSAGES), dtype=np.float32)
    qs = np.vstack([real_embedder.embed_query(q) for q in QUERIES]).astype(np.float32)
    exact = qs @ docs.T
    approx = dequantize(quantize(qs)) @ dequantize(quantize(docs)).T
    assert np.abs(exact - approx).max() < 1e-3
    assert (exact.argmax(axis=1) == approx.argmax(axis=1)).all()


def test_a_zero_vector_stays_zero():
    codes = quantize(np.zeros(384, dtype=np.float32))
    assert not codes.any() and not dequantize(codes.tobytes()).any()


def test_stored_reads_int8_codes_and_an_older_index_float32():
    v = unit(1)[0]
    codes = quantize(v).tobytes()
    assert len(codes) == 384
    assert stored(codes, 384) == pytest.approx(dequantize(codes))
    assert stored(v.tobytes(), 384).tobytes() == v.tobytes()  # schema 3: as stored, exactly
    assert stored(b"\0" * 100, 384) is None
