"""The SIMD wavefront kernels (CPU traceback) against the reference oracle.

Lengths up to 70 straddle the 16-row stripes; checkpoint intervals that are small multiples
of 16 force several bands; penalties 0..8 come in any order (gap_open < gap_extend too).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from wavedp.engines import reference
from wavedp.engines.common import DIR_DIAG, DIR_E, DIR_F, DIR_ZERO, E_OPEN, F_OPEN, LOCAL
from wavedp.engines.cpu import rows, small, wavefront
from wavedp.engines.cpu.simd import LANES


@st.composite
def cases(draw, max_len: int = 70):
    """(q, t, table, gap_open, gap_extend, mode): random codes, a random integer table
    (asymmetric or symmetric, DNA- or protein-sized), sometimes a related target."""
    size = draw(st.sampled_from([2, 4, 5, 20, 24]))
    flat = draw(st.lists(st.integers(-8, 8), min_size=size * size, max_size=size * size))
    table = np.array(flat, np.int32).reshape(size, size)
    if draw(st.booleans()):
        table = np.triu(table) + np.triu(table, 1).T
    if draw(st.booleans()):  # a clear diagonal: long alignments
        np.fill_diagonal(table, np.abs(np.diag(table)) + 1)
    codes = st.integers(0, size - 1)
    q = draw(st.lists(codes, max_size=max_len))
    if q and draw(st.booleans()):
        a, b = sorted(draw(st.lists(st.integers(0, len(q)), min_size=2, max_size=2)))
        t = q[:a] + draw(st.lists(codes, max_size=6)) + q[b:]
    else:
        t = draw(st.lists(codes, max_size=max_len))
    gap_open = draw(st.integers(0, 8))
    gap_extend = draw(st.integers(0, 8))
    mode = draw(st.sampled_from([0, 1, 2]))
    return (np.array(q, np.uint8), np.array(t, np.uint8), table, gap_open, gap_extend, mode)


def expected_dirs(q, t, table, gap_open, gap_extend, mode):
    """Direction byte of every cell (i, j >= 1) from the reference matrices."""
    H, E, F = reference._matrices(q, t, table, gap_open, gap_extend, mode)
    d = np.zeros((q.size + 1, t.size + 1), np.uint8)
    for i in range(1, q.size + 1):
        for j in range(1, t.size + 1):
            h = H[i][j]
            bits = 0
            if H[i][j - 1] - gap_open >= E[i][j - 1] - gap_extend:
                bits |= E_OPEN
            if H[i - 1][j] - gap_open >= F[i - 1][j] - gap_extend:
                bits |= F_OPEN
            if mode == LOCAL and h == 0:
                bits |= DIR_ZERO
            elif h == H[i - 1][j - 1] + int(table[q[i - 1], t[j - 1]]):
                bits |= DIR_DIAG
            elif h == E[i][j]:
                bits |= DIR_E
            else:
                bits |= DIR_F
            d[i, j] = bits
    return d, H, F


def skewed_byte(dirs, r0, n, i, j):
    """The byte of cell (i, j) in the skewed layout of rows > r0 and columns 1..n."""
    x = i - r0 - 1
    r = x % LANES
    return dirs[((x // LANES) * (n + LANES - 1) + j + r - 1) * LANES
                + wavefront.LANE_OF_ROW[r]]


def trace(q, t, table, gap_open, gap_extend, mode, K):
    ops = np.empty(q.size + t.size, np.uint8)
    r = rows.align_trace(q, t, table, gap_open, gap_extend, mode, K, ops)
    return (*r[:5], ops[: r[5]][::-1].tobytes().decode())


@settings(max_examples=400, deadline=None)
@given(cases())
def test_traceback_matches_reference_for_every_band_height(case):
    q, t, table, gap_open, gap_extend, mode = case
    ref = reference.align(q, t, table, gap_open, gap_extend, mode, True)
    for K in (max(q.size, 1), LANES, 2 * LANES, 3 * LANES):
        assert trace(q, t, table, gap_open, gap_extend, mode, K) == ref, K


@settings(max_examples=400, deadline=None)
@given(cases())
def test_small_calls_kernel_equals_the_simd_traceback(case):
    """``small.align_small`` (a small call's pairs, cell by cell) gives ``align_whole``'s
    score, end and start cells and ops, and the reference's."""
    q, t, table, gap_open, gap_extend, mode = case
    got, want = (np.zeros(q.size + t.size + 1, np.uint8) for _ in range(2))
    a = small.align_small(q, t, table, gap_open, gap_extend, mode, got)
    b = rows.align_whole(q, t, table, gap_open, gap_extend, mode, want)
    assert tuple(a) == tuple(b)
    assert got[:a[5]].tobytes() == want[:b[5]].tobytes()
    ref = reference.align(q, t, table, gap_open, gap_extend, mode, True)
    assert (*a[:5], got[:a[5]][::-1].tobytes().decode()) == ref


@settings(max_examples=300, deadline=None)
@given(cases(max_len=150), st.sampled_from([(2 * LANES, LANES), (4 * LANES, 2 * LANES, LANES),
                                            (6 * LANES, 3 * LANES, LANES),
                                            (8 * LANES, 4 * LANES, 2 * LANES, LANES)]))
def test_levels_of_checkpoints_give_the_reference_path(case, levels):
    """Checkpoints in levels (each band of a level recomputed with checkpoints of its own,
    the deepest with direction bytes) trace the reference's path."""
    q, t, table, gap_open, gap_extend, mode = case
    if q.size <= levels[0] or t.size == 0:
        q = np.resize(q if q.size else np.zeros(1, np.uint8), levels[0] + 1 + q.size % 37)
        t = np.resize(t if t.size else q, max(t.size, 1 + q.size % 23))
    ref = reference.align(q, t, table, gap_open, gap_extend, mode, True)
    ops = np.empty(q.size + t.size, np.uint8)
    r = rows.align_checkpointed(q, t, table, gap_open, gap_extend, mode,
                                np.array(levels, np.int64), ops)
    assert (*r[:5], ops[: r[5]][::-1].tobytes().decode()) == ref


def test_checkpoint_levels_fit_their_bound():
    """A 1 Mbp pair's checkpoints fit LEVEL_BYTES in levels (one level: 5.7 GB); each level
    a multiple of the next and of the stripe height; small pairs keep one level."""
    one = rows.level_bytes(10**6, 10**6, (-(-(math.isqrt(8 * 10**6) + 1) // LANES) * LANES,))
    levels = rows.checkpoint_levels(10**6, 10**6)
    assert one > 5 << 30 and rows.level_bytes(10**6, 10**6, levels) <= rows.LEVEL_BYTES
    assert all(a % b == 0 for a, b in zip(levels, levels[1:], strict=False))
    assert levels[-1] % LANES == 0 and levels[0] < 10**6
    assert len(rows.checkpoint_levels(20_000, 20_000)) == 1
    assert rows.checkpoint_levels(100, 100) == (100,)


@settings(max_examples=200, deadline=None)
@given(cases(), st.sampled_from([LANES, 2 * LANES]))
def test_forward_end_cell_and_checkpoint_rows(case, K):
    q, t, table, gap_open, gap_extend, mode = case
    ref = reference.align(q, t, table, gap_open, gap_extend, mode, False)
    ckH = np.full((q.size // K + 1, t.size + 1), 7, np.int32)
    ckF = ckH.copy()
    got = rows.sweep(q, t, table, gap_open, gap_extend, mode, K, ckH, ckF)
    assert got == (ref[0], ref[2], ref[4])
    _, H, F = expected_dirs(q, t, table, gap_open, gap_extend, mode)
    for k in range(q.size // K + 1):
        assert ckH[k].tolist() == H[k * K]
        assert ckF[k].tolist() == F[k * K]


@settings(max_examples=200, deadline=None)
@given(cases(), st.data())
def test_direction_bytes_of_the_full_matrix_and_of_a_band(case, data):
    q, t, table, gap_open, gap_extend, mode = case
    m, n = q.size, t.size
    if m == 0 or n == 0:
        return
    want, H, F = expected_dirs(q, t, table, gap_open, gap_extend, mode)
    tp, codes, width = wavefront.target_profile(q, t, table)
    dirs = np.full(wavefront.skewed_size(m, n), 0xFF, np.uint8)
    score, ei, ej = wavefront.forward_dirs(q, n, tp, codes, width, gap_open, gap_extend, mode,
                                           dirs)
    ref = reference.align(q, t, table, gap_open, gap_extend, mode, False)
    assert (score, ei, ej) == (ref[0], ref[2], ref[4])
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            assert skewed_byte(dirs, 0, n, i, j) == want[i, j], (i, j)
    # a band: from a checkpoint row r0 (a multiple of LANES) down to r1, columns 1..c1
    r0 = LANES * data.draw(st.integers(0, (m - 1) // LANES))
    r1 = data.draw(st.integers(r0 + 1, m))
    c1 = data.draw(st.integers(1, n))
    band = np.full(wavefront.skewed_size(r1 - r0, c1), 0xFF, np.uint8)
    revH = np.empty(n + LANES + 1, np.int32)
    revF = np.empty(n + LANES + 1, np.int32)
    wavefront.band_dirs(q, tp, codes, width, gap_open, gap_extend, mode, r0, r1, c1,
                        np.array(H[r0], np.int32), np.array(F[r0], np.int32), revH, revF, band)
    for i in range(r0 + 1, r1 + 1):
        for j in range(1, c1 + 1):
            assert skewed_byte(band, r0, c1, i, j) == want[i, j], (i, j)


def test_last_column_at_every_stripe_position():
    """Global and semiglobal end cells on the last column, whichever step and lane reach
    column n (the ends of the vectorized blocks of steps included)."""
    rng = np.random.default_rng(5)
    table = np.where(np.eye(4, dtype=bool), 2, -3).astype(np.int32)
    for m in range(1, 52):
        q = rng.integers(0, 4, m).astype(np.uint8)
        for n in (1, 7, 8, 15, 16, 23, 24, 25, 31, 32, 40):
            t = rng.integers(0, 4, n).astype(np.uint8)
            if n <= m and rng.random() < 0.5:  # a copy of part of q: a clear end on column n
                a = int(rng.integers(0, m - n + 1))
                t = q[a:a + n].copy()
            for mode in (1, 2):
                ref = reference.align(q, t, table, 5, 2, mode, True)
                assert trace(q, t, table, 5, 2, mode, m) == ref, (m, n, mode)


@settings(max_examples=150, deadline=None)
@given(cases(max_len=40))
def test_strip_layout_walk_of_the_gpu_engine(case):
    """``rows.walk`` over direction bytes laid out as the CUDA engine's tiles hold them
    (``rows.strip_index``) follows the reference path."""
    q, t, table, gap_open, gap_extend, mode = case
    ref = reference.align(q, t, table, gap_open, gap_extend, mode, True)
    score, qs, qe, ts, te, cigar = ref
    if mode == LOCAL and score == 0:
        return
    want, _, _ = expected_dirs(q, t, table, gap_open, gap_extend, mode)
    m, n = q.size, t.size
    for rpl in (4, 8):
        strip = 32 * rpl
        tile = np.full(-(-m // strip) * strip * (n + 31), 0xFF, np.uint8)
        for a in range(m):
            for b in range(n):
                tile[rows.strip_index(a, b, n, rpl)] = want[a + 1, b + 1]
        ops = np.empty(m + n, np.uint8)
        i, j, state, k, stopped = rows.walk(q, t, mode, tile, 0, 0, n, rpl, qe, te, 0, ops, 0)
        if not stopped:
            i, j, k = rows.finish(mode, i, j, ops, k)
        assert (i, j, ops[:k][::-1].tobytes().decode()) == (qs, ts, cigar), rpl
