"""Request bounds (requests.py) as a client meets them: what each kind of argument accepts,
what it refuses and in which sentence, which default applies, how a location and a long query
are read (issue 32: pinned, not restated). Every driver (CLI, MCP, HTTP) checks through
`make`, so these are the answers all of them give."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memo import requests as rq
from memo.requests import (
    IndexRequest,
    ReadRequest,
    RequestError,
    RouteRequest,
    SearchRequest,
    StatusRequest,
    WhyRequest,
    pattern_of,
)


def _refused(make, *args, **kwargs) -> str:
    """The sentence a refusal says; every refusal says what to send instead, too."""
    with pytest.raises(RequestError) as e:
        make(*args, **kwargs)
    assert e.value.hint.strip()
    return str(e.value)


INT_PARAMS = [(r, p) for r in rq.REQUESTS.values() for p in r.PARAMS if p.kind == "int"]


def _with(request, p: rq.Param, value):
    """`request` made with just its required arguments and `p` = value."""
    need = {q.name: "x.md" if q.kind == "location" else "q" for q in request.PARAMS if q.required}
    return request.make(**{**need, p.name: value})


# ---------------------------------------------------------------------- numbers
@given(st.sampled_from(INT_PARAMS), st.integers(-5, rq.MAX_BUDGET + 5))
@settings(deadline=None)  # no timing: what is checked is the answer, on a loaded machine too
def test_every_integer_inside_its_bounds_is_taken_and_every_one_outside_refused(rp, n):
    request, p = rp
    inside = (p.low is None or n >= p.low) and (p.high is None or n <= p.high)
    if inside:
        assert getattr(_with(request, p, n), p.name) == n
    else:
        said = _refused(_with, request, p, n)
        span = f"from {p.low} to {p.high}" if p.high is not None else f"of at least {p.low}"
        assert said == f"{p.name} must be an integer {span}, got {n}"


@pytest.mark.parametrize(("request_", "name"), [(r, p.name) for r, p in INT_PARAMS])
def test_the_edges_of_each_integer_bound_are_inside(request_, name):
    p = request_.param(name)
    assert getattr(_with(request_, p, p.low), name) == p.low
    if p.high is not None:
        assert getattr(_with(request_, p, p.high), name) == p.high
        _refused(_with, request_, p, p.high + 1)
    _refused(_with, request_, p, p.low - 1)


# the bounds the module's table documents, as literal numbers: what clients were promised
DOCUMENTED = [
    (SearchRequest, "k", 1, 50),
    (SearchRequest, "route", 1, 50),
    (RouteRequest, "k", 1, 50),
    (ReadRequest, "lines", 1, 2000),
    (ReadRequest, "line", 1, None),
    *((r, "max_tokens", 1, 1_000_000) for r in (SearchRequest, RouteRequest, ReadRequest)),
]


@pytest.mark.parametrize(("request_", "name", "low", "high"), DOCUMENTED)
def test_each_number_takes_what_the_table_documents(request_, name, low, high):
    p = request_.param(name)
    assert getattr(_with(request_, p, low), name) == low
    span = f"from {low} to {high}" if high is not None else f"of at least {low}"
    assert _refused(_with, request_, p, low - 1) == f"{name} must be an integer {span}, got 0"
    if high is not None:
        assert getattr(_with(request_, p, high), name) == high
        said = _refused(_with, request_, p, high + 1)
        assert said == f"{name} must be an integer {span}, got {high + 1}"
    else:
        assert getattr(_with(request_, p, 10**9), name) == 10**9


def test_a_required_argument_of_any_kind_must_be_given():
    p = rq.Param("count", "int", "A count.", required=True, low=1)
    assert rq.check(p, 3) == 3
    for missing in (None, ""):
        with pytest.raises(RequestError) as e:
            rq.check(p, missing)
        said = str(e.value)
        assert said == (
            "count is required" if missing is None else "count must be an integer, got ''"
        )


@pytest.mark.parametrize("bad", [True, False, "5", 5.0, [5]])
def test_an_integer_is_an_int_not_a_bool_a_string_or_a_float(bad):
    said = _refused(SearchRequest.make, ".", "q", k=bad)
    assert said == f"k must be an integer, got {bad!r}"


def test_defaults_apply_where_nothing_or_nothing_much_is_given():
    s = SearchRequest.make(None, "q", k=None, mode="", tags="", also="", since="", answer="")
    assert (s.path, s.k, s.mode, s.tags, s.words.also, s.since) == (".", 8, "hybrid", (), (), None)
    assert (s.route, s.max_tokens, s.diverse, s.until) == (None, None, None, None)
    assert (s.words.keywords, s.words.answer) == ((), None)
    r = RouteRequest.make("q", strategy="", prefix="", keywords="")
    assert (r.k, r.strategy, r.prefix, r.words.also) == (rq.DEFAULT_ROUTE_K, "auto", None, ())
    assert (r.words.keywords, r.words.answer) == ((), None)
    assert StatusRequest.make().path == "." and StatusRequest.make("").path == "."
    assert IndexRequest.make().full is False and IndexRequest.make(".", True).full is True
    assert SearchRequest.make("   ", "q").path == "."  # blank: the whole library
    said = _refused(SearchRequest.make, ".", "q", k="")  # an int has no empty form
    assert said == "k must be an integer, got ''"


# ---------------------------------------------------------------------- strings
def test_a_query_or_location_must_be_given_and_be_a_string():
    assert _refused(SearchRequest.make, ".") == "query is required"
    assert _refused(RouteRequest.make) == "query is required"
    assert _refused(ReadRequest.make) == "path is required"
    assert _refused(SearchRequest.make, ".", 5) == "query must be a string, got int"
    said = _refused(ReadRequest.make, 5)
    assert said == "path must be a string, e.g. 'work/jira' or '.'"
    assert _refused(ReadRequest.make, "   ").startswith("path is required: a note's path")


@pytest.mark.parametrize("request_", [SearchRequest, RouteRequest])
@pytest.mark.parametrize("blank", ["", " ", "\t\n", "\u3000"])
def test_an_empty_query_is_refused_with_what_to_send(request_, blank):
    """Issue 42: an empty query was a CLI exit 0 with a warning, an HTTP `invalid_request` and
    an MCP `isError`; now one rule everywhere, the Python API included: refused, saying what
    to send."""
    args = (".",) if request_ is SearchRequest else ()
    with pytest.raises(RequestError) as e:
        request_.make(*args, blank)
    assert str(e.value) == "query is empty: there is nothing to search for"
    assert e.value.hint.startswith("Send the question in words, e.g. query=")
    assert request_.make(*args, " x ").query == " x "  # words with spaces around: as sent


def test_a_path_is_refused_past_its_length_and_cleaned_within_it():
    longest = "a/" * (rq.MAX_PATH_CHARS // 2 - 1) + "ab"
    assert len(longest) == rq.MAX_PATH_CHARS
    assert SearchRequest.make(longest, "q").path == longest
    said = _refused(SearchRequest.make, longest + "c", "q")
    assert said == f"path is {rq.MAX_PATH_CHARS + 1} characters long; the limit is 4096"
    assert SearchRequest.make("  work/jira  ", "q").path == "work/jira"
    assert SearchRequest.make("work/a.md:12-14", "q").path == "work/a.md"  # a hit's location
    assert StatusRequest.make("work/a.md:3").path == "work/a.md"
    assert _refused(StatusRequest.make, 7) == "path must be a string, e.g. 'work/jira' or '.'"


def test_a_name_in_a_path_is_at_most_255_characters_and_holds_no_nul():
    name = "n" * rq.MAX_NAME_CHARS
    assert SearchRequest.make(f"w/{name}/x", "q").path == f"w/{name}/x"
    said = _refused(SearchRequest.make, f"w/{name}n/x", "q")
    assert said == "path has a folder or file name longer than 255 characters"
    assert _refused(ReadRequest.make, f"{name}n.md") == said
    assert _refused(SearchRequest.make, "w/a\x00b", "q") == "path contains a NUL byte"


def test_a_text_argument_is_refused_past_its_length_or_form():
    assert SearchRequest.make(".", "q", since="2024-02-29").since == "2024-02-29"
    said = _refused(SearchRequest.make, ".", "q", since="2023-02-29")
    assert said == f"since must be {rq.DATE_FORM}, got '2023-02-29'"
    long = "2024-01-01T" + "0" * (rq.MAX_DATE_CHARS - 11)
    assert SearchRequest.make(".", "q", until=long).until == long
    said = _refused(SearchRequest.make, ".", "q", until=long + "0")
    assert said == f"until is {rq.MAX_DATE_CHARS + 1} characters long; the limit is 40"
    assert _refused(SearchRequest.make, ".", "q", since=7) == "since must be a string, got int"
    assert _refused(RouteRequest.make, "q", prefix="a\x00") == "prefix contains a NUL byte"
    assert RouteRequest.make("q", prefix="work/*").prefix == "work/*"


def test_a_form_without_words_is_named_by_its_pattern():
    p = rq.Param("code", "text", "A code.", pattern="[a-z]+")
    assert rq.check(p, "abc") == "abc"
    with pytest.raises(RequestError) as e:
        rq.check(p, "ab1")
    assert str(e.value) == "code must be of the form [a-z]+, got 'ab1'"
    assert rq.pattern_of(p) == "[a-z]+"
    assert rq.pattern_of(SearchRequest.param("path")) == rq.PATH_PATTERN
    assert rq.pattern_of(ReadRequest.param("path")) == rq.PATH_PATTERN
    assert rq.pattern_of(RouteRequest.param("prefix")) == rq.TEXT_PATTERN
    assert rq.pattern_of(SearchRequest.param("query")) == rq.QUERY_PATTERN
    assert rq.pattern_of(SearchRequest.param("k")) is None


# ---------------------------------------------------------------------- choices, flags, lists
def test_a_choice_a_flag_and_a_list_refuse_what_they_are_not():
    said = _refused(SearchRequest.make, ".", "q", mode="fuzzy")
    assert said == "mode must be one of hybrid, lex, vec, got 'fuzzy'"
    assert SearchRequest.make(".", "q", mode="vec").mode == "vec"
    assert _refused(IndexRequest.make, ".", "yes") == "full must be true or false"
    assert SearchRequest.make(".", "q", diverse=False).diverse is False
    said = _refused(SearchRequest.make, ".", "q", tags=[1])
    assert said == "tags must be a list of strings (or one comma-separated string)"
    assert _refused(SearchRequest.make, ".", "q", tags=5) == said
    assert SearchRequest.make(".", "q", tags="a,b c,,").tags == ("a", "b", "c")
    assert SearchRequest.make(".", "q", tags=["x y"]).tags == ("x y",)


def test_phrasings_are_cleaned_and_bounded():
    s = SearchRequest.make(".", "q", also=["  kafka   lag ", "Kafka lag", "очередь"])
    assert s.words.also == ("kafka lag", "очередь")  # spaces folded; a repeat in other case dropped
    assert SearchRequest.make(".", "q", also="one phrasing").words.also == ("one phrasing",)
    assert RouteRequest.make("q", also=("a", "b", "c")).words.also == ("a", "b", "c")
    assert _refused(SearchRequest.make, ".", "q", also=["a", "b", "c", "d"]) == (
        "also holds 4 different ones; at most 3"
    )
    assert SearchRequest.make(".", "q", also=["a", "b", "c", "A"]).words.also == ("a", "b", "c")
    longest = "x" * rq.MAX_QUERY_CHARS
    assert SearchRequest.make(".", "q", also=[longest]).words.also == (longest,)
    said = _refused(SearchRequest.make, ".", "q", also=["a", longest + "x"])
    assert said == "also[1] is 2001 characters long; the limit is 2000"
    said = _refused(SearchRequest.make, ".", "q", also=[1])
    assert said == "also must be a list of strings"
    assert _refused(SearchRequest.make, ".", "q", also=7) == said


# ---------------------------------------------------------------------- the agent's words
def test_the_words_are_normalised_and_repeats_of_the_query_dropped():
    """Issue 43: duplicates after normalisation (NFC, casefold, whitespace collapsed), and a
    phrasing or keyword equal to the query, are dropped before any work."""
    decomposed = "e\u0301te\u0301"  # "été" as e + combining accent
    s = SearchRequest.make(
        ".",
        "How do I pin a tab",
        also=["how do I  pin a TAB", "закрепить вкладку", decomposed, "\u00e9t\u00e9"],
        keywords=["Pin", "pin", " PIN ", "how do i pin a tab"],
        answer="  Вкладку   закрепляют\nв её меню. ",
    )
    assert s.words.also == ("закрепить вкладку", "\u00e9t\u00e9")  # NFC: the composed form
    assert s.words.keywords == ("Pin",)
    assert s.words.answer == "Вкладку закрепляют в её меню."
    r = RouteRequest.make("vlan", also=["VLAN"], keywords="802.1Q, trunk,, vlan")
    assert (r.words.also, r.words.keywords) == ((), ("802.1Q", "trunk"))


def test_keywords_and_an_answer_are_bounded_as_published():
    eight = [f"k{i}" for i in range(rq.MAX_KEYWORDS)]
    assert SearchRequest.make(".", "q", keywords=eight).words.keywords == tuple(eight)
    said = _refused(SearchRequest.make, ".", "q", keywords=[*eight, "k9"])
    assert said == "keywords holds 9 different ones; at most 8"
    assert _refused(SearchRequest.make, ".", "q", keywords="a,b,c,d,e,f,g,h,i") == said
    longest = "k" * rq.MAX_KEYWORD_CHARS
    assert SearchRequest.make(".", "q", keywords=[longest]).words.keywords == (longest,)
    said = _refused(SearchRequest.make, ".", "q", keywords=[longest + "k"])
    assert said == "keywords[0] is 101 characters long; the limit is 100"
    answer = "a" * rq.MAX_ANSWER_CHARS
    assert RouteRequest.make("q", answer=answer).words.answer == answer
    said = _refused(RouteRequest.make, "q", answer=answer + ".")
    assert said == "answer is 1001 characters long; the limit is 1000"
    assert _refused(RouteRequest.make, "q", answer=["a"]) == "answer must be a string, got list"


@pytest.mark.parametrize(
    ("words", "said"),
    [
        ({"also": ["ok", "  "]}, "also[1] is empty: it has no word to search for"),
        ({"keywords": ["a", "\t"]}, "keywords[1] is empty: it has no word to search for"),
        ({"answer": " \n "}, "answer is empty: it has no word to search for"),
    ],
)
def test_a_blank_word_is_refused_saying_why_and_what_to_send(words, said):
    with pytest.raises(RequestError) as e:
        SearchRequest.make(".", "q", **words)
    assert str(e.value) == said
    (name,) = words
    assert e.value.hint == f"{name}: {SearchRequest.param(name).help}"  # what to send


def test_a_word_of_punctuation_alone_is_left_out_and_said():
    """`%%`, `[[##`, `---`: markdown syntax an agent rightly names, which no leg can match (the
    index holds words). The search goes on without it, and says so."""
    req = SearchRequest.make(
        ".", "q", also=["?!", "ok"], keywords=["%%", "«—»", "tag"], answer="..."
    )
    assert req.words.also == ("ok",) and req.words.keywords == ("tag",) and req.words.answer is None
    said = req.warnings()
    assert any("also '?!' has no letter or digit" in w for w in said)
    assert any("keywords '%%' has no letter or digit" in w for w in said)
    assert any("keywords '«—»'" in w for w in said)
    assert "answer has no letter or digit: it was left out" in said


@given(st.text(max_size=30))
@settings(deadline=None)  # no timing: a loaded machine took 269 ms for one example
def test_the_published_form_of_a_word_is_the_one_memo_checks(text):
    """A word is refused exactly when the pattern the schemas publish refuses it (JSON Schema
    searches a pattern: a word needs one character besides spaces and punctuation), so a
    schema-valid request is never refused for its form (.ci/schemathesis-probe)."""
    import re

    published = re.search(pattern_of(SearchRequest.param("answer")), text) is not None
    try:
        SearchRequest.make(".", "q", answer=text)
        taken = True
    except RequestError:
        taken = False
    assert taken == (published or text == "")  # '' is no answer at all


def test_an_old_strategy_name_is_read_and_named():
    """`hybrid` named both a search mode and a route strategy: the strategy is `summary` now;
    the old name still works and the answer says the new one."""
    r = RouteRequest.make("q", strategy="hybrid")
    assert r.strategy == "summary" and r.to_dict()["strategy"] == "summary"
    assert r.warnings() == ["strategy 'hybrid' is now called 'summary': send strategy='summary'"]
    assert RouteRequest.make("q", strategy="summary").warnings() == []
    said = _refused(RouteRequest.make, "q", strategy="best")
    assert said == "strategy must be one of auto, flat, tree, summary, got 'best'"


def test_a_refusal_says_what_the_field_takes():
    """Issue 42: `--since yesterday` got the hint about the query, k and mode; a refusal now
    carries its own field's hint (a date: the forms it takes)."""
    with pytest.raises(RequestError) as e:
        SearchRequest.make(".", "q", since="yesterday")
    assert e.value.hint == rq.DATE_HINT and "1d" in e.value.hint and "YYYY-MM-DD" in e.value.hint
    with pytest.raises(RequestError) as e:
        SearchRequest.make(".", "q", k=0)
    assert e.value.hint == "k: How many hits."
    with pytest.raises(RequestError) as e:
        SearchRequest.make(".", "q", kk=1)
    assert e.value.hint.startswith("The arguments are path, query, k, mode")


