"""One search's options, checked once (:class:`Options`), and what its stages run on
(:class:`Context`): both travel through the search as single objects."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..api import check_flag
from ..errors import InputError
from ..scoring import Scoring
from ..stats import karlin_altschul as statistics
from ..stats import masking
from ..stats.significance import DEFAULT_STATS, Method
from .strands import strands
from .waterman_eggert import check_fraction, check_limit

if TYPE_CHECKING:
    from ..db.database import Database
    from ..device import Device
    from ..engines.protocol import Scanner
    from ..trace import Trace


class _DefaultEvalue(float):
    """The default E-value cutoff: applied where statistics exist, silently skipped where
    they do not (an E-value the caller chose is an error there)."""

    def __repr__(self) -> str:
        return "10.0"


DEFAULT_EVALUE = _DefaultEvalue(10.0)

#: the fraction of ``max_hsps`` alone: a pair's next alignment is kept at any positive score
ANY_SCORE = 1e-12


@dataclass(frozen=True)
class Options:
    """One search's options, checked: the cutoffs, the statistics, the strands, masking."""

    top: int
    evalue: float | None
    min_score: int | None
    method: Method
    traceback: bool
    fraction: float | None
    strands: tuple[int, ...]
    mask: bool = False
    max_hsps: int | None = None  # alignments a pair at most (fraction then set)

    @classmethod
    def of(cls, scoring: Scoring, mode: str, *, top: int, evalue: float | None,
           min_score: int | None, traceback: bool, strand: str, fraction: float | None,
           stats: str = DEFAULT_STATS, mask: bool = False, max_hsps: int | None = None,
           profile: bool = False) -> Options:
        """The options of a search in ``mode`` under ``scoring``, each checked (an
        InputError names the first that is wrong). ``max_hsps`` without ``fraction``: a
        pair's alignments of any positive score (``fraction`` ANY_SCORE). ``profile``: the
        queries are profiles (fitted statistics alone; no masking, one alignment a pair)."""
        top, evalue, min_score, method = _cutoffs(top, evalue, min_score, mode, scoring,
                                                  stats, profile)
        check_flag("traceback", traceback)
        check_flag("mask", mask)
        if profile:
            for name, value in (("mask", mask), ("fraction", fraction),
                                ("max_hsps", max_hsps)):
                if value not in (None, False):
                    raise InputError(f"{name} does not apply to a profile's search yet")
        max_hsps = check_limit(max_hsps, "max_hsps")
        if fraction is not None or max_hsps is not None:
            name = "fraction" if fraction is not None else "max_hsps"
            fraction = ANY_SCORE if fraction is None else check_fraction(fraction)
            if mode != "local":
                raise InputError(f"{name} applies to local mode only, not {mode}")
            if not traceback:
                raise InputError(f"{name} needs each hit's alignment to forbid its pairs: "
                                 "drop score-only")
        if mask:
            masking.require()
        return cls(top, evalue, min_score, method, bool(traceback), fraction,
                   strands(scoring.is_dna, strand), bool(mask), max_hsps)

    @property
    def stats(self) -> statistics.KarlinAltschul | None:
        """BLAST's table, where the statistics are BLAST's alone (``blast``)."""
        return self.method.table if self.method.name == "blast" else None


@dataclass(frozen=True)
class Context:
    """What a search's stages run on: the database and its code translation (``lut``), the
    scoring and mode, the device and its scanner, the query batches' DP cells, the trace."""

    db: Database
    lut: np.ndarray | None
    scoring: Scoring
    mode: str
    device: Device
    scanner: Scanner
    batch_cells: float
    trace: Trace
    table: np.ndarray | None = None  # the queries' profiles' table (their codes its rows)

    def subject(self, t: int) -> np.ndarray:
        """Database sequence ``t``'s codes in the scoring's alphabet (through ``lut``)."""
        codes = self.db.codes(t)
        return codes if self.lut is None else self.lut[codes]


def _cutoffs(top: int, evalue: float | None, min_score: int | None, mode: str,
             scoring: Scoring, stats: str, profile: bool = False
             ) -> tuple[int, float | None, int | None, Method]:
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 0:
        raise InputError(f"top must be a non-negative integer (0 = all), got {top!r}")
    if min_score is not None and (isinstance(min_score, bool)
                                  or not isinstance(min_score, (int, np.integer))):
        raise InputError(f"min_score must be an integer, got {min_score!r}")
    method = Method.of(stats, scoring, mode, profile)
    if isinstance(evalue, _DefaultEvalue):
        evalue = float(evalue) if method.exists else None
    elif evalue is not None:
        if isinstance(evalue, bool) or not isinstance(evalue, (int, float)) or \
                not evalue > 0 or math.isnan(evalue):
            raise InputError(f"evalue must be a positive number (or None), got {evalue!r}")
        if method.name == "none":
            raise InputError("stats 'none' gives no E-values: drop the E-value cutoff")
        if not method.exists:
            statistics.require(scoring, mode)  # says which tables exist
    return int(top), evalue, None if min_score is None else int(min_score), method
