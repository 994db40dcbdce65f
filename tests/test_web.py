"""The web page of `memo serve`: rendered in-process (fast), then in a real headless Chromium
against a real `memo serve` (slow): search → note at the cited line, the library, a `<script>`
note that stays text, the token form, a missing note, `/docs` without the network.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient

from memo.config import Settings
from memo.embed import Embedder
from memo.library import terms_of
from memo.registry_tools.entry import Entry
from memo.requests import IndexRequest, ReadRequest, SearchRequest
from memo.server.api import build_app
from memo.server.service import Service
from memo.server.web import views
from memo.server.web.auth import COOKIE, session_value
from memo.server.web.highlight import marked
from memo.server.web.source import source_lines

from .conftest import EXAMPLES, checksums
from .test_server import TIMEOUT, Server, server_env

CHROMIUM = os.environ.get("MEMO_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL = "http://127.0.0.1"
EVIL = """# Hostile note

<script>window.pwned=1</script>
<img src=x onerror="window.pwned2=1">
zorblax quartz marker
"""
LONG_WORD = "quillwort"  # a word only the long note holds, far down
# Issue 50: a note holding what the index reads otherwise (collection/markdown.py): the page
# shows each of its lines as written, none emptied or rewritten
SYNTAX = """---
title: Obsidian syntax
aliases: [Syntax sample]
up: "[[Other note]]"
---
# The note as written

