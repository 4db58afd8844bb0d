"""wavedp: exact dynamic programming (Smith-Waterman/Gotoh and friends) on CPUs and GPUs."""

from importlib.metadata import PackageNotFoundError, version

from .alignment import Alignment
from .api import align, align_all
from .errors import InputError
from .scoring import Scoring
from .search import Database, search

try:
    __version__ = version("wavedp")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+src"

__all__ = ["Alignment", "Database", "InputError", "Scoring", "align", "align_all", "search",
           "__version__"]
