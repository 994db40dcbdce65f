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
from memo.cli.delegate import _call, _response


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
    assert out.exit_code == 2 and "No such command 'serach'" in out.output


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
    assert _response(raw) == expected


@pytest.mark.parametrize("raw", [b"SSH-2.0-OpenSSH_9\r\n", b"HTTP/1.1 200 OK\r\n\r\n<html>"])
def test_what_is_not_http_with_json_is_refused(raw):
    with pytest.raises(ValueError):
        _response(raw)


def test_a_listener_that_is_not_a_memo_server_means_answer_in_process():
    """A stale server file whose port another program took: the call gives up, never hangs."""
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        port = srv.getsockname()[1]

        def talk() -> None:
            conn, _ = srv.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(b"220 smtp.example ESMTP ready\r\n")

        threading.Thread(target=talk, daemon=True).start()
        assert _call(f"http://127.0.0.1:{port}/health", "GET", {}, None, 2.0) is None
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # bound, never listening: refused
    assert _call(f"http://127.0.0.1:{port}/health", "GET", {}, None, 2.0) is None
