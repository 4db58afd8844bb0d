"""The scan kernel's shapes (``kernels/search.cu``): its constants, the shape planned for a
launch (G lanes per subject group, R rows per lane, passes over the query), its grid and
its memory, and the query profile's layout."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

#: rows per lane of the kernel instances (multiples of 4: the profile is read 16 bytes at once)
ROWS = (4, 8, 12, 16, 20, 24, 28, 32)

#: lanes per subject group (powers of two)
GROUPS = (4, 8, 16, 32)

#: threads per block (kernels/search.cu's BLOCK) and per warp
BLOCK = 128

WARP = 32

#: the kernel's RING: each group's slots of 16 bytes for its scratch-row chunks in flight
RING = 4

#: profile scores of rows past the query (16-bit and 32-bit words)
PAD16, PAD32 = -8192, -(1 << 24)

#: shared memory for one pass's profile at most (four blocks of four warps per SM fit)
PROFILE_BYTES = 56 << 10

#: blocks per multiprocessor the grid is sized for (tickets make any size safe)
BLOCKS_PER_SM = 8

#: the passes' scratch rows of all groups in flight take at most this much GPU memory
SCRATCH_BYTES = 256 << 20

#: per-pass cost of a group, in cells of a column (scratch traffic and synchronisation)
PASS_CELLS = 64

#: GPU memory for one launch's result words (profiles x subjects) and profiles
OUT_BYTES = 1 << 30



class Launch(NamedTuple):
    """One planned launch over a chunk: its kernel shape (G, R, passes), its subjects (chunk
    indices, int32, in the order the tickets hand them out), the longest of them and its
    grid (``cost.launch_grid``)."""

    shape: tuple[int, int, int]
    subjects: np.ndarray
    longest: int
    blocks: int | None = None


def plan(m: int, columns: float, alphabet: int,
         rate: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None
         ) -> tuple[int, int, int]:
    """(lanes G, rows per lane R, passes) for a query of m rows against subjects of about
    ``columns`` residues: the least time, padded lane-cells (pipeline fill and passes
    counted) over ``rate(G, R, passes)``, the lane-cells per second the launch runs at with
    each shape (arrays over the shapes; the predictor's: calibrated per shape, and the
    grid's fill); without rates, the fewest padded lane-cells. Ties go to the larger R, then
    the shape first in GROUPS x ROWS order."""
    g, r, passes = plans(m, columns, alphabet, rate)
    return int(g), int(r), int(passes)


def plans(m, columns, alphabet: int,
          rate: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`plan` of many launches at once (``m``, ``columns``: arrays, one element each,
    or numbers; ``rate``: of each launch's shapes on the last axis): (G, R, passes) each."""
    g, r = _admissible(alphabet)
    t = g * r
    m, columns = np.maximum(m, 1), np.asarray(columns, np.float64)[..., None]
    passes = -(-m[..., None] // t)
    cost = passes * (t * (columns + g - 1) + PASS_CELLS * columns)
    time = cost / rate(g, r, passes) if rate else cost
    best = np.argmax(np.where(time == time.min(axis=-1, keepdims=True), r, -1), axis=-1)
    return g[best], r[best], -(-m // t[best])


@functools.cache
def _admissible(alphabet: int) -> tuple[np.ndarray, np.ndarray]:
    """The kernel shapes (G, R) whose profile of ``alphabet`` letters fits PROFILE_BYTES, in
    GROUPS x ROWS order (arrays, read only)."""
    pairs = np.array([(g, r) for g in GROUPS for r in ROWS
                      if 4 * alphabet * g * r <= PROFILE_BYTES], np.int64).reshape(-1, 2)
    pairs.setflags(write=False)
    return pairs[:, 0], pairs[:, 1]


def launch_blocks(g, units: int, count: int, passes, longest: int, sms: int,
                  cap: int | None = None):
    """The grid of a launch of ``units`` profiles (at most ``passes`` each) against ``count``
    subjects (the longest ``longest`` residues) with G = ``g``: a ticket per batch of
    subjects, at most BLOCKS_PER_SM blocks per SM and, with several passes, as many as the
    scratch rows of the longest subject leave room for; at most ``cap`` blocks where given
    (a scan run on part of the GPU, as the energy lab's capped searches). ``g`` and
    ``passes`` may be arrays (one grid per shape)."""
    groups = BLOCK // np.asarray(g)
    blocks = np.maximum(1, np.minimum(-(-count // groups) * units, BLOCKS_PER_SM * sms))
    blocks = np.where(np.asarray(passes) > 1, np.maximum(1, np.minimum(
        blocks, SCRATCH_BYTES // (groups * (longest + 2) * 8))), blocks)
    if cap is not None:
        blocks = np.minimum(blocks, max(1, int(cap)))
    return int(blocks) if blocks.ndim == 0 else blocks


def scan_need(alphabet: int, sms: int):
    """The GPU memory a launch needs (the partition schedulers' ``need``): result words, the
    profiles (passes counted at 128 rows) and the passes' scratch rows of a full grid, capped
    at SCRATCH_BYTES (a launch of long subjects runs fewer blocks instead)."""

    def need(longest_query: int, units: int, longest_subject: int, subjects: int) -> int:
        passes = -(-max(int(longest_query), 1) // 128)
        rows = BLOCKS_PER_SM * sms * (BLOCK // 4) * (longest_subject + 2) * 8
        scratch = 0 if passes == 1 else (np.minimum(SCRATCH_BYTES, rows) if isinstance(
            rows, np.ndarray) else min(SCRATCH_BYTES, int(rows)))
        return 4 * units * subjects + 4 * alphabet * passes * 128 * units + scratch

    need.affine = True  # in the units and in the subjects (and takes an array of longest
    # subjects): the partitions size their runs directly
    return need


def pair_up(live: list[int], packed: bool) -> list[list[int]]:
    """The units of a launch: queries (indices, longest first) two by two when packed."""
    step = 2 if packed else 1
    return [live[p:p + step] for p in range(0, len(live), step)]


def unit_rows(units: list[list[np.ndarray]]) -> np.ndarray:
    """Each unit's rows: its longest query's length (int64)."""
    return np.array([max([q.size for q in u]) for u in units], np.int64)


def packable(sub: np.ndarray, go: int, ge: int) -> bool:
    """Whether 16-bit words cannot wrap for these scores (kernels/search.cu)."""
    return go <= 8000 and int(sub.max()) + go <= 32767 and int(sub.min()) + go >= -32768 \
        and ge <= go


def saturation_limit(sub: np.ndarray) -> int:
    """A 16-bit local best at or above this may have overflowed: rescore it at 32 bits."""
    return 32767 - max(int(sub.max()), 0)


def word(value: int, packed: bool) -> np.uint32:
    """``value`` as the kernel's word: in both int16 halves when ``packed``, else an int32."""
    return np.uint32((value & 0xFFFF) * 0x10001 if packed else value & 0xFFFFFFFF)


def pair_words(alphabet: int, g: int, r: int) -> int:
    """The shared words of one pass's profile in a PAIRS launch (kernels/search.cu's
    PairLayout): each half's rows of ``alphabet`` + 1 letters, padded to 32 words with G =
    4, the high halves' 16 words off."""
    t = g * r
    stride = -(-t // 32) * 32 if g == 4 else t
    return 2 * (alphabet + 1) * stride + (16 if g == 4 else 0)


def profile_inputs(units: list[list[np.ndarray]], own: np.ndarray, a: int, g: int, r: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """build_profiles' host inputs (kernels/search.cu) for ``units`` of ``own`` passes each:
    the queries' codes one after another (int32: a profile's query is its positions, the
    table's rows), per unit (start, length) of its first query and of its second (the first
    again where it has one; int32, units x 4), each unit's first word (int64), and the words
    of all profiles."""
    queries = [q for u in units for q in u]
    sizes = np.array([q.size for q in queries], np.int64)
    starts = np.cumsum(sizes) - sizes
    one = np.cumsum([0] + [len(u) for u in units[:-1]])  # each unit's first query
    two = one + (np.array([len(u) for u in units]) == 2)  # its second (or the first again)
    meta = np.stack([starts[one], sizes[one], starts[two], sizes[two]], 1).astype(np.int32)
    first = (np.cumsum(own) - own) * a * g * r
    codes = np.concatenate(queries).astype(np.int32, copy=False)
    return codes, meta, first.astype(np.int64), int(own.sum()) * a * g * r
