"""The performance predictor: the PaSWAS thesis's wavefront model (chapter 9) generalised to
wavedp's scan kernel, calibrated once per device and used to pick a partitioning.

The thesis times a batch by its steps: work rises, holds and falls across the wavefront, and
each step costs what the device runs at once (constants h_c per unit of work, h_wg per
work-group). wavedp's scan launch (``kernels/search.cu``) is a pool of work items (a profile
against a subject, taken by ticket in launch order), each a group of G lanes sweeping the
subject's columns pass by pass. The host prepares each launch while the one before runs
(``pipelined``), so a launch adds about the longer of the host's work

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
ticket by ticket instead (``_waves``): each ticket at its SM's k, shared by age while
tickets are queued (OLDER_SHARE; a full SM then at the full rate's steady speed, which the
packing's one ticket per block falls short of), its groups speeding up as its short ones
end, each SM's last blocks as the others end, a later pass priced per k (``later_shared``).
The constants are measured by :func:`calibrate` with CUDA events around the kernel alone: rate
per kernel shape (G, R) and packing (lane-cells per second with the device full), single per
shape, later per G, a group's rate with k = 1 .. resident blocks per SM per shape, a later
pass per G and k, and h_start; and, from a grid of small launches each enqueued while the GPU
is busy, as a search's are, h_launch, h_unit, h_profile and h_subject (the host's time to
enqueue it) and h_side and h_word (its GPU time besides the kernel), each by least squares
with every cost >= 0 (:func:`nonnegative_fit`). The scan's planner
(``engines.cuda.search.plan``) picks each launch's shape by these rates too. The CPU engine's
model is ``T = h_call * queries + cells / rate`` (its kernel pads nothing).

A partitioning's launches are its batches, except that a launch shorter on the GPU than the
host's work to enqueue one (a run of them goes at the host's pace) joins the launch before it
where both have the same units and the joined one fits the memory budget (``coalesce``). A
launch whose own grid puts between one and two blocks on each SM runs on one block per SM
where that is predicted faster (``launch_grid``).
``auto`` prices the candidates in turn and stops pricing one once its launches' GPU seconds,
or its host's, pass the best total so far.

``wavedp calibrate`` stores the constants per device in the user's cache directory; a
calibration of another device or another wavedp version is an error naming the file.
Without one, the constants measured on the H100 of the development machines are used.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable

import numpy as np
from numba import njit

from ..errors import InputError
from . import h100
from . import partition as part

#: the calibration file's format (a change makes older files an error)
FORMAT = 8
#: a block's warps wait for its longest at every ticket and pass; with b blocks per SM the
#: others cover about 1 - b**-IDLE_COVER of that idle time (fitted on the H100: random-order
#: lognormal subjects against sorted ones at 1, 2, 4 and 8 blocks per SM, 1 and 4 passes)
IDLE_COVER = 0.7


@dataclasses.dataclass
class Model:
    """Calibrated constants of one device (``kind`` gpu or cpu)."""

    kind: str
    device: str
    version: str
    rates: dict[str, float]  # GPU: "G,R,packed" -> lane-cells/s; CPU: "cells" -> cells/s
    single: dict[str, float] = dataclasses.field(default_factory=dict)  # GPU: "G,R" -> one
    # group of G lanes alone, its first pass, lane-cells/s
    later: dict[str, float] = dataclasses.field(default_factory=dict)  # GPU: G -> a later
    # pass of a group alone, in first passes
    packing: dict[str, list[float]] = dataclasses.field(default_factory=dict)  # GPU:
    # "G,R,packing" -> a group's lane-cells/s (first pass) with k = 1, 2, ... blocks on its
    # SM, as many k as are resident at once
    later_shared: dict[str, list[float]] = dataclasses.field(default_factory=dict)  # GPU:
    # G -> a later pass with k = 1, 2, ... blocks on the SM, in first passes
    launch: float = 0.0  # s per launch (GPU, host) or per query call (CPU)
    start: float = 0.0  # GPU: s of a kernel's fixed start (its blocks placed, profiles read)
    unit: float = 0.0  # GPU, host: s per profile of a launch (its queries gathered)
    profile: float = 0.0  # GPU, host: s per profile word
    subject: float = 0.0  # GPU, host: s per subject of a launch (its indices sent)
    word: float = 0.0  # GPU, on the GPU: s per result word (profile x subject) scattered
    side: float = 0.0  # GPU, on the GPU: s per launch besides its kernel and the per-word
    # scatter (the input copy, the profiles built, the scatter's launch)
    sms: int = 0
    calibrated: bool = True
    seconds: float = 0.0  # how long the calibration took


def _version() -> str:
    from .. import __version__

    return f"{__version__} (format {FORMAT})"


def device_name(kind: str) -> str:
    """What a calibration is tied to: the GPU's name and multiprocessor count ("" without
    a usable GPU), or the CPU's model and core count."""
    if kind == "gpu":
        from .. import device as _device

        if not _device.gpu_status()[0]:
            return ""
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        return f"{name}, {props['multiProcessorCount']} SMs"
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f
                          if line.startswith("model name")), model)
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {cores} cores"


def cache_path(kind: str) -> str:
    """The calibration file of ``kind`` (gpu or cpu) in the user's cache directory."""
    import platformdirs

    return os.path.join(platformdirs.user_cache_dir("wavedp"), f"calibration-{kind}.json")


def save(model: Model) -> str:
    """Write ``model`` to its cache file atomically; returns the path."""
    path = cache_path(model.kind)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(dataclasses.asdict(model), f, indent=1)
    os.replace(tmp, path)
    return path


