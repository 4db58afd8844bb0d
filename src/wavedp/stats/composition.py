"""Composition-based statistics for protein searches: the score stays exact, its E-value
accounts for the residue composition of the pair.

Two corrections, both on the statistics only (the reported score is always the exact optimum
under the user's matrix):

1. **A lambda per pair** (Schaffer et al. 2001, Nucleic Acids Res 29:2994; BLAST's
   ``-comp_based_stats 1``). For residue frequencies p (query) and q (subject) the ungapped
   lambda of the matrix is the positive root of ``sum_ab p_a q_b exp(lambda s_ab) = 1``; the
   score counts as ``S * lambda_pair / lambda_background`` (the *effective* score,
   :func:`effective_scores`), the ratio clipped to [0.5, 1] as Schaffer et al. do. A pair
   sharing a compositional bias scores higher by chance, has a smaller lambda, and its
   effective score shrinks. Per pair, one compiled pass mixes the subject's letter
   frequencies into the pair's score distribution and finds the root by a bracketed Newton
   iteration (:func:`solve_lambda`), about a microsecond per pair.
2. **The alignment rescored under the pair's adjusted matrix** (Yu and Altschul 2005,
   Bioinformatics 21:902; Altschul et al. 2005, FEBS J 272:5101; BLAST's
   ``-comp_based_stats 2`` realigns with that matrix). The adjusted matrix has the target
   frequencies closest to the matrix's own whose margins are the pair's compositions
   (:meth:`Composition.adjusted_matrices`); rescoring the reported alignment's aligned
   letter pairs (:func:`pair_counts`, :meth:`Composition.adjusted_scores`) catches a biased
   region the whole-sequence composition dilutes. It needs the alignment, so it applies to
   the hits a search reports (which it aligns anyway), at about 70 microseconds per hit.
   :meth:`Composition.combined` takes the smaller of the two scores.

Subject compositions come from the database's residues (:func:`counts`, one ``bincount``
per chunk); frequencies get 20 pseudo-residues of background (:meth:`Composition.frequencies`).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..alignment import column_positions
from ..errors import InputError
from ..scoring import Scoring
from .karlin_altschul import KarlinAltschul

#: Robinson and Robinson (1991, PNAS 88:8880) amino-acid frequencies, BLAST's standard
#: background (the composition its BLOSUM and PAM statistics assume), in percent
ROBINSON_PERCENT: dict[str, float] = {
    "A": 7.805, "R": 5.129, "N": 4.487, "D": 5.364, "C": 1.925, "Q": 4.264, "E": 6.295,
    "G": 7.377, "H": 2.199, "I": 5.142, "L": 9.019, "K": 5.744, "M": 2.243, "F": 3.856,
    "P": 5.203, "S": 7.120, "T": 5.841, "W": 1.330, "Y": 3.216, "V": 6.441,
}

#: pseudo-residues of background added to every composition (a short sequence's observed
#: frequencies are noisy; 20 is a 20-residue prior, as BLAST's composition adjustment uses)
PSEUDOCOUNTS = 20.0
#: an alignment rescored under its adjusted matrix (:meth:`Composition.adjusted_scores`) loses
#: score even between unrelated sequences of ordinary composition (the path was chosen for
#: its score under the original matrix): about 1 bit on average, 2.7 bits at the 90th
#: percentile (BLOSUM62, gaps 11/1, random proteins). :meth:`Composition.combined` allows
#: ALLOWANCE_BITS of it before the rescoring counts; compositionally biased unrelated pairs
#: lose 10 to 60 bits
ALLOWANCE_BITS = 2.0
#: the lambda ratio is clipped to [LOW, HIGH]: Schaffer et al. only ever raise E-values
#: (HIGH = 1, their conservative choice) and bound the correction (LOW = 0.5)
LOW, HIGH = 0.5, 1.0

NO_LAMBDA = ("composition-based statistics need a matrix with a negative expected score and "
             "some positive score on the background")


def kernels():
    """``composition_kernels.py``, imported on first use (it imports Numba: 0.2 s of every
    command's start-up otherwise)."""
    from . import composition_kernels

    return composition_kernels


def background(scoring: Scoring) -> np.ndarray:
    """Background frequencies over ``scoring.alphabet`` (float64, summing to 1): Robinson and
    Robinson's for a protein matrix, uniform A/C/G/T for DNA; 0 for every other letter (X, B,
    Z, *, N), which compositions then leave out."""
    if scoring.is_dna:
        freq = np.array([1.0 if a in "ACGT" else 0.0 for a in scoring.alphabet])
    else:
        freq = np.array([ROBINSON_PERCENT.get(a, 0.0) for a in scoring.alphabet])
        missing = [a for a in ROBINSON_PERCENT if a not in scoring.alphabet]
        if missing:
            raise InputError(f"composition-based statistics need the 20 amino acids; the "
                             f"{scoring.matrix} matrix lacks {', '.join(missing)}")
    return freq / freq.sum()


def counts(residues: np.ndarray, offsets: np.ndarray, size: int,
           lut: np.ndarray | None = None, index: np.ndarray | None = None) -> np.ndarray:
    """Per-sequence residue counts, an int32 array (sequences x ``size``): sequence k is
    ``residues[offsets[k]:offsets[k+1]]`` (a database's arrays, memory-mapped or not), codes
    translated by ``lut`` first where given (``Database.codes_for``); ``index``: only
    these sequences, one row each, in this order (default: all). Codes >= ``size`` are left
    out. Compiled: reads each counted residue once."""
    offsets = np.asarray(offsets, dtype=np.int64)
    if index is None:
        index = np.arange(max(offsets.size - 1, 0), dtype=np.int64)
    index = np.ascontiguousarray(index, dtype=np.int64)
    table = np.arange(256, dtype=np.uint8) if lut is None else \
        np.ascontiguousarray(lut, dtype=np.uint8)
    out = np.zeros((index.size, size), dtype=np.int32)
    kernels().count(residues, offsets, index, table, size, out)
    return out


def letter_distribution(sub: np.ndarray, query_freq: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(scores v, M): ``M[b, k]`` is the probability that a residue of the query
    (frequencies ``query_freq``) aligned with the letter b scores ``v[k]`` under ``sub``. An
    integer table's v is every integer from its lowest score to its highest."""
    sub = np.asarray(sub)
    values = np.unique(sub)
    if np.issubdtype(sub.dtype, np.integer) and values[-1] - values[0] < 4096:
        values = np.arange(values[0], values[-1] + 1)  # every integer between: no gaps
    onehot = (sub[:, :, None] == values[None, None, :]).astype(np.float64)  # a, b, k
    mix = np.einsum("a,abk->bk", np.asarray(query_freq, np.float64), onehot)
    return values.astype(np.float64), mix


def solve_lambda(values: np.ndarray, weights: np.ndarray, start: float | None = None,
                 tol: float = 1e-9, max_iter: int = 200, mix: np.ndarray | None = None
                 ) -> np.ndarray:
    """The positive root lambda of ``f(lambda) = sum_k W[j, k] exp(lambda v[k]) - 1`` for
    every row j of ``weights`` (``values`` v: distinct, ascending); with ``mix`` (M, as
    :func:`letter_distribution` gives it), ``weights`` are letter frequencies and ``W =
    weights @ M``, row by row inside the kernel (no BLAS call, whose threads contend when
    several queries are solved at once).

    f is convex with a root at 0; a positive root exists when the expected score is negative
    and some positive score has weight. Rows without one get NaN (expected score >= 0) or
    +inf (no positive score). Newton's method from ``start`` (a guess, e.g. the background's
    lambda): a first step from the left of the root lands on its right (f lies above its
    tangents), from where Newton descends monotonically; every step is kept inside a bracket
    [lo, hi] with f(lo) < 0 < f(hi), and bisected where it would leave it. Compiled, one
    row at a time (:func:`composition_kernels.roots`); integer scores take
    ``exp(lambda v)`` as powers of ``exp(lambda)``.
    """
    w = np.ascontiguousarray(np.atleast_2d(np.asarray(weights, dtype=np.float64)))
    v = np.asarray(values, dtype=np.float64)
    if np.any(np.diff(v) <= 0):
        raise ValueError("values must be distinct and ascending")
    m = np.eye(v.size) if mix is None else np.asarray(mix, dtype=np.float64)
    integral = bool(v.size) and bool(np.all(v == np.round(v))) and v[-1] - v[0] < 4096
    if integral and v[-1] - v[0] + 1 != v.size:  # the scores on the whole range v[0]..v[-1]
        grid = np.zeros((m.shape[0], int(v[-1] - v[0]) + 1))
        grid[:, (v - v[0]).astype(np.int64)] = m
        m, v = grid, np.arange(v[0], v[-1] + 1.0)
    return kernels().roots(v, w, np.ascontiguousarray(m),
                            math.nan if start is None else float(start), float(tol),
                            int(max_iter), integral)


def ungapped_lambda(sub: np.ndarray, query_freq: np.ndarray, subject_freqs: np.ndarray,
                    start: float | None = None) -> np.ndarray:
    """The ungapped lambda of ``sub`` for each pair (the query's frequencies, each row of
    ``subject_freqs``): the positive root of ``sum_ab p_a q_b exp(lambda s_ab) = 1``
    (Newton from ``start``, see :func:`solve_lambda`)."""
    values, mix = letter_distribution(sub, query_freq)
    return solve_lambda(values, np.atleast_2d(subject_freqs), start=start, mix=mix)


@dataclass(frozen=True)
class Composition:
    """What composition-based statistics need of one scoring: its substitution table and
    background frequencies on the letters that count (those with a background frequency),
    the background's ungapped lambda and the ratio's clip (the pseudocounts and allowance:
    PSEUDOCOUNTS and ALLOWANCE_BITS).

    ``Composition.of(scoring)`` builds it once per search; ``ratios`` is the per-pair work.
    """

    letters: np.ndarray  # codes of the letters that count (the 20 amino acids)
    sub: np.ndarray  # the table on those letters
    background: np.ndarray  # their background frequencies
    low: float = LOW
    high: float = HIGH

    @classmethod
    def of(cls, scoring: Scoring, low: float = LOW, high: float = HIGH) -> Composition:
        """The composition statistics of ``scoring`` (InputError where the background has no
        positive lambda, i.e. the matrix's expected score is not negative)."""
        if not 0 < low <= high:
            raise InputError(f"the lambda ratio's bounds must satisfy 0 < low <= high, got "
                             f"{low}, {high}")
        bg = background(scoring)
        letters = np.flatnonzero(bg > 0)
        sub = np.asarray(scoring.table, dtype=np.int64)[np.ix_(letters, letters)]
        bg = bg[letters]
        # a positive root exists exactly where the expected score is negative and some
        # score positive (see solve_lambda); the root itself is found on first use
        if not (bg @ sub @ bg < 0 and sub.max() > 0):
            raise InputError(NO_LAMBDA)
        return cls(letters, sub, bg, float(low), float(high))

    @functools.cached_property
    def lambda_background(self) -> float:
        """The background's ungapped lambda, found on first use (by the compiled root
        finder: a search checks its options without waiting for Numba to load, and the
        fits that first need it run while the GPU scans)."""
        bg = self.background
        lam = float(ungapped_lambda(self.sub, bg, bg[None, :])[0])
        if not np.isfinite(lam):  # an expected score within rounding of 0
            raise InputError(NO_LAMBDA)
        return lam

    @functools.cached_property
    def targets(self) -> np.ndarray:
        """The matrix's implied target frequencies ``b_a b_b exp(lambda s_ab)``, scaled to
        the background's margins: what :meth:`adjusted_matrices` starts from."""
        bg = self.background
        targets = np.outer(bg, bg) * np.exp(self.lambda_background * self.sub)
        return scale_margins(targets / targets.sum(), bg[None, :], bg[None, :])[0]

    @property
    def size(self) -> int:
        """The number of codes of the scoring's alphabet that counts are taken over."""
        return int(self.letters.max()) + 1

    #: whether a hit is also rescored under its pair's adjusted matrix (:meth:`combined`)
    rescores = True

    def query_frequencies(self, codes: np.ndarray) -> np.ndarray:
        """What :meth:`ratios_of` takes of a query: its residue frequencies."""
        return self.frequencies(query_counts(codes, self.size))

    def frequencies(self, counts: np.ndarray) -> np.ndarray:
        """Frequencies over the letters that count (columns ``letters`` of ``counts``), mixed
        with PSEUDOCOUNTS residues of the background."""
        c = np.asarray(counts)[..., self.letters].astype(np.float64)
        total = c.sum(axis=-1, keepdims=True) + PSEUDOCOUNTS
        c += PSEUDOCOUNTS * self.background
        c /= total
        return c

    def ratios(self, query_counts: np.ndarray, subject_counts: np.ndarray) -> np.ndarray:
        """``lambda_pair / lambda_background`` for the query against each subject (rows of
        residue counts), clipped to [low, high]; a pair with no positive root (its expected
        score is not negative) gets ``low``, one without a positive score ``high``."""
        return self.ratios_of(self.frequencies(query_counts),
                              self.frequencies(np.atleast_2d(subject_counts)))

    def ratios_of(self, query_freq: np.ndarray, subject_freqs: np.ndarray) -> np.ndarray:
        """:meth:`ratios` from frequencies (:meth:`frequencies`): a search computes the
        database's once and reuses them for every query."""
        lam = ungapped_lambda(self.sub, query_freq, subject_freqs, self.lambda_background)
        ratio = lam / self.lambda_background
        return np.clip(np.where(np.isnan(ratio), self.low, ratio), self.low, self.high)

    def adjusted_matrices(self, query_freq: np.ndarray, subject_freqs: np.ndarray
                          ) -> np.ndarray:
        """The compositionally adjusted matrix of the query against each subject, (pairs x
        20 x 20) real scores in the matrix's own units, on the letters that count.

        Yu and Altschul (2005): the target frequencies Q closest to the matrix's own (in
        relative entropy) whose margins are the pair's compositions, ``s'_ab = ln(Q_ab /
        (p_a q_b)) / lambda``. The closest Q under margin constraints is the matrix's
        targets with rows and columns rescaled (iterative proportional fitting). By
        construction ``sum_ab p_a q_b exp(lambda s'_ab) = 1``: the adjusted matrix has the
        background's lambda for this pair's composition, so the gapped tables (and a fit
        in those units) apply to scores under it."""
        q = np.atleast_2d(subject_freqs)
        p = np.broadcast_to(np.asarray(query_freq, dtype=np.float64), q.shape)
        t = scale_margins(self.targets, p, q)
        return np.log(t / (p[:, :, None] * q[:, None, :])) / self.lambda_background

    def adjusted_scores(self, scores: np.ndarray, pair_counts: np.ndarray,
                        query_freq: np.ndarray, subject_freqs: np.ndarray) -> np.ndarray:
        """Each alignment's score rescored under its pair's adjusted matrix: ``S +
        sum_ab N_ab (s'_ab - s0_ab)``, ``N`` the aligned letter pairs of the alignment
        (:func:`pair_counts`, pairs x size x size; letters that do not count keep their
        score), ``s0`` the adjusted matrix of the background composition (so that a pair of
        background composition keeps its score exactly; s0 differs from the integer matrix
        by its rounding), the gaps costed as before. The alignment is the exact optimum's; only its
        statistics change (an adjusted matrix might align the pair differently, as BLAST's
        ``-comp_based_stats 2`` does, with a score at least this one)."""
        counts = np.asarray(pair_counts, dtype=np.float64)
        counts = counts.reshape(-1, *counts.shape[-2:])[:, self.letters][:, :, self.letters]
        base = np.log(self.targets / np.outer(self.background, self.background))
        delta = self.adjusted_matrices(query_freq, subject_freqs) \
            - base[None] / self.lambda_background
        return np.asarray(scores, dtype=np.float64) + np.einsum("kab,kab->k", counts, delta)

    @property
    def allowance(self) -> float:
        """ALLOWANCE_BITS in the matrix's score units."""
        return ALLOWANCE_BITS * math.log(2.0) / self.lambda_background

    def combined(self, effective: np.ndarray, adjusted: np.ndarray) -> np.ndarray:
        """The score a hit's statistics use: ``min(S * ratio, S' + allowance)``, S' its
        alignment rescored under the pair's adjusted matrix (:meth:`adjusted_scores`). The
        composition of the whole sequences scales every score; the rescoring catches the
        biased alignments whose letters the whole-sequence composition dilutes (the
        coiled-coil arms of an SMC protein against an E/K-rich sequence)."""
        return np.minimum(np.asarray(effective, dtype=np.float64),
                          np.asarray(adjusted, dtype=np.float64) + self.allowance)


@dataclass(frozen=True)
class ProfileComposition(Composition):
    """Composition-based statistics for profiles: each hit also rescored under its
    profile rows adjusted to the subject's composition (:meth:`rescored`, the analog of Yu
    and Altschul's rescoring of a matrix; a hit's statistics take the smaller of its score
    and the rescored one plus the allowance). ``table``: the profiles' rows on the 20
    letters (a query's codes index them)."""

    table: np.ndarray = field(default_factory=lambda: np.zeros((0, 20), np.int64))
    rescores = False

    @classmethod
    def of_table(cls, scoring: Scoring, table: np.ndarray) -> ProfileComposition:
        """The statistics of profiles whose table (rows: their positions) is ``table``."""
        base = Composition.of(scoring)
        return cls(base.letters, base.sub, base.background, base.low, base.high,
                   np.asarray(table, dtype=np.int64)[:, base.letters])

    def query_frequencies(self, codes: np.ndarray) -> np.ndarray:
        """A profile query's rows of the table (its codes)."""
        return np.asarray(codes, dtype=np.int64)

    def ratios_of(self, query_freq: np.ndarray, subject_freqs: np.ndarray) -> np.ndarray:
        """1 for every subject: a profile's scores are not scaled by the lambda ratio of
        its rows against the subject (PSI-BLAST's mode for PSSMs). Measured on the Pfam
        benchmark with the rescoring below, the ratio changed nothing but for the worse
        (3 rounds: 1.725 false hits a query at E <= 0.01 with it, 1.675 without)."""
        return np.ones(np.atleast_2d(subject_freqs).shape[0])

    def rescored(self, score: float, rows: np.ndarray, hit, subject: np.ndarray,
                 subject_freq: np.ndarray) -> float:
        """A hit's score under its profile rows adjusted to the subject's composition (Yu
        and Altschul's rescoring, for a profile): the implied residue probabilities
        ``p_b exp(lambda s_ib)`` of the rows the hit spans rescaled (iterative proportional
        fitting) until they average to the subject's frequencies ``subject_freq``, each
        aligned pair (row i, letter b) then scoring ``ln(Q'_ib / q_b) / lambda`` instead of
        ``ln(Q_ib / p_b) / lambda``, the rows as the profile gives them (their own
        composition, the query's bias, stays in them: a biased query against a subject of
        background composition is adjusted too, as Yu and Altschul adjust a biased query's
        matrix). ``rows``: the query's codes (its profile's rows); ``hit``: its Alignment;
        ``subject``: the subject's codes. Measured on the Pfam benchmark, rows adjusted to
        the background as the baseline instead cancel the adjustment (3 rounds: 6.45 false
        hits a query at E <= 0.01 against 1.675)."""
        i, b = self.aligned(hit, subject)
        if not i.size:
            return float(score)
        table = self.table[np.asarray(rows, dtype=np.int64)[hit.query_start:hit.query_end]]
        return float(score) + kernels().profile_shift(
            table.astype(np.float64), self.background, float(self.lambda_background),
            np.asarray(subject_freq, dtype=np.float64), i, b, 100, 1e-6)

    def aligned(self, hit, subject: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The hit's aligned pairs (``=``, ``X``): each one's row within the hit's query
        span and its subject letter's index among the 20 (pairs of other letters left
        out)."""
        runs = hit.ops()
        ops = np.repeat(np.frombuffer("".join(op for _, op in runs).encode(), np.uint8),
                        [n for n, _ in runs])
        pair = np.isin(ops, list(b"=XM"))
        i, t = (p[pair] for p in column_positions(ops, 0, hit.target_start))
        index = np.full(256, -1, np.int64)
        index[self.letters] = np.arange(self.letters.size)
        b = index[np.asarray(subject)[t]]
        keep = b >= 0
        return i[keep], b[keep]


def scale_margins(targets: np.ndarray, row: np.ndarray, column: np.ndarray,
                  tol: float = 1e-10, max_iter: int = 1000) -> np.ndarray:
    """``targets`` (A x A, positive) with rows and columns rescaled until its margins are
    ``row[k]`` and ``column[k]`` (one matrix per k; iterative proportional fitting, whose
    limit is the matrix of those margins closest to ``targets`` in relative entropy). Each
    matrix stops on its own once its row margins are within ``tol`` (compiled, pair by pair:
    a result does not depend on the others fitted with it)."""
    row = np.atleast_2d(np.asarray(row, dtype=np.float64))
    column = np.atleast_2d(np.asarray(column, dtype=np.float64))
    row, column = np.broadcast_arrays(row, column)
    out = np.empty((row.shape[0], *targets.shape))
    kernels().scale(*(_plain(a) for a in (targets, row, column)), float(tol), int(max_iter),
                    out)
    return out


def _plain(a: np.ndarray) -> np.ndarray:
    """``a`` as a contiguous, writable float64 array (a broadcast view is read-only: a
    kernel compiles once more for read-only arguments)."""
    return np.require(a, np.float64, ["C", "W"])


_CIGAR = re.compile(r"(\d+)([=XIDM])")
#: CIGAR operations: 1 aligned pair (=, X, M), 2 query only (I), 3 target only (D)
_KINDS = {"=": 1, "X": 1, "M": 1, "I": 2, "D": 3}


def pair_counts(query_codes: np.ndarray, target_codes: np.ndarray, cigar: str,
                query_start: int, target_start: int, size: int) -> np.ndarray:
    """The aligned letter pairs of one alignment (``=`` and ``X`` columns of its CIGAR, from
    ``query_start`` and ``target_start``): a size x size count matrix, query letter first."""
    ops = _CIGAR.findall(cigar)
    lengths = np.array([int(n) for n, _ in ops], dtype=np.int64)
    kinds = np.array([_KINDS[op] for _, op in ops], dtype=np.int8)
    out = np.zeros((size, size), dtype=np.int64)
    kernels().pairs(np.asarray(query_codes), np.asarray(target_codes), lengths, kinds,
           int(query_start), int(target_start), out)
    return out


def query_counts(codes: np.ndarray, size: int) -> np.ndarray:
    """One encoded sequence's residue counts over an alphabet of ``size`` codes."""
    codes = np.asarray(codes)
    return np.bincount(codes[codes < size], minlength=size)[:size]


def effective_scores(scores: np.ndarray, ratios: np.ndarray) -> np.ndarray:
    """``S * lambda_pair / lambda_background``: each score in the units of the background's
    lambda, so that one set of statistics (a table's, or an empirical fit's) applies to all
    pairs. The reported score stays ``S``."""
    return np.asarray(scores, dtype=np.float64) * np.asarray(ratios, dtype=np.float64)


def evalues(scores: np.ndarray, query_codes: np.ndarray, subject_counts: np.ndarray,
            composition: Composition, stats: KarlinAltschul, database_residues: int
            ) -> np.ndarray:
    """E-values of ``scores`` (the query against the subjects whose residue counts are the
    rows of ``subject_counts``) with the table's gapped lambda scaled per pair:
    ``K m n exp(-lambda * ratio * S)``, m the query's length, n ``database_residues``.

    BLAST's ``-comp_based_stats 1`` without its effective lengths (wavedp's table E-values
    make no length adjustment either)."""
    ratio = composition.ratios(query_counts(query_codes, composition.size), subject_counts)
    eff = effective_scores(scores, ratio)
    m = int(np.asarray(query_codes).size)
    return stats.K * m * float(database_residues) * np.exp(-stats.lambda_ * eff)
