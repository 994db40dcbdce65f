"""One error format (issue 50, item 4): every refusal says `error:` and `hint:` on the CLI with
exit code 1, click's own usage errors included, and HTTP answers what the library refuses with
the status of its kind (403 outside, 404 not found, 409 conflict, 422 a value memo cannot take),
never 400, with the sentence the Python API raises."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from memo import Library
from memo.cli import cli
from memo.config import Settings
from memo.errors import (
    ConflictError,
    MemoError,
    NotFoundError,
    OutsideLibraryError,
    TargetError,
)
from memo.requests import RequestError, SearchRequest

from .conftest import EXAMPLES


# ---------------------------------------------------------------------- the CLI
def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), prog_name="memo")


def said(out: Any) -> tuple[str, str]:
    """The error and the hint a failed command printed: exactly those two lines on stderr,
    nothing on stdout, exit code 1."""
    assert out.exit_code == 1, (out.exit_code, out.output)
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("error: ") and lines[1].startswith("hint: "), lines
    return lines[0].removeprefix("error: "), lines[1].removeprefix("hint: ")


@pytest.mark.parametrize(
    "args, message, hint",
    [
        (
            ("search", ".", "sync", "-k", "1000"),
            "k must be an integer from 1 to 50, got 1000",
            "k:",
        ),
        (("search", ".", "sync", "-k", "many"), "k must be an integer, got 'many'", "k:"),
        (("search", ".", "x", "--mode", "fuzzy"), "mode must be one of hybrid, lex, vec", "mode:"),
        (("show", "a.md", "-n", "0"), "lines must be an integer from 1", "lines:"),
        (("search",), "missing argument 'QUERY'", "`memo search --help`"),
        (("show",), "missing argument 'PATH[:LINE]'", "`memo show --help`"),
        (("search", ".", "x", "--bogus"), "no such option '--bogus'", "`memo search --help`"),
        (("serach", "x"), "no such command 'serach'", "`memo --help`"),
        (("registry", "frob"), "no such command 'frob'", "`memo registry --help`"),
        (("serve", "--port", "70000"), "invalid value for '--port'", "`memo serve --help`"),
        (("index", "--json=x"), "option '--json' does not take a value", "`memo --help`"),
    ],
)
def test_a_usage_error_is_said_as_every_error_is(args: tuple[str, ...], message: str, hint: str):
    # was click's usage text, `Error: …` and exit code 2
    error, advice = said(run(*args))
    assert error.startswith(message), error
    assert hint in advice and "Usage:" not in advice


def test_a_bound_is_refused_with_the_sentence_every_driver_says():
    with pytest.raises(RequestError) as made:
        SearchRequest.make(".", "sync", k=1000)
    assert said(run("search", ".", "sync", "-k", "1000")) == (str(made.value), made.value.hint)


def test_a_renamed_choice_is_still_taken_and_help_still_shows_the_bounds():
    out = run("search", "--help")
    assert out.exit_code == 0 and "1<=x<=50" in out.stdout and "[hybrid|lex|vec]" in out.stdout
    out = run("route", "x", "--strategy", "nonsense")
    assert "strategy must be one of" in said(out)[0]
    # `hybrid`, the old name of `summary`: not refused by the option (the request warns)
    out = run("route", "x", "--strategy", "hybrid", "--root", "/nonexistent/memo-test-root")
    assert "strategy" not in out.stderr and "not a folder" in said(out)[0]


def test_help_and_version_are_no_errors():
    for args in (("--help",), ("search", "--help"), ("--version",)):
        out = run(*args)
        assert out.exit_code == 0 and out.stderr == "", (args, out.output)


# ---------------------------------------------------------------------- HTTP
@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Library]]:
    """The example library with one of each thing a request can run into: a symlink out of
    it, a folder it leaves out on purpose, a collection whose _meta.yaml is broken, a folder
    of notes without a collection. The HTTP app and a Library in this process, one root."""
    from fastapi.testclient import TestClient

    from memo.server.api import build_app
    from memo.server.service import Service

    base = tmp_path_factory.mktemp("kinds")
    root = base / "notes"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memo"))
    outside = base / "outside"
    outside.mkdir()
    (outside / "_meta.yaml").write_text("description: not yours\n")
    (outside / "secret.md").write_text("# Secret\nthe launch code is swordfish\n")
    (root / "outside-link").symlink_to(outside, target_is_directory=True)
    (root / ".memoignore").write_text("work/networking/\n")
    (root / "broken").mkdir()
    (root / "broken" / "_meta.yaml").write_text("description: [never closed\n")
    (root / "broken" / "b.md").write_text("# B\n")
    (root / "plain").mkdir()
    (root / "plain" / "p.md").write_text("# P\n")
    settings = Settings(embedder="none", index_dir=base / "idx")
    service = Service(root, settings, embedder=None)
    lib = Library(root, None, settings)
    app = build_app(service)
    with TestClient(app, raise_server_exceptions=False, base_url="http://127.0.0.1:8765") as c:
        yield c, lib
    lib.close()


KINDS = [
    # (HTTP request, the Library call that says the same, status, the error's class, code)
    (("GET", "/note", {"path": "/"}), ("read", "/"), 403, OutsideLibraryError),
    (("GET", "/note", {"path": "../x.md"}), ("read", "../x.md"), 403, OutsideLibraryError),
    (
        ("GET", "/note", {"path": "outside-link/secret.md"}),
        ("read", "outside-link/secret.md"),
        403,
        OutsideLibraryError,
    ),
    (
        ("POST", "/search", {"path": "work/networking", "query": "vlan"}),
        ("scope", "work/networking"),
        403,
        OutsideLibraryError,
    ),
    (
        ("GET", "/note", {"path": "work/jira/none.md"}),
        ("read", "work/jira/none.md"),
        404,
        NotFoundError,
    ),
    (("GET", "/note", {"path": "work/jira"}), ("read", "work/jira"), 404, NotFoundError),
    (
        ("GET", "/note", {"path": "work/jira/jql.md:999"}),
        ("read", "work/jira/jql.md:999"),
        404,
        NotFoundError,
    ),
    (("GET", "/note", {"path": "a/" * 2040}), ("read", "a/" * 2040), 404, NotFoundError),
    (
        ("GET", "/related", {"path": "work/jira/jql.md", "line": 999}),
        ("related", "work/jira/jql.md:999"),
        404,
        NotFoundError,
    ),
    (("POST", "/search", {"path": "plain", "query": "x"}), ("scope", "plain"), 404, NotFoundError),
    (("POST", "/reindex", {"path": "nope"}), ("scope", "nope"), 404, NotFoundError),
    (
        ("POST", "/why", {"path": "work/jira", "query": "x"}),
        ("why", "work/jira"),
        404,
        NotFoundError,
    ),
    (("GET", "/status", {"path": "broken"}), ("scope", "broken"), 409, ConflictError),
    (
        ("POST", "/search", {"path": "C:\\Users", "query": "x"}),
        ("scope", "C:\\Users"),
        422,
        TargetError,
    ),
    (
        ("POST", "/search", {"query": "x", "since": "2025-02-02", "until": "2025-02-01"}),
        ("search", "x"),
        422,
        MemoError,
    ),
    (("GET", "/note", {"path": "work/jira/jql.md:5", "line": 6}), None, 422, RequestError),
]


def ask(client: Any, method: str, path: str, args: dict[str, Any]) -> Any:
    if method == "GET":
        return client.get(path, params=args)
    return client.post(path, json=args)


@pytest.mark.parametrize("request_, call, status, kind", KINDS, ids=lambda x: str(x)[:40])
def test_http_answers_each_refusal_with_its_kind_and_the_same_sentence(
    library: tuple[Any, Library], request_: tuple, call: tuple | None, status: int, kind: type
):
    # was 400 for all of them: a path outside the library, a note it does not hold, a
    # collection it cannot read are well-formed requests the library refuses
    client, lib = library
    r = ask(client, *request_)
    assert r.status_code == status, r.text
    body = r.json()
    assert list(body) == ["error"] and sorted(body["error"]) == ["code", "hint", "message"]
    err = body["error"]
    assert err["message"] and err["hint"] and "launch code" not in r.text
    if call is None:
        return
    name, arg = call
    with pytest.raises(kind) as raised:
        if name == "search":
            lib.search(".", arg, since="2025-02-02", until="2025-02-01")
        elif name == "why":
            lib.why(arg, "x")
        else:
            getattr(lib, name)(arg)
    assert (err["message"], err["hint"]) == (str(raised.value), raised.value.hint)


def test_no_operation_publishes_a_400(library: tuple[Any, Library]):
    client, _ = library
    spec = client.get("/openapi.json").json()
    for path, item in spec["paths"].items():
        for method, op in item.items():
            assert "400" not in op["responses"], (method, path)
            assert {"403", "404", "409", "422"} <= set(op["responses"]) or path == "/health"
