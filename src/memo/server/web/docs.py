"""`/docs` and `/redoc` that work offline: the Swagger UI and ReDoc files come from a package.

FastAPI's own docs pages load their JavaScript and CSS from a CDN, so on a machine without the
network (memo's normal case) `/docs` is a blank page. The files are shipped by the
`fastapi-offline` package (Swagger UI 5, which renders the OpenAPI 3.1 FastAPI publishes; the
older `swagger-ui-bundle` ships Swagger UI 4, which cannot); memo only uses its static folder.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

SWAGGER_ASSETS = "/assets/swagger"


def swagger_dir() -> Path:
    return Path(str(files("fastapi_offline") / "static"))


def mount_docs(app: FastAPI) -> None:
    """Serve /docs and /redoc from local files (the app is built with docs_url=None)."""
    app.mount(SWAGGER_ASSETS, StaticFiles(directory=swagger_dir()), name="swagger-assets")
    router = APIRouter(include_in_schema=False)
    favicon = f"{SWAGGER_ASSETS}/favicon.png"

    @router.get("/docs")
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{SWAGGER_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{SWAGGER_ASSETS}/swagger-ui.css",
            swagger_favicon_url=favicon,
            # The online validator badge would send the spec's URL to validator.swagger.io.
            swagger_ui_parameters={"validatorUrl": None},
        )

    @router.get("/redoc")
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{SWAGGER_ASSETS}/redoc.standalone.js",
            redoc_favicon_url=favicon,
            with_google_fonts=False,
        )

    app.include_router(router)
