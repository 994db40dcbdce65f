"""The one-shot CLI's fast path: commands load lazily, and the loopback HTTP reader reads what
a server can send (issue 15; bench/cli.py measures the time it saves)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading

import pytest

from memo.cli import WHERE, cli
from memo.cli.delegate import call


def test_every_command_is_listed_and_loads_from_its_module():
    import click

    ctx = click.Context(cli)
    assert cli.list_commands(ctx) == sorted(WHERE)
    for name in WHERE:
        command = cli.get_command(ctx, name)
        assert isinstance(command, click.Command) and command.name == name
    assert cli.get_command(ctx, "nope") is None


def test_version_and_a_delegated_command_import_no_other_command():
    code = (
        "import sys; from memo.cli import cli; cli.get_command(None, 'search'); "
        "print(sorted(m for m in sys.modules if m.startswith('memo.cli.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout.replace("'", '"')))
    assert "memo.cli.queries" in loaded
    assert not loaded & {"memo.cli.indexing", "memo.cli.servers", "memo.cli.model"}


def test_unknown_command_says_so():
    from click.testing import CliRunner

    out = CliRunner().invoke(cli, ["serach", "x"])
    assert out.exit_code == 1 and "error: no such command 'serach'" in out.stderr


@pytest.mark.parametrize(
    "raw, expected",
    [
        (b'HTTP/1.1 200 OK\r\ncontent-length: 8\r\n\r\n{"a": 1}', (200, {"a": 1})),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n[]trailing", (200, [])),
        (
            b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
            b'4\r\n{"e"\r\n5;x=y\r\n: 2}\n\r\n0\r\n\r\n',
            (404, {"e": 2}),
        ),
        (b"HTTP/1.0 204 No Content\r\n\r\n", (204, None)),
    ],
)
def test_responses_are_read_whatever_framing_the_server_uses(raw, expected):
    assert _answered(raw) == expected


@pytest.mark.parametrize("raw", [b"SSH-2.0-OpenSSH_9\r\n", b"HTTP/1.1 200 OK\r\n\r\n<html>"])
def test_what_is_not_http_with_json_means_answer_in_process(raw):
    assert _answered(raw) is None


def _answered(raw: bytes, timeout: float = 10.0):
    """What `call` makes of a loopback listener that answers `raw` to a request, then closes."""
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        port = srv.getsockname()[1]

        def talk() -> None:
            conn, _ = srv.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(raw)

        threading.Thread(target=talk, daemon=True).start()
        return call(f"http://127.0.0.1:{port}/health", "GET", {}, None, timeout)


def test_a_listener_that_is_not_a_memo_server_means_answer_in_process():
    """A stale server file whose port another program took: the call gives up, never hangs."""
    assert _answered(b"220 smtp.example ESMTP ready\r\n", timeout=2.0) is None
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # bound, never listening: refused
    assert call(f"http://127.0.0.1:{port}/health", "GET", {}, None, 2.0) is None


# ---------------------------------------------------------------------- issue 42 and 43
def _run(notes, *args, ask=("--no-server", "--root")):
    """`memo ARGS` in-process, lexical only, without looking for a server."""
    from click.testing import CliRunner

    env = {"MEMO_EMBEDDER": "none", "MEMO_INDEX_DIR": str(notes.parent / "idx")}
    return CliRunner().invoke(cli, [*args, *ask, str(notes)], env=env)


def test_an_empty_query_is_an_error_that_says_what_to_send(notes):
    """Issue 42: `memo search PATH ""` exited 0 with a warning; now exit 1, as over HTTP/MCP."""
    for args in (("search", ".", ""), ("search", "   "), ("route", " ")):
        out = _run(notes, *args)
        assert out.exit_code == 1, out.output
        assert "error: query is empty: there is nothing to search for" in out.output
        assert "hint: Send the question in words" in out.output


def test_a_bad_date_gets_the_forms_a_date_takes(notes):
    """Issue 42: `--since yesterday` got the hint about query, k and mode."""
    out = _run(notes, "search", "vlan", "--since", "yesterday")
    assert out.exit_code == 1
    assert "got 'yesterday'" in out.output and "1d (since yesterday)" in out.output
    assert "mode" not in out.output.split("hint:")[1]


def test_the_words_on_the_command_line(notes):
    """Issue 43: `--also` and `--keywords` repeat, `--keywords` splits at commas, `--answer`
    once; all reach the request (`--json` echoes nothing of them, the answer is the search's)."""
    from memo.cli import queries

    seen = []
    real = queries.answer

    def spy(request, fields, root, no_server):
        seen.append(request.make(**fields))
        return real(request, fields, root, no_server)

    queries.answer = spy
    try:
        out = _run(
            notes, "search", "vlan", "--also", "VLAN на Linux", "--keywords", "802.1Q",
            "--keywords", "trunk, eth0", "--answer", "Интерфейс создаётся командой ip link.",
        )  # fmt: skip
    finally:
        queries.answer = real
    assert out.exit_code == 0, out.output
    (req,) = seen
    assert req.words.also == ("VLAN на Linux",) and req.words.keywords == (
        "802.1Q",
        "trunk",
        "eth0",
    )
    assert req.words.answer == "Интерфейс создаётся командой ip link."
    bad = _run(notes, "route", "vlan", "--keywords", " ")
    assert bad.exit_code == 1 and "keywords[0] is empty" in bad.output
    left = _run(notes, "route", "vlan", "--keywords", "!!")
    assert left.exit_code == 0 and "keywords '!!' has no letter or digit" in left.output


def test_the_route_map_names_each_collections_language(notes):
    """Issue 43: the agent writes its words in the notes' language; the route says which."""
    assert _run(notes, "index", ask=()).exit_code == 0
    out = _run(notes, "route", "bread")
    assert out.exit_code == 0, out.output
    assert "home/cooking  [cooking]  (notes in ru, " in out.output
    assert "work/jira  [jira]  (notes in en, " in out.output
