# apsw read as untyped (pyproject [tool.mypy] says why): its own stubs type every column of
# every row as any SQLite value, where memo's schema says what each column holds.
from typing import Any

def __getattr__(name: str) -> Any: ...
