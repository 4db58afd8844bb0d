"""Karlin-Altschul statistics for local alignment scores: bit scores and E-values.

lambda, K and H are the published gapped values of NCBI BLAST (its ``blast_stat.c`` tables).
The tables below are keyed by BLAST's gap costs (a, b), where a gap of length k costs
``a + b*k``; wavedp's ``gap_open + (k-1)*gap_extend`` is the same scheme with
``a = gap_open - gap_extend`` and ``b = gap_extend`` (BLAST's 11/1 is wavedp's 12/1).
BLAST's ungapped and "linear" rows are not gapped parameters of an affine scheme and are left
out, as is blastn's fallback to ungapped parameters for gap costs beyond its tables.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InputError
from ..scoring import Scoring

#: matrix -> {(a, b): (lambda, K, H)}
PROTEIN_TABLES: dict[str, dict[tuple[int, int], tuple[float, float, float]]] = {
    "BLOSUM45": {
        (13, 3): (0.207, 0.049, 0.14), (12, 3): (0.199, 0.039, 0.11),
        (11, 3): (0.190, 0.031, 0.095), (10, 3): (0.179, 0.023, 0.075),
        (16, 2): (0.210, 0.051, 0.14), (15, 2): (0.203, 0.041, 0.12),
        (14, 2): (0.195, 0.032, 0.10), (13, 2): (0.185, 0.024, 0.084),
        (12, 2): (0.171, 0.016, 0.061), (19, 1): (0.205, 0.040, 0.11),
        (18, 1): (0.198, 0.032, 0.10), (17, 1): (0.189, 0.024, 0.079),
        (16, 1): (0.176, 0.016, 0.063),
    },
    "BLOSUM50": {
        (13, 3): (0.212, 0.063, 0.19), (12, 3): (0.206, 0.055, 0.17),
        (11, 3): (0.197, 0.042, 0.14), (10, 3): (0.186, 0.031, 0.11),
        (9, 3): (0.172, 0.022, 0.082), (16, 2): (0.215, 0.066, 0.20),
        (15, 2): (0.210, 0.058, 0.17), (14, 2): (0.202, 0.045, 0.14),
        (13, 2): (0.193, 0.035, 0.12), (12, 2): (0.181, 0.025, 0.095),
        (19, 1): (0.212, 0.057, 0.18), (18, 1): (0.207, 0.050, 0.15),
        (17, 1): (0.198, 0.037, 0.12), (16, 1): (0.186, 0.025, 0.10),
        (15, 1): (0.171, 0.015, 0.063),
    },
    "BLOSUM62": {
        (11, 2): (0.297, 0.082, 0.27), (10, 2): (0.291, 0.075, 0.23),
        (9, 2): (0.279, 0.058, 0.19), (8, 2): (0.264, 0.045, 0.15),
        (7, 2): (0.239, 0.027, 0.10), (6, 2): (0.201, 0.012, 0.061),
        (13, 1): (0.292, 0.071, 0.23), (12, 1): (0.283, 0.059, 0.19),
        (11, 1): (0.267, 0.041, 0.14), (10, 1): (0.243, 0.024, 0.10),
        (9, 1): (0.206, 0.010, 0.052),
    },
    "BLOSUM80": {
        (25, 2): (0.342, 0.17, 0.66), (13, 2): (0.336, 0.15, 0.57),
        (9, 2): (0.319, 0.11, 0.42), (8, 2): (0.308, 0.090, 0.35),
        (7, 2): (0.293, 0.070, 0.27), (6, 2): (0.268, 0.045, 0.19),
        (11, 1): (0.314, 0.095, 0.35), (10, 1): (0.299, 0.071, 0.27),
        (9, 1): (0.279, 0.048, 0.20),
    },
    "BLOSUM90": {
        (9, 2): (0.310, 0.12, 0.46), (8, 2): (0.300, 0.099, 0.39),
        (7, 2): (0.283, 0.072, 0.30), (6, 2): (0.259, 0.048, 0.22),
        (11, 1): (0.302, 0.093, 0.39), (10, 1): (0.290, 0.075, 0.28),
        (9, 1): (0.265, 0.044, 0.20),
    },
    "PAM30": {
        (7, 2): (0.305, 0.15, 0.87), (6, 2): (0.287, 0.11, 0.68),
        (5, 2): (0.264, 0.079, 0.45), (10, 1): (0.309, 0.15, 0.88),
        (9, 1): (0.294, 0.11, 0.61), (8, 1): (0.270, 0.072, 0.40),
    },
    "PAM70": {
        (8, 2): (0.301, 0.12, 0.54), (7, 2): (0.286, 0.093, 0.43),
        (6, 2): (0.264, 0.064, 0.29), (11, 1): (0.305, 0.12, 0.52),
        (10, 1): (0.291, 0.091, 0.41), (9, 1): (0.270, 0.060, 0.28),
    },
    "PAM250": {
        (15, 3): (0.205, 0.049, 0.13), (14, 3): (0.200, 0.043, 0.12),
        (13, 3): (0.194, 0.036, 0.10), (12, 3): (0.186, 0.029, 0.085),
        (11, 3): (0.174, 0.020, 0.070), (17, 2): (0.204, 0.047, 0.12),
        (16, 2): (0.198, 0.038, 0.11), (15, 2): (0.191, 0.031, 0.087),
        (14, 2): (0.182, 0.024, 0.073), (13, 2): (0.171, 0.017, 0.059),
        (21, 1): (0.205, 0.045, 0.11), (20, 1): (0.199, 0.037, 0.10),
        (19, 1): (0.192, 0.029, 0.083), (18, 1): (0.183, 0.021, 0.070),
        (17, 1): (0.171, 0.014, 0.052),
    },
}

#: self-scores of A R N D C Q E G H I L K M F P S T W Y V in NCBI's matrices, the ones the
#: tables were computed for: a matrix of the same name with other scores (Biopython's BLOSUM80
#: is in 1/3-bit units, NCBI's in 1/2-bit units) gets no statistics
NCBI_DIAGONALS: dict[str, tuple[int, ...]] = {
    "BLOSUM45": (5, 7, 6, 7, 12, 6, 6, 7, 10, 5, 5, 5, 6, 8, 9, 4, 5, 15, 8, 5),
    "BLOSUM50": (5, 7, 7, 8, 13, 7, 6, 8, 10, 5, 5, 6, 7, 8, 10, 5, 5, 15, 8, 5),
    "BLOSUM62": (4, 5, 6, 6, 9, 5, 5, 6, 8, 4, 4, 5, 5, 6, 7, 4, 5, 11, 7, 4),
    "BLOSUM80": (5, 6, 6, 6, 9, 6, 6, 6, 8, 5, 4, 5, 6, 6, 8, 5, 5, 11, 7, 4),
    "BLOSUM90": (5, 6, 7, 7, 9, 7, 6, 6, 8, 5, 5, 6, 7, 7, 8, 5, 6, 11, 8, 5),
    "PAM30": (6, 8, 8, 8, 10, 8, 8, 6, 9, 8, 7, 7, 11, 9, 8, 6, 7, 13, 10, 7),
    "PAM70": (5, 8, 6, 6, 9, 7, 6, 6, 8, 7, 6, 6, 10, 8, 7, 5, 6, 13, 9, 6),
    "PAM250": (2, 6, 2, 4, 12, 4, 4, 5, 6, 5, 6, 5, 6, 9, 6, 2, 3, 17, 10, 4),
}
_AMINO = "ARNDCQEGHILKMFPSTWYV"

#: (reward, penalty) in lowest terms -> {(a, b): (lambda, K, H)}
DNA_TABLES: dict[tuple[int, int], dict[tuple[int, int], tuple[float, float, float]]] = {
    (1, -5): {(3, 3): (1.39, 0.747, 1.38)},
    (1, -4): {
        (1, 2): (1.36, 0.67, 1.2), (0, 2): (1.26, 0.43, 0.90),
        (2, 1): (1.35, 0.61, 1.1), (1, 1): (1.22, 0.35, 0.72),
    },
    (2, -7): {
        (2, 4): (0.68, 0.67, 1.2), (0, 4): (0.63, 0.43, 0.90),
        (4, 2): (0.675, 0.62, 1.1), (2, 2): (0.61, 0.35, 0.72),
    },
    (1, -3): {
        (2, 2): (1.37, 0.70, 1.2), (1, 2): (1.35, 0.64, 1.1), (0, 2): (1.25, 0.42, 0.83),
        (2, 1): (1.34, 0.60, 1.1), (1, 1): (1.21, 0.34, 0.71),
    },
    (2, -5): {
        (2, 4): (0.67, 0.59, 1.1), (0, 4): (0.62, 0.39, 0.78),
        (4, 2): (0.67, 0.61, 1.0), (2, 2): (0.56, 0.32, 0.59),
    },
    (1, -2): {
        (2, 2): (1.33, 0.62, 1.1), (1, 2): (1.30, 0.52, 0.93), (0, 2): (1.19, 0.34, 0.66),
        (3, 1): (1.32, 0.57, 1.0), (2, 1): (1.29, 0.49, 0.92), (1, 1): (1.14, 0.26, 0.52),
    },
    (2, -3): {
        (4, 4): (0.63, 0.42, 0.84), (2, 4): (0.615, 0.37, 0.72), (0, 4): (0.55, 0.21, 0.46),
        (3, 3): (0.615, 0.37, 0.68), (6, 2): (0.63, 0.42, 0.84), (5, 2): (0.625, 0.41, 0.78),
        (4, 2): (0.61, 0.35, 0.68), (2, 2): (0.515, 0.14, 0.33),
    },
    (3, -4): {
        (6, 3): (0.389, 0.25, 0.56), (5, 3): (0.375, 0.21, 0.47), (4, 3): (0.351, 0.14, 0.35),
        (6, 2): (0.362, 0.16, 0.45), (5, 2): (0.330, 0.092, 0.28), (4, 2): (0.281, 0.046, 0.16),
    },
    (4, -5): {
        (6, 5): (0.28, 0.21, 0.47), (5, 5): (0.27, 0.17, 0.39),
        (4, 5): (0.25, 0.10, 0.31), (3, 5): (0.23, 0.065, 0.25),
    },
    (1, -1): {
        (3, 2): (1.09, 0.31, 0.55), (2, 2): (1.07, 0.27, 0.49), (1, 2): (1.02, 0.21, 0.36),
        (0, 2): (0.80, 0.064, 0.17), (4, 1): (1.08, 0.28, 0.54), (3, 1): (1.06, 0.25, 0.46),
        (2, 1): (0.99, 0.17, 0.30),
    },
    (3, -2): {(5, 5): (0.208, 0.030, 0.072)},
    (5, -4): {(10, 6): (0.163, 0.068, 0.16), (8, 6): (0.146, 0.039, 0.11)},
}

#: reduced pairs whose parameters hold for even scores only (BLAST's ``round_down``)
ROUND_DOWN = {(2, -7), (2, -5), (2, -3), (3, -4)}


@dataclass(frozen=True)
class KarlinAltschul:
    """Gapped Karlin-Altschul parameters of one scoring scheme (local alignment)."""

    lambda_: float
    K: float
    H: float | None = None
    #: BLAST's rule for some DNA pairs (2/-3, 2/-5, 2/-7, 3/-4 and their multiples): their
    #: parameters hold for even scores, so an odd score counts as the even one below it in the
    #: E-value (not in the bit score, as BLAST does)
    round_down: bool = False

    def bitscore(self, score: int) -> float:
        """``(lambda*S - ln K) / ln 2``."""
        return (self.lambda_ * score - math.log(self.K)) / math.log(2)

    def floor(self, evalue: float, query_length: int, database_residues: int) -> int | None:
        """The smallest score whose E-value is at most ``evalue``; None where nothing is cut
        (an infinite cutoff, an empty query or database)."""
        m, n = query_length, database_residues
        if m == 0 or n == 0 or math.isinf(evalue):
            return None
        s = math.floor((math.log(self.K * m * n) - math.log(evalue)) / self.lambda_) - 2
        while self.evalue(s, m, n) > evalue:
            s += 1
        return s

    def evalue(self, score: int, query_length: int, database_residues: int) -> float:
        """``K * m * n * exp(-lambda*S)``: m the query length, n the database's residues."""
        if self.round_down:
            score &= ~1
        return self.K * query_length * database_residues * math.exp(-self.lambda_ * score)


