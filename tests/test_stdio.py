"""`memo mcp` over stdio (issue 23, item 1): the handshake answered before anything heavy is
imported, the same answers the official SDK gives, and exit code 0 however the client leaves."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memo.server import stdio

HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
MODERN = "2026-07-28"  # the protocol without a handshake: each request carries its envelope


def envelope(version: str = MODERN) -> dict[str, Any]:
    """The `_meta` a 2026-07-28 request carries, as the SDK's client stamps it."""
    return {
        "_meta": {
            stdio.VERSION_KEY: version,
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            stdio.CAPABILITIES_KEY: {},
        }
    }


def test_the_recording_is_what_the_installed_sdk_answers():
    """mcp_static.json is the SDK's own answers: if this fails, the tools or the SDK changed;
    run `python -m memo.server.stdio --write` and commit the file."""
    assert stdio.load_static() is not None, "recorded with another memo or mcp version"
    live = stdio.record(stdio.build_for_recording)
    assert json.loads(stdio.STATIC.read_text(encoding="utf-8")) == live


class Mcp:
    """`memo mcp ROOT` as a process, spoken to in raw JSON-RPC lines."""

    def __init__(self, root: Path, env: dict[str, str] | None = None) -> None:
        import os

        full = {**os.environ, "MEMO_EMBEDDER": "none", **(env or {})}
        full.pop("MEMO_ROOT", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memo", "mcp", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full,
        )
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any] | None = None, notify: bool = False):
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if not notify:
            self.next_id += 1
            msg["id"] = self.next_id
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read().decode() if self.proc.stderr else ""
        return json.loads(line)

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=120)
        err = self.proc.stderr.read().decode() if self.proc.stderr else ""
        assert "terminate called" not in err and "Traceback" not in err, err
        return code


@pytest.fixture
def lib(notes: Path) -> Path:
    return notes


@pytest.mark.slow
def test_the_front_answers_as_the_sdk_does_then_hands_over(lib):
    m = Mcp(lib)
    m.send("initialize", HELLO)
    init = m.reply()
    m.send("notifications/initialized", notify=True)
    m.send("tools/list")
    front = m.reply()["result"]
    m.send("tools/call", {"name": "memo_search", "arguments": {"path": "work", "query": "JQL"}})
    hit = m.reply()
    m.send("tools/list")  # now the SDK's own answer
    sdk = m.reply()["result"]
    assert m.close() == 0
    assert init["id"] == 1 and init["result"]["protocolVersion"] == "2025-06-18"
    assert init["result"]["serverInfo"]["name"] == "memo"
    assert front == sdk and [t["name"] for t in sdk["tools"]][0] == "memo_route"
    assert hit["id"] == 3 and "work/jira/jql.md" in hit["result"]["content"][0]["text"]


@pytest.mark.slow
def test_the_front_answers_the_2026_discovery_as_the_sdk_does_then_hands_over(lib):
    """2026-07-28 has no handshake: `server/discover` and `tools/list` carry the version in
    their envelope. The front answers both from the recording; the SDK, handed the first of
    them, serves the same era: its own answers to the same requests are the front's, and it
    refuses a later `initialize` as it refuses one on any 2026-07-28 connection."""
    m = Mcp(lib)
    m.send("server/discover", envelope())
    found = m.reply()
    m.send("tools/list", envelope())
    front = m.reply()
    call = {"name": "memo_search", "arguments": {"path": "work", "query": "JQL"}}
    m.send("tools/call", {**call, **envelope()})
    hit = m.reply()
    m.send("server/discover", envelope())
    sdk_found = m.reply()
    m.send("tools/list", envelope())
    sdk = m.reply()
    m.send("initialize", HELLO)
    late = m.reply()
    assert m.close() == 0
    assert found["id"] == 1 and found["result"]["supportedVersions"] == [MODERN]
    assert (
        found["result"]["capabilities"]["tools"] and "memo_route" in found["result"]["instructions"]
    )
    assert found["result"] == sdk_found["result"] and front["result"] == sdk["result"]
    assert [t["name"] for t in front["result"]["tools"]][0] == "memo_route"
    assert hit["id"] == 3 and "work/jira/jql.md" in hit["result"]["content"][0]["text"]
    assert late["id"] == 6 and late["error"]["data"]["supported"] == [MODERN]


