"""`memo mcp`: MCP over stdio, ready before an agent host stops waiting.

The process starts as a small front of the standard library only: `initialize` and `tools/list`
(and the 2026-07-28 protocol's `server/discover` and `tools/list`, which carry no handshake) are
answered from `mcp_static.json`, the official SDK's recorded replies (`--write`; used only with
the SDK version recorded). Everything else goes to the SDK server a thread builds; the first
request the front answered is replayed into it first, so the SDK's session is the client's.
stdout belongs to the protocol: fd 1 points at stderr while serving. When the client closes
stdin, the process leaves with `os._exit` (exit code 0). Why each: docs/design.md.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import signal
import sys
import threading
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__

if TYPE_CHECKING:
    from ..config import Settings

STATIC = Path(__file__).with_name("mcp_static.json")
FRONT_METHODS = ("initialize", "notifications/initialized", "tools/list", "ping", "server/discover")
# the 2026-07-28 envelope's keys (mcp_types' PROTOCOL_VERSION_META_KEY and
# CLIENT_CAPABILITIES_META_KEY; the front imports nothing of the SDK)
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
MODERN_ANSWERS = {"server/discover": "discover", "tools/list": "tools"}  # method -> recorded
log = logging.getLogger("memo.mcp")


def load_static() -> dict[str, Any] | None:
    """The recorded answers, when they were recorded from the installed SDK and this memo."""
    try:
        static = json.loads(STATIC.read_text(encoding="utf-8"))
        if static["memo"] != __version__ or static["mcp"] != metadata.version("mcp"):
            return None
        return static
    except (OSError, ValueError, KeyError, metadata.PackageNotFoundError):
        return None


class Wire:
    """The protocol's stdout: a private copy of fd 1, written one whole line at a time."""

    def __init__(self) -> None:
        self._fd = os.dup(1)
        os.dup2(2, 1)  # stray prints of any library land on stderr, never in the protocol
        sys.stdout = sys.stderr
        self._lock = threading.Lock()
        self.drop_ids: set[Any] = set()  # replies the front has given already

    def send(self, message: dict[str, Any] | str) -> None:
        line = message if isinstance(message, str) else json.dumps(message, ensure_ascii=False)
        data = (line.rstrip("\n") + "\n").encode("utf-8")
        with self._lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]

    def from_sdk(self, line: str) -> None:
        """A message the SDK wrote: sent, unless it answers a request the front answered."""
        if self.drop_ids:
            try:
                msg = json.loads(line)
            except ValueError:
                msg = None
            if isinstance(msg, dict) and "id" in msg and msg["id"] in self.drop_ids:
                self.drop_ids.discard(msg["id"])
                return
        self.send(line)


class Backend:
    """The official SDK server on a thread, fed the client's lines through a queue."""

    def __init__(
        self, build: Callable[[], Any], wire: Wire, early: Callable[[], None] | None = None
    ) -> None:
        self.build, self.wire, self.early = build, wire, early
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        """Import and build the SDK server on its thread; `early` (the model's load) begins
        beside it."""
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="memo-mcp", daemon=True)
            self.thread.start()
            if self.early is not None:
                self.early()

    def _run(self) -> None:
        try:
            import anyio
            from mcp.server.stdio import stdio_server

            server = self.build()
            lines, wire = self.lines, self.wire

            class Lines:  # the client's lines, as the SDK's stdio transport reads them
                def __aiter__(self) -> Lines:
                    return self

                async def __anext__(self) -> str:
                    line = await anyio.to_thread.run_sync(lines.get)
                    if line is None:
                        raise StopAsyncIteration
                    return line

            class Out:  # what the SDK writes, through the wire
                async def write(self, text: str) -> None:
                    wire.from_sdk(text)

                async def flush(self) -> None:
                    pass

            async def main() -> None:
                low = server._lowlevel_server
                async with stdio_server(stdin=Lines(), stdout=Out()) as (read, write):  # type: ignore[arg-type]  # duck-typed streams: the SDK reads and writes lines
                    self.ready.set()
                    await low.run(read, write, low.create_initialization_options())

            anyio.run(main)
        except BaseException as e:  # noqa: BLE001 - reported to stderr, the front exits
            self.error = e
            log.error("memo mcp: the MCP server stopped: %s", e, exc_info=True)
        finally:
            self.ready.set()

    def send(self, line: str | None) -> None:
        self.lines.put(line)


