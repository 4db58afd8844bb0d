"""Search: many queries against a database, with E-values and bit scores (docs/design.md)."""

from .api import DEFAULT_EVALUE, iter_search, search
from .database import Database
from .hits import local_hits

__all__ = ["DEFAULT_EVALUE", "Database", "iter_search", "local_hits", "search"]
