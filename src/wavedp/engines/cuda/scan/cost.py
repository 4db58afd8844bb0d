"""The scan's cost model: the PaSWAS thesis's wavefront model (chapter 9) generalised to
wavedp's scan kernel, with the constants of a calibrated device (:class:`Model`).

The thesis times a batch by its steps: work rises, holds and falls across the wavefront, and
each step costs what the device runs at once (constants h_c per unit of work, h_wg per
work-group). wavedp's scan launch (``kernels/search.cu``) is a pool of work items (a profile
against a subject, taken by ticket in launch order), each a group of G lanes sweeping the
subject's columns pass by pass. The host prepares each launch while the one before runs
(:func:`pipelined`), so a launch adds about the longer of the host's work

    H = h_launch + h_unit * units + h_profile * profile words + h_subject * subjects

and the GPU's

    G = h_side + h_word * units * subjects
        + max(W / (rate(G, R) * fill(b)), max_i W_before_i / (rate * fill(b)) + c_i / single)

with W the lane-cells of all items (each pass: G*R rows over n + G - 1 columns, plus
PASS_CELLS per column; a query padded to whole passes; a subject to the longest of its warp,
plus the share b**-IDLE_COVER of the rest of its block's longest, the idle time of waiting
warps that the other blocks of an SM with b blocks do not cover), c_i one item's sweep alone
(its first pass at the rate ``single`` of its shape, each later pass ``later`` times that)
and W_before_i the work the tickets hand out before it, less the first wave's (a long item
taken last runs alone after the rest: the thesis's falling phase), fill(b) the share of the
full rate the launch's b blocks get: placed round-robin on the SMs, each SM with k of them
running at k times a group's calibrated rate with k blocks (``packing``), each ticket paying
the kernel's start h_start. A launch of at most WAVE_TICKETS tickets per block is timed
ticket by ticket instead (``waves.waves``): each ticket at its SM's k, shared by age while
tickets are queued (a full SM then at the full rate's steady speed, which the packing's one
ticket per block falls short of), its groups speeding up as its short ones end, each SM's
last blocks as the others end, a later pass priced per k (``later_shared``). A launch whose
own grid puts between one and two blocks on each SM runs on one block per SM where that is
predicted faster (:func:`launch_grid`). The formula times many launches at once
(:func:`kernel_seconds`): :func:`priced` one on its subjects, ``ranges.py`` a plan's on their
runs of lengths. The constants are measured by ``calibrate.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ...calibration import Model, memo
from .shapes import BLOCK, BLOCKS_PER_SM, GROUPS, PASS_CELLS, ROWS, WARP, launch_blocks, plan
from .waves import waves

#: a block's warps wait for its longest at every ticket and pass; with b blocks per SM the
#: others cover about 1 - b**-IDLE_COVER of that idle time (fitted on the H100: random-order
#: lognormal subjects against sorted ones at 1, 2, 4 and 8 blocks per SM, 1 and 4 passes)
IDLE_COVER = 0.7

#: a launch of at most this many tickets per block is timed ticket by ticket (``waves.waves``)
WAVE_TICKETS = 8


def _rate(model: Model, g: int, r: int, packed: bool) -> float:
    """Full-device lane-cells/s of shape (G, R): measured, else the nearest measured R at
    that G, else the model's flat rate of the packing."""
    return memo(model, ("rate", g, r, packed), lambda: _measured_rate(model, g, r, packed))


def _measured_rate(model: Model, g: int, r: int, packed: bool) -> float:
    kind = "packed" if packed else "wide"
    exact = model.rates.get(f"{g},{r},{kind}")
    if exact is not None:
        return exact
    near = [(abs(int(k.split(",")[1]) - r), v) for k, v in model.rates.items()
            if k.endswith(kind) and k.count(",") == 2 and int(k.split(",")[0]) == g]
    if near:
        return min(near)[1]
    return model.rates.get(kind, next(iter(model.rates.values())))


def shape_rate(model: Model, packed: bool, units: int, count: int, longest: int
               ) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """What the scan's planner weighs the kernel shapes by: the lane-cells per second of a
    launch of ``units`` profiles against ``count`` subjects (the longest ``longest``
    residues) with shapes (G, R) in ``passes`` passes (arrays, one element per shape): the
    shape's full rate times the fill of the grid it gets, at most every item (a profile
    against a subject) running at the rate of a group alone. Of many launches at once
    (``shapes.plans``): ``units``, ``count`` and ``longest`` columns, a launch each row."""
    sms = model.sms or 132
    full, single, _ = _shape_table(model, packed)

    def rate(g: np.ndarray, r: np.ndarray, passes: np.ndarray) -> np.ndarray:
        shape = _shape_index(g, r)
        blocks = launch_blocks(g, units, count, passes, longest, sms, model.grid_cap)
        return np.minimum(full[shape] * fills(model, packed, shape, blocks),
                          units * count * single[shape])

    return rate


