"""The compute engines: ``reference`` (the pure-Python oracle), ``cpu`` (Numba) and ``cuda``
(CuPy). Engines see encoded uint8 sequences, an int32 substitution table and integer
penalties, never strings, files or Scoring objects. The functions here run the engine of a
resolved :class:`~wavedp.device.Device` (on the GPU over its GPUs): the one place that
branches on the device."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..device import Device
from ..trace import Trace
from . import cross
from .common import Columns, Sides, empty_columns
from .protocol import Scanner

if TYPE_CHECKING:
    from .cuda.scan.lines import Subjects

# Each engine is imported when first used (inside the functions below): Numba's import takes
# about 0.4 s and CuPy's longer, and ``import wavedp`` needs neither.


def align_pairs(device: Device, qcodes: list[np.ndarray], tcodes: list[np.ndarray],
                pairs: np.ndarray, sub: np.ndarray, gap_open: int, gap_extend: int, mode: int,
                *, traceback: bool, profile: bool = False, **options: Any) -> list[tuple]:
    """Each (query index, target index) row of ``pairs`` aligned: (score, query start,
    query end, target start, target end, ops or None); on the GPU the pairs spread over the
    device's GPUs by cells, with the strategy ``options`` (``strategy``, ``sync``,
    ``storage``). ``profile``: ``sub`` is profiles' table, each query's codes a run of its
    rows (on the GPU the batch and multipass engines, aligned columns ``X`` from the batch
    engine: the caller compares letters; on the CPU each query against its own rows)."""

    def run(engine: Callable) -> Callable[[np.ndarray | None], list]:
        return lambda sel: engine(qcodes, tcodes, pairs if sel is None else pairs[sel], sub,
                                  gap_open, gap_extend, mode, traceback, **options)

    if device.gpu:
        from .cuda.gpus import pairs_on_gpus  # lazy: see above
        from .cuda.pairs import align_pairs as gpu_pairs  # lazy: see above

        if profile:
            options["profile"] = True
        return pairs_on_gpus(device.gpus, run(gpu_pairs), _cells(qcodes, tcodes, pairs))
    from .cpu import align_pairs as cpu_pairs  # lazy: see above
    from .cpu import align_profile_pairs  # lazy: see above

    return run(align_profile_pairs if profile else cpu_pairs)(None)


def pair_columns(device: Device, qcat: np.ndarray, qoff: np.ndarray, tcat: np.ndarray,
                 toff: np.ndarray, qi: np.ndarray | None, ti: np.ndarray | None, *,
                 sides: Sides, sub: np.ndarray, gap_open: int, gap_extend: int, mode: int,
                 traceback: bool, every: bool = False) -> Columns:
    """Pair k (query ``qi[k]`` against target ``ti[k]``, sequences as one array with offsets
    each; ``qi`` and ``ti`` None: query k against target k, or with ``every`` every query
    against every target, query-major) aligned, as columns: empty
    sequences by the boundary, on the GPU the batch engine (``cuda/many_pairs.py``) over the
    device's GPUs and the pairwise engines for what it does not take, else the CPU engine on
    every core. ``sides``: the pairs' sides (:class:`Sides`; arrays or ``spans.Spans``)."""
    count = int(sides.m.size)
    none_empty = count == 0 or (sides.m_min > 0 and sides.n_min > 0)
    if device.gpu and none_empty and len(device.gpus) == 1:
        from .cuda import many_pairs  # lazy: see above

        if many_pairs.takes_all(sides, int(sub.max())):  # the common case
            return many_pairs.align(qcat, qoff, tcat, toff, qi, ti, sides, sub=sub,
                                    gap_open=gap_open, gap_extend=gap_extend, mode=mode,
                                    traceback=traceback, every=every)
    if every and (qi is None or ti is None):
        qi, ti = cross.indices(qoff.size - 1, toff.size - 1)
    sides = sides.arrays()
    m, n = sides.m, sides.n
    parts = []
    empty = np.zeros(count, bool) if none_empty else (m == 0) | (n == 0)
    if not none_empty:
        idx = np.flatnonzero(empty)
        parts.append((idx, empty_columns(m[idx], n[idx], mode, gap_open, gap_extend,
                                         traceback)))
    if device.gpu:
        from .cuda import many_pairs  # lazy: see above

        fast = many_pairs.taken(sides, int(sub.max())) & ~empty
        if qi is None or ti is None:
            qi = ti = np.arange(count, dtype=np.int64)
        rest = np.flatnonzero(~empty & ~fast)
        idx = np.flatnonzero(fast)
        if idx.size:
            parts += _on_gpus(device, idx, m * n, lambda sel: many_pairs.align(
                qcat, qoff, tcat, toff, qi[sel], ti[sel], sides.select(sel), sub=sub,
                gap_open=gap_open, gap_extend=gap_extend, mode=mode, traceback=traceback))
        if rest.size:
            (qcodes, qrows), (tcodes, trows) = (_records(cat, off, which[rest]) for
                                                cat, off, which in ((qcat, qoff, qi),
                                                                    (tcat, toff, ti)))
            raw = align_pairs(device, qcodes, tcodes, np.stack([qrows, trows], axis=1), sub,
                              gap_open, gap_extend, mode, traceback=traceback)
            parts.append((rest, raw_columns(raw, traceback)))
    else:
        from .cpu import align_cat  # lazy: see above

        if qi is None or ti is None:
            qi = ti = np.arange(count, dtype=np.int64)
        idx = np.flatnonzero(~empty)
        if idx.size:
            out, ops, opoff = align_cat(qcat, qoff, tcat, toff,
                                        np.stack([qi[idx], ti[idx]], axis=1), sub, gap_open,
                                        gap_extend, mode=mode, traceback=traceback)
            parts.append((idx, _cpu_columns(out, ops, opoff, traceback)))
    return Columns.merged(count, parts, traceback)


