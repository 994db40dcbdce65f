"""The HTTP API's endpoints: each reads its arguments, makes the request (requests.py) and
hands it to the Service.

Each operation's endpoints are the ones its request declares (`Operation.http`); the request is
`sent_to` the Service. Nothing here spells a path, a field or a method name. Arguments are checked
once, by the request's `make_exact` (a JSON body as sent, a query string read by each field's
kind; an argument given twice refused); the pydantic models (server/schemas.py) are published in
OpenAPI, never used to validate. Results are returned as built (`response_model=None`), so the
CLI's delegated output stays byte-identical to its own; every error has one shape (`ErrorOut`).
"""

from __future__ import annotations

import email.message
import inspect
import json
import re
from collections.abc import Callable, Iterable
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from ..params import LISTS, ArgumentError
from ..requests import REQUESTS, _Request
from ..server_file import ONE_SHOT_HEADER
from .schemas import OUTPUTS, model
from .service import Service


# ---------------------------------------------------------------------- what a client sends
def body_arguments(body: bytes, content_type: str | None) -> list[tuple[str, Any]]:
    """A JSON body's arguments as sent (a whole float an int); ArgumentError when the body is
    not a JSON object."""
    if not body:
        raise ArgumentError("the body is empty: send a JSON object ({} for every default)")
    if not _is_json(content_type):
        sent = f"as {content_type}" if content_type else "without a content-type"
        raise ArgumentError(f"the body is not sent as JSON, but {sent}")
    try:
        data = json.loads(body)
    except json.JSONDecodeError as e:
        raise ArgumentError(f"the body is not valid JSON ({e.msg})") from None
    except UnicodeDecodeError as e:
        raise ArgumentError(f"the body is not JSON in UTF-8 ({e.reason})") from None
    if not isinstance(data, dict):
        raise ArgumentError(f"the body must be a JSON object, not {_json_type(data)}")
    return [(k, int(v) if isinstance(v, float) and v.is_integer() else v) for k, v in data.items()]


def _json_type(value: Any) -> str:
    """What a JSON value is, in words: an array, a string, a number, true, false, null."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, list):
        return "an array"
    return "a string" if isinstance(value, str) else "a number"


def _is_json(content_type: str | None) -> bool:
    """`application/json` or `application/…+json`, as FastAPI reads a JSON body."""
    if not content_type:
        return False
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


TRUE = ("1", "on", "t", "true", "y", "yes")  # a flag in a query string, any case
FALSE = ("0", "off", "f", "false", "n", "no")
WHOLE = re.compile(r"\s*([+-]?[0-9]+)(?:\.0*)?\s*")  # a number in a query string: 5, +5, 5.0


def query_arguments(
    request: type[_Request], items: Iterable[tuple[str, str]]
) -> list[tuple[str, Any]]:
    """A query string's arguments, each text read as its field's kind: a number, a flag, a
    list (a list argument may repeat: `?tags=a&tags=b`; once, it is a list of one); a value
    that is no such thing is left as sent, for `make_exact` to refuse in its sentence."""
    kinds = {p.name: p.kind for p in request.PARAMS}
    kinds |= {alias: kinds[name] for alias, name in request.aliases().items()}
    out: list[tuple[str, Any]] = []
    lists: dict[str, list[str]] = {}
    for key, text in items:
        kind = kinds.get(key)
        if kind in LISTS:
            if key not in lists:
                lists[key] = []
                out.append((key, lists[key]))
            lists[key].append(text)
        elif kind == "int" and (m := WHOLE.fullmatch(text)):
            out.append((key, int(m[1])))
        elif kind == "bool" and text.strip().lower() in TRUE + FALSE:
            out.append((key, text.strip().lower() in TRUE))
        else:
            out.append((key, text))
    return out


# ---------------------------------------------------------------------- what they answer
class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(
        description="What went wrong, for programs: outside_library_error, not_found_error, "
        "line_error, conflict_error, meta_invalid_error, invalid_request, request_error, "
        "target_error, filter_error, index_error, internal_error, embedder_unavailable_error, "
        "unauthorized, forbidden_host, or http_<status> (http_404, http_405...)."
    )
    message: str = Field(description="What went wrong, for people.")
    hint: str = Field(description="What to do about it ('' when there is nothing to add).")


class ErrorOut(BaseModel):
    """Every error of the HTTP API, whatever raised it."""

    model_config = ConfigDict(extra="forbid")

    error: ErrorDetail


class HealthOut(BaseModel):
    model_config = ConfigDict(extra="allow")  # later versions may add keys

    status: str = Field(description="Always 'ok' when the server answers.")
    version: str
    root: str = Field(description="The library root this server serves.")
    embedder: str | None = Field(description="The embedding model and its engine; null: none.")
    model_loaded: bool = Field(description="The model has loaded (it loads after the start).")
    model_error: str | None = Field(description="Why the model could not load, if it could not.")
    uptime_s: float


def _error(description: str) -> dict[str, Any]:
    return {"model": ErrorOut, "description": description}


OUTSIDE = _error(
    "The path lies outside the library: above its root, through a symlink out of it, or in a "
    "folder the library leaves out on purpose (`outside_library_error`)."
)
NOT_FOUND = _error(
    "The library holds no such note, folder, collection or line: a path that does not exist "
    "there, a folder with no collection, a folder or a file that is not a note, a line past a "
    "note's end (`not_found_error`, `line_error`)."
)
CONFLICT = _error(
    "What the library holds stands in the way: a collection whose _meta.yaml is broken "
    "(`conflict_error`, `meta_invalid_error`)."
)
INVALID = _error(
    "A value memo cannot take: an argument outside its declared type or bounds, an unknown "
    "argument, a missing required one, a body that is not a JSON object (`invalid_request`); "
    "an argument given twice or a line range that runs backwards (`request_error`); a path "
    "of Windows form (`target_error`); a date range that ends before it starts "
    "(`filter_error`)."
)
BROKEN = _error(
    "An index that cannot be opened or written (`index_error`), or a bug in memo "
    "(`internal_error`; the details are in the server log)."
)
UNAVAILABLE = _error(
    "The embedding model cannot be loaded and the request needs it (`embedder_unavailable_error`)."
)
ERRORS: dict[int | str, dict[str, Any]] = {
    403: OUTSIDE,
    404: NOT_FOUND,
    409: CONFLICT,
    422: INVALID,
    500: BROKEN,
    503: UNAVAILABLE,
}


def answers(request: type[_Request]) -> dict[str, Any]:
    """The decorator arguments that publish an operation's result and errors."""
    return {"response_model": None, "responses": {200: {"model": OUTPUTS[request]}, **ERRORS}}


