"""DNA strands: which strands a search covers, and the reverse complement of a query."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..ranking import MINUS, PLUS

STRANDS = ("both", "plus", "minus")
#: strand code -> the Alignment.strand text
SIGN = {PLUS: "+", MINUS: "-"}

_COMPLEMENT = str.maketrans("ACGTUNRYSWKMBDHVacgtunryswkmbdhv",
                            "TGCAANYRSWMKVHDBtgcaanyrswmkvhdb")
#: DNA codes (A C G T N = 0..4) of the complementary base
_CODE_COMPLEMENT = np.array([3, 2, 1, 0, 4], np.uint8)


def strands(is_dna: bool, strand: str) -> tuple[int, ...]:
    """Strand codes to search: both for DNA unless told otherwise; protein has one."""
    if strand not in STRANDS:
        raise InputError(f"strand must be one of {', '.join(STRANDS)}, got {strand!r}")
    if not is_dna:
        if strand != "both":
            raise InputError(f"strand {strand!r} applies to DNA searches; a protein search has "
                             "one strand")
        return (PLUS,)
    return {"both": (PLUS, MINUS), "plus": (PLUS,), "minus": (MINUS,)}[strand]


def reverse_complement(text: str, codes: np.ndarray) -> tuple[str, np.ndarray]:
    """The reverse complement of a DNA query, as text (IUPAC codes complemented) and codes."""
    return text.translate(_COMPLEMENT)[::-1], _CODE_COMPLEMENT[codes[::-1]]
