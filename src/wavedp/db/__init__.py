"""The sequence database: a ``.wdb`` folder made once from FASTA and memory-mapped by every
search (``database.py``: the layout and :class:`Database`; ``files.py``: the header and how
a build is put in place; ``makedb.py``: the builder (processes or threads); ``checksum.py``:
CRC-32 on every core).

:class:`Database` is imported on first use (``makedb`` forks its workers before NumPy is
imported)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..exports import lazily

if TYPE_CHECKING:
    from .database import Database

__all__ = ["Database"]

__getattr__ = lazily(__name__, {"Database": ".database"}, __all__)[0]