![[Engelbart.jpg#outline]]
![[Other note]]
See [[Internal links|Internal link]], [[Other note#Part two]] and [[Nowhere at all]].

> [!tip]- Folded tip
> The tip's body, with [[Other note|a link]] in it.

> A plain quote.

<!-- an HTML comment -->
Text %%an inline comment%% goes on. ^block-1
%% a comment
over two lines %%

```python
def f():
    return "[[not a link]]"  # %% no comment
```

| cell | link |
|------|------|
| `[[code]]` | [[Other note\\|other]] ![pic](pic.png) |

$$
x^2 [[math]]
$$
[a site](https://example.org/?a=1&b=2) and <b>bold</b> with\ta tab
"""
OTHER = "# Other note\n\nIt is embedded.\n\n## Part two\n\nThe second part.\n"


def make_web_library(base: Path) -> Path:
    """The example library, plus: a note holding markup, a long note whose answer is at line
    ~150, a binary "note" (skipped), a collection with a broken `_meta.yaml`, and a note
    longer than a page shows (in a folder that is no collection: read, never indexed)."""
    root = base / "notes"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memo"))
    xss = root / "work" / "xss"
    xss.mkdir()
    (xss / "_meta.yaml").write_text("description: Notes with markup in them <b>bold</b>\n")
    (xss / "evil.md").write_text(EVIL)
    lines = ["# Field guide", ""]
    for i in range(1, 150):
        lines += [f"Line {i} says nothing in particular about plants."]
    lines += ["", "## The rare one", "", f"The {LONG_WORD} grows in shallow lake water.", ""]
    lines += [f"Tail line {i}." for i in range(1, 60)]
    (xss / "long.md").write_text("\n".join(lines) + "\n")
    (xss / "blob.md").write_bytes(b"\x00\x01binary\x00")
    (xss / "syntax.md").write_text(SYNTAX)
    (xss / "Other note.md").write_text(OTHER)
    (xss / "Internal links.md").write_text("# Internal links\n\nHow notes link.\n")
    archive = root / "archive"  # no _meta.yaml: not indexed, but its notes can be read
    archive.mkdir()
    (archive / "huge.md").write_text(
        "# Ledger\n\n" + "".join(f"Row {i}.\n" for i in range(3, 2601))
    )
    broken = root / "home" / "broken"
    broken.mkdir()
    (broken / "_meta.yaml").write_text("description: [unclosed\n")
    return root


def long_note_line(root: Path) -> int:
    text = (root / "work" / "xss" / "long.md").read_text().split("\n")
    return next(i for i, t in enumerate(text, 1) if LONG_WORD in t)


# ---------------------------------------------------------------------- in-process (fast)
@pytest.fixture(scope="module")
def web_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_web_library(tmp_path_factory.mktemp("web"))


@pytest.fixture(scope="module")
def service(web_root: Path, real_embedder: Embedder) -> Iterator[Service]:
    before = checksums(web_root)
    svc = Service(web_root, Settings(), real_embedder)
    svc.index(IndexRequest.make("."))  # the pages below then see current indexes
    # ... and every vector: the service computes them in the background (a page compared
    # with the API must not be the one that ran while long.md still waited for its own)
    assert svc.vectors.idle.wait(TIMEOUT)
    yield svc
    svc.close()
    assert checksums(web_root) == before, "the page changed a note"


@pytest.fixture(scope="module")
def http(service: Service) -> Iterator[TestClient]:
    with TestClient(build_app(service), base_url=f"{LOCAL}:8765") as client:
        yield client


def test_highlight_marks_words_by_stem_and_escapes_the_rest() -> None:
    stems = terms_of("домен routing")
    out = marked("Домена <b>routes</b> & the route", stems)
    assert str(out) == (
        "<mark>Домена</mark> &lt;b&gt;<mark>routes</mark>&lt;/b&gt; &amp; the <mark>route</mark>"
    )
    assert str(marked("a <script>", frozenset())) == "a &lt;script&gt;"
    # split at "_" as the index splits: a question saying max_tokens lights both halves
    assert str(marked("max_tokens: 512", terms_of("max_tokens"))) == (
        "<mark>max</mark>_<mark>tokens</mark>: 512"
    )


def test_search_page_shows_the_api_hits_marked_with_receipt_and_routes(
    http: TestClient, service: Service
) -> None:
    q = "policy based routing"
    r = http.get("/", params={"q": q})
    assert r.status_code == 200, r.text
    api = service.search(SearchRequest.make(".", q)).to_dict()
    shown = re.findall(r'class="where" href="([^"]+)">([^<]+)</a>', r.text)
    assert [w.split(":")[0] for _, w in shown] == [h["path"] for h in api["results"]]
    href, where = shown[0]
    top = api["results"][0]
    assert where == f"{top['path']}:{top['line']}-{top['end_line']}"
    link = urlsplit(href.replace("&amp;", "&"))
    assert link.path == "/read" and link.fragment == f"L{top['line']}"
    args = parse_qs(link.query)
    assert args["line"] == [str(top["line"])] and args["cite"] == [top["cite"]]
    assert "<mark>routing</mark>" in r.text
    assert f"confidence: {api['confidence']}" in r.text
    assert "Searched 4 collections" in r.text and "nothing to catch up" in r.text
    assert "Collections that fit the question" in r.text
    assert 'href="/?q=policy+based+routing&amp;scope=work%2Fnetworking"' in r.text
    timing = r.headers["server-timing"]
    assert "search;dur=" in timing and "render;dur=" in timing
    assert "script-src" not in r.headers["content-security-policy"]
    assert "default-src 'none'" in r.headers["content-security-policy"]


def test_search_page_receipt_says_what_was_caught_up(notes: Path, real_embedder: Embedder) -> None:
    svc = Service(notes, Settings(), real_embedder)
    with TestClient(build_app(svc), base_url=f"{LOCAL}:8765") as c:
        first = c.get("/", params={"q": "sourdough", "scope": "home"}).text
        again = c.get("/", params={"q": "sourdough", "scope": "home"}).text
    svc.close()
    assert "Searched 1 collection (cooking)" in " ".join(first.split())
    assert "1 changed file re-indexed first (cooking: 1)" in " ".join(first.split())
    assert "nothing to catch up" in again


def test_search_page_scope_mode_and_errors(http: TestClient) -> None:
    r = http.get("/", params={"q": "JQL", "scope": "work/jira", "mode": "lex"})
    assert r.status_code == 200
    assert '<option value="work/jira" selected>' in r.text
    assert '<option value="lex" selected>' in r.text
    assert "work/networking/" not in r.text.split('<ol class="hits">')[1]
    r = http.get("/", params={"q": "JQL", "scope": "../../etc"})
    assert r.status_code == 400 and "outside the library root" in r.text
    assert "Give a path inside the library root" in r.text  # the hint
    r = http.get("/")
    assert r.status_code == 200 and 'name="q"' in r.text and '<ol class="hits">' not in r.text


def test_note_page_marks_the_cited_range(http: TestClient, service: Service) -> None:
    path = "work/networking/pbr.md"
    cite = service.read(ReadRequest.make(path, 12, 6)).cite
    r = http.get("/read", params={"path": path, "line": 12, "end": 17, "cite": cite, "q": "mangle"})
    assert r.status_code == 200
    cited = re.findall(r'<div class="ln cited" id="L(\d+)">', r.text)
    assert cited == [str(n) for n in range(12, 18)]
    assert len(re.findall(r'<div class="ln[^"]*" id="L', r.text)) == len(
        (service.root / path).read_text().rstrip("\n").split("\n")
    )
    assert f"cite <code>{cite}</code>" in r.text and "unchanged since the search" in r.text
    assert "<mark>mangle</mark>" in r.text
    r = http.get("/read", params={"path": path, "line": 12, "end": 17, "cite": "000000000000"})
    assert "changed since the search" in r.text


LINE = re.compile(
    r'<div class="ln[^"]*" id="L(\d+)"><a class="no" href="#L\d+">\d+</a>'
    r'<span class="(tx[^"]*)"(?: title="([^"]*)")?>(.*?)</span></div>'
)


def shown_lines(page: str) -> dict[int, tuple[str, str, str]]:
    """Each line of a note page: its number -> (the text it shows, its classes, its tooltip)."""
    return {
        int(n): (html.unescape(re.sub(r"<[^>]+>", "", body)), cls, html.unescape(title))
        for n, cls, title, body in LINE.findall(page)
    }


def test_note_page_shows_every_line_as_written(http: TestClient, web_root: Path) -> None:
    """Issue 50: the page showed the index's reading (an image embed as an empty line, a
    wikilink as its alias, a callout without its marker); now every line is the file's, its
    markup kept and marked up: links that open their note, embeds labelled, a callout boxed."""
    path = "work/xss/syntax.md"
    r = http.get("/read", params={"path": path})
    assert r.status_code == 200
    lines = (web_root / path).read_text().rstrip("\n").split("\n")
    shown = shown_lines(r.text)
    assert [n for n in shown] == list(range(1, len(lines) + 1))
    for n, line in enumerate(lines, 1):
        assert shown[n][0] == line, (n, shown[n][0], line)

    def at(text: str) -> tuple[int, str]:
        n = next(i for i, line in enumerate(lines, 1) if line.startswith(text))
        return n, r.text.split(f'id="L{n}">')[1].split("</div>")[0]

    n, image = at("![[Engelbart")
    assert 'class="embed em-image"' in image and "an embedded image (Engelbart.jpg)" in image
    assert "an embedded image or file" in shown[n][2]  # what the index makes of it, said
    other = "/read?" + urlencode({"path": "work/xss/Other note.md"})
    part_two = "/read?" + urlencode({"path": "work/xss/Other note.md", "line": 5}) + "#L5"
    _, embed = at("![[Other note]]")
    assert f'<a class="wl embed em-note" href="{html.escape(other)}"' in embed
    _, links = at("See [[")
    assert '<span class="tg">Internal links</span><span class="mk">|</span>Internal link' in links
    assert f'href="{html.escape(part_two)}"' in links
    assert 'class="wl lost" title="opens no note in the library"' in links
    n, tip = at("> [!tip]-")
    assert shown[n][1] == "tx co co-tip co-first" and shown[n + 1][1] == "tx co co-tip co-last"
    assert "folded in Obsidian until opened" in tip
    assert shown[at("> A plain")[0]][1] == "tx quote"
    assert 'class="cmt"' in at("<!-- an HTML")[1] and 'class="bid">^block-1' in at("Text %%")[1]
    n, _ = at("%% a comment")
    assert "inside a %% comment" in shown[n][2] and "inside a %% comment" in shown[n + 1][2]
    n, code = at('    return "[[not')
    assert shown[n][1] == "tx code" and "wl" not in code and "cmt" not in code
    assert shown[at("```python")[0]][1] == "tx code fence"
    n, table = at("| `[[code]]`")
    assert shown[n][1] == "tx tbl" and 'class="ic"' in table and "em-image" in table
    assert f'<a class="wl" href="{html.escape(other)}"' in table  # a table's `\\|` alias
    assert shown[at("x^2")[0]][1] == "tx math"
    _, last = at("[a site]")
    assert 'href="https://example.org/?a=1&amp;b=2" rel="noopener noreferrer"' in last
    assert "&lt;b&gt;bold&lt;/b&gt;" in last
    assert shown[1][1] == shown[4][1] == "tx fm" and shown[6][1] == "tx h h1"


def test_a_long_notes_window_reads_what_runs_into_it_from_above() -> None:
    """The page shows a long note from its middle: a fence, a comment or a callout opened
    above the window still holds the window's first lines."""
    lines = ["# Long", "```", *[f"code {i}" for i in range(5)], "```", "> [!warning] Hot"]
    lines += ["> still hot", "text %% open", "closed %% after"]
    whole = source_lines(lines, 1, frozenset())
    for first in range(2, len(lines) + 1):  # a window from each line: the same lines
        assert source_lines(lines, first, frozenset()) == whole[first - 1 :], first
    assert [x.kind for x in whole[3:8]] == ["code"] * 4 + ["code fence"]
    assert whole[9].kind == "co co-warning co-last"
    assert str(whole[11].text).startswith('<span class="cmt"')
    # a fence's marks inside the frontmatter open no code block below it
    assert [x.kind for x in source_lines(["---", "```", "---", "# Title"], 1, frozenset())] == [
        "fm",
        "fm",
        "fm",
        "h h1",
    ]


def test_a_hits_best_lines_are_linked_and_marked_on_the_note(
    http: TestClient, service: Service
) -> None:
    """A hit's focus (search/focus.py) narrower than its lines: the page says its best lines,
    links the note at them, and the note marks them within the cited range."""
    q = "policy based routing"
    api = service.search(SearchRequest.make(".", q)).to_dict()["results"]
    top = next(
        h for h in api if (h["focus_line"], h["focus_end_line"]) != (h["line"], h["end_line"])
    )
    best = range(top["focus_line"], top["focus_end_line"] + 1)
    page = http.get("/", params={"q": q}).text
    links = [
        urlsplit(h.replace("&amp;", "&")) for h in re.findall(r'class="where" href="([^"]+)"', page)
    ]
    link = next(x for x in links if parse_qs(x.query)["line"] == [str(top["line"])])
    args = parse_qs(link.query)
    assert (args["best"], args["best_end"]) == ([str(best[0])], [str(best[-1])])
    assert link.fragment == f"L{best[0]}"  # the page opens at the lines that answer best
    assert f"best lines {best[0]}–{best[-1]}" in page
    note = http.get(f"{link.path}?{link.query}").text
    marked_best = re.findall(r'<div class="ln cited best" id="L(\d+)">', note)
    assert marked_best == [str(n) for n in best]
    assert f'best <a href="#L{best[0]}">{best[0]}–{best[-1]}</a>' in note
    plain = http.get("/read", params={"path": top["path"], "line": top["line"]}).text
    assert " best" not in "".join(re.findall(r'<div class="ln[^"]*"', plain))  # asked for none


def test_note_longer_than_a_page_shows_the_part_around_the_cited_line(http: TestClient) -> None:
    r = http.get("/read", params={"path": "archive/huge.md", "line": 2300})
    assert r.status_code == 200
    assert '<div class="ln cited" id="L2300">' in r.text and "Row 2300." in r.text
    assert 'id="L2600"' in r.text and 'id="L1"' not in r.text
    assert "Lines before" in r.text
    r = http.get("/read", params={"path": "archive/huge.md", "line": 10})
    assert 'id="L1"' in r.text and 'id="L2000"' in r.text and 'id="L2001"' not in r.text
    assert "600 more lines not shown" in r.text


def test_scope_list_gives_way_to_a_text_field_in_a_big_library() -> None:
    def entry(path: str) -> Entry:
        return Entry(path, path.rsplit("/", 1)[-1], "d", (), None, None, 0, 0, "")

    assert views.scope_options([entry("work/jira"), entry("home/cooking")]) == [
        "home",
        "home/cooking",
        "work",
        "work/jira",
    ]
    assert views.scope_options([entry(f"c{i}") for i in range(301)]) is None


def test_missing_or_outside_note_is_a_404_page(http: TestClient) -> None:
    for path in ("work/jira/nope.md", "../../etc/passwd", "work/jira", "work/jira/_meta.yaml"):
        r = http.get("/read", params={"path": path, "line": 3})
        assert r.status_code == 404, (path, r.text)
        assert r.headers["content-type"].startswith("text/html")
        assert 'class="hint"' in r.text and "root:x:" not in r.text


def test_library_page_lists_collections_counts_problems(http: TestClient, service: Service) -> None:
    service.search(SearchRequest.make(".", "warm up the indexes"))
    r = http.get("/library")
    assert r.status_code == 200
    status = http.get("/status").json()
    for c in status["collections"]:
        block = r.text.split(f'id="c-{c["path"]}"')[1].split("</article>")[0]
        assert f'<dd class="files">{c["files"]}' in block
        assert f'<dd class="chunks">{c["chunks"]}</dd>' in block
        assert f'<dd class="languages">{c["languages"]}</dd>' in block  # "ru:1.00"
    assert status["errors"] and "home/broken/_meta.yaml" in r.text  # a broken meta is shown
    assert "blob.md" in r.text and "binary" in r.text  # a skipped file, with its reason
    assert '<span class="tag">mikrotik</span>' in r.text
    assert "Notes with markup in them &lt;b&gt;bold&lt;/b&gt;" in r.text


def test_markup_in_a_note_is_text(http: TestClient) -> None:
    for r in (
        http.get("/read", params={"path": "work/xss/evil.md"}),
        http.get("/", params={"q": "zorblax quartz marker hostile", "scope": "work/xss"}),
    ):
        assert r.status_code == 200
        body = r.text
        assert "<script>window" not in body and "<img src=x" not in body
        assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in body
        assert "&lt;img src=x onerror=" in body


def test_pages_refuse_a_host_that_is_not_loopback(http: TestClient) -> None:
    r = http.get("/", headers={"host": "rebound.example:8765"})
    assert r.status_code == 403
    # The API too: a page that rebinds its name to 127.0.0.1 cannot read the notes through it.
    for path in ("/search?query=JQL", "/status", "/note?path=work/jira/jql.md", "/health"):
        r = http.get(path, headers={"host": "rebound.example:8765"})
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden_host", path
    assert http.get("/search", params={"query": "JQL"}).status_code == 200  # loopback: fine
    assert http.get("/", headers={"host": "localhost:8765"}).status_code == 200
    assert http.get("/library", headers={"host": "[::1]:8765"}).status_code == 200


def test_docs_are_served_offline(http: TestClient) -> None:
    for page in ("/docs", "/redoc"):
        html = http.get(page).text
        assert not re.search(r"(src|href)=[\"']?(https?:)?//", html), html
        assets = re.findall(r"(?:src|href)=[\"']([^\"']+)[\"']", html)
        assert assets, html
        for url in assets:
            assert http.get(url).status_code == 200, url
        assert "cdn." not in html and "googleapis" not in html
    assert http.get("/openapi.json").json()["info"]["title"] == "memo"


def test_token_login_cookie_opens_the_page_but_not_the_api(service: Service) -> None:
    app = build_app(service, host="0.0.0.0", token="s3cret-token")
    with TestClient(app, base_url="http://memo.lan:8765", follow_redirects=False) as c:
        r = c.get("/", params={"q": "JQL"})
        assert r.status_code == 303 and r.headers["location"] == "/login?next=%2F%3Fq%3DJQL"
        assert c.get("/library").headers["location"].startswith("/login")
        assert c.get("/assets/web/memo.css").status_code == 200
        assert c.get("/login").status_code == 200
        r = c.post("/login", data={"token": "wrong", "next": "/"})
        assert r.status_code == 401 and "Wrong token" in r.text and COOKIE not in r.cookies
        r = c.post("/login", data={"token": "s3cret-token", "next": "//evil.example/x"})
        assert r.status_code == 303 and r.headers["location"] == "/"
        set_cookie = r.headers["set-cookie"]
        assert "HttpOnly" in set_cookie and "SameSite=strict" in set_cookie
        assert "s3cret-token" not in set_cookie
        assert r.cookies[COOKIE] == session_value("s3cret-token")
        c.cookies.set(COOKIE, r.cookies[COOKIE])
        assert c.get("/", params={"q": "JQL"}).status_code == 200
        assert c.get("/library").status_code == 200
        assert c.get("/docs").status_code == 200
        for method, url in (("POST", "/search"), ("GET", "/search"), ("GET", "/status")):
            r = c.request(method, url, json={"query": "JQL"}, params={"query": "JQL"})
            assert r.status_code == 401, (method, url)
        bearer = {"Authorization": "Bearer s3cret-token"}
        assert c.post("/search", json={"query": "JQL"}, headers=bearer).status_code == 200
        c.cookies.clear()
        assert c.get("/", params={"q": "JQL"}, headers=bearer).status_code == 200
        r = c.post(
            "/login",
            data={"token": "s3cret-token"},
            headers={"origin": "http://evil.example"},
        )
        assert r.status_code == 403


# ---------------------------------------------------------------------- in a browser (slow)
def _need_browser() -> Any:
    """Playwright driving Debian's Chromium; skipped where there is none, except in CI."""
    why = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        why = "playwright is not installed (pip install -e '.[dev]')"
    if why is None and not (Path(CHROMIUM).exists() and os.access(CHROMIUM, os.X_OK)):
        why = f"no Chromium at {CHROMIUM} (apt-get install chromium, or set MEMO_CHROMIUM)"
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser tests: {why}")
        pytest.skip(why)
    return sync_playwright


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_playwright = _need_browser()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    base = tmp_path_factory.mktemp("web-live")
    root = make_web_library(base)
    index_dir = base / "idx"
    before = checksums(root)
    done = subprocess.run(
        [sys.executable, "-m", "memo", "index", str(root), "--json"],
        env=server_env(index_dir),
        capture_output=True,
        text=True,
        timeout=900,
    )
    # The library holds a broken _meta.yaml on purpose: index says so (exit 1), the rest indexes.
    assert done.returncode == 1 and json.loads(done.stdout)["broken"], done.stderr
    srv = Server(root, index_dir)
    srv.wait()
    yield srv, root
    err = srv.stop()
    assert "Traceback" not in err, err
    assert checksums(root) == before, "the server changed a note"


@pytest.mark.slow
def test_browser_search_then_note_at_the_cited_line_without_javascript(
    browser: Any, live: tuple[Server, Path]
) -> None:
    srv, root = live
    ctx = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 700})
    page = ctx.new_page()
    page.goto(f"{srv.url}/", timeout=TIMEOUT * 1000)
    page.fill("input[name=q]", f"where does the {LONG_WORD} grow")
    page.select_option("select[name=scope]", "work/xss")
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*[?&]q="), timeout=TIMEOUT * 1000)
    first = page.locator("a.where").first
    line = long_note_line(root)
    assert first.inner_text().startswith(f"work/xss/long.md:{line}")
    assert page.locator("a.where").first.locator("xpath=..").locator("mark").count() >= 1
    first.click()
    page.wait_for_url(re.compile(rf".*/read\?.*#L{line}$"), timeout=TIMEOUT * 1000)
    cited = page.locator(".ln.cited")
    assert cited.count() >= 1 and cited.first.get_attribute("id") == f"L{line}"
    assert LONG_WORD in cited.first.inner_text()
    assert page.evaluate("window.scrollY") > 1000  # scrolled down to the anchor
    box = page.evaluate(
        "(id) => { const r = document.getElementById(id).getBoundingClientRect();"
        " return [r.top, r.bottom, window.innerHeight]; }",
        f"L{line}",
    )
    assert 0 <= box[0] and box[1] <= box[2], box  # the cited line is on screen
    assert "unchanged since the search" in page.inner_text(".note-head")
    ctx.close()


@pytest.mark.slow
def test_browser_library_lists_every_collection(browser: Any, live: tuple[Server, Path]) -> None:
    srv, _ = live
    status = httpx.get(f"{srv.url}/status", timeout=TIMEOUT).json()
    page = browser.new_page()
    page.goto(f"{srv.url}/library", timeout=TIMEOUT * 1000)
    cards = page.locator("article.coll")
    assert cards.count() == len(status["collections"]) == 4
    for c in status["collections"]:
        card = page.locator(f"article[id='c-{c['path']}']")
        assert card.locator("dd.files").inner_text().split()[0] == str(c["files"])
        assert card.locator("dd.chunks").inner_text() == str(c["chunks"])
        assert card.locator("dd.stale").inner_text() == str(c["stale"])
    assert "home/broken/_meta.yaml" in page.inner_text("section.error")
    page.close()


@pytest.mark.slow
def test_browser_never_runs_a_script_from_a_note(browser: Any, live: tuple[Server, Path]) -> None:
    srv, _ = live
    page = browser.new_page()
    page.goto(f"{srv.url}/?q=zorblax+quartz+marker&scope=work%2Fxss", timeout=TIMEOUT * 1000)
    page.locator("a.where", has_text="work/xss/evil.md").first.click()
    page.wait_for_load_state()
    text = page.inner_text(".lines")
    assert "<script>window.pwned=1</script>" in text
    assert '<img src=x onerror="window.pwned2=1">' in text
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.evaluate("typeof window.pwned2") == "undefined"
    assert page.locator(".lines script, .lines img").count() == 0
    page.close()


@pytest.mark.slow
def test_browser_note_shows_every_line_of_the_file(browser: Any, live: tuple[Server, Path]) -> None:
    """Issue 50, as a person sees it: each line of a note full of Obsidian syntax (embeds,
    aliased links, a folded callout, comments, frontmatter, code, a table) is on the page,
    visible and exactly as in the file; a path:line link lands on its line, and a wikilink
    opens the note it names."""
    srv, root = live
    path = "work/xss/syntax.md"
    lines = (root / path).read_text().rstrip("\n").split("\n")
    tip = next(n for n, t in enumerate(lines, 1) if t.startswith("> [!tip]"))
    ctx = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 500})
    page = ctx.new_page()
    url = f"{srv.url}/read?" + urlencode({"path": path, "line": tip}) + f"#L{tip}"
    page.goto(url, timeout=TIMEOUT * 1000)
    shown = page.evaluate(
        "() => [...document.querySelectorAll('.lines .ln')].map(l => {"
        " const t = l.querySelector('.tx'), r = t.getBoundingClientRect();"
        " return [l.id, t.innerText, t.checkVisibility({visibilityProperty: true}),"
        " r.height > 0, getComputedStyle(t).color]; })"
    )
    assert [x[0] for x in shown] == [f"L{n}" for n in range(1, len(lines) + 1)]
    for (lid, text, visible, tall, colour), line in zip(shown, lines, strict=True):
        assert text == line, (lid, text, line)
        assert visible and tall and colour != "rgba(0, 0, 0, 0)", lid
    box = page.evaluate(
        "(id) => { const r = document.getElementById(id).getBoundingClientRect();"
        " return [r.top, r.bottom, window.innerHeight]; }",
        f"L{tip}",
    )
    assert 0 <= box[0] and box[1] <= box[2], box  # the cited line (the callout's) is on screen
    badge = page.locator(f"#L{tip} .co-mark")
    assert badge.inner_text() == "[!tip]-" and "tip" in (badge.get_attribute("title") or "")
    image = page.locator(".embed.em-image").first
    label = page.evaluate(
        "(el) => getComputedStyle(el, '::before').content", image.element_handle()
    )
    assert label == '"image"'  # a labelled placeholder, its source text beside the label
    page.locator("a.wl", has_text="Internal link").first.click()
    page.wait_for_url(re.compile(r".*/read\?path=work%2Fxss%2FInternal\+links\.md"))
    assert page.inner_text("#L1 .tx") == "# Internal links"
    ctx.close()


