"""Search: many queries against a database, with E-values and bit scores
(``docs/design.md``); :class:`Searcher` keeps a database ready for many searches;
:func:`to_frame`, :func:`to_arrow` and :func:`write_parquet` turn hits into tables."""

from .api import DEFAULT_EVALUE, Searcher, iter_search, search
from .database import Database
from .hits import local_hits
from .tables import to_arrow, to_frame, write_parquet

__all__ = ["DEFAULT_EVALUE", "Database", "Searcher", "iter_search", "local_hits", "search",
           "to_arrow", "to_frame", "write_parquet"]