def _shape_table(model: Model, packed: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per kernel shape (G, R) of GROUPS x ROWS, in that order: the full rate, the rate of
    a group alone and a later pass alone (:func:`_later`)."""
    def table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        shapes = [(g, r) for g in GROUPS for r in ROWS]
        return (np.array([_rate(model, g, r, packed) for g, r in shapes]),
                np.array([_single(model, g, r) for g, r in shapes]),
                np.array([_later(model, g) for g, _ in shapes]))

    return memo(model, ("shapes", packed), table)


def _shape_index(g, r):
    """The place of shapes (G, R) (numbers or arrays) in :func:`_shape_table`'s order."""
    return np.searchsorted(GROUPS, g) * len(ROWS) + np.searchsorted(ROWS, r)


def launch_shape(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
                 packed: bool) -> tuple[int, int, int]:
    """The kernel shape (G, R, passes) the engine plans for a launch of units of ``unit_m``
    rows against subjects of ``subj_n`` residues, weighed by :func:`shape_rate`."""
    subj_n = np.asarray(subj_n)
    return plan(int(np.max(unit_m)), float(np.mean(subj_n)), alphabet,
                shape_rate(model, packed, len(unit_m), len(subj_n), int(subj_n.max())))


def _single(model: Model, g: int, r: int) -> float:
    """One group of G lanes with R rows each alone, its first pass: measured, else scaled
    from the nearest measured shape (a group alone runs at about the same steps per second,
    so in proportion to its lanes and rows)."""
    key = f"{g},{r}"
    if key in model.single:
        return model.single[key]
    near = min(model.single, key=lambda k: (abs(int(k.split(",")[0]) - g),
                                            abs(int(k.split(",")[1]) - r)))
    g0, r0 = (int(x) for x in near.split(","))
    return model.single[near] * g * r / (g0 * r0)


def _later(model: Model, g: int) -> float:
    """A later pass of a group alone (it reads the pass above from scratch, its latency
    exposed), in first passes."""
    return model.later.get(str(g), 1.0)


def later_shared(model: Model, g: int, most: int) -> np.ndarray:
    """A later pass with k = 1 .. ``most`` blocks on the SM, in first passes (more blocks hide
    more of the scratch rows' latency): calibrated, the last one for more blocks."""
    found = np.atleast_1d(np.asarray(model.later_shared.get(str(g)) or _later(model, g),
                                     np.float64))
    return found[np.minimum(np.arange(most), found.size - 1)]


def blocked(subj_n: np.ndarray, groups: int) -> np.ndarray:
    """Each subject's columns as ``groups`` consecutive ones sweep them together (a warp, or
    a block): they move on when their longest is done, so each counts as that."""
    n = np.asarray(subj_n, np.float64)
    pad = -n.size % groups
    most = np.concatenate([n, np.zeros(pad)]).reshape(-1, groups).max(axis=1)
    return np.repeat(most, groups)[:n.size]


def speeds(model: Model, g: int, r: int, packed: bool) -> np.ndarray:
    """A group's lane-cells per second of shape (G, R) with k = 1, 2, ... blocks on its SM
    (element k - 1; as many k as are resident at once): calibrated, else one block running
    each group at the rate of a group alone and more blocks sharing the full rate."""
    return memo(model, ("speeds", g, r, packed), lambda: _speeds(model, g, r, packed))


def _speeds(model: Model, g: int, r: int, packed: bool) -> np.ndarray:

    found = model.packing.get(f"{g},{r},{'packed' if packed else 'wide'}")
    if found:
        return np.asarray(found, np.float64)
    per_sm = _rate(model, g, r, packed) / ((model.sms or 132) * (BLOCK // g))
    k = np.arange(1, BLOCKS_PER_SM + 1)
    return np.minimum(_single(model, g, r), per_sm / k)


def fills(model: Model, packed: bool, shape: np.ndarray | int, blocks: np.ndarray | int,
          ticket: np.ndarray | float | None = None) -> np.ndarray:
    """The share of the full rate of shapes ``shape`` (indices in GROUPS x ROWS order) a
    launch of ``blocks`` blocks runs at (arrays, or numbers, broadcast together): the blocks
    spread over the SMs (at most the resident ones each), each SM running its k blocks'
    groups at their rate with k blocks, against every SM full. With ``ticket`` (a ticket's
    lane-cells per group) each ticket also pays the kernel's start, which the other blocks
    of a fuller SM hide."""
    table, mosts = memo(model, ("speeds", packed), lambda: _speeds_table(model, packed))
    shape, blocks = np.broadcast_arrays(shape, blocks)
    most, row = mosts[shape], shape  # the row of ``through`` of each, or None: its own
    if ticket is not None:
        ticket = np.asarray(ticket, np.float64)[..., None]
        table, row = ticket / (ticket / table[shape] + model.start), None
    sms = model.sms or 132
    # an SM's lane-cells/s per group of a block with k = 0 .. most blocks (nan past most)
    through = np.concatenate((np.zeros(table.shape[:-1] + (1,)),
                              np.arange(1, table.shape[-1] + 1) * table), axis=-1)

    def at(k: np.ndarray) -> np.ndarray:
        if row is not None:
            return through[row, k]
        return np.take_along_axis(through, k[..., None], axis=-1)[..., 0]

    low, extra = np.divmod(np.clip(blocks, 1, most * sms).astype(np.int64), sms)
    upper = np.where(extra > 0, at(np.minimum(low + 1, most)), 0.0)
    return ((sms - extra) * at(low) + extra * upper) / (sms * at(most))


def _speeds_table(model: Model, packed: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`speeds` of each shape of GROUPS x ROWS (rows padded with nan), and how many."""
    found = [speeds(model, g, r, packed) for g in GROUPS for r in ROWS]
    table = np.full((len(found), max(s.size for s in found)), np.nan)
    for k, s in enumerate(found):
        table[k, :s.size] = s
    return table, np.array([s.size for s in found])


def pass_cells(n: np.ndarray | float, g: int, t: int) -> np.ndarray | float:
    """Lane-cells of one pass of a G-lane group with T = G*R rows over ``n`` columns: the
    pipeline's fill and the per-column pass cost included."""
    return t * (n + g - 1) + PASS_CELLS * n


def gpu_work(unit_m: np.ndarray, subj_n: np.ndarray, shape: tuple[int, int, int]
             ) -> tuple[float, float]:
    """(W, C): the lane-cells of a launch of units of ``unit_m`` rows against subjects of
    ``subj_n`` columns (in launch order, each padded to its warp's longest) with kernel shape
    (G, R, passes), and of its longest item."""
    g, r, _ = shape
    t = g * r
    passes = np.maximum(-(-np.asarray(unit_m, np.int64) // t), 1)
    n = blocked(subj_n, WARP // g)
    work = float(passes.sum()) * float(pass_cells(n, g, t).sum())
    critical = float(passes.max()) * float(pass_cells(float(n.max()), g, t))
    return work, critical


def profile_words(unit_m: np.ndarray, shape: tuple[int, int, int], alphabet: int) -> int:
    """The words of a launch's profiles (each unit its own passes)."""
    t = shape[0] * shape[1]
    return int(np.maximum(-(-np.asarray(unit_m, np.int64) // t), 1).sum()) * t * alphabet


#: a launch of more subjects is predicted from a sample of about this many of its blocks
SAMPLE_BLOCKS = 4096


def gpu_seconds(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
                packed: bool, shape: tuple[int, int, int] | None = None) -> float:
    """Predicted seconds of one scan launch (see :func:`launch_parts`) among others of its
    kind: the longer of the host's work and the GPU's (the host prepares a launch while the
    one before runs)."""
    return max(launch_parts(model, unit_m, subj_n, alphabet, packed, shape))


#: the share of the host's work on a launch done before it waits for the input copy of the
#: launch before (Staging.put): the queries gathered; after it, the copy and the kernels
#: launched (0.22 of 0.50 ms on the H100 machine, timed step by step)
BEFORE_WAIT = 0.45


def pipelined(host: list[float], gpu: list[float], before: float = BEFORE_WAIT
              ) -> list[float]:
    """The seconds each launch adds to a scan, from each one's host and GPU seconds: the
    host prepares launch k while k - 1 runs, waiting (after its share ``before`` of the
    work) until the input copy of k - 1, the first step of k - 1 on the GPU, is done; a
    launch starts on the GPU once the one before has ended and the host has enqueued it.
    The first launch adds both; a short one after a long one adds little more than its GPU
    time; a run of short ones adds the host's time each."""
    added, ready, start, end = [], 0.0, 0.0, 0.0
    for k, (h, g) in enumerate(zip(host, gpu, strict=True)):
        waited = ready + before * h if k == 0 else max(ready + before * h, start)
        ready = waited + (1 - before) * h
        start = max(end, ready)
        added.append(start + g - end)
        end = start + g
    return added


class Priced(NamedTuple):
    """A launch's predicted host and GPU seconds, and the kernel shape and grid planned."""

    host: float
    gpu: float
    shape: tuple[int, int, int]
    blocks: int


def launch_parts(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
                 packed: bool, shape: tuple[int, int, int] | None = None, wide: bool = False
                 ) -> tuple[float, float]:
    """Predicted (host, GPU) seconds of one scan launch, see :func:`priced`."""
    return priced(model, unit_m, subj_n, alphabet, packed, shape, wide)[:2]


def priced(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
           packed: bool, shape: tuple[int, int, int] | None = None, wide: bool = False
           ) -> Priced:
    """Predicted (host, GPU) seconds of one scan launch, its shape and grid: units of
    ``unit_m`` rows against subjects of ``subj_n`` residues in the order the launch takes
    them, with kernel ``shape`` (G, R, passes; default the one the engine plans). The host's
    work is :func:`host_seconds`; the GPU's is :func:`side_seconds` and the kernel (whose
    tickets each pay the kernel's start, see :func:`fills`).

    Items go out by ticket, profile-major, each profile's subjects in launch order; an item
    started once the work before it is done (at the full rate; the first wave of tickets, one
    per block, starts at once) ends its own sweep later (at one group's rate), so the launch
    lasts the longest of those ends, or its work at the full rate if that is longer: the
    thesis's falling phase, where a long item left for last runs alone. A launch of few
    tickets per block is timed ticket by ticket (``waves.waves``). A subject counts as its warp's
    longest, plus the share of its block's longest that the other blocks of its SM do not
    cover. A long launch is measured on every k-th block of subjects (and the longest's).
    The grid is :func:`launch_grid`'s (``wide``: of the wide choice)."""
    unit_m = np.asarray(unit_m, np.int64)
    count = len(subj_n)
    shape = shape or launch_shape(model, unit_m, subj_n, alphabet, packed)
    blocks, kernel = _grid(model, unit_m, subj_n, packed, shape, True, wide)
    return Priced(host_seconds(model, unit_m.size, count,
                               profile_words(unit_m, shape, alphabet)),
                  side_seconds(model, unit_m.size, count) + kernel, shape, blocks)


#: the wide grid choice weighs launches of at most this many tickets per block of their own
#: grid (where block placement, not the ticket queue, spreads the long tickets; measured up
#: to two)
WIDE_TICKETS = 2

#: nor launches predicted shorter than this on their own grid (seconds): the choice costs two
#: more kernel predictions a launch, and most of the many-pass launches of few tickets are short
WIDE_LEAST = 5e-3


def launch_grid(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, packed: bool,
                shape: tuple[int, int, int], wide: bool = False) -> int:
    """The blocks of a scan launch with kernel ``shape``: its own grid
    (``shapes.launch_blocks``), or one block per SM where its own puts between
    one and two on each SM and one per SM is predicted faster. Then the tickets left after
    the first wave go to the blocks that end first, where the own grid leaves it to block
    placement which long tickets share an SM: a 6-pass launch of 160 tickets measured
    13.8 ms on 132 blocks, and 14-23.5 ms from repeat to repeat on 160 (single-pass
    launches, whose SMs hold more blocks' latency, are faster on their own grid, as
    predicted). ``wide`` (the engine's plan): a multi-pass launch of two or more blocks per
    SM, at most WIDE_TICKETS tickets per block and WIDE_LEAST seconds or more also weighs
    the two whole numbers of blocks per SM below its own grid (a 13-pass launch of 508
    tickets measured 23.5 ms on 264 blocks against 38.7 ms on its own 482). A capped
    model's (``calibration.capped``): its own grid, capped."""
    return _grid(model, np.asarray(unit_m, np.int64), subj_n, packed, shape, False, wide)[0]


def grids(model: Model, g, units, count, passes, longest, wide: bool) -> np.ndarray:
    """The grids :func:`launch_grid` weighs for launches of kernel shapes with G ``g`` and
    ``passes`` (numbers, or arrays of launches): its own, then up to two others (0 for
    none), on the first axis."""
    sms = model.sms or 132
    own = launch_blocks(g, units, count, passes, longest, sms, model.grid_cap)
    below = -(-own // sms) - 1  # the whole numbers of blocks per SM below its own
    many = (own > sms) & (model.grid_cap is None)  # else a grid forced, or its own alone
    wider = many & wide & (passes > 1) & (
        -(-count // (BLOCK // g)) * units <= WIDE_TICKETS * own)
    return np.array([own, np.maximum(wider * below, many & (own < 2 * sms)) * sms,
                     wider * (below > 1) * (below - 1) * sms])


def _settled(weighed: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Whether each launch keeps its own grid, the wide choice's others not worth pricing
    (its own priced shorter than WIDE_LEAST)."""
    return (weighed[2] > 0) & (kernel[0] < WIDE_LEAST)


def fastest(weighed: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Each launch's grid, an index into :func:`grids`'s (``kernel``: the kernel's seconds
    on each, inf where none): the fastest (the first of equals), or its own."""
    return np.where(_settled(weighed, kernel), 0, np.argmin(kernel, axis=0))


def _grid(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, packed: bool,
          shape: tuple[int, int, int], priced: bool, wide: bool = False
          ) -> tuple[int, float]:
    """(:func:`launch_grid`, the kernel's predicted seconds on it: inf unless ``priced``
    or the grid was chosen by them)."""
    g, _, passes = shape
    weighed = grids(model, g, unit_m.size, len(subj_n), passes, int(np.max(subj_n)), wide)
    kernel = np.full(3, np.inf)
    seconds = _kernel(model, unit_m, subj_n, packed, shape) if priced or weighed[1] else None
    for k in np.flatnonzero(weighed).tolist():
        if seconds is not None and not _settled(weighed, kernel):
            kernel[k] = seconds(int(weighed[k]))
    k = int(fastest(weighed, kernel))
    return int(weighed[k]), float(kernel[k])


def _kernel(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, packed: bool,
            shape: tuple[int, int, int]) -> Callable[[int], float]:
    """The kernel's predicted seconds for :func:`priced`, of the blocks of its grid: ticket
    by ticket (``waves.waves``) where few, else by :func:`kernel_seconds` on its subjects (a
    sample of whole blocks of a long launch's, the longest subject's among them)."""
    subj_n = np.asarray(subj_n, np.float64)
    g, r, _ = shape
    t, groups, sms = g * r, BLOCK // g, model.sms or 132
    unit_passes = np.maximum(-(-unit_m // t), 1)
    count = subj_n.size
    every = max(1, count // (SAMPLE_BLOCKS * groups))  # every k-th block of subjects
    if every > 1:
        starts = np.union1d(np.arange(0, count, every * groups),
                            int(np.argmax(subj_n)) // groups * groups)
        subj_n = subj_n[(starts[:, None] + np.arange(groups)).ravel().clip(max=count - 1)]
    warp = blocked(subj_n, WARP // g)
    spare = blocked(subj_n, groups) - warp  # a block's longest past its warp's

    def seconds(blocks: int) -> float:
        cost = pass_cells(warp + min(1.0, (blocks / sms) ** -IDLE_COVER) * spare, g, t)
        if -(-count // groups) * unit_m.size <= WAVE_TICKETS * blocks and every == 1:
            speed = speeds(model, g, r, packed)
            shared = later_shared(model, g, speed.size)
            return waves(cost, unit_passes.astype(np.float64), (_later(model, g), shared),
                         groups, blocks, speed, _single(model, g, r), sms=sms,
                         steady=_steady(model, g, r, packed, speed, shared[-1]))
        work = cost * (count / subj_n.size)
        sweeps = Sweeps(*(np.array([x]) for x in (g, r, blocks, count, unit_m.size,
                                                  float(work.sum()), work.size)))
        return float(kernel_seconds(model, packed, sweeps, unit_passes,
                                    np.cumsum(work) - work, pass_cells(warp, g, t))[0])

    return seconds


class Sweeps(NamedTuple):
    """Launches on a grid each, as arrays (one element each): kernel shapes (G, R), blocks,
    subjects, units, the lane-cells of a unit's pass over all the subjects and how many
    pieces (subjects, or runs of them) the launch is priced on."""

    g: np.ndarray
    r: np.ndarray
    blocks: np.ndarray
    count: np.ndarray
    units: np.ndarray
    cells: np.ndarray
    pieces: np.ndarray


def kernel_seconds(model: Model, packed: bool, sweeps: Sweeps, unit_passes: np.ndarray,
                   before: np.ndarray, alone: np.ndarray) -> np.ndarray:
    """The kernel's seconds of each launch of ``sweeps`` by the formula of :func:`priced`:
    its work at the full rate times its grid's fill, or the latest end of a unit's sweep of
    a piece, if later. ``unit_passes``: the passes of each launch's units, launch by launch;
    ``before``, ``alone``: of each launch's pieces, launch by launch, the lane-cells of a
    unit's pass over the subjects before the piece's last (or its longest, counted as its
    last), and of that one's pass."""
    g, r, blocks, count, units, cells, pieces = sweeps
    full, single, later = _shape_table(model, packed)
    index = _shape_index(g, r)
    first = np.cumsum(units) - units  # each launch's first unit
    passes = np.add.reduceat(unit_passes, first).astype(np.float64)
    rate = full[index] * fills(model, packed, index, blocks, cells / count * passes / units)
    total = passes * cells / rate
    lead = total * np.minimum(1.0, blocks / (-(-count // (BLOCK // g)) * units))
    launch = np.repeat(np.arange(units.size), units)
    ahead = np.cumsum(unit_passes) - unit_passes
    ahead -= ahead[first][launch]  # the passes of a launch's units before each
    # a unit ends no later than one after it of as many passes or more: those left out (the
    # keys grow launch by launch from the last, so a unit is weighed against its own only)
    most = (units.size - launch) * (int(unit_passes.max()) + 1) + unit_passes
    top = np.maximum.accumulate(most[::-1])[::-1]
    kept = np.flatnonzero(most > np.append(top[1:], 0))
    on, p = launch[kept], unit_passes[kept]
    rank = np.arange(kept.size) - np.searchsorted(on, on)  # of the kept of its launch
    # the kept unit of rank k of each launch (if any) sweeps a piece's last, ending at
    # max(0, start + slope * before) + tail * alone; the others' ends taken as 0
    ranks = (rank.max() + 1, units.size)
    start, slope, tail = np.full(ranks, -np.inf), np.zeros(ranks), np.zeros(ranks)
    start[rank, on] = ahead[kept] * cells[on] / rate[on] - lead[on]
    slope[rank, on] = p / rate[on]
    tail[rank, on] = (1 + (p - 1) * later[index[on]]) / single[index[on]]
    at = np.repeat(np.arange(units.size), pieces) if units.size > 1 else 0  # their launches
    ends = np.zeros(before.size)
    for k in range(ranks[0]):
        np.maximum(ends, np.maximum(0.0, start[k, at] + slope[k, at] * before)
                   + tail[k, at] * alone, out=ends)
    return np.maximum(total, np.maximum.reduceat(ends, np.cumsum(pieces) - pieces))


def _steady(model: Model, g: int, r: int, packed: bool, speed: np.ndarray, later: float
            ) -> float:
    """How much faster an SM full of blocks runs while tickets are queued than the packing
    calibration's one ticket per block says (its blocks end apart, and each one's end idles
    part of the SM): the full rate, a steady two-pass launch, as a first pass (a later pass
    costing ``later`` first passes), over the packing's last k. On the H100 1.00-1.10; it
    brings the waves of full grids with several tickets per block from 8-11% slow to within
    3% of the measured launches."""
    first = _rate(model, g, r, packed) * (1 + later) / 2
    full = (model.sms or 132) * (BLOCK // g) * speed.size * speed[-1]
    return float(max(1.0, first / full))


def host_seconds(model: Model, units, count, words):
    """The host's predicted work for launches of ``units`` profiles (of ``words`` words in
    all) against ``count`` subjects (numbers or arrays): their inputs gathered and sent,
    their kernels launched (their profiles are built on the GPU from the queries gathered
    here)."""
    return host_fixed(model, units, count) + model.profile * words


def host_fixed(model: Model, units, count):
    """The host's work for launches of ``units`` profiles x ``count`` subjects (numbers or
    arrays) besides their profile words."""
    return model.launch + model.unit * units + model.subject * count


def side_seconds(model: Model, units: int, count: int) -> float:
    """GPU seconds of a launch of ``units`` profiles x ``count`` subjects besides its scan
    kernel: the input copy, the profiles built, the results scattered."""
    return model.side + model.word * units * count