def serve(
    build: Callable[[], Any],
    warm: Callable[[], None],
    static: dict[str, Any] | None,
    early: Callable[[], None] | None = None,
) -> None:
    """Serve stdin/stdout until the client closes stdin; then leave with exit code 0.

    `build` makes the SDK server (memo's tools over a Service); `warm` loads the model and the
    indexes (on a thread of its own once the server is built); `early`, called once when
    tools/list is answered, may start loading what the first call needs beside the SDK's
    import. Without a recording (`static` None: another SDK, or structured output asked for),
    every message goes to the SDK."""
    static = static or {"versions": [], "latest": None, "initialize": {}, "tools": {}, "modern": {}}
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    wire = Wire()
    backend = Backend(lambda: _built(build, warm), wire, early)
    replay: list[str] = []  # the handshake the front answered, for the SDK's session
    handed = False
    stdin = sys.stdin.buffer
    while True:
        raw = stdin.readline()
        if not raw:
            break
        line = raw.decode("utf-8", "replace")
        if not line.strip():
            continue
        if not handed:
            msg = _parse(line)
            method = msg.get("method") if msg else None
            if msg and method in FRONT_METHODS and _answer(msg, static, wire, replay, line):
                if method == "tools/list":
                    backend.start()  # the SDK and the model load while the host takes its turn
                continue
            backend.start()
            backend.ready.wait()
            if backend.error is not None:
                break
            for old in replay:
                backend.send(old)
            handed = True
        backend.send(line)
    if handed:
        backend.send(None)  # end of input: the SDK answers what it has, then stops
        if backend.thread is not None:
            backend.thread.join(timeout=30)
    _leave(1 if backend.error is not None else 0)


def _leave(code: int) -> None:
    sys.stderr.flush()
    os._exit(code)


def _on_signal(signum: int, frame: Any) -> None:
    _leave(0 if signum == signal.SIGTERM else 128 + signum)  # a host stopping us: a clean stop


def _built(build: Callable[[], Any], warm: Callable[[], None]) -> Any:
    server = build()
    threading.Thread(target=warm, name="memo-warm-up", daemon=True).start()
    return server


def _parse(line: str) -> dict[str, Any] | None:
    try:
        msg = json.loads(line)
    except ValueError:
        return None
    return msg if isinstance(msg, dict) else None


def _answer(
    msg: dict[str, Any], static: dict[str, Any], wire: Wire, replay: list[str], line: str
) -> bool:
    """Answer a handshake message from the recording; False when it must go to the SDK."""
    method, mid = msg.get("method"), msg.get("id")
    params = msg.get("params") or {}
    if method == "notifications/initialized":
        replay.append(line)
        return True
    if mid is None or not isinstance(params, dict):
        return False
    if _enveloped(params):
        return _answer_modern(msg, static, wire, replay, line)
    if method == "ping":
        wire.send({"jsonrpc": "2.0", "id": mid, "result": {}})
        return True
    if method == "initialize":
        if replay or not static["initialize"]:  # a second one, or nothing recorded: the SDK
            return False
        asked = params.get("protocolVersion")
        version = asked if asked in static["versions"] else static["latest"]
        wire.send({"jsonrpc": "2.0", "id": mid, "result": static["initialize"][version]})
        wire.drop_ids.add(mid)  # the SDK answers the replay too: that reply is not sent
        replay.append(line)
        static["negotiated"] = version
        return True
    if method == "tools/list" and not params.get("cursor") and "negotiated" in static:
        wire.send({"jsonrpc": "2.0", "id": mid, "result": static["tools"][static["negotiated"]]})
        return True
    return False


def _enveloped(params: dict[str, Any]) -> bool:
    """A 2026-07-28 request: its `_meta` names a protocol version (the SDK's own test)."""
    meta = params.get("_meta")
    return isinstance(meta, dict) and VERSION_KEY in meta


