"""Starting the servers: `memo mcp` (stdio) and `memo serve` (HTTP API + MCP at /mcp)."""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path
from typing import Any

from .. import __version__, server_file
from ..config import Settings
from ..errors import MemoError
from . import stdio


def serve_stdio(root: Path, settings: Settings | None = None) -> None:
    """MCP over stdin/stdout (stdio.py): the handshake answered at once, the SDK server, the
    model and the indexes loaded behind it. stdout belongs to the protocol: logs go to stderr.
    Never returns: the process exits 0 when the client closes stdin."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    settings = settings or Settings.from_env()
    static = None if settings.mcp_structured else stdio.load_static()
    made: dict[str, Any] = {}

    def early() -> None:
        """At tools/list: the model starts loading on a thread of its own while another
        imports the SDK (1.2 s each here; on two cores side by side, not one after the other:
        the first memo_search came 3.5 s after start when the model waited for the SDK)."""
        from ..embed import embedder_for

        made["embedder"] = embedder = embedder_for(settings)
        if embedder is not None:
            threading.Thread(target=_load, args=(embedder,), name="memo-model", daemon=True).start()

    def build() -> Any:
        from .mcp_tools import build_mcp
        from .service import Service

        if "embedder" not in made:  # a client that never asked for tools/list
            early()
        made["service"] = service = Service(root, settings, embedder=made["embedder"])
        return build_mcp(service)

    def warm() -> None:
        made["service"].warm_up()  # waits for the model's lock: then it is loaded

    stdio.serve(build, warm, static, early=early)


def _load(embedder: Any) -> None:
    """Load the engine by embedding once; a failure is the warm-up's to report."""
    try:
        embedder.embed_query("warm up")
    except Exception:  # noqa: BLE001 - Service.warm_up records the error the host sees
        logging.getLogger("memo.server").debug("early model load failed", exc_info=True)


def serve_http(
    root: Path,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    watch: bool = False,
    polling: bool = False,
    settings: Settings | None = None,
    log_level: str = "info",
) -> None:
    from .api import is_loopback

    if not is_loopback(host) and not token:
        raise MemoError(
            f"refusing to listen on {host} without a token: anyone who can reach it could "
            "read your notes",
            "Set --token (or MEMO_TOKEN) to a long random secret, or bind to 127.0.0.1.",
        )
    import uvicorn

    from .api import build_app
    from .service import Service

    settings = settings or Settings.from_env()
    service = Service(root, settings)
    watcher = None
    if watch:
        from ..watch import Watcher  # the same process watches, indexes and serves

        watcher = Watcher(service.root, service.embedder, settings, polling=polling)
    url = f"http://{_connectable(host)}:{port}"

    def on_start() -> None:
        if watcher is not None:
            watcher.start()
        if port:  # a one-shot `memo search` for this library hands its request to us
            server_file.write(service.root, settings, url, __version__, bool(token))

    def on_stop() -> None:
        server_file.remove(service.root, settings)
        if watcher is not None:
            watcher.stop()

    app = build_app(service, host=host, token=token, on_start=on_start, on_stop=on_stop)
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=False)


def _connectable(host: str) -> str:
    """The address a client on this machine connects to for a server bound to `host`."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
