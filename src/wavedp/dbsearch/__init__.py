"""Search: many queries against a database, with E-values and bit scores
(``docs/design.md``); :class:`Searcher` keeps a database ready for many searches;
:func:`to_frame`, :func:`to_arrow` and :func:`write_parquet` turn hits into tables.

The public names are imported on first use (``makedb`` here forks its workers before NumPy
is imported)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..exports import lazily

if TYPE_CHECKING:
    from ..db.database import Database
    from .api import DEFAULT_EVALUE, Searcher, iter_search, search
    from .tables import to_arrow, to_frame, write_parquet
    from .waterman_eggert import local_hits

__all__ = ["DEFAULT_EVALUE", "Database", "Searcher", "iter_search", "local_hits", "search",
           "to_arrow", "to_frame", "write_parquet"]

#: each public name and the module that defines it
_HOMES = {
    "DEFAULT_EVALUE": ".api", "Searcher": ".api", "iter_search": ".api", "search": ".api",
    "Database": "..db.database", "local_hits": ".waterman_eggert", "to_arrow": ".tables",
    "to_frame": ".tables", "write_parquet": ".tables",
}


__getattr__, __dir__ = lazily(__name__, _HOMES, __all__)
