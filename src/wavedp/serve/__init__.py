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

from typing import TYPE_CHECKING

from ..exports import lazily

if TYPE_CHECKING:
    from .app import make_app
    from .service import Service

__all__ = ["Service", "make_app"]

#: each public name and the module that defines it, imported on first use (the thin client
#: imports this package's ``client`` alone, without the ASGI stack)
_HOMES = {"make_app": ".app", "Service": ".service"}


__getattr__, __dir__ = lazily(__name__, _HOMES, __all__)
