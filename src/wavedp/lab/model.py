"""Xiao and Feng's time model of a kernel with inter-block synchronization, fitted to
measurements.

- A kernel of M steps takes T = t_O + sum over steps of (t_C + t_S): launch overhead,
  computation and synchronization.
- The barrier's own cost per step, by strategy, on N blocks:
  (6) simple: t_S = N t_a + t_c (the N atomic arrivals are serialized on one counter);
  (7) tree with L levels: t_S = t_a sum_l w_l(N) + L t_c, w_l the widest group of level l
      (``tree_widths``: m = ceil(sqrt(units)) groups per level);
  (9) lock-free: t_S = t_0 + t_p ceil(N / threads): the paper's constant
      t_SI + t_CI + 2 t_sync + t_SO + t_CO, plus the polls block 0's threads make one after
      another once N exceeds its threads (ours read four slots a poll, so t_p comes out as
      whatever else grows with N: on the H100 a step from one block per multiprocessor to
      two);
  cooperative groups' grid.sync() is fitted as (6) (one counter), the CPU-side strategies
  as a constant (a launch, and for cpu-explicit a host wait, per step);
  wavedp's ``spread`` barriers as (6) over K counters: t_S = ceil(N / K) t_a + t_c (the
  arrivals queue at K lines; ``SPREAD_LINES``).
- Speedup of a kernel whose computation is a fraction rho of its time under CPU implicit
  synchronization, when synchronization alone gets S_S times faster:
  S_T = 1 / (rho + (1 - rho) / S_S).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: equation of the paper behind each strategy's fit
EQUATIONS = {"simple": "(6)", "grid": "(6)", "tree2": "(7)", "tree3": "(7)", "lockfree": "(9)",
             "cpu-explicit": "t_O", "cpu-implicit": "t_O", "graph": "t_O",
             "spread": "(6) / K"}
#: counters (lines) of wavedp's spread barrier (kernels/barriers.cuh's SPREAD_LINES)
SPREAD_LINES = {"spread": 8}


def kernel_time(t_o: float, t_c: float, t_s: float, steps: int) -> float:
    """T = t_O + sum(t_C + t_S) over ``steps`` equal steps."""
    return t_o + steps * (t_c + t_s)


def speedup(rho: float, s_sync: float) -> float:
    """S_T = 1 / (rho + (1 - rho) / S_S)."""
    return 1.0 / (rho + (1.0 - rho) / s_sync)


def tree_widths(blocks: int, levels: int) -> list[int]:
    """The widest group of each level of the tree barrier on ``blocks`` blocks (the grouping
    of kernels/barriers.cuh: ceil(sqrt(units)) groups per level, the top one group)."""
    widths, count = [], blocks
    for level in range(levels):
        groups = 1 if level == levels - 1 else math.isqrt(count - 1) + 1
        width = -(-count // groups)
        widths.append(width)
        count = -(-count // width)
    return widths


@dataclass
class Fit:
    """A strategy's barrier cost t_S(N) fitted by least squares: ``coef`` for ``terms``."""

    sync: str
    terms: tuple[str, ...]
    coef: np.ndarray
    design: Callable[[np.ndarray], np.ndarray]
    r2: float  # NaN for a constant model

    def predict(self, blocks) -> np.ndarray:
        return self.design(np.atleast_1d(np.asarray(blocks, dtype=float))) @ self.coef

    @property
    def equation(self) -> str:
        return EQUATIONS.get(self.sync, "")

    def describe(self, unit: str = "us") -> str:
        """The fitted parameters, e.g. ``t_a = 0.012 us, t_c = 0.61 us``."""
        return ", ".join(f"{t} = {c:.3g} {unit}" for t, c in zip(self.terms, self.coef,
                                                                  strict=True))


def _design(sync: str, threads: int) -> tuple[tuple[str, ...], Callable]:
    if sync in ("simple", "grid"):
        return ("t_a", "t_c"), lambda n: np.stack([n, np.ones_like(n)], axis=1)
    if sync in SPREAD_LINES:
        lines = SPREAD_LINES[sync]
        return ("t_a", "t_c"), lambda n: np.stack([np.ceil(n / lines), np.ones_like(n)], axis=1)
    if sync in ("tree2", "tree3"):
        levels = int(sync[-1])

        def tree(n):
            widths = [sum(tree_widths(int(b), levels)) for b in n]
            return np.stack([np.asarray(widths, float), np.full_like(n, levels)], axis=1)

        return ("t_a", "t_c"), tree
    if sync == "lockfree":
        return ("t_p", "t_0"), lambda n: np.stack([np.ceil(n / threads), np.ones_like(n)],
                                                  axis=1)
    return ("t_O",), lambda n: np.ones((n.size, 1))


def fit(sync: str, blocks, cost, threads: int = 256) -> Fit:
    """Fit the model of ``sync`` to barrier costs ``cost`` measured on ``blocks`` blocks."""
    n = np.asarray(blocks, dtype=float)
    y = np.asarray(cost, dtype=float)
    terms, design = _design(sync, threads)
    x = design(n)
    coef = np.linalg.lstsq(x, y, rcond=None)[0]
    spread = float(((y - y.mean()) ** 2).sum())
    r2 = math.nan if x.shape[1] == 1 or spread == 0 else \
        1.0 - float(((y - x @ coef) ** 2).sum()) / spread
    return Fit(sync, terms, coef, design, r2)


def flat(blocks, cost, start: int = 8, tolerance: float = 0.25) -> bool:
    """Whether the cost on ``start`` blocks and more varies by at most ``tolerance``
    (largest over smallest, minus one), measured on at least two block counts."""
    values = [c for b, c in zip(blocks, cost, strict=True) if b >= start]
    return len(values) >= 2 and max(values) <= (1 + tolerance) * min(values)
