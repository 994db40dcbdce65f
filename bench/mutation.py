"""Mutation testing of memo's core, per module, with the tests that cover it (issue 32).

    .venv/bin/pip install -e '.[dev,mutation]'
    nice -n 19 .venv/bin/python bench/mutation.py                 # every module below
    nice -n 19 .venv/bin/python bench/mutation.py roots budget    # some of them
    nice -n 19 .venv/bin/python bench/mutation.py --ci            # the CI slice: fails (exit 1)
                                                                  # below a module's threshold

For each module it makes a scratch copy of src/, tests/ and pyproject.toml (under
$TMPDIR/memo-mutation/NAME, or --work), writes the module and its test files into that copy's
[tool.mutmut] (the rest of the section is pyproject.toml's, documented there), runs `mutmut run`
in it with one worker (--jobs), two modules side by side under --ci (--at-once), and prints:
mutants, killed, survived, timed out, no tests, the kill rate ((killed + timed out) / mutants),
the mutation score (the same over the mutants less the survivors explained as equivalent) and
each survivor's diff. A survivor whose changed
lines are listed in bench/mutation_survivors.md (an equivalent mutant, with why), or that only
changes the letter case of SQL or of a codec's name (`case_only`), is marked "explained"; any
other one is a rule that no test pins. `--json FILE` also writes the results, and each
module's row goes into bench/results/mutation.json.

Worked around (issue 32): mutmut's default `process_isolation = "fork"` forks every mutant
from the process that ran the stats session, embedder threads and all (the first mutants all
timed out); pyproject.toml sets "forkserver". A test that starts `memo` as a process: its
child would call mutmut's config() and die in the test's tmp folder, so bench/mutation_support/
(on the children's PYTHONPATH, the mutated src first) records a child's hits into a file and
credits them to the test that started it; a child given an environment of its own (no
PYTHONPATH) runs the unmutated code, killing no mutant but breaking nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from judged import smoke_args  # bench/ is on sys.path when run as a script

REPO = Path(__file__).resolve().parents[1]
SUPPORT = REPO / "bench" / "mutation_support"
SURVIVORS = REPO / "bench" / "mutation_survivors.md"


@dataclass(frozen=True)
class Module:
    path: str  # the file mutated
    tests: tuple[str, ...]  # the test files (or node ids) that cover it
    threshold: float  # the CI fails below this kill rate (the rate measured, rounded down)
    marks: str = "not slow"  # pytest -m: "" runs the slow tests too (memo as a process)
    ci_tests: tuple[str, ...] = ()  # the CI slice's selection, when lighter than `tests`


# The core modules measured so far. `threshold` is what the full run measured with the tests of
# this branch (rounded down, 2026-12-01): raise it when a module's tests get better, never lower
# it to make a run pass.
MODULES: dict[str, Module] = {
    "roots": Module(
        "src/memo/roots.py",
        (
            "tests/test_roots.py",
            "tests/test_roots_rules.py",
            "tests/test_init.py",
            "tests/test_cli.py",
        ),
        0.95,
        marks="",  # test_cli.py runs `python -m memo`: the child processes' hits count
    ),
    "budget": Module(
        "src/memo/search/budget.py",
        ("tests/test_budget_rules.py", "tests/test_agent.py", "tests/test_agent_text.py"),
        0.99,
    ),
    "targets": Module(
        "src/memo/library/targets.py",
        (
            "tests/test_targets_rules.py",
            "tests/test_search.py",
            "tests/test_agent.py",
            "tests/test_agent_text.py",
        ),
        0.95,
    ),
    "chunker": Module(
        "src/memo/collection/chunker.py",
        # not test_index.py: it indexes whole libraries, 8.5 s more for every surviving mutant
        # on top of these three files' 7 s (1,015 mutants), and what it sees of the chunker
        # (lines, heading paths, the coverage report) the chunker's own tests pin on small notes
        ("tests/test_chunker_rules.py", "tests/test_chunker.py", "tests/test_coverage.py"),
        0.94,  # 94.4% of 1,015 (2026-12-01; 41 min at a load of 4-8)
    ),
    "diversity": Module(
        "src/memo/search/diversity.py",
        ("tests/test_diversity_rules.py", "tests/test_agent.py", "tests/test_requests.py"),
        0.96,
    ),
    "excerpt": Module(
        "src/memo/search/excerpt.py",
        ("tests/test_excerpt_rules.py", "tests/test_search.py", "tests/test_agent.py"),
        0.99,
        ci_tests=("tests/test_excerpt_rules.py",),  # the same rate, without indexing libraries
    ),
    "confidence": Module(
        "src/memo/search/confidence.py",
        ("tests/test_confidence_rules.py", "tests/test_two_stage.py", "tests/test_search.py"),
        0.96,
    ),
    "staleness": Module(
        "src/memo/collection/staleness.py",
        ("tests/test_staleness_rules.py", "tests/test_index.py"),
        0.93,
    ),
    "fusion": Module(
        "src/memo/search/fusion.py",
        (
            "tests/test_fusion_rules.py",
            "tests/test_two_stage.py",
            "tests/test_ranking.py",
            "tests/test_note_witness.py",
        ),
        0.99,
    ),
    "lexical": Module(
        "src/memo/collection/lexical.py",
        (
            "tests/test_lexical_rules.py",
            "tests/test_ranking.py",
            "tests/test_languages.py",
            "tests/test_confidence_rules.py",
            "tests/test_init.py",
        ),
        0.97,
    ),
    "bm25": Module(
        "src/memo/search/bm25.py",
        ("tests/test_bm25_rules.py", "tests/test_ranking.py"),
        # under 0.90: its 25 survivors are all equivalent (bench/mutation_survivors.md), dtypes
        # numpy infers the same and zip's strict on lists always as long
        0.82,
    ),
    "ranking": Module(
        "src/memo/search/ranking.py",
        (
            "tests/test_ranking_rules.py",
            "tests/test_ranking.py",
            "tests/test_focus.py",
            "tests/test_note_witness.py",
        ),
        0.97,
    ),
    "requests": Module(
        "src/memo/requests.py",
        ("tests/test_requests_rules.py", "tests/test_requests.py"),
        0.95,
    ),
    "markdown": Module(
        "src/memo/collection/markdown.py",
        (
            "tests/test_markdown_rules.py",
            "tests/test_obsidian.py",
            "tests/test_coverage.py",
            "tests/test_chunker.py",
            "tests/test_chunker_rules.py",
        ),
        0.95,
    ),
    "sync": Module(
        "src/memo/collection/sync.py",
        # test_index.py and test_two_stage.py cover it too, but each mutant's session would
        # embed the example library again (10 s a mutant at these cores' load): the rules
        # file pins what they pin, on notes of a few lines
        # test_windows.py: the windows stored, reused and deleted with their chunk
        (
            "tests/test_sync_rules.py",
            "tests/test_staleness_rules.py",
            "tests/test_badfiles.py",
            "tests/test_windows.py",
        ),
        # 0.88, not the 0.90 target: 41 of its 80 survivors are SQL strings lowered or raised,
        # which SQLite reads alike (bench/mutation_survivors.md gives each of the 80 its why)
        0.88,
    ),
    "windows": Module(
        "src/memo/collection/windows.py",
        ("tests/test_windows.py", "tests/test_focus.py"),
        1.0,  # 75 of 75 with the focus's spans (2026-12-02, 59 s)
    ),
    "focus": Module(
        "src/memo/search/focus.py",
        ("tests/test_focus.py",),
        1.0,  # 74 of 74 (2026-12-02, 85 s)
    ),
}
# the small, fast-tested ones: about five minutes on 2 cores
CI_SLICE = ("roots", "diversity", "excerpt", "staleness", "fusion", "windows", "focus")


def explained() -> list[set[str]]:
    """The changed lines of each equivalent mutant listed in bench/mutation_survivors.md: a
    ```diff block holds mutants one after another, each its `-` lines then its `+` lines; any
    other line (the `#` lines saying why, a blank one) ends a mutant; ````diff when a line
    holds ```."""
    if not SURVIVORS.exists():
        return []
    text = SURVIVORS.read_text(encoding="utf-8")
    out: list[set[str]] = []
    for _, block in re.findall(r"^(`{3,})diff\n(.*?)^\1$", text, re.S | re.M):
        mutant: list[str] = []
        for line in [*block.splitlines(), ""]:
            diff = line[:1] in ("-", "+")
            if mutant and (not diff or (line[0] == "-" and mutant[-1][0] == "+")):
                out.append(_changed("\n".join(mutant)))
                mutant = []
            if diff:
                mutant.append(line)
    return out


