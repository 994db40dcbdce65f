"""The `memo` command: real processes, parseable stdout, errors that say what to do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# every test runs memo as a process (tests/test_cli_fast_path.py drives the commands in-process)
pytestmark = pytest.mark.slow


def memo(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    full_env = {**os.environ, **(env or {})}
    full_env.pop("MEMO_ROOT", None)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "memo", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=300,
    )


def test_help_lists_every_command():
    out = memo("--help")
    assert out.returncode == 0
    for cmd in ("index", "search", "status"):
        assert cmd in out.stdout


def test_index_twice_then_search_json(notes, untouched):
    first = memo("index", str(notes), "--json")
    assert first.returncode == 0, first.stderr
    t = json.loads(first.stdout)
    assert t["new"] == 5 and t["collections"] == 3 and not t["nothing_to_do"]
    second = memo("index", str(notes))
    assert second.returncode == 0 and second.stdout.startswith("nothing to do")
    out = memo("search", str(notes), "802.1Q trunk", "--k", "3", "--json")
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    top = res["results"][0]
    assert top["path"] == "work/networking/vlan.md" and top["line"] >= 1
    assert set(top) >= {"collection", "path", "abs_path", "line", "heading", "score", "text"}
    assert Path(top["abs_path"]).is_file()


def test_root_option_and_relative_target(notes):
    out = memo("search", "work/jira", "JQL", "--root", str(notes), "--mode", "lex", "--json")
    assert out.returncode == 0, out.stderr
    paths = {h["path"] for h in json.loads(out.stdout)["results"]}
    assert paths and all(p.startswith("work/jira/") for p in paths)
    env_out = memo(
        "search", "work/jira", "JQL", "--mode", "lex", "--json", env={"MEMO_ROOT": str(notes)}
    )
    assert json.loads(env_out.stdout)["results"] == json.loads(out.stdout)["results"]


def test_search_without_prior_index_builds_it(notes):
    out = memo("search", str(notes / "home" / "cooking"), "закваска", "--json")
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["results"][0]["path"].endswith("sourdough.md")
    assert res["freshness"][0]["rebuilt"]


@pytest.mark.edits_notes
def test_status_json(notes):
    memo("index", str(notes))
    (notes / "work" / "jira" / "jql.md").write_text("# changed\n\nnew text\n")
    out = memo("status", str(notes), "--json")
    st = json.loads(out.stdout)
    by_name = {c["collection"]: c for c in st["collections"]}
    assert by_name["jira"]["stale"] == 1 and by_name["cooking"]["stale"] == 0
    assert by_name["jira"]["embedder"] == "intfloat/multilingual-e5-small"
    assert by_name["jira"]["size_bytes"] > 0 and by_name["jira"]["chunks"] > 0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("search", "/definitely/not/here", "x"), "/definitely/not/here does not exist"),
        (("search", "work/nope", "x"), "does not exist"),
        (("search", "..", "x", "--root", "."), "outside the library root"),
        (("search", "..", "x"), "is outside the library"),  # the one it runs in
        (("search", ".", "x", "--mode", "fuzzy"), "mode must be one of hybrid, lex, vec"),
        (("search", ".", "sync", "-k", "1000"), "k must be an integer from 1 to 50, got 1000"),
    ],
)
def test_errors_go_to_stderr_with_a_hint(notes, args, needle):
    # run inside the library: no path here reaches above the test's own temp folder
    out = memo(*args, env={"MEMO_ROOT": str(notes)}, cwd=notes)
    assert out.returncode == 1
    assert out.stdout == ""
    error, hint = out.stderr.splitlines()  # one format for every error, click's own included
    assert error.startswith("error: ") and needle in error and hint.startswith("hint: ")


def test_missing_root_says_what_to_do(tmp_path):
    out = memo("index", env={"MEMO_ROOT": str(tmp_path / "nope")}, cwd=tmp_path)
    assert out.returncode == 1 and "hint:" in out.stderr and "MEMO_ROOT" in out.stderr


def test_lexical_only_mode_without_model(notes):
    out = memo("search", str(notes), "PBR", "--json", env={"MEMO_EMBEDDER": "none"})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["results"][0]["path"] == "work/networking/pbr.md"


def test_show_new_and_skill(notes, untouched):
    env = {"MEMO_ROOT": str(notes), "MEMO_EMBEDDER": "none"}
    hit = json.loads(memo("search", ".", "JQL bugs", "--json", "-k", "1", env=env).stdout)
    h = hit["results"][0]
    n = h["end_line"] - h["line"] + 1
    out = memo("show", f"{h['path']}:{h['line']}", "-n", str(n), "--json", env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["cite"] == h["cite"]
    text = memo("show", "work/jira/jql.md:1", "-n", "1", env=env)
    assert text.stdout.startswith("# JQL cheatsheet") and "cite" in text.stderr
    bad = memo("show", "work/jira", env=env)
    assert bad.returncode == 1 and "is a folder" in bad.stderr and "hint:" in bad.stderr
    sk = memo("skill", "--hermes", env=env)
    assert sk.returncode == 0 and "`work/jira`" in sk.stdout and "name: memo-notes" in sk.stdout


@pytest.mark.edits_notes
def test_new_collection(notes):
    env = {"MEMO_ROOT": str(notes), "MEMO_EMBEDDER": "none"}
    out = memo(
        "new", "work/kafka", "--description", "Kafka: consumer lag", "--tags", "kafka,ops", env=env
    )
    assert out.returncode == 0, out.stderr
    assert (notes / "work/kafka/_meta.yaml").read_text().startswith("name: kafka")
    again = memo("new", "work/kafka", "-d", "x", env=env)
    assert again.returncode == 1 and "already a collection" in again.stderr
    route = memo("route", "kafka consumer lag", "--json", env=env)
    assert json.loads(route.stdout)["collections"][0]["path"] == "work/kafka"


@pytest.mark.edits_notes  # `memo new` writes a _meta.yaml
def test_one_rule_finds_the_library_for_every_command(notes, tmp_path):
    """The folder a PATH names, else the library the current folder lies in (issue 15: status,
    route, skill and new failed from inside a library; `cd lib && memo index .` too)."""
    env = {"MEMO_EMBEDDER": "none", "HOME": str(tmp_path)}  # no MEMO_ROOT, no ~/notes/memo
    first = memo("index", ".", cwd=notes, env=env)
    assert first.returncode == 0 and "3 collections" in first.stdout, first.stderr
    inside = notes / "work" / "jira"
    for args in (("status",), ("route", "JQL"), ("skill",), ("search", "*", "JQL")):
        out = (
            memo(*args, "--json", cwd=inside, env=env)
            if args[0] != "skill"
            else memo(*args, cwd=inside, env=env)
        )
        assert out.returncode == 0, (args, out.stderr)
        assert "~/notes/memo" not in out.stderr
    hit = json.loads(memo("search", "*", "JQL", "--json", cwd=inside, env=env).stdout)
    assert hit["results"][0]["path"].startswith("work/jira/")  # relative to the root
    shown = json.loads(memo("show", "jql.md:1", "--json", cwd=inside, env=env).stdout)
    assert shown["path"] == "work/jira/jql.md"  # the same root as search
    here = json.loads(memo("search", "JQL", "--json", cwd=inside, env=env).stdout)
    assert here["target"] == "work/jira" and here["results"]  # no PATH: the current folder
    above = json.loads(memo("search", "JQL", "--json", cwd=notes, env=env).stdout)
    assert above["target"] == "." and above["results"]  # at the root: all of it
    none = memo("search", cwd=inside, env=env)
    assert none.returncode == 1 and "error: missing argument 'QUERY'" in none.stderr
    made = memo("new", "work/kafka", "-d", "Kafka notes", cwd=inside, env=env)
    assert made.returncode == 0 and (notes / "work" / "kafka" / "_meta.yaml").is_file()
    missing = memo("search", str(tmp_path / "does-not-exist"), "q", env=env)
    assert missing.returncode == 1 and str(tmp_path / "does-not-exist") in missing.stderr
    nowhere = memo("status", cwd=tmp_path, env=env)  # not in a library: the default root
    assert nowhere.returncode == 1 and "notes/memo" in nowhere.stderr and "hint:" in nowhere.stderr


def test_an_adopted_vault_keeps_its_own_names_in_the_skill_and_memo_new(notes, tmp_path):
    """Issue 50, item 6: `memo skill` told the agent to name notes in lowercase ASCII and `memo
    new` refused Title Case with spaces, in an adopted vault where every note is named that
    way. Both follow the library's own names now and say its rule; a library of slugs keeps
    memo's."""
    vault = tmp_path / "vault"
    for rel in (
        "Getting Started/Sync Your Notes.md",
        "Getting Started/How to Use Bases.md",
        "Getting Started/Canvas.md",
        "Plugins/Daily Notes.md",
        "Plugins/Graph View.md",
        "Home.md",
    ):
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(f"# {Path(rel).stem}\n\nSome words about it.\n")
    env = {"MEMO_EMBEDDER": "none", "MEMO_INDEX_DIR": str(tmp_path / "idx")}
    assert memo("init", str(vault), "--yes", env=env).returncode == 0
    sk = memo("skill", "--root", str(vault), env=env)
    assert sk.returncode == 0, sk.stderr
    assert "lowercase ASCII file names" not in sk.stdout
    assert (
        "file and folder names as this library writes them: Title Case words separated by "
        "spaces (`How to Use Bases.md`, `Sync Your Notes.md`)"
    ) in sk.stdout
    made = memo("new", "Home Lab", "--root", str(vault), "-d", "The home lab", env=env)
    assert made.returncode == 0, made.stderr
    assert (vault / "Home Lab" / "_meta.yaml").is_file()
    bad = memo("new", "Lab: Old*", "--root", str(vault), "-d", "x", env=env)
    assert bad.returncode == 1 and "Title Case words separated by spaces" in bad.stderr
    assert not (vault / "Lab: Old*").exists()
    # the example library names its notes in slugs: memo's rule, stated and kept
    env = {
        "MEMO_ROOT": str(notes),
        "MEMO_EMBEDDER": "none",
        "MEMO_INDEX_DIR": env["MEMO_INDEX_DIR"],
    }
    assert "lowercase ASCII file names (`kafka-consumer-lag.md`)" in memo("skill", env=env).stdout
    refused = memo("new", "Home Lab", "-d", "x", env=env)
    assert refused.returncode == 1 and "Use lowercase ASCII slugs" in refused.stderr
    assert not (notes / "Home Lab").exists()