def _answer_modern(
    msg: dict[str, Any], static: dict[str, Any], wire: Wire, replay: list[str], line: str
) -> bool:
    """`server/discover` and `tools/list` of the 2026-07-28 protocol, from the recording of the
    envelope's version; anything else, a malformed envelope, a version not recorded, or a
    client that opened with `initialize` (the SDK refuses envelopes then): False, the SDK's.

    The first one answered is replayed into the SDK at the hand-over, as `initialize` is: the
    client's first request decides the SDK's era, so it serves the client's."""
    params, method = msg["params"], msg.get("method")
    meta = params["_meta"]
    recorded = static.get("modern", {}).get(meta.get(VERSION_KEY))
    if (
        method not in MODERN_ANSWERS
        or recorded is None
        or CAPABILITIES_KEY not in meta
        or params.get("cursor")
        or "negotiated" in static
    ):
        return False
    if not replay:
        replay.append(line)
        wire.drop_ids.add(msg["id"])
    wire.send({"jsonrpc": "2.0", "id": msg["id"], "result": recorded[MODERN_ANSWERS[method]]})
    return True


# ---------------------------------------------------------------------- the recording
def record(build: Callable[[], Any]) -> dict[str, Any]:
    """What the SDK answers to `initialize` and `tools/list` for every protocol version it
    negotiates, and to `server/discover` and `tools/list` for every version it serves without
    a handshake, run through the same Backend the front hands over to."""
    from mcp_types.version import (
        HANDSHAKE_PROTOCOL_VERSIONS,
        LATEST_HANDSHAKE_VERSION,
        MODERN_PROTOCOL_VERSIONS,
    )

    out: dict[str, Any] = {
        "memo": __version__,
        "mcp": metadata.version("mcp"),
        "versions": list(HANDSHAKE_PROTOCOL_VERSIONS),
        "latest": LATEST_HANDSHAKE_VERSION,
        "initialize": {},
        "tools": {},
        "modern": {},
    }
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        got = _session(build, _handshake(version))
        out["initialize"][version] = got[1]["result"]
        out["tools"][version] = got[2]["result"]
    for version in MODERN_PROTOCOL_VERSIONS:
        got = _session(build, _enveloped_requests(version))
        out["modern"][version] = {"discover": got[1]["result"], "tools": got[2]["result"]}
    return out


def _handshake(version: str) -> list[dict[str, Any]]:
    hello = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "memo-record", "version": __version__},
    }
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]


def _enveloped_requests(version: str) -> list[dict[str, Any]]:
    meta = {
        VERSION_KEY: version,
        "io.modelcontextprotocol/clientInfo": {"name": "memo-record", "version": __version__},
        CAPABILITIES_KEY: {},
    }
    return [
        {"jsonrpc": "2.0", "id": i, "method": method, "params": {"_meta": meta}}
        for i, method in enumerate(MODERN_ANSWERS, 1)
    ]


def _session(build: Callable[[], Any], messages: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """One SDK session of `messages` (two requests, ids 1 and 2); the replies by id."""
    replies: dict[int, dict[str, Any]] = {}
    done = threading.Event()

    class Capture(Wire):
        def __init__(self) -> None:  # no fd juggling: replies are kept, not written
            self._lock = threading.Lock()
            self.drop_ids = set()

        def send(self, message: dict[str, Any] | str) -> None:
            msg = json.loads(message) if isinstance(message, str) else message
            if "id" in msg:
                replies[msg["id"]] = msg
                if len(replies) == 2:
                    done.set()

    backend = Backend(build, Capture())
    backend.start()
    backend.ready.wait()
    for msg in messages:
        backend.send(json.dumps(msg))
    done.wait(timeout=60)
    backend.send(None)
    if backend.thread is not None:
        backend.thread.join(timeout=10)
    return replies


def build_for_recording(settings: Settings | None = None) -> Any:
    """memo's MCP server over a service that opens nothing (only its tool list is read)."""
    from ..config import Settings
    from .mcp_tools import build_mcp
    from .service import Service

    class _Unopened(Service):
        def __init__(self) -> None:
            self.settings = settings or Settings()

    return build_mcp(_Unopened(), structured=False)


if __name__ == "__main__":  # python -m memo.server.stdio --write
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m memo.server.stdio --write  (records mcp_static.json)")
    STATIC.write_text(
        json.dumps(record(build_for_recording), ensure_ascii=False, indent=1, sort_keys=True)
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {STATIC}")
