"""Many pairs: ``align_pairs`` (one-to-one, or pairs by index), the columnar ``PairBatch`` of
their alignments, ``Sequences`` (records encoded once, one array with offsets) and the
batch's writers (``formats``)."""

from .api import align_pairs
from .batch import PairBatch
from .sequences import Sequences

__all__ = ["PairBatch", "Sequences", "align_pairs"]
