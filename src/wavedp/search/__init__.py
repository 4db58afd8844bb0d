"""Search: many queries against a database, with E-values and bit scores
(``docs/design.md``); :class:`Searcher` keeps a database ready for many searches."""

from .api import DEFAULT_EVALUE, Searcher, iter_search, search
from .database import Database
from .hits import local_hits

__all__ = ["DEFAULT_EVALUE", "Database", "Searcher", "iter_search", "local_hits", "search"]
