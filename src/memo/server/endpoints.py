"""The HTTP API's endpoints: each builds a request (requests.py) and hands it to the Service.

Each operation's endpoints are the ones its request declares (`Operation.http`); the checked
request is `sent_to` the Service. Nothing here spells a path, a field or a method name. Every
body and query model is the request's declaration (server/schemas.py); JSON bodies are validated
as strictly as `Request.make` checks (`"k": "5"` refused, not coerced), and an argument given
twice is refused. An endpoint's result is its operation's output model (`OUTPUTS`, which the MCP
tools publish too) and every error has one shape (`ErrorOut`); results are returned as built
(`response_model=None`), so the CLI's delegated output stays byte-identical to its own.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Annotated, Any, get_args, get_origin

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..requests import REQUESTS, RequestError, _Request
from ..server_file import ONE_SHOT_HEADER
from .schemas import OUTPUTS, annotation, model
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


def _is_list(tp: Any) -> bool:
    return get_origin(tp) is list or any(_is_list(a) for a in get_args(tp))


def refuse_twice(request: type[_Request], keys: Iterable[str], repeatable: bool = False) -> None:
    """RequestError when the keys give one argument twice (`query` and its alias `q`; `k`
    twice in a query string), as `Request.make` refuses it: a model would keep one silently.
    `repeatable`: list arguments may repeat (a query string's `?tags=a&tags=b`)."""
    names = {p.name: p.name for p in request.PARAMS} | request.aliases()
    lists = {p.name for p in request.PARAMS if _is_list(annotation(p))} if repeatable else set()
    seen: dict[str, str] = {}
    for key in keys:
        name = names.get(key)
        if name is None or name in lists:
            continue  # an unknown name is the model's to refuse
        if name in seen:
            raise RequestError(
                f"{name} given twice"
                + (f" (as {seen[name]} and {key})" if seen[name] != key else "")
            )
        seen[name] = key


def body(request: type[_Request], name: str) -> type[BaseModel]:
    def once(cls: type[BaseModel], data: Any) -> Any:
        if isinstance(data, dict):
            refuse_twice(request, data)
        return data

    # pydantic takes a classmethod here (its own docs' form)
    validator = model_validator(mode="before")(classmethod(once))  # type: ignore[arg-type]  # stubs: a function only
    namespace = {"__module__": __name__, "_once": validator}
    return type(name, (model(request, name), _Strict), namespace)


def once(request: type[_Request]) -> Any:
    """The dependency that refuses a query string giving one argument twice."""

    def check(http: Request) -> None:
        refuse_twice(request, (k for k, _ in http.query_params.multi_items()), repeatable=True)

    return Depends(check)


def _models() -> dict[tuple[str, str], type[BaseModel]]:
    """(operation, method) -> the model of its endpoint: a JSON body for POST, a query string
    for GET (`SearchBody`, `SearchQuery`, `ReadQuery`...), named after the request."""
    out: dict[tuple[str, str], type[BaseModel]] = {}
    for name, request in REQUESTS.items():
        stem = request.__name__.removesuffix("Request")
        for method, _ in request.OPERATION.endpoints:
            post = method == "POST"
            out[name, method] = (
                body(request, f"{stem}Body") if post else model(request, f"{stem}Query")
            )
    return out


MODELS = _models()


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


def answers(request: type[_Request], method: str) -> dict[str, Any]:
    """The decorator arguments that publish an operation's result and errors (and, for a GET,
    refuse an argument given twice)."""
    return {
        "response_model": None,
        "responses": {200: {"model": OUTPUTS[request]}, **ERRORS},
        "dependencies": [once(request)] if method == "GET" else [],
    }


def api_router(service: Service) -> APIRouter:
    """Every REST endpoint, bound to one service: /health, and each operation's endpoints as
    its request declares them (`Operation.http`)."""
    router = APIRouter()

    @router.get(
        "/health", tags=["service"], response_model=None, responses={200: {"model": HealthOut}}
    )
    def health() -> dict[str, Any]:
        """Liveness, version, library root and whether the model is loaded."""
        return service.health()

    for name, request in REQUESTS.items():
        op = request.OPERATION
        for method, path in op.endpoints:
            again = method == "GET" and len(op.endpoints) > 1  # a POST's twin for curl
            router.add_api_route(
                path,
                _endpoint(service, request, method),
                methods=[method],
                name=f"{name}_{method.lower()}",
                description=f"The same {name} for `curl` and browsers." if again else op.summary,
                tags=[op.tag],
                **answers(request, method),
            )
    return router


def _endpoint(service: Service, request: type[_Request], method: str) -> Any:
    """The endpoint function FastAPI reads: the body or the query model, whose checked fields
    become the request the Service answers, and the HTTP request (its headers)."""
    given = MODELS[request.OPERATION.name, method]

    def endpoint(arguments: BaseModel, http: Request) -> dict[str, Any]:
        # a one-shot `memo` command's delegated call: answered as that process would have
        answers = service.one_shot() if http.headers.get(ONE_SHOT_HEADER) else service
        return request.make(**arguments.model_dump()).sent_to(answers).to_dict()

    kind = given if method == "POST" else Annotated[given, Query()]
    named = inspect.Parameter.POSITIONAL_OR_KEYWORD
    endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]  # FastAPI reads it
        [
            inspect.Parameter("arguments", named, annotation=kind),
            inspect.Parameter("http", named, annotation=Request),
        ],
        return_annotation=dict[str, Any],
    )
    return endpoint
