"""The ASGI application (Starlette): ``GET /health``, ``GET /databases``, ``POST /search``
and its OpenAPI description at ``GET /openapi.json``. A bad request is answered with a 4xx
and one message (``{"error": ...}``); with a token, every route but ``/health`` asks for it
as ``Authorization: Bearer TOKEN``."""

from __future__ import annotations

import hmac
import json
from typing import Any

from ..version import __version__
from .requests import FORMATS, RequestError, parse
from .service import Service


def make_app(service: Service, token: str | None = None):
    """The application answering for ``service`` (``token``: the bearer token asked of
    every request but ``/health``)."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    def refused(message: str, status: int) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    def allowed(request: Request) -> bool:
        if token is None:
            return True
        given = request.headers.get("authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "version": __version__})

    async def databases(request: Request) -> Response:
        if not allowed(request):
            return refused("a bearer token is needed (Authorization: Bearer TOKEN)", 401)
        return JSONResponse({"databases": service.describe()})

    async def openapi(request: Request) -> Response:
        return JSONResponse(OPENAPI)

    async def search(request: Request) -> Response:
        if not allowed(request):
            return refused("a bearer token is needed (Authorization: Bearer TOKEN)", 401)
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > service.limits.body):
            return refused(f"the request body is over {service.limits.body:,} bytes", 413)
        raw = await request.body()
        if len(raw) > service.limits.body:
            return refused(f"the request body is over {service.limits.body:,} bytes", 413)
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return refused(f"the request is not JSON: {exc}", 400)
        try:
            asked = parse(body)
            content, media = await run_in_threadpool(service.search, asked)
        except RequestError as exc:
            return refused(str(exc), exc.status)
        return Response(content, media_type=media)

    return Starlette(routes=[
        Route("/health", health), Route("/databases", databases),
        Route("/openapi.json", openapi), Route("/search", search, methods=["POST"]),
    ])


_ERROR: dict[str, Any] = {"description": "refused: one message",
                          "content": {"application/json": {"schema": {
                              "type": "object", "properties": {"error": {"type": "string"}}}}}}

#: the API as OpenAPI 3.1 describes it
OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "wavedp search service", "version": __version__},
    "paths": {
        "/health": {"get": {"summary": "the service is up",
                            "responses": {"200": {"description": "status and version"}}}},
        "/databases": {"get": {"summary": "the databases served",
                               "responses": {"200": {"description": "name, alphabet, "
                                                     "sequences and residues of each"},
                                             "401": _ERROR}}},
        "/search": {"post": {
            "summary": "search queries against a database, as `wavedp search` does",
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["queries"], "additionalProperties": False,
                "properties": {
                    "queries": {"description": "FASTA text, or a list of sequences (strings, "
                                "or objects with sequence and id)",
                                "oneOf": [{"type": "string"}, {"type": "array"}]},
                    "database": {"type": "string",
                                 "description": "a name from /databases (optional with one)"},
                    "top": {"type": "integer", "minimum": 0, "default": 10},
                    "evalue": {"type": "number", "minimum": 0},
                    "min_score": {"type": "integer"},
                    "stats": {"type": "string", "default": "fitted"},
                    "mode": {"type": "string", "enum": ["local", "global", "semiglobal"]},
                    "strand": {"type": "string", "enum": ["both", "plus", "minus"]},
                    "matrix": {"type": "string"},
                    "match": {"type": "integer"}, "mismatch": {"type": "integer"},
                    "gap_open": {"type": "integer"}, "gap_extend": {"type": "integer"},
                    "columns": {"description": "BLAST's field names (blast6 columns)",
                                "oneOf": [{"type": "string"}, {"type": "array"}]},
                    "format": {"type": "string", "enum": list(FORMATS), "default": "tsv"},
                }}}}},
            "responses": {
                "200": {"description": "tsv: the lines `wavedp search` prints; sam: its SAM; "
                        "json: each query's hits"},
                "400": _ERROR, "401": _ERROR, "404": _ERROR, "413": _ERROR,
            }}},
    },
}
