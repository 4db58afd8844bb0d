"""The ASGI application (Starlette): ``GET /health``, ``GET /databases``, ``POST /search``,
``GET /metrics`` (Prometheus text) and the OpenAPI description at ``GET /openapi.json``. A
bad request is answered with a 4xx and one message (``{"error": ...}``); with a token, every
route but ``/health`` asks for it as ``Authorization: Bearer TOKEN``."""

from __future__ import annotations

import hmac
import json
import logging
import time
from pathlib import Path
from typing import Any

from ..version import __version__
from .batching import QUEUE, Batcher, Full
from .requests import FORMATS, RequestError, parse
from .service import Job, Service


def make_app(service: Service, token: str | None = None, *, queue: int = QUEUE):
    """The application answering for ``service`` (``token``: the bearer token asked of
    every request but ``/health``); the requests that wait while a search runs are searched
    together next, at most ``queue`` wait (``batching.py``)."""
    import asyncio

    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import FileResponse, JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    batcher = Batcher(service, queue)
    metrics = Metrics(batcher)

    def refused(message: str, status: int) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    def unauthorized(request: Request) -> Response | None:
        """The refusal of a request without the token (None: it may go on)."""
        given = request.headers.get("authorization", "")
        if token is None or hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return None
        return refused("a bearer token is needed (Authorization: Bearer TOKEN)", 401)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "version": __version__})

    async def databases(request: Request) -> Response:
        if (refusal := unauthorized(request)) is not None:
            return refusal
        return JSONResponse({"databases": service.describe()})

    async def openapi(request: Request) -> Response:
        return JSONResponse(OPENAPI)

    async def search(request: Request) -> Response:
        if (refusal := unauthorized(request)) is not None:
            return refusal
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > service.limits.body):
            return refused(f"the request body is over {service.limits.body:,} bytes", 413)
        try:
            raw = await request.body()
        except ClientDisconnect:  # gone before the request was whole: nothing to answer
            return Response(status_code=499)
        if len(raw) > service.limits.body:
            return refused(f"the request body is over {service.limits.body:,} bytes", 413)
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return refused(f"the request is not JSON: {exc}", 400)
        started = time.perf_counter()
        try:
            job = await run_in_threadpool(service.prepare, parse(body))
            batcher.submit(job)
        except RequestError as exc:
            return metrics.answered(refused(str(exc), exc.status), started)
        except Full:
            answer = refused(f"{batcher.waiting} searches are waiting: try again shortly", 429)
            answer.headers["retry-after"] = "1"
            return metrics.answered(answer, started)
        done = asyncio.wrap_future(job.future)
        while not done.done():
            await asyncio.wait([done], timeout=0.1)
            if not done.done() and await request.is_disconnected():
                job.future.cancel()  # dropped unless its search began
                return metrics.answered(Response(status_code=499), started)
        try:
            content, media = done.result()
        except RequestError as exc:
            return metrics.answered(refused(str(exc), exc.status), started)
        metrics.scanned(job)
        return metrics.answered(Response(content, media_type=media), started)

    async def metrics_text(request: Request) -> Response:
        if (refusal := unauthorized(request)) is not None:
            return refusal
        body, media = metrics.text()
        return Response(body, media_type=media)

    async def page(request: Request) -> Response:
        return FileResponse(PAGE / "index.html")

    return Starlette(routes=[
        Route("/", page), Mount("/page", StaticFiles(directory=PAGE), name="page"),
        Route("/health", health), Route("/databases", databases),
        Route("/openapi.json", openapi), Route("/search", search, methods=["POST"]),
        Route("/metrics", metrics_text),
    ])


class Metrics:
    """The service's Prometheus metrics (``prometheus_client``, a registry of its own):
    requests by status, their seconds, the queue's length, database residues scanned, the
    queries each search took together and its seconds."""

    def __init__(self, batcher: Batcher) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        self.requests = Counter("wavedp_requests", "search requests answered, by status",
                                ["status"], registry=self.registry)
        self.seconds = Histogram("wavedp_request_seconds", "search requests' seconds",
                                 registry=self.registry, buckets=SECONDS)
        self.queue = Gauge("wavedp_queue_length", "search requests waiting",
                           registry=self.registry)
        self.queue.set_function(lambda: batcher.waiting)
        self.residues = Counter("wavedp_residues_scanned", "database residues scanned, a "
                                "query's database each", registry=self.registry)
        self.batches = Histogram("wavedp_batch_queries", "queries a search took together",
                                 registry=self.registry,
                                 buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096))
        self.searches = Histogram("wavedp_search_seconds", "seconds a search of a batch "
                                  "took (the device busy)", registry=self.registry,
                                  buckets=SECONDS)
        batcher.searched = self.searched

    def searched(self, queries: int, seconds: float) -> None:
        """A batch of ``queries`` searched in ``seconds``."""
        self.batches.observe(queries)
        self.searches.observe(seconds)

    def answered(self, response, started: float):
        """``response`` counted, timed and logged (one line a request, logger
        ``wavedp.serve``)."""
        seconds = time.perf_counter() - started
        self.requests.labels(status=str(response.status_code)).inc()
        self.seconds.observe(seconds)
        LOG.info("POST /search %d %.3f s", response.status_code, seconds)
        return response

    def scanned(self, job: Job) -> None:
        self.residues.inc(len(job.records) * job.total_residues)

    def text(self) -> tuple[bytes, str]:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


#: the seconds histograms' buckets
SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)

#: one line a search request (the command shows them on stderr)
LOG = logging.getLogger("wavedp.serve")

#: the search page: plain HTML, CSS and JavaScript (no build step)
PAGE = Path(__file__).parent / "page"

_ERROR: dict[str, Any] = {"description": "refused: one message",
                          "content": {"application/json": {"schema": {
                              "type": "object", "properties": {"error": {"type": "string"}}}}}}

#: the API as OpenAPI 3.1 describes it
OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "wavedp search service", "version": __version__},
    "paths": {
        "/": {"get": {"summary": "the search page (HTML)",
                      "responses": {"200": {"description": "the page"}}}},
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
                    "evalue": {"type": "number", "exclusiveMinimum": 0},
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
                "429": {**_ERROR, "description": "the queue is full: retry after the "
                        "Retry-After header's seconds"},
            }}},
        "/metrics": {"get": {"summary": "Prometheus text: requests by status, their seconds, "
                             "the queue's length, database residues scanned",
                             "responses": {"200": {"description": "the metrics"},
                                           "401": _ERROR}}},
    },
}