@pytest.mark.slow
def test_browser_missing_note_is_a_404_page(browser: Any, live: tuple[Server, Path]) -> None:
    srv, _ = live
    page = browser.new_page()
    resp = page.goto(f"{srv.url}/read?path=work/jira/missing.md&line=4", timeout=TIMEOUT * 1000)
    assert resp.status == 404
    text = page.inner_text("section.error")
    assert "missing.md" in text and "Give a path inside the library root" in text
    page.close()


@pytest.mark.slow
def test_browser_docs_load_with_the_network_off(browser: Any, live: tuple[Server, Path]) -> None:
    srv, _ = live
    ctx = browser.new_context()
    elsewhere: list[str] = []

    def only_local(route: Any) -> None:
        if route.request.url.startswith(srv.url):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    ctx.route("**/*", only_local)
    page = ctx.new_page()
    page.goto(f"{srv.url}/docs", timeout=TIMEOUT * 1000)
    page.wait_for_selector(".swagger-ui .info .title", timeout=TIMEOUT * 1000)
    assert "memo" in page.inner_text(".swagger-ui .info .title")
    assert page.locator(".opblock-summary-path", has_text="/search").count() >= 1
    assert elsewhere == []
    ctx.close()


@pytest.mark.slow
def test_browser_token_form(browser: Any, live: tuple[Server, Path]) -> None:
    _, root = live
    srv = Server(root, root.parent / "idx", "--token", "s3cret-token")
    try:
        srv.wait()
        ctx = browser.new_context()
        page = ctx.new_page()
        page.goto(f"{srv.url}/?q=JQL", timeout=TIMEOUT * 1000)
        assert urlsplit(page.url).path == "/login"
        page.fill("input[name=token]", "not-the-token")
        page.click("button[type=submit]")
        page.wait_for_selector("text=Wrong token", timeout=TIMEOUT * 1000)
        assert ctx.cookies() == []
        page.fill("input[name=token]", "s3cret-token")
        page.click("button[type=submit]")
        page.wait_for_selector("a.where", timeout=TIMEOUT * 1000)  # back at the search, with hits
        assert urlsplit(page.url).path == "/" and "q=JQL" in page.url
        (cookie,) = ctx.cookies()
        assert cookie["name"] == COOKIE and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert cookie["value"] != "s3cret-token"
        jar = {COOKIE: cookie["value"]}
        r = httpx.post(f"{srv.url}/search", json={"query": "JQL"}, cookies=jar, timeout=TIMEOUT)
        assert r.status_code == 401
        r = httpx.get(f"{srv.url}/library", cookies=jar, timeout=TIMEOUT)
        assert r.status_code == 200
        r = httpx.post(
            f"{srv.url}/search",
            json={"query": "JQL"},
            headers={"Authorization": f"Bearer {cookie['value']}"},
            timeout=TIMEOUT,
        )
        assert r.status_code == 401  # the cookie's value is not the token
        ctx.close()
    finally:
        err = srv.stop()
    assert "Traceback" not in err, err