def api_router(service: Service) -> APIRouter:
    """Every REST endpoint, bound to one service: /health, and each operation's endpoints as
    its request declares them (`Operation.http`), published by `openapi` instead."""
    router = APIRouter()

    @router.get(
        "/health", tags=["service"], response_model=None, responses={200: {"model": HealthOut}}
    )
    def health() -> dict[str, Any]:
        """Liveness, version, library root and whether the model is loaded."""
        return service.health()

    for name, request in REQUESTS.items():
        for method, path in request.OPERATION.endpoints:
            router.add_api_route(
                path,
                _endpoint(service, request, method),
                methods=[method],
                name=f"{name}_{method.lower()}",
                include_in_schema=False,
            )
    return router


def _endpoint(service: Service, request: type[_Request], method: str) -> Any:
    """The endpoint: the body or the query string, the request made of it and answered by
    the Service (a delegated `memo` command's by its one-shot library, as that process would
    have answered it)."""

    def answer(arguments: list[tuple[str, Any]], one_shot: bool) -> dict[str, Any]:
        made = request.make_exact(arguments)
        return made.sent_to(service.one_shot() if one_shot else service).to_dict()

    async def endpoint(http: Request) -> dict[str, Any]:
        if method == "POST":
            arguments = body_arguments(await http.body(), http.headers.get("content-type"))
        else:
            arguments = query_arguments(request, http.query_params.multi_items())
        one_shot = bool(http.headers.get(ONE_SHOT_HEADER))
        return await run_in_threadpool(answer, arguments, one_shot)

    return endpoint


# ---------------------------------------------------------------------- what OpenAPI says
def _models() -> dict[tuple[str, str], type[BaseModel]]:
    """(operation, method) -> the model OpenAPI publishes for its endpoint: a JSON body for
    POST, a query string for GET (`SearchBody`, `SearchQuery`, `ReadQuery`...)."""
    out: dict[tuple[str, str], type[BaseModel]] = {}
    for name, request in REQUESTS.items():
        stem = request.__name__.removesuffix("Request")
        for method, _ in request.OPERATION.endpoints:
            out[name, method] = model(request, f"{stem}{'Body' if method == 'POST' else 'Query'}")
    return out


MODELS = _models()


def published() -> APIRouter:
    """The operations' endpoints as OpenAPI describes them: the body or query model of each
    (never called: the endpoints that serve them are `api_router`'s)."""
    router = APIRouter()
    for name, request in REQUESTS.items():
        op = request.OPERATION
        for method, path in op.endpoints:
            again = method == "GET" and len(op.endpoints) > 1  # a POST's twin for curl
            router.add_api_route(
                path,
                _described(MODELS[name, method], method),
                methods=[method],
                name=f"{name}_{method.lower()}",
                description=f"The same {name} for `curl` and browsers." if again else op.summary,
                tags=[op.tag],
                **answers(request),
            )
    return router


def _described(given: type[BaseModel], method: str) -> Callable[..., Any]:
    def endpoint(arguments: BaseModel) -> None:
        raise NotImplementedError  # published, never served

    kind = given if method == "POST" else Annotated[given, Query()]
    named = inspect.Parameter.POSITIONAL_OR_KEYWORD
    endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]  # FastAPI reads it
        [inspect.Parameter("arguments", named, annotation=kind)], return_annotation=dict[str, Any]
    )
    return endpoint


def openapi(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """`app.openapi`: the document of the app's routes, the operations' as `published`."""
    routes = published().routes

    def document() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                routes=[*app.routes, *routes],
            )
        return app.openapi_schema

    return document
