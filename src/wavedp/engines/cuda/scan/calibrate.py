"""``wavedp calibrate`` on the GPU: the scan's constants for the cost model, measured with
CUDA events on generated data, and the timed launches behind them.

Measured: the rate per kernel shape (G, R) and packing (lane-cells per second with the device
full), one group alone per shape, a later pass per G, a group's rate with k = 1 .. resident
blocks per SM per shape, a later pass per G and k, and the kernel's fixed start; and, from a
grid of small launches each enqueued while the GPU is busy, as a search's are, the host's time
to enqueue a launch (per launch, profile, profile word and subject) and its GPU time besides
the kernel (per launch and result word), each by least squares with every cost >= 0
(:func:`nonnegative_fit`). ``h100.py`` beside this holds the constants measured so on an H100
(``scripts/h100_constants.py`` writes it from a calibration file).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from ....scoring import Scoring
from ...calibration import Model, device_name, model_version
from ...common import LOCAL
from .. import staging
from ..module import function
from ..multipass import multiprocessors
from .chunks import Chunk
from .cost import gpu_work, pass_cells, profile_words
from .scanner import Scanner, mark, occupancy, query_rows
from .shapes import BLOCK, GROUPS, PROFILE_BYTES, ROWS, pair_up, unit_rows


def calibrate_gpu(say: Callable[[str], None]) -> Model:
    """Measure the current GPU's constants (well under a minute, kernel compiles included);
    ``say`` hears what is being measured."""
    subjects, sms = 400_000, multiprocessors()
    lengths = np.full(subjects, 360, np.int64)
    lengths[0] = 20_000  # one long subject for the runs of one group alone
    runs, keys, shapes = [], [], []
    for packed in (True, False):
        for g in GROUPS:
            for r in ROWS:
                if 4 * 24 * g * r > PROFILE_BYTES:
                    continue
                runs.append((2 * g * r, g, r, 2, packed, 1, subjects - 1, 1))
                keys.append(f"{g},{r},{'packed' if packed else 'wide'}")
                shapes += [(g, r)] if packed else []
    alone = [(g * r, g, r, 1, True, 0, 1, 1) for g, r in shapes]  # the long subject
    later = [(4 * g * 8, g, 8, 4, True, 0, 1, 1) for g in GROUPS]  # the same, 4 passes
    say(f"{len(runs)} kernel shapes at the full device, each one group alone")
    found = calibration(lengths, [*runs, *alone, *later])
    order = np.sort(lengths)[::-1]
    rates = {}
    for key, (m, g, r, passes, *_), (kernel, _) in zip(keys, runs, found, strict=False):
        rates[key] = gpu_work(np.array([m]), order[1:], (g, r, passes))[0] / kernel
    single = {}
    for (m, g, r, passes, *_), (kernel, _) in zip(alone, found[len(runs):], strict=False):
        single[f"{g},{r}"] = gpu_work(np.array([m]), order[:1], (g, r, passes))[1] / kernel
    later_passes = {}
    for (_, g, r, passes, *_), (kernel, _) in zip(later, found[len(runs) + len(alone):],
                                                   strict=False):
        first = gpu_work(np.array([g * r]), order[:1], (g, r, 1))[1] / single[f"{g},{r}"]
        later_passes[str(g)] = max(0.5, (kernel / first - 1) / (passes - 1))
    packing, shared_later, start = _packing(say, sms)
    for key in [k for k in rates if k.endswith("wide")]:  # in proportion to the packed
        packed = packing[key.replace("wide", "packed")]
        packing[key] = [v * rates[key] / rates[key.replace("wide", "packed")] for v in packed]
    say("the host's work per launch, and the GPU's besides the kernel")
    launch, unit, per_word, per_subject, side, per_result = _host_costs()
    return Model(kind="gpu", device=device_name("gpu"), version=model_version(), rates=rates,
                 single=single, later=later_passes, packing=packing,
                 later_shared=shared_later, start=start, launch=float(launch),
                 unit=float(unit), profile=float(per_word), subject=float(per_subject),
                 word=float(per_result), side=float(side), sms=sms)


#: the subjects' lengths of the runs of k blocks per SM (the shorter one for the kernel's
#: fixed start)
PACKING_N = (6400, 1600)

#: each of those launches (about a millisecond, its host's launch inside its events) is
#: the median of this many: as the median of three, one calibration of four on one H100 had
#: a shape's rate 12% off the others, which agree within 2%
PACKING_REPEATS = 5


def _packing(say: Callable[[str], None], sms: int
             ) -> tuple[dict[str, list[float]], dict[str, list[float]], float]:
    """A group's rate of each packed shape with k blocks on every SM (one ticket per block,
    subjects of PACKING_N[0], the first pass; k up to the resident count); per G a later
    pass with k blocks per SM (four passes against one, the largest R, PACKING_N[1]), in
    first passes; and the kernel's fixed start (seconds per launch, the median over the
    shapes: each shape's one block per SM at both lengths, a line through the two)."""
    long, short = PACKING_N
    most = {(g, r): occupancy(g, r, True) for g in GROUPS for r in ROWS
            if 4 * 24 * g * r <= PROFILE_BYTES}
    widest = {g: max(r for gg, r in most if gg == g) for g in GROUPS}

    def count(g: int, k: int) -> int:  # one ticket for each of k blocks per SM
        return k * sms * (BLOCK // g)

    first_short = max(count(g, k) for (g, _), k in most.items())
    lengths = np.concatenate([np.full(first_short, long), np.full(max(
        count(g, most[g, r]) for g, r in widest.items()), short)]).astype(np.int64)
    runs = [(g * r, g, r, 1, True, 0, count(g, k), 1, k * sms)
            for (g, r), top in most.items() for k in range(1, top + 1)]
    runs += [(g * r, g, r, 1, True, first_short, count(g, 1), 1, sms) for g, r in most]
    runs += [(4 * g * r, g, r, 4, True, first_short, count(g, k), 1, k * sms)
             for g, r in widest.items() for k in range(1, most[g, r] + 1)]
    say(f"{len(runs)} launches of k blocks per SM, one ticket each")
    found = iter(calibration(lengths, runs, repeats=PACKING_REPEATS))
    times = {shape: [next(found)[0] for _ in range(top)] for shape, top in most.items()}
    starts, rates = {}, {}
    for (g, r), ks in times.items():
        t_short = next(found)[0]
        cells = [float(pass_cells(n, g, g * r)) for n in (long, short)]
        rate = (cells[0] - cells[1]) / max(ks[0] - t_short, 1e-9)  # one block per SM
        starts[g, r] = min(max(t_short - cells[1] / rate, 0.0), 0.5 * t_short)
        rates[g, r] = [float(cells[0] / (t - starts[g, r])) for t in ks]
    later = {}
    for g, r in widest.items():
        first = float(pass_cells(short, g, g * r)) / np.array(rates[g, r])
        later[str(g)] = [float(max(0.5, ((next(found)[0] - starts[g, r]) / f - 1) / 3))
                         for f in first]
    packing = {f"{g},{r},packed": v for (g, r), v in rates.items()}
    return packing, later, float(np.median(list(starts.values())))


#: the host-cost launches: profiles x subjects (24 residues each, in random order, as a
#: launch's length order scatters them), and profiles of long queries for the profile words
HOST_GRID = [(u, n, 100) for u in (1, 16, 64) for n in (500, 20_000, 60_000)] + [
    (u, 500, 16_000) for u in (1, 4)]


def _host_costs() -> tuple[float, float, float, float, float, float]:
    """(host: s per launch, per profile, per profile word, per subject; GPU besides the
    kernel: s per launch, per result word), from the launches of HOST_GRID (units x
    subjects x query length; short subjects, so the kernels are short; the launches taking
    turns, their scores scattered into a matrix as large as a search's, each enqueued while
    a longer launch runs, as in a search): the host's time to enqueue one, and its GPU time
    less its kernel's (the medians of seven), each fitted in relative terms."""
    rng = np.random.default_rng(2)
    subjects = 100_000
    offsets = np.arange(subjects + 1, dtype=np.int64) * 24
    scanner = Scanner(rng.integers(0, 20, int(offsets[-1]), dtype=np.uint8), offsets,
                      None, Scoring(matrix="BLOSUM62").table, 11, 1, LOCAL, "none")
    found = host_launches(scanner, HOST_GRID, rng)
    host_terms = np.array([[1.0, u, profile_words(np.full(u, m), shape, 24), n]
                           for (u, n, m), (shape, _, _) in zip(HOST_GRID, found, strict=True)])
    host = np.array([max(seconds, 1e-5) for _, seconds, _ in found])  # fitted relative to it
    launch, unit, per_word, per_subject = (
        float(x) for x in nonnegative_fit(host_terms / host[:, None], np.ones(host.size)))
    side_terms = np.array([[1.0, u * n] for u, n, _ in HOST_GRID])
    side = np.array([max(seconds, 1e-6) for _, _, seconds in found])
    fixed, per_result = (
        float(x) for x in nonnegative_fit(side_terms / side[:, None], np.ones(side.size)))
    return launch, unit, per_word, per_subject, fixed, per_result


def nonnegative_fit(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Least squares of ``a x = b`` with ``x >= 0`` (costs cannot be negative): the best of
    the unconstrained fits over every subset of ``a``'s columns whose coefficients all come
    out non-negative, the other coefficients zero. Exact, and cheap for the few terms of a
    cost model (2^terms fits); clipping a negative coefficient of the full fit to zero
    instead would leave the others fitted to make up for it."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    best, best_x = float(b @ b), np.zeros(a.shape[1])
    for mask in range(1, 1 << a.shape[1]):
        cols = [k for k in range(a.shape[1]) if mask >> k & 1]
        x = np.linalg.lstsq(a[:, cols], b, rcond=None)[0]
        if np.any(x < 0):
            continue
        r = b - a[:, cols] @ x
        if float(r @ r) < best - 1e-15 * max(best, 1.0):
            best, best_x = float(r @ r), np.zeros(a.shape[1])
            best_x[cols] = x
    return best_x


#: seconds the calibration keeps the GPU busy before each launch it times (:func:`hold`):
#: longer than the host's work to enqueue any launch it times, so each one is queued
#: behind work as a search's launches are (its kernel timed alone, not the host's launch)
HOLD_SECONDS = 2e-3


def hold(seconds: float = HOLD_SECONDS) -> None:
    """Keep the current stream's GPU busy for ``seconds`` (one thread of kernels/search.cu's
    ``hold``)."""
    function("search.cu", "hold")((1,), (1,), (np.uint64(seconds * 1e9),))


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused (after one collection) while launches are
    timed one by one: a collection of a large heap falling inside a millisecond launch is not
    that launch's time. For the calibration and the benchmarks, never for searches."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _random_units(rng, m: int, units: int, packed: bool
                  ) -> tuple[list[np.ndarray], list[list[int]]]:
    """``units`` launch units of random m-residue queries (two each when ``packed``): the
    queries and their pairing."""
    queries = [rng.integers(0, 20, m, dtype=np.uint8) for _ in range(units * (1 + packed))]
    return queries, pair_up(list(range(len(queries))), packed)


def _timed_batch(scanner: Scanner, ch: Chunk, queries: list[np.ndarray],
                 units: list[list[int]], subjects: np.ndarray, out,
                 shape: tuple[int, int, int], longest: int | None = None, *,
                 held: bool = True, blocks: int | None = None) -> tuple[float, float, float]:
    """One launch alone (:meth:`Scanner.enqueue`, on at most ``blocks`` blocks where given,
    then its one wait, and the 32-bit rescoring of scores that may have saturated), with
    ``held`` enqueued while the GPU is busy (:func:`hold`), as a search's launches are: (its
    GPU seconds from the hold's end (or from the call) to its own, its kernel's by CUDA
    events, the host's to enqueue it less its waits for the GPU). Not held, the GPU waits
    for the host's launch of the kernel and its CUDA events count that too."""
    import cupy  # optional dependency: the GPU extra

    over = staging.workspace().counter()
    if held:
        hold()
    begin = mark()
    scanner.events.clear()
    waited, start = scanner.uploads.waited, time.perf_counter()
    scanner.enqueue(ch, queries, units, subjects, out, shape, longest, over, blocks=blocks)
    host = time.perf_counter() - start - (scanner.uploads.waited - waited)
    end = mark()
    saturated = scanner.uploads.read(over)[0]
    gpu, kernel = cupy.cuda.get_elapsed_time(begin, end) / 1e3, scanner.kernel_seconds()
    if saturated:
        scanner.rescore(ch, queries, query_rows(units), subjects, out)
    return gpu, kernel, host


def host_launches(scanner: Scanner, grid: list[tuple[int, int, int]], rng,
                  repeats: int = 7, rows: int = 512
                  ) -> list[tuple[tuple[int, int, int], float, float]]:
    """The costs of launches over the scanner's resident chunk besides their kernels: per
    (units, subjects, query length) of ``grid``, random queries (two per unit when packed)
    against that many subjects in random order, with the planned shape, their scores
    scattered into a matrix of at least ``rows`` rows (far larger than the L2 cache, as a
    search's). The launches take turns, as a search's differ one from the next, each timed
    by :func:`_timed_batch`. Returns per entry (shape, the host's seconds to enqueue it,
    its GPU seconds less its kernel's), each the median over ``repeats`` after two warm-up
    turns."""
    import cupy  # optional dependency: the GPU extra

    ch = next(scanner.chunks())
    runs = []
    for units, count, m in grid:
        queries, pairs = _random_units(rng, m, units, scanner.packed)
        # as a plan's
        subjects = rng.permutation(np.sort(ch.subjects.order))[:count].astype(np.int32)
        shape = scanner.shape([[queries[k] for k in u] for u in pairs], ch.lengths[subjects])
        runs.append((queries, pairs, subjects, shape, int(ch.lengths[subjects].max())))
    out = cupy.zeros((max(rows, max(len(q) for q, *_ in runs)), ch.size), cupy.int32)
    found: list[list[tuple[float, float]]] = [[] for _ in runs]
    with collector_paused():
        for turn in range(repeats + 2):
            for k, (queries, pairs, subjects, shape, longest) in enumerate(runs):
                gpu, kernel, host = _timed_batch(scanner, ch, queries, pairs, subjects, out,
                                                 shape, longest)
                if turn >= 2:
                    found[k].append((host, gpu - kernel))
    return [(run[3], statistics.median(h for h, _ in f), statistics.median(g for _, g in f))
            for run, f in zip(runs, found, strict=True)]


def calibration(lengths: np.ndarray, runs: list[tuple[int, ...]], seed: int = 0,
                repeats: int = 3) -> list[tuple[float, float]]:
    """Measure launches for the cost model (:func:`calibrate_gpu`): a random protein
    database of ``lengths`` resident on the current GPU; each run (m, G, R, passes, packed,
    first, count, units[, blocks]) scans ``units`` profiles of m-residue random queries (two
    each when packed) against the subjects ``first:first + count`` of the longest-first
    order with that shape, as a search's launch does (on a grid of at most ``blocks``
    blocks where given), each launch alone (:func:`_timed_batch` not held: the kernel's
    start then includes the host's launch of it, as the predictor's fitted ``start``
    always has). Returns per run (the kernel's seconds by CUDA events, the launch's GPU
    seconds with its results in place), each the median of ``repeats`` after a warm-up."""
    import cupy  # optional dependency: the GPU extra

    scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    rng = np.random.default_rng(seed)
    offsets = np.zeros(lengths.size + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    residues = rng.integers(0, 20, int(offsets[-1]), dtype=np.uint8)
    found = []
    for packed in sorted({run[4] for run in runs}):
        scanner = Scanner(residues, offsets, None, scoring.table, 11, 1, LOCAL, "none")
        scanner.packed = packed
        ch = next(scanner.chunks())
        order = np.argsort(-ch.lengths, kind="stable")
        for k, (m, g, r, passes, _, first, count, nu, *cap) in enumerate(runs):
            if runs[k][4] != packed:
                continue
            queries, units = _random_units(rng, m, nu, packed)
            out = cupy.zeros((len(queries), ch.size), cupy.int32)
            subjects = order[first:first + count].astype(np.int32)  # as a plan's
            with collector_paused():
                timed = [_timed_batch(scanner, ch, queries, units, subjects, out,
                                      (g, r, passes), int(ch.lengths[subjects].max()),
                                      held=False, blocks=cap[0] if cap else None)
                         for _ in range(repeats + 1)][1:]
            found.append((k, statistics.median(t[1] for t in timed),
                          statistics.median(t[0] for t in timed)))
    return [(kernel, whole) for _, kernel, whole in sorted(found)]


def timed_launches(scanner: Scanner, ch: Chunk, queries: list[np.ndarray]) -> list[dict]:
    """Every launch of one scan of ``queries`` over the chunk, timed: the units' rows
    (``m``), the subjects' lengths in launch order (``n``), the kernel ``shape``, the time
    the launch adds to the scan (``whole``: profiles, kernel, results in place; see
    ``trace.LaunchTime``) and its kernel (``kernel``), both by CUDA events, in seconds. For
    ``benchmarks/predictor_terms.py``."""
    import cupy  # optional dependency: the GPU extra

    scanner.trace.clear()
    with collector_paused():
        scanner.scores(ch, queries)
        cupy.cuda.get_current_stream().synchronize()
    log = list(scanner.trace.launches)
    live = sorted((k for k, q in enumerate(queries) if q.size > 0),
                  key=lambda k: -queries[k].size)
    units = [[queries[k] for k in u] for u in pair_up(live, scanner.packed)]
    _, batches, _, launches = scanner.launches(ch, units)
    rows = []
    for batch, launch, entry in zip(batches, launches, log, strict=True):
        chosen = [units[i] for i in batch.queries.tolist()]
        subj_n = ch.lengths[launch.subjects].astype(np.int64)
        rows.append(dict(m=unit_rows(chosen).tolist(), n=subj_n.tolist(),
                         shape=list(launch.shape), whole=entry[4], kernel=entry[5]))
    return rows