# ---------------------------------------------------------------------- issue 42 and 43
def test_the_page_folds_the_agents_words_away_and_sends_them(http: TestClient) -> None:
    """Issue 43: "other words" (phrasings one per line, keywords, a likely answer), folded
    until used; what was typed comes back in the form, and a word with nothing to search for
    is the request's own refusal."""
    plain = http.get("/", params={"q": "sourdough"}).text
    assert '<details class="words">' in plain and "<summary>other words</summary>" in plain
    for name in ("also", "keywords", "answer"):
        assert f'name="{name}"' in plain
    words = {
        "also": "хлеб на закваске\n\nвыпечка",
        "keywords": "250 °C",
        "answer": "Печь 20 минут.",
    }
    r = http.get("/", params={"q": "how long to bake bread", **words})
    assert r.status_code == 200, r.text
    assert '<details class="words" open>' in r.text
    assert ">хлеб на закваске\n\nвыпечка</textarea>" in r.text and 'value="250 °C"' in r.text
    assert "home/cooking/sourdough.md" in r.text.split('<ol class="hits">')[1]
    left = http.get("/", params={"q": "bread", "keywords": "?!"})
    assert left.status_code == 200 and "has no letter or digit" in left.text
    bad = http.get("/", params={"q": "bread", "keywords": " "})
    assert bad.status_code == 400 and "is empty" in bad.text


