"""A search's statistics (``--stats``): where its E-values and bit scores come from.

``fitted`` (the default): each query's own score distribution, fitted per query on a sample
of the database (``empirical``, Pearson 1998), with composition-based statistics for protein
local searches (``composition``: a lambda ratio per pair, Schaeffer et al. 2001, and each hit
rescored under its pair's adjusted matrix, Yu and Altschul 2005); where no fit is possible (a
database of fewer than ``empirical.MIN_SUBJECTS`` sequences) BLAST's tables, composition
adjusted, stand in. ``empirical``: the fit on the raw scores. ``composition``: BLAST's tables
with the composition adjustments (as ``blastp -comp_based_stats 2``). ``blast``: BLAST's
tables alone (``blastp -comp_based_stats 0``). ``none``: no statistics, hits by score.

Scores stay the exact optimum under the user's scoring; the statistics act on an effective
score (``S * ratio``, and a hit's rescored alignment) only. The benchmark that chose the
default is ``benchmarks/significance.py``.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..db.database import Database
from ..errors import InputError
from ..scoring import Scoring
from . import composition as comp_stats
from . import empirical
from . import karlin_altschul as statistics
from .composition import Composition
from .empirical import Fit

STATS = ("fitted", "empirical", "composition", "blast", "none")
DEFAULT_STATS = "fitted"
#: the database sequences (evenly spaced) whose scores fit each query's distribution
SAMPLE = empirical.SAMPLE


@dataclass(frozen=True)
class Method:
    """One search's statistics, checked against its scoring and mode: BLAST's ``table``
    (None where BLAST lists none), the ``composition`` adjustments (protein, local mode) and
    whether each query's distribution is ``fitted``."""

    name: str
    table: statistics.KarlinAltschul | None
    composition: Composition | None
    fitted: bool

    @classmethod
    def of(cls, name: str, scoring: Scoring, mode: str, profile: bool = False) -> Method:
        """The method ``name`` for ``scoring`` and ``mode`` (``profile``: the queries are
        profiles, whose scores no matrix's table or composition describes: fitted alone)."""
        if name not in STATS:
            raise InputError(f"stats must be one of {', '.join(STATS)}, got {name!r}")
        if name == "none":
            return cls(name, None, None, False)
        if profile:
            if name in ("blast", "composition"):
                raise InputError(f"stats {name!r} takes the matrix's own tables, which do not "
                                 "describe a profile's scores: use 'fitted' (the default), "
                                 "'empirical' or 'none'")
            return cls(name, None, None, True)
        table = statistics.parameters(scoring) if mode == "local" else None
        if name == "blast":
            return cls(name, table, None, False)
        protein_local = not scoring.is_dna and mode == "local"
        if name == "composition":
            if table is None or not protein_local:
                raise InputError(
                    "stats 'composition' adjusts BLAST's tables for protein local searches; "
                    f"{'this scoring has none' if protein_local else 'this search is not'} "
                    f"({statistics.describe(scoring)}): use 'fitted' or 'empirical'")
            return cls(name, table, Composition.of(scoring), False)
        found = None
        if name == "fitted" and protein_local:
            try:
                found = Composition.of(scoring)
            except InputError:  # a matrix without a background lambda: the fit alone
                found = None
        return cls(name, table, found, True)

    @property
    def reverse_null(self) -> bool:
        """Whether each hit's score is capped by the reverse-sequence null
        (``dbsearch/reverse.py``): the fitted method with composition (protein, local)."""
        return self.name == "fitted" and self.composition is not None

    @property
    def exists(self) -> bool:
        """Whether E-values may exist (an E-value cutoff is allowed)."""
        return self.fitted or self.table is not None


