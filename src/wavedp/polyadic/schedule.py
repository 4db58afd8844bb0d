"""Block schedules: which far products and which block finalizations run in which phase.

The table's ``nb`` block rows and columns give blocks ``(A, C)``, ``A <= C``. A cell of
block ``(A, C)`` takes its split points from block ``A`` and block ``C`` (the *near* part,
resolved inside the block when it is finalized) and from the blocks strictly between (the
*far* part: ``T[A, L] (x) T[L, C]`` for ``A < L < C``, a rectangular min-plus product).
A product task ``(A, C, L0, L1)`` adds the far contributions of blocks ``L0..L1-1`` to
block ``(A, C)``'s accumulator; a finalize task ``(A, C)`` then finishes the block. Tasks of
one phase are independent: no two products of a phase touch one block (until ``split``
deliberately cuts one into parts), and every block a task reads is finished in an earlier
phase. The order in which a block receives its far contributions does not matter: the
accumulator keeps the best value and, on ties, the smallest k.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .problem import SCHEDULES


@dataclass(frozen=True)
class Plan:
    """Every phase's tasks, phase by phase: product rows ``(A, C, L0, L1)`` and finalize rows
    ``(A, C)``; phase k's are rows ``product_start[k]:product_start[k + 1]`` (likewise
    ``final_start``)."""

    phases: int
    products: np.ndarray
    product_start: np.ndarray
    finals: np.ndarray
    final_start: np.ndarray

    def phase(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(products, finals) of phase k."""
        p, f = self.product_start, self.final_start
        return self.products[p[k]:p[k + 1]], self.finals[f[k]:f[k + 1]]

    @property
    def product_phase(self) -> np.ndarray:
        """The phase of each product row."""
        return np.repeat(np.arange(self.phases), np.diff(self.product_start))


def _plan(phases: int, product_phase: np.ndarray, products: np.ndarray,
          final_phase: np.ndarray, finals: np.ndarray) -> Plan:
    """A Plan from rows tagged with their phase (in any order)."""
    po, fo = np.argsort(product_phase, kind="stable"), np.argsort(final_phase, kind="stable")
    edges = np.arange(phases + 1)
    out = Plan(phases, np.ascontiguousarray(products[po], np.int32),
               np.searchsorted(product_phase[po], edges), np.ascontiguousarray(finals[fo],
                                                                                 np.int32),
               np.searchsorted(final_phase[fo], edges))
    for arr in (out.products, out.product_start, out.finals, out.final_start):
        arr.flags.writeable = False
    return out


def _blocks(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For groups of the given sizes: (group of each item, index of the item in its group)."""
    group = np.repeat(np.arange(counts.size), counts)
    return group, np.arange(group.size) - np.repeat(np.cumsum(counts) - counts, counts)


def iterative(nb: int) -> Plan:
    """Moazeni et al.'s bottom-up order: block diagonal d = C - A in phase d."""
    d, a = _blocks(nb - np.arange(nb))
    finals = np.stack([a, a + d], axis=1)
    far = d > 1
    products = np.stack([a, a + d, a + 1, a + d], axis=1)[far]
    return _plan(nb, d[far], products, d, finals)


class _Emitter:
    """Collects the divide-and-conquer recursion's work, each item tagged with its phase."""

    def __init__(self) -> None:
        self.rects: list[tuple[int, ...]] = []  # (phase, r0, r1, c0, c1, l0, l1)
        self.finals: list[tuple[int, int, int]] = []  # (phase, A, C)

    def triangle(self, lo: int, hi: int, start: int) -> int:
        """Blocks lo..hi-1 x lo..hi-1 from phase ``start``; returns the next free phase."""
        if hi - lo == 1:
            self.finals.append((start, lo, lo))
            return start + 1
        mid = (lo + hi) // 2
        end = max(self.triangle(lo, mid, start), self.triangle(mid, hi, start))
        return self.rect(lo, mid, mid, hi, end)

    def product(self, start: int, r0: int, r1: int, c0: int, c1: int, l0: int, l1: int) -> int:
        self.rects.append((start, r0, r1, c0, c1, l0, l1))
        return start + 1

    def rect(self, r0: int, r1: int, c0: int, c1: int, start: int) -> int:
        """Blocks rows r0..r1-1 x columns c0..c1-1 (r1 <= c0), given both triangles and the
        far contributions of blocks r1..c0-1: quadrants nearest the diagonal first."""
        if r1 - r0 == 1 and c1 - c0 == 1:
            self.finals.append((start, r0, c0))
            return start + 1
        rm, cm = (r0 + r1) // 2, (c0 + c1) // 2
        if r1 - r0 == 1:
            start = self.rect(r0, r1, c0, cm, start)
            return self.rect(r0, r1, cm, c1, self.product(start, r0, r1, cm, c1, c0, cm))
        if c1 - c0 == 1:
            start = self.rect(rm, r1, c0, c1, start)
            return self.rect(r0, rm, c0, c1, self.product(start, r0, rm, c0, c1, rm, r1))
        start = self.rect(rm, r1, c0, cm, start)  # bottom left, then the two beside it
        end = max(self.rect(r0, rm, c0, cm, self.product(start, r0, rm, c0, cm, rm, r1)),
                  self.rect(rm, r1, cm, c1, self.product(start, rm, r1, cm, c1, c0, cm)))
        end = self.product(self.product(end, r0, rm, cm, c1, rm, r1), r0, rm, cm, c1, c0, cm)
        return self.rect(r0, rm, cm, c1, end)  # top right


def divide_and_conquer(nb: int) -> Plan:
    """Tan, Sun and Gao's order: both half triangles (side by side), then the square between
    them by quadrants, each quadrant's far products as one rectangular product."""
    work = _Emitter()
    phases = work.triangle(0, nb, 0)
    rects = np.array(work.rects, np.int64).reshape(-1, 7)
    finals = np.array(work.finals, np.int64).reshape(-1, 3)
    phase, r0, r1, c0, c1, l0, l1 = rects.T
    which, k = _blocks((r1 - r0) * (c1 - c0))
    width = (c1 - c0)[which]
    products = np.stack([r0[which] + k // width, c0[which] + k % width, l0[which],
                         l1[which]], axis=1)
    return _plan(phases, phase[which], products, finals[:, 0], finals[:, 1:])


@functools.lru_cache(maxsize=16)
def plan(schedule: str, nb: int) -> Plan:
    """The phases of ``schedule`` over ``nb`` blocks (cached: the arrays are read-only)."""
    if schedule == "iterative":
        return iterative(nb)
    if schedule == "divide-and-conquer":
        return divide_and_conquer(nb)
    raise InputError(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")


def split(products: np.ndarray, parts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cut product row i into ``min(parts[i], L1 - L0)`` tasks over consecutive L ranges.

    Returns the tasks (rows A, C, L0, L1, in the order of the products) and, per task, the
    index of the product it came from.
    """
    l0, l1 = products[:, 2].astype(np.int64), products[:, 3].astype(np.int64)
    count = np.minimum(np.maximum(parts, 1), l1 - l0)
    source, k = _blocks(count)
    span, cnt = (l1 - l0)[source], count[source]
    tasks = np.stack([products[source, 0], products[source, 1],
                      l0[source] + span * k // cnt, l0[source] + span * (k + 1) // cnt], axis=1)
    return tasks.astype(np.int32).reshape(-1, 4), source
