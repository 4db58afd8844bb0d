"""What every engine shares: mode codes, the -inf sentinel, the value range, the traceback's
direction bytes, and the cutting of a sequence set into ranges by residues."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from ..errors import InputError
from ..threads import in_pieces

LOCAL = 0
GLOBAL = 1
SEMIGLOBAL = 2

MODES = {"local": LOCAL, "global": GLOBAL, "semiglobal": SEMIGLOBAL}
#: the GPU engine's pairwise strategies (``cuda/pairs.py``): the default and the lab's two
STRATEGIES = ("multipass", "diagonal", "tiled")

#: "minus infinity" for E and F on the boundaries; subtracting a penalty cannot underflow int32.
NEG = -(1 << 30)
#: every real score (any cell of H, E, F) must stay strictly inside +-SCORE_LIMIT.
SCORE_LIMIT = 1 << 29

# Traceback direction byte, one per cell (CPU and GPU engines share the encoding).
#   bits 0-1: source of H: 0 = local zero (stop), 1 = diagonal, 2 = E, 3 = F
#   bit 2: E[i][j] == H[i][j-1] - open  (E opens here: leave state E)
#   bit 3: F[i][j] == H[i-1][j] - open  (F opens here: leave state F)
DIR_ZERO, DIR_DIAG, DIR_E, DIR_F = 0, 1, 2, 3
E_OPEN = 4
F_OPEN = 8


def query_type(sub: np.ndarray) -> type:
    """The dtype of query codes for a table of ``sub``'s rows: uint8 for a substitution
    matrix, int32 for a profile's table (a row a query position, beyond 256 of them)."""
    return np.uint8 if sub.shape[0] <= 256 else np.int32