# ---------------------------------------------------------------------- arguments
def test_arguments_come_in_declaration_order_once_each_and_by_their_names():
    s = SearchRequest.make("work", "q", 3, "lex")
    assert (s.path, s.query, s.k, s.mode) == ("work", "q", 3, "lex")
    n = len(SearchRequest.PARAMS)
    assert _refused(SearchRequest.make, *(["x"] * (n + 1))) == f"too many arguments ({n + 1})"
    assert StatusRequest.make("w").path == "w"
    assert _refused(StatusRequest.make, "w", "x") == "too many arguments (2)"
    assert _refused(SearchRequest.make, ".", "q", kk=1) == "unknown argument 'kk'"
    assert _refused(SearchRequest.make, ".", "q", query="again") == "query given twice"
    # the names models send instead (MCP hands them to `make` as they come)
    s = SearchRequest.make(q="vlan", collection="work", top_k=3, phrasings=["b"], terms="T")
    assert (s.path, s.query, s.k, s.words.also, s.words.keywords) == (
        "work",
        "vlan",
        3,
        ("b",),
        ("T",),
    )
    said = _refused(SearchRequest.make, query="a", q="b")
    assert said == "query given twice (as query and q)"
    assert SearchRequest.param("mode").choices == rq.MODES


# ---------------------------------------------------------------------- a long query
@pytest.mark.parametrize(
    ("request_", "args"), [(SearchRequest, (".",)), (RouteRequest, ()), (WhyRequest, ("a.md",))]
)
def test_a_query_is_cut_past_its_bound_and_only_then(request_, args):
    at = request_.make(*args, "x" * rq.MAX_QUERY_CHARS)
    assert at.query == "x" * rq.MAX_QUERY_CHARS and at.warnings() == []
    past = request_.make(*args, "y" * (rq.MAX_QUERY_CHARS + 1))
    assert past.query == "y" * rq.MAX_QUERY_CHARS
    assert past.warnings() == [
        "the query was 2001 characters long; only its first 2000 were searched "
        "(ask with the question or a few keywords)"
    ]
    assert rq.cut_warning(0) == []


