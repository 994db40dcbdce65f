"""Handing a one-shot command to a running `memo serve`: the same answer, without a cold start.

A `memo search` process pays for its imports, opening the indexes and the model's first query
(0.6-2.7 s measured); a server for the same library has all of it warm. When one runs
(server_file.py), `search`, `route`, `show` and `status` send their request over loopback and
print the answer exactly as they print their own. Any failure of that path (no server, a dead
pid, a refused or slow connection, another version, a missing token) answers in-process
instead: delegation can make a call faster, never make it fail. `--no-server` skips it.

Standard library only (urllib): this path must not load numpy, SQLite or the model.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import click

from .. import __version__, server_file
from ..config import Settings
from ..errors import MemoError

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
    headers = {"content-type": "application/json"}
    if state.get("token"):
        if not settings.token:
            _notice("the running memo serve wants a token (MEMO_TOKEN); answering here")
            return None
        headers["authorization"] = f"Bearer {settings.token}"
    base = str(state["url"]).rstrip("/")
    health = _call(f"{base}/health", "GET", headers, None, HEALTH_TIMEOUT)
    if health is not None and health[0] == 401:
        _notice("the running memo serve refused MEMO_TOKEN; answering here")
        return None
    if health is None or health[0] != 200 or not isinstance(health[1], dict):
        return None
    if health[1].get("root") != str(root):
        return None
    url = f"{base}{endpoint}"
    if query:
        url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
    got = _call(url, method, headers, body, ANSWER_TIMEOUT)
    if got is None:
        return None
    status, data = got
    if status == 200:
        return data
    if status == 401:
        _notice("the running memo serve refused MEMO_TOKEN; answering here")
        return None
    err = data.get("error") if isinstance(data, dict) else None
    if status in (400, 404) and isinstance(err, dict) and err.get("message"):
        raise MemoError(str(err["message"]), str(err.get("hint") or ""))
    return None  # 422 (the client's own bounds disagree?), 5xx: answer in-process


def _call(
    url: str, method: str, headers: dict[str, str], body: dict[str, Any] | None, timeout: float
) -> tuple[int, Any] | None:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 (loopback URL)
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read() or b"null")
        except ValueError:
            return e.code, None
    except (OSError, ValueError):  # refused, reset, timed out, not JSON
        return None


def _notice(line: str) -> None:
    click.echo(f"note: {line}", err=True)
