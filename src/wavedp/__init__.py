"""wavedp: exact dynamic programming (Smith-Waterman/Gotoh and friends) on CPUs and GPUs.

The public names are imported on first use (``wavedp makedb`` forks its workers before
NumPy is imported)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .exports import lazily
from .version import __version__

if TYPE_CHECKING:
    from . import polyadic, threads
    from .alignment import Alignment
    from .api import align
    from .db import Database
    from .dbsearch import Searcher, iter_search, local_hits, search
    from .dbsearch.tables import to_arrow, to_frame, write_parquet
    from .errors import DeviceError, InputError
    from .pairs import PairBatch, Sequences, align_all, align_pairs
    from .polyadic import matrix_chain, nussinov
    from .profiles import Profile
    from .score_matrix import scores
    from .scoring import Scoring

__all__ = ["Alignment", "Database", "DeviceError", "InputError", "PairBatch", "Profile",
           "Scoring",
           "Searcher", "Sequences", "align", "align_all", "align_pairs", "iter_search",
           "local_hits", "matrix_chain", "nussinov", "polyadic", "scores", "search", "threads",
           "to_arrow", "to_frame", "write_parquet", "__version__"]

#: each public name and the module that defines it
_HOMES = {
    "Alignment": ".alignment", "align": ".api", "align_all": ".pairs", "DeviceError": ".errors",
    "InputError": ".errors", "matrix_chain": ".polyadic", "nussinov": ".polyadic",
    "scores": ".score_matrix", "Scoring": ".scoring", "Database": ".db",
    "Searcher": ".dbsearch.api", "search": ".dbsearch.api", "iter_search": ".dbsearch.api",
    "local_hits": ".dbsearch.waterman_eggert", "polyadic": ".polyadic", "threads": ".threads",
    "align_pairs": ".pairs", "PairBatch": ".pairs", "Sequences": ".pairs",
    "to_arrow": ".dbsearch.tables", "to_frame": ".dbsearch.tables",
    "write_parquet": ".dbsearch.tables", "Profile": ".profiles",
}


__getattr__, __dir__ = lazily(__name__, _HOMES, __all__)
