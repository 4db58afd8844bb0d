"""The sequence database: a ``.wdb`` folder made once from FASTA and memory-mapped by every
search (``database.py``: the layout and :class:`Database`; ``files.py``: the header and how
a build is put in place; ``makedb.py``: the builder (processes or threads); ``checksum.py``:
CRC-32 on every core).

:class:`Database` is imported on first use (``makedb`` forks its workers before NumPy is
imported)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .database import Database

__all__ = ["Database"]


def __getattr__(name: str):
    if name != "Database":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = importlib.import_module(".database", __name__).Database
    globals()[name] = value
    return value
