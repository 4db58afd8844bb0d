"""CPU engine of the non-serial polyadic DP: the blocked min-plus algorithm in Numba.

Same layout, schedules and tie rule as the GPU engine (``wavedp.polyadic.problem`` describes
the gap-coordinate table ``T`` and ``schedule`` the phases), so both return identical tables.
A phase's far products run in parallel over (task, strip of ``STRIP`` rows), the split
points in chunks of ``CHUNK`` so the rows they read stay in cache; its finalizations run in
parallel over blocks, each block row by row from the bottom, in which order every cell's
near split points and pairing term are final when it is. The threads run ``nogil`` Numba
functions, as many as Numba's thread count (a ``prange`` version compiled four times
slower). Max problems arrive negated: the engine only minimises.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit
from numba.extending import overload

from ...polyadic.problem import NO_K, Problem
from ...polyadic.schedule import plan
from .compile import SECONDS, notice
from .threads import compile_here

STRIP = 8
CHUNK = 128


def _cast(x, like):
    """``x`` as the type of ``like`` (Numba widens int32 sums to int64, which halves the
    SIMD lanes of the loops below)."""
    return x


@overload(_cast)
def _cast_numba(x, like):
    kind = like  # the Numba type of ``like``, callable as a cast
    return lambda x, like: kind(x)


@njit(cache=True, nogil=True)
def _scan(T, a, c0, b, k0, k1, wkind, D, acc, acck):
    """Fold split points k0..k1-1 of row ``a`` into the cells (a, c0..c0+b-1), whose best
    values and k so far are ``acc`` and ``acck``: smallest k on ties (k increases).

    ``np.fmin`` vectorizes to a blend where ``v if v < acc[s] else acc[s]`` became masked
    stores (4x slower for floats); on a tie it keeps an equal value (only a zero's sign may
    differ), and k moves only on ``v < acc[s]``."""
    if wkind == 1:
        dc = D[c0:c0 + b]
        for bp in range(k0, k1):
            t, dab, dbp, k = T[a, bp], D[a], D[bp], np.int32(bp - 1)
            row = T[bp, c0:c0 + b]
            for s in range(b):
                v = _cast(_cast(t + row[s], t) + _cast(_cast(dab * dc[s], t) * dbp, t), t)
                m = v < acc[s]
                acc[s] = np.fmin(v, acc[s])
                acck[s] = k if m else acck[s]
        return
    for bp in range(k0, k1):
        t, k = T[a, bp], np.int32(bp - 1)
        row = T[bp, c0:c0 + b]
        for s in range(b):
            v = _cast(t + row[s], t)
            m = v < acc[s]
            acc[s] = np.fmin(v, acc[s])
            acck[s] = k if m else acck[s]


@njit(cache=True, nogil=True)
def _product(T, K, A, C, L0, L1, r0, b, wkind, D, big):
    """Fold the far split points of blocks L0..L1-1 into rows r0..r0+STRIP-1 of (A, C)."""
    bv = np.full((STRIP, b), big, T.dtype)
    bk = np.zeros((STRIP, b), np.int32)
    c0 = C * b
    for q0 in range(L0 * b, L1 * b, CHUNK):
        for x in range(STRIP):
            _scan(T, A * b + r0 + x, c0, b, q0, min(q0 + CHUNK, L1 * b), wkind, D, bv[x], bk[x])
    for x in range(STRIP):
        a = A * b + r0 + x
        for s in range(b):
            v, k = bv[x, s], bk[x, s]
            if v < T[a, c0 + s] or (v == T[a, c0 + s] and k < K[a, c0 + s]):
                T[a, c0 + s] = v
                K[a, c0 + s] = k


@njit(cache=True, nogil=True)
def _finalize(T, K, A, C, b, diag, wkind, D, W, paired, codes, ptab, na, min_loop, big):
    """Finish block (A, C) row by row from the bottom: block A's split points, the far
    accumulator, then left to right each cell (table weight, pairing term, leaf) and its
    push, as a split point, into the cells right of it."""
    c0 = C * b
    acc = np.empty(b, T.dtype)
    acck = np.empty(b, np.int32)
    for a in range(A * b + b - 1, A * b - 1, -1):
        acc[:] = big
        acck[:] = NO_K
        # off-diagonal blocks: block A's split points
        _scan(T, a, c0, b, a + 1, min((A + 1) * b, c0), wkind, D, acc, acck)
        if C >= A + 2:  # the far accumulator; its split points come after block A's
            for s in range(b):
                if T[a, c0 + s] < acc[s]:
                    acc[s] = T[a, c0 + s]
                    acck[s] = K[a, c0 + s]
        for c in range(max(c0, a + 1), c0 + b):
            if c == a + 1:
                best, arg = diag[a], np.int32(-1)
            else:
                best, arg = acc[c - c0], acck[c - c0]
                if wkind == 2:
                    best = _cast(best + W[a, c], best)
                if paired and c - 1 - a > min_loop:  # T[a + 1][a + 1] = 0: empty interval
                    v = ptab[codes[a] * na + codes[c - 1]] + T[a + 1, c - 1]
                    if v < best:
                        best, arg = _cast(v, best), np.int32(c - 1)
            T[a, c] = best
            K[a, c] = arg
            # into the whole row: cells left of c are final already, and a fixed width vectorizes
            _scan(T, a, c0, b, c, c + 1, wkind, D, acc, acck)


@njit(cache=True, nogil=True)
def _products(T, K, tasks, first, step, b, wkind, D, big):
    """Every ``step``-th (task, strip) pair from ``first`` on."""
    strips = b // STRIP
    for x in range(first, tasks.shape[0] * strips, step):
        t = x // strips
        _product(T, K, tasks[t, 0], tasks[t, 1], tasks[t, 2], tasks[t, 3], (x % strips) * STRIP,
                 b, wkind, D, big)


@njit(cache=True, nogil=True)
def _finals(T, K, tasks, first, step, b, diag, wkind, D, W, paired, codes, ptab, na, min_loop,
            big):
    """Every ``step``-th finalize task from ``first`` on."""
    for x in range(first, tasks.shape[0], step):
        _finalize(T, K, tasks[x, 0], tasks[x, 1], b, diag, wkind, D, W, paired, codes, ptab,
                  na, min_loop, big)


@functools.cache
def _pool(workers: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(workers, thread_name_prefix="wavedp-polyadic")


def _spread(kernel, units: int, *args) -> None:
    """Run ``kernel(*args, first, step)`` on Numba's thread count of threads (nogil)."""
    if units:  # the first call compiles both kernels (for the table's dtype)
        notice([(kernel, (*args[:3], 0, 1, *args[3:]), SECONDS["polyadic"])])
    workers = min(numba.get_num_threads(), units)
    if workers <= 1:
        if units:
            kernel(*args[:3], 0, 1, *args[3:])
        return
    compile_here(kernel, (*args[:3], 0, workers, *args[3:]))
    futures = [_pool(workers).submit(kernel, *args[:3], w, workers, *args[3:])
               for w in range(workers)]
    for future in futures:
        future.result()


def solve(prob: Problem, schedule: str) -> tuple[np.ndarray, np.ndarray]:
    """The gap-coordinate tables (T, K) of an encoded problem (``size`` x ``size``)."""
    size, b = prob.size, prob.block
    T = np.zeros((size, size), prob.dtype)
    K = np.full((size, size), -1, np.int32)
    for A in range(prob.blocks - 2):  # far accumulators: blocks two or more from the diagonal
        T[A * b:(A + 1) * b, (A + 2) * b:] = prob.big
        K[A * b:(A + 1) * b, (A + 2) * b:] = NO_K
    phases = plan(schedule, prob.blocks)
    for k in range(phases.phases):
        products, finals = phases.phase(k)
        _spread(_products, len(products) * (b // STRIP), T, K, products, b, prob.wkind,
                prob.dvec, prob.big)
        _spread(_finals, len(finals), T, K, finals, b, prob.diag, prob.wkind, prob.dvec,
                prob.wtab, prob.paired, prob.codes, prob.ptab, prob.na, prob.min_loop, prob.big)
    return T, K
