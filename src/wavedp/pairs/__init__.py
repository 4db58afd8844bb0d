"""Many pairs: ``align_pairs`` (one-to-one, or pairs by index), ``align_all`` (every query
against every target), the columnar ``PairBatch`` of
their alignments, ``Sequences`` (records encoded once, one array with offsets) and the
batch's writers (``formats``)."""

from .api import align_all, align_pairs
from .batch import PairBatch
from .sequences import Sequences

__all__ = ["PairBatch", "Sequences", "align_all", "align_pairs"]