@dataclass
class Sample:
    """The database sequences each query's distribution is fitted on: ``index`` (at most
    SAMPLE non-empty ones, evenly spaced), their ``lengths`` and, with composition, their
    residue frequencies (:attr:`freqs`, counted on first use: by the fits, which run while
    the GPU scans, not before the scan, since the counting kernel loads Numba)."""

    index: np.ndarray
    lengths: np.ndarray
    #: how :attr:`freqs` are counted (None: no composition)
    counted: Callable[[], np.ndarray] | None = field(default=None, repr=False)
    #: the fit's layout of these lengths per mode (local and semiglobal)
    layouts: dict = field(default_factory=dict, repr=False)
    _freqs: list = field(default_factory=list, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def freqs(self) -> np.ndarray | None:
        """The sample's residue frequencies with pseudocounts (composition), else None."""
        if self.counted is None:
            return None
        with self._lock:  # the fits' threads ask at once: counted once
            if not self._freqs:
                self._freqs.append(self.counted())
            return self._freqs[0]

    def layout(self, mode: str, query_length: int) -> empirical.Layout:
        """The :class:`empirical.Layout` of the sample's lengths: built once per mode, except
        in global mode, whose pieces depend on the query's length (built per query there, not
        kept: a search of many queries would keep one per length)."""
        if mode == "global":
            return empirical.Layout.of(self.lengths, mode, query_length)
        found = self.layouts.get(mode)
        if found is None:
            found = self.layouts[mode] = empirical.Layout.of(self.lengths, mode, query_length)
        return found

    @classmethod
    def of(cls, db: Database, lut: np.ndarray | None, method: Method,
           size: int = SAMPLE) -> Sample:
        live = np.flatnonzero(np.asarray(db.lengths) > 0)
        if live.size > size:
            live = live[np.round(np.linspace(0, live.size - 1, size)).astype(np.int64)]
        counted = None
        if method.composition is not None:
            counted = functools.partial(subject_freqs, db, live, lut, method.composition)
        return cls(live, np.asarray(db.lengths)[live].astype(np.int64), counted)

    def residues(self, db: Database, lut: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """The sample's residues one after another (in the scoring's codes) and offsets."""
        return _gather(db, self.index, lut)


def _gather(db: Database, index: np.ndarray, lut: np.ndarray | None
            ) -> tuple[np.ndarray, np.ndarray]:
    """The residues of the sequences ``index`` one after another, in one gather (a loop
    over 10,000 sequences took 50-65 ms of a search's start), and their offsets."""
    index = np.asarray(index, dtype=np.int64)
    bounds = np.asarray(db.offsets)
    starts = bounds[index]
    sizes = bounds[index + 1] - starts
    offsets = np.zeros(index.size + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    where = np.arange(int(offsets[-1]), dtype=np.int64) + np.repeat(starts - offsets[:-1], sizes)
    codes = np.asarray(db.residues)[where]
    return (codes if lut is None else lut[codes]), offsets


def subject_freqs(db: Database, index: np.ndarray, lut: np.ndarray | None,
                  composition: Composition) -> np.ndarray:
    """The residue frequencies (with pseudocounts) of the database sequences ``index``."""
    return composition.frequencies(comp_stats.counts(
        db.residues, db.offsets, composition.size, lut, np.asarray(index)))


@dataclass
class QueryStats:
    """One query's (one strand's) statistics: its fit (or the reason there is none), its
    composition, and how scores turn into E-values and bit scores."""

    method: Method
    fit: Fit | None
    reason: str
    query_freq: np.ndarray | None
    m: int
    residues: int

    @classmethod
    def of(cls, method: Method, codes: np.ndarray, sample_scores: np.ndarray | None,
           sample: Sample | None, mode: str, count: int, residues: int) -> QueryStats:
        """``sample_scores``: the query's scores against ``sample`` (fitted methods);
        ``count``: the database sequences (times the strands searched) an E-value counts."""
        qf = None
        if method.composition is not None:
            c = method.composition
            qf = c.query_frequencies(codes)
        fit, reason = None, ""
        if method.fitted and sample is not None and sample_scores is not None:
            scores = np.asarray(sample_scores, dtype=np.float64)
            if qf is not None:
                scores = scores * method.composition.ratios_of(qf, sample.freqs)
            fit, reason = empirical.fit_or_reason(
                scores, sample.lengths, mode, query_length=int(codes.size), count=count,
                layout=sample.layout(mode, int(codes.size)))
        return cls(method, fit, reason, qf, int(codes.size), int(residues))

    @property
    def available(self) -> bool:
        """Whether this query's hits get E-values."""
        return self.fit is not None or self.method.table is not None

    def floor(self, evalue: float | None, lengths: np.ndarray) -> int | None:
        """The lowest raw score a hit with an E-value of at most ``evalue`` can have against
        a subject of any of ``lengths`` (the scan's threshold; the effective score is at most
        the raw one: the ratio is at most 1), or None."""
        if evalue is None or math.isinf(evalue) or not self.available or not lengths.size:
            return None
        if self.fit is not None:  # -inf where every score passes (evalue past the count)
            lowest = float(np.min(self.fit.threshold(evalue, lengths)))
            return None if math.isinf(lowest) else math.floor(lowest) - 1
        assert self.method.table is not None
        return self.method.table.floor(evalue, self.m, self.residues)

    def ratios(self, freqs: np.ndarray | None) -> np.ndarray | None:
        """The lambda ratios of this query against subjects of frequencies ``freqs``."""
        if self.query_freq is None or freqs is None:
            return None
        assert self.method.composition is not None
        return self.method.composition.ratios_of(self.query_freq, freqs)

    def values(self, effective: np.ndarray, lengths: np.ndarray,
               ratios: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
        """(E-values, bit scores) of effective scores against subjects of ``lengths``."""
        eff = np.asarray(effective, dtype=np.float64)
        if self.fit is not None:
            return self.fit.values(eff, lengths, 1.0 if ratios is None else ratios)
        table = self.method.table
        if table is None:
            return None
        if table.round_down and ratios is None:
            eff = np.floor(eff / 2) * 2
        e = table.K * float(self.m) * float(self.residues) * np.exp(-table.lambda_ * eff)
        bits = (table.lambda_ * np.asarray(effective, dtype=np.float64)
                - math.log(table.K)) / math.log(2)
        return e, bits
