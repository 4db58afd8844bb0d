"""wavedp: exact dynamic programming (Smith-Waterman/Gotoh and friends) on CPUs and GPUs.

The public names are imported on first use (``wavedp makedb`` forks its workers before
NumPy is imported)."""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING

from .version import __version__

if TYPE_CHECKING:
    from . import polyadic, threads
    from .alignment import Alignment
    from .api import align
    from .db import Database
    from .errors import DeviceError, InputError
    from .pairs import PairBatch, Sequences, align_all, align_pairs
    from .polyadic import matrix_chain, nussinov
    from .score_matrix import scores
    from .scoring import Scoring
    from .search import Searcher, local_hits, search

__all__ = ["Alignment", "Database", "DeviceError", "InputError", "PairBatch", "Scoring",
           "Searcher", "Sequences", "align", "align_all", "align_pairs", "local_hits",
           "matrix_chain", "nussinov", "polyadic", "scores", "search", "threads", "__version__"]

#: each public name and the module that defines it
_HOMES = {
    "Alignment": ".alignment", "align": ".api", "align_all": ".pairs", "DeviceError": ".errors",
    "InputError": ".errors", "matrix_chain": ".polyadic", "nussinov": ".polyadic",
    "scores": ".score_matrix", "Scoring": ".scoring", "Database": ".db",
    "Searcher": ".search", "local_hits": ".search", "polyadic": ".polyadic",
    "threads": ".threads", "align_pairs": ".pairs", "PairBatch": ".pairs",
    "Sequences": ".pairs",
}


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(home, __name__)
    value = module if home == f".{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """This package's module type: ``wavedp.search`` is the function :func:`search` (the
    subpackage is ``wavedp.search`` in ``sys.modules``), also after the subpackage's import
    binds its name here."""

    @property
    def search(self):
        bound = self.__dict__.get("search")
        if bound is not None and not isinstance(bound, types.ModuleType):
            return bound  # set by the caller (a test's monkeypatch)
        return importlib.import_module(".search.api", __name__).search

    @search.setter
    def search(self, value) -> None:
        self.__dict__["search"] = value

    @search.deleter
    def search(self) -> None:
        self.__dict__.pop("search", None)


sys.modules[__name__].__class__ = _Package
