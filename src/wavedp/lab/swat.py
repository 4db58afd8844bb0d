"""The lab's Smith-Waterman (Xiao, Aji and Feng, Fig. 8; Xiao and Feng, Fig. 14): the
diagonal strategy with ``simple`` and ``coalesced`` storage and the ``tiled`` strategy, each
under every synchronization strategy, score-only, checked against the default (multipass)
GPU engine on the same pair."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

import numpy as np

from ..engines.common import LOCAL
from ..engines.cuda import diagonal, multipass, tiled
from ..engines.cuda import sync as syncs
from ..errors import InputError
from ..scoring import Scoring
from .timing import by_strategy, seconds

IMPLEMENTATIONS = ("simple", "coalesced", "tiled")
SCORING = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)


def check_implementation(name: str) -> str:
    """``name`` itself, or an InputError naming the implementations."""
    if name not in IMPLEMENTATIONS:
        raise InputError(f"implementation must be one of {', '.join(IMPLEMENTATIONS)}, "
                         f"got {name!r}")
    return name


def related_pair(rng: np.random.Generator, m: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Encoded DNA (codes 0..3): a random query of length m and a target of length n that
    copies it with 10% substitutions (random beyond the query's length)."""
    q = rng.integers(0, 4, m).astype(np.uint8)
    t = rng.integers(0, 4, n).astype(np.uint8)
    k = min(m, n)
    keep = rng.random(k) >= 0.1
    t[:k][keep] = q[:k][keep]
    return q, t


def upload(q: np.ndarray, t: np.ndarray, mode: int = LOCAL):
    """The pair on the device (``wavedp.engines.cuda.multipass.Pair``) with the lab's DNA
    scoring."""
    SCORING.check_range(q.size, t.size)
    return multipass.upload(q, t, SCORING.table, SCORING.gap_open, SCORING.gap_extend, mode)


def reference(p) -> tuple[int, int, int]:
    """(score, end_i, end_j) from the default GPU engine (multipass)."""
    return multipass.end_cell(p, multipass.sweep(p, 0, p.m, 0, p.n))


def reference_seconds(p, repeats: int, warmup: int) -> float:
    """Seconds of the default GPU engine's score-only sweep of the pair (the anchor)."""
    runs = []
    return seconds(lambda: runs.append(multipass.sweep(p, 0, p.m, 0, p.n, wait=False)),
                   lambda: multipass.check(runs.pop()), repeats, warmup)


def make_sweep(p, implementation: str, sync: str, blocks: int | None = None):
    """The ``diagonal.Sweep`` or ``tiled.Sweep`` of one implementation and strategy."""
    if check_implementation(implementation) == "tiled":
        return tiled.Sweep(p, sync, blocks)
    return diagonal.Sweep(p, implementation, sync, blocks)


def limit(implementation: str) -> int:
    """The co-resident maximum of an implementation's persistent kernels (DNA scoring)."""
    kinds = syncs.KINDS.values()
    if check_implementation(implementation) == "tiled":
        shared = 4 * SCORING.table.shape[0] ** 2
        return syncs.limit("tiled.cu", [f"tiled_sweep<{k}>" for k in kinds], tiled.TILE, shared)
    code = diagonal.check_storage(implementation)
    return syncs.limit("diagonal.cu", [f"diagonal_sweep<{code}, {k}>" for k in kinds],
                       diagonal.BLOCK)


def measure(pairs: Iterable[tuple[int, int]], implementations: Iterable[str],
            sync_names: Iterable[str], blocks_list: Iterable[int | None] = (None,),
            repeats: int = 3, warmup: int = 1,
            progress: Callable[[str], None] | None = None) -> list[dict]:
    """One row per (pair shape, implementation, block count, strategy): seconds, the
    compute-only seconds (the persistent kernel without barriers, same grid), the multipass
    engine's seconds on the pair (the anchor), GCUPS, and whether the end cell equals the
    multipass engine's. ``None`` in ``blocks_list``: each
    strategy's default grid (``blocks`` 0 in the row: sized per step)."""
    rng = np.random.default_rng(19)
    rows = []
    impls = [check_implementation(i) for i in implementations]
    names = list(sync_names)
    for m, n in pairs:
        p = upload(*related_pair(rng, m, n))
        expected = reference(p)
        anchor = reference_seconds(p, repeats, warmup)
        for impl in impls:
            for blocks, sync, sweep, total, t_compute in by_strategy(
                    functools.partial(make_sweep, p, impl), blocks_list, names,
                    repeats, warmup):
                host = sync in syncs.HOST_SYNCS
                rows.append({"m": m, "n": n, "implementation": impl, "sync": sync,
                             "blocks": blocks or (0 if host else sweep.plan.blocks),
                             "seconds": total, "compute": t_compute, "anchor": anchor,
                             "steps": sweep.steps, "gcups": m * n / total / 1e9,
                             "exact": sweep.result() == expected})
            if progress:
                progress(f"swat: {m} x {n} {impl} done")
    return rows
