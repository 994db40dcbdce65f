"""The HTTP API's endpoints: each builds a request (requests.py) and hands it to the Service.

The bodies publish the bounds of requests.py (tests/test_requests.py checks they stay equal) and
accept the argument names models often send instead (`q`, `limit`, `top_k`, `collection`).
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query
from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from .. import requests as rq
from ..requests import IndexRequest, ReadRequest, RouteRequest, SearchRequest, StatusRequest
from .service import Service


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class SearchBody(_Body):
    path: str = Field(
        ".",
        max_length=rq.MAX_PATH_CHARS,
        validation_alias=AliasChoices("path", "collection", "scope"),
        description="Collection, folder or note relative to the library root; '.' = all.",
    )
    query: str = Field(
        min_length=1,
        max_length=rq.MAX_QUERY_CHARS,
        validation_alias=AliasChoices("query", "q"),
    )
    k: int = Field(
        rq.DEFAULT_K, ge=1, le=rq.MAX_K, validation_alias=AliasChoices("k", "limit", "top_k")
    )
    mode: Literal["hybrid", "lex", "vec"] = "hybrid"
    route: int | None = Field(
        None, ge=1, le=rq.MAX_ROUTE_K, description="Search only the top N routed collections."
    )
    max_tokens: int | None = Field(None, ge=1, le=rq.MAX_BUDGET, description="Token budget.")
    tags: list[str] | None = Field(None, description="Only notes having all these tags.")
    since: str | None = Field(None, max_length=40, description="YYYY-MM-DD or 7d / 2w / 3m.")
    until: str | None = Field(None, max_length=40)
    diverse: bool | None = Field(None, description="Cap hits per note (default on for k >= 5).")


class RouteBody(_Body):
    query: str = Field(
        min_length=1, max_length=rq.MAX_QUERY_CHARS, validation_alias=AliasChoices("query", "q")
    )
    k: int = Field(
        rq.DEFAULT_ROUTE_K,
        ge=1,
        le=rq.MAX_ROUTE_K,
        validation_alias=AliasChoices("k", "limit", "top_k"),
    )
    prefix: str | None = Field(None, max_length=rq.MAX_PATH_CHARS)
    strategy: Literal["auto", "flat", "tree", "hybrid"] = "auto"


class ReindexBody(_Body):
    path: str = Field(
        ".",
        max_length=rq.MAX_PATH_CHARS,
        validation_alias=AliasChoices("path", "collection", "scope"),
    )
    full: bool = False


def api_router(service: Service) -> APIRouter:
    """Every REST endpoint, bound to one service."""
    router = APIRouter()

    @router.get("/health", tags=["service"])
    def health() -> dict[str, Any]:
        """Liveness, version, library root and whether the model is loaded."""
        return service.health()

    @router.post("/search", tags=["notes"])
    def search(body: SearchBody) -> dict[str, Any]:
        """Hybrid search in a collection, folder or note; hits carry `path` and `line`."""
        return service.search(SearchRequest.make(**body.model_dump())).to_dict()

    @router.get("/search", tags=["notes"])
    def search_get(
        query: str = Query(min_length=1, max_length=rq.MAX_QUERY_CHARS),
        path: str = Query(".", max_length=rq.MAX_PATH_CHARS),
        k: int = Query(rq.DEFAULT_K, ge=1, le=rq.MAX_K),
        mode: Literal["hybrid", "lex", "vec"] = "hybrid",
        route: int | None = Query(None, ge=1, le=rq.MAX_ROUTE_K),
    ) -> dict[str, Any]:
        """The same search for `curl` and browsers."""
        req = SearchRequest.make(path, query, k=k, mode=mode, route=route)
        return service.search(req).to_dict()

    @router.get("/note", tags=["notes"])
    def note(
        path: str = Query(max_length=rq.MAX_PATH_CHARS),
        line: int | None = Query(None, ge=1),
        lines: int | None = Query(None, ge=1, le=rq.MAX_LINES),
    ) -> dict[str, Any]:
        """Lines of a note from `line` (a hit's path and line), with their citation hash."""
        return service.get(ReadRequest.make(path, line, lines)).to_dict()

    @router.post("/route", tags=["notes"])
    def route(body: RouteBody) -> dict[str, Any]:
        """Rank the collections whose descriptions fit the question."""
        return service.route(RouteRequest.make(**body.model_dump())).to_dict()

    @router.get("/route", tags=["notes"])
    def route_get(
        query: str = Query(min_length=1, max_length=rq.MAX_QUERY_CHARS),
        k: int = Query(rq.DEFAULT_ROUTE_K, ge=1, le=rq.MAX_ROUTE_K),
        prefix: str | None = Query(None, max_length=rq.MAX_PATH_CHARS),
        strategy: Literal["auto", "flat", "tree", "hybrid"] = "auto",
    ) -> dict[str, Any]:
        req = RouteRequest.make(query, k=k, prefix=prefix, strategy=strategy)
        return service.route(req).to_dict()

    @router.get("/status", tags=["index"])
    def status(path: str = Query(".", max_length=rq.MAX_PATH_CHARS)) -> dict[str, Any]:
        """Per collection: files, chunks, staleness, skipped files and why."""
        return service.status(StatusRequest.make(path)).to_dict()

    @router.post("/reindex", tags=["index"])
    def reindex(body: ReindexBody) -> dict[str, Any]:
        """Bring a path's index up to date now (full=true rebuilds it). Notes are never written."""
        return service.reindex(IndexRequest.make(body.path, body.full)).to_dict()

    return router
