"""Matrix-chain ordering on the polyadic engine."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..device import Device
from ..errors import InputError
from .api import solve


def check_dims(dims: Sequence[int]) -> list[int]:
    """The dimensions as Python ints: at least two, each a positive integer below 2^62."""
    if dims is None or isinstance(dims, (str, bytes)) or not hasattr(dims, "__iter__"):
        raise InputError(f"dims must be a list of the n + 1 matrix dimensions, got "
                         f"{type(dims).__name__}")
    values = list(dims)
    if len(values) < 2:
        raise InputError(f"a chain of n matrices needs n + 1 >= 2 dimensions, got {len(values)}")
    for pos, d in enumerate(values, 1):
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 0 < d < 2**62:
            raise InputError(f"dimension {pos} is {d!r}: dimensions must be positive integers")
    return [int(d) for d in values]


def matrix_chain(dims: Sequence[int], *, device: str | Device = "auto", block: int = 64
                 ) -> tuple[int, str]:
    """The cheapest order to multiply A1 A2 ... An, Ai being ``dims[i-1] x dims[i]``:
    ``(cost, order)``, cost in scalar multiplications (exact: int32 or int64, the range
    checked before any work) and order a full parenthesization such as ``((A1A2)A3)``;
    ties take the smallest split."""
    d = check_dims(dims)
    n = len(d) - 1
    sol = solve(np.zeros(n, np.int64), opt="min", weight=("product", np.array(d, np.int64)),
                block=block, device=device)
    return int(sol.value), sol.parenthesization()