def _on_gpus(device: Device, idx: np.ndarray, cells: np.ndarray,
             work: Callable[[np.ndarray], Columns]) -> list[tuple[np.ndarray, Columns]]:
    """``work`` over the pairs ``idx`` cut into one contiguous part a GPU, about equal in
    cells (one part under SPREAD_CELLS)."""
    from .cuda.gpus import SPREAD_CELLS, on_gpus  # lazy: see above

    gpus = list(device.gpus)
    cum = np.cumsum(cells[idx])
    parts = 1 if cum[-1] < SPREAD_CELLS else min(len(gpus), idx.size)
    cuts = np.searchsorted(cum, cum[-1] * np.arange(1, parts) / parts)
    pieces = np.split(idx, cuts)
    return list(zip(pieces, on_gpus(gpus[:parts], work, pieces), strict=True))


def _records(cat: np.ndarray, off: np.ndarray, which: np.ndarray
             ) -> tuple[list[np.ndarray], np.ndarray]:
    """The records ``which`` refers to, once each, and each of ``which`` as their index."""
    unique, rows = np.unique(which, return_inverse=True)
    return [cat[off[k]:off[k + 1]] for k in unique.tolist()], rows.ravel()


def raw_columns(raw: list[tuple], traceback: bool) -> Columns:
    """The pairwise engines' (score, coordinates, letters) tuples as columns."""
    from ..cigars import runs_from_letters

    fields = [np.array([r[c] for r in raw], np.int32) for c in range(5)]
    if not traceback:
        return Columns(*fields, None, None)
    letters = [r[5] for r in raw]
    sizes = np.array([x.size for x in letters], np.int64)
    cat = np.concatenate(letters) if letters else np.zeros(0, np.uint8)
    return Columns(*fields, *runs_from_letters(cat, sizes))


def _cpu_columns(out: np.ndarray, ops: np.ndarray, opoff: np.ndarray,
                 traceback: bool) -> Columns:
    """The CPU engine's rows (its letters written backwards) as columns."""
    fields = [out[:, c].astype(np.int32) for c in range(5)]
    if not traceback:
        return Columns(*fields, None, None)
    from .cpu.runs import runs_of  # lazy: see above

    return Columns(*fields, *runs_of(ops, opoff, out[:, 5]))


def hits(device: Device, qcodes: list[np.ndarray], tcodes: list[np.ndarray],
         pairs: np.ndarray, sub: np.ndarray, gap_open: int, gap_extend: int, fraction: float,
         *, limit: int | None) -> list[list[tuple]]:
    """Each (query index, target index) row's non-intersecting local alignments
    (Waterman-Eggert), best first; on the GPU the pairs spread over its GPUs by cells."""

    def run(engine: Callable) -> Callable[[np.ndarray | None], list]:
        return lambda sel: engine(qcodes, tcodes, pairs if sel is None else pairs[sel], sub,
                                  gap_open, gap_extend, fraction, limit)

    if device.gpu:
        from .cuda.gpus import pairs_on_gpus  # lazy: see above
        from .cuda.waterman_eggert import hits as gpu_hits  # lazy: see above

        return pairs_on_gpus(device.gpus, run(gpu_hits), _cells(qcodes, tcodes, pairs))
    from .cpu.waterman_eggert import hits as cpu_hits  # lazy: see above

    return run(cpu_hits)(None)


def scanner(device: Device, residues: np.ndarray, offsets: np.ndarray, lut: np.ndarray | None,
            sub: np.ndarray, gap_open: int, gap_extend: int, mode: int, *,
            partition: str = "auto", grid_cap: int | None = None,
            trace: Trace | None = None, order: Subjects | None = None,
            identity: str | None = None) -> Scanner:
    """The database scanner of ``device`` (``residues`` and ``offsets`` of the database,
    ``lut`` its codes' translation to the scoring's; ``order`` its sequences longest first,
    where stored; ``identity`` its build, where it has one): on the GPU the database sharded
    over its GPUs, the launches cut by ``partition`` (the CPU's kernel pads nothing: it has
    no use for one), at most ``grid_cap`` blocks each, recorded in ``trace``."""
    if device.gpu:
        from .cuda.gpus import GpuScanner  # lazy: see above

        return GpuScanner(residues, offsets, lut, sub, gap_open, gap_extend, mode, device.gpus,
                          partition=partition, grid_cap=grid_cap, trace=trace, order=order,
                          identity=identity)
    from .cpu.scan import CpuScanner  # lazy: see above

    return CpuScanner(residues, offsets, lut, sub, gap_open, gap_extend, mode)


def preload_walk() -> threading.Thread:
    """Load, on a thread of its own, what the host's traceback walk of GPU alignments needs
    (Numba, its code generator, the walk's module; about 1 s of a fresh process on the H100
    machine): a GPU search with traceback starts it once its scan is planned, so that the
    hits' stage after the scan finds them loaded."""
    thread = threading.Thread(target=_load_walk, name="wavedp-preload", daemon=True)
    thread.start()
    return thread


def _load_walk() -> None:
    from .cpu.compile import warm  # lazy: see above
    from .cuda import traceback  # noqa: F401  (lazy: see above; the import is the work)

    warm()


def _cells(qcodes: list[np.ndarray], tcodes: list[np.ndarray], pairs: np.ndarray) -> np.ndarray:
    """The m * n cells of each (query index, target index) row of ``pairs``."""
    if not len(pairs):
        return np.zeros(0, np.int64)
    qlen = np.array([c.size for c in qcodes], np.int64)
    tlen = np.array([c.size for c in tcodes], np.int64)
    return qlen[pairs[:, 0]] * tlen[pairs[:, 1]]