@pytest.mark.slow
def test_a_2026_request_the_front_cannot_answer_gets_the_sdks_answer(lib):
    """An envelope without client capabilities, or of a version the SDK does not serve, is the
    SDK's to refuse, in its words; a `tools/list` with an envelope after `initialize` too."""
    m = Mcp(lib)
    bare = {"_meta": {stdio.VERSION_KEY: MODERN}}
    m.send("server/discover", bare)
    missing = m.reply()
    assert m.close() == 0
    m = Mcp(lib)
    m.send("server/discover", envelope("2099-01-01"))
    unknown = m.reply()
    assert m.close() == 0
    m = Mcp(lib)
    m.send("initialize", HELLO)
    m.reply()
    m.send("tools/list", envelope())
    mixed = m.reply()
    assert m.close() == 0
    assert "clientCapabilities" in missing["error"]["message"]
    assert unknown["error"]["data"]["supported"] == [MODERN]
    assert "handshake protocol era" in mixed["error"]["message"]


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
def test_the_sdks_client_connects_in_either_era(lib, mode):
    """The official client, in 2026-07-28 mode (no handshake) and in the handshake era: the
    same tools, the same answers."""
    import os

    import anyio
    from mcp import Client, StdioServerParameters

    env = {**os.environ, "MEMO_EMBEDDER": "none"}
    env.pop("MEMO_ROOT", None)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memo", "mcp", str(lib)], env=env
    )

    async def go() -> tuple[str, list[str], str]:
        async with Client(params, mode=mode) as c:
            names = [t.name for t in (await c.list_tools()).tools]
            got = await c.call_tool("memo_get", {"path": "work/jira/jql.md:1-2"})
            return c.session.protocol_version, names, got.content[0].text

    version, names, text = anyio.run(go)
    assert version == (MODERN if mode == MODERN else stdio.load_static()["latest"])
    assert names[:3] == ["memo_route", "memo_search", "memo_get"]
    assert text.startswith("work/jira/jql.md:1-2 of ")


@pytest.mark.slow
def test_an_unknown_protocol_version_gets_the_latest_the_sdk_knows(lib):
    m = Mcp(lib)
    m.send("initialize", {**HELLO, "protocolVersion": "1999-01-01"})
    assert m.reply()["result"]["protocolVersion"] == stdio.load_static()["latest"]
    assert m.close() == 0


# (stage name, what the client does before it closes stdin)
STAGES = [
    ("before anything", []),
    ("after initialize", ["initialize"]),
    ("after tools/list", ["initialize", "initialized", "tools/list"]),
    ("while the SDK loads", ["initialize", "initialized", "tools/list", "call-no-wait"]),
    ("after a call", ["initialize", "initialized", "tools/list", "call"]),
    ("a call, then at once", ["initialize", "initialized", "call-no-wait", "call-no-wait"]),
]


@pytest.mark.slow
@pytest.mark.parametrize("rounds", [4])
def test_every_way_of_leaving_exits_zero(lib, rounds):
    """A few dozen sessions closed at every stage, with and without a model: exit code 0,
    nothing aborted on the way out."""
    codes = []
    for i in range(rounds):
        env = {"MEMO_EMBEDDER": "auto"} if i == 0 else None  # the real engine once per stage
        for _, steps in STAGES:
            m = Mcp(lib, env)
            for step in steps:
                if step == "initialize":
                    m.send("initialize", HELLO)
                    m.reply()
                elif step == "initialized":
                    m.send("notifications/initialized", notify=True)
                elif step == "tools/list":
                    m.send("tools/list")
                    m.reply()
                else:
                    args = {"name": "memo_status", "arguments": {}}
                    m.send("tools/call", args)
                    if step == "call":
                        m.reply()
            codes.append(m.close())
    assert codes == [0] * len(codes)


@pytest.mark.slow
def test_sigterm_is_a_clean_stop(lib):
    m = Mcp(lib)
    m.send("initialize", HELLO)
    m.reply()
    time.sleep(0.2)  # no timing asserted: any moment is a fine moment to stop
    m.proc.send_signal(signal.SIGTERM)
    assert m.proc.wait(timeout=60) == 0


def _handshake(era: str) -> list[dict[str, Any]]:
    if era == "legacy":
        return [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ]
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": envelope()},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": envelope()},
    ]


@pytest.mark.parametrize("era", ["legacy", MODERN])
def test_the_handshake_imports_nothing_heavy(era):
    """`memo mcp` answers initialize and tools/list (2026-07-28: server/discover and
    tools/list) before it imports the MCP SDK, pydantic, FastAPI, numpy or SQLite: the backend
    is kept from starting, and Python's own import log (`-X importtime`, each import on stderr
    as it happens) says what the process loaded until it left."""
    import os

    root = Path(__file__).resolve().parents[1] / "examples" / "notes"
    heavy = {"mcp", "mcp_types", "pydantic", "fastapi", "numpy", "apsw", "onnxruntime"}
    code = (
        "import sys\n"
        "from memo.server import stdio\n"
        "stdio.Backend.start = lambda self: None\n"  # the handshake alone
        f"sys.argv = ['memo', 'mcp', {str(root)!r}]\n"
        "from memo.cli import main\n"
        "main()\n"
    )
    env = {**os.environ, "MEMO_EMBEDDER": "none"}
    p = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert p.stdin is not None and p.stdout is not None and p.stderr is not None
    for msg in _handshake(era):
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()
        got = json.loads(p.stdout.readline())
        assert got["id"] == msg["id"] and "result" in got
    p.stdin.close()
    assert p.wait(timeout=60) == 0
    log = [x for x in p.stderr.read().decode().splitlines() if x.startswith("import time:")]
    loaded = {x.rpartition("|")[2].strip().split(".")[0] for x in log}
    assert "memo" in loaded and "json" in loaded  # the log is read: it names what was imported
    assert loaded & heavy == set()
