"""The HTTP API's endpoints: each builds a request (requests.py) and hands it to the Service.

Every body and query model is the request's declaration (server/schemas.py): the same fields,
bounds, help and aliases as the CLI and the MCP tools (tests/test_requests.py walks them).
JSON bodies are validated strictly, as `Request.make` checks them: `"k": "5"` or `"full": 0`
is refused, not coerced (query strings are text, so GET parameters are read as usual).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, model_validator

from ..requests import (
    IndexRequest,
    ReadRequest,
    RouteRequest,
    SearchRequest,
    StatusRequest,
    _Request,
)
from .schemas import model
from .service import Service


class _Strict(BaseModel):
    """A JSON body checked as `Request.make` checks it: no string for a number, no 0 for
    false. JSON Schema counts 17.0 as an integer, so whole floats are taken as ints."""

    model_config = ConfigDict(strict=True)

    @model_validator(mode="before")
    @classmethod
    def _whole_floats(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        whole = {k: int(v) for k, v in data.items() if isinstance(v, float) and v.is_integer()}
        return {**data, **whole}


def body(request: type[_Request], name: str) -> type[BaseModel]:
    return type(name, (model(request, name), _Strict), {"__module__": __name__})


SearchBody = body(SearchRequest, "SearchBody")
RouteBody = body(RouteRequest, "RouteBody")
ReindexBody = body(IndexRequest, "ReindexBody")
SearchQuery = model(SearchRequest, "SearchQuery")
RouteQuery = model(RouteRequest, "RouteQuery")
NoteQuery = model(ReadRequest, "NoteQuery")
StatusQuery = model(StatusRequest, "StatusQuery")


def api_router(service: Service) -> APIRouter:
    """Every REST endpoint, bound to one service."""
    router = APIRouter()

    @router.get("/health", tags=["service"])
    def health() -> dict[str, Any]:
        """Liveness, version, library root and whether the model is loaded."""
        return service.health()

    @router.post("/search", tags=["notes"])
    def search(body: SearchBody) -> dict[str, Any]:  # type: ignore[valid-type]
        """Hybrid search in a collection, folder or note; hits carry `path` and `line`."""
        return service.search(SearchRequest.make(**body.model_dump())).to_dict()

    @router.get("/search", tags=["notes"])
    def search_get(q: Annotated[SearchQuery, Query()]) -> dict[str, Any]:  # type: ignore[valid-type]
        """The same search for `curl` and browsers."""
        return service.search(SearchRequest.make(**q.model_dump())).to_dict()

    @router.get("/note", tags=["notes"])
    def note(q: Annotated[NoteQuery, Query()]) -> dict[str, Any]:  # type: ignore[valid-type]
        """Lines of a note from `line` (a hit's path and line, or `path:line`), with their
        citation hash."""
        return service.get(ReadRequest.make(**q.model_dump())).to_dict()

    @router.post("/route", tags=["notes"])
    def route(body: RouteBody) -> dict[str, Any]:  # type: ignore[valid-type]
        """Rank the collections whose notes answer the question, each with its best hits."""
        return service.route(RouteRequest.make(**body.model_dump())).to_dict()

    @router.get("/route", tags=["notes"])
    def route_get(q: Annotated[RouteQuery, Query()]) -> dict[str, Any]:  # type: ignore[valid-type]
        """The same route for `curl` and browsers."""
        return service.route(RouteRequest.make(**q.model_dump())).to_dict()

    @router.get("/status", tags=["index"])
    def status(q: Annotated[StatusQuery, Query()]) -> dict[str, Any]:  # type: ignore[valid-type]
        """Per collection: files, chunks, staleness, skipped files and why."""
        return service.status(StatusRequest.make(**q.model_dump())).to_dict()

    @router.post("/reindex", tags=["index"])
    def reindex(body: ReindexBody) -> dict[str, Any]:  # type: ignore[valid-type]
        """Bring a path's index up to date now (full=true rebuilds it). Notes are never written."""
        return service.reindex(IndexRequest.make(**body.model_dump())).to_dict()

    return router
