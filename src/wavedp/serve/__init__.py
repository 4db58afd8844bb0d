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

from .app import make_app
from .service import Service

__all__ = ["Service", "make_app"]