def own_rows(query: np.ndarray, sub: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(query, table) with the table cut to the rows the query's codes use, the codes
    shifted to them: a profile's positions among many profiles' tables (more than 256
    rows); a substitution matrix as it is."""
    if sub.shape[0] <= 256 or not query.size:
        return query, sub
    lo, hi = int(query.min()), int(query.max()) + 1
    own = np.ascontiguousarray(sub[lo:hi])
    return (np.asarray(query, np.int64) - lo).astype(query_type(own)), own


def rows_run(codes: np.ndarray) -> bool:
    """Whether a profile query's codes are consecutive rows of its table."""
    return codes.size == 0 or bool(np.all(np.diff(codes.astype(np.int64)) == 1))


def residue_ranges(offsets: np.ndarray, cap: int) -> Iterator[tuple[int, int]]:
    """Consecutive half-open sequence ranges ``(start, stop)`` covering every sequence of a
    set with these ``offsets`` (n + 1), in order, each of at most ``cap`` residues (a longer
    sequence is a range alone)."""
    n, start = len(offsets) - 1, 0
    while start < n:
        stop = int(np.searchsorted(offsets, int(offsets[start]) + int(cap), side="right")) - 1
        stop = min(max(stop, start + 1), n)
        yield start, stop
        start = stop


def shard_ranges(offsets: np.ndarray, parts: int) -> list[tuple[int, int]]:
    """Consecutive half-open sequence ranges ``(start, stop)`` covering every sequence, each
    non-empty and of about ``total / parts`` residues (``min(parts, n)`` ranges)."""
    if isinstance(parts, bool) or not isinstance(parts, (int, np.integer)) or parts < 1:
        raise InputError(f"parts must be a positive integer, got {parts!r}")
    n = len(offsets) - 1
    if n < 1:
        raise InputError("a database needs at least one sequence to shard (got none)")
    parts = min(int(parts), n)
    total = int(offsets[-1])
    bounds = [0]
    for j in range(1, parts):
        target = total * j // parts
        cut = int(np.searchsorted(offsets, target, side="left"))  # offsets[cut] >= target
        if cut > 0 and target - int(offsets[cut - 1]) < int(offsets[cut]) - target:
            cut -= 1
        bounds.append(min(max(cut, bounds[-1] + 1), n - (parts - j)))
    bounds.append(n)
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def empty_pair(m: int, n: int, mode: int, gap_open: int, gap_extend: int,
               traceback: bool) -> tuple:
    """The alignment of a pair where m or n is 0, as the engines return it (the boundary
    decides: global is one gap over the other, local and semiglobal align nothing):
    (score, query start, query end, target start, target end, ops or None; starts -1
    without traceback)."""
    glob = mode == GLOBAL
    k = m + n
    score = -(gap_open + (k - 1) * gap_extend) if glob and k else 0
    qe, te = (m, n) if glob else (0, 0)
    if not traceback:
        return score, -1, qe, -1, te, None
    ops = np.frombuffer((b"D" * n + b"I" * m) if glob else b"", np.uint8).copy()
    return score, 0, qe, 0, te, ops


class Columns(NamedTuple):
    """Per pair: score, query start, query end, target start, target end (int32; starts -1
    without traceback), and the CIGAR runs (uint32, BAM's encoding) with their offsets."""

    score: np.ndarray
    query_start: np.ndarray
    query_end: np.ndarray
    target_start: np.ndarray
    target_end: np.ndarray
    runs: np.ndarray | None
    run_offsets: np.ndarray | None

    @classmethod
    def merged(cls, count: int, parts: list[tuple[np.ndarray, Columns]],
               traceback: bool) -> Columns:
        """The columns of ``count`` pairs from ``parts`` (pair indices, their columns),
        which together cover every pair once."""
        if len(parts) == 1 and parts[0][0].size == count:  # one part, every pair in order
            return parts[0][1]
        fields = [np.empty(count, np.int32) for _ in range(5)]
        sizes = np.zeros(count, np.int64)
        for idx, part in parts:
            for field, values in zip(fields, part[:5], strict=True):
                field[idx] = values
            if traceback:
                sizes[idx] = np.diff(part.run_offsets)
        if not traceback:
            return cls(*fields, None, None)
        offsets = np.zeros(count + 1, np.int64)
        np.cumsum(sizes, out=offsets[1:])
        runs = np.empty(int(offsets[-1]), np.uint32)
        for idx, part in parts:
            own = np.diff(part.run_offsets)
            runs[np.repeat(offsets[idx] - part.run_offsets[:-1], own)
                 + np.arange(part.runs.size)] = part.runs
        return cls(*fields, runs, offsets)


class Sides(NamedTuple):
    """Pairs' sides (pair k is m[k] x n[k]: arrays, or one-to-one ``spans.Spans`` whose
    lengths are read only where asked for) and their extremes, taken once a call: the
    checks and plans that need only the extremes read them here, not the arrays."""

    m: np.ndarray
    n: np.ndarray
    m_min: int
    m_max: int
    n_min: int
    n_max: int

    @classmethod
    def of(cls, m: np.ndarray, n: np.ndarray,
           extremes: tuple[int, int, int, int] | None = None) -> Sides:
        """The sides ``m`` and ``n`` and their extremes (0 where there is no pair), taken
        here unless given (``extremes``: m's least and most, then n's)."""
        m, n = np.asarray(m), np.asarray(n)
        if not m.size:
            return cls(m, n, 0, 0, 0, 0)
        if extremes is not None:
            return cls(m, n, *(int(x) for x in extremes))
        parts = np.array(in_pieces(lambda a, b: (m[a:b].min(), m[a:b].max(), n[a:b].min(),
                                                 n[a:b].max()), m.size), np.int64)
        lo, hi = parts.min(axis=0), parts.max(axis=0)
        return cls(m, n, int(lo[0]), int(hi[1]), int(lo[2]), int(hi[3]))

    def arrays(self) -> Sides:
        """These sides with ``m`` and ``n`` as arrays (``spans.Spans`` read once)."""
        if isinstance(self.m, np.ndarray) and isinstance(self.n, np.ndarray):
            return self
        return self._replace(m=np.asarray(self.m), n=np.asarray(self.n))

    @property
    def uniform(self) -> bool:
        """Whether every pair has one shape."""
        return self.m_min == self.m_max and self.n_min == self.n_max

    def part(self, lo: int, hi: int) -> Sides:
        """Pairs lo:hi (one shape: no pass over them)."""
        if self.uniform:
            return self._replace(m=self.m[lo:hi], n=self.n[lo:hi])
        return Sides.of(self.m[lo:hi], self.n[lo:hi])

    def select(self, which: np.ndarray) -> Sides:
        """The pairs ``which`` (indices or a mask)."""
        return Sides.of(self.m[which], self.n[which])

    def exchanged(self) -> Sides:
        """The pairs with their sides exchanged (n x m; no pass over them)."""
        return Sides(self.n, self.m, self.n_min, self.n_max, self.m_min, self.m_max)


def empty_columns(m: np.ndarray, n: np.ndarray, mode: int, gap_open: int, gap_extend: int,
                  traceback: bool) -> Columns:
    """:func:`empty_pair` of many pairs (each m or n 0) as columns; a global pair's gap
    is one run."""
    m, n = np.asarray(m, np.int64), np.asarray(n, np.int64)
    glob = mode == GLOBAL
    k = m + n
    score = np.where(k > 0, -(gap_open + (k - 1) * gap_extend), 0) if glob else np.zeros_like(k)
    zero = np.zeros_like(k)
    qe, te = (m, n) if glob else (zero, zero)
    start = zero if traceback else np.full_like(k, -1)
    if not traceback:
        return Columns(score, start, qe.copy(), start.copy(), te.copy(), None, None)
    has = glob & (k > 0)
    runs = np.where(n > 0, n << 4 | 2, m << 4 | 1)[has] if glob else np.zeros(0, np.int64)
    offsets = np.zeros(k.size + 1, np.int64)
    np.cumsum(has if glob else zero, out=offsets[1:])
    return Columns(score, start, qe.copy(), start.copy(), te.copy(),
                   runs.astype(np.uint32), offsets)
