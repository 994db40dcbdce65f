"""multilingual-e5-small as an ONNX export in a local folder, run through fastembed.

fastembed does not list multilingual-e5-small, so the folder is registered as a custom model
(mean pooling, normalised). fastembed adds no e5 prefixes: this class does.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmbedderUnavailableError
from .base import DIM, MAX_TOKENS, MODEL_ID, Embedder, normalise
from .ort_backend import model_file

_CUSTOM_NAME = "memo/multilingual-e5-small"
_register_lock = threading.Lock()
_registered = False


def _model_file(folder: Path) -> str:
    """The ONNX file's name inside the folder (the layouts ort_backend.model_file knows)."""
    found = model_file(folder)
    if not found.is_file():
        raise EmbedderUnavailableError(
            f"no model.onnx in {folder}",
            "MEMO_MODEL_DIR must hold model.onnx (or onnx/model.onnx) and tokenizer.json.",
        )
    return str(found.relative_to(folder))


class FastembedEmbedder(Embedder):
    backend = "fastembed"
    model_id = MODEL_ID
    dim = DIM
    max_tokens = MAX_TOKENS

    # Batch size 1 is fastest here: on 2 cores with ~270-token chunks, ONNX Runtime embeds
    # 13-14 passages/s one at a time and 7-8/s in batches of 16 (padding and larger attention
    # tensors cost more than the per-call overhead saves). Measured by bench/embedders.py.
    def __init__(self, folder: Path, batch_size: int = 1) -> None:
        self.folder = Path(folder)
        self.batch_size = batch_size
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.RLock()

    def _load(self) -> Any:
        global _registered
        if self._model is None:
            with self._lock:
                if self._model is None:
                    model_file = _model_file(self.folder)
                    try:
                        from fastembed import TextEmbedding
                        from fastembed.common.model_description import ModelSource, PoolingType
                    except ImportError as e:
                        raise EmbedderUnavailableError(f"fastembed is not installed: {e}") from e
                    with _register_lock:
                        if not _registered:
                            TextEmbedding.add_custom_model(
                                model=_CUSTOM_NAME,
                                pooling=PoolingType.MEAN,
                                normalization=True,
                                sources=ModelSource(hf=MODEL_ID),
                                dim=DIM,
                                model_file=model_file,
                            )
                            _registered = True
                    try:
                        self._model = TextEmbedding(
                            _CUSTOM_NAME,
                            specific_model_path=str(self.folder),
                            local_files_only=True,
                            threads=os.cpu_count(),
                        )
                    except Exception as e:
                        raise EmbedderUnavailableError(
                            f"fastembed could not load the model in {self.folder}: {e}"
                        ) from e
        return self._model

    def _tok(self) -> Any:
        """One tokenizer for counting and embedding: fastembed's own.

        The multilingual tokenizer (250,002 pieces) takes ~240 MB once loaded; a second copy
        just for counting tokens doubled that (measured: RSS 322 MB for the tokenizer alone).
        fastembed's copy truncates at 512 tokens, so a count that overflows is redone with
        truncation off, under the lock that also guards every embedding call.
        """
        if self._tokenizer is None:
            model = self._load()
            tok = getattr(getattr(model, "model", None), "tokenizer", None)
            if tok is None:  # a fastembed that keeps it elsewhere: load our own copy
                tok = self._own_tokenizer()
            self._tokenizer = tok
        return self._tokenizer

    def _own_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        try:
            return Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        except Exception as e:  # the tokenizers library raises plain Exception subclasses
            raise EmbedderUnavailableError(
                f"cannot read {self.folder / 'tokenizer.json'}: {e}",
                "MEMO_MODEL_DIR must hold model.onnx and tokenizer.json of "
                "intfloat/multilingual-e5-small.",
            ) from e

    def build_id(self) -> str:
        """fastembed's version and the folder's files' sha256 (embed/cache.py keys with it)."""
        import importlib.metadata

        from .model_files import known_sha256 as sha

        model = self.folder / _model_file(self.folder)
        tok = self.folder / "tokenizer.json"
        try:
            version = importlib.metadata.version("fastembed")
        except importlib.metadata.PackageNotFoundError:
            version = "unknown"
        return f"fastembed {version} model={sha(model)} tokenizer={sha(tok)}"

    def count_tokens(self, passage: str) -> int:
        tok = self._tok()
        text = "passage: " + passage
        with self._lock:
            enc = tok.encode(text)
            if not enc.overflowing:
                return len(enc.ids)
            truncation = tok.truncation
            tok.no_truncation()
            try:
                return len(tok.encode(text).ids)
            finally:
                if truncation:
                    tok.enable_truncation(**truncation)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        with self._lock:  # count_tokens may toggle the shared tokenizer's truncation
            vecs = list(model.embed([f"passage: {t}" for t in texts], batch_size=self.batch_size))
        return normalise(np.vstack(vecs))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: Sequence[str], passages: Sequence[str] = ()) -> np.ndarray:
        if not texts and not passages:
            return np.zeros((0, self.dim), dtype=np.float32)
        prefixed = [f"query: {t}" for t in texts] + [f"passage: {t}" for t in passages]
        model = self._load()
        with self._lock:
            return normalise(np.vstack(list(model.embed(prefixed))))
