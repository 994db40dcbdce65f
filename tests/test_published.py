"""Results declared once (issue 49, item 3): a result's fields say how it is published
(memo/outputs.py `doc()`), and the output schemas OpenAPI and the MCP tools publish are read off
those fields (server/schemas.py `OUTPUTS`). On real indexes of the example library, every answer
of every operation fits its published schema and names no key that schema does not; every
published field says what it is, but the few named here that say it by their name."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from memo.config import Settings
from memo.library import Library
from memo.note_requests import ReadRequest, RelatedRequest
from memo.requests import IndexRequest, RouteRequest, SearchRequest, StatusRequest, WhyRequest
from memo.server.schemas import OUTPUTS, RESULTS

from .conftest import EXAMPLES

jsonschema = pytest.importorskip("jsonschema")

# fields whose name says what they hold, published without a description
SELF_EVIDENT = ("warnings",)

LINKS = """# Links

See [[jql]] and [[jql#Open bugs assigned to me]] and [[missing note]].
Also [automation](automation.md) and ![[nothing.png]].

## Section two

More about [[jql]] here, and about JQL filters for open bugs.
"""

# each operation's arguments, asked in turn: the optional parts of each answer included
CALLS: dict[Any, list[dict[str, Any]]] = {
    SearchRequest: [
        {"query": "open bugs JQL"},
        {
            "query": "open bugs",
            "explain": True,
            "max_tokens": 60,
            "also": ["JQL filter"],
            "keywords": ["OPS"],
            "answer": "Use a JQL filter.",
        },
        {"query": "sourdough starter", "route": 1},
        {"path": "work/jira", "query": "xyzzy plugh"},
    ],
    RouteRequest: [
        {"query": "sourdough starter"},
        {"query": "vlan", "strategy": "tree", "max_tokens": 50},
        {"query": "vlan", "strategy": "hybrid", "k": 1},
    ],
    ReadRequest: [
        {"path": "work/jira/jql.md:3", "lines": 4},
        {"path": "work/jira/jql.md", "paths": ["work/networking/vlan.md:1-3"]},
    ],
    RelatedRequest: [
        {"path": "work/jira/jql.md"},
        {"path": "work/jira/links.md:7", "max_tokens": 40},
    ],
    WhyRequest: [
        {"path": "work/jira/jql.md", "query": "open bugs"},
        {"path": "home/cooking/sourdough.md", "query": "open bugs", "within": "work"},
        {"path": "work/networking/vlan.md", "query": "sourdough", "route": 1},
    ],
    StatusRequest: [{}, {"path": "work"}],
    IndexRequest: [{}, {"path": "work/jira", "full": True}],
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory, real_embedder) -> list[tuple[Any, dict[str, Any]]]:
    notes = tmp_path_factory.mktemp("published") / "notes"
    shutil.copytree(EXAMPLES, notes, ignore=shutil.ignore_patterns(".memo"))
    (notes / "work" / "jira" / "links.md").write_text(LINKS)
    (notes / "broken").mkdir()
    (notes / "broken" / "_meta.yaml").write_text("description: [unclosed\n")
    out = []
    with Library(notes, real_embedder, Settings()) as lib:
        lib.index()
        for request, calls in CALLS.items():
            out += [(request, request.make(**call).sent_to(lib).to_dict()) for call in calls]
    return out


def test_every_operation_is_asked() -> None:
    assert set(CALLS) == set(RESULTS) == set(OUTPUTS)


def test_every_answer_fits_its_published_schema(answers) -> None:
    for request, data in answers:
        schema = OUTPUTS[request].model_json_schema()
        jsonschema.validate(data, schema)
        OUTPUTS[request].model_validate(data)  # as the MCP SDK checks a structured result
        unnamed = _unnamed(data, schema, schema)
        assert not unnamed, (request.__name__, unnamed)


def test_the_optional_parts_are_asked_for(answers) -> None:
    """The calls above reach what an answer holds only sometimes: so the test sees them."""
    seen = {(r.__name__, k) for r, data in answers for k in data}
    for part in (("Search", "routed"), ("Route", "tree"), ("Route", "budget"), ("Read", "more")):
        assert (f"{part[0]}Request", part[1]) in seen, part
    assert any(h.get("explain") for r, d in answers if r is SearchRequest for h in d["results"])
    assert any(d["broken"] for r, d in answers if r is StatusRequest), "a broken _meta.yaml"


def _unnamed(data: Any, schema: dict[str, Any], root: dict[str, Any], at: str = "") -> list[str]:
    """The keys of `data` its schema does not name (the schema allows them: a later version
    may add keys), found wherever the schema names an object's properties."""
    schema = _resolved(schema, root)
    if "anyOf" in schema:
        return min(
            (_unnamed(data, s, root, at) for s in schema["anyOf"] if _fits(data, s, root)),
            key=len,
            default=[],
        )
    if isinstance(data, dict) and "properties" in schema:
        props = schema["properties"]
        out = [f"{at}.{k}" for k in data if k not in props]
        for k, v in data.items():
            if k in props:
                out += _unnamed(v, props[k], root, f"{at}.{k}")
        return out
    if isinstance(data, list) and isinstance(schema.get("items"), dict):
        return [u for i, v in enumerate(data) for u in _unnamed(v, schema["items"], root, at)]
    return []


def _resolved(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _fits(data: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    return jsonschema.Draft202012Validator({**schema, "$defs": root.get("$defs", {})}).is_valid(
        data
    )


def test_every_published_field_says_what_it_is() -> None:
    bare = []
    for model in OUTPUTS.values():
        schema = model.model_json_schema()
        for name, s in [(model.__name__, schema), *schema.get("$defs", {}).items()]:
            for field, prop in s.get("properties", {}).items():
                if not prop.get("description") and field not in SELF_EVIDENT:
                    bare.append(f"{name}.{field}")
    assert not bare, bare


def test_a_read_of_several_notes_publishes_the_others_one_level_deep() -> None:
    """A read's `more` holds reads without a `more` of their own: the schema has no loop (the
    MCP output schemas are published inlined, server/mcp_sdk.py)."""
    schema = OUTPUTS[ReadRequest].model_json_schema()
    (inner,) = schema["$defs"].values()
    assert "more" in schema["properties"] and "more" not in inner["properties"]