def test_a_request_as_the_http_api_reads_it():
    s = SearchRequest.make(".", "q", also=["b"], tags="t", diverse=False, keywords="K", answer="A")
    assert s.to_dict() == {
        "path": ".",
        "query": "q",
        "k": 8,
        "mode": "hybrid",
        "tags": ["t"],
        "diverse": False,
        "also": ["b"],
        "keywords": ["K"],
        "answer": "A",
        "explain": False,
    }
    assert RouteRequest.make("q").to_dict() == {"query": "q", "k": 5, "strategy": "auto"}
    assert IndexRequest.make().to_dict() == {"path": ".", "full": False}


# ---------------------------------------------------------------------- a location
@pytest.mark.parametrize(
    ("given", "said"),
    [
        (("x.md:5", 6), "line given twice: x.md:5 and line=6"),
        (("x.md:9-3",), "x.md:9-3 is not a line range of a note"),
        (("x.md:0",), "x.md:0 is not a line range of a note"),
        (("x.md:0-2",), "x.md:0-2 is not a line range of a note"),
        (("x.md:1-2001",), "lines must be an integer from 1 to 2000, got 2001"),
    ],
)
def test_a_location_that_says_two_things_or_nothing_is_refused_in_its_words(given, said):
    assert _refused(ReadRequest.make, *given) == said