def _changed(diff: str) -> set[str]:
    return {
        ln[0] + ln[1:].strip()
        for ln in diff.splitlines()
        if ln.startswith(("-", "+")) and not ln.startswith(("---", "+++"))
    }


SQL = re.compile(
    r"\b(select|insert|update|delete|values|from|where|into|set|limit|asc|desc)\b", re.I
)
CODECS = {"utf-8", "utf8", "ascii"}


def case_only(changed: set[str]) -> bool:
    """An equivalent mutant by its class: one line whose only change is the letter case of
    string literals that are SQL (SQLite reads keywords, table, column and function names in
    any case; a quoted SQL literal such as 'ok' must stay as it was) or a codec's name (Python
    looks codecs up in any case)."""
    minus = [ln[1:] for ln in changed if ln[0] == "-"]
    plus = [ln[1:] for ln in changed if ln[0] == "+"]
    if len(minus) != 1 or len(plus) != 1 or minus[0] == plus[0]:
        return False
    a, b = minus[0], plus[0]
    lit = re.compile(r'"[^"]*"')
    if lit.sub('""', a) != lit.sub('""', b) or a.lower() != b.lower():
        return False
    pairs = [(x, y) for x, y in zip(lit.findall(a), lit.findall(b), strict=True) if x != y]
    return all(
        re.findall(r"'[^']*'", x) == re.findall(r"'[^']*'", y)
        and (SQL.search(x) or x.strip('"').lower() in CODECS)
        for x, y in pairs
    )


