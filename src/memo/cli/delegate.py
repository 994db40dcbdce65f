"""Handing a one-shot command to a running `memo serve`: the same answer, without a cold start.

When a server for the same library runs (server_file.py), `search`, `route`, `show` and `status`
send their request over loopback and print the answer exactly as they print their own. Any
failure of that path (no server, a dead pid, a refused or slow connection, another version, a
missing token) answers in-process instead: delegation can make a call faster, never make it
fail. `--no-server` skips it. Standard library only, and of it only `socket` (one HTTP/1.1
request with `Connection: close`, read to the end): this path must not load numpy, SQLite or the
model, nor `urllib.request` (what each costs: docs/design.md).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import click

from .. import __version__, server_file
from ..config import Settings
from ..errors import MemoError

# what the library refuses (server/api.py `STATUSES`): the error it would be in-process, said
# here; not the server's own refusals (a Host, an endpoint) nor 422 `invalid_request`, where the
# client's own bounds disagree with the server's
REFUSALS = (403, 404, 409, 422)
HEALTH_TIMEOUT = 1.0  # seconds for /health: a server that slow is not worth waiting for
ANSWER_TIMEOUT = 120.0  # a search may catch up a changed note first


def ask(
    root: Path,
    settings: Settings,
    method: str,
    endpoint: str,
    query: dict[str, Any] | None = None,
    body: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The server's answer, or None to answer in-process. A request the server refuses (a
    bad path, a line past the end) raises the MemoError it reported, as in-process would."""
    state = server_file.find(root, settings)
    if state is None or state.get("version") != __version__:
        return None
    # answered as this process would answer in-process: with a one-shot job's engine
    headers = {"content-type": "application/json", server_file.ONE_SHOT_HEADER: "1"}
    if state.get("token"):
        if not settings.token:
            _notice("the running memo serve wants a token (MEMO_TOKEN); answering here")
            return None
        headers["authorization"] = f"Bearer {settings.token}"
    base = str(state["url"]).rstrip("/")
    health = call(f"{base}/health", "GET", headers, None, HEALTH_TIMEOUT)
    if health is not None and health[0] == 401:
        _notice("the running memo serve refused MEMO_TOKEN; answering here")
        return None
    if health is None or health[0] != 200 or not isinstance(health[1], dict):
        return None
    if health[1].get("root") != str(root):
        return None
    url = f"{base}{endpoint}"
    if query:
        url += "?" + urlencode({k: v for k, v in query.items() if v is not None})
    got = call(url, method, headers, body, ANSWER_TIMEOUT)
    if got is None:
        return None
    status, data = got
    if status == 200:
        return data
    if status == 401:
        _notice("the running memo serve refused MEMO_TOKEN; answering here")
        return None
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict) and err.get("message") and status in REFUSALS:
        code = str(err.get("code"))
        if code not in ("invalid_request", "forbidden_host") and not code.startswith("http_"):
            raise MemoError(str(err["message"]), str(err.get("hint") or ""))
    return None  # the client's own bounds disagree (invalid_request), the server's, 5xx: here


def call(
    url: str, method: str, headers: dict[str, str], body: dict[str, Any] | None, timeout: float
) -> tuple[int, Any] | None:
    """(status, parsed JSON body) of one request, or None when the server cannot be reached or
    answers something that is not HTTP with JSON. `ask` calls it; tests/test_cli_fast_path.py
    gives it listeners that answer in each framing a server may use."""
    parts = urlsplit(url)
    data = json.dumps(body).encode() if body is not None else b""
    head = [
        f"{method} {parts.path or '/'}{'?' + parts.query if parts.query else ''} HTTP/1.1",
        f"host: {parts.netloc}",
        "connection: close",
        "accept: application/json",
        f"content-length: {len(data)}",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    try:
        host = (parts.hostname or "").encode("ascii")  # bytes: no idna codec to import
        address = (host, parts.port or 80)  # socket takes the host as bytes too
        with socket.create_connection(address, timeout=timeout) as s:  # type: ignore[arg-type]  # typeshed: str only
            s.sendall("\r\n".join(head).encode("latin-1") + b"\r\n\r\n" + data)
            chunks = []
            while chunk := s.recv(65536):
                chunks.append(chunk)
        return _response(b"".join(chunks))
    except (OSError, ValueError, UnicodeError):  # refused, reset, timed out, not HTTP/JSON
        return None


def _response(raw: bytes) -> tuple[int, Any]:
    head, sep, payload = raw.partition(b"\r\n\r\n")
    if not sep:
        raise ValueError("no HTTP header")
    lines = head.decode("latin-1").split("\r\n")
    version, status, *_ = lines[0].split(" ", 2)
    if not version.startswith("HTTP/"):
        raise ValueError(f"not HTTP: {lines[0]!r}")
    fields = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    if "chunked" in fields.get("transfer-encoding", "").lower():
        payload = _dechunk(payload)
    elif "content-length" in fields:
        payload = payload[: int(fields["content-length"])]
    return int(status), json.loads(payload or b"null")


def _dechunk(payload: bytes) -> bytes:
    out: list[bytes] = []
    rest = payload
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return b"".join(out)
        out.append(rest[:size])
        rest = rest[size + 2 :]


def _notice(line: str) -> None:
    click.echo(f"note: {line}", err=True)