def test_a_location_reads_as_a_line_and_a_count():
    assert ReadRequest.make("x.md:5", 5).line == 5  # the same line twice: one line
    r = ReadRequest.make("x.md:3-3")
    assert (r.path, r.line, r.lines) == ("x.md", 3, 1)
    r = ReadRequest.make("x.md:1-2000")
    assert r.lines == 2000
    r = ReadRequest.make("x.md:4-9", lines=2)  # an explicit count wins over the range
    assert (r.line, r.lines) == (4, 2)
    r = ReadRequest.make("x.md", max_tokens=50)
    assert (r.path, r.line, r.lines, r.max_tokens) == ("x.md", None, None, 50)


def test_each_operation_names_its_endpoints_by_method_and_path():
    assert SearchRequest.OPERATION.endpoints == (("POST", "/search"), ("GET", "/search"))
    assert ReadRequest.OPERATION.endpoints == (("GET", "/note"),)
    odd = rq.Operation("x", "x", "x", ("GET /a path",), "x")
    assert odd.endpoints == (("GET", "/a path"),)


_CHILD = """
import json

import anyio
from click.testing import CliRunner
from mcp import Client

from memo.cli import cli
from memo.config import Settings
from memo.server.mcp_tools import ALIASES, build_mcp
from memo.server.service import Service


class NoService(Service):
    def __init__(self):
        self.settings = Settings()


async def schemas():
    async with Client(build_mcp(NoService())) as client:
        return {t.name: t.input_schema for t in (await client.list_tools()).tools}


def usage(command):
    return CliRunner().invoke(cli, [command, "--help"], prog_name="memo").output


print(json.dumps({
    "schemas": anyio.run(schemas),
    "aliases": ALIASES,
    "help": {c: usage(c) for c in ("search", "route", "show", "status", "index")},
}))
"""


