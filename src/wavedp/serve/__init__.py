"""``wavedp serve``: databases held open (their searchers built once, on the GPU where there
is one) behind an HTTP API, so that a search costs its scan, not an interpreter's start.

- ``requests.py``: a search request read and checked (one clear message a fault);
- ``service.py``: the databases, their searchers, a search run and written as the command
  writes it;
- ``batching.py``: requests of one key arriving together searched together, a bounded
  queue;
- ``app.py``: the ASGI application (Starlette): routes, limits, the bearer token, metrics,
  OpenAPI;
- ``client.py``: ``wavedp search --server``, the thin client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import make_app
    from .service import Service

__all__ = ["Service", "make_app"]


def __getattr__(name: str) -> Any:
    """The application and the service, imported on first use (the thin client imports this
    package's ``client`` alone, without the ASGI stack)."""
    if name == "make_app":
        from .app import make_app

        return make_app
    if name == "Service":
        from .service import Service

        return Service
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
