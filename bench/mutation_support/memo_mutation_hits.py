"""A pytest plugin (bench/mutation.py loads it with -p) that lets mutmut see, and mutate, the code
that a test's child process runs (`python -m memo ...`, `python -c ...`).

mutmut marks the mutant under test in the environment (MUTANT_UNDER_TEST), which a child
inherits, but three things stand in the way:

- the child imports the installed memo, not mutmut's mutated copy: the plugin puts that copy
  (mutants/src) first on the children's PYTHONPATH when the test session starts (only then:
  on the PYTHONPATH of mutmut's own process it made mutmut record no test at all);
- while mutmut records which tests reach which function (MUTANT_UNDER_TEST=stats), each hit
  calls mutmut's `config()`, which reads pyproject.toml from the current folder: a child
  running in a test's tmp folder finds none and dies ("Could not figure out where the code to
  mutate is"), the test fails and mutmut stops ("failed to collect stats");
- the child's hits would stay in the child, so a function only a child reaches would count as
  covered by no test.

The sitecustomize beside this file replaces a child's hit recorder by one that appends each
function's name to a file under MEMO_MUTATION_HITS (memo_mutation_child); this plugin adds those
names to the test that ran the child, at its teardown, before mutmut's own teardown hook reads
them. A child that outlives its test is credited to the next one.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    import memo

    mutated = str(Path(memo.__file__).resolve().parents[1])  # mutants/src
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if mutated not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([mutated, *paths])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    folder = os.environ.get("MEMO_MUTATION_HITS")
    if folder and os.environ.get("MUTANT_UNDER_TEST") == "stats":
        from mutmut.state import state

        for f in Path(folder).glob("*.txt"):
            state()._stats.update(f.read_text(encoding="utf-8").split())
            f.unlink()
    yield