def load(kind: str, device: str | None = None) -> Model | None:
    """The stored calibration of ``kind`` (None if there is none); an InputError for one of
    another device (``device``: this one's name) or wavedp version, or an unreadable one."""
    path = cache_path(kind)
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            model = Model(**json.load(f))
    except (OSError, ValueError, TypeError) as exc:
        raise InputError(f"file {path}: not a wavedp calibration ({exc}); run wavedp "
                         "calibrate again") from None
    if model.version != _version():
        raise InputError(f"file {path}: calibrated with wavedp {model.version}, this is "
                         f"{_version()}; run wavedp calibrate --device {kind} again")
    device = device if device is not None else device_name(kind)
    if device and model.device != device:
        raise InputError(f"file {path}: calibrated on {model.device}, this is {device}; run "
                         f"wavedp calibrate --device {kind} again")
    return model


#: the constants of an H100 (``search.h100``), used where no calibration exists
DEFAULT_GPU = Model(kind="gpu", device="default (H100)", version="", calibrated=False,
                    rates=h100.RATES, single=h100.SINGLE, later=h100.LATER,
                    packing=h100.PACKING, later_shared=h100.LATER_SHARED, start=h100.START,
                    launch=h100.LAUNCH, unit=h100.UNIT, profile=h100.PROFILE,
                    subject=h100.SUBJECT, word=h100.WORD, side=h100.SIDE,
                    sms=132)
DEFAULT_CPU = Model(kind="cpu", device="default", version="", calibrated=False,
                    rates={"cells": 5e9}, launch=1e-4)

_MODELS: dict[str, Model] = {}


def kernel_only(model: Model, start: bool = True) -> Model:
    """``model`` with the host's costs and the GPU's besides the kernel at zero (with
    ``start`` False, the kernel's fixed start too): what predicts a kernel alone."""
    return dataclasses.replace(model, launch=0.0, unit=0.0, profile=0.0, subject=0.0,
                               word=0.0, side=0.0, **({} if start else {"start": 0.0}))


def model_for(kind: str) -> Model:
    """The model of this process's ``kind`` device: its calibration, else the defaults
    (loaded once per process)."""
    if kind not in _MODELS:
        _MODELS[kind] = load(kind) or (DEFAULT_GPU if kind == "gpu" else DEFAULT_CPU)
    return _MODELS[kind]


# ---- the GPU scan's model ----------------------------------------------------------------------

def _memo(model: Model, key: tuple, compute: Callable[[], object]):
    """``compute()`` once per model and ``key`` (a model's constants do not change once it
    is made; the planner asks for the same shapes' rates thousands of times)."""
    cache = model.__dict__.setdefault("_memo", {})
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def _rate(model: Model, g: int, r: int, packed: bool) -> float:
    """Full-device lane-cells/s of shape (G, R): measured, else the nearest measured R at
    that G, else the model's flat rate of the packing."""
    return _memo(model, ("rate", g, r, packed), lambda: _measured_rate(model, g, r, packed))


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
    against a subject) running at the rate of a group alone."""
    from ..engines.cuda import search as scan

    sms = model.sms or 132
    full, single, fills = _shape_table(model, packed)

    def rate(g: np.ndarray, r: np.ndarray, passes: np.ndarray) -> np.ndarray:
        shape = _shape_index(g, r)
        blocks = scan.launch_blocks(g, units, count, passes, longest, sms)
        return np.minimum(full[shape] * fills[shape, blocks], units * count * single[shape])

    return rate


def _shape_table(model: Model, packed: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per kernel shape (G, R) of GROUPS x ROWS, in that order: the full rate, the rate of a
    group alone, and the fill of each grid of 0 .. BLOCKS_PER_SM x SMs blocks."""
    from ..engines.cuda import search as scan

    def table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        shapes = [(g, r) for g in scan.GROUPS for r in scan.ROWS]
        grids = np.arange(scan.BLOCKS_PER_SM * (model.sms or 132) + 1)
        return (np.array([_rate(model, g, r, packed) for g, r in shapes]),
                np.array([_single(model, g, r) for g, r in shapes]),
                np.array([_fill(model, g, r, packed, grids, None) for g, r in shapes]))

    return _memo(model, ("shapes", packed), table)


def _shape_index(g, r):
    """The place of shapes (G, R) (numbers or arrays) in :func:`_shape_table`'s order."""
    from ..engines.cuda import search as scan

    return np.searchsorted(scan.GROUPS, g) * len(scan.ROWS) + np.searchsorted(scan.ROWS, r)


def launch_shape(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
                 packed: bool) -> tuple[int, int, int]:
    """The kernel shape (G, R, passes) the engine plans for a launch of units of ``unit_m``
    rows against subjects of ``subj_n`` residues, weighed by :func:`shape_rate`."""
    from ..engines.cuda import search as scan

    subj_n = np.asarray(subj_n)
    return scan.plan(int(np.max(unit_m)), float(subj_n.mean()), alphabet, shape_rate(
        model, packed, len(unit_m), subj_n.size, int(subj_n.max())))


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
    return _memo(model, ("speeds", g, r, packed), lambda: _speeds(model, g, r, packed))


