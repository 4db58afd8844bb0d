"""Low-complexity soft masking with tantan (Frith 2011, Nucleic Acids Res 39:e23), an option.

Masking changes scores, so a search applies it only when asked (``--mask``), never by default.
tantan finds tandem and simple repeats (the regions that give unrelated sequences high
scores); this module marks them as lowercase ("soft" masking, :func:`soft_mask`) and turns a
soft mask into codes that the engines score (:func:`apply`).

How masked residues score: as ``X`` (protein) or ``N`` (DNA) against everything, which is
what BLAST's masking does in its alignments and what DIAMOND does with tantan's mask.
MMseqs2 instead masks only its k-mer prefilter and aligns the unmasked residues: wavedp has no
prefilter, so that choice would change nothing here. Under BLOSUM62, X scores -1 against most
letters (0 against A, S, T; -2 against C, P, W), so a masked region adds nothing to a local
alignment yet an alignment can still run through it. A masked residue is left out of the
sequence's composition (``composition.counts`` counts only the 20 amino acids).

tantan comes from ``pytantan`` (GPL-3.0), an optional dependency imported only when
masking is asked for; without it the request is an InputError naming the package.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..errors import InputError
from ..scoring import Scoring

INSTALL = "pip install pytantan"


def _tantan() -> Any:
    try:
        import pytantan  # lazy: an optional dependency (GPL-3.0), needed only for masking
    except ImportError:
        raise InputError(f"masking needs the optional package pytantan ({INSTALL})") from None
    return pytantan


def require() -> None:
    """An InputError naming the package unless masking can run here (checked before a
    search starts)."""
    _tantan()


def available() -> bool:
    """Whether masking can run here (pytantan imports)."""
    try:
        _tantan()
    except InputError:
        return False
    return True


#: tantan's repeat model (its defaults) and the repeat probability above which a residue is
#: masked
MODEL = {"repeat_start": 0.005, "repeat_end": 0.05, "decay": 0.9}
THRESHOLD = 0.5


def soft_mask(texts: Iterable[str], protein: bool = True) -> list[str]:
    """Each sequence with its tantan repeats in lowercase (the rest uppercase): MODEL and
    THRESHOLD. ``protein``: BLOSUM62 scoring (tantan's protein default), else DNA."""
    tantan = _tantan()
    matrix = tantan.default_scoring_matrix(protein)
    finder = tantan.RepeatFinder(matrix, protein=protein, **MODEL)
    known = set(finder.alphabet.letters)
    out = []
    for text in texts:
        upper = text.upper()
        # tantan refuses some letters (the stop '*'): it sees them as an unknown letter
        safe = "".join(c if c in known else "X" for c in upper) \
            if not set(upper) <= known else upper
        mask = lowercase(finder.mask_repeats(safe, threshold=THRESHOLD))
        raw = np.frombuffer(upper.encode("ascii", "replace"), dtype=np.uint8).copy()
        raw[mask & (raw >= ord("A")) & (raw <= ord("Z"))] += ord("a") - ord("A")
        out.append(raw.tobytes().decode("ascii"))
    return out


def lowercase(text: str) -> np.ndarray:
    """The soft mask of a text: True where the letter is lowercase."""
    raw = np.frombuffer(text.encode("ascii", "replace"), dtype=np.uint8)
    return (raw >= ord("a")) & (raw <= ord("z"))


def mask_code(scoring: Scoring) -> int:
    """The code masked residues take: X for a protein matrix, N for DNA."""
    letter = "N" if scoring.is_dna else "X"
    if letter not in scoring.alphabet:
        raise InputError(f"masking needs an {letter} in the {scoring.matrix} alphabet")
    return scoring.alphabet.index(letter)


def apply(codes: np.ndarray, mask: np.ndarray, scoring: Scoring) -> np.ndarray:
    """A copy of ``codes`` (encoded with ``scoring``) with the masked positions as X (or N)."""
    codes = np.array(codes, dtype=np.uint8, copy=True)
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != codes.shape:
        raise InputError(f"a mask of {mask.size} positions for {codes.size} residues")
    codes[mask] = mask_code(scoring)
    return codes


def fraction(texts: Sequence[str]) -> float:
    """The fraction of residues in lowercase (how much a soft mask covers)."""
    total = sum(len(t) for t in texts)
    return sum(int(lowercase(t).sum()) for t in texts) / total if total else 0.0


def masked(texts: Sequence[str], codes: Sequence[np.ndarray], scoring: Scoring
           ) -> tuple[list[str], list[np.ndarray]]:
    """Encoded sequences (``texts`` and their ``codes``) with tantan's repeats as X (or N),
    in the texts and in the codes: what a search with ``mask`` scans and aligns."""
    letter = ord("N" if scoring.is_dna else "X")
    out_texts, out_codes = [], []
    for text, code, soft in zip(texts, codes, soft_mask(texts, protein=not scoring.is_dna),
                                strict=True):
        mask = lowercase(soft)
        out_codes.append(apply(code, mask, scoring))
        raw = np.frombuffer(text.encode("ascii", "replace"), dtype=np.uint8).copy()
        raw[mask] = letter
        out_texts.append(raw.tobytes().decode("ascii"))
    return out_texts, out_codes