def _blast_gaps(scoring: Scoring) -> tuple[int, int]:
    return scoring.gap_open - scoring.gap_extend, scoring.gap_extend


def _dna_table(scoring: Scoring) -> tuple[int, dict[tuple[int, int], tuple[float, float, float]]]:
    """(divisor, table scaled to the pair) for a DNA scoring: BLAST divides the pair by its
    gcd, multiplies the table's gap costs by it and divides lambda by it."""
    reward, penalty = scoring.match, scoring.mismatch
    divisor = math.gcd(reward, penalty)
    if reward <= 0 or penalty >= 0:
        return divisor, {}
    table = DNA_TABLES.get((reward // divisor, penalty // divisor), {})
    return divisor, {(a * divisor, b * divisor): row for (a, b), row in table.items()}


def _is_ncbi_matrix(scoring: Scoring) -> bool:
    """True when the scoring's matrix has the self-scores of NCBI's matrix of that name."""
    expected = NCBI_DIAGONALS.get(scoring.matrix or "")
    if expected is None or any(a not in scoring.alphabet for a in _AMINO):
        return False
    codes = [scoring.alphabet.index(a) for a in _AMINO]
    return tuple(int(scoring.table[c, c]) for c in codes) == expected


def _supported(scoring: Scoring) -> list[tuple[int, int]]:
    """The wavedp (gap_open, gap_extend) pairs with a table row, for this scoring's scores."""
    if scoring.is_dna:
        rows = _dna_table(scoring)[1]
    else:
        rows = PROTEIN_TABLES.get(scoring.matrix or "", {})
    return sorted(((a + b, b) for a, b in rows), key=lambda g: (-g[1], -g[0]))


def parameters(scoring: Scoring) -> KarlinAltschul | None:
    """The gapped parameters for a scoring, or None where BLAST publishes no table row."""
    a, b = _blast_gaps(scoring)
    if scoring.is_dna:
        divisor, rows = _dna_table(scoring)
        row = rows.get((a, b))
        if row is None:
            return None
        lam, k, h = row
        reduced = (scoring.match // divisor, scoring.mismatch // divisor)
        return KarlinAltschul(lam / divisor, k, h, round_down=reduced in ROUND_DOWN)
    row = PROTEIN_TABLES.get(scoring.matrix or "", {}).get((a, b))
    return None if row is None or not _is_ncbi_matrix(scoring) else KarlinAltschul(*row)


def describe(scoring: Scoring) -> str:
    """A short name for a scoring: ``"BLOSUM62, gap open 12, extend 1"``."""
    if scoring.is_dna:
        scores = f"match {scoring.match}, mismatch {scoring.mismatch}"
    else:
        scores = str(scoring.matrix)
    return f"{scores}, gap open {scoring.gap_open}, extend {scoring.gap_extend}"


def require(scoring: Scoring, mode: str = "local") -> KarlinAltschul:
    """The parameters for a scoring in a mode; InputError (one line) where none exist."""
    if mode != "local":
        raise InputError(f"no E-value statistics in {mode} mode ({describe(scoring)}): "
                         "bit scores and E-values exist for local alignment only")
    stats = parameters(scoring)
    if stats is not None:
        return stats
    if not scoring.is_dna and scoring.matrix in PROTEIN_TABLES and not _is_ncbi_matrix(scoring):
        raise InputError(f"no E-value statistics for {describe(scoring)} (local mode): BLAST's "
                         f"tables are for NCBI's {scoring.matrix}, whose scores differ from "
                         "this matrix's")
    gaps = _supported(scoring)
    what = (f"match {scoring.match}/mismatch {scoring.mismatch}" if scoring.is_dna
            else str(scoring.matrix))
    if gaps:
        known = ", ".join(f"{o}/{e}" for o, e in gaps)
        hint = (f"known gap costs (open/extend, where BLAST's -gapopen a -gapextend b is "
                f"(a+b)/b) for {what} are {known}")
    elif scoring.is_dna:
        pairs = ", ".join(f"{r}/{p}" for r, p in DNA_TABLES)
        hint = f"tables exist for match/mismatch {pairs} and their multiples"
    else:
        hint = f"tables exist for {', '.join(PROTEIN_TABLES)}"
    raise InputError(f"no E-value statistics for {describe(scoring)} (local mode): {hint}")
