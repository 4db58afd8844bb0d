"""``solve``: the non-serial polyadic DP on the CPU or the GPU, and its ``Solution``."""

from __future__ import annotations

import functools
import os

import numpy as np

from ..device import Device, choose
from ..errors import InputError
from . import traceback
from .problem import SCHEDULES, Problem, encode


class Solution:
    """A solved table: ``value`` is ``m[0][n-1]``; ``table`` and ``choice`` (the chosen k,
    ``j`` for the pairing term, -1 for leaves and below the diagonal) are n x n host
    arrays made on first use. On the GPU the tables stay in device memory: ``value`` and
    the traceback copy back only what they read."""

    def __init__(self, prob: Problem, device: str, T, K) -> None:
        if prob.sign < 0:
            T *= -1
            if prob.dtype.kind == "f":
                T += 0  # -0.0 (the negated zeros below the diagonal) to 0.0; exact otherwise
        self.n, self.dtype, self.device = prob.n, prob.dtype, device
        self.opt = "min" if prob.sign > 0 else "max"
        self._T, self._K = T, K  # gap coordinates: m[i][j] = T[i][j + 1]

    def __repr__(self) -> str:
        return (f"Solution(n={self.n}, opt={self.opt!r}, value={self.value!r}, "
                f"dtype={self.dtype}, device={self.device!r})")

    @functools.cached_property
    def value(self) -> int | float:
        """``m[0][n-1]``, the optimum."""
        return self._host(self._T[0:1, self.n:self.n + 1])[0, 0].item()

    @functools.cached_property
    def table(self) -> np.ndarray:
        """``m`` as an n x n array (0 below the diagonal)."""
        return self._host(self._T[:self.n, 1:self.n + 1])

    @functools.cached_property
    def choice(self) -> np.ndarray:
        """The chosen k of every cell as an n x n int32 array."""
        return self._host(self._K[:self.n, 1:self.n + 1])

    def _host(self, view) -> np.ndarray:
        return view if isinstance(view, np.ndarray) else view.get()

    def derivation(self) -> np.ndarray:
        """The optimal derivation's non-leaf cells ``(i, j, k)`` in preorder."""
        if self.device == "gpu" and "choice" not in self.__dict__:
            from ..engines.cuda.polyadic import walk  # lazy: loaded with the GPU engine

            return walk(self._K, self.n)
        return traceback.derivation(self.choice)

    def parenthesization(self, names: list[str] | None = None) -> str:
        """The optimum as a full parenthesization, e.g. ``((A1A2)A3)``."""
        return traceback.parenthesization(self.derivation(), self.n, names)

    def pairs(self) -> list[tuple[int, int]]:
        """The pairs ``(i, j)`` the optimum takes through the pairing term."""
        return traceback.pairs(self.derivation())


def _host_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def solve(diagonal, *, opt: str = "min", weight=None, pair=None, dtype=None,
          schedule: str = "iterative", block: int = 64,
          device: str | Device = "auto") -> Solution:
    """Solve ``m[i][j] = opt_{i<=k<j} m[i][k] + m[k+1][j] + w(i, k, j)`` with
    ``m[i][i] = diagonal[i]`` (``docs/design.md``, "Non-serial polyadic DP"); ties take the
    smallest k.

    ``weight``: None, ``("product", d)`` (``d[i] * d[k+1] * d[j+1]``, d of length n + 1) or
    an n x n table W added once per cell. ``pair``: None, an n x n table or a ``Pairs``;
    the term ``p(i, j) + m[i+1][j-1]`` (0 for an empty interval) counts when strictly better
    than every split. ``dtype``: int32, int64, float32 or float64 (default: int32 or int64
    as the checked value range allows, float64 for float input). ``schedule``:
    ``iterative`` or ``divide-and-conquer``; ``block``: the block size, 32..256.
    """
    prob = encode(diagonal, opt=opt, weight=weight, pair=pair, dtype=dtype, block=block)
    if schedule not in SCHEDULES:
        raise InputError(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    resolved = choose(device)
    # the engines load when first used: the CPU's Numba import alone takes about 0.4 s
    if resolved.gpu:
        from ..engines.cuda import polyadic as engine  # lazy: see above
    else:
        from ..engines.cpu import polyadic as engine  # lazy: see above

        if prob.table_bytes() > _host_memory():
            raise InputError(f"n = {prob.n} needs {prob.table_bytes() / 2**30:.1f} GiB for "
                             f"its tables, more than this machine's memory")
    T, K = engine.solve(prob, schedule)
    return Solution(prob, resolved.kind, T, K)
