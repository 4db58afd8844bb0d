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

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .app import make_app
    from .service import Service

__all__ = ["Service", "make_app"]

#: each public name and the module that defines it, imported on first use (the thin client
#: imports this package's ``client`` alone, without the ASGI stack)
_HOMES = {"make_app": ".app", "Service": ".service"}


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
