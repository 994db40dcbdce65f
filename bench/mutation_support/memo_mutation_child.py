"""A test's child process under mutmut's stats run: its hits go to a file (memo_mutation_hits)."""

from __future__ import annotations

import os
from pathlib import Path


def start() -> None:
    import mutmut.mutation.trampoline as trampoline

    out = Path(os.environ["MEMO_MUTATION_HITS"]) / f"{os.getpid()}.txt"
    seen: set[str] = set()

    def record(name: str, caller: str | None = None) -> None:
        if name not in seen:  # written at once: a child killed with -9 keeps its hits
            seen.add(name)
            with open(out, "a", encoding="utf-8") as f:
                f.write(name + "\n")

    trampoline.record_trampoline_hit = record