def test_a_fresh_process_publishes_the_budget_and_the_path_as_declared(tmp_path):
    """The shared fields (`max_tokens`, `path`) are built once, while requests.py is imported:
    what a new `memo` process (an MCP server, a CLI run) publishes of them, read in one. (In a
    process of its own, too, so a mutation run, whose test sessions import requests.py once
    beforehand, sees a change to how they are built.)"""
    import json
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    schemas, aliases, help_ = got["schemas"], got["aliases"], got["help"]
    # the MCP tool list says each briefly (read every turn); the CLI says it whole, and both
    # read the same Param (its bounds: the CLI's range below; `make` checks them for MCP)
    for tool in ("memo_search", "memo_route", "memo_get"):
        budget = schemas[tool]["properties"]["max_tokens"]
        assert budget["description"] == "The answer's token budget.", tool
        assert budget["type"] == "integer" and _json_bounds(budget) == {}, tool
    for tool in ("memo_search", "memo_status", "memo_reindex"):
        path = schemas[tool]["properties"]["path"]
        assert path["description"] == rq.SearchRequest.param("path").brief
        assert path.get("default") == "."
        assert "path" not in schemas[tool].get("required", [])
        for alias in ("collection", "scope", "folder", "target"):
            assert aliases[tool][alias] == "path", (tool, alias)
    # PATH defaulted on every driver: left out on the CLI too (`memo search QUERY`)
    assert help_["search"].startswith("Usage: memo search [OPTIONS] [PATH] QUERY\n")
    assert help_["status"].startswith("Usage: memo status [OPTIONS] [PATH]\n")
    assert help_["index"].startswith("Usage: memo index [OPTIONS] [PATH]\n")
    assert help_["show"].startswith("Usage: memo show [OPTIONS] PATH[:LINE]\n")
    for command in ("search", "route", "show"):
        assert "--max-tokens INTEGER RANGE" in help_[command], command
        assert "[1<=x<=1000000]" in " ".join(help_[command].split()), command


