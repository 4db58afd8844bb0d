"""A package's public names imported on first use (:func:`lazily`): ``wavedp``,
``wavedp.dbsearch`` and ``wavedp.serve`` import nothing heavy until a name is asked for
(the thin client of ``search --server`` needs neither NumPy nor the ASGI stack)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazily(package: str, homes: dict[str, str], names: list[str]
           ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` whose public ``names`` live in the
    modules of ``homes`` (each name: its module, relative to the package; a name that is its
    module's own is the module), each imported once and kept in the package."""

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(home, package)
        value = module if home == f".{name}" else getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    def dir_() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return getattr_, dir_