def _speeds(model: Model, g: int, r: int, packed: bool) -> np.ndarray:
    from ..engines.cuda.search import BLOCK, BLOCKS_PER_SM

    found = model.packing.get(f"{g},{r},{'packed' if packed else 'wide'}")
    if found:
        return np.asarray(found, np.float64)
    per_sm = _rate(model, g, r, packed) / ((model.sms or 132) * (BLOCK // g))
    k = np.arange(1, BLOCKS_PER_SM + 1)
    return np.minimum(_single(model, g, r), per_sm / k)


def fill(model: Model, g: int, r: int, packed: bool, blocks: int,
         ticket: float | None = None) -> float:
    """The share of the full rate of shape (G, R) a launch of ``blocks`` blocks runs at: the
    blocks spread over the SMs (at most the resident ones each), each SM running its k
    blocks' groups at their rate with k blocks, against every SM full. With ``ticket`` (a
    ticket's lane-cells per group) each ticket also pays the kernel's start, which the other
    blocks of a fuller SM hide."""
    if not ticket:
        fills = _shape_table(model, packed)[2]
        return float(fills[_shape_index(g, r), min(max(int(blocks), 0), fills.shape[1] - 1)])
    return _fill(model, g, r, packed, blocks, ticket)


def _fill(model: Model, g: int, r: int, packed: bool, blocks,
          ticket: float | None):
    speed = speeds(model, g, r, packed)
    if ticket:
        speed = ticket / (ticket / speed + model.start)
    sms, most = model.sms or 132, speed.size
    # an SM's lane-cells/s per group of a block with k = 0 .. most blocks
    through = np.concatenate(([0.0], np.arange(1, most + 1) * speed))
    low, extra = np.divmod(np.clip(blocks, 1, most * sms).astype(np.int64), sms)
    upper = np.where(extra > 0, through[np.minimum(low + 1, most)], 0.0)
    share = ((sms - extra) * through[low] + extra * upper) / (sms * through[most])
    return float(share) if share.ndim == 0 else share


def _pass_cells(n: np.ndarray | float, g: int, t: int) -> np.ndarray | float:
    """Lane-cells of one pass of a G-lane group with T = G*R rows over ``n`` columns: the
    pipeline's fill and the per-column pass cost included."""
    from ..engines.cuda.search import PASS_CELLS

    return t * (n + g - 1) + PASS_CELLS * n


def gpu_work(unit_m: np.ndarray, subj_n: np.ndarray, shape: tuple[int, int, int]
             ) -> tuple[float, float]:
    """(W, C): the lane-cells of a launch of units of ``unit_m`` rows against subjects of
    ``subj_n`` columns (in launch order, each padded to its warp's longest) with kernel shape
    (G, R, passes), and of its longest item."""
    from ..engines.cuda.search import WARP

    g, r, _ = shape
    t = g * r
    passes = np.maximum(-(-np.asarray(unit_m, np.int64) // t), 1)
    n = blocked(subj_n, WARP // g)
    work = float(passes.sum()) * float(_pass_cells(n, g, t).sum())
    critical = float(passes.max()) * float(_pass_cells(float(n.max()), g, t))
    return work, critical


def profile_words(unit_m: np.ndarray, shape: tuple[int, int, int], alphabet: int) -> int:
    """The words of a launch's profiles (each unit its own passes)."""
    t = shape[0] * shape[1]
    return int(np.maximum(-(-np.asarray(unit_m, np.int64) // t), 1).sum()) * t * alphabet


#: a launch of more subjects is predicted from a sample of about this many of its blocks
SAMPLE_BLOCKS = 4096


def gpu_seconds(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
                packed: bool, shape: tuple[int, int, int] | None = None,
                overlapped: bool = True) -> float:
    """Predicted seconds of one scan launch (see :func:`launch_parts`) among others of its
    kind: the longer of the host's work and the GPU's (the host prepares a launch while the
    one before runs); with ``overlapped`` False, as the first of a scan, both."""
    host, gpu = launch_parts(model, unit_m, subj_n, alphabet, packed, shape)
    return max(host, gpu) if overlapped else host + gpu


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


def launch_parts(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
                 packed: bool, shape: tuple[int, int, int] | None = None, wide: bool = False
                 ) -> tuple[float, float]:
    """Predicted (host, GPU) seconds of one scan launch: units of ``unit_m`` rows against
    subjects of ``subj_n`` residues in the order the launch takes them, with kernel
    ``shape`` (G, R, passes; default the one the engine plans). The host's work is
    :func:`host_seconds`; the GPU's is :func:`side_seconds` and the kernel (whose tickets
    each pay the kernel's start, see :func:`fill`).

    Items go out by ticket, profile-major, each profile's subjects in launch order; an item
    started once the work before it is done (at the full rate; the first wave of tickets, one
    per block, starts at once) ends its own sweep later (at one group's rate), so the launch
    lasts the longest of those ends, or its work at the full rate if that is longer: the
    thesis's falling phase, where a long item left for last runs alone. A launch of few
    tickets per block is timed ticket by ticket (``_waves``). A subject counts as its warp's
    longest, plus the share of its block's longest that the other blocks of its SM do not
    cover. A long launch is measured on every k-th block of subjects (and the longest's).
    The grid is :func:`launch_grid`'s (``wide``: of the wide choice)."""
    unit_m = np.asarray(unit_m, np.int64)
    shape = shape or launch_shape(model, unit_m, subj_n, alphabet, packed)
    _, kernel = _grid(model, unit_m, subj_n, packed, shape, True, wide)
    count = len(subj_n)
    return (host_seconds(model, unit_m, count, shape, alphabet),
            side_seconds(model, unit_m.size, count) + kernel)


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
    (``engines.cuda.search.launch_blocks``), or one block per SM where its own puts between
    one and two on each SM and one per SM is predicted faster. Then the tickets left after
    the first wave go to the blocks that end first, where the own grid leaves it to block
    placement which long tickets share an SM: a 6-pass launch of 160 tickets measured
    13.8 ms on 132 blocks, and 14-23.5 ms from repeat to repeat on 160 (single-pass
    launches, whose SMs hold more blocks' latency, are faster on their own grid, as
    predicted). ``wide`` (the engine's plan): a multi-pass launch of two or more blocks per
    SM, at most WIDE_TICKETS tickets per block and WIDE_LEAST seconds or more also weighs
    the two whole numbers of blocks per SM below its own grid (a 13-pass launch of 508
    tickets measured 23.5 ms on 264 blocks against 38.7 ms on its own 482). Inside
    ``engines.cuda.search.capped_grid`` its own grid, capped."""
    return _grid(model, np.asarray(unit_m, np.int64), subj_n, packed, shape, False, wide)[0]


def _grids(model: Model, unit_m: np.ndarray, subj_n: np.ndarray,
           shape: tuple[int, int, int], wide: bool) -> list[int]:
    """The grids :func:`launch_grid` weighs, its own first."""
    from ..engines.cuda import search as scan

    g, _, passes = shape
    sms = model.sms or 132
    own = scan.launch_blocks(g, unit_m.size, len(subj_n), passes, int(np.max(subj_n)), sms)
    if scan.GRID_CAP is not None or own <= sms:  # a grid forced, or at most one per SM
        return [own]
    tickets = -(-len(subj_n) // (scan.BLOCK // g)) * unit_m.size
    if wide and passes > 1 and tickets <= WIDE_TICKETS * own:
        below = -(-own // sms) - 1  # the whole numbers of blocks per SM below its own
        return [own] + [k * sms for k in (below, below - 1) if k >= 1]
    return [own, sms] if own < 2 * sms else [own]


def _grid(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, packed: bool,
          shape: tuple[int, int, int], priced: bool, wide: bool = False) -> tuple[int, float]:
    """(:func:`launch_grid`, the kernel's predicted seconds on it: nan unless ``priced``
    or the grid was chosen by them)."""
    grids = _grids(model, unit_m, subj_n, shape, wide)
    if len(grids) == 1:
        return grids[0], (_kernel(model, unit_m, subj_n, packed, shape, grids[0]) if priced
                          else float("nan"))
    own = grids[0], _kernel(model, unit_m, subj_n, packed, shape, grids[0])
    if len(grids) > 2 and own[1] < WIDE_LEAST:  # the wide choice's: too short to pay
        return own
    return min([own] + [(b, _kernel(model, unit_m, subj_n, packed, shape, b))
                        for b in grids[1:]], key=lambda found: found[1])


def _kernel(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, packed: bool,
            shape: tuple[int, int, int], blocks: int) -> float:
    """The kernel's predicted seconds for :func:`launch_parts` on a grid of ``blocks``."""
    from ..engines.cuda import search as scan

    subj_n = np.asarray(subj_n, np.float64)
    g, r, _ = shape
    t = g * r
    groups = scan.BLOCK // g
    sms = model.sms or 132
    per_sm = blocks / sms
    idle = min(1.0, per_sm ** -IDLE_COVER)
    single = _single(model, g, r)
    unit_passes = np.maximum(-(-unit_m // t), 1).astype(np.float64)
    count = subj_n.size
    every = max(1, count // (SAMPLE_BLOCKS * groups))  # every k-th block of subjects
    if every > 1:  # a sample of whole blocks, in order, the longest subject's among them
        starts = np.union1d(np.arange(0, count, every * groups),
                            int(np.argmax(subj_n)) // groups * groups)
        subj_n = subj_n[(starts[:, None] + np.arange(groups)).ravel().clip(max=count - 1)]
    scale = count / subj_n.size
    warp = blocked(subj_n, scan.WARP // g)
    n = warp + idle * (blocked(subj_n, groups) - warp)
    cost = _pass_cells(n, g, t)  # one pass of each subject
    later = _later(model, g)
    tickets = -(-count // groups) * unit_m.size
    if tickets <= WAVE_TICKETS * blocks and every == 1:
        speed = speeds(model, g, r, packed)
        shared = later_shared(model, g, speed.size)
        return _waves(cost, unit_passes, (later, shared), groups, blocks, speed, single, sms,
                      _steady(model, g, r, packed, speed, shared[-1]))
    ticket = float(cost.mean()) * float(unit_passes.mean())
    rate = _rate(model, g, r, packed) * fill(model, g, r, packed, blocks, ticket)
    per_profile = float(cost.sum()) * scale
    within = (np.cumsum(cost) - cost) * scale / rate  # a profile's work before each item
    alone = _pass_cells(warp, g, t) / single  # an item's first pass alone
    before = (np.cumsum(unit_passes) - unit_passes) * per_profile / rate
    total = float(unit_passes.sum()) * per_profile / rate
    lead = total * min(1.0, blocks / tickets)  # the first wave of tickets starts at once
    ends = [float(np.max(np.maximum(0.0, float(np.max(before[unit_passes == p]))
                                    + p * within - lead) + (1 + (p - 1) * later) * alone))
            for p in np.unique(unit_passes)]
    return max(total, max(ends))


def _steady(model: Model, g: int, r: int, packed: bool, speed: np.ndarray, later: float
            ) -> float:
    """How much faster an SM full of blocks runs while tickets are queued than the packing
    calibration's one ticket per block says (its blocks end apart, and each one's end idles
    part of the SM): the full rate, a steady two-pass launch, as a first pass (a later pass
    costing ``later`` first passes), over the packing's last k. On the H100 1.00-1.10; it
    brings the waves of full grids with several tickets per block from 8-11% slow to within
    3% of the measured launches."""
    from ..engines.cuda.search import BLOCK

    first = _rate(model, g, r, packed) * (1 + later) / 2
    full = (model.sms or 132) * (BLOCK // g) * speed.size * speed[-1]
    return float(max(1.0, first / full))


def host_seconds(model: Model, unit_m: np.ndarray, count: int, shape: tuple[int, int, int],
                 alphabet: int) -> float:
    """The host's predicted work for a launch of units of ``unit_m`` rows against ``count``
    subjects with kernel ``shape``: its inputs gathered and sent, its kernels launched (its
    profiles are built on the GPU from the queries gathered here)."""
    unit_m = np.asarray(unit_m, np.int64)
    return (_host_fixed(model, unit_m.size, count)
            + model.profile * profile_words(unit_m, shape, alphabet))


def _host_fixed(model: Model, units, count):
    """The host's work for launches of ``units`` profiles x ``count`` subjects (numbers or
    arrays) besides their profile words."""
    return model.launch + model.unit * units + model.subject * count


def side_seconds(model: Model, units: int, count: int) -> float:
    """GPU seconds of a launch of ``units`` profiles x ``count`` subjects besides its scan
    kernel: the input copy, the profiles built, the results scattered."""
    return model.side + model.word * units * count


#: a launch of at most this many tickets per block is timed ticket by ticket (``_waves``)
WAVE_TICKETS = 8
#: with more than this many resident blocks per SM, an SM's blocks take consecutive tickets
#: (a probe of %smid per ticket: consecutive at 3.65 per SM, about 20 apart at 1.25)
SM_MAJOR = 2.5
#: while tickets are queued, the blocks of an SM do not share it evenly: the j-th oldest
#: gets a share in proportion to OLDER_SHARE ** j (warps are scheduled oldest first), so
#: blocks that start together end apart and the last tickets spread over the SMs (chosen on
#: the partitioning benchmark's launches: 1, sharing evenly, predicts its long-query
#: launches 16-24% slow; 0.6 to 0.9 all hold 91-92 of its 96 kernels within 15%)
OLDER_SHARE = 0.8


def _waves(cost: np.ndarray, unit_passes: np.ndarray, later: tuple[float, np.ndarray],
           groups: int, blocks: int, speed: np.ndarray, single: float, sms: int,
           steady: float = 1.0) -> float:
    """Seconds of a launch of few tickets per block, ticket by ticket. The resident blocks
    (block b on SM b mod sms) take the tickets in order (a profile's subjects, ``groups`` at
    a time, ``cost``: one pass of each in lane-cells; ``later``: a later pass alone, and with
    k blocks on the SM, in first passes), each the next once its groups are all done. An SM
    with k busy blocks runs k times a group's rate with k blocks (``speed[k - 1]``); while
    tickets are queued its blocks share that by age (OLDER_SHARE, so blocks that started
    together end apart), a full SM ``steady`` times faster (k = 1 not, the k between in
    proportion), and once the last is taken they finish sharing it evenly, faster as the
    others end. A ticket's groups run faster as fewer are left (at the rate alone,
    ``single``, for one; in between in proportion), so its short ones end early and the rest
    speed up. No ticket ends before its sweep alone."""
    pad = -cost.size % groups
    batch = np.sort(np.concatenate([cost, np.zeros(pad)]).reshape(-1, groups), axis=1)
    most = speed.size
    active = groups - np.arange(groups)  # a ticket's groups still sweeping, in turn
    on_sm, rate_at = groups * np.arange(1, most + 1), speed  # groups on an SM of k blocks
    if groups > 1:  # one group on its SM runs at its rate alone
        on_sm, rate_at = np.concatenate([[1], on_sm]), np.concatenate([[single], speed])
    rates = np.interp(active[:, None] + groups * np.arange(most)[None, :], on_sm,
                      rate_at)  # (groups, k)
    # a batch's seconds with k blocks on its SM, as lane-cells at the rate of a full block
    spent = (np.diff(batch, axis=1, prepend=0.0) @ (1.0 / rates)) * speed[None, :]
    passes = unit_passes[:, None, None]
    shared = np.broadcast_to(np.asarray(later[1], np.float64), (most,))
    work = ((1 + (passes - 1) * shared[None, None, :]) * spent[None, :, :]).reshape(-1, most)
    alone = ((1 + (passes[:, :, 0] - 1) * later[0]) * batch[None, :, -1]).ravel() / single
    return _queue(np.ascontiguousarray(work), np.ascontiguousarray(alone), int(blocks), int(sms),
                  np.ascontiguousarray(speed, np.float64), OLDER_SHARE, SM_MAJOR,
                  1 + (steady - 1) * np.arange(most) / max(most - 1, 1))


@njit(cache=True, nogil=True)
def _queue(work: np.ndarray, alone: np.ndarray, blocks: int, sms: int, speed: np.ndarray,
           older: float, sm_major: float, steady: np.ndarray) -> float:  # pragma: no cover
    """:func:`_waves` from the tickets' lane-cells at each k (``work``, tickets x k) and
    their sweeps alone (``alone``) on: the resident blocks take tickets (a heap of their
    ends, ties to the lower block), then finish sharing their SMs."""
    n, most = work.shape
    resident = min(blocks, most * sms, n)
    per_sm = np.zeros(sms, np.int64)
    slot = np.empty(resident, np.int64)  # each block's place among its SM's
    for b in range(resident):
        slot[b] = per_sm[b % sms]
        per_sm[b % sms] += 1
    weights = np.zeros(sms)
    for b in range(resident):
        weights[b % sms] += older ** slot[b]
    k = np.empty(resident, np.int64)
    rate = np.empty(resident)
    for b in range(resident):  # the SM's k blocks share it unevenly, by age
        s = b % sms
        k[b] = per_sm[s] - 1
        rate[b] = steady[k[b]] * speed[k[b]] * older ** slot[b] * per_sm[s] / weights[s]
    start = np.zeros(resident)
    last = np.arange(resident)
    if resident > sm_major * sms:  # the SMs fill in turn: an SM's blocks take consecutive tickets
        i = 0
        for s in range(sms):
            for b in range(s, resident, sms):
                last[b] = i
                i += 1
    if n > resident:  # a binary heap of (end, block)
        end = np.empty(resident)
        heap = np.arange(resident)
        for b in range(resident):
            end[b] = work[last[b], k[b]] / rate[b]
        for j in range(resident // 2 - 1, -1, -1):
            _sift(heap, end, j, resident)
        for i in range(resident, n):
            b = heap[0]
            start[b], last[b] = end[b], i
            end[b] += work[i, k[b]] / rate[b]
            _sift(heap, end, 0, resident)
    taken = start.max()  # the queue is empty from here
    left = np.zeros((sms, most))  # each SM's blocks' lane-cells still to sweep
    for b in range(resident):
        s = b % sms
        left[s, most - per_sm[s] + slot[b]] = max(
            work[last[b], k[b]] - (taken - start[b]) * rate[b], 0.0)
    result = 0.0
    for s in range(sms):
        row = np.sort(left[s])
        t, before = taken, 0.0
        for j in range(most):  # most - j blocks still sweeping while the j-th ends
            t += (row[j] - before) / speed[most - j - 1]
            before = row[j]
        result = max(result, t)
    for b in range(resident):
        result = max(result, start[b] + alone[last[b]])
    return result


@njit(cache=True, nogil=True, inline="always")
def _sift(heap: np.ndarray, end: np.ndarray, j: int, n: int) -> None:  # pragma: no cover
    """Restore the heap below position j (the least end first, ties to the lower block)."""
    while True:
        child = 2 * j + 1
        if child >= n:
            return
        if child + 1 < n and (end[heap[child + 1]] < end[heap[child]] or (
                end[heap[child + 1]] == end[heap[child]] and heap[child + 1] < heap[child])):
            child += 1
        a, c = heap[j], heap[child]
        if end[c] < end[a] or (end[c] == end[a] and c < a):
            heap[j], heap[child] = c, a
            j = child
        else:
            return


#: what ``auto`` weighs: every scheduler, dynamic2 at several shares (a scheduler and its
#: parameters by name, as the engine logs them)
CANDIDATES: dict[str, tuple[str, dict]] = {
    "none": ("none", {}), "static": ("static", {}), "dynamic1": ("dynamic1", {}),
    "dynamic2": ("dynamic2", {}), "dynamic2 share=0.7": ("dynamic2", {"share": 0.7}),
    "dynamic2 share=0.9": ("dynamic2", {"share": 0.9}),
}
#: ``auto`` compares the candidates on about this many subjects (every k-th in file order,
#: and the longest), then cuts the whole chunk with the winner
CHOICE_SUBJECTS = 100_000


def schedule(model: Model, name: str, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
             packed: bool, need: part.Need, budget: int, bound: float = np.inf,
             wide: bool = False) -> tuple[str, list[part.Batch], list[float]]:
    """(partitioning, its launches, each one's predicted seconds) for units of ``unit_m``
    rows x subjects of ``subj_n`` (file order); ``name`` a partitioning or a key of
    CANDIDATES; ``auto``: the candidate of the least predicted total. The launches of
    ``none`` take their subjects in file order. Once the launches' GPU seconds alone (each
    launch adds at least those) pass ``bound``, the rest are not priced: the seconds are
    then [inf]. ``wide``: launches priced on :func:`launch_grid`'s wide choice, as the
    engine runs them."""
    if name == "auto":
        sample, scale = _sample(subj_n)
        scaled = need if scale == 1 else (lambda lq, nq, ls, ns: need(lq, nq, ls,
                                                                      int(ns * scale)))
        found = _candidates(model, unit_m, subj_n[sample], alphabet, packed, scaled, budget,
                            True, wide)
        name = min(found, key=lambda n: _total(found[n][1]))
        if scale == 1:
            return name, found[name][0], _seconds(found[name][1])
    name, batches, parts = _priced(model, name, unit_m, subj_n, alphabet, packed, need, budget,
                                   bound, wide)
    return name, batches, _seconds(parts)


def _priced(model: Model, name: str, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
            packed: bool, need: part.Need, budget: int, bound: float, wide: bool
            ) -> tuple[str, list[part.Batch], list[tuple[float, float]] | None]:
    """(name, the launches of partitioning ``name``, their predicted (host, GPU) seconds,
    joined by :func:`coalesce`; None once they cannot beat ``bound``), see :func:`schedule`."""
    scheduler, params = CANDIDATES.get(name, (name, {}))
    batches = part.partition(scheduler, unit_m, subj_n, budget, need, **params)
    if scheduler == "none":
        batches = [part.Batch(b.queries, np.sort(b.subjects)) for b in batches]
    if bound < np.inf and _host_least(model, batches) > bound:
        return name, batches, None
    parts: list[tuple[float, float]] = [(0.0, 0.0)] * len(batches)
    least = 0.0
    # the largest first: a candidate that cannot win shows it after the fewest launches
    cells = [float(unit_m[b.queries].sum()) * float(subj_n[b.subjects].sum()) for b in batches]
    for k in np.argsort(cells, kind="stable")[::-1].tolist():
        b = batches[k]
        parts[k] = launch_parts(model, unit_m[b.queries], subj_n[b.subjects], alphabet, packed,
                                wide=wide)
        least += parts[k][1]
        if least > bound:
            return name, batches, None
    return name, *coalesce(model, batches, parts, unit_m, subj_n, alphabet, packed, need,
                           budget, wide)


def _seconds(parts: list[tuple[float, float]] | None) -> list[float]:
    """Each launch's predicted seconds in the pipeline, from their (host, GPU) seconds
    ([inf] for None: not priced in full)."""
    return [np.inf] if parts is None else pipelined([h for h, _ in parts],
                                                    [g for _, g in parts])


def _total(parts: list[tuple[float, float]] | None) -> float:
    """A schedule's predicted seconds, see :func:`_seconds`."""
    return sum(_seconds(parts))


def _host_least(model: Model, batches: list[part.Batch]) -> float:
    """A lower bound of a scan's seconds from its launches' host work alone (the host
    enqueues them one after another; the profile words left out): a candidate of many small
    launches is pruned by it before any is priced."""
    units = np.array([b.queries.size for b in batches], np.float64)
    counts = np.array([b.subjects.size for b in batches], np.float64)
    return float(np.sum(_host_fixed(model, units, counts)))


def coalesce(model: Model, batches: list[part.Batch], parts: list[tuple[float, float]],
             unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int, packed: bool,
             need: part.Need, budget: int, wide: bool = False
             ) -> tuple[list[part.Batch], list[tuple[float, float]]]:
    """The launches with each one too short to cover the host's preparation of a launch
    (GPU seconds below its host seconds: a run of them goes at the host's pace) joined to the
    launch before it, where both have the same units, the joined one fits ``budget`` and its
    GPU seconds are no more than the two's: one host's work saved, none added on the GPU.
    ``parts`` are each launch's predicted (host, GPU) seconds (``wide``: see
    :func:`schedule`); returned for the launches returned."""
    out, priced = [batches[0]], [parts[0]]
    for b, (host, gpu) in zip(batches[1:], parts[1:], strict=True):
        last = out[-1]
        if gpu < host and np.array_equal(b.queries, last.queries):
            subjects = np.concatenate([last.subjects, b.subjects])
            q, s = unit_m[b.queries], subj_n[subjects]
            if need(int(q.max()), q.size, int(s.max()), s.size) <= budget:
                joined = launch_parts(model, q, s, alphabet, packed, wide=wide)
                if joined[1] <= priced[-1][1] + gpu:
                    out[-1], priced[-1] = part.Batch(b.queries, subjects), joined
                    continue
        out.append(b)
        priced.append((host, gpu))
    return out, priced


def _sample(subj_n: np.ndarray) -> tuple[np.ndarray, float]:
    """Indices of at most about CHOICE_SUBJECTS subjects standing for all (every k-th and
    the 64 longest, in file order), and how many subjects each stands for."""
    if subj_n.size <= CHOICE_SUBJECTS:
        return np.arange(subj_n.size), 1.0
    every = -(-subj_n.size // CHOICE_SUBJECTS)
    picked = np.union1d(np.arange(0, subj_n.size, every),
                        np.argpartition(subj_n, subj_n.size - 64)[-64:])
    return picked, subj_n.size / picked.size


def schedules(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
              packed: bool, need: part.Need, budget: int, prune: bool = False,
              wide: bool = False) -> dict[str, tuple[list[part.Batch], list[float]]]:
    """Each candidate's launches and their predicted seconds (``prune``: a candidate that
    cannot beat the best before it is not priced in full; its seconds are [inf];
    ``wide``: see :func:`schedule`)."""
    return {name: (batches, _seconds(parts)) for name, (batches, parts)
            in _candidates(model, unit_m, subj_n, alphabet, packed, need, budget, prune,
                           wide).items()}


def _candidates(model: Model, unit_m: np.ndarray, subj_n: np.ndarray, alphabet: int,
                packed: bool, need: part.Need, budget: int, prune: bool, wide: bool
                ) -> dict[str, tuple[list[part.Batch], list[tuple[float, float]] | None]]:
    """Each candidate's launches and their (host, GPU) seconds, see :func:`schedules`."""
    found: dict[str, tuple[list[part.Batch], list[tuple[float, float]] | None]] = {}
    best = np.inf
    for name in CANDIDATES:
        found[name] = _priced(model, name, unit_m, subj_n, alphabet, packed, need, budget,
                              best if prune else np.inf, wide)[1:]
        best = min(best, _total(found[name][1]))
    return found


# ---- the CPU engine's model --------------------------------------------------------------------

def cpu_seconds(model: Model, query_m: np.ndarray, total: int) -> float:
    """Predicted seconds of the CPU scan of queries of ``query_m`` residues against
    ``total`` database residues."""
    return model.launch * len(query_m) + float(np.sum(query_m)) * total / model.rates["cells"]


# ---- calibration -------------------------------------------------------------------------------

def calibrate(kind: str, progress: Callable[[str], None] | None = None) -> Model:
    """Measure ``kind``'s constants (well under a minute, kernel compiles included)."""
    start = time.perf_counter()

    def say(text: str) -> None:
        if progress:
            progress(f"{time.perf_counter() - start:.1f} s: {text}")

    model = _calibrate_gpu(say) if kind == "gpu" else _calibrate_cpu(say)
    model.seconds = time.perf_counter() - start
    return model


def _calibrate_gpu(say: Callable[[str], None]) -> Model:
    from ..engines.cuda import search as scan
    from ..engines.cuda.multipass import multiprocessors

    subjects, sms = 400_000, multiprocessors()
    lengths = np.full(subjects, 360, np.int64)
    lengths[0] = 20_000  # one long subject for the runs of one group alone
    runs, keys, shapes = [], [], []
    for packed in (True, False):
        for g in scan.GROUPS:
            for r in scan.ROWS:
                if 4 * 24 * g * r > scan.PROFILE_BYTES:
                    continue
                runs.append((2 * g * r, g, r, 2, packed, 1, subjects - 1, 1))
                keys.append(f"{g},{r},{'packed' if packed else 'wide'}")
                shapes += [(g, r)] if packed else []
    alone = [(g * r, g, r, 1, True, 0, 1, 1) for g, r in shapes]  # the long subject
    later = [(4 * g * 8, g, 8, 4, True, 0, 1, 1) for g in scan.GROUPS]  # the same, 4 passes
    say(f"{len(runs)} kernel shapes at the full device, each one group alone")
    found = scan.calibration(lengths, [*runs, *alone, *later])
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
    return Model(kind="gpu", device=device_name("gpu"), version=_version(), rates=rates,
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
    from ..engines.cuda import search as scan

    long, short = PACKING_N
    most = {(g, r): scan.occupancy(g, r, True) for g in scan.GROUPS for r in scan.ROWS
            if 4 * 24 * g * r <= scan.PROFILE_BYTES}
    widest = {g: max(r for gg, r in most if gg == g) for g in scan.GROUPS}

    def count(g: int, k: int) -> int:  # one ticket for each of k blocks per SM
        return k * sms * (scan.BLOCK // g)

    first_short = max(count(g, k) for (g, _), k in most.items())
    lengths = np.concatenate([np.full(first_short, long), np.full(max(
        count(g, most[g, r]) for g, r in widest.items()), short)]).astype(np.int64)
    runs = [(g * r, g, r, 1, True, 0, count(g, k), 1, k * sms)
            for (g, r), top in most.items() for k in range(1, top + 1)]
    runs += [(g * r, g, r, 1, True, first_short, count(g, 1), 1, sms) for g, r in most]
    runs += [(4 * g * r, g, r, 4, True, first_short, count(g, k), 1, k * sms)
             for g, r in widest.items() for k in range(1, most[g, r] + 1)]
    say(f"{len(runs)} launches of k blocks per SM, one ticket each")
    found = iter(scan.calibration(lengths, runs, repeats=PACKING_REPEATS))
    times = {shape: [next(found)[0] for _ in range(top)] for shape, top in most.items()}
    starts, rates = {}, {}
    for (g, r), ks in times.items():
        t_short = next(found)[0]
        cells = [float(_pass_cells(n, g, g * r)) for n in (long, short)]
        rate = (cells[0] - cells[1]) / max(ks[0] - t_short, 1e-9)  # one block per SM
        starts[g, r] = min(max(t_short - cells[1] / rate, 0.0), 0.5 * t_short)
        rates[g, r] = [float(cells[0] / (t - starts[g, r])) for t in ks]
    later = {}
    for g, r in widest.items():
        first = float(_pass_cells(short, g, g * r)) / np.array(rates[g, r])
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
    from ..engines.common import LOCAL
    from ..engines.cuda import search as scan
    from ..scoring import Scoring

    rng = np.random.default_rng(2)
    subjects = 100_000
    offsets = np.arange(subjects + 1, dtype=np.int64) * 24
    scanner = scan.Scanner(rng.integers(0, 20, int(offsets[-1]), dtype=np.uint8), offsets,
                           None, Scoring(matrix="BLOSUM62").table, 11, 1, LOCAL, "none")
    found = scan.host_launches(scanner, HOST_GRID, rng)
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


def _calibrate_cpu(say: Callable[[str], None]) -> Model:
    from ..engines.common import LOCAL
    from ..engines.cpu.intersequence import scores
    from ..scoring import Scoring

    scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    rng = np.random.default_rng(0)
    sub = np.ascontiguousarray(scoring.table, np.int32)
    say("two database sizes on every core (Numba compile included the first time)")
    timings = []
    for subjects in (2_000, 40_000):
        offsets = np.arange(subjects + 1, dtype=np.int64) * 300
        residues = rng.integers(0, 20, int(offsets[-1]), dtype=np.uint8)
        query = rng.integers(0, 20, 300, dtype=np.uint8)
        scores(query, residues, offsets, sub, 11, 1, LOCAL)  # compile or cache load
        best = []
        for _ in range(3):
            start = time.perf_counter()
            scores(query, residues, offsets, sub, 11, 1, LOCAL)
            best.append(time.perf_counter() - start)
        timings.append((300.0 * int(offsets[-1]), min(best)))
    (c1, t1), (c2, t2) = timings
    rate = (c2 - c1) / max(t2 - t1, 1e-9)
    return Model(kind="cpu", device=device_name("cpu"), version=_version(),
                 rates={"cells": rate}, launch=max(0.0, t1 - c1 / rate))


# ---- a whole search ----------------------------------------------------------------------------

def search_plan(model: Model, query_m: list[int], subj_n: np.ndarray, alphabet: int,
                packed: bool, batch_cells: float) -> dict[str, list[tuple[int, int, int, float]]]:
    """Each partitioning's launches over a resident database for queries of ``query_m``
    residues (each strand a query), in the search's query batches of about ``batch_cells``
    cells: (query batch, units, subjects, predicted seconds) per launch."""
    from ..engines.cuda.search import OUT_BYTES, SCRATCH_BYTES, pair_up, scan_need
    from .api import _batches

    subj_n = np.asarray(subj_n, np.int64)
    subj_n = subj_n[subj_n > 0]
    need = scan_need(alphabet, model.sms or 132)
    plans: dict[str, list[tuple[int, int, int, float]]] = {n: [] for n in CANDIDATES}
    todo = [k for k, m in enumerate(query_m) if m > 0]
    total = int(subj_n.sum())
    for b, batch in enumerate(_batches(todo, [query_m[k] for k in todo], total, batch_cells)):
        live = sorted(batch, key=lambda k: -query_m[k])
        unit_m = np.array([query_m[u[0]] for u in pair_up(live, packed)], np.int64)
        if not subj_n.size:
            continue
        found = schedules(model, unit_m, subj_n, alphabet, packed, need,
                          OUT_BYTES + SCRATCH_BYTES, wide=True)
        for name, (batches, seconds) in found.items():
            plans[name] += [(b, x.queries.size, x.subjects.size, s)
                            for x, s in zip(batches, seconds, strict=True)]
    return plans


def explain_lines(log: list[tuple[str, int, int, float, float, float]]) -> list[str]:
    """``search --explain``'s table: every scan launch predicted beside measured (and the
    kernel's share of the measurement), and the totals."""
    lines = ["| launch | partition | units | subjects | predicted s | measured s | kernel s "
             "| error |", "|---|---|---|---|---|---|---|---|"]
    for k, (name, units, subjects, guess, seen, kernel) in enumerate(log, 1):
        lines.append(f"| {k} | {name} | {units} | {subjects:,} | {guess:.4f} | {seen:.4f} | "
                     f"{kernel:.4f} | {(guess - seen) / seen:+.1%} |")
    guess, seen, kernel = (sum(r[k] for r in log) for k in (3, 4, 5))
    if seen > 0:
        lines.append(f"| total | | | | {guess:.4f} | {seen:.4f} | {kernel:.4f} | "
                     f"{(guess - seen) / seen:+.1%} |")
    return lines
