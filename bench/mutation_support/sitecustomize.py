"""Run at the start of every new Python under bench/mutation.py's mutmut run (this folder is on
PYTHONPATH): in a test's child process, mutmut's hit recorder is replaced (memo_mutation_hits
says why). mutmut's own processes are forks, never new interpreters, and start without
MUTANT_UNDER_TEST, so this does nothing there."""

import os

if os.environ.get("MUTANT_UNDER_TEST") == "stats" and os.environ.get("MEMO_MUTATION_HITS"):
    import memo_mutation_child

    memo_mutation_child.start()
