"""wavedp: exact dynamic programming (Smith-Waterman/Gotoh and friends) on CPUs and GPUs."""

from . import polyadic, threads
from .alignment import Alignment
from .api import align, align_all
from .errors import DeviceError, InputError
from .polyadic import matrix_chain, nussinov
from .score_matrix import scores
from .scoring import Scoring
from .search import Database, Searcher, local_hits, search
from .version import __version__

__all__ = ["Alignment", "Database", "DeviceError", "InputError", "Scoring", "Searcher", "align",
           "align_all", "local_hits", "matrix_chain", "nussinov", "polyadic", "scores", "search",
           "threads", "__version__"]