def test_a_collection_at_the_root_is_named_by_the_library_folder(
    tmp_path: Path, real_embedder: Embedder
) -> None:
    """Issue 42: the route chip of a collection at the library root read a bare "."."""
    root = tmp_path / "Kitchen Notes"
    (root / "bread").mkdir(parents=True)
    (root / "_library.yaml").write_text("")
    (root / "_meta.yaml").write_text("description: Baking at home\n")
    (root / "sourdough.md").write_text("# Sourdough\n\nBake the sourdough loaf at 250 °C.\n")
    (root / "bread" / "_meta.yaml").write_text("description: Bread flours\n")
    (root / "bread" / "rye.md").write_text("# Rye\n\nRye sourdough needs a wet dough.\n")
    svc = Service(root, Settings(), real_embedder)
    with TestClient(build_app(svc), base_url=f"{LOCAL}:8765") as c:
        page = c.get("/", params={"q": "sourdough loaf"}).text
    svc.close()
    routes = page.split('aria-label="Collections for this question"')[1].split("</nav>")[0]
    chips = re.findall(r'<a href="([^"]+)"[^>]*>([^<]+)</a>', routes)
    assert ("/?q=sourdough+loaf", "Kitchen Notes") in chips  # "." is the whole library
    assert all(label != "." for _, label in chips)
