"""Every query against every target (``align_all``), query-major: pair k is query k // T
against target k % T (T targets). Its sides need no pass over the pairs (one shape: constant
views, no memory); the GPU engine makes a chunk's pairs itself (``cuda/many_pairs.py``'s
CROSS), so the indices are made for the results alone, as copies of broadcast views."""

from __future__ import annotations

import numpy as np

from .common import Sides


def spread(values: np.ndarray, others: int, down: bool) -> np.ndarray:
    """``values`` for every pair of the cross product (int64): ``down``, each repeated
    ``others`` times (a query's, along its row of targets); else all of them ``others``
    times over (a target's, every row)."""
    values = np.asarray(values, np.int64)
    shape = (values.size, others) if down else (others, values.size)
    return np.broadcast_to(values[:, None] if down else values, shape).reshape(-1)


def indices(queries: int, targets: int) -> tuple[np.ndarray, np.ndarray]:
    """The query and target index (int64) of every pair."""
    return (spread(np.arange(queries), targets, True),
            spread(np.arange(targets), queries, False))


def sides(m: np.ndarray, n: np.ndarray, extremes: tuple[int, int, int, int]) -> Sides:
    """The sides of every query (lengths ``m``) against every target (``n``); ``extremes``:
    m's least and most, then n's. One shape: read-only constant views."""
    count = m.size * n.size
    if not count:
        return Sides.of(np.zeros(0, np.int64), np.zeros(0, np.int64))
    one = Sides(np.broadcast_to(np.int64(extremes[1]), (count,)),
                np.broadcast_to(np.int64(extremes[3]), (count,)), *extremes)
    if one.uniform:
        return one
    return Sides.of(spread(m, n.size, True), spread(n, m.size, False), extremes)