def _json_bounds(prop: dict) -> dict:
    """minimum/maximum/maxLength of a property, through `anyOf [T, null]`."""
    out = {}
    for part in [prop, *prop.get("anyOf", [])]:
        for k in ("minimum", "maximum", "maxLength"):
            if k in part:
                out[k] = part[k]
    return out


# ECMA-262's \s (what a client validating memo's published schema reads): WhiteSpace and
# LineTerminator, spelled out from the standard
ECMA_SPACES = "\t\n\x0b\x0c\r \xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
ECMA_SPACES += "\u2028\u2029\u202f\u205f\u3000\ufeff"


def test_blank_means_one_thing_to_memo_and_to_a_client_of_its_schema():
    """A query or word of nothing but spaces is refused, and what counts as a space is the same
    for memo (Python) and a client that checks the schema's pattern (ECMA-262): schemathesis
    sent "\\u0085", which ECMA's \\S takes for a letter and Python's strip() for a space."""
    import re

    for c in map(chr, [*range(0xD800), *range(0xE000, 0x110000)]):
        blank = c.isspace() or c in ECMA_SPACES
        assert (re.search(rq.QUERY_PATTERN, c) is None) == blank, hex(ord(c))
    for blank in ("\x85", "\x1c", "\ufeff", " \u2028 "):
        assert _refused(SearchRequest.make, ".", blank).startswith("query is empty")
    assert SearchRequest.make(".", "\u0085x").query.endswith("x")  # a word beside it: asked