def workdir_for(
    base: Path, name: str, mod: Module, tests_from: Path, marks: str, keep: bool
) -> Path:
    """A fresh scratch copy of the project (its tests from `tests_from`, a checkout) with this
    module's [tool.mutmut]; with `keep`, the one there with its tests refreshed, so mutmut
    resumes: the survivors are tried again (against new tests), the other results stand."""
    work = base / name
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    meta = work / "mutants" / (mod.path + ".meta")
    if keep and meta.exists():
        shutil.rmtree(work / "tests")
        shutil.copytree(tests_from / "tests", work / "tests", ignore=skip)
        _write_config(work, mod, marks)  # the selection too: it may name new test files
        data = json.loads(meta.read_text(encoding="utf-8"))
        codes = data["exit_code_by_key"]
        data["exit_code_by_key"] = {k: (None if v in (0, 33) else v) for k, v in codes.items()}
        meta.write_text(json.dumps(data), encoding="utf-8")
        return work
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    shutil.copytree(REPO / "src", work / "src", ignore=skip)
    shutil.copytree(tests_from / "tests", work / "tests", ignore=skip)
    shutil.copytree(REPO / "examples", work / "examples", ignore=skip)  # the `notes` fixture
    shutil.copy2(REPO / "README.md", work / "README.md")  # test_init reads its quick start
    _write_config(work, mod, marks)
    # the tests' ONNX model, built once per clone into pytest's cache: hard links, not rebuilt.
    # Not a symlink to the clone's: its build lock would be held by mutants at nice 19 while the
    # clone's own test runs wait, and a mutant that rebuilt the model would write into it.
    model = REPO / ".pytest_cache" / "d" / "memo-xdg"
    if model.is_dir():
        shutil.copytree(
            model,
            work / "mutants" / ".pytest_cache" / "d" / "memo-xdg",
            copy_function=_link,
            ignore=shutil.ignore_patterns(".build.lock"),
        )
    return work


def _write_config(work: Path, mod: Module, marks: str) -> None:
    """The copy's pyproject.toml: the clone's, its [tool.mutmut] naming this module and the
    test files of `mod` that exist in the copy (e.g. main's tests, for a 'before')."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    base_cfg = tomllib.loads(text)["tool"]["mutmut"]
    tests = [t for t in mod.tests if (work / t.split("::")[0]).exists()]
    tests += ["-m", marks] if marks else []  # only the selection: mutants then run those tests
    cfg = dict(base_cfg, only_mutate=[mod.path], pytest_add_cli_args_test_selection=tests)
    section = "[tool.mutmut]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in cfg.items())
    text = re.sub(r"^\[tool\.mutmut\]\n(?:(?!\[).*\n)*", "", text, flags=re.M) + "\n" + section
    (work / "pyproject.toml").write_text(text, encoding="utf-8")


def _link(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system
        shutil.copy2(src, dst)


def run_module(
    base: Path,
    name: str,
    mod: Module,
    jobs: int,
    verbose: bool,
    tests_from: Path,
    marks: str,
    keep: bool = False,
) -> dict | None:
    work = workdir_for(base, name, mod, tests_from, marks, keep)
    hits = work / "child-hits"
    hits.mkdir(exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SUPPORT), *filter(None, [env.get("PYTHONPATH")])])
    env["MEMO_MUTATION_HITS"] = str(hits)
    # pytest's tmp folders under this copy: two runs at once (two modules, two checkouts) would
    # otherwise share /tmp/pytest-of-USER, where each session deletes all but the newest three,
    # and a test whose folder vanished would count as a kill
    tmp = work / "tmp"
    tmp.mkdir(exist_ok=True)
    env["TMPDIR"] = str(tmp)
    mutmut = Path(sys.executable).with_name("mutmut")
    cmd = ["nice", "-n", "19", str(mutmut), "run", "--max-children", str(jobs)]
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    log = work / "mutmut.log"
    spinner = re.compile(r"^[\u2800-\u28ff] .*\n", re.M)  # mutmut's progress lines
    log.write_text(spinner.sub("", out.stdout + out.stderr), encoding="utf-8")
    if verbose:
        print(out.stdout[-3000:], out.stderr[-3000:])
    meta = work / "mutants" / (mod.path + ".meta")
    if out.returncode != 0 or not meta.exists():
        tail = log.read_text(encoding="utf-8")[-2000:]
        print(f"\n## {name}: mutmut failed (exit {out.returncode}); {log}:\n{tail}")
        return None
    codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    status = {1: "killed", 3: "killed", 0: "survived", 33: "no tests", 5: "no tests"}
    status |= {36: "timeout", -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout"}
    by = {k: status.get(v, f"other ({v})") for k, v in codes.items()}
    left = sorted(k for k, s in by.items() if s in ("survived", "no tests"))
    diffs = _diffs(work, env, left)
    return {"name": name, "by": by, "diffs": diffs, "seconds": seconds, "work": str(work)}


def _diffs(work: Path, env: dict, names: list[str]) -> dict[str, str]:
    if not names:
        return {}
    code = (
        "import json, sys\n"
        "from mutmut.mutation.diff_apply import get_diff_for_mutant\n"
        "names = json.loads(sys.argv[1])\n"
        "print(json.dumps({n: get_diff_for_mutant(n) for n in names}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(names)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def report(r: dict, mod: Module, known: list[set[str]]) -> tuple[float, int, float]:
    """Prints the module's counts and survivors; (kill rate, unexplained survivors, mutation
    score: the kills over the mutants less those explained as equivalent, as the literature
    scores a suite)."""
    by = r["by"]
    n = len(by)
    count = {s: sum(1 for v in by.values() if v == s) for s in set(by.values())}
    killed, timeout = count.get("killed", 0), count.get("timeout", 0)
    rate = (killed + timeout) / n if n else 1.0
    unexplained = 0
    print(
        f"\n## {r['name']} ({mod.path}): {n} mutants, {killed} killed, "
        f"{count.get('survived', 0)} survived, {timeout} timed out, "
        f"{count.get('no tests', 0)} no tests"
        + "".join(f", {v} {s}" for s, v in count.items() if s.startswith("other"))
        + f" -> {rate:.1%} (threshold {mod.threshold:.0%}) in {r['seconds']:.0f} s"
    )
    for name, diff in r["diffs"].items():
        ok = _changed(diff) in known or case_only(_changed(diff))
        unexplained += not ok
        print(f"\n### {name}: {by[name]}{' (explained)' if ok else ''}\n{diff}")
    equivalent = len(r["diffs"]) - unexplained
    score = (killed + timeout) / (n - equivalent) if n - equivalent else 1.0
    return rate, unexplained, score


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", help=f"of {', '.join(MODULES)} (default: all)")
    ap.add_argument(
        "--ci",
        action="store_true",
        help=f"as CI runs them (its tests, no slow ones); no modules: {', '.join(CI_SLICE)}",
    )
    ap.add_argument("--jobs", type=int, default=1, help="mutmut workers (default 1)")
    ap.add_argument(
        "--at-once",
        type=int,
        help="modules run side by side, each in its own copy (default: 2 with --ci, else 1)",
    )
    ap.add_argument("--work", type=Path, help="scratch folder (default $TMPDIR/memo-mutation)")
    ap.add_argument(
        "--tests-from",
        type=Path,
        default=REPO,
        help="a checkout whose tests/ to run (e.g. main's, for a 'before')",
    )
    ap.add_argument(
        "--keep",
        action="store_true",
        help="resume in the scratch copies there: survivors are tried again",
    )
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("-v", "--verbose", action="store_true", help="print mutmut's output")
    smoke_args(ap)
    a = ap.parse_args()
    a.ci = a.ci or a.smoke  # the smoke run: the CI slice's first module, its code paths whole
    names = CI_SLICE[:1] if a.smoke else (a.modules or list(CI_SLICE if a.ci else MODULES))
    unknown = [n for n in names if n not in MODULES]
    if unknown:
        ap.error(f"unknown module(s) {unknown}; known: {', '.join(MODULES)}")
    base = a.work or Path(tempfile.gettempdir()) / "memo-mutation"
    known = explained()
    failed, results, rows = [], [], {}
    mods = {name: MODULES[name] for name in names}
    if a.ci:  # the CI slice never starts the slow tests
        mods = {
            n: replace(m, marks="not slow", tests=m.ci_tests or m.tests) for n, m in mods.items()
        }

    def run(name: str) -> tuple[dict | None, float, float]:
        load0 = os.getloadavg()[0]
        m = mods[name]
        r = run_module(base, name, m, a.jobs, a.verbose, a.tests_from, m.marks, a.keep)
        return r, load0, os.getloadavg()[0]

    # Each module's mutmut runs one mutant at a time in a copy of its own (its own TMPDIR):
    # two of them side by side keep both cores busy through the serial parts too (the copy,
    # the stats session, each mutant's pytest start), and each module's results are its own.
    # The longest first (by the seconds last recorded), so the two finish close together.
    with ThreadPoolExecutor(max(1, a.at_once or (2 if a.ci else 1))) as pool:
        last = _recorded()
        longest = sorted(names, key=lambda n: -last.get(n, {}).get("seconds", 0))
        runs = {name: pool.submit(run, name) for name in longest}
    for name in names:
        mod = mods[name]
        r, load0, load1 = runs[name].result()
        if r is None:
            failed.append(f"{name}: mutmut failed")
            continue
        rate, unexplained, score = report(r, mod, known)
        results.append(r)
        count = {s: sum(1 for v in r["by"].values() if v == s) for s in STATES}
        rows[name] = {"path": mod.path, "mutants": len(r["by"]), **count, "rate": rate}
        rows[name] |= {"threshold": mod.threshold, "unexplained": unexplained, "score": score}
        rows[name] |= {"seconds": r["seconds"], "date": time.strftime("%Y-%m-%d")}
        rows[name] |= {"load": f"{load0:.1f}-{load1:.1f}", "ci": a.ci}
        if rate < mod.threshold:
            failed.append(f"{name}: {rate:.1%} killed < threshold {mod.threshold:.0%}")
    if a.json:
        a.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    _record(rows, a.smoke)
    for f in failed:
        print("FAIL", f, file=sys.stderr)
    return 1 if failed else 0


STATES = ("killed", "survived", "timeout", "no tests")


def _recorded() -> dict[str, dict]:
    """The module rows in bench/results/mutation.json ({} before the first run)."""
    from judged import RESULTS

    path = RESULTS / "mutation.json"
    return json.loads(path.read_text(encoding="utf-8"))["modules"]["data"] if path.exists() else {}


def _record(rows: dict[str, dict], smoke: bool) -> None:
    """Each module run into bench/results/mutation.json, beside the modules run before (each
    row says when, and at what load)."""
    from judged import record

    if not smoke:
        rows = _recorded() | rows
    record(__file__, "modules", dict(sorted(rows.items())), os.getloadavg()[0], smoke)


if __name__ == "__main__":
    sys.exit(main())
